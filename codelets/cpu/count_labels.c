/* Object count of a canonical label image: labels are 1..n, so n is the
 * largest label (the per-run nucleus count of a study). */
#include "codelets/cpu/cpu.h"

int wsisa_cpu_count_labels(const wsisa_image *labels, uint64_t *count) {
  if (labels->type != WSISA_I32 || labels->channels != 1) return WSISA_EINTERNAL;
  int32_t max = 0;
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) max = row[x] > max ? row[x] : max;
  }
  *count = (uint64_t)max;
  return 0;
}
