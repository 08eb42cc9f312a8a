/* Marker watershed: the flooding rule of codelets/cpu/watershed.c, whose
 * regions never touch inside the mask, not even at a corner. init: markers,
 * a marker meeting an earlier one starting as a line. The unknown pixels
 * (unlabelled at the start) fall into parts, 8-connected to one another,
 * each flooding alone to the labels of one flood of the whole image (the
 * CPU kernel's reasoning): union, count, place and list find them by
 * union-find and list each part's pixels together; flood gives each part to
 * one work-group, which runs the rule's levels and waves with barriers
 * between the steps, no host round trip. finish: labels, and mask_out = the
 * mask's pixels in a region. Images are (buffer, byte offset, byte stride);
 * lab, next and the other work arrays are dense width x height, lists hold
 * pixel indices. Eight launches in all, whatever the image. */

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
                                   __global int *next, __global int *parent, int width,
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
  parent[i] = i;
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

/* ---- parts: the unknown pixels 8-connected to one another ---------------- */

/* Union-find over pixel indices, parent[i] <= i: a part's root is its first
 * pixel in raster order, whatever order the links happen in. */
int find_root(__global int *parent, int p) {
  int q;
  while ((q = parent[p]) != p) p = q;
  return p;
}

void unite(__global int *parent, int a, int b) {
  for (;;) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a == b) return;
    if (a < b) {
      int t = a;
      a = b;
      b = t;
    }
    int old = atomic_min(&parent[a], b);
    if (old == a) return;
    a = old;
  }
}

/* Each unknown pixel joins the unknown ones among its earlier neighbours. */
__kernel void wsisa_watershed_union(__global const int *lab, __global int *parent, int width,
                                    int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  if (lab[i] != 0) return;
  if (x > 0 && lab[i - 1] == 0) unite(parent, i, i - 1);
  if (y == 0) return;
  if (x > 0 && lab[i - width - 1] == 0) unite(parent, i, i - width - 1);
  if (lab[i - width] == 0) unite(parent, i, i - width);
  if (x + 1 < width && lab[i - width + 1] == 0) unite(parent, i, i - width + 1);
}

/* Each unknown pixel points at its root, which counts its part's pixels. */
__kernel void wsisa_watershed_count(__global const int *lab, __global int *parent,
                                    __global int *size, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  if (lab[i] != 0) return;
  int r = find_root(parent, i);
  parent[i] = r;
  atomic_inc(&size[r]);
}

/* Each root takes a place for its part in the pixel lists: parts[2k] its
 * start, parts[2k + 1] its size; size[root] becomes the start, where
 * wsisa_watershed_list appends. counters: parts, pixels placed. */
__kernel void wsisa_watershed_place(__global const int *lab, __global const int *parent,
                                    __global int *size, __global int *parts,
                                    __global int *counters, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  if (lab[i] != 0 || parent[i] != i) return;
  int n = size[i], start = atomic_add(&counters[1], n), k = atomic_inc(&counters[0]);
  parts[2 * k] = start;
  parts[2 * k + 1] = n;
  size[i] = start;
}

__kernel void wsisa_watershed_list(__global const int *lab, __global const int *parent,
                                   __global int *size, __global int *pixels, int width,
                                   int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  if (lab[i] == 0) pixels[atomic_inc(&size[parent[i]])] = i;
}

/* ---- the flood: one work-group per part at a time ------------------------- */

/* Lowest relief between unknown pixel (x, y) and a labelled 4-neighbour (256:
 * none). */
int lowest_relief(image_arg im, __global const int *lab, int x, int y, int width,
                  int height) {
  uint c = colour(im, x, y);
  int best = 256;
  for (int k = 0; k < 4; k++) {
    int qx = x + DX[k], qy = y + DY[k];
    if (qx < 0 || qy < 0 || qx >= width || qy >= height || lab[qy * width + qx] <= 0)
      continue;
    best = min(best, relief(c, colour(im, qx, qy)));
  }
  return best;
}

/* The rule's second step for wave pixel i holding d in next (the labels before
 * the wave plus the wave's first step: every labelled neighbour from before
 * the wave already carries d, so another label to the left or above was taken
 * in this wave). */
int settled(image_arg im, __global const int *next, int i, int x, int y, int width,
            int height) {
  int d = next[i];
  if (d <= 0) return d;
  int left = x > 0 ? next[i - 1] : 0, up = y > 0 ? next[i - width] : 0;
  if ((left > 0 && left != d) || (up > 0 && up != d) ||
      (on(im, x, y) && (diagonal_other(im, next, x, y, -1, -1, d, width, height) ||
                        diagonal_other(im, next, x, y, 1, -1, d, width, height))))
    return LINE;
  return d;
}

