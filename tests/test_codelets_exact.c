/* The fast CPU kernels against plain definitions, bit for bit: grey
 * reconstruction (u8, f32), h-minima, regional minima, the exact EDT, fill
 * holes and binary reconstruction on random images with plateaus, -FLT_MAX
 * backgrounds, infinities, signed zeros, every image border, padded rows and
 * both connectivities; threshold, saturating difference, mask logic and
 * comparison on every byte value; the normalization's colour caches against the
 * uncached formulas (every one of the 2^24 colours for rgb2lab); per-thread
 * scratch reused across sizes and threads. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"
#include "tests/testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void) { /* xorshift64*: fixed seed, same cases every run */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1du) >> 32);
}

/* An image whose rows are `pad` pixels longer than its width (as a StarPU
 * buffer's leading dimension can be): a view into a wider image. */
typedef struct padded {
  wsisa_image *store;
  wsisa_image view;
} padded;

static padded padded_new(int width, int height, wsisa_dtype type, int pad) {
  padded p;
  cr_assert_eq(wsisa_image_new(width + pad, height, 1, type, &p.store, NULL), 0);
  p.view = wsisa_image_view(p.store->data, width, height, 1, type, p.store->stride);
  return p;
}

static float *f32_px(const wsisa_image *img, int x, int y) {
  return (float *)wsisa_image_row(img, y) + x;
}
static uint8_t *u8_px(const wsisa_image *img, int x, int y) {
  return (uint8_t *)wsisa_image_row(img, y) + x;
}

static const int sizes[][2] = {{1, 1}, {1, 9},  {9, 1},  {2, 2},   {3, 5},  {31, 4},
                               {32, 3}, {33, 6}, {34, 2}, {65, 17}, {100, 23}, {131, 9}};
#define NSIZES (int)(sizeof sizes / sizeof *sizes)

/* Value alphabets: few values make plateaus; the workflow's relief has a
 * -FLT_MAX background; zeros of both signs compare equal. */
static const float alpha_plateau[] = {0, 1, 2, 3};
static const float alpha_relief[] = {-FLT_MAX, -FLT_MAX, -FLT_MAX, -1, -1.4142135f, -2, -2.236068f, -3};
static const float alpha_zeros[] = {-0.0f, 0.0f, -1, 1};
static const float alpha_wide[] = {-INFINITY, -FLT_MAX, -0.0f, 0.0f, 5, FLT_MAX, INFINITY};
typedef struct alphabet {
  const float *v;
  int n;
} alphabet;
static const alphabet alphabets[] = {
    {alpha_plateau, 4}, {alpha_relief, 8}, {alpha_zeros, 4}, {alpha_wide, 7}};
#define NALPHA (int)(sizeof alphabets / sizeof *alphabets)

/* Random f32 image over an alphabet; with `blobs`, runs of one value along
 * rows make wider plateaus. */
static void fill_f32(wsisa_image *img, alphabet a, int blobs) {
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++) {
      float v = a.v[rnd() % (uint32_t)a.n];
      if (blobs && x > 0 && rnd() % 4) v = *f32_px(img, x - 1, y);
      *f32_px(img, x, y) = v;
    }
}

static int same_bits(const wsisa_image *a, const wsisa_image *b) {
  const size_t row = (size_t)a->width * wsisa_image_pixel_bytes(a);
  for (int y = 0; y < a->height; y++)
    if (memcmp(wsisa_image_row(a, y), wsisa_image_row(b, y), row) != 0) return 0;
  return 1;
}

/* ---- definitions -------------------------------------------------------------- */

static int in_conn(int conn, int dx, int dy) { return (dx || dy) && (conn == 8 || !dx || !dy); }

/* Reconstruction by dilation (sign 1) or erosion (sign -1) of j under i, on
 * doubles, by sweeping j = clamp(max (min) of j over p and its neighbours, i)
 * until nothing moves; zeros come out as +0. */
