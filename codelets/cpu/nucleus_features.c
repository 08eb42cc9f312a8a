/* Per-nucleus features of a canonical label image (seed 000 Fig. 1, Table 2):
 * shape from the pixel set, intensity statistics from f32 channels.
 *
 * Definitions (those of scikit-image 0.19's regionprops unless said):
 * - centroid: mean pixel coordinates; bbox: first column/row and extent.
 * - moments: exact integer sums of x, y, x², xy, y² (order-free), central
 *   moments from them; eigenvalues l1 >= l2 of the inertia tensor give
 *   major/minor axis length 4·sqrt(l), eccentricity sqrt(1 - l2/l1) (0 when
 *   l1 = 0) and orientation 0.5·atan2(2·mu_xy, mu_yy - mu_xx) (the angle
 *   between the row axis and the major axis, in -π/2..π/2; regionprops
 *   special-cases mu_xx = mu_yy to ±π/4, we keep the formula there too).
 * - perimeter: regionprops' 4-neighbourhood chain estimate: border pixels are
 *   object pixels with a 4-neighbour outside the object; each border pixel
 *   weighs 1, √2 or (1+√2)/2 by the pattern of its border neighbours (counted
 *   per weight, then n1 + n2·√2 + n3·(1+√2)/2: the same in any order).
 * - convex area: the number of pixels whose centre lies inside or on the
 *   convex hull of the midpoints of the object's pixel edges (regionprops 0.19
 *   offsets each pixel centre by ±0.5 along each axis, not to its corners);
 *   the hull is a monotone chain over those points of each row's extreme
 *   pixels, in exact integer arithmetic; solidity = area / convex area.
 *   regionprops' point-in-polygon test is ambiguous for centres exactly on the
 *   hull, which we count as inside.
 * - equivalent diameter: sqrt(4·area/π).
 * - per channel: mean, population std (two passes), exact median (selection
 *   over the object's values; mean of the middle two for an even count) and energy
 *   (mean of squares). Values are summed in raster order, so results do not
 *   depend on anything but the data.
 * The kernel reduces each object to a wsisa_nf_sums and per-channel raw sums;
 * wsisa__nf_finish turns them into the row, for the OpenCL codelet too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

#define PI 3.14159265358979323846
#define SQRT2 1.41421356237309504880

const char *const wsisa_nf_shape_names[WSISA_NF_SHAPE] = {
    "label", "centroid_x", "centroid_y", "bbox_x", "bbox_y", "bbox_w", "bbox_h", "area",
    "perimeter", "equivalent_diameter", "major_axis_length", "minor_axis_length",
    "eccentricity", "orientation", "convex_area", "solidity"};
const char *const wsisa_nf_stat_names[WSISA_NF_STATS] = {"mean", "std", "median", "energy"};

typedef struct object {
  wsisa_nf_sums s;
  size_t first_row;   /* into the per-row extremes */
  size_t first_value; /* into the gathered channel values */
} object;

typedef struct point {
  int64_t x, y;
} point;

static int point_order(const void *a, const void *b) {
  const point *p = a, *q = b;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  return (p->y > q->y) - (p->y < q->y);
}

/* The k-th smallest of v[0..n) (Hoare's selection, in place): afterwards
 * v[0..k) holds the values at or below it. Linear on average, where a sort of
 * every object's values was half the kernel's time. */
static float select_kth(float *v, long n, long k) {
  long lo = 0, hi = n - 1;
  while (lo < hi) {
    float pivot = v[lo + (hi - lo) / 2];
    long i = lo, j = hi;
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

static int64_t cross(point o, point a, point b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* Andrew's monotone chain: pts sorted, hull written counter-clockwise (in the
 * sense cross > 0) without collinear points; returns its size. */
static size_t hull_make(const point *pts, size_t n, point *hull) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) k--;
    hull[k++] = pts[i];
  }
  for (size_t i = n - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) k--;
    hull[k++] = pts[i];
  }
  return k > 1 ? k - 1 : k;
}

static int hull_contains(const point *hull, size_t n, point p) {
  for (size_t i = 0; i < n; i++)
    if (cross(hull[i], hull[(i + 1) % n], p) < 0) return 0;
  return 1;
}

