/* Background: b > B & g > G & r > R, strict. */
__kernel void wsisa_background(__global const uchar *rgb, uint rgb_off, uint rgb_stride,
                               int blue, int green, int red, __global uchar *mask,
                               uint mask_off, uint mask_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *p = rgb + rgb_off + y * rgb_stride + 3 * x;
  mask[mask_off + y * mask_stride + x] =
      p[0] > red && p[1] > green && p[2] > blue ? 255 : 0;
}