static void ref_reconstruct(double *j, const double *i, int w, int h, int conn, int sign) {
  for (int moved = 1; moved;) {
    moved = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double m = sign * j[y * w + x];
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) {
            const int qx = x + dx, qy = y + dy;
            if (!in_conn(conn, dx, dy) || qx < 0 || qy < 0 || qx >= w || qy >= h) continue;
            if (sign * j[qy * w + qx] > m) m = sign * j[qy * w + qx];
          }
        if (m > sign * i[y * w + x]) m = sign * i[y * w + x];
        if (m > sign * j[y * w + x]) {
          j[y * w + x] = sign * m;
          moved = 1;
        }
      }
  }
  for (int p = 0; p < w * h; p++) j[p] += 0.0;
}

/* Regional minima: each plateau found by flood, off if any of its pixels has
 * a lower neighbour. */
static void ref_regional_min(const wsisa_image *in, int conn, uint8_t *want) {
  const int w = in->width, h = in->height;
  int *label = calloc((size_t)w * h, sizeof *label), *stack = malloc((size_t)w * h * sizeof *stack);
  int nlabels = 0;
  for (int s = 0; s < w * h; s++) {
    if (label[s]) continue;
    const float v = *f32_px(in, s % w, s / w);
    int n = 0, lower = 0, first = 0;
    label[s] = ++nlabels;
    stack[n++] = s;
    int *members = malloc((size_t)w * h * sizeof *members), nm = 0;
    while (n) {
      const int p = stack[--n], x = p % w, y = p / w;
      members[nm++] = p;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          const int qx = x + dx, qy = y + dy;
          if (!in_conn(conn, dx, dy) || qx < 0 || qy < 0 || qx >= w || qy >= h) continue;
          const float q = *f32_px(in, qx, qy);
          if (q < v) lower = 1;
          if (q == v && !label[qy * w + qx]) {
            label[qy * w + qx] = nlabels;
            stack[n++] = qy * w + qx;
          }
        }
    }
    for (; first < nm; first++) want[members[first]] = lower ? 0 : 255;
    free(members);
  }
  free(label);
  free(stack);
}

/* Brute-force EDT: the nearest off pixel over the whole image. */
static float ref_edt_at(const wsisa_image *mask, int x, int y) {
  if (!*u8_px(mask, x, y)) return 0.0f;
  int64_t best = -1;
  for (int qy = 0; qy < mask->height; qy++)
    for (int qx = 0; qx < mask->width; qx++)
      if (!*u8_px(mask, qx, qy)) {
        const int64_t d = (int64_t)(qx - x) * (qx - x) + (int64_t)(qy - y) * (qy - y);
        if (best < 0 || d < best) best = d;
      }
  return best < 0 ? WSISA_EDT_NONE : sqrtf((float)best);
}

/* ---- reconstruction, h-minima, regional minima ----------------------------------- */

static void check_recon_f32(int w, int h, int conn, alphabet a, int blobs, int pad) {
  padded marker = padded_new(w, h, WSISA_F32, pad), mask = padded_new(w, h, WSISA_F32, pad),
         out = padded_new(w, h, WSISA_F32, pad);
  fill_f32(&marker.view, a, blobs);
  fill_f32(&mask.view, a, blobs);
  double *j = malloc((size_t)w * h * sizeof *j), *i = malloc((size_t)w * h * sizeof *i);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const float m = *f32_px(&marker.view, x, y), k = *f32_px(&mask.view, x, y);
      i[y * w + x] = k;
      j[y * w + x] = m < k ? m : k;
    }
  ref_reconstruct(j, i, w, h, conn, 1);
  cr_assert_eq(wsisa_cpu_reconstruct(&marker.view, &mask.view, conn, &out.view), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const float got = *f32_px(&out.view, x, y), want = (float)j[y * w + x];
      cr_assert(memcmp(&got, &want, sizeof got) == 0,
                "recon f32 %dx%d conn %d: (%d,%d) is %a, want %a", w, h, conn, x, y, got, want);
    }
  free(j);
  free(i);
  wsisa_image_free(marker.store);
  wsisa_image_free(mask.store);
  wsisa_image_free(out.store);
}

