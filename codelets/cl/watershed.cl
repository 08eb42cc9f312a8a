/* Marker watershed by synchronous waves: the flooding rule of
 * codelets/cpu/watershed.c, whose regions never touch inside the mask, not
 * even at a corner. init: markers, a marker meeting an earlier one starting
 * as a line. Per level: frontier finds the lowest relief still between a
 * labelled and an unlabelled pixel, gather lists the first wave's pixels; per
 * wave, over that list only: decide (from the state before the wave, into
 * `next`), settle (same-wave meetings become lines, into `lab`; the pixels
 * the new labels reach at this level make the next list). finish: labels, and
 * mask_out = the mask's pixels in a region. Images are (buffer, byte offset,
 * byte stride); lab, next and stamp are dense width x height, lists hold
 * pixel indices. */

#define LINE (-1)

typedef struct image_arg {
  __global const uchar *rgb;
  uint rgb_off, rgb_stride;
  __global const uchar *mask;
  uint mask_off, mask_stride;
} image_arg;

int on(image_arg im, int x, int y) { return im.mask[im.mask_off + y * im.mask_stride + x] != 0; }

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

#define MARKER(x, y) (*((__global const int *)(markers + markers_off + (y) * markers_stride) + (x)))

/* Is v a marker other than d? */
int other_marker(int v, int d) { return v > 0 && v != d; }

/* Markers are labels, unless the mask holds the pixel and an earlier
 * neighbour holding another marker: then a line. */
__kernel void wsisa_watershed_init(__global const uchar *markers, uint markers_off,
                                   uint markers_stride, __global const uchar *mask,
                                   uint mask_off, uint mask_stride, __global int *lab,
                                   __global int *next, __global int *stamp, int width,
                                   int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  image_arg im = {0, 0, 0, mask, mask_off, mask_stride};
  int m = MARKER(x, y), l = m > 0 ? m : 0;
  if (m > 0 && on(im, x, y) &&
      ((x > 0 && other_marker(MARKER(x - 1, y), m) && on(im, x - 1, y)) ||
       (y > 0 && ((x > 0 && other_marker(MARKER(x - 1, y - 1), m) && on(im, x - 1, y - 1)) ||
                  (other_marker(MARKER(x, y - 1), m) && on(im, x, y - 1)) ||
                  (x + 1 < width && other_marker(MARKER(x + 1, y - 1), m) &&
                   on(im, x + 1, y - 1))))))
    l = LINE;
  int i = y * width + x;
  lab[i] = next[i] = l;
  stamp[i] = -1;
}

/* Does labels image l (dense) hold at diagonal neighbour (x + dx, y + dy) of
 * a pixel of the mask another label than d, the mask holding it too? */
int diagonal_other(image_arg im, __global const int *l, int x, int y, int dx, int dy, int d,
                   int width, int height) {
  int qx = x + dx, qy = y + dy;
  if (qx < 0 || qy < 0 || qx >= width || qy >= height) return 0;
  int v = l[qy * width + qx];
  return v > 0 && v != d && on(im, qx, qy);
}

/* The rule for unlabelled pixel (x, y) at `level`, from lab alone: 4-neighbours
 * reach it; they, and in the mask its diagonal neighbours in the mask, touch it. */
int decide(image_arg im, __global const int *lab, int x, int y, int level, int width,
           int height) {
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
  if (reached <= 0) return reached;
  if (touching != reached) return LINE;
  if (!on(im, x, y)) return reached;
  for (int dy = -1; dy <= 1; dy += 2)
    for (int dx = -1; dx <= 1; dx += 2)
      if (diagonal_other(im, lab, x, y, dx, dy, reached, width, height)) return LINE;
  return reached;
}

/* The first wave of a level: every unlabelled pixel the rule reaches. */
__kernel void wsisa_watershed_gather(__global const uchar *rgb, uint rgb_off,
                                     uint rgb_stride, __global const uchar *mask,
                                     uint mask_off, uint mask_stride,
                                     __global const int *lab, int level,
                                     __global int *list, __global int *count,
                                     __global int *stamp, int wave, int width,
                                     int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height || lab[y * width + x] != 0) return;
  image_arg im = {rgb, rgb_off, rgb_stride, mask, mask_off, mask_stride};
  if (decide(im, lab, x, y, level, width, height) == 0) return;
  int i = y * width + x;
  stamp[i] = wave;
  list[atomic_inc(count)] = i;
}

/* The wave's first step into next. The same launch settles next for the
 * previous wave's pixels (their final labels) and clears the count the
 * coming settle appends to. */
__kernel void wsisa_watershed_decide(__global const uchar *rgb, uint rgb_off,
                                     uint rgb_stride, __global const uchar *mask,
                                     uint mask_off, uint mask_stride,
                                     __global const int *lab, __global int *next,
                                     int level, __global const int *list, int n,
                                     __global const int *previous, int n_previous,
                                     __global int *count, int width, int height) {
  int k = get_global_id(0);
  if (k == 0) *count = 0;
  if (k < n_previous) next[previous[k]] = lab[previous[k]];
  if (k >= n) return;
  int i = list[k];
  image_arg im = {rgb, rgb_off, rgb_stride, mask, mask_off, mask_stride};
  next[i] = decide(im, lab, i % width, i / width, level, width, height);
}

/* The rule's second step, then the next wave. next holds the labels before
 * the wave plus the wave's first step: every labelled neighbour from before
 * the wave already carries d, so another label to the left or above was
 * taken in this wave. A pixel that keeps a label reaches its unlabelled
 * neighbours (next == 0) over edges of relief <= level; each is listed once. */
__kernel void wsisa_watershed_settle(__global const uchar *rgb, uint rgb_off,
                                     uint rgb_stride, __global const uchar *mask,
                                     uint mask_off, uint mask_stride,
                                     __global int *lab, __global const int *next,
                                     int level, __global const int *list, int n,
                                     __global int *out, __global int *count,
                                     __global int *stamp, int wave, int width,
                                     int height) {
  int k = get_global_id(0);
  if (k >= n) return;
  int i = list[k], x = i % width, y = i / width, d = next[i];
  image_arg im = {rgb, rgb_off, rgb_stride, mask, mask_off, mask_stride};
  if (d > 0) {
    int left = x > 0 ? next[i - 1] : 0, up = y > 0 ? next[i - width] : 0;
    if ((left > 0 && left != d) || (up > 0 && up != d) ||
        (on(im, x, y) && (diagonal_other(im, next, x, y, -1, -1, d, width, height) ||
                          diagonal_other(im, next, x, y, 1, -1, d, width, height))))
      d = LINE;
  }
  lab[i] = d;
  if (d <= 0) return;
  uint c = colour(im, x, y);
  for (int e = 0; e < 4; e++) {
    int qx = x + DX[e], qy = y + DY[e];
    if (qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
    int q = qy * width + qx;
    if (next[q] != 0 || relief(c, colour(im, qx, qy)) > level) continue;
    if (atomic_xchg(&stamp[q], wave) != wave) out[atomic_inc(count)] = q;
  }
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
  mask_out[out_off + y * out_stride + x] = mask[mask_off + y * mask_stride + x] && l > 0 ? 255 : 0;
}