/* Pixel centres inside or on the hull, in the bbox (coordinates doubled so
 * edge midpoints are whole numbers). Each row's inside part is one interval. */
static int64_t hull_pixels(const wsisa_nf_sums *o, const point *hull, size_t n) {
  int64_t count = 0;
  for (int64_t y = o->y0; y <= o->y1; y++) {
    int64_t l = o->x0, r = o->x1;
    while (l <= r && !hull_contains(hull, n, (point){2 * l, 2 * y})) l++;
    while (r >= l && !hull_contains(hull, n, (point){2 * r, 2 * y})) r--;
    count += r >= l ? r - l + 1 : 0;
  }
  return count;
}

/* Weight class of a border pixel by 1 + 2·(4-neighbour border pixels) +
 * 10·(diagonal border pixels), as skimage.measure.perimeter's table: 0 weighs
 * 1, 1 weighs √2, 2 weighs (1+√2)/2, -1 nothing. Counting classes instead of
 * adding weights makes the sum independent of the order pixels come in (the
 * OpenCL kernel counts them the same way, codelets/cl/nucleus_features.cl). */
static int perimeter_class(int code) {
  switch (code) {
    case 5: case 7: case 15: case 17: case 25: case 27: return 0;
    case 21: case 33: return 1;
    case 13: case 23: return 2;
    default: return -1;
  }
}

static int32_t label_at(const wsisa_image *l, int x, int y) {
  if (x < 0 || y < 0 || x >= l->width || y >= l->height) return 0;
  return ((const int32_t *)wsisa_image_row(l, y))[x];
}

static void perimeters(const wsisa_image *labels, const uint8_t *border, object *obj) {
  int w = labels->width, h = labels->height;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      if (!border[(size_t)y * w + x]) continue;
      int32_t id = label_at(labels, x, y);
      int code = 1;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          int nx = x + dx, ny = y + dy;
          if ((!dx && !dy) || nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
          if (border[(size_t)ny * w + nx] && label_at(labels, nx, ny) == id)
            code += dx && dy ? 10 : 2;
        }
      int cls = perimeter_class(code);
      if (cls >= 0) obj[id - 1].s.perim[cls]++;
    }
}

static void shape_row(const wsisa_nf_sums *o, int32_t id, double *row) {
  double a = (double)o->area;
  double cx = (double)o->sx / a, cy = (double)o->sy / a;
  double mxx = ((double)o->sxx - (double)o->sx * cx) / a;
  double myy = ((double)o->syy - (double)o->sy * cy) / a;
  double mxy = ((double)o->sxy - (double)o->sx * cy) / a;
  double half = (mxx + myy) / 2, root = sqrt((mxx - myy) * (mxx - myy) / 4 + mxy * mxy);
  double l1 = half + root, l2 = half - root;
  if (l2 < 0) l2 = 0;
  row[WSISA_NF_LABEL] = id;
  row[WSISA_NF_CENTROID_X] = cx;
  row[WSISA_NF_CENTROID_Y] = cy;
  row[WSISA_NF_BBOX_X] = (double)o->x0;
  row[WSISA_NF_BBOX_Y] = (double)o->y0;
  row[WSISA_NF_BBOX_W] = (double)(o->x1 - o->x0 + 1);
  row[WSISA_NF_BBOX_H] = (double)(o->y1 - o->y0 + 1);
  row[WSISA_NF_AREA] = a;
  row[WSISA_NF_PERIMETER] = (double)o->perim[0] + (double)o->perim[1] * SQRT2 +
                            (double)o->perim[2] * ((1.0 + SQRT2) / 2.0);
  row[WSISA_NF_EQUIV_DIAMETER] = sqrt(4 * a / PI);
  row[WSISA_NF_MAJOR_AXIS] = 4 * sqrt(l1);
  row[WSISA_NF_MINOR_AXIS] = 4 * sqrt(l2);
  row[WSISA_NF_ECCENTRICITY] = l1 > 0 ? sqrt(1 - l2 / l1) : 0;
  /* regionprops' inertia tensor [[a, b], [b, c]] over (row, column) has
   * a = mxx, c = myy, b = -mxy */
  row[WSISA_NF_ORIENTATION] = 0.5 * atan2(2 * mxy, myy - mxx);
  row[WSISA_NF_CONVEX_AREA] = (double)o->convex;
  row[WSISA_NF_SOLIDITY] = o->convex ? a / (double)o->convex : 0;
}