Test(exact, reconstruct_f32_matches_definition) {
  for (int s = 0; s < NSIZES; s++)
    for (int a = 0; a < NALPHA; a++)
      for (int conn = 4; conn <= 8; conn += 4)
        check_recon_f32(sizes[s][0], sizes[s][1], conn, alphabets[a], a % 2, s % 3);
}

Test(exact, reconstruct_u8_matches_definition) {
  static const uint8_t small[] = {0, 1, 254, 255};
  for (int s = 0; s < NSIZES; s++)
    for (int kind = 0; kind < 3; kind++)
      for (int conn = 4; conn <= 8; conn += 4) {
        const int w = sizes[s][0], h = sizes[s][1];
        padded marker = padded_new(w, h, WSISA_U8, kind), mask = padded_new(w, h, WSISA_U8, kind),
               out = padded_new(w, h, WSISA_U8, 0);
        double *j = malloc((size_t)w * h * sizeof *j), *i = malloc((size_t)w * h * sizeof *i);
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++) {
            /* kind 0: few values; 1: any; 2: a smooth mask over a low marker */
            uint8_t m = kind == 0 ? small[rnd() % 4] : (uint8_t)rnd();
            uint8_t k = kind == 0 ? small[rnd() % 4]
                        : kind == 1 ? (uint8_t)rnd()
                                    : (uint8_t)(128 + 100 * sin(x * 0.3) * cos(y * 0.4));
            if (kind == 2) m = rnd() % 16 ? 0 : k;
            *u8_px(&marker.view, x, y) = m;
            *u8_px(&mask.view, x, y) = k;
            i[y * w + x] = k;
            j[y * w + x] = m < k ? m : k;
          }
        ref_reconstruct(j, i, w, h, conn, 1);
        cr_assert_eq(wsisa_cpu_reconstruct(&marker.view, &mask.view, conn, &out.view), 0);
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++)
            cr_assert_eq(*u8_px(&out.view, x, y), (uint8_t)j[y * w + x],
                         "recon u8 %dx%d kind %d conn %d: (%d,%d)", w, h, kind, conn, x, y);
        free(j);
        free(i);
        wsisa_image_free(marker.store);
        wsisa_image_free(mask.store);
        wsisa_image_free(out.store);
      }
}

static void check_hmin(int w, int h, int conn, alphabet a, int blobs, float hval, int pad) {
  padded in = padded_new(w, h, WSISA_F32, pad), out = padded_new(w, h, WSISA_F32, 1 - pad % 2);
  fill_f32(&in.view, a, blobs);
  double *j = malloc((size_t)w * h * sizeof *j), *i = malloc((size_t)w * h * sizeof *i);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const float v = *f32_px(&in.view, x, y);
      i[y * w + x] = v;
      j[y * w + x] = v + hval; /* the float sum, as the kernel's marker */
    }
  ref_reconstruct(j, i, w, h, conn, -1);
  cr_assert_eq(wsisa_cpu_hmin(&in.view, hval, conn, &out.view), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const float got = *f32_px(&out.view, x, y), want = (float)j[y * w + x];
      cr_assert(memcmp(&got, &want, sizeof got) == 0,
                "hmin %dx%d conn %d h %g: (%d,%d) is %a, want %a", w, h, conn, hval, x, y, got,
                want);
    }
  free(j);
  free(i);
  wsisa_image_free(in.store);
  wsisa_image_free(out.store);
}

Test(exact, hmin_matches_definition) {
  static const float hs[] = {0.0f, 1.0f, 2.5f};
  for (int s = 0; s < NSIZES; s++)
    for (int a = 0; a < NALPHA; a++)
      for (int conn = 4; conn <= 8; conn += 4)
        check_hmin(sizes[s][0], sizes[s][1], conn, alphabets[a], (a + s) % 2, hs[(s + a) % 3],
                   s % 2);
}

