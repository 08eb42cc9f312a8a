/* Ruifrok–Johnston colour deconvolution (Anal. Quant. Cytol. Histol. 23(4),
 * 2001): per-channel optical density, then the inverse of the stain matrix. */
#include <math.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_deconv_setup(const float stains[9], wsisa_deconv_consts *k) {
  double s[9], norm[3];
  for (int i = 0; i < 9; i++) {
    s[i] = stains[i];
    if (!isfinite(s[i])) return WSISA_EUSAGE;
  }
  for (int r = 0; r < 3; r++)
    norm[r] = sqrt(s[3 * r] * s[3 * r] + s[3 * r + 1] * s[3 * r + 1] +
                   s[3 * r + 2] * s[3 * r + 2]);
  /* cofactors: inv = adj / det, adj[j][i] = cofactor[i][j] */
  double c[9] = {
      s[4] * s[8] - s[5] * s[7], s[5] * s[6] - s[3] * s[8], s[3] * s[7] - s[4] * s[6],
      s[2] * s[7] - s[1] * s[8], s[0] * s[8] - s[2] * s[6], s[1] * s[6] - s[0] * s[7],
      s[1] * s[5] - s[2] * s[4], s[2] * s[3] - s[0] * s[5], s[0] * s[4] - s[1] * s[3]};
  double det = s[0] * c[0] + s[1] * c[1] + s[2] * c[2];
  /* a matrix this close to singular would amplify quantisation noise a
   * millionfold: refuse it rather than return noise */
  if (!(fabs(det) > 1e-6 * norm[0] * norm[1] * norm[2])) return WSISA_EUSAGE;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) k->m[3 * i + j] = (float)(c[3 * j + i] / det);
  /* skimage's separate_stains floors intensity at 1e-6 of full scale: only
   * v = 0 reaches the floor, whose density is then 6 */
  k->od[0] = 6.0f;
  for (int v = 1; v < 256; v++) k->od[v] = (float)log10(255.0 / v);
  return 0;
}

int wsisa_cpu_deconv(const wsisa_image *rgb, const wsisa_deconv_consts *k,
                     wsisa_image *h, wsisa_image *eo, wsisa_image *res) {
  if (rgb->type != WSISA_U8 || rgb->channels != 3 || !wsisa__image_is(h, rgb, 1, WSISA_F32) ||
      !wsisa__image_is(eo, rgb, 1, WSISA_F32) || !wsisa__image_is(res, rgb, 1, WSISA_F32))
    return WSISA_EINTERNAL;
  const float *m = k->m;
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *p = wsisa_image_row(rgb, y);
    float *out[3] = {wsisa_image_row(h, y), wsisa_image_row(eo, y), wsisa_image_row(res, y)};
    for (int x = 0; x < rgb->width; x++, p += 3) {
      const float r = k->od[p[0]], g = k->od[p[1]], b = k->od[p[2]];
      /* the order of codelets/cl/deconv.cl, so both round alike */
      for (int j = 0; j < 3; j++) out[j][x] = (r * m[j] + g * m[3 + j]) + b * m[6 + j];
    }
  }
  return 0;
}
