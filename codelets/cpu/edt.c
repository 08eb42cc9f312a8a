/* Exact Euclidean distance transform (docs/workflow.md, level 6), separable as in
 * Meijster, Roerdink & Hesselink (2000): a column pass of 1-D distances, then
 * per row the lower envelope of parabolas, all in integers; only the final
 * square root is float, so the OpenCL kernel gives the same bits. Borders as
 * cv::distanceTransform(DIST_L2, DIST_MASK_PRECISE): no off pixels outside the
 * image, and OpenCV's 1e15 "infinity" when the image has no off pixel at all
 * (its results equal ours bit for bit on the golden tile and on 4096²). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* Column distance of a column without any off pixel; real ones stay below
 * WSISA_EDT_MAX_SIDE, and INF plus a side cannot overflow. */
#define INF (1 << 30)

/* floor(a / b) for b > 0: C division truncates, negative a needs the floor. */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return q - (a % b != 0 && a < 0);
}

/* Squared distance of x to column u of height value g (Meijster's f). */
static int64_t parabola(int64_t x, int64_t u, int64_t g) { return (x - u) * (x - u) + g * g; }

/* Pixels x0..x1-1 of one row from the lower envelope of the parabolas of
 * columns lo..hi (g: the row's column distances, >= INF: none). s/t: the
 * envelope's columns and where each starts to win (ties keep the left one).
 * With no column at all, the image has no off pixel. */
static void envelope(const int32_t *g, int lo, int hi, int x0, int x1, int32_t *s, int32_t *t,
                     float *out) {
  int k = -1;
  for (int u = lo; u <= hi; u++) {
    if (g[u] >= INF) continue;
    while (k >= 0 && parabola(t[k], s[k], g[s[k]]) > parabola(t[k], u, g[u])) k--;
    if (k < 0) {
      k = 0;
      s[0] = u;
      t[0] = lo;
      continue;
    }
    /* First x where u is strictly nearer than s[k]. */
    const int64_t i = s[k];
    const int64_t num = (int64_t)u * u - i * i + (int64_t)g[u] * g[u] - (int64_t)g[i] * g[i];
    const int64_t w = 1 + floor_div(num, 2 * (u - i));
    if (w <= hi) {
      k++;
      s[k] = u;
      t[k] = (int32_t)w;
    }
  }
  if (k < 0) {
    for (int x = x0; x < x1; x++) out[x] = WSISA_EDT_NONE;
    return;
  }
  for (int x = x1 - 1; x >= x0; x--) {
    while (t[k] > x) k--;
    out[x] = sqrtf((float)parabola(x, s[k], g[s[k]]));
  }
}

/* A plain loop rather than memset: it vectorises, and the row is short. */
static void zero_row(float *restrict out, int width) { WSISA__VEC_FOR(x, width, out[x] = 0.0f); }

/* One row: g holds the column distances, m the mask row, out the result.
 * An off pixel is 0. An on pixel x in a run of on pixels is at most r_x from
 * an off pixel of its own row (the run's ends), so no column farther than r_x
 * can be nearer: each run needs the envelope of the columns within the
 * largest r_x of it, not of the whole row. The minimum over those columns is
 * the minimum over all, and only its value (one integer) reaches the output:
 * the bits are those of the whole-row envelope. */
static void edt_row(const int32_t *g, const uint8_t *m, int width, int32_t *s, int32_t *t,
                    float *out) {
  const uint8_t *off = memchr(m, 0, (size_t)width);
  if (!off) { /* no off pixel in the row: the whole row's envelope */
    envelope(g, 0, width - 1, 0, width, s, t, out);
    return;
  }
  zero_row(out, width);
  for (int x = 0; x < width;) {
    /* the next run [x0, x1) of on pixels */
    x = wsisa__skip_zeros(m, x, width);
    if (x == width) break;
    const int x0 = x;
    while (x < width && m[x]) x++;
    const int x1 = x, len = x1 - x0;
    /* an off pixel at x0 - 1 and / or at x1 (not both missing: the row has one) */
    const int reach = x0 > 0 && x1 < width ? (len + 1) / 2 : len;
    const int lo = x0 - reach < 0 ? 0 : x0 - reach;
    const int hi = x1 - 1 + reach >= width ? width - 1 : x1 - 1 + reach;
    envelope(g, lo, hi, x0, x1, s, t, out);
  }
}

/* Column pass, down: distance to the nearest off pixel above (or at). */
static void column_down(int32_t *restrict d, const uint8_t *restrict m,
                        const int32_t *restrict above, int width) {
  WSISA__VEC_FOR(x, width, d[x] = (above[x] + 1) & -(int32_t)(m[x] != 0));
}

/* Column pass, up: the nearer of that and the one below. */
static void column_up(int32_t *restrict d, const int32_t *restrict below, int width) {
  WSISA__VEC_FOR(x, width, d[x] = below[x] + 1 < d[x] ? below[x] + 1 : d[x]);
}

int wsisa_cpu_edt(const wsisa_image *mask, wsisa_image *dist) {
  if (mask->type != WSISA_U8 || mask->channels != 1 || dist->type != WSISA_F32 ||
      dist->channels != 1 || dist->width != mask->width ||
      dist->height != mask->height || mask->width > WSISA_EDT_MAX_SIDE ||
      mask->height > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  const int width = mask->width, height = mask->height;
  int32_t *scratch = wsisa__scratch(WSISA__SCRATCH_ROWS, 3 * (size_t)width * sizeof *scratch);
  if (!scratch) return WSISA_ENOMEM;
  int32_t *g = scratch, *s = scratch + width, *t = scratch + 2 * width;
  /* Column pass row by row (so it vectorises), the 1-D distances parked in
   * the output's own memory: down, then up. The first row's "above" is INF
   * - 1, so an on pixel there is INF (no off pixel above). */
  for (int x = 0; x < width; x++) g[x] = INF - 1;
  for (int y = 0; y < height; y++)
    column_down(wsisa_image_row(dist, y), wsisa_image_row(mask, y),
                y ? wsisa_image_row(dist, y - 1) : g, width);
  for (int y = height - 2; y >= 0; y--)
    column_up(wsisa_image_row(dist, y), wsisa_image_row(dist, y + 1), width);
  for (int y = 0; y < height; y++) {
    int32_t *row = wsisa_image_row(dist, y);
    memcpy(g, row, (size_t)width * sizeof *g);
    edt_row(g, wsisa_image_row(mask, y), width, s, t, (float *)(void *)row);
  }
  wsisa__scratch_trim();
  return 0;
}