static void check_regional_min(const wsisa_image *in, int conn, const char *what) {
  const int w = in->width, h = in->height;
  uint8_t *want = malloc((size_t)w * h);
  ref_regional_min(in, conn, want);
  padded out = padded_new(w, h, WSISA_U8, 3);
  memset(out.store->data, 7, out.store->stride * (size_t)h); /* garbage before */
  cr_assert_eq(wsisa_cpu_regional_min(in, conn, &out.view), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      cr_assert_eq(*u8_px(&out.view, x, y), want[y * w + x], "%s %dx%d conn %d: (%d,%d)", what, w,
                   h, conn, x, y);
  free(want);
  wsisa_image_free(out.store);
}

Test(exact, regional_min_matches_definition) {
  for (int s = 0; s < NSIZES; s++)
    for (int a = 0; a < NALPHA; a++)
      for (int blobs = 0; blobs <= 1; blobs++)
        for (int conn = 4; conn <= 8; conn += 4) {
          padded in = padded_new(sizes[s][0], sizes[s][1], WSISA_F32, s % 2);
          fill_f32(&in.view, alphabets[a], blobs);
          check_regional_min(&in.view, conn, "random");
          wsisa_image_free(in.store);
        }
}

Test(exact, regional_min_long_plateaus) {
  /* A plateau snaking through the whole image with one lower pixel at its
   * far end: the FIFO must walk all of it; and the same without the lower
   * pixel, where the plateau is a minimum next to higher pixels. */
  const int w = 70, h = 21;
  wsisa_image *in = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_F32, &in, NULL), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      *f32_px(in, x, y) = y % 2 == 0 || (y % 4 == 1 ? x == w - 1 : x == 0) ? 1.0f : 2.0f;
  check_regional_min(in, 4, "snake");
  check_regional_min(in, 8, "snake");
  *f32_px(in, 0, h - 1) = 0.0f; /* the lower pixel, at the far corner */
  check_regional_min(in, 4, "snake with exit");
  check_regional_min(in, 8, "snake with exit");
  /* The workflow's shape: -FLT_MAX background, -distance bumps. */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const float d = 6.0f - hypotf((float)(x % 14) - 6.5f, (float)y - 10.0f);
      *f32_px(in, x, y) = d > 0 ? -floorf(d) : -FLT_MAX;
    }
  check_regional_min(in, 4, "bumps");
  check_regional_min(in, 8, "bumps");
  wsisa_image_free(in);
}

/* ---- distance transform ------------------------------------------------------------ */

static void check_edt(const wsisa_image *mask, const char *what) {
  padded out = padded_new(mask->width, mask->height, WSISA_F32, 2);
  cr_assert_eq(wsisa_cpu_edt(mask, &out.view), 0);
  for (int y = 0; y < mask->height; y++)
    for (int x = 0; x < mask->width; x++) {
      const float got = *f32_px(&out.view, x, y), want = ref_edt_at(mask, x, y);
      cr_assert(memcmp(&got, &want, sizeof got) == 0, "edt %s %dx%d: (%d,%d) is %a, want %a",
                what, mask->width, mask->height, x, y, got, want);
    }
  wsisa_image_free(out.store);
}

Test(exact, edt_matches_brute_force) {
  /* densities of on pixels from none to all; runs touching either border,
   * rows without an off pixel, columns without one */
  static const int percent_on[] = {0, 30, 80, 97, 100};
  for (int s = 0; s < NSIZES; s++)
    for (int d = 0; d < 5; d++) {
      padded m = padded_new(sizes[s][0], sizes[s][1], WSISA_U8, d % 2);
      for (int y = 0; y < sizes[s][1]; y++)
        for (int x = 0; x < sizes[s][0]; x++)
          *u8_px(&m.view, x, y) = (int)(rnd() % 100) < percent_on[d] ? (uint8_t)(1 + rnd() % 255) : 0;
      check_edt(&m.view, "random");
      wsisa_image_free(m.store);
    }
  /* one off pixel in a wide image: every row but one has none */
  padded one = padded_new(97, 13, WSISA_U8, 0);
  memset(one.store->data, 255, one.store->stride * 13);
  *u8_px(&one.view, 90, 2) = 0;
  check_edt(&one.view, "one off pixel");
  /* long runs: the reach of a run is half its length, or all of it at a border */
  for (int y = 0; y < 13; y++)
    for (int x = 0; x < 97; x++) *u8_px(&one.view, x, y) = (x == 40 && y % 3 == 0) ? 0 : 255;
  check_edt(&one.view, "sparse column");
  wsisa_image_free(one.store);
}

