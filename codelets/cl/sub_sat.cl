/* Saturating difference: out = max(a - b, 0). */
__kernel void wsisa_sub_sat(__global const uchar *a, uint a_off, uint a_stride,
                            __global const uchar *b, uint b_off, uint b_stride,
                            __global uchar *out, uint out_off, uint out_stride,
                            int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  out[out_off + y * out_stride + x] =
      sub_sat(a[a_off + y * a_stride + x], b[b_off + y * b_stride + x]);
}
