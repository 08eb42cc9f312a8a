/* Ownership of the objects of a tile read with a halo: an object belongs to
 * the tile whose core holds its centroid, so a nucleus that crosses a tile
 * border is kept by exactly one tile. The centroid is the mean of the
 * object's pixel indices (pixel i spans [i, i + 1)); the test
 * x0 <= sum_x / n < x1 is made in integers, x0 * n <= sum_x < x1 * n, so
 * neighbouring cores [x0, x1) and [x1, x2) never both keep an object and
 * never both leave it. */
#include <stdlib.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_own_objects(const wsisa_image *labels, int x0, int y0, int x1, int y1,
                          wsisa_image *out) {
  if (labels->type != WSISA_I32 || labels->channels != 1 ||
      !wsisa__image_is(out, labels, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  int32_t max = 0;
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) max = row[x] > max ? row[x] : max;
  }
  /* per label: pixel count, sum of x, sum of y; then the verdict */
  uint64_t *acc = calloc(3 * ((size_t)max + 1), sizeof *acc);
  uint8_t *keep = calloc((size_t)max + 1, 1);
  if (!acc || !keep) {
    free(acc);
    free(keep);
    return WSISA_ENOMEM;
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++)
      if (row[x] > 0) {
        uint64_t *a = acc + 3 * (size_t)row[x];
        a[0]++;
        a[1] += (uint64_t)x;
        a[2] += (uint64_t)y;
      }
  }
  for (int32_t l = 1; l <= max; l++) {
    const uint64_t *a = acc + 3 * (size_t)l;
    keep[l] = a[0] && (uint64_t)x0 * a[0] <= a[1] && a[1] < (uint64_t)x1 * a[0] &&
              (uint64_t)y0 * a[0] <= a[2] && a[2] < (uint64_t)y1 * a[0];
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    uint8_t *o = wsisa_image_row(out, y);
    for (int x = 0; x < labels->width; x++) o[x] = row[x] > 0 && keep[row[x]] ? 255 : 0;
  }
  free(acc);
  free(keep);
  return 0;
}