/* Work-groups take parts in turn (counters[2], or counters[3] when big) until
 * none is left, each flooding the parts of its launch's class: of at least
 * big_from pixels when big, of fewer otherwise (a launch of small work-groups
 * for the many small parts, one of the largest work-groups the device runs
 * for the few large ones, whose steps each have many pixels). A part's
 * pixels never meet another part's, so a work-group floods its part alone,
 * level by level and wave by wave, barriers between the steps. It keeps the
 * part's front: its unknown pixels with a labelled 4-neighbour, each listed
 * once (front[i] set when listed), as only they can be reached at any level.
 * The front starts as the pixels of the part next to a label; per level, the
 * front's still unknown pixels are compacted (pixels <-> spare) while their
 * lowest relief to a label gives the level; the first wave is every front
 * pixel the rule reaches at it; then per wave, over the wave's list only
 * (wave <-> queue): decide into next, settle into lab while listing once
 * (stamp) the unknown pixels the new labels reach at this level and adding
 * to the front those they reach only higher up, bring next up to date. A
 * level costs the front, not the part: the part's inner pixels are not swept
 * again at every level. */
__kernel void wsisa_watershed_flood(__global const uchar *rgb, uint rgb_off,
                                    uint rgb_stride, __global const uchar *mask,
                                    uint mask_off, uint mask_stride, __global int *lab,
                                    __global int *next, __global int *stamp,
                                    __global const int *parts, __global int *counters,
                                    __global int *pixels, __global int *spare,
                                    __global int *wave_list, __global int *queue_list,
                                    __global int *front, int big_from, int big,
                                    int width, int height) {
  __local int part, lowest, count, fronts;
  const int lid = get_local_id(0), group = get_local_size(0);
  image_arg im = {rgb, rgb_off, rgb_stride, mask, mask_off, mask_stride};
  const int nparts = counters[0];
  for (;;) {
    /* every item has read the last part before the next one is taken */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) part = atomic_inc(&counters[2 + big]);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int p = part;
    if (p >= nparts) return;
    const int start = parts[2 * p];
    const int size = parts[2 * p + 1];
    if ((size >= big_from) != big) continue;
    __global int *todo = spare + start, *other = pixels + start;
    __global int *wave = wave_list + start, *queue = queue_list + start;
    if (lid == 0) fronts = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the front at the start: the part's pixels next to a label */
    for (int k = lid; k < size; k += group) {
      int i = other[k];
      stamp[i] = -1;
      int in = lowest_relief(im, lab, i % width, i / width, width, height) < 256;
      front[i] = in;
      if (in) todo[atomic_inc(&fronts)] = i;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    int n = fronts;
    int w = 0;
    for (;;) {
      if (lid == 0) {
        lowest = 256;
        count = 0;
      }
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      for (int k = lid; k < n; k += group) {
        int i = todo[k];
        if (lab[i] != 0) continue;
        other[atomic_inc(&count)] = i;
        int best = lowest_relief(im, lab, i % width, i / width, width, height);
        if (best < 256) atomic_min(&lowest, best);
      }
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      const int level = lowest;
      n = count;
      __global int *t = todo;
      todo = other;
      other = t;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (level >= 256) break;
      if (lid == 0) {
        count = 0;
        fronts = n;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int k = lid; k < n; k += group) {
        int i = todo[k];
        if (decide(im, lab, i % width, i / width, level, width, height) != 0)
          wave[atomic_inc(&count)] = i;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      int m = count;
      barrier(CLK_LOCAL_MEM_FENCE);
      while (m > 0) {
        if (lid == 0) count = 0;
        for (int k = lid; k < m; k += group) {
          int i = wave[k];
          next[i] = decide(im, lab, i % width, i / width, level, width, height);
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (int k = lid; k < m; k += group) {
          int i = wave[k], x = i % width, y = i / width;
          int d = settled(im, next, i, x, y, width, height);
          lab[i] = d;
          if (d <= 0) continue;
          uint c = colour(im, x, y);
          for (int e = 0; e < 4; e++) {
            int qx = x + DX[e], qy = y + DY[e];
            if (qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
            int q = qy * width + qx;
            if (next[q] != 0) continue;
            if (relief(c, colour(im, qx, qy)) > level) {
              if (atomic_xchg(&front[q], 1) == 0) todo[atomic_inc(&fronts)] = q;
            } else if (atomic_xchg(&stamp[q], w) != w) {
              queue[atomic_inc(&count)] = q;
            }
          }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (int k = lid; k < m; k += group) next[wave[k]] = lab[wave[k]];
        m = count;
        __global int *s = wave;
        wave = queue;
        queue = s;
        w++;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      }
      n = fronts;
    }
  }
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
