/* Regional minima of an f32 image (docs/workflow.md level 6: the watershed markers):
 * a pixel is on if its plateau — the conn-connected set of pixels of its value
 * — has no neighbour strictly lower. skimage.morphology.local_minima with
 * allow_borders=True uses the same definition.
 *
 * A plateau is off as soon as one of its pixels has a lower neighbour, so:
 * (1) every pixel without a lower neighbour is a candidate (a vectorised
 * 3×3 or cross minimum per row), (2) a candidate with an equal neighbour that
 * is not one is off and seeds a FIFO (vectorised too), (3) the FIFO spreads
 * "off" through equal candidates. Every candidate of a plateau holding a
 * non-candidate is reached: walk from the last non-candidate on an
 * equal-valued path to it; the first step is a seed and the rest are
 * candidates. Nothing else is turned off, so the result is the definition's,
 * whatever the order. Comparisons are those of floats (-0.0 equals +0.0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/morph_private.h"

/* h[x] = min(r[x-1], r[x], r[x+1]) inside the row (the edge pixel stands in
 * for the missing neighbour: it is in the window anyway). */
static void row_min3(float *restrict h, const float *restrict r, int width) {
  if (width == 1) {
    h[0] = r[0];
    return;
  }
  h[0] = r[0] < r[1] ? r[0] : r[1];
  h[width - 1] = r[width - 1] < r[width - 2] ? r[width - 1] : r[width - 2];
  const float *restrict left = r, *restrict mid = r + 1, *restrict right = r + 2;
  float *restrict hm = h + 1;
  WSISA__VEC_FOR(x, width - 2, {
    const float a = left[x] < mid[x] ? left[x] : mid[x];
    hm[x] = a < right[x] ? a : right[x];
  });
}

/* cand[x] = 255 when no neighbour is lower than v[x], else 0, from three
 * rows whose minimum at x covers the neighbours: for conn 8 the 3-minima of
 * the rows above, at and below, for conn 4 the pixel above, the row's
 * 3-minimum and the pixel below (at the image edge a row stands for the
 * missing one: its pixels are in the window anyway). */
static void candidates(uint8_t *restrict cand, const float *restrict v, const float *restrict a,
                       const float *restrict b, const float *restrict c, int width) {
  WSISA__VEC_FOR(x, width, {
    const float ab = a[x] < b[x] ? a[x] : b[x];
    const float m = ab < c[x] ? ab : c[x];
    cand[x] = m < v[x] ? 0 : 255;
  });
}

/* seed[x] = candidate x has an equal non-candidate neighbour among the
 * given rows' pixels at x-1, x, x+1 (rows u, d) and x-1, x+1 (row c), for
 * x in 1..width-2 (pointers are offset by one: index i is pixel i + 1). */
static void seeds8(uint8_t *restrict seed, const float *restrict vu, const float *restrict vc,
                   const float *restrict vd, const uint8_t *restrict cu,
                   const uint8_t *restrict cc, const uint8_t *restrict cd, int n) {
  WSISA__VEC_FOR(i, n, {
    const float v = vc[i + 1];
    const int on = cc[i + 1] != 0;
    const int eq = ((vc[i] == v) & (cc[i] == 0)) | ((vc[i + 2] == v) & (cc[i + 2] == 0)) |
                   ((vu[i] == v) & (cu[i] == 0)) | ((vu[i + 1] == v) & (cu[i + 1] == 0)) |
                   ((vu[i + 2] == v) & (cu[i + 2] == 0)) | ((vd[i] == v) & (cd[i] == 0)) |
                   ((vd[i + 1] == v) & (cd[i + 1] == 0)) | ((vd[i + 2] == v) & (cd[i + 2] == 0));
    seed[i + 1] = (uint8_t)(on & eq);
  });
}

static void seeds4(uint8_t *restrict seed, const float *restrict vu, const float *restrict vc,
                   const float *restrict vd, const uint8_t *restrict cu,
                   const uint8_t *restrict cc, const uint8_t *restrict cd, int n) {
  WSISA__VEC_FOR(i, n, {
    const float v = vc[i + 1];
    const int on = cc[i + 1] != 0;
    const int eq = ((vc[i] == v) & (cc[i] == 0)) | ((vc[i + 2] == v) & (cc[i + 2] == 0)) |
                   ((vu[i + 1] == v) & (cu[i + 1] == 0)) | ((vd[i + 1] == v) & (cd[i + 1] == 0));
    seed[i + 1] = (uint8_t)(on & eq);
  });
}

/* Are the n bytes at p all v? */
static int all_equal(const uint8_t *p, int n, uint8_t v) {
  const uint64_t want = 0x0101010101010101u * v;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, sizeof word);
    if (word != want) return 0;
  }
  for (; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

/* The same test for one pixel with bounds checks (the row's two ends). */
static int seed_at(const wsisa_image *in, const wsisa_image *out, int conn, int x, int y) {
  const float v = ((const float *)wsisa_image_row(in, y))[x];
  if (!((const uint8_t *)wsisa_image_row(out, y))[x]) return 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      const int qx = x + dx, qy = y + dy;
      if ((!dx && !dy) || (conn == 4 && dx && dy) || qx < 0 || qy < 0 || qx >= in->width ||
          qy >= in->height)
        continue;
      if (((const float *)wsisa_image_row(in, qy))[qx] == v &&
          !((const uint8_t *)wsisa_image_row(out, qy))[qx])
        return 1;
    }
  return 0;
}

