/* h-minima transform of an f32 image (docs/workflow.md level 6, on −distance): the
 * reconstruction by erosion of in + h over in (Soille, Morphological Image
 * Analysis), which fills every minimum shallower than h. */
#include <stdlib.h>

#include "codelets/cpu/morph_private.h"

int wsisa_cpu_hmin(const wsisa_image *in, float h, int conn, wsisa_image *out) {
  const int width = in->width, height = in->height;
  if (in->type != WSISA_F32 || out->type != WSISA_F32 || in->channels != 1 ||
      out->channels != 1 || out->width != width || out->height != height ||
      (conn != 4 && conn != 8) || !(h >= 0))
    return WSISA_EINTERNAL;
  /* Erosion of f is dilation of -f, and float negation is exact: reconstruct
   * -(in + h) under -in by dilation. in + h >= in for h >= 0, so the marker
   * already lies under the mask; -FLT_MAX + h stays -FLT_MAX for small h, as
   * the workflow's background wants. */
  float *f = malloc(2 * wsisa__frame_size(width, height) * sizeof *f);
  if (!f) return WSISA_ENOMEM;
  for (int y = 0; y < height; y++) {
    const float *v = wsisa_image_row(in, y);
    float *p = f + 2 * wsisa__frame_index(width, 0, y);
    for (int x = 0; x < width; x++) {
      p[2 * x] = -v[x];
      p[2 * x + 1] = -(v[x] + h);
    }
  }
  int rc = wsisa__recon_f32(f, width, height, conn);
  /* 0 - m rather than -m: the result holds no -0.0 (see reconstruct.c). */
  for (int y = 0; y < height && !rc; y++) {
    float *o = wsisa_image_row(out, y);
    const float *p = f + 2 * wsisa__frame_index(width, 0, y);
    for (int x = 0; x < width; x++) o[x] = 0.0f - p[2 * x + 1];
  }
  free(f);
  return rc;
}
