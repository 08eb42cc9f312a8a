/* Comparison counts of a mask against the reference: |A∩B|, |A|, |B|
 * (docs/workflow.md Comparison; Dice and Jaccard are made from them). */
#include "codelets/cpu/cpu.h"

/* counts[0..2] += |A∩B|, |A|, |B| over one row: 32-pixel chunks counted in
 * bytes (a vectorised loop of its own), then added up. */
static void count_row(const uint8_t *restrict a, const uint8_t *restrict b, int width,
                      uint64_t counts[3]) {
  int x = 0;
  for (; x + 32 <= width; x += 32) {
    uint8_t both[32], in_a[32], in_b[32];
    for (int j = 0; j < 32; j++) {
      both[j] = (a[x + j] != 0) & (b[x + j] != 0);
      in_a[j] = a[x + j] != 0;
      in_b[j] = b[x + j] != 0;
    }
    for (int j = 0; j < 32; j++) {
      counts[0] += both[j];
      counts[1] += in_a[j];
      counts[2] += in_b[j];
    }
  }
  for (; x < width; x++) {
    counts[0] += (a[x] != 0) & (b[x] != 0);
    counts[1] += a[x] != 0;
    counts[2] += b[x] != 0;
  }
}

int wsisa_cpu_compare(const wsisa_image *a, const wsisa_image *b, uint64_t counts[3]) {
  if (!wsisa__image_is(a, a, 1, WSISA_U8) || !wsisa__image_is(b, a, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  counts[0] = counts[1] = counts[2] = 0;
  for (int y = 0; y < a->height; y++)
    count_row(wsisa_image_row(a, y), wsisa_image_row(b, y), a->width, counts);
  return 0;
}