/* ---- flood fills: fill holes and binary reconstruction ------------------------------- */

/* reached[p] = 1 for the pixels of `open` (non-zero) conn-connected through
 * open pixels to a start pixel (start[p] and open[p]). */
static void ref_flood(const uint8_t *open, const uint8_t *start, int w, int h, int conn,
                      uint8_t *reached) {
  int *stack = malloc((size_t)w * h * sizeof *stack), n = 0;
  memset(reached, 0, (size_t)w * h);
  for (int p = 0; p < w * h; p++)
    if (start[p] && open[p]) {
      reached[p] = 1;
      stack[n++] = p;
    }
  while (n) {
    const int p = stack[--n], x = p % w, y = p / w;
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        const int qx = x + dx, qy = y + dy, q = qy * w + qx;
        if (!in_conn(conn, dx, dy) || qx < 0 || qy < 0 || qx >= w || qy >= h) continue;
        if (open[q] && !reached[q]) {
          reached[q] = 1;
          stack[n++] = q;
        }
      }
  }
  free(stack);
}

Test(exact, fill_holes_and_bin_reconstruct_match_definition) {
  /* long runs of open pixels (the flood scans them eight at a time), sparse
   * seeds, both connectivities, widths around multiples of 8 */
  static const int dims[][2] = {{1, 1}, {7, 3}, {8, 8}, {9, 5}, {17, 17}, {64, 9}, {123, 31}};
  for (int d = 0; d < 7; d++)
    for (int density = 0; density < 3; density++)
      for (int conn = 4; conn <= 8; conn += 4) {
        const int w = dims[d][0], h = dims[d][1];
        padded mask = padded_new(w, h, WSISA_U8, 1), seed = padded_new(w, h, WSISA_U8, 0),
               out = padded_new(w, h, WSISA_U8, 2);
        uint8_t *m = malloc((size_t)w * h), *bg = malloc((size_t)w * h), *border = malloc((size_t)w * h),
                *sd = malloc((size_t)w * h), *want = malloc((size_t)w * h);
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++) {
            const int p = y * w + x;
            /* runs: keep the left neighbour's value most of the time */
            m[p] = x > 0 && rnd() % 8 ? m[p - 1] : (rnd() % 3 < (uint32_t)density ? 255 : 0);
            sd[p] = rnd() % 50 == 0 ? 255 : 0;
            bg[p] = !m[p];
            border[p] = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            *u8_px(&mask.view, x, y) = m[p];
            *u8_px(&seed.view, x, y) = sd[p];
          }
        ref_flood(bg, border, w, h, conn, want);
        cr_assert_eq(wsisa_cpu_fill_holes(&mask.view, conn, &out.view), 0);
        for (int p = 0; p < w * h; p++)
          cr_assert_eq(*u8_px(&out.view, p % w, p / w), want[p] ? 0 : 255,
                       "fill holes %dx%d conn %d: (%d,%d)", w, h, conn, p % w, p / w);
        ref_flood(m, sd, w, h, conn, want);
        cr_assert_eq(wsisa_cpu_bin_reconstruct(&seed.view, &mask.view, conn, &out.view), 0);
        for (int p = 0; p < w * h; p++)
          cr_assert_eq(*u8_px(&out.view, p % w, p / w), want[p] ? 255 : 0,
                       "bin reconstruct %dx%d conn %d: (%d,%d)", w, h, conn, p % w, p / w);
        free(m);
        free(bg);
        free(border);
        free(sd);
        free(want);
        wsisa_image_free(mask.store);
        wsisa_image_free(seed.store);
        wsisa_image_free(out.store);
      }
}

/* ---- per-pixel operations: vectorised rows against the definitions --------------------- */

