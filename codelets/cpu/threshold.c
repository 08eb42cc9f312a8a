/* Grey threshold: mask = grey > t, the candidate and hysteresis masks
 * (docs/workflow.md levels 3 and 5: diff > G1, diff > G2). */
#include "codelets/cpu/cpu.h"

/* A row helper of its own: GCC vectorises the loop only there. */
static void threshold_row(uint8_t *restrict dst, const uint8_t *restrict src, int t, int width) {
  WSISA__VEC_FOR(x, width, dst[x] = src[x] > t ? 255 : 0);
}

int wsisa_cpu_threshold(const wsisa_image *grey, int t, wsisa_image *mask) {
  if (!wsisa__image_is(grey, grey, 1, WSISA_U8) || !wsisa__image_is(mask, grey, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  for (int y = 0; y < grey->height; y++)
    threshold_row(wsisa_image_row(mask, y), wsisa_image_row(grey, y), t, grey->width);
  return 0;
}
