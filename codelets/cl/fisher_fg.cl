/* Fisher foreground: fg where (M2 - M1).(R, G, B, 1) > 0, exact in int (the
 * host passes M2 - M1 in thousandths; see codelets/cpu/fisher_fg.c). */
__kernel void wsisa_fisher_fg(__global const uchar *rgb, uint rgb_off, uint rgb_stride,
                              int4 d, __global uchar *mask, uint mask_off,
                              uint mask_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *p = rgb + rgb_off + y * rgb_stride + 3 * x;
  int s = d.x * p[0] + d.y * p[1] + d.z * p[2] + d.w;
  mask[mask_off + y * mask_stride + x] = s > 0 ? 255 : 0;
}
