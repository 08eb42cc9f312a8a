/* Foreground of the normalization: Fisher's linear discriminant on (R,G,B,1),
 * fg where M1·x < M2·x (docs/workflow.md Normalization step 1; nscale's segFG). */
#include "codelets/cpu/cpu.h"

/* Thousandths: M1 = [−0.154 0.035 0.549 −45.718], M2 = [−0.057 −0.817 1.170
 * −49.887]. With three decimals, 1000·(M2 − M1)·x is an integer for u8 x, so
 * the comparison is exact in int. Evaluated in double it agrees everywhere
 * but on exact ties (75 colours of the RGB cube), where rounding picks a side
 * at random (14 of them come out foreground); exact arithmetic makes every
 * tie background, as the strict < says, and the OpenCL kernel gets the same
 * bits on any device. */
const int wsisa__fisher_m1[4] = {-154, 35, 549, -45718};
const int wsisa__fisher_m2[4] = {-57, -817, 1170, -49887};

int wsisa_cpu_fisher_fg(const wsisa_image *rgb, wsisa_image *mask) {
  if (!wsisa__image_is(rgb, rgb, 3, WSISA_U8) || !wsisa__image_is(mask, rgb, 1, WSISA_U8))
    return WSISA_EINTERNAL;
  int d[4];
  for (int i = 0; i < 4; i++) d[i] = wsisa__fisher_m2[i] - wsisa__fisher_m1[i];
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *src = wsisa_image_row(rgb, y);
    uint8_t *dst = wsisa_image_row(mask, y);
    for (int x = 0; x < rgb->width; x++, src += 3)
      dst[x] = d[0] * src[0] + d[1] * src[1] + d[2] * src[2] + d[3] > 0 ? 255 : 0;
  }
  return 0;
}