Test(exact, pixel_ops_match_definition) {
  /* every byte value, rows of 37 (a 32-pixel chunk and a tail), padded rows */
  const int w = 37, h = 15;
  padded a = padded_new(w, h, WSISA_U8, 3), b = padded_new(w, h, WSISA_U8, 0),
         out = padded_new(w, h, WSISA_U8, 5);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      *u8_px(&a.view, x, y) = (uint8_t)(y * w + x);
      *u8_px(&b.view, x, y) = (uint8_t)(rnd() % 3 ? rnd() : 0);
    }
  for (int t = -2; t <= 256; t++) {
    cr_assert_eq(wsisa_cpu_threshold(&a.view, t, &out.view), 0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        cr_assert_eq(*u8_px(&out.view, x, y), *u8_px(&a.view, x, y) > t ? 255 : 0,
                     "threshold %d at (%d,%d)", t, x, y);
  }
  cr_assert_eq(wsisa_cpu_sub_sat(&a.view, &b.view, &out.view), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int d = *u8_px(&a.view, x, y) - *u8_px(&b.view, x, y);
      cr_assert_eq(*u8_px(&out.view, x, y), d > 0 ? d : 0, "sub_sat at (%d,%d)", x, y);
    }
  uint64_t want[3] = {0, 0, 0}, got[3];
  for (int op = 0; op < 3; op++) {
    cr_assert_eq(wsisa_cpu_mask_logic(&a.view, &b.view, op, &out.view), 0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const int on_a = *u8_px(&a.view, x, y) != 0, on_b = *u8_px(&b.view, x, y) != 0;
        const int on = op == 0 ? on_a && on_b : op == 1 ? on_a || on_b : on_a && !on_b;
        cr_assert_eq(*u8_px(&out.view, x, y), on ? 255 : 0, "mask op %d at (%d,%d)", op, x, y);
        if (op == 0) {
          want[0] += on_a && on_b;
          want[1] += on_a;
          want[2] += on_b;
        }
      }
  }
  cr_assert_eq(wsisa_cpu_compare(&a.view, &b.view, got), 0);
  cr_expect_arr_eq(got, want, sizeof want);
  wsisa_image_free(a.store);
  wsisa_image_free(b.store);
  wsisa_image_free(out.store);
}

/* ---- scratch reused across sizes and threads ---------------------------------------- */

typedef struct job {
  wsisa_image *in, *mask, *want_hmin, *want_min, *want_edt;
  int conn, rounds, release, failures;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  wsisa_image *h = NULL, *m = NULL, *d = NULL;
  wsisa_image_new(j->in->width, j->in->height, 1, WSISA_F32, &h, NULL);
  wsisa_image_new(j->in->width, j->in->height, 1, WSISA_U8, &m, NULL);
  wsisa_image_new(j->in->width, j->in->height, 1, WSISA_F32, &d, NULL);
  for (int r = 0; r < j->rounds; r++) {
    j->failures += wsisa_cpu_hmin(j->in, 1.0f, j->conn, h) != 0 || !same_bits(h, j->want_hmin);
    j->failures += wsisa_cpu_regional_min(h, j->conn, m) != 0 || !same_bits(m, j->want_min);
    j->failures += wsisa_cpu_edt(j->mask, d) != 0 || !same_bits(d, j->want_edt);
  }
  if (j->release) wsisa_cpu_scratch_release();
  wsisa_image_free(h);
  wsisa_image_free(m);
  wsisa_image_free(d);
  return NULL;
}

