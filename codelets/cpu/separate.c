/* Levels 6 and 7 of one tile object by object, with object reuse
 * (docs/workflow.md, levels 6-7; docs/architecture.md, "Object reuse"):
 * level 6's separation (distance transform, h-minima, regional minima,
 * markers, watershed) cluster by cluster, level 7's size filter and hole
 * filling group by group, each on a crop with the pure kernels the
 * fine-grain codelets run on the whole tile, or taken from the tile's object
 * store when the same cluster or group was seen before. The result is the
 * tile-wide kernels' bit for bit.
 *
 * Units of work. Level 6 starts tile-wide with the size filter
 * (min_size_pl, 8-connected: one component at a time by definition) and the
 * 3x3 dilation, which joins components up to two pixels apart: so the unit
 * is a cluster, an 8-connected component of the dilated mask, not a level-5
 * component. Level 7's unit is a group: an 8-connected component of the
 * separated mask with every other such component lying in one of its holes
 * (a bounded 4-connected component of its complement), and theirs, and so
 * on. A crop is the unit's bounding box grown by one pixel, clipped to the
 * tile. Distinct clusters (components) are never 8-neighbours.
 *
 * Why level 6 gives a cluster C the tile's pixels (p a pixel of C):
 * - distance transform: p's nearest pixel outside C is background. Take q
 *   outside C nearest to p and step from q one pixel towards p on each axis
 *   where they differ: q' is an 8-neighbour of q, nearer to p, inside the
 *   tile. q' outside C would be nearer than q; q' in C would make q an
 *   8-neighbour of C, so q is no other cluster's: it is background. By the
 *   same step, q lies within one pixel of C's bounding box, so in the crop.
 *   In the crop all but C is off, a superset of the tile's background there
 *   and a subset of what is outside C: the nearest off pixel is the same.
 *   Both treat the image border alike (nothing off lies outside it), and a
 *   crop side inside the tile has the off ring. Distances are exact integers
 *   until one square root: the same bits.
 * - relief and h-minima: -distance in C, -FLT_MAX off it (-FLT_MAX + 1
 *   rounds to -FLT_MAX). Reconstruction by erosion gives p the least, over
 *   8-paths from p, of the largest value met (the marker's at the path's
 *   end). Cutting a path at its first pixel outside C (background, -FLT_MAX,
 *   as above) raises nothing, so only paths in C plus one background pixel
 *   count, and the crop holds them all with the same values.
 * - regional minima (8-connected): a plateau of C lies above -FLT_MAX, so it
 *   never joins the background, and its neighbours are in C or background,
 *   the same in the crop. Every background pixel is a minimum (-FLT_MAX is
 *   the lowest value): every pixel off the mask is a marker.
 * - marker labelling (watershed_conn): a minimum plateau of C never touches
 *   the background (a lower neighbour), so C's inner markers are components
 *   of their own, the same in the crop. Label values do not matter: the
 *   watershed only tests labels for equality, and only its mask leaves it.
 * - the watershed (codelets/cpu/watershed.c): pixels off the mask read as
 *   black, but they are never flooded: every one is a marker from the
 *   start. So no flood crosses the background, and a pixel of C meets
 *   (4-neighbours, and diagonal neighbours both in the mask) only pixels of
 *   C and the background 4-neighbours of C, B_C. The waves are synchronous
 *   and their rule order-independent, so C floods as it does in the tile -
 *   given the same equalities among B_C's labels. There the claim needs
 *   more than C: tile-wide, B_C's labels are components of the whole
 *   background, which other clusters could split or join differently from a
 *   crop without them, and a pixel of C between two background components
 *   becomes a line, between two pixels of one it joins the background's
 *   region. Handled exactly: the tile's background is labelled once
 *   (watershed_conn), B_C's pixels carry their tile component, numbered by
 *   first appearance along C's runs, into the crop's markers, and that
 *   numbering is part of the key. (On the tests' random masks the crop's
 *   own labelling never numbered them otherwise; the key does not rely on
 *   it.)
 * - the lines between regions come from the same flood; regions never
 *   touch inside the mask, not even at a corner, and lines stay in C.
 * Why level 7 gives a group its tile pixels:
 * - the 4-connected size filter: an object lies in one component of the
 *   separated mask, so in one group.
 * - object-wise hole filling (codelets/cpu/fill_object_holes.c): a hole (a
 *   component of the background of all objects, fill_holes_conn, away from
 *   the border) is filled when all mask pixels around it belong to one
 *   object O. Such a hole lies inside O's bounding box, so in the crop, and
 *   the crop finds the same hole. The other way, a hole the crop fills could
 *   hold, or touch at a corner, an object of a component D outside the
 *   group: then D would meet a bounded 4-component of the complement of O's
 *   component (a pixel beside D's is outside O's component, as components
 *   are not neighbours), so D would lie in its hole and in the group: a
 *   contradiction. That is why groups, not components, are level 7's unit.
 * - image borders: a crop clipped by the tile's border has that border;
 *   keys hold the crop's position, so "the same place" means the same
 *   borders and the same RGB.
 * Keys: level 6, the crop, the cluster's runs, watershed_conn and the
 * numbering of B_C's tile components (min_size_pl is not needed: the
 * dilated mask holds its effect); level 7, the crop, the group's runs,
 * min_size_seg, max_size_seg, fill_holes_conn. Values: the result's runs.
 * With `whole` (the OpenCL worker, codelets/separate.c) the units missed are
 * not computed on crops: the tile-wide result is, once, and by the claims
 * above a unit's crop gives exactly its part of it, which is stored: level
 * 6's pixels of the cluster, level 7's pixels of the group and the holes
 * filled around them (filled_find).
 * tests/test_codelets_separate.c compares both levels with the tile-wide
 * kernels, and the two workers' entries. */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* What a unit's computation needs of the parameters. */
