/* Regional minima of an f32 image (docs/workflow.md level 6: the watershed markers):
 * a pixel is on if its plateau — the conn-connected set of pixels of its value
 * — has no neighbour strictly lower. skimage.morphology.local_minima with
 * allow_borders=True uses the same definition. */
#include <math.h>
#include <stdlib.h>

#include "codelets/cpu/morph_private.h"

int wsisa_cpu_regional_min(const wsisa_image *in, int conn, wsisa_image *out) {
  const int width = in->width, height = in->height;
  if (in->type != WSISA_F32 || out->type != WSISA_U8 || in->channels != 1 ||
      out->channels != 1 || out->width != width || out->height != height ||
      (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  /* Framed copy; the frame is NaN, which compares neither lower nor equal,
   * so outside pixels neither disqualify nor join a plateau. */
  const size_t size = wsisa__frame_size(width, height);
  float *v = malloc(size * sizeof *v);
  uint8_t *on = calloc(size, 1); /* the frame stays 0 */
  wsisa__fifo fifo = {0};
  int rc = WSISA_ENOMEM;
  if (!v || !on || wsisa__fifo_init(&fifo)) goto done;
  for (size_t p = 0; p < size; p++) v[p] = NAN;
  for (int y = 0; y < height; y++) {
    const float *row = wsisa_image_row(in, y);
    float *d = v + wsisa__frame_index(width, 0, y);
    for (int x = 0; x < width; x++) d[x] = row[x];
  }
  ptrdiff_t off[8];
  const int nb = wsisa__frame_neighbours(width, conn, off), half = nb / 2;
  /* A pixel is off when it has a lower neighbour, and a plateau with one off
   * pixel is off as a whole: "off" spreads through equal neighbours. As in
   * Vincent's hybrid reconstruction, a raster and an anti-raster scan spread
   * it along monotone paths, and a FIFO finishes what they miss. */
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      const ptrdiff_t p = (ptrdiff_t)wsisa__frame_index(width, x, y);
      int off_now = 0;
      for (int k = 0; k < nb; k++) off_now |= v[p + off[k]] < v[p];
      for (int k = 0; k < half && !off_now; k++)
        off_now = !on[p + off[k]] && v[p + off[k]] == v[p];
      on[p] = !off_now;
    }
  rc = 0;
  for (int y = height - 1; y >= 0 && !rc; y--)
    for (int x = width - 1; x >= 0 && !rc; x--) {
      const ptrdiff_t p = (ptrdiff_t)wsisa__frame_index(width, x, y);
      for (int k = half; k < nb && on[p]; k++)
        on[p] = on[p + off[k]] || v[p + off[k]] != v[p];
      if (on[p]) continue;
      /* Later neighbours were scanned before p went off: queue p if it still
       * has to turn one of them off. */
      for (int k = half; k < nb; k++)
        if (on[p + off[k]] && v[p + off[k]] == v[p]) {
          rc = wsisa__fifo_push(&fifo, (uint32_t)p);
          break;
        }
    }
  while (fifo.count && !rc) {
    const ptrdiff_t p = wsisa__fifo_pop(&fifo);
    for (int k = 0; k < nb; k++) {
      const ptrdiff_t q = p + off[k];
      if (on[q] && v[q] == v[p]) {
        on[q] = 0;
        rc = wsisa__fifo_push(&fifo, (uint32_t)q);
        if (rc) break;
      }
    }
  }
  for (int y = 0; y < height && !rc; y++) {
    uint8_t *o = wsisa_image_row(out, y);
    const uint8_t *s = on + wsisa__frame_index(width, 0, y);
    for (int x = 0; x < width; x++) o[x] = s[x] ? 255 : 0;
  }
done:
  wsisa__fifo_free(&fifo);
  free(v);
  free(on);
  return rc;
}
