/* Exact Euclidean distance transform (docs/workflow.md, level 6), separable as in
 * Meijster, Roerdink & Hesselink (2000): a column pass of 1-D distances, then
 * per row the lower envelope of parabolas, all in integers; only the final
 * square root is float, so the OpenCL kernel gives the same bits. Borders as
 * cv::distanceTransform(DIST_L2, DIST_MASK_PRECISE): no off pixels outside the
 * image, and OpenCV's 1e15 "infinity" when the image has no off pixel at all
 * (its results equal ours bit for bit on the golden tile and on 4096²). */
#include <math.h>
#include <stdlib.h>

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

/* One row: g holds the column distances (>= INF: none), out the result.
 * s/t: the envelope's columns and where each starts to win (ties keep the
 * left one). */
static void edt_row(const int32_t *g, int width, int32_t *s, int32_t *t, float *out) {
  int k = -1;
  for (int u = 0; u < width; u++) {
    if (g[u] >= INF) continue;
    while (k >= 0 && parabola(t[k], s[k], g[s[k]]) > parabola(t[k], u, g[u])) k--;
    if (k < 0) {
      k = 0;
      s[0] = u;
      t[0] = 0;
      continue;
    }
    /* First x where u is strictly nearer than s[k]. */
    const int64_t i = s[k];
    const int64_t num = (int64_t)u * u - i * i + (int64_t)g[u] * g[u] - (int64_t)g[i] * g[i];
    const int64_t w = 1 + floor_div(num, 2 * (u - i));
    if (w < width) {
      k++;
      s[k] = u;
      t[k] = (int32_t)w;
    }
  }
  if (k < 0) { /* no off pixel in any column: none in the image */
    for (int x = 0; x < width; x++) out[x] = WSISA_EDT_NONE;
    return;
  }
  for (int x = width - 1; x >= 0; x--) {
    out[x] = sqrtf((float)parabola(x, s[k], g[s[k]]));
    if (x == t[k]) k--;
  }
}

int wsisa_cpu_edt(const wsisa_image *mask, wsisa_image *dist) {
  if (mask->type != WSISA_U8 || mask->channels != 1 || dist->type != WSISA_F32 ||
      dist->channels != 1 || dist->width != mask->width ||
      dist->height != mask->height || mask->width > WSISA_EDT_MAX_SIDE ||
      mask->height > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  const int width = mask->width, height = mask->height;
  int32_t *scratch = malloc(3 * (size_t)width * sizeof *scratch);
  if (!scratch) return WSISA_ENOMEM;
  int32_t *g = scratch, *s = scratch + width, *t = scratch + 2 * width;
  /* Column pass row by row (so it vectorises), the 1-D distances parked in
   * the output's own memory: down, then up. */
  for (int y = 0; y < height; y++) {
    const uint8_t *m = wsisa_image_row(mask, y);
    int32_t *d = wsisa_image_row(dist, y);
    const int32_t *above = y ? wsisa_image_row(dist, y - 1) : NULL;
    for (int x = 0; x < width; x++) d[x] = m[x] ? (above ? above[x] + 1 : INF) : 0;
  }
  for (int y = height - 2; y >= 0; y--) {
    int32_t *d = wsisa_image_row(dist, y);
    const int32_t *below = wsisa_image_row(dist, y + 1);
    for (int x = 0; x < width; x++) d[x] = below[x] + 1 < d[x] ? below[x] + 1 : d[x];
  }
  for (int y = 0; y < height; y++) {
    int32_t *row = wsisa_image_row(dist, y);
    for (int x = 0; x < width; x++) g[x] = row[x];
    edt_row(g, width, s, t, (float *)(void *)row);
  }
  free(scratch);
  return 0;
}