Test(exact, scratch_is_per_thread_and_survives_size_changes) {
  /* Three images of different sizes, their expected outputs made first on
   * this thread; then two threads and this one run one image each, several
   * rounds at once. This thread's scratch has been sized by all three; a
   * thread that releases its scratch and one that leaves it to its exit. */
  static const int dims[3][2] = {{300, 200}, {37, 5}, {129, 64}};
  job jobs[3];
  for (int k = 0; k < 3; k++) {
    const int w = dims[k][0], h = dims[k][1];
    job *j = &jobs[k];
    memset(j, 0, sizeof *j);
    wsisa_image_new(w, h, 1, WSISA_F32, &j->in, NULL);
    wsisa_image_new(w, h, 1, WSISA_U8, &j->mask, NULL);
    wsisa_image_new(w, h, 1, WSISA_F32, &j->want_hmin, NULL);
    wsisa_image_new(w, h, 1, WSISA_U8, &j->want_min, NULL);
    wsisa_image_new(w, h, 1, WSISA_F32, &j->want_edt, NULL);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const float d = 9.0f - hypotf((float)(x % 23) - 11.0f, (float)(y % 19) - 9.0f);
        *f32_px(j->in, x, y) = d > 0 ? -roundf(d * 3) / 3 : -FLT_MAX;
        *u8_px(j->mask, x, y) = d > 0 ? 255 : 0;
      }
    j->conn = k == 1 ? 4 : 8;
    j->rounds = 6;
    j->release = k == 0;
    cr_assert_eq(wsisa_cpu_hmin(j->in, 1.0f, j->conn, j->want_hmin), 0);
    cr_assert_eq(wsisa_cpu_regional_min(j->want_hmin, j->conn, j->want_min), 0);
    cr_assert_eq(wsisa_cpu_edt(j->mask, j->want_edt), 0);
  }
  /* the expected outputs above are themselves checked against the
   * definitions on the small image */
  check_regional_min(jobs[1].want_hmin, 4, "threads");
  check_edt(jobs[1].mask, "threads");
  pthread_t threads[2];
  for (int k = 0; k < 2; k++) cr_assert_eq(pthread_create(&threads[k], NULL, run_job, &jobs[k]), 0);
  run_job(&jobs[2]);
  for (int k = 0; k < 2; k++) pthread_join(threads[k], NULL);
  for (int k = 0; k < 3; k++) {
    cr_expect_eq(jobs[k].failures, 0, "job %d: %d mismatches", k, jobs[k].failures);
    wsisa_image *imgs[] = {jobs[k].in, jobs[k].mask, jobs[k].want_hmin, jobs[k].want_min,
                           jobs[k].want_edt};
    for (int i = 0; i < 5; i++) wsisa_image_free(imgs[i]);
  }
  wsisa_cpu_scratch_release();
  wsisa_cpu_scratch_release(); /* twice is harmless */
}

/* ---- normalization caches -------------------------------------------------------- */

/* The formulas of rgb2lab.c and lab2rgb.c, uncached, on the same constants. */
static void lab_formula(const uint8_t *c, const wsisa_reinhard *k, float *lab) {
  const double *m = k->rgb2lms, *n = k->lms2lab;
  const double r = c[0] / 255.0, g = c[1] / 255.0, b = c[2] / 255.0;
  double lg[3];
  for (int i = 0; i < 3; i++) {
    double lms = m[3 * i] * r + m[3 * i + 1] * g + m[3 * i + 2] * b;
    lg[i] = log10(lms > k->lms_floor ? lms : k->lms_floor);
  }
  for (int i = 0; i < 3; i++)
    lab[i] = (float)(n[3 * i] * lg[0] + n[3 * i + 1] * lg[1] + n[3 * i + 2] * lg[2]);
}

static void rgb_formula(const float *src, const wsisa_reinhard *k, uint8_t *rgb) {
  const double *n = k->lab2lms, *m = k->lms2rgb;
  const double l[3] = {src[0], src[1], src[2]};
  double lms[3];
  for (int i = 0; i < 3; i++) {
    lms[i] = pow(10.0, n[3 * i] * l[0] + n[3 * i + 1] * l[1] + n[3 * i + 2] * l[2]);
    if (!isfinite(lms[i])) lms[i] = 0.0;
  }
  for (int i = 0; i < 3; i++) {
    double c = (m[3 * i] * lms[0] + m[3 * i + 1] * lms[1] + m[3 * i + 2] * lms[2]) * 255.0;
    c = c > 0.0 ? (c < 255.0 ? c : 255.0) : 0.0;
    double f = floor(c);
    rgb[i] = (uint8_t)(f + (c - f >= 0.5));
  }
}

