/* Sobel gradient magnitude, sqrt(gx² + gy²) with the unnormalised 3×3 kernels
 * (scipy.ndimage.sobel's); outside pixels repeat the nearest edge pixel. */
#include <math.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_sobel(const wsisa_image *in, wsisa_image *mag) {
  if (in->type != WSISA_F32 || in->channels != 1 || !wsisa__image_is(mag, in, 1, WSISA_F32))
    return WSISA_EINTERNAL;
  const int w = in->width, h = in->height;
  for (int y = 0; y < h; y++) {
    const float *up = wsisa_image_row(in, y > 0 ? y - 1 : 0);
    const float *mid = wsisa_image_row(in, y);
    const float *down = wsisa_image_row(in, y + 1 < h ? y + 1 : h - 1);
    float *out = wsisa_image_row(mag, y);
    for (int x = 0; x < w; x++) {
      const int l = x > 0 ? x - 1 : 0, r = x + 1 < w ? x + 1 : w - 1;
      /* the order of codelets/cl/sobel.cl, so both round alike */
      const float gx = ((up[r] - up[l]) + 2.0f * (mid[r] - mid[l])) + (down[r] - down[l]);
      const float gy = ((down[l] - up[l]) + 2.0f * (down[x] - up[x])) + (down[r] - up[r]);
      out[x] = sqrtf(gx * gx + gy * gy);
    }
  }
  return 0;
}