/* One channel's raw values of an object (WSISA_NF_RAW doubles): sums in the
 * order of v (raster order), then the median, which reorders v. */
static void value_sums(float *v, long n, double *raw) {
  double sum = 0, sq = 0, dev = 0;
  for (long i = 0; i < n; i++) {
    sum += v[i];
    sq += (double)v[i] * v[i];
  }
  double mean = sum / (double)n;
  for (long i = 0; i < n; i++) dev += (v[i] - mean) * (v[i] - mean);
  double median = select_kth(v, n, n / 2);
  if (n % 2 == 0) {
    float below = v[0]; /* the largest of v[0 .. n/2), the other middle value */
    for (long i = 1; i < n / 2; i++) below = v[i] > below ? v[i] : below;
    median = ((double)below + median) / 2;
  }
  raw[WSISA_NF_RAW_SUM] = sum;
  raw[WSISA_NF_RAW_SQ] = sq;
  raw[WSISA_NF_RAW_DEV] = dev;
  raw[WSISA_NF_RAW_MEDIAN] = median;
}

void wsisa__nf_finish(const wsisa_nf_sums *o, int32_t id, const double *raw, int nchannels,
                      double *row) {
  memset(row, 0, (size_t)WSISA_NF_ROW(nchannels) * sizeof *row);
  row[WSISA_NF_LABEL] = id;
  if (!o->area) return;
  shape_row(o, id, row);
  double n = (double)o->area;
  for (int c = 0; c < nchannels; c++) {
    const double *r = raw + (size_t)c * WSISA_NF_RAW;
    double *out = row + WSISA_NF_SHAPE + WSISA_NF_STATS * c;
    out[WSISA_NF_MEAN] = r[WSISA_NF_RAW_SUM] / n;
    out[WSISA_NF_STD] = sqrt(r[WSISA_NF_RAW_DEV] / n);
    out[WSISA_NF_MEDIAN] = r[WSISA_NF_RAW_MEDIAN];
    out[WSISA_NF_ENERGY] = r[WSISA_NF_RAW_SQ] / n;
  }
}

