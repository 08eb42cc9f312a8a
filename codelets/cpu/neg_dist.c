/* The relief the h-minima transform works on (docs/workflow.md, level 6): the
 * negated distance inside the mask, -FLT_MAX outside, so the background is the
 * deepest basin and each nucleus centre a minimum of its own. */
#include <float.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_neg_dist(const wsisa_image *dist, const wsisa_image *mask, wsisa_image *out) {
  if (dist->type != WSISA_F32 || out->type != WSISA_F32 || mask->type != WSISA_U8 ||
      dist->width != mask->width || dist->height != mask->height ||
      out->width != dist->width || out->height != dist->height)
    return WSISA_EINTERNAL;
  for (int y = 0; y < dist->height; y++) {
    const float *d = wsisa_image_row(dist, y);
    const uint8_t *m = wsisa_image_row(mask, y);
    float *o = wsisa_image_row(out, y);
    for (int x = 0; x < dist->width; x++) o[x] = m[x] ? -d[x] : -FLT_MAX;
  }
  return 0;
}
