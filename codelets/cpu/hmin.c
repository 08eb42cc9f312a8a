/* h-minima transform of an f32 image (docs/workflow.md level 6, on −distance): the
 * reconstruction by erosion of in + h over in (Soille, Morphological Image
 * Analysis), which fills every minimum shallower than h. */
#include <stdlib.h>

#include "codelets/cpu/morph_private.h"

/* One row of the planes: mask -v, marker -(v + h). */
static void planes_row(float *restrict mask, float *restrict marker, const float *restrict v,
                       int width, float h) {
  WSISA__VEC_FOR(x, width, mask[x] = -v[x]; marker[x] = -(v[x] + h));
}

/* 0 - m rather than -m: the result holds no -0.0 (see reconstruct.c). */
static void out_row(float *restrict o, const float *restrict m, int width) {
  WSISA__VEC_FOR(x, width, o[x] = 0.0f - m[x]);
}

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
  float *mask = wsisa__recon_f32_planes(width, height);
  if (!mask) return WSISA_ENOMEM;
  float *marker = mask + wsisa__frame_size(width, height);
  for (int y = 0; y < height; y++) {
    const size_t p = wsisa__frame_index(width, 0, y);
    planes_row(mask + p, marker + p, wsisa_image_row(in, y), width, h);
  }
  int rc = wsisa__recon_f32(mask, marker, width, height, conn);
  for (int y = 0; y < height && !rc; y++)
    out_row(wsisa_image_row(out, y), marker + wsisa__frame_index(width, 0, y), width);
  wsisa__scratch_trim();
  return rc;
}
