/* Binary mask logic: AND, OR, AND NOT (docs/workflow.md levels 1 and 5: the RBC test,
 * bw2 AND NOT rbc). Any non-zero input is on; the output is 0/255. */
#include "codelets/cpu/cpu.h"

/* op: 0 AND, 1 OR, 2 ANDNOT (a & !b), the order of wsisa_mask_op. */
int wsisa_cpu_mask_logic(const wsisa_image *a, const wsisa_image *b, int op,
                         wsisa_image *out) {
  if (!wsisa__image_is(a, a, 1, WSISA_U8) || !wsisa__image_is(b, a, 1, WSISA_U8) ||
      !wsisa__image_is(out, a, 1, WSISA_U8) || op < 0 || op > 2)
    return WSISA_EINTERNAL;
  for (int y = 0; y < a->height; y++) {
    const uint8_t *pa = wsisa_image_row(a, y), *pb = wsisa_image_row(b, y);
    uint8_t *dst = wsisa_image_row(out, y);
    for (int x = 0; x < a->width; x++) {
      const int on_a = pa[x] != 0, on_b = pb[x] != 0;
      const int on = op == 0 ? on_a && on_b : op == 1 ? on_a || on_b : on_a && !on_b;
      dst[x] = on ? 255 : 0;
    }
  }
  return 0;
}
