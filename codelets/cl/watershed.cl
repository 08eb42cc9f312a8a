/* Marker watershed by synchronous waves: the flooding rule of
 * codelets/cpu/watershed.c, one launch per wave (wave: decide from the state
 * before it into `next`; resolve: same-wave meetings become lines, back into
 * `lab`), then a jump to the lowest relief still on the frontier. Images are
 * (buffer, byte offset, byte stride); lab/next are dense width x height. */

#define LINE (-1)

typedef struct image_arg {
  __global const uchar *rgb;
  uint rgb_off, rgb_stride;
  __global const uchar *mask;
  uint mask_off, mask_stride;
} image_arg;

uint colour(image_arg im, int x, int y) {
  __global const uchar *px = im.rgb + im.rgb_off + y * im.rgb_stride + 3 * x;
  uint on = im.mask[im.mask_off + y * im.mask_stride + x] != 0;
  return (px[0] | (uint)px[1] << 8 | (uint)px[2] << 16) & (0u - on);
}

int relief(uint a, uint b) {
  int m = 0;
  for (int shift = 0; shift < 24; shift += 8) {
    int d = abs((int)(a >> shift & 0xFF) - (int)(b >> shift & 0xFF));
    m = max(m, d);
  }
  return m;
}

__constant int DX[4] = {-1, 1, 0, 0};
__constant int DY[4] = {0, 0, -1, 1};

__kernel void wsisa_watershed_init(__global const uchar *markers, uint markers_off,
                                   uint markers_stride, __global int *lab, int width,
                                   int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int m = *((__global const int *)(markers + markers_off + y * markers_stride) + x);
  lab[y * width + x] = m > 0 ? m : 0;
}

__kernel void wsisa_watershed_wave(__global const uchar *rgb, uint rgb_off,
                                   uint rgb_stride, __global const uchar *mask,
                                   uint mask_off, uint mask_stride,
                                   __global const int *lab, __global int *next,
                                   int level, __global int *changed, int width,
                                   int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x, now = lab[i];
  if (now != 0) {
    next[i] = now;
    return;
  }
  image_arg im = {rgb, rgb_off, rgb_stride, mask, mask_off, mask_stride};
  uint c = colour(im, x, y);
  int reached = 0, touching = 0;
  for (int k = 0; k < 4; k++) {
    int qx = x + DX[k], qy = y + DY[k];
    if (qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
    int l = lab[qy * width + qx];
    if (l <= 0) continue;
    if (touching == 0) touching = l;
    else if (l != touching) touching = LINE;
    if (relief(c, colour(im, qx, qy)) > level) continue;
    if (reached == 0) reached = l;
    else if (l != reached) reached = LINE;
  }
  int d = reached > 0 && touching != reached ? LINE : reached;
  next[i] = d;
  if (d) *changed = 1;
}

__kernel void wsisa_watershed_resolve(__global int *lab, __global const int *next,
                                      int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x, d = next[i];
  if (lab[i] == 0 && d > 0) {
    int left = x > 0 ? next[i - 1] : 0, up = y > 0 ? next[i - width] : 0;
    if ((left > 0 && left != d) || (up > 0 && up != d)) d = LINE;
  }
  lab[i] = d;
}

/* Lowest relief between an unlabelled pixel and a labelled neighbour. */
__kernel void wsisa_watershed_frontier(__global const uchar *rgb, uint rgb_off,
                                       uint rgb_stride, __global const uchar *mask,
                                       uint mask_off, uint mask_stride,
                                       __global const int *lab, __global int *lowest,
                                       int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height || lab[y * width + x] != 0) return;
  image_arg im = {rgb, rgb_off, rgb_stride, mask, mask_off, mask_stride};
  uint c = colour(im, x, y);
  int best = 256;
  for (int k = 0; k < 4; k++) {
    int qx = x + DX[k], qy = y + DY[k];
    if (qx < 0 || qy < 0 || qx >= width || qy >= height || lab[qy * width + qx] <= 0)
      continue;
    best = min(best, relief(c, colour(im, qx, qy)));
  }
  if (best < 256) atomic_min(lowest, best);
}

__kernel void wsisa_watershed_finish(__global const int *lab, __global const uchar *mask,
                                     uint mask_off, uint mask_stride,
                                     __global uchar *labels, uint labels_off,
                                     uint labels_stride, __global uchar *mask_out,
                                     uint out_off, uint out_stride, int width,
                                     int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = lab[y * width + x];
  *((__global int *)(labels + labels_off + y * labels_stride) + x) = l;
  mask_out[out_off + y * out_stride + x] =
      mask[mask_off + y * mask_stride + x] && l != LINE ? 255 : 0;
}
