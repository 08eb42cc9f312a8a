/* Fill holes, u8 0/255: reconstruct the background from its pixels on the
 * image border (reconstruct.cl's sweeps on the 0/255 background), then every
 * pixel the background did not reach is foreground. Matrices come as
 * (buffer, byte offset, byte stride). */
__kernel void wsisa_fill_holes_init(__global const uchar *mask, uint m_off, uint m_stride,
                                    __global uchar *background, uint b_off, uint b_stride,
                                    __global uchar *out, uint o_off, uint o_stride,
                                    int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int border = x == 0 || y == 0 || x == width - 1 || y == height - 1;
  uchar bg = mask[m_off + (size_t)y * m_stride + x] ? 0 : 255;
  background[b_off + (size_t)y * b_stride + x] = bg;
  out[o_off + (size_t)y * o_stride + x] = border ? bg : 0;
}

/* Reached background (255) -> 0, the rest -> 255. */
__kernel void wsisa_fill_holes_finish(__global uchar *out, uint o_off, uint o_stride,
                                      int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  out[o_off + (size_t)y * o_stride + x] = 255 - out[o_off + (size_t)y * o_stride + x];
}