int wsisa_cpu_regional_min(const wsisa_image *in, int conn, wsisa_image *out) {
  const int width = in->width, height = in->height;
  if (in->type != WSISA_F32 || out->type != WSISA_U8 || in->channels != 1 ||
      out->channels != 1 || out->width != width || out->height != height ||
      (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  /* three rows of 3-minima (a ring), then a row of seed flags */
  float *hmin = wsisa__scratch(WSISA__SCRATCH_ROWS, 3 * (size_t)width * sizeof *hmin +
                                                       (size_t)width);
  if (!hmin) return WSISA_ENOMEM;
  uint8_t *seed = (uint8_t *)(hmin + 3 * (size_t)width);
#define HROW(y) (hmin + (size_t)((y) % 3) * (size_t)width)
#define VROW(y) ((const float *)wsisa_image_row(in, y))
#define CROW(y) ((uint8_t *)wsisa_image_row(out, y))

  /* (1) candidates */
  row_min3(HROW(0), VROW(0), width);
  for (int y = 0; y < height; y++) {
    const int up = y > 0 ? y - 1 : y, down = y + 1 < height ? y + 1 : y;
    if (down != y) row_min3(HROW(down), VROW(down), width);
    if (conn == 8)
      candidates(CROW(y), VROW(y), HROW(up), HROW(y), HROW(down), width);
    else
      candidates(CROW(y), VROW(y), VROW(up), HROW(y), VROW(down), width);
  }

  /* (2) seeds, turned off and queued row by row; a row reads the rows next
   * to it as already changed, which only adds seeds of plateaus that are
   * off anyway */
  wsisa__fifo fifo;
  if (wsisa__fifo_init(&fifo)) return WSISA_ENOMEM;
  int rc = 0;
  for (int y = 0; y < height && !rc; y++) {
    const int up = y > 0 ? y - 1 : y, down = y + 1 < height ? y + 1 : y;
    const float *vu = VROW(up), *vc = VROW(y), *vd = VROW(down);
    const uint8_t *cu = CROW(up), *cc = CROW(y), *cd = CROW(down);
    /* interior pixels b + 1 .. b + n, 32 at a time: a seed needs a
     * candidate and a non-candidate around it, so chunks whose three rows
     * are all candidates (the background) or whose row has none (nucleus
     * slopes) are skipped on a few word tests */
    for (int b = 0; b < width - 2; b += 32) {
      const int n = width - 2 - b < 32 ? width - 2 - b : 32;
      if (all_equal(cc + b + 1, n, 0) ||
          (all_equal(cu + b, n + 2, 255) && all_equal(cc + b, n + 2, 255) &&
           all_equal(cd + b, n + 2, 255))) {
        memset(seed + b + 1, 0, (size_t)n);
        continue;
      }
      if (conn == 8)
        seeds8(seed + b, vu + b, vc + b, vd + b, cu + b, cc + b, cd + b, n);
      else
        seeds4(seed + b, vu + b, vc + b, vd + b, cu + b, cc + b, cd + b, n);
    }
    seed[0] = (uint8_t)seed_at(in, out, conn, 0, y);
    if (width > 1) seed[width - 1] = (uint8_t)seed_at(in, out, conn, width - 1, y);
    uint8_t *c = CROW(y);
    const uint32_t base = (uint32_t)y * (uint32_t)width;
    for (int x = wsisa__skip_zeros(seed, 0, width); x < width && !rc;
         x = wsisa__skip_zeros(seed, x + 1, width)) {
      c[x] = 0;
      rc = wsisa__fifo_push(&fifo, base + (uint32_t)x);
    }
  }

  /* (3) spread through equal candidates */
  while (fifo.count && !rc) {
    const uint32_t p = wsisa__fifo_pop(&fifo);
    const int y = (int)(p / (uint32_t)width), x = (int)(p - (uint32_t)y * (uint32_t)width);
    const float v = VROW(y)[x];
    for (int dy = -1; dy <= 1 && !rc; dy++) {
      const int qy = y + dy;
      if (qy < 0 || qy >= height) continue;
      const float *vq = VROW(qy);
      uint8_t *cq = CROW(qy);
      for (int dx = -1; dx <= 1; dx++) {
        const int qx = x + dx;
        if ((conn == 4 && dx && dy) || qx < 0 || qx >= width || !cq[qx] || vq[qx] != v)
          continue;
        cq[qx] = 0;
        if ((rc = wsisa__fifo_push(&fifo, (uint32_t)qy * (uint32_t)width + (uint32_t)qx)))
          break;
      }
    }
  }
  wsisa__fifo_free(&fifo);
  wsisa__scratch_trim();
  return rc;
#undef HROW
#undef VROW
#undef CROW
}
