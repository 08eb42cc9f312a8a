/* Comparison counts of a mask against the reference: |A∩B|, |A|, |B|
 * (docs/workflow.md Comparison; Dice and Jaccard are made from them). */
#include "codelets/cpu/cpu.h"

int wsisa_cpu_compare(const wsisa_image *a, const wsisa_image *b, uint64_t counts[3]) {
  if (!wsisa__image_is(a, a, 1, WSISA_U8) || !wsisa__image_is(b, a, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  uint64_t both = 0, in_a = 0, in_b = 0;
  for (int y = 0; y < a->height; y++) {
    const uint8_t *pa = wsisa_image_row(a, y), *pb = wsisa_image_row(b, y);
    for (int x = 0; x < a->width; x++) {
      const int on_a = pa[x] != 0, on_b = pb[x] != 0;
      both += on_a & on_b;
      in_a += on_a;
      in_b += on_b;
    }
  }
  counts[0] = both;
  counts[1] = in_a;
  counts[2] = in_b;
  return 0;
}
