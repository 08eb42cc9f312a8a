/* Saturating difference: out = max(a − b, 0), the top-hat diff = rc − rc_recon
 * (docs/workflow.md level 3). */
#include "codelets/cpu/cpu.h"

/* A row helper of its own: GCC vectorises the loop only there. */
static void sub_sat_row(uint8_t *restrict dst, const uint8_t *restrict a,
                        const uint8_t *restrict b, int width) {
  WSISA__VEC_FOR(x, width, dst[x] = a[x] > b[x] ? (uint8_t)(a[x] - b[x]) : 0);
}

int wsisa_cpu_sub_sat(const wsisa_image *a, const wsisa_image *b, wsisa_image *out) {
  if (!wsisa__image_is(a, a, 1, WSISA_U8) || !wsisa__image_is(b, a, 1, WSISA_U8) ||
      !wsisa__image_is(out, a, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  for (int y = 0; y < a->height; y++)
    sub_sat_row(wsisa_image_row(out, y), wsisa_image_row(a, y), wsisa_image_row(b, y),
                a->width);
  return 0;
}