Test(exact, rgb2lab_cache_every_colour) {
  /* All 2^24 colours, in 64 strips of 4096 × 128 pixels holding each colour
   * twice in a row (a miss then a hit on the same cache slot), against the
   * formula; every strip after the first meets entries the earlier ones left. */
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  wsisa_image *rgb = NULL, *lab = NULL;
  cr_assert_eq(wsisa_image_new(4096, 128, 3, WSISA_U8, &rgb, NULL), 0);
  cr_assert_eq(wsisa_image_new(4096, 128, 3, WSISA_F32, &lab, NULL), 0);
  long bad = 0;
  for (uint32_t strip = 0; strip < 64; strip++) {
    for (int y = 0; y < 128; y++) {
      uint8_t *row = wsisa_image_row(rgb, y);
      for (int x = 0; x < 4096; x++) {
        const uint32_t colour = (strip << 18) | ((uint32_t)y << 11) | (uint32_t)(x / 2);
        row[3 * x] = (uint8_t)(colour >> 16);
        row[3 * x + 1] = (uint8_t)(colour >> 8);
        row[3 * x + 2] = (uint8_t)colour;
      }
    }
    cr_assert_eq(wsisa_cpu_rgb2lab(rgb, lab), 0);
    for (int y = 0; y < 128; y++) {
      const uint8_t *c = wsisa_image_row(rgb, y);
      const float *got = wsisa_image_row(lab, y);
      for (int x = 0; x < 4096; x += 2) {
        float want[3];
        lab_formula(c + 3 * x, &k, want);
        bad += memcmp(got + 3 * x, want, sizeof want) != 0;
        bad += memcmp(got + 3 * x + 3, want, sizeof want) != 0;
      }
    }
  }
  cr_expect_eq(bad, 0, "%ld pixels differ from the formula", bad);
  wsisa_image_free(rgb);
  wsisa_image_free(lab);
}

Test(exact, lab2rgb_cache_matches_formula) {
  /* Random lαβ triples, each used twice, plus signed zeros, infinities and a
   * NaN (keys are bits: -0.0 and +0.0 are two entries with equal results),
   * twice over (the second call starts from a filled cache); mask-off pixels
   * copy the input. */
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  const int w = 1000, h = 300;
  wsisa_image *lab = NULL, *mask = NULL, *in = NULL, *out = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 3, WSISA_F32, &lab, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_U8, &mask, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 3, WSISA_U8, &in, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 3, WSISA_U8, &out, NULL), 0);
  static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f};
  for (int y = 0; y < h; y++) {
    float *l = wsisa_image_row(lab, y);
    for (int x = 0; x < w; x++) {
      for (int c = 0; c < 3; c++)
        l[3 * x + c] = x % 2 ? l[3 * x - 3 + c]
                       : rnd() % 50 ? -1.5f + (float)(rnd() % 3000) / 1000.0f
                                    : special[rnd() % 7];
      ((uint8_t *)wsisa_image_row(mask, y))[x] = rnd() % 5 ? 255 : 0;
      for (int c = 0; c < 3; c++) ((uint8_t *)wsisa_image_row(in, y))[3 * x + c] = (uint8_t)rnd();
    }
  }
  for (int pass = 0; pass < 2; pass++) {
    cr_assert_eq(wsisa_cpu_lab2rgb(lab, mask, in, out), 0);
    long bad = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        uint8_t want[3];
        if (((uint8_t *)wsisa_image_row(mask, y))[x])
          rgb_formula((float *)wsisa_image_row(lab, y) + 3 * x, &k, want);
        else
          memcpy(want, (uint8_t *)wsisa_image_row(in, y) + 3 * x, 3);
        bad += memcmp((uint8_t *)wsisa_image_row(out, y) + 3 * x, want, 3) != 0;
      }
    cr_expect_eq(bad, 0, "pass %d: %ld pixels differ from the formula", pass, bad);
  }
  wsisa_image *imgs[] = {lab, mask, in, out};
  for (int i = 0; i < 4; i++) wsisa_image_free(imgs[i]);
  wsisa_cpu_scratch_release();
}
