/* Channel invert: out = 255 - in[channel]. Matrices come as (buffer, byte
 * offset, byte stride); the launch appends (width, height). */
__kernel void wsisa_invert(__global const uchar *in, uint in_off, uint in_stride,
                           int channels, int channel, __global uchar *out,
                           uint out_off, uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  uchar v = in[in_off + y * in_stride + x * channels + channel];
  out[out_off + y * out_stride + x] = (uchar)(255 - v);
}
