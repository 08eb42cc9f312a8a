/* Reinhard colour transfer of the foreground: (x − mean)·stdT/std + meanT per
 * lαβ channel (docs/workflow.md Normalization step 3; nscale's TransferI). */
#include <string.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_color_transfer(const wsisa_image *lab, const wsisa_image *mask,
                             const double stats[WSISA_STATS_N], wsisa_image *out) {
  if (!wsisa__image_is(lab, lab, 3, WSISA_F32) || !wsisa__image_is(mask, lab, 1, WSISA_U8) ||
      !wsisa__image_is(out, lab, 3, WSISA_F32))
    return WSISA_EINTERNAL;
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  const double *mean = stats + WSISA_STATS_MEAN, *std = stats + WSISA_STATS_STD;
  /* A channel without spread (flat foreground, or no foreground at all) has
   * no scale to transfer: it is copied unchanged rather than divided by 0. */
  int scaled[3];
  for (int c = 0; c < 3; c++) scaled[c] = stats[WSISA_STATS_COUNT] > 0 && std[c] > 0;
  for (int y = 0; y < lab->height; y++) {
    const float *src = wsisa_image_row(lab, y);
    const uint8_t *m = wsisa_image_row(mask, y);
    float *dst = wsisa_image_row(out, y);
    memcpy(dst, src, (size_t)lab->width * 3 * sizeof *dst);
    for (int x = 0; x < lab->width; x++) {
      if (!m[x]) continue;
      for (int c = 0; c < 3; c++)
        if (scaled[c])
          dst[3 * x + c] = (float)((src[3 * x + c] - mean[c]) * k.std_target[c] / std[c] +
                                   k.mean_target[c]);
    }
  }
  return 0;
}
