/* The per-nucleus reduction (codelets/cpu/nucleus_features.c has the
 * definitions), reduced to the same wsisa_nf_sums and per-channel raw values
 * as the CPU kernel so the host finishes both rows with one function. Work is
 * split by image row (one work-item owns every (object, row) entry of its row:
 * no atomics but the y extents) and by object (hull, median). Integers are
 * exact in any order; channel values are gathered into each object's slice in
 * raster order, so the double sums and the selection see the very sequence
 * the CPU sees. Needs fp64; without it the program is empty and the codelet
 * keeps off this device. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define LABEL(base, off, stride, x, y) \
  (((__global const int *)((base) + (off) + (size_t)(y) * (stride)))[x])

/* wsisa_nf_sums as 14 longs */
#define S_AREA 0
#define S_SX 1
#define S_SY 2
#define S_SXX 3
#define S_SXY 4
#define S_SYY 5
#define S_X0 6
#define S_Y0 7
#define S_X1 8
#define S_Y1 9
#define S_PERIM 10
#define S_CONVEX 13
#define S_N 14
/* per (object, row) ints: pixel count, first x, last x, perimeter classes */
#define R_COUNT 0
#define R_MIN 1
#define R_MAX 2
#define R_PERIM 3
#define R_N 6

/* Rows y0..y1 of every object (lo starts at INT_MAX, hi at -1); bad is raised
 * by a label outside 0..*n. Atomics once per run of equal labels. */
__kernel void wsisa_nf_extent(__global const uchar *l, uint l_off, uint l_stride,
                              __global const int *count, __global int *lo, __global int *hi,
                              __global int *bad, int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  const int n = *count;
  int prev = 0;
  for (int x = 0; x < width; x++) {
    int id = LABEL(l, l_off, l_stride, x, y);
    if (id == prev) continue;
    prev = id;
    if (id == 0) continue;
    if (id < 0 || id > n) {
      *bad = 1;
      continue;
    }
    atomic_min(&lo[id - 1], y);
    atomic_max(&hi[id - 1], y);
  }
}

static int label_or_0(__global const uchar *l, uint l_off, uint l_stride, int x, int y,
                      int width, int height) {
  if (x < 0 || y < 0 || x >= width || y >= height) return 0;
  return LABEL(l, l_off, l_stride, x, y);
}

/* Object pixels with a 4-neighbour outside the object (pixels outside the
 * image do not exist). */
__kernel void wsisa_nf_border(__global const uchar *l, uint l_off, uint l_stride,
                              __global uchar *border, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int id = LABEL(l, l_off, l_stride, x, y);
  border[(size_t)y * width + x] =
      id && (label_or_0(l, l_off, l_stride, x - 1, y, width, height) != id ||
             label_or_0(l, l_off, l_stride, x + 1, y, width, height) != id ||
             label_or_0(l, l_off, l_stride, x, y - 1, width, height) != id ||
             label_or_0(l, l_off, l_stride, x, y + 1, width, height) != id);
}

/* skimage.measure.perimeter's weight classes, as perimeter_class on the CPU */
static int perimeter_class(int code) {
  switch (code) {
    case 5: case 7: case 15: case 17: case 25: case 27: return 0;
    case 21: case 33: return 1;
    case 13: case 23: return 2;
    default: return -1;
  }
}

/* The (object, row) entry of object `id` on row y. */
static size_t entry(__global const int *first_row, __global const int *lo, int id, int y) {
  return (size_t)first_row[id - 1] + (size_t)(y - lo[id - 1]);
}

/* One work-item per row: each object's pixel count, extremes, sum of x and x^2
 * and perimeter classes on that row (entries start as 0, INT_MAX, -1, 0...). */
