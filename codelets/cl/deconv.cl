/* Ruifrok-Johnston colour deconvolution, the operations and order of
 * codelets/cpu/deconv.c. `k` holds the host's density table od[256] then the
 * inverse stain matrix m[9] (wsisa_deconv_consts). */
#pragma OPENCL FP_CONTRACT OFF

__kernel void wsisa_deconv(__global const uchar *rgb, uint rgb_off, uint rgb_stride,
                           __constant float *k, __global uchar *h, uint h_off,
                           uint h_stride, __global uchar *eo, uint eo_off, uint eo_stride,
                           __global uchar *res, uint res_off, uint res_stride, int width,
                           int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *p = rgb + rgb_off + y * rgb_stride + 3 * x;
  __constant float *m = k + 256;
  float r = k[p[0]], g = k[p[1]], b = k[p[2]];
  __global float *out[3] = {(__global float *)(h + h_off + y * h_stride) + x,
                            (__global float *)(eo + eo_off + y * eo_stride) + x,
                            (__global float *)(res + res_off + y * res_stride) + x};
  for (int j = 0; j < 3; j++) *out[j] = (r * m[j] + g * m[3 + j]) + b * m[6 + j];
}
