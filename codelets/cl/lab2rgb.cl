/* Reinhard l-alpha-beta -> RGB of the foreground in double, the operations and order
 * of codelets/cpu/lab2rgb.c. `k` is the uploaded wsisa_reinhard. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define LAB2LMS 18
#define LMS2RGB 27

__kernel void wsisa_lab2rgb(__global const uchar *lab, uint lab_off, uint lab_stride,
                            __global const uchar *mask, uint mask_off, uint mask_stride,
                            __global const uchar *rgb_in, uint in_off, uint in_stride,
                            __constant double *k, __global uchar *rgb_out, uint out_off,
                            uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *in = rgb_in + in_off + y * in_stride + 3 * x;
  __global uchar *dst = rgb_out + out_off + y * out_stride + 3 * x;
  if (!mask[mask_off + y * mask_stride + x]) {
    for (int i = 0; i < 3; i++) dst[i] = in[i];
    return;
  }
  __global const float *src = (__global const float *)(lab + lab_off + y * lab_stride) + 3 * x;
  __constant double *n = k + LAB2LMS, *m = k + LMS2RGB;
  double l[3] = {src[0], src[1], src[2]}, lms[3];
  for (int i = 0; i < 3; i++) {
    lms[i] = pow(10.0, n[3 * i] * l[0] + n[3 * i + 1] * l[1] + n[3 * i + 2] * l[2]);
    if (!isfinite(lms[i])) lms[i] = 0.0;
  }
  for (int i = 0; i < 3; i++) {
    double c = (m[3 * i] * lms[0] + m[3 * i + 1] * lms[1] + m[3 * i + 2] * lms[2]) * 255.0;
    c = c > 0.0 ? (c < 255.0 ? c : 255.0) : 0.0;
    double f = floor(c);
    dst[i] = (uchar)(f + (c - f >= 0.5 ? 1.0 : 0.0));
  }
}

#endif
