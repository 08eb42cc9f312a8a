/* Saturating difference: out = max(a − b, 0), the top-hat diff = rc − rc_recon
 * (docs/workflow.md level 3). */
#include "codelets/cpu/cpu.h"

int wsisa_cpu_sub_sat(const wsisa_image *a, const wsisa_image *b, wsisa_image *out) {
  if (!wsisa__image_is(a, a, 1, WSISA_U8) || !wsisa__image_is(b, a, 1, WSISA_U8) ||
      !wsisa__image_is(out, a, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  for (int y = 0; y < a->height; y++) {
    const uint8_t *pa = wsisa_image_row(a, y), *pb = wsisa_image_row(b, y);
    uint8_t *dst = wsisa_image_row(out, y);
    for (int x = 0; x < a->width; x++) dst[x] = pa[x] > pb[x] ? (uint8_t)(pa[x] - pb[x]) : 0;
  }
  return 0;
}
