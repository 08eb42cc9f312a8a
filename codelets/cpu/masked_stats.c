/* Per-channel count, mean and population standard deviation of lαβ over the
 * foreground (docs/workflow.md Normalization step 3; nscale's TransferI statistics). */
#include <math.h>

#include "codelets/cpu/cpu.h"

/* Two passes in double (mean, then squared deviations): nscale's
 * sum-of-squares form cancels badly when std ≪ |mean|, as in β. Each pass
 * sums a row left to right, then the row sums top to bottom, the order the
 * OpenCL kernels keep, so both workers give the same bits. f32 values summed
 * in double stay exact for a constant channel (below 2^29 pixels), so a flat
 * channel gets std exactly 0. */
int wsisa_cpu_masked_stats(const wsisa_image *lab, const wsisa_image *mask,
                           double stats[WSISA_STATS_N]) {
  if (!wsisa__image_is(lab, lab, 3, WSISA_F32) || !wsisa__image_is(mask, lab, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  uint64_t count = 0;
  double sum[3] = {0, 0, 0}, mean[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
  for (int y = 0; y < lab->height; y++) {
    const float *v = wsisa_image_row(lab, y);
    const uint8_t *m = wsisa_image_row(mask, y);
    uint64_t row_count = 0;
    double row[3] = {0, 0, 0};
    for (int x = 0; x < lab->width; x++, v += 3) {
      if (!m[x]) continue;
      row_count++;
      for (int c = 0; c < 3; c++) row[c] += v[c];
    }
    count += row_count;
    for (int c = 0; c < 3; c++) sum[c] += row[c];
  }
  if (count)
    for (int c = 0; c < 3; c++) mean[c] = sum[c] / (double)count;
  for (int y = 0; count && y < lab->height; y++) {
    const float *v = wsisa_image_row(lab, y);
    const uint8_t *m = wsisa_image_row(mask, y);
    double row[3] = {0, 0, 0};
    for (int x = 0; x < lab->width; x++, v += 3) {
      if (!m[x]) continue;
      for (int c = 0; c < 3; c++) {
        double d = v[c] - mean[c];
        row[c] += d * d;
      }
    }
    for (int c = 0; c < 3; c++) sq[c] += row[c];
  }
  stats[WSISA_STATS_COUNT] = (double)count;
  for (int c = 0; c < 3; c++) {
    stats[WSISA_STATS_MEAN + c] = mean[c];
    stats[WSISA_STATS_STD + c] = count ? sqrt(sq[c] / (double)count) : 0.0;
  }
  return 0;
}
