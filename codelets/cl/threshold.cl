/* Grey threshold: mask = grey > t. */
__kernel void wsisa_threshold(__global const uchar *grey, uint grey_off, uint grey_stride,
                              int t, __global uchar *mask, uint mask_off,
                              uint mask_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  mask[mask_off + y * mask_stride + x] = grey[grey_off + y * grey_stride + x] > t ? 255 : 0;
}
