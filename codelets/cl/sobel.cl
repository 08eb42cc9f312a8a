/* Sobel gradient magnitude, the operations and order of codelets/cpu/sobel.c;
 * outside pixels repeat the nearest edge pixel. */
#pragma OPENCL FP_CONTRACT OFF

__kernel void wsisa_sobel(__global const uchar *in, uint in_off, uint in_stride,
                          __global uchar *mag, uint mag_off, uint mag_stride, int width,
                          int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const float *up = (__global const float *)(in + in_off + (y > 0 ? y - 1 : 0) * in_stride);
  __global const float *mid = (__global const float *)(in + in_off + y * in_stride);
  __global const float *down =
      (__global const float *)(in + in_off + (y + 1 < height ? y + 1 : height - 1) * in_stride);
  int l = x > 0 ? x - 1 : 0, r = x + 1 < width ? x + 1 : width - 1;
  float gx = ((up[r] - up[l]) + 2.0f * (mid[r] - mid[l])) + (down[r] - down[l]);
  float gy = ((down[l] - up[l]) + 2.0f * (down[x] - up[x])) + (down[r] - up[r]);
  ((__global float *)(mag + mag_off + y * mag_stride))[x] = sqrt(gx * gx + gy * gy);
}
