/* Fill holes of a binary mask as nscale's fillHoles(img, conn) and MATLAB's
 * imfill(bw, conn, 'holes') (docs/workflow.md levels 3, 5 and 7): background pixels
 * reachable from the image border through background pixels with
 * connectivity conn stay background, every other pixel becomes foreground.
 * scipy.ndimage.binary_fill_holes floods the background with its `structure`,
 * so its default (the cross) is conn 4 and a 3×3 square is conn 8.
 *
 * By runs: the background's components as runs of off pixels (one read of the
 * mask), those with a run on the border kept, and the output written once. A
 * flood of the background from the border wrote a state image, filled it and
 * rescanned its rows above and below each span, then turned it into the
 * output: about seven bytes a pixel against two. */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_fill_holes(const wsisa_image *mask, int conn, wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  if (mask->type != WSISA_U8 || out->type != WSISA_U8 || mask->channels != 1 ||
      out->channels != 1 || out->width != width || out->height != height ||
      (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  wsisa__runs runs;
  int rc = wsisa__cpu_runs_find_off(mask, conn, &runs);
  if (rc) return rc;
  uint8_t *border = calloc((size_t)runs.n + 1, 1);
  if (!border) {
    wsisa__cpu_runs_free(&runs);
    return WSISA_ENOMEM;
  }
  for (int y = 0; y < height; y++) {
    const int32_t first = runs.row[y], end = runs.row[y + 1];
    if (first == end) continue;
    if (y == 0 || y == height - 1)
      for (int32_t i = first; i < end; i++) border[runs.run[i].id] = 1;
    if (runs.run[first].x0 == 0) border[runs.run[first].id] = 1;
    if (runs.run[end - 1].x1 == width) border[runs.run[end - 1].id] = 1;
  }
  for (int y = 0; y < height; y++) {
    uint8_t *row = wsisa_image_row(out, y);
    int x = 0;
    for (int32_t i = runs.row[y]; i < runs.row[y + 1]; i++) {
      const wsisa__run *r = &runs.run[i];
      if (!border[r->id]) continue; /* a hole: filled with the foreground */
      memset(row + x, 255, (size_t)(r->x0 - x));
      memset(row + r->x0, 0, (size_t)(r->x1 - r->x0));
      x = r->x1;
    }
    memset(row + x, 255, (size_t)(width - x));
  }
  free(border);
  wsisa__cpu_runs_free(&runs);
  return 0;
}
