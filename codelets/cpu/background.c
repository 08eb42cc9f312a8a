/* Background of a tile: b > B & g > G & r > R, strict (docs/workflow.md level 1;
 * nscale's getBackground). */
#include "codelets/cpu/cpu.h"

int wsisa_cpu_background(const wsisa_image *rgb, int blue, int green, int red,
                         wsisa_image *mask) {
  if (!wsisa__image_is(rgb, rgb, 3, WSISA_U8) || !wsisa__image_is(mask, rgb, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *src = wsisa_image_row(rgb, y);
    uint8_t *dst = wsisa_image_row(mask, y);
    for (int x = 0; x < rgb->width; x++, src += 3)
      dst[x] = src[0] > red && src[1] > green && src[2] > blue ? 255 : 0;
  }
  return 0;
}
