/* Fill holes, u8 0/255: the state image starts with the foreground closed
 * (255), the background on the image border reached (0) and the rest of the
 * background open (1); bin_reconstruct.cl's flood kernels then spread "reached"
 * through the background, and what stays open is a hole. Matrices come as
 * (buffer, byte offset, byte stride). */
__kernel void wsisa_fill_holes_init(__global const uchar *mask, uint m_off, uint m_stride,
                                    __global uchar *out, uint o_off, uint o_stride,
                                    int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int border = x == 0 || y == 0 || x == width - 1 || y == height - 1;
  out[o_off + (size_t)y * o_stride + x] =
      mask[m_off + (size_t)y * m_stride + x] ? 255 : border ? 0 : 1;
}
