/* Filter bank as a direct convolution: the kernel g2(x) g(y) + g(x) g2(y) of
 * codelets/cpu/filter_bank.c in two separable passes, outside pixels mirrored
 * as wsisa_cpu_reflect. `taps` holds g[0..2r] then g2[0..2r]. */
#pragma OPENCL FP_CONTRACT OFF

int reflect_index(int i, int n) {
  int period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

/* Along x: smooth = g * in, curved = g2 * in (dense width x height). */
__kernel void wsisa_filter_bank_rows(__global const uchar *in, uint in_off, uint in_stride,
                                     __constant float *taps, int radius,
                                     __global float *smooth, __global float *curved,
                                     int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const float *row = (__global const float *)(in + in_off + y * in_stride);
  __constant float *g2 = taps + 2 * radius + 1;
  float a = 0.0f, b = 0.0f;
  for (int i = -radius; i <= radius; i++) {
    float v = row[reflect_index(x + i, width)];
    a += taps[i + radius] * v;
    b += g2[i + radius] * v;
  }
  smooth[y * width + x] = a;
  curved[y * width + x] = b;
}

/* Along y: out = g2 * smooth + g * curved. */
__kernel void wsisa_filter_bank_cols(__global const float *smooth,
                                     __global const float *curved, __constant float *taps,
                                     int radius, __global uchar *out, uint out_off,
                                     uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __constant float *g2 = taps + 2 * radius + 1;
  float a = 0.0f, b = 0.0f;
  for (int j = -radius; j <= radius; j++) {
    int at = reflect_index(y + j, height) * width + x;
    a += g2[j + radius] * smooth[at];
    b += taps[j + radius] * curved[at];
  }
  ((__global float *)(out + out_off + y * out_stride))[x] = a + b;
}
