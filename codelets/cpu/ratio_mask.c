/* Channel ratio mask c_num / (c_den + ε) > T, the red-blood-cell test
 * (docs/workflow.md level 1; nscale's getRBC). */
#include <float.h>

#include "codelets/cpu/cpu.h"

/* ε = FLT_EPSILON as nscale's C++ getRBC adds it (its MATLAB original used
 * eps = DBL_EPSILON; for u8 channels and thresholds in halves the two give the
 * same masks), and as tests/golden/reference_workflow.py does. For a fixed
 * denominator a correctly rounded double quotient never decreases as the
 * numerator grows, so the pixels that pass are exactly num >= first[den]:
 * 65 536 divisions once, a lookup per pixel, and the OpenCL kernel gets the
 * same table, hence the same bits, whatever its division does. */
void wsisa_cpu_ratio_table(double threshold, uint16_t first[256]) {
  for (int den = 0; den < 256; den++) {
    const double d = (double)den + FLT_EPSILON;
    int num = 0;
    while (num < 256 && !((double)num / d > threshold)) num++;
    first[den] = (uint16_t)num;
  }
}

int wsisa_cpu_ratio_mask(const wsisa_image *img, int num_channel, int den_channel,
                         double threshold, wsisa_image *mask) {
  const int c = img->channels;
  if (img->type != WSISA_U8 || !wsisa__image_is(mask, img, 1, WSISA_U8) ||
      num_channel < 0 || num_channel >= c || den_channel < 0 || den_channel >= c)
    return WSISA_EINTERNAL;
  uint16_t first[256];
  wsisa_cpu_ratio_table(threshold, first);
  for (int y = 0; y < img->height; y++) {
    const uint8_t *src = wsisa_image_row(img, y);
    uint8_t *dst = wsisa_image_row(mask, y);
    for (int x = 0; x < img->width; x++, src += c)
      dst[x] = src[num_channel] >= first[src[den_channel]] ? 255 : 0;
  }
  return 0;
}
