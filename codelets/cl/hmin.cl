/* h-minima transform, f32: reconstruction by erosion of in + h over in, run
 * as the reconstruction by dilation of -(in + h) under -in (reconstruct.cl's
 * kernels), then negated back. Matrices come as (buffer, byte offset, byte
 * stride). */

#define AT(buf, off, stride, x, y) \
  (*(__global float *)((__global uchar *)(buf) + (off) + (size_t)(y) * (stride) + (size_t)(x) * 4))

/* mask = -in, J = -(in + h): exact negations, one rounded add as on the CPU. */
__kernel void wsisa_hmin_init(__global const float *in, uint in_off, uint in_stride, float h,
                              __global float *mask, uint k_off, uint k_stride,
                              __global float *J, uint j_off, uint j_stride, int width,
                              int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float v = AT(in, in_off, in_stride, x, y);
  AT(mask, k_off, k_stride, x, y) = -v;
  AT(J, j_off, j_stride, x, y) = -(v + h);
}

/* 0 - J rather than -J: no -0.0 in the result, as on the CPU. */
__kernel void wsisa_hmin_finish(__global float *J, uint j_off, uint j_stride, int width,
                                int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  AT(J, j_off, j_stride, x, y) = 0.0f - AT(J, j_off, j_stride, x, y);
}
