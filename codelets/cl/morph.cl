/* Erosion and dilation of u8 images by OpenCV's elliptic element in two
 * passes: the element's distinct centred row segments, then their min (max)
 * over the element's rows. Matrices come as (buffer, byte offset, byte
 * stride); outside pixels are neutral (255 for erosion, 0 for dilation). */

#define PICK(a, b) (dilate ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))

/* Pass 1: the segments of half-width lens[0] < lens[1] < ... around each
 * pixel, grown one pixel each side at a time; plane j of `segs` (width x
 * height, packed) holds half-width lens[j]. */
__kernel void wsisa_morph_segments(__global const uchar *in, uint in_off, uint in_stride,
                                   __global uchar *segs, __constant int *lens, int nlen,
                                   int dilate, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const uchar *row = in + in_off + (size_t)y * in_stride;
  const uchar neutral = dilate ? 0 : 255;
  const size_t plane = (size_t)width * height, at = (size_t)y * width + x;
  uchar acc = row[x];
  int j = 0;
  for (int l = 0; j < nlen; l++) {
    if (l > 0) {
      uchar a = x - l >= 0 ? row[x - l] : neutral;
      uchar b = x + l < width ? row[x + l] : neutral;
      acc = PICK(acc, PICK(a, b));
    }
    if (l == lens[j]) segs[j++ * plane + at] = acc;
  }
}

/* Pass 2: element row dy (-r..r) uses plane slot[dy + r]; rows outside the
 * image are left out. */
__kernel void wsisa_morph_rows(__global const uchar *segs, __constant int *slot, int r,
                               int dilate, __global uchar *out, uint out_off,
                               uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  const size_t plane = (size_t)width * height;
  uchar acc = dilate ? 0 : 255;
  int y0 = max(y - r, 0), y1 = min(y + r, height - 1);
  for (int sy = y0; sy <= y1; sy++)
    acc = PICK(acc, segs[slot[sy - y + r] * plane + (size_t)sy * width + x]);
  out[out_off + (size_t)y * out_stride + x] = acc;
}