int wsisa_cpu_nucleus_features(const wsisa_image *labels, int32_t n,
                               const wsisa_image *const *channels, int nchannels,
                               double *rows) {
  if (labels->type != WSISA_I32 || labels->channels != 1 || n < 0 || nchannels < 0 ||
      nchannels > WSISA_NF_MAX_CHANNELS)
    return WSISA_EINTERNAL;
  for (int c = 0; c < nchannels; c++)
    if (!wsisa__image_is(channels[c], labels, 1, WSISA_F32)) return WSISA_EINTERNAL;
  const int w = labels->width, h = labels->height, stride = WSISA_NF_ROW(nchannels);
  if (n == 0) return 0;
  int rc = WSISA_ENOMEM;
  object *obj = calloc((size_t)n, sizeof *obj);
  uint8_t *border = calloc((size_t)w * h, 1);
  int32_t *row_min = NULL, *row_max = NULL;
  point *pts = NULL, *hull = NULL;
  float *values = NULL;
  size_t *fill = NULL;
  double *raw = NULL;
  if (!obj || !border) goto done;
  for (int32_t i = 0; i < n; i++)
    obj[i].s.x0 = obj[i].s.y0 = INT32_MAX, obj[i].s.x1 = obj[i].s.y1 = -1;

  /* pass 1: moments, bboxes, border pixels */
  int64_t fg = 0;
  for (int y = 0; y < h; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < w; x++) {
      int32_t id = row[x];
      if (id == 0) continue;
      if (id < 0 || id > n) {
        rc = WSISA_EINTERNAL;
        goto done;
      }
      wsisa_nf_sums *o = &obj[id - 1].s;
      o->area++;
      o->sx += x, o->sy += y;
      o->sxx += (int64_t)x * x, o->sxy += (int64_t)x * y, o->syy += (int64_t)y * y;
      if (x < o->x0) o->x0 = x;
      if (x > o->x1) o->x1 = x;
      if (y < o->y0) o->y0 = y;
      o->y1 = y;
      fg++;
      border[(size_t)y * w + x] = label_at(labels, x - 1, y) != id ||
                                  label_at(labels, x + 1, y) != id ||
                                  label_at(labels, x, y - 1) != id ||
                                  label_at(labels, x, y + 1) != id;
    }
  }
  perimeters(labels, border, obj);

  /* pass 2: each object's extreme pixels per row, and its channel values */
  size_t nrows = 0, maxh = 0;
  int64_t at = 0;
  for (int32_t i = 0; i < n; i++) {
    const wsisa_nf_sums *o = &obj[i].s;
    size_t oh = o->area ? (size_t)(o->y1 - o->y0 + 1) : 0;
    obj[i].first_row = nrows;
    obj[i].first_value = (size_t)at;
    nrows += oh;
    at += o->area;
    if (oh > maxh) maxh = oh;
  }
  row_min = malloc((nrows ? nrows : 1) * sizeof *row_min);
  row_max = malloc((nrows ? nrows : 1) * sizeof *row_max);
  pts = malloc((6 * maxh + 1) * sizeof *pts);
  hull = malloc((6 * maxh + 2) * sizeof *hull);
  values = malloc((size_t)(fg ? fg : 1) * sizeof *values);
  fill = malloc((size_t)n * sizeof *fill);
  raw = calloc((size_t)n * (nchannels ? nchannels : 1) * WSISA_NF_RAW, sizeof *raw);
  if (!row_min || !row_max || !pts || !hull || !values || !fill || !raw) goto done;
  for (size_t i = 0; i < nrows; i++) row_min[i] = INT32_MAX, row_max[i] = -1;
  for (int y = 0; y < h; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < w; x++) {
      if (!row[x]) continue;
      const object *o = &obj[row[x] - 1];
      size_t r = o->first_row + (size_t)(y - o->s.y0);
      if (x < row_min[r]) row_min[r] = x;
      if (x > row_max[r]) row_max[r] = x;
    }
  }
  for (int32_t i = 0; i < n; i++) {
    wsisa_nf_sums *o = &obj[i].s;
    if (!o->area) continue;
    size_t np = 0;
    for (int64_t y = o->y0; y <= o->y1; y++) {
      size_t r = obj[i].first_row + (size_t)(y - o->y0);
      if (row_max[r] < 0) continue;
      /* the edge midpoints of the row's first and last pixels (doubled) */
      int64_t cy = 2 * y, l = 2 * (int64_t)row_min[r], rr = 2 * (int64_t)row_max[r];
      pts[np++] = (point){l - 1, cy};
      pts[np++] = (point){l, cy - 1};
      pts[np++] = (point){l, cy + 1};
      pts[np++] = (point){rr + 1, cy};
      pts[np++] = (point){rr, cy - 1};
      pts[np++] = (point){rr, cy + 1};
    }
    qsort(pts, np, sizeof *pts, point_order);
    size_t nh = hull_make(pts, np, hull);
    o->convex = hull_pixels(o, hull, nh);
  }

  for (int c = 0; c < nchannels; c++) {
    for (int32_t i = 0; i < n; i++) fill[i] = obj[i].first_value;
    for (int y = 0; y < h; y++) {
      const int32_t *row = wsisa_image_row(labels, y);
      const float *v = wsisa_image_row(channels[c], y);
      for (int x = 0; x < w; x++)
        if (row[x]) values[fill[row[x] - 1]++] = v[x];
    }
    for (int32_t i = 0; i < n; i++)
      if (obj[i].s.area)
        value_sums(values + obj[i].first_value, obj[i].s.area,
                   raw + ((size_t)i * nchannels + c) * WSISA_NF_RAW);
  }
  for (int32_t i = 0; i < n; i++)
    wsisa__nf_finish(&obj[i].s, i + 1, raw + (size_t)i * nchannels * WSISA_NF_RAW, nchannels,
                     rows + (size_t)i * stride);
  rc = 0;
done:
  free(obj);
  free(border);
  free(row_min);
  free(row_max);
  free(pts);
  free(hull);
  free(values);
  free(fill);
  free(raw);
  return rc;
}
