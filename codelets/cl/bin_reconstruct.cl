/* Binary reconstruction, u8 0/255: the grey reconstruction of 0/255 images
 * (reconstruct.cl's sweeps) is the binary one, so this only binarizes the
 * inputs: mask -> 0/255 scratch, seed AND mask -> 0/255 marker in out.
 * Matrices come as (buffer, byte offset, byte stride). */
__kernel void wsisa_bin_reconstruct_init(__global const uchar *seed, uint s_off,
                                         uint s_stride, __global const uchar *mask,
                                         uint m_off, uint m_stride, __global uchar *bin,
                                         uint b_off, uint b_stride, __global uchar *out,
                                         uint o_off, uint o_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  uchar m = mask[m_off + (size_t)y * m_stride + x] ? 255 : 0;
  bin[b_off + (size_t)y * b_stride + x] = m;
  out[o_off + (size_t)y * o_stride + x] = seed[s_off + (size_t)y * s_stride + x] ? m : 0;
}
