/* Grey threshold: mask = grey > t, the candidate and hysteresis masks
 * (docs/workflow.md levels 3 and 5: diff > G1, diff > G2). */
#include "codelets/cpu/cpu.h"

int wsisa_cpu_threshold(const wsisa_image *grey, int t, wsisa_image *mask) {
  if (!wsisa__image_is(grey, grey, 1, WSISA_U8) || !wsisa__image_is(mask, grey, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  for (int y = 0; y < grey->height; y++) {
    const uint8_t *src = wsisa_image_row(grey, y);
    uint8_t *dst = wsisa_image_row(mask, y);
    for (int x = 0; x < grey->width; x++) dst[x] = src[x] > t ? 255 : 0;
  }
  return 0;
}