__kernel void wsisa_nf_rows(__global const uchar *l, uint l_off, uint l_stride,
                            __global const uchar *border, __global const int *first_row,
                            __global const int *lo, __global int *ri, __global long *rl,
                            int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  for (int x = 0; x < width; x++) {
    int id = LABEL(l, l_off, l_stride, x, y);
    if (!id) continue;
    size_t r = entry(first_row, lo, id, y);
    __global int *e = ri + R_N * r;
    e[R_COUNT]++;
    e[R_MIN] = min(e[R_MIN], x);
    e[R_MAX] = max(e[R_MAX], x);
    rl[2 * r] += x;
    rl[2 * r + 1] += (long)x * x;
    if (!border[(size_t)y * width + x]) continue;
    int code = 1;
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        int nx = x + dx, ny = y + dy;
        if ((!dx && !dy) || nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
        if (border[(size_t)ny * width + nx] && LABEL(l, l_off, l_stride, nx, ny) == id)
          code += dx && dy ? 10 : 2;
      }
    int cls = perimeter_class(code);
    if (cls >= 0) e[R_PERIM + cls]++;
  }
}

/* One work-item per object: its sums from its rows, and each row's offset in
 * the object's slice of gathered values. */
__kernel void wsisa_nf_objects(__global const int *first_row, __global const int *lo,
                               __global const int *hi, __global const int *ri,
                               __global const long *rl, __global int *roff,
                               __global long *sums, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  __global long *s = sums + (size_t)S_N * i;
  long area = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, p0 = 0, p1 = 0, p2 = 0;
  int x0 = INT_MAX, x1 = -1;
  for (int y = lo[i]; y <= hi[i]; y++) {
    size_t r = (size_t)first_row[i] + (size_t)(y - lo[i]);
    __global const int *e = ri + R_N * r;
    long c = e[R_COUNT];
    roff[r] = (int)area;
    area += c;
    sx += rl[2 * r];
    sxx += rl[2 * r + 1];
    sy += c * y;
    sxy += (long)y * rl[2 * r];
    syy += c * y * y;
    x0 = min(x0, e[R_MIN]);
    x1 = max(x1, e[R_MAX]);
    p0 += e[R_PERIM];
    p1 += e[R_PERIM + 1];
    p2 += e[R_PERIM + 2];
  }
  s[S_AREA] = area;
  s[S_SX] = sx;
  s[S_SY] = sy;
  s[S_SXX] = sxx;
  s[S_SXY] = sxy;
  s[S_SYY] = syy;
  s[S_X0] = area ? x0 : INT_MAX;
  s[S_Y0] = area ? lo[i] : INT_MAX;
  s[S_X1] = area ? x1 : -1;
  s[S_Y1] = area ? hi[i] : -1;
  s[S_PERIM] = p0;
  s[S_PERIM + 1] = p1;
  s[S_PERIM + 2] = p2;
  s[S_CONVEX] = 0;
}

/* One work-item per row: the raster index of every object pixel, at the next
 * place of its object's slice (roff is the running fill of (object, row)). */
__kernel void wsisa_nf_scatter(__global const uchar *l, uint l_off, uint l_stride,
                               __global const int *first_row, __global const int *lo,
                               __global const int *first_value, __global int *roff,
                               __global int *index, int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  for (int x = 0; x < width; x++) {
    int id = LABEL(l, l_off, l_stride, x, y);
    if (!id) continue;
    size_t r = entry(first_row, lo, id, y);
    index[first_value[id - 1] + roff[r]++] = y * width + x;
  }
}

__kernel void wsisa_nf_gather(__global const uchar *c, uint c_off, uint c_stride,
                              __global const int *index, __global float *values, int count,
                              int width) {
  int k = get_global_id(0);
  if (k >= count) return;
  int p = index[k];
  values[k] = ((__global const float *)(c + c_off + (size_t)(p / width) * c_stride))[p % width];
}

