/* Binary mask logic: AND, OR, AND NOT (docs/workflow.md levels 1 and 5: the RBC test,
 * bw2 AND NOT rbc). Any non-zero input is on; the output is 0/255. */
#include "codelets/cpu/cpu.h"

/* One helper per operation, the row loop its own: GCC vectorises it only
 * there, and without a test of op inside. */
#define MASK_ROW(name, expr)                                                           \
  static void name(uint8_t *restrict dst, const uint8_t *restrict a,                   \
                   const uint8_t *restrict b, int width) {                             \
    WSISA__VEC_FOR(x, width, dst[x] = (expr) ? 255 : 0);                               \
  }
MASK_ROW(and_row, (a[x] != 0) & (b[x] != 0))
MASK_ROW(or_row, (a[x] != 0) | (b[x] != 0))
MASK_ROW(andnot_row, (a[x] != 0) & (b[x] == 0))
#undef MASK_ROW

/* op: 0 AND, 1 OR, 2 ANDNOT (a & !b), the order of wsisa_mask_op. */
int wsisa_cpu_mask_logic(const wsisa_image *a, const wsisa_image *b, int op,
                         wsisa_image *out) {
  if (!wsisa__image_is(a, a, 1, WSISA_U8) || !wsisa__image_is(b, a, 1, WSISA_U8) ||
      !wsisa__image_is(out, a, 1, WSISA_U8) || op < 0 || op > 2)
    return WSISA_EINTERNAL;
  void (*row)(uint8_t *restrict, const uint8_t *restrict, const uint8_t *restrict, int) =
      op == 0 ? and_row : op == 1 ? or_row : andnot_row;
  for (int y = 0; y < a->height; y++)
    row(wsisa_image_row(out, y), wsisa_image_row(a, y), wsisa_image_row(b, y), a->width);
  return 0;
}
