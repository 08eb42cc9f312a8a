/* RGB -> Reinhard l-alpha-beta in double, the operations and order of
 * codelets/cpu/rgb2lab.c. `k` is the uploaded wsisa_reinhard (cpu.h). Without
 * fp64 the program is empty and the codelet keeps off this device. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define RGB2LMS 0
#define LMS2LAB 9
#define LMS_FLOOR 36

__kernel void wsisa_rgb2lab(__global const uchar *rgb, uint rgb_off, uint rgb_stride,
                            __constant double *k, __global uchar *lab, uint lab_off,
                            uint lab_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *p = rgb + rgb_off + y * rgb_stride + 3 * x;
  __global float *out = (__global float *)(lab + lab_off + y * lab_stride) + 3 * x;
  double r = p[0] / 255.0, g = p[1] / 255.0, b = p[2] / 255.0, lg[3];
  __constant double *m = k + RGB2LMS, *n = k + LMS2LAB;
  for (int i = 0; i < 3; i++) {
    double lms = m[3 * i] * r + m[3 * i + 1] * g + m[3 * i + 2] * b;
    lg[i] = log10(lms > k[LMS_FLOOR] ? lms : k[LMS_FLOOR]);
  }
  for (int i = 0; i < 3; i++)
    out[i] = (float)(n[3 * i] * lg[0] + n[3 * i + 1] * lg[1] + n[3 * i + 2] * lg[2]);
}

#endif