/* Hoare's selection, select_kth of the CPU kernel step for step. */
static float select_kth(__global float *v, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    float pivot = v[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) {
        float t = v[i];
        v[i++] = v[j];
        v[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return v[k];
}

/* One work-item per object: value_sums of the CPU kernel on the object's
 * slice of one channel; raw holds WSISA_NF_RAW doubles per (object, channel). */
__kernel void wsisa_nf_stats(__global float *values, __global const int *first_value,
                             __global const long *sums, __global double *raw, int n,
                             int nchannels, int channel) {
  int i = get_global_id(0);
  if (i >= n) return;
  int count = (int)sums[(size_t)S_N * i + S_AREA];
  if (!count) return;
  __global float *v = values + first_value[i];
  double sum = 0, sq = 0, dev = 0;
  for (int k = 0; k < count; k++) {
    sum += v[k];
    sq += (double)v[k] * v[k];
  }
  double mean = sum / (double)count;
  for (int k = 0; k < count; k++) dev += (v[k] - mean) * (v[k] - mean);
  double median = select_kth(v, count, count / 2);
  if (count % 2 == 0) {
    float below = v[0];
    for (int k = 1; k < count / 2; k++) below = v[k] > below ? v[k] : below;
    median = ((double)below + median) / 2;
  }
  __global double *out = raw + ((size_t)i * nchannels + channel) * 4;
  out[0] = sum;
  out[1] = sq;
  out[2] = dev;
  out[3] = median;
}

static long cross(int2 o, int2 a, int2 b) {
  return ((long)a.x - o.x) * ((long)b.y - o.y) - ((long)a.y - o.y) * ((long)b.x - o.x);
}

static int point_less(int2 p, int2 q) { return p.x < q.x || (p.x == q.x && p.y < q.y); }

/* Heap sort by (x, y): equal points are equal values, so the sorted sequence
 * is the one qsort gives on the CPU. */
static void sift(__global int2 *p, int root, int n) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && point_less(p[child], p[child + 1])) child++;
    if (!point_less(p[root], p[child])) return;
    int2 t = p[root];
    p[root] = p[child];
    p[child] = t;
    root = child;
  }
}

static void sort_points(__global int2 *p, int n) {
  for (int i = n / 2 - 1; i >= 0; i--) sift(p, i, n);
  for (int end = n - 1; end > 0; end--) {
    int2 t = p[0];
    p[0] = p[end];
    p[end] = t;
    sift(p, 0, end);
  }
}

static int hull_contains(__global const int2 *hull, int n, int2 p) {
  for (int i = 0; i < n; i++)
    if (cross(hull[i], hull[(i + 1) % n], p) < 0) return 0;
  return 1;
}

/* One work-item per object: the convex area, as the CPU kernel's hull_make and
 * hull_pixels (monotone chain over each row's extreme edge midpoints,
 * coordinates doubled). pts has 6 entries per (object, row), hull 6 per row
 * plus 2 per object. */
__kernel void wsisa_nf_hull(__global const int *first_row, __global const int *ri,
                            __global int2 *pts_all, __global int2 *hull_all,
                            __global long *sums, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  __global long *s = sums + (size_t)S_N * i;
  if (!s[S_AREA]) return;
  int y0 = (int)s[S_Y0], y1 = (int)s[S_Y1];
  __global int2 *pts = pts_all + (size_t)6 * first_row[i];
  __global int2 *hull = hull_all + (size_t)6 * first_row[i] + (size_t)2 * i;
  int np = 0;
  for (int y = y0; y <= y1; y++) {
    __global const int *e = ri + R_N * ((size_t)first_row[i] + (size_t)(y - y0));
    if (e[R_MAX] < 0) continue;
    int cy = 2 * y, l = 2 * e[R_MIN], r = 2 * e[R_MAX];
    pts[np++] = (int2)(l - 1, cy);
    pts[np++] = (int2)(l, cy - 1);
    pts[np++] = (int2)(l, cy + 1);
    pts[np++] = (int2)(r + 1, cy);
    pts[np++] = (int2)(r, cy - 1);
    pts[np++] = (int2)(r, cy + 1);
  }
  sort_points(pts, np);
  int k = 0;
  for (int j = 0; j < np; j++) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[j]) <= 0) k--;
    hull[k++] = pts[j];
  }
  for (int j = np - 2, lower = k + 1; j >= 0; j--) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], pts[j]) <= 0) k--;
    hull[k++] = pts[j];
  }
  int nh = k > 1 ? k - 1 : k;
  long count = 0;
  int x0 = (int)s[S_X0], x1 = (int)s[S_X1];
  for (int y = y0; y <= y1; y++) {
    int l = x0, r = x1;
    while (l <= r && !hull_contains(hull, nh, (int2)(2 * l, 2 * y))) l++;
    while (r >= l && !hull_contains(hull, nh, (int2)(2 * r, 2 * y))) r--;
    count += r >= l ? r - l + 1 : 0;
  }
  s[S_CONVEX] = count;
}

#endif
