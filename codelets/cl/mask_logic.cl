/* Binary mask logic; op: 0 AND, 1 OR, 2 ANDNOT (a & !b). Non-zero is on. */
__kernel void wsisa_mask_logic(__global const uchar *a, uint a_off, uint a_stride,
                               __global const uchar *b, uint b_off, uint b_stride, int op,
                               __global uchar *out, uint out_off, uint out_stride,
                               int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int on_a = a[a_off + y * a_stride + x] != 0, on_b = b[b_off + y * b_stride + x] != 0;
  int on = op == 0 ? on_a && on_b : op == 1 ? on_a || on_b : on_a && !on_b;
  out[out_off + y * out_stride + x] = on ? 255 : 0;
}
