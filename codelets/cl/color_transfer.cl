/* Reinhard colour transfer of the foreground in double, the operations and
 * order of codelets/cpu/color_transfer.c. `k` is the uploaded wsisa_reinhard. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MEAN_TARGET 37
#define STD_TARGET 40

__kernel void wsisa_color_transfer(__global const uchar *lab, uint lab_off,
                                   uint lab_stride, __global const uchar *mask,
                                   uint mask_off, uint mask_stride,
                                   __global const uchar *stats_base, uint stats_off,
                                   __constant double *k, __global uchar *out,
                                   uint out_off, uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const float *src = (__global const float *)(lab + lab_off + y * lab_stride) + 3 * x;
  __global float *dst = (__global float *)(out + out_off + y * out_stride) + 3 * x;
  __global const double *stats = (__global const double *)(stats_base + stats_off);
  int on = mask[mask_off + y * mask_stride + x] != 0;
  for (int c = 0; c < 3; c++) {
    double mean = stats[1 + c], std = stats[4 + c];
    if (on && stats[0] > 0 && std > 0)
      dst[c] = (float)((src[c] - mean) * k[STD_TARGET + c] / std + k[MEAN_TARGET + c]);
    else
      dst[c] = src[c];
  }
}

#endif
