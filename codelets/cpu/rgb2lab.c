/* RGB -> Reinhard lαβ (not CIELAB): RGB/255 -> LMS -> log10 -> lαβ (docs/workflow.md
 * Normalization step 2; Reinhard et al. 2001 §2). */
#include <math.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_rgb2lab(const wsisa_image *rgb, wsisa_image *lab) {
  if (!wsisa__image_is(rgb, rgb, 3, WSISA_U8) || !wsisa__image_is(lab, rgb, 3, WSISA_F32))
    return WSISA_EINTERNAL;
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  const double *m = k.rgb2lms, *n = k.lms2lab;
  /* Double throughout, one rounding to float at the end: the OpenCL kernel
   * repeats these operations in this order (no contraction on either side). */
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *src = wsisa_image_row(rgb, y);
    float *dst = wsisa_image_row(lab, y);
    for (int x = 0; x < rgb->width; x++, src += 3, dst += 3) {
      const double r = src[0] / 255.0, g = src[1] / 255.0, b = src[2] / 255.0;
      double lg[3];
      for (int i = 0; i < 3; i++) {
        double lms = m[3 * i] * r + m[3 * i + 1] * g + m[3 * i + 2] * b;
        lg[i] = log10(lms > k.lms_floor ? lms : k.lms_floor);
      }
      for (int i = 0; i < 3; i++)
        dst[i] = (float)(n[3 * i] * lg[0] + n[3 * i + 1] * lg[1] + n[3 * i + 2] * lg[2]);
    }
  }
  return 0;
}