typedef struct wsisa_separate_params {
  int watershed_conn;             /* level 6: 4 or 8 */
  int min_size_seg, max_size_seg; /* level 7's size range (max <= 0: none) */
  int fill_holes_conn;            /* level 7: 4 or 8 */
} wsisa_separate_params;

/* An 8-connected component of the input: level 6's cluster, or a component
 * of level 7's groups. */
typedef struct component {
  int32_t x0, y0, x1, y1; /* bounding box, inclusive */
  int32_t fx, fy;         /* the first pixel in raster order */
  int32_t parent;         /* union-find: the group */
} component;

static int32_t find(component *c, int32_t i) {
  while (c[i].parent != i) {
    c[i].parent = c[c[i].parent].parent;
    i = c[i].parent;
  }
  return i;
}

static void unite(component *c, int32_t a, int32_t b) {
  a = find(c, a);
  b = find(c, b);
  if (a < b) c[b].parent = a;
  else if (b < a) c[a].parent = b;
}

/* The run of row y of `runs` holding column x, or -1 (binary search). */
static int32_t run_at(const wsisa__runs *runs, int y, int x) {
  int32_t lo = runs->row[y], hi = runs->row[y + 1];
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (runs->run[mid].x1 <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo < runs->row[y + 1] && runs->run[lo].x0 <= x ? lo : -1;
}

/* Run indices grouped by key[run] in 1..n: list[first[k] .. first[k + 1]). */
static int bucket_runs(const wsisa__runs *runs, int32_t nruns, int32_t n, const int32_t *key,
                       int32_t **first, int32_t **list) {
  *first = calloc((size_t)n + 2, sizeof **first);
  *list = malloc(((size_t)nruns + 1) * sizeof **list);
  if (!*first || !*list) return WSISA_ENOMEM;
  for (int32_t i = 0; i < nruns; i++) (*first)[key[runs->run[i].id] + 1]++;
  for (int32_t k = 1; k <= n + 1; k++) (*first)[k] += (*first)[k - 1];
  int32_t *at = malloc(((size_t)n + 2) * sizeof *at);
  if (!at) return WSISA_ENOMEM;
  memcpy(at, *first, ((size_t)n + 2) * sizeof *at);
  for (int32_t i = 0; i < nruns; i++) (*list)[at[key[runs->run[i].id]]++] = i;
  free(at);
  return 0;
}

/* The holes of component c, to tell whether another lies in one. A hole is
 * a 4-component of the complement of c inside c's bounding box that does
 * not reach the box's border (reaching it, it reaches the tile's border or
 * the ring around the box, from where the way out is free). */
typedef struct holes {
  wsisa_image *img;
  wsisa__runs runs;
  uint8_t *open;  /* per 4-component: reaches the border */
  int32_t owner;  /* whose holes img holds, 0: none */
} holes;

static int holes_of(holes *h, const component *c, int32_t ci, const wsisa__runs *runs8,
                    const int32_t *run_y, const int32_t *own, int32_t nown) {
  wsisa__cpu_runs_free(&h->runs);
  free(h->open);
  h->open = NULL;
  wsisa_image_free(h->img);
  h->img = NULL;
  h->owner = ci;
  const int w = c->x1 - c->x0 + 1, hh = c->y1 - c->y0 + 1;
  if (wsisa_image_new(w, hh, 1, WSISA_U8, &h->img, NULL)) return WSISA_ENOMEM;
  for (int y = 0; y < hh; y++) memset(wsisa_image_row(h->img, y), 255, (size_t)w);
  for (int32_t k = 0; k < nown; k++) {
    const wsisa__run *r = &runs8->run[own[k]];
    memset((uint8_t *)wsisa_image_row(h->img, run_y[own[k]] - c->y0) + r->x0 - c->x0, 0,
           (size_t)(r->x1 - r->x0));
  }
  if (wsisa__cpu_runs_find(h->img, 4, &h->runs)) return WSISA_ENOMEM;
  h->open = calloc((size_t)h->runs.n + 1, 1);
  if (!h->open) return WSISA_ENOMEM;
  for (int y = 0; y < hh; y++)
    for (int32_t i = h->runs.row[y]; i < h->runs.row[y + 1]; i++) {
      const wsisa__run *r = &h->runs.run[i];
      if (y == 0 || y == hh - 1 || r->x0 == 0 || r->x1 == w) h->open[r->id] = 1;
    }
  return 0;
}

static int compare_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Groups: every component lying in a hole of another joins it. A component
 * can lie in a hole of c only if its box is strictly inside c's. */
static int find_groups(component *cl, int32_t n, const wsisa__runs *runs8, const int32_t *run_y,
                       const int32_t *first, const int32_t *list) {
  int32_t *order = malloc(((size_t)n + 1) * sizeof *order);
  if (!order) return WSISA_ENOMEM;
  /* by left edge (x0 << 32 | id: sorted as one integer) */
  int64_t *by_x = malloc(((size_t)n + 1) * sizeof *by_x);
  if (!by_x) {
    free(order);
    return WSISA_ENOMEM;
  }
  for (int32_t i = 0; i < n; i++) by_x[i] = (int64_t)cl[i + 1].x0 << 32 | (i + 1);
  qsort(by_x, (size_t)n, sizeof *by_x, compare_i64);
  for (int32_t i = 0; i < n; i++) order[i] = (int32_t)(by_x[i] & 0xFFFFFFFF);
  free(by_x);
  holes h = {0};
  int rc = 0;
  for (int32_t ci = 1; ci <= n && !rc; ci++) {
    const component *c = &cl[ci];
    if (c->x1 - c->x0 < 2 || c->y1 - c->y0 < 2) continue;
    int32_t lo = 0, hi = n;
    while (lo < hi) {
      int32_t mid = lo + (hi - lo) / 2;
      if (cl[order[mid]].x0 <= c->x0) lo = mid + 1;
      else hi = mid;
    }
    for (int32_t k = lo; k < n && cl[order[k]].x0 < c->x1 && !rc; k++) {
      const int32_t di = order[k];
      const component *d = &cl[di];
      if (d->x1 >= c->x1 || d->y0 <= c->y0 || d->y1 >= c->y1) continue;
      if (h.owner != ci)
        rc = holes_of(&h, c, ci, runs8, run_y, list + first[ci], first[ci + 1] - first[ci]);
      if (rc) break;
      int32_t r = run_at(&h.runs, d->fy - c->y0, d->fx - c->x0);
      if (r >= 0 && !h.open[h.runs.run[r].id]) unite(cl, ci, di);
    }
  }
  wsisa__cpu_runs_free(&h.runs);
  free(h.open);
  wsisa_image_free(h.img);
  free(order);
  return rc;
}

/* One unit's crop: scratch images as views of buffers sized for the largest
 * crop, its runs, its key and a result in run form. */
typedef struct crop {
  int x0, y0, w, h;
  const int32_t *own; /* the unit's runs (indices into the input's runs) */
  int32_t nown;
  int32_t nclasses;   /* level 6: background components among the neighbours */
  /* level 6: the background pieces along the cluster, each with its class
   * (numbered by first appearance along the runs) */
  struct piece {
    int32_t y, x0, x1, cls;
  } *piece;
  size_t npieces, piece_cap;
  wsisa_image mask, f1, f2, u1, res, markers, labels, rgb;
  uint8_t *value;     /* a result as runs */
  size_t value_len, value_cap;
  uint8_t *key;
  size_t key_len, key_cap;
} crop;

enum { KEY_MAGIC6 = 0x57533601, KEY_MAGIC7 = 0x57533701 };

static void view(wsisa_image *img, void *data, int w, int h, int ch, wsisa_dtype type) {
  *img = wsisa_image_view(data, w, h, ch, type, (size_t)w * (size_t)ch * wsisa_dtype_size(type));
}

/* Room for n more bytes of key. */
static int key_room(crop *c, size_t n) {
  if (c->key_len + n > c->key_cap) {
    size_t cap = c->key_cap ? c->key_cap : 1024;
    while (cap < c->key_len + n) cap *= 2;
    uint8_t *k = realloc(c->key, cap);
    if (!k) return WSISA_ENOMEM;
    c->key = k;
    c->key_cap = cap;
  }
  return 0;
}

static int key_put(crop *c, const void *p, size_t n) {
  if (key_room(c, n)) return WSISA_ENOMEM;
  memcpy(c->key + c->key_len, p, n);
  c->key_len += n;
  return 0;
}

/* A result's value: the runs of on pixels of a crop image, row by row, as
 * (row, first column, end column) u16 triples. */
static void encode(crop *c, const wsisa_image *img) {
  uint16_t *v = (uint16_t *)(void *)c->value;
  size_t n = 0;
  for (int y = 0; y < img->height; y++) {
    const uint8_t *r = wsisa_image_row(img, y);
    const int w = img->width;
    for (int x = 0; x < w;) {
      x = wsisa__skip_zeros(r, x, w); /* most of a crop is off */
      if (x == w) break;
      const int x0 = x;
      while (x < w && r[x]) x++;
      v[n++] = (uint16_t)y, v[n++] = (uint16_t)x0, v[n++] = (uint16_t)x;
    }
  }
  c->value_len = n * sizeof *v;
}

/* The value's pixels set to 255 in img at (dx, dy) (img is cleared first
 * when `clear`). */
static void decode(const crop *c, wsisa_image *img, int dx, int dy, int clear) {
  if (clear)
    for (int y = 0; y < c->h; y++) memset(wsisa_image_row(img, y), 0, (size_t)c->w);
  const uint16_t *v = (const uint16_t *)(const void *)c->value;
  for (size_t i = 0; i + 3 <= c->value_len / sizeof *v; i += 3)
    memset((uint8_t *)wsisa_image_row(img, dy + v[i]) + dx + v[i + 1], 255,
           (size_t)(v[i + 2] - v[i + 1]));
}

static void paste(const crop *c, const wsisa_image *from, wsisa_image *out) {
  for (int y = 0; y < c->h; y++) {
    const uint8_t *f = wsisa_image_row(from, y);
    uint8_t *o = (uint8_t *)wsisa_image_row(out, c->y0 + y) + c->x0;
    for (int x = 0; x < c->w; x++) o[x] |= f[x];
  }
}

/* The tile's background components (watershed_conn), renumbered 1, 2, ... by
 * first appearance. */
typedef struct classes {
  int32_t *id;
  int32_t n, cap, last_id, last_class;
} classes;

static int class_of(classes *k, int32_t id, int32_t *out) {
  if (k->n && id == k->last_id) {
    *out = k->last_class;
    return 0;
  }
  int32_t c = 0;
  for (int32_t i = 0; i < k->n && !c; i++)
    if (k->id[i] == id) c = i + 1;
  if (!c) {
    if (k->n == k->cap) {
      int32_t cap = k->cap ? 2 * k->cap : 16;
      int32_t *g = realloc(k->id, (size_t)cap * sizeof *g);
      if (!g) return WSISA_ENOMEM;
      k->id = g;
      k->cap = cap;
    }
    k->id[k->n++] = id;
    c = k->n;
  }
  k->last_id = id;
  k->last_class = c;
  *out = c;
  return 0;
}

/* Where a search of a row of background runs left off: the cluster's runs
 * come in raster order, so along one row the columns only grow. */
typedef struct cursor {
  int y;
  int32_t at;
} cursor;

/* The background pixels of row y, columns [x0, x1), of the tile, as pieces:
 * one per background run they fall in (a background run is one component),
 * each with its component's class in k. Beside a cluster's run these are
 * exactly its background 4-neighbours there: no other cluster is a
 * 4-neighbour. */
static inline int pieces_along(crop *c, classes *k, const wsisa__runs *bg, cursor *cu, int y, int x0,
                        int x1) {
  int32_t lo, hi = bg->row[y + 1];
  if (cu->y == y) {
    lo = cu->at;
  } else {
    lo = bg->row[y];
    int32_t h = hi;
    while (lo < h) { /* the first background run ending after x0 */
      int32_t mid = lo + (h - lo) / 2;
      if (bg->run[mid].x1 <= x0) lo = mid + 1;
      else h = mid;
    }
  }
  while (lo < hi && bg->run[lo].x1 <= x0) lo++;
  cu->y = y;
  cu->at = lo;
  for (int32_t i = lo; i < hi && bg->run[i].x0 < x1; i++) {
    int32_t cls;
    if (class_of(k, bg->run[i].id, &cls)) return WSISA_ENOMEM;
    if (c->npieces == c->piece_cap) {
      size_t cap = c->piece_cap ? 2 * c->piece_cap : 256;
      struct piece *g = realloc(c->piece, cap * sizeof *g);
      if (!g) return WSISA_ENOMEM;
      c->piece = g;
      c->piece_cap = cap;
    }
    c->piece[c->npieces++] = (struct piece){y, bg->run[i].x0 > x0 ? bg->run[i].x0 : x0,
                                            bg->run[i].x1 < x1 ? bg->run[i].x1 : x1, cls};
  }
  return 0;
}

static void crop_mask(crop *c, const wsisa__runs *runs8, const int32_t *run_y) {
  for (int y = 0; y < c->h; y++) memset(wsisa_image_row(&c->mask, y), 0, (size_t)c->w);
  for (int32_t i = 0; i < c->nown; i++) {
    const wsisa__run *r = &runs8->run[c->own[i]];
    memset((uint8_t *)wsisa_image_row(&c->mask, run_y[c->own[i]] - c->y0) + r->x0 - c->x0, 255,
           (size_t)(r->x1 - r->x0));
  }
}

/* The key of level 6's cluster: crop, watershed_conn, its runs, and how its
 * background neighbours fall into the tile's background components: the
 * pieces along its runs (left, right, above, below each, in raster order),
 * which G alone determines, and their classes numbered by first appearance,
 * when there is more than one. Level 7's key: crop, parameters, the group's
 * runs. */
static int crop_key(crop *c, int level, const wsisa__runs *runs8, const int32_t *run_y,
                    const wsisa__runs *bg, classes *k, const wsisa_separate_params *p,
                    int width, int height, int keyed) {
  c->nclasses = 0;
  c->npieces = 0;
  c->key_len = 0;
  if (level == 6) {
    k->n = 0;
    cursor up = {-1, 0}, mid = {-1, 0}, down = {-1, 0};
    for (int32_t i = 0; i < c->nown; i++) {
      const wsisa__run *r = &runs8->run[c->own[i]];
      const int y = run_y[c->own[i]];
      int rc = 0;
      if (r->x0 > 0) rc = pieces_along(c, k, bg, &mid, y, r->x0 - 1, r->x0);
      if (!rc && r->x1 < width) rc = pieces_along(c, k, bg, &mid, y, r->x1, r->x1 + 1);
      if (!rc && y > 0) rc = pieces_along(c, k, bg, &up, y - 1, r->x0, r->x1);
      if (!rc && y + 1 < height) rc = pieces_along(c, k, bg, &down, y + 1, r->x0, r->x1);
      if (rc) return rc;
    }
    c->nclasses = k->n;
  }
  if (!keyed) return 0;
  const int32_t head[10] = {level == 6 ? KEY_MAGIC6 : KEY_MAGIC7,
                            c->x0,
                            c->y0,
                            c->w,
                            c->h,
                            level == 6 ? p->watershed_conn : p->fill_holes_conn,
                            level == 6 ? c->nclasses : p->min_size_seg,
                            level == 6 ? 0 : p->max_size_seg,
                            c->nown,
                            0};
  /* one class: the pieces say nothing the runs do not */
  const size_t classes_len = c->nclasses > 1 ? c->npieces * sizeof(int32_t) : 0;
  if (key_room(c, sizeof head + (size_t)c->nown * 3 * sizeof(uint16_t) + classes_len))
    return WSISA_ENOMEM;
  key_put(c, head, sizeof head);
  uint16_t *t = (uint16_t *)(void *)(c->key + c->key_len);
  for (int32_t i = 0; i < c->nown; i++) {
    const wsisa__run *r = &runs8->run[c->own[i]];
    *t++ = (uint16_t)(run_y[c->own[i]] - c->y0);
    *t++ = (uint16_t)(r->x0 - c->x0);
    *t++ = (uint16_t)(r->x1 - c->x0);
  }
  c->key_len += (size_t)c->nown * 3 * sizeof(uint16_t);
  for (size_t i = 0; classes_len && i < c->npieces; i++)
    key_put(c, &c->piece[i].cls, sizeof c->piece[i].cls);
  return 0;
}

/* Level 6 on the crop: c->res, the separated cluster. */
static int crop_separate(crop *c, const wsisa__runs *runs8, const int32_t *run_y, int conn) {
  crop_mask(c, runs8, run_y);
  int rc = wsisa_cpu_edt(&c->mask, &c->f1);
  if (!rc) rc = wsisa_cpu_neg_dist(&c->f1, &c->mask, &c->f2);
  if (!rc) rc = wsisa_cpu_hmin(&c->f2, 1.0f, 8, &c->f1);
  if (!rc) rc = wsisa_cpu_regional_min(&c->f1, 8, &c->u1);
  if (rc) return rc;
  /* Markers: the minima labelled (the cluster's own never touch the
   * background's, which are every pixel off the mask, so they are components
   * of their own), after the background's classes; off the mask, 1, and each
   * background piece along the cluster its class. */
  if ((rc = wsisa_cpu_label(&c->u1, conn, &c->labels))) return rc;
  const int32_t offset = c->nclasses > 1 ? c->nclasses : 1;
  for (int y = 0; y < c->h; y++) {
    const int32_t *l = wsisa_image_row(&c->labels, y);
    const uint8_t *m = wsisa_image_row(&c->mask, y);
    int32_t *mk = wsisa_image_row(&c->markers, y);
    for (int x = 0; x < c->w; x++) mk[x] = m[x] ? (l[x] ? l[x] + offset : 0) : 1;
  }
  for (size_t i = 0; c->nclasses > 1 && i < c->npieces; i++) {
    const struct piece *g = &c->piece[i];
    int32_t *mk = (int32_t *)wsisa_image_row(&c->markers, g->y - c->y0) - c->x0;
    for (int x = g->x0; x < g->x1; x++) mk[x] = g->cls;
  }
  return wsisa_cpu_watershed(&c->rgb, &c->markers, &c->mask, &c->labels, &c->res);
}

/* Level 7 on the crop: c->res, the group sized and its holes filled. */
static int crop_final(crop *c, const wsisa__runs *runs8, const int32_t *run_y,
                      const wsisa_separate_params *p) {
  crop_mask(c, runs8, run_y);
  int rc = wsisa_cpu_area_filter(&c->mask, 4, p->min_size_seg, p->max_size_seg, &c->u1);
  return rc ? rc : wsisa_cpu_fill_object_holes(&c->u1, p->fill_holes_conn, &c->res);
}

/* 1 when the unit's result is in the store (then set in out), else 0 (and
 * *hash is its key's, for storing it). */
static int from_store(crop *c, int level, wsisa_object_store *store, wsisa_object_tally *t,
                      uint64_t *hash, wsisa_image *out) {
  t->seen[level - 6]++;
  t->area[level - 6] += (uint64_t)c->w * (uint64_t)c->h;
  if (!store) return 0;
  *hash = wsisa_object_hash(c->key, c->key_len);
  if (!wsisa_object_store_get(store, c->key, c->key_len, *hash, c->value, c->value_cap,
                              &c->value_len))
    return 0;
  t->reused[level - 6]++;
  t->area_reused[level - 6] += (uint64_t)c->w * (uint64_t)c->h;
  decode(c, out, c->x0, c->y0, 0);
  return 1;
}

/* wsisa_object_store_missing: each unit of `of` against `in`. */
typedef struct {
  wsisa_object_store *in;
  uint64_t *area, *missing;
} missing_walk;

static void missing_visit(const void *key, size_t key_len, uint64_t hash, void *ctx) {
  missing_walk *w = ctx;
  int32_t head[5];
  if (key_len < sizeof head) return;
  memcpy(head, key, sizeof head);
  int l = head[0] == KEY_MAGIC6 ? 0 : head[0] == KEY_MAGIC7 ? 1 : -1;
  if (l < 0) return;
  uint64_t px = (uint64_t)head[3] * (uint64_t)head[4];
  w->area[l] += px;
  if (w->in && !wsisa_object_store_has(w->in, key, key_len, hash)) w->missing[l] += px;
}

void wsisa_object_store_missing(wsisa_object_store *of, wsisa_object_store *in, uint64_t area[2],
                                uint64_t missing[2]) {
  area[0] = area[1] = missing[0] = missing[1] = 0;
  missing_walk w = {of == in ? NULL : in, area, missing}; /* a store lacks none of its own */
  wsisa_object_store_each(of, missing_visit, &w);
}

/* One unit: from the store, or computed (and stored). */
static int do_unit(crop *c, int level, const wsisa__runs *runs8, const int32_t *run_y,
                   const wsisa_separate_params *p, wsisa_object_store *store,
                   wsisa_object_tally *t, wsisa_image *out) {
  uint64_t hash = 0;
  if (from_store(c, level, store, t, &hash, out)) return 0;
  int rc = level == 6 ? crop_separate(c, runs8, run_y, p->watershed_conn)
                      : crop_final(c, runs8, run_y, p);
  if (rc) return rc;
  if (!store) {
    paste(c, &c->res, out);
    return 0;
  }
  encode(c, &c->res);
  decode(c, out, c->x0, c->y0, 0);
  /* an entry the store cannot take is computed again when next needed */
  (void)wsisa_object_store_put(store, c->key, c->key_len, hash, c->value, c->value_len);
  return 0;
}

/* The holes level 7's tile-wide result filled (on in it, off in the input),
 * each given to the group around it, in run form: the runs of group g are
 * list[first[g] .. first[g + 1]), their rows in run_y. A filled hole is a
 * component of the objects' background whose surrounding object pixels
 * are one object's; a 4-component of its pixels off the input lies in it,
 * and the pixel above that component's first pixel is on in the input (off,
 * it would be in the hole, so filled, so in the component before it): a
 * pixel of a component lying in the hole or around it, in either case of
 * the object's group. */
typedef struct filled {
  wsisa__runs runs;
  int32_t *run_y, *first, *list;
} filled;

static void filled_free(filled *f) {
  wsisa__cpu_runs_free(&f->runs);
  free(f->run_y);
  free(f->first);
  free(f->list);
}

static int filled_find(filled *f, const wsisa_image *mask, const wsisa_image *result,
                       const wsisa__runs *runs8, const int32_t *key, int32_t n) {
  const int width = mask->width, height = mask->height;
  wsisa_image *holes = NULL;
  if (wsisa_image_new(width, height, 1, WSISA_U8, &holes, NULL)) return WSISA_ENOMEM;
  for (int y = 0; y < height; y++) {
    const uint8_t *m = wsisa_image_row(mask, y), *r = wsisa_image_row(result, y);
    uint8_t *h = wsisa_image_row(holes, y);
    for (int x = 0; x < width; x++) h[x] = r[x] && !m[x] ? 255 : 0;
  }
  int rc = wsisa__cpu_runs_find(holes, 4, &f->runs) ? WSISA_ENOMEM : 0;
  wsisa_image_free(holes);
  if (rc) return rc;
  const int32_t nruns = f->runs.row[height];
  int32_t *group = calloc((size_t)f->runs.n + 1, sizeof *group);
  f->run_y = malloc(((size_t)nruns + 1) * sizeof *f->run_y);
  if (!group || !f->run_y) {
    free(group);
    return WSISA_ENOMEM;
  }
  for (int y = 0; y < height && !rc; y++)
    for (int32_t i = f->runs.row[y]; i < f->runs.row[y + 1]; i++) {
      const wsisa__run *r = &f->runs.run[i];
      f->run_y[i] = y;
      if (group[r->id]) continue;
      const int32_t above = y > 0 ? run_at(runs8, y - 1, r->x0) : -1;
      if (above < 0) { /* not a hole: the tile-wide result is not level 7's */
        rc = WSISA_EINTERNAL;
        break;
      }
      group[r->id] = key[runs8->run[above].id];
    }
  if (!rc) rc = bucket_runs(&f->runs, nruns, n, group, &f->first, &f->list);
  free(group);
  return rc;
}

/* c->res = the unit's part of the tile-wide result: its pixels there, and
 * (level 7) the holes filled around it. */
static int crop_take(crop *c, const wsisa_image *result, const wsisa__runs *runs8,
                     const int32_t *run_y, const filled *f, int32_t g) {
  for (int y = 0; y < c->h; y++) memset(wsisa_image_row(&c->res, y), 0, (size_t)c->w);
  for (int32_t i = 0; i < c->nown; i++) {
    const wsisa__run *r = &runs8->run[c->own[i]];
    const int y = run_y[c->own[i]];
    memcpy((uint8_t *)wsisa_image_row(&c->res, y - c->y0) + r->x0 - c->x0,
           (const uint8_t *)wsisa_image_row(result, y) + r->x0, (size_t)(r->x1 - r->x0));
  }
  const int32_t k0 = f && f->first ? f->first[g] : 0, k1 = f && f->first ? f->first[g + 1] : 0;
  for (int32_t k = k0; k < k1; k++) {
    const wsisa__run *r = &f->runs.run[f->list[k]];
    const int y = f->run_y[f->list[k]];
    if (y < c->y0 || y >= c->y0 + c->h || r->x0 < c->x0 || r->x1 > c->x0 + c->w)
      return WSISA_EINTERNAL;
    memset((uint8_t *)wsisa_image_row(&c->res, y - c->y0) + r->x0 - c->x0, 255,
           (size_t)(r->x1 - r->x0));
  }
  return 0;
}

/* The crop of unit g (bounding box cl[g] grown by one pixel, clipped), its
 * scratch images in buf (room for `most` pixels each) and its runs. */
static void crop_place(crop *c, const component *cl, int32_t g, int width, int height, char *buf,
                       size_t most, const wsisa_image *rgb, const int32_t *gfirst,
                       const int32_t *glist) {
  c->x0 = cl[g].x0 > 0 ? cl[g].x0 - 1 : 0;
  c->y0 = cl[g].y0 > 0 ? cl[g].y0 - 1 : 0;
  c->w = (cl[g].x1 + 1 < width ? cl[g].x1 + 1 : width - 1) - c->x0 + 1;
  c->h = (cl[g].y1 + 1 < height ? cl[g].y1 + 1 : height - 1) - c->y0 + 1;
  char *b = buf;
  view(&c->f1, b, c->w, c->h, 1, WSISA_F32), b += most * sizeof(float);
  view(&c->f2, b, c->w, c->h, 1, WSISA_F32), b += most * sizeof(float);
  view(&c->markers, b, c->w, c->h, 1, WSISA_I32), b += most * sizeof(int32_t);
  view(&c->labels, b, c->w, c->h, 1, WSISA_I32), b += most * sizeof(int32_t);
  view(&c->mask, b, c->w, c->h, 1, WSISA_U8), b += most;
  view(&c->u1, b, c->w, c->h, 1, WSISA_U8), b += most;
  view(&c->res, b, c->w, c->h, 1, WSISA_U8), b += most;
  c->value = (uint8_t *)b + (8 - (uintptr_t)b % 8) % 8;
  if (rgb)
    c->rgb = wsisa_image_view((uint8_t *)wsisa_image_row(rgb, c->y0) + 3 * (size_t)c->x0, c->w,
                              c->h, 3, WSISA_U8, rgb->stride);
  c->own = glist + gfirst[g];
  c->nown = gfirst[g + 1] - gfirst[g];
}

/* Level 6 (level 7): out = the separation (the final mask) of `mask`, the
 * dilated mask (the separated one), unit by unit. */
static int objects(int level, const wsisa_image *rgb, const wsisa_image *mask,
                   const wsisa_separate_params *p, wsisa_object_store *store,
                   const wsisa_object_whole *whole, wsisa_object_tally *tally,
                   wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  wsisa_object_tally t = {0};
  for (int y = 0; y < height; y++) memset(wsisa_image_row(out, y), 0, (size_t)width);
  wsisa__runs runs8 = {0}, bg = {0};
  component *cl = NULL;
  int32_t *key = NULL, *first = NULL, *list = NULL, *gfirst = NULL, *glist = NULL, *run_y = NULL;
  int32_t *missed = NULL, nmissed = 0;
  crop c = {0};
  classes k = {0};
  void *buf = NULL;
  int rc = wsisa__cpu_runs_find(mask, 8, &runs8);
  if (rc) goto done;
  const int32_t n = runs8.n, nruns = runs8.row[height];
  if (!n) goto done;
  /* the tile's background components, watershed_conn: read off the mask, no
   * inverted copy of it */
  if (level == 6 && (rc = wsisa__cpu_runs_find_off(mask, p->watershed_conn, &bg))) goto done;
  /* components: boxes and first pixels; each run's row */
  cl = malloc(((size_t)n + 1) * sizeof *cl);
  key = malloc(((size_t)n + 1) * sizeof *key);
  run_y = malloc(((size_t)nruns + 1) * sizeof *run_y);
  if (!cl || !key || !run_y) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  for (int32_t i = 0; i <= n; i++) {
    cl[i] = (component){INT32_MAX, INT32_MAX, -1, -1, 0, 0, i};
    key[i] = i;
  }
  for (int y = 0; y < height; y++)
    for (int32_t i = runs8.row[y]; i < runs8.row[y + 1]; i++) {
      const wsisa__run *r = &runs8.run[i];
      component *q = &cl[r->id];
      run_y[i] = y;
      if (q->y1 < 0) q->fx = r->x0, q->fy = y;
      if (r->x0 < q->x0) q->x0 = r->x0;
      if (r->x1 - 1 > q->x1) q->x1 = r->x1 - 1;
      if (y < q->y0) q->y0 = y;
      q->y1 = y;
    }
  if ((rc = bucket_runs(&runs8, nruns, n, key, &first, &list))) goto done;
  if (level == 7) {
    /* groups: the components in a component's holes join it, and the
     * group's box is its outermost member's */
    if ((rc = find_groups(cl, n, &runs8, run_y, first, list))) goto done;
    for (int32_t i = 1; i <= n; i++) {
      const int32_t g = key[i] = find(cl, i);
      if (g == i) continue;
      if (cl[i].x0 < cl[g].x0) cl[g].x0 = cl[i].x0;
      if (cl[i].x1 > cl[g].x1) cl[g].x1 = cl[i].x1;
      if (cl[i].y0 < cl[g].y0) cl[g].y0 = cl[i].y0;
      if (cl[i].y1 > cl[g].y1) cl[g].y1 = cl[i].y1;
    }
    if ((rc = bucket_runs(&runs8, nruns, n, key, &gfirst, &glist))) goto done;
  } else {
    gfirst = first, glist = list;
    first = list = NULL;
  }
  size_t most = 1;
  for (int32_t g = 1; g <= n; g++) {
    if (key[g] != g) continue;
    size_t w = (size_t)(cl[g].x1 - cl[g].x0 + 3), h = (size_t)(cl[g].y1 - cl[g].y0 + 3);
    if (w * h > most) most = w * h;
  }
  /* f32 x2, i32 x2, u8 x3, and a value: at most (w + 1) / 2 runs of 6
   * bytes per row */
  c.value_cap = 6 * most + 64;
  buf = malloc(most * (2 * sizeof(float) + 2 * sizeof(int32_t) + 3) + c.value_cap + 8);
  if (!buf) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  if (whole && !(missed = malloc(((size_t)n + 1) * sizeof *missed))) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  for (int32_t g = 1; g <= n && !rc; g++) {
    if (key[g] != g) continue;
    crop_place(&c, cl, g, width, height, buf, most, rgb, gfirst, glist);
    rc = crop_key(&c, level, &runs8, run_y, &bg, &k, p, width, height, store != NULL);
    uint64_t hash;
    if (!rc && whole) {
      if (!from_store(&c, level, store, &t, &hash, out)) missed[nmissed++] = g;
    } else if (!rc) {
      rc = do_unit(&c, level, &runs8, run_y, p, store, &t, out);
    }
  }
  if (rc || !nmissed) goto done;
  /* the units missed: the tile-wide result, then each one's part stored */
  filled f = {0};
  rc = whole->compute(whole->ctx, out);
  if (!rc && store && level == 7) rc = filled_find(&f, mask, out, &runs8, key, n);
  for (int32_t i = 0; i < nmissed && store && !rc; i++) {
    const int32_t g = missed[i];
    crop_place(&c, cl, g, width, height, buf, most, rgb, gfirst, glist);
    rc = crop_key(&c, level, &runs8, run_y, &bg, &k, p, width, height, 1);
    if (!rc) rc = crop_take(&c, out, &runs8, run_y, level == 7 ? &f : NULL, g);
    if (rc) break;
    encode(&c, &c.res);
    (void)wsisa_object_store_put(store, c.key, c.key_len,
                                 wsisa_object_hash(c.key, c.key_len), c.value, c.value_len);
  }
  filled_free(&f);
done:
  free(missed);
  if (store && !rc) wsisa_object_store_count(store, &t);
  if (tally) *tally = t;
  wsisa__cpu_runs_free(&runs8);
  wsisa__cpu_runs_free(&bg);
  free(cl);
  free(key);
  free(run_y);
  free(first);
  free(list);
  free(gfirst);
  free(glist);
  free(c.key);
  free(c.piece);
  free(k.id);
  free(buf);
  return rc;
}

int wsisa_cpu_separate(const wsisa_image *rgb, const wsisa_image *mask, int watershed_conn,
                       wsisa_object_store *store, const wsisa_object_whole *whole,
                       wsisa_object_tally *tally, wsisa_image *out) {
  if (mask->type != WSISA_U8 || mask->channels != 1 ||
      (rgb ? !wsisa__image_is(rgb, mask, 3, WSISA_U8) : !whole) ||
      !wsisa__image_is(out, mask, 1, WSISA_U8) || (watershed_conn != 4 && watershed_conn != 8) ||
      mask->width > WSISA_EDT_MAX_SIDE || mask->height > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  const wsisa_separate_params p = {.watershed_conn = watershed_conn};
  return objects(6, rgb, mask, &p, store, whole, tally, out);
}

int wsisa_cpu_final_size(const wsisa_image *mask, int min_size_seg, int max_size_seg,
                         int fill_holes_conn, wsisa_object_store *store,
                         const wsisa_object_whole *whole, wsisa_object_tally *tally,
                         wsisa_image *out) {
  if (mask->type != WSISA_U8 || mask->channels != 1 || !wsisa__image_is(out, mask, 1, WSISA_U8) ||
      (fill_holes_conn != 4 && fill_holes_conn != 8) || mask->width > 65535 ||
      mask->height > 65535)
    return WSISA_EINTERNAL;
  const wsisa_separate_params p = {.min_size_seg = min_size_seg, .max_size_seg = max_size_seg,
                                   .fill_holes_conn = fill_holes_conn};
  return objects(7, NULL, mask, &p, store, whole, tally, out);
}
