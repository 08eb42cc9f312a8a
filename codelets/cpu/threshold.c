/* Grey threshold: mask = grey > t, the candidate and hysteresis masks
 * (docs/workflow.md levels 3 and 5: diff > G1, diff > G2). */
#include <string.h>

#include "codelets/cpu/cpu.h"

/* A row helper of its own: GCC vectorises the loop only there, and on bytes
 * when t is a byte too (the caller takes t out of 0..254 first). */
static void threshold_row(uint8_t *restrict dst, const uint8_t *restrict src, uint8_t t,
                          int width) {
  WSISA__VEC_FOR(x, width, dst[x] = src[x] > t ? 255 : 0);
}

int wsisa_cpu_threshold(const wsisa_image *grey, int t, wsisa_image *mask) {
  if (!wsisa__image_is(grey, grey, 1, WSISA_U8) || !wsisa__image_is(mask, grey, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  for (int y = 0; y < grey->height; y++) {
    uint8_t *dst = wsisa_image_row(mask, y);
    if (t < 0 || t > 254) /* every pixel, or none, is above t */
      memset(dst, t < 0 ? 255 : 0, (size_t)grey->width);
    else
      threshold_row(dst, wsisa_image_row(grey, y), (uint8_t)t, grey->width);
  }
  return 0;
}
