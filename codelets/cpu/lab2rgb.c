/* Reinhard lαβ -> RGB of the foreground: the inverse matrices, ×255, clamp,
 * round half up (docs/workflow.md Normalization step 4; nscale's lab2BGR). */
#include <math.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_lab2rgb(const wsisa_image *lab, const wsisa_image *mask,
                      const wsisa_image *rgb_in, wsisa_image *rgb_out) {
  if (!wsisa__image_is(lab, lab, 3, WSISA_F32) || !wsisa__image_is(mask, lab, 1, WSISA_U8) ||
      !wsisa__image_is(rgb_in, lab, 3, WSISA_U8) || !wsisa__image_is(rgb_out, lab, 3, WSISA_U8))
    return WSISA_EINTERNAL;
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  const double *n = k.lab2lms, *m = k.lms2rgb;
  for (int y = 0; y < lab->height; y++) {
    const float *src = wsisa_image_row(lab, y);
    const uint8_t *msk = wsisa_image_row(mask, y);
    uint8_t *dst = wsisa_image_row(rgb_out, y);
    memcpy(dst, wsisa_image_row(rgb_in, y), (size_t)lab->width * 3);
    for (int x = 0; x < lab->width; x++) {
      if (!msk[x]) continue;
      const double l[3] = {src[3 * x], src[3 * x + 1], src[3 * x + 2]};
      double lms[3];
      for (int i = 0; i < 3; i++) {
        lms[i] = pow(10.0, n[3 * i] * l[0] + n[3 * i + 1] * l[1] + n[3 * i + 2] * l[2]);
        if (!isfinite(lms[i])) lms[i] = 0.0; /* nscale: LMS(isnan|inf) = 0 */
      }
      for (int i = 0; i < 3; i++) {
        double c = (m[3 * i] * lms[0] + m[3 * i + 1] * lms[1] + m[3 * i + 2] * lms[2]) * 255.0;
        c = c > 0.0 ? (c < 255.0 ? c : 255.0) : 0.0; /* NaN goes to 0 too */
        /* Round half up (nscale's rndint): floor plus the exact fraction test,
         * not floor(c + 0.5), whose addition can round up below one half. */
        double f = floor(c);
        dst[3 * x + i] = (uint8_t)(f + (c - f >= 0.5));
      }
    }
  }
  return 0;
}
