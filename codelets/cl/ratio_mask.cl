/* Ratio mask through the host's table (codelets/cpu/ratio_mask.c): on where
 * the numerator reaches the least passing value for its denominator. */
__kernel void wsisa_ratio_mask(__global const uchar *img, uint img_off, uint img_stride,
                               int channels, int num_channel, int den_channel,
                               __global const ushort *first, __global uchar *mask,
                               uint mask_off, uint mask_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *p = img + img_off + y * img_stride + channels * x;
  mask[mask_off + y * mask_stride + x] = p[num_channel] >= first[p[den_channel]] ? 255 : 0;
}
