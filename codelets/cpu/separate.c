/* Levels 6 and 7 object group by object group, with object reuse
 * (docs/workflow.md, levels 6-7; docs/architecture.md, "Object reuse"): the
 * separation (distance transform, h-minima, regional minima, markers,
 * watershed) and the final size filter and hole filling of one tile, done on
 * crops around each object group with the same pure kernels the fine-grain
 * codelets run, and taken from the tile's object store when the group was
 * seen before. The result is the tile-wide computation's, bit for bit.
 *
 * Input: `mask`, level 6's components >= min_size_pl dilated (the watershed's
 * mask). A cluster is an 8-connected component of it; a group is a cluster
 * with every cluster lying in one of its holes (a bounded 4-connected
 * component of its complement), and theirs, and so on. The crop of a group
 * is its bounding box grown by one pixel, clipped to the tile.
 *
 * Why a group's pixels come out as they do tile-wide (C: a cluster of the
 * group, p: a pixel of C; distinct clusters are never 8-neighbours):
 * - distance transform: p's nearest pixel outside C is background. Take q
 *   outside C nearest to p and step from q one pixel towards p on each axis
 *   where they differ: q' is an 8-neighbour of q, nearer to p, inside the
 *   tile. q' outside C would be nearer than q; q' in C would make q an
 *   8-neighbour of C, so q is no other cluster's, it is background. By the
 *   same step, q lies within one pixel of C's bounding box, so in the crop.
 *   In the crop everything outside the group is off, a superset of the
 *   tile's background there and a subset of what is outside C: the nearest
 *   off pixel is the same. Both treat the image border alike (nothing off
 *   lies outside), and a crop side that is not the tile's border has the
 *   off ring. The distances are exact integers until one square root: same
 *   bits.
 * - relief and h-minima: -distance in C, -FLT_MAX off it, and -FLT_MAX + 1
 *   rounds to -FLT_MAX. Reconstruction by erosion gives p the least, over
 *   8-paths from p, of the largest value met (the marker's at the path's
 *   end). Cutting a path at its first pixel outside C (background, -FLT_MAX,
 *   as above) lowers nothing, so only paths inside C plus one pixel of
 *   background count; the crop holds them all with the same values.
 * - regional minima (8-connected): a plateau of C has values above -FLT_MAX,
 *   so it never joins the background; its neighbours are in C or background,
 *   the same in the crop. Every background pixel is a minimum (-FLT_MAX is
 *   the lowest value), so every pixel off the mask is a marker.
 * - the markers (watershed_conn labelling of the minima): a minimum plateau
 *   of C never touches the background (a lower neighbour), so the labels of
 *   C's inner markers are components of their own, the same in the crop; the
 *   label values themselves do not matter (the watershed only tests labels
 *   for equality, and only mask_out leaves it).
 * - the watershed: every pixel off the mask is a marker from the start, so
 *   no flood ever crosses the background, and a pixel of C meets (4- or,
 *   both in the mask, diagonal neighbours) only pixels of C and background
 *   4-neighbours of C, B_C. The waves are synchronous and order-independent,
 *   so C's pixels evolve the same wherever C is flooded - given the same
 *   equalities among the labels of B_C. That is THE EXCEPTION to the
 *   per-component claim: tile-wide, B_C's labels are components of the whole
 *   background (watershed_conn), which other clusters can split or join
 *   differently from a crop where they are absent; a pixel between two
 *   background components becomes a line, between two pixels of one it
 *   joins the background's region. It is handled exactly: the tile's
 *   background is labelled once, B_C's pixels carry their tile component,
 *   renumbered in raster order of first appearance, into the crop's markers,
 *   and that numbering is part of the key.
 * - lines between regions: the same flood, the same lines; regions never
 *   touch (8-connected) inside the mask, and lines stay inside C.
 * - level 7's 4-connected size filter: objects lie inside one cluster
 *   (the separation is a subset of the mask).
 * - level 7's object-wise hole filling: a hole (a component of the
 *   background of all objects, fill_holes_conn, away from the border) is
 *   filled when all mask pixels around it belong to one object O. Such a
 *   hole lies inside O's bounding box, so in the crop, and the same hole is
 *   found there. The other way, a hole the crop fills could hold, or touch
 *   at a corner, an object of a cluster D outside the group: D would then
 *   meet a bounded 4-component of the complement of O's cluster (a pixel
 *   beside D's is outside O's cluster, as clusters are not neighbours), so D
 *   lies in a hole of that cluster and belongs to the group: a
 *   contradiction. Hence groups, not single clusters, are the unit of work.
 * - image borders: a crop clipped by the tile border has the same border;
 *   the key holds the crop's position, so "the same place" means the same
 *   borders and the same RGB.
 * The key of a group: its crop rectangle, its mask pixels there, the
 * numbering of its background neighbours' tile components, watershed_conn;
 * for the final mask also min_size_seg, max_size_seg, fill_holes_conn. Not
 * min_size_pl: the mask already holds its effect. The tests compare every
 * mask with the tile-wide kernels (tests/test_codelets_separate.c). */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

typedef struct cluster {
  int32_t x0, y0, x1, y1; /* bounding box, inclusive */
  int32_t fx, fy;         /* the first pixel in raster order */
  int32_t parent;         /* union-find: the group */
} cluster;

static int32_t find(cluster *c, int32_t i) {
  while (c[i].parent != i) {
    c[i].parent = c[c[i].parent].parent;
    i = c[i].parent;
  }
  return i;
}

static void unite(cluster *c, int32_t a, int32_t b) {
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

/* The row of run i (runs are in raster order: the last row starting at or
 * before it). */
static int row_of(const wsisa__runs *runs, int height, int32_t i) {
  int lo = 0, hi = height - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (runs->row[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Does cluster d lie in a hole of cluster c? `own` lists c's runs. A hole is a
 * 4-component of the complement of c inside c's bounding box that does not
 * reach the box's border (reaching it, it reaches the tile's border or the
 * ring around the box, from where the way out is free). */
typedef struct holes {
  wsisa_image *img;
  wsisa__runs runs;
  uint8_t *open; /* per component: reaches the border */
  int32_t cluster; /* whose holes img holds, 0: none */
} holes;

static int holes_of(holes *h, const cluster *c, int32_t ci, const wsisa__runs *runs8,
                    const int32_t *own, int32_t nown, int height) {
  wsisa__cpu_runs_free(&h->runs);
  free(h->open);
  h->open = NULL;
  wsisa_image_free(h->img);
  h->img = NULL;
  h->cluster = ci;
  const int w = c->x1 - c->x0 + 1, hh = c->y1 - c->y0 + 1;
  if (wsisa_image_new(w, hh, 1, WSISA_U8, &h->img, NULL)) return WSISA_ENOMEM;
  for (int y = 0; y < hh; y++) memset(wsisa_image_row(h->img, y), 255, (size_t)w);
  for (int32_t k = 0; k < nown; k++) {
    const wsisa__run *r = &runs8->run[own[k]];
    memset((uint8_t *)wsisa_image_row(h->img, row_of(runs8, height, own[k]) - c->y0) + r->x0 -
               c->x0,
           0, (size_t)(r->x1 - r->x0));
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

/* Groups: every cluster lying in a hole of another joins it. A cluster can
 * lie in a hole of c only if its box is strictly inside c's. */
static int find_groups(cluster *cl, int32_t n, const wsisa__runs *runs8, const int32_t *first,
                       const int32_t *list, int height) {
  int32_t *order = malloc(((size_t)n + 1) * sizeof *order);
  if (!order) return WSISA_ENOMEM;
  for (int32_t i = 0; i < n; i++) order[i] = i + 1;
  /* by left edge: insertion into a sorted array is fine for the few
   * thousand clusters of a tile */
  for (int32_t i = 1; i < n; i++) {
    int32_t v = order[i], j = i;
    while (j > 0 && cl[order[j - 1]].x0 > cl[v].x0) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  holes h = {0};
  int rc = 0;
  for (int32_t ci = 1; ci <= n && !rc; ci++) {
    const cluster *c = &cl[ci];
    if (c->x1 - c->x0 < 2 || c->y1 - c->y0 < 2) continue;
    int32_t lo = 0, hi = n;
    while (lo < hi) {
      int32_t mid = lo + (hi - lo) / 2;
      if (cl[order[mid]].x0 <= c->x0) lo = mid + 1;
      else hi = mid;
    }
    for (int32_t k = lo; k < n && cl[order[k]].x0 < c->x1 && !rc; k++) {
      const int32_t di = order[k];
      const cluster *d = &cl[di];
      if (d->x1 >= c->x1 || d->y0 <= c->y0 || d->y1 >= c->y1) continue;
      if (h.cluster != ci)
        rc = holes_of(&h, c, ci, runs8, list + first[ci], first[ci + 1] - first[ci], height);
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

/* Scratch images of one crop, as views of buffers sized for the largest. */
typedef struct crop {
  int x0, y0, w, h;
  wsisa_image mask, f1, f2, u1, sep, fin, markers, labels, rgb;
  uint8_t *bits;     /* a result packed one bit per pixel */
  size_t nbits_bytes;
  uint8_t *key;      /* KEY_PREFIX bytes, then the common part */
  size_t key_len, key_cap;
} crop;

/* Room before the common part of the key for either tier's header. */
enum { KEY_PREFIX = 16, KEY_MAGIC = 0x57534F31 /* "WSO1" */ };

static void view(wsisa_image *img, void *data, int w, int h, int ch, wsisa_dtype type) {
  *img = wsisa_image_view(data, w, h, ch, type, (size_t)w * (size_t)ch * wsisa_dtype_size(type));
}

static int key_grow(crop *c, size_t more) {
  if (c->key_len + more <= c->key_cap) return 0;
  size_t cap = c->key_cap ? c->key_cap : 1024;
  while (cap < c->key_len + more) cap *= 2;
  uint8_t *k = realloc(c->key, cap);
  if (!k) return WSISA_ENOMEM;
  c->key = k;
  c->key_cap = cap;
  return 0;
}

static int key_put(crop *c, const void *p, size_t n) {
  if (key_grow(c, n)) return WSISA_ENOMEM;
  memcpy(c->key + c->key_len, p, n);
  c->key_len += n;
  return 0;
}

static void pack(const wsisa_image *img, uint8_t *bits, size_t nbytes) {
  memset(bits, 0, nbytes);
  size_t i = 0;
  for (int y = 0; y < img->height; y++) {
    const uint8_t *r = wsisa_image_row(img, y);
    for (int x = 0; x < img->width; x++, i++)
      if (r[x]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
}

static void unpack(const uint8_t *bits, wsisa_image *img) {
  size_t i = 0;
  for (int y = 0; y < img->height; y++) {
    uint8_t *r = wsisa_image_row(img, y);
    for (int x = 0; x < img->width; x++, i++) r[x] = bits[i >> 3] >> (i & 7) & 1 ? 255 : 0;
  }
}

/* The tile's background components (watershed_conn), renumbered 1, 2, ... by
 * first appearance in one crop. */
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

/* The group's mask in the crop, its markers off the mask (each background
 * neighbour of the group: its class; other pixels off the mask: 1, they
 * meet no pixel of the group), and with a store, the key's common part. */
static int crop_prepare(crop *c, const wsisa__runs *runs8, const int32_t *own, int32_t nown,
                        int height, const wsisa__runs *bg, classes *k, int keyed, int conn) {
  for (int y = 0; y < c->h; y++) memset(wsisa_image_row(&c->mask, y), 0, (size_t)c->w);
  for (int32_t i = 0; i < nown; i++) {
    const wsisa__run *r = &runs8->run[own[i]];
    memset((uint8_t *)wsisa_image_row(&c->mask, row_of(runs8, height, own[i]) - c->y0) + r->x0 -
               c->x0,
           255, (size_t)(r->x1 - r->x0));
  }
  k->n = 0;
  c->key_len = KEY_PREFIX;
  if (keyed) {
    const int32_t head[6] = {KEY_MAGIC, c->x0, c->y0, c->w, c->h, conn};
    if (key_grow(c, 0) || key_put(c, head, sizeof head)) return WSISA_ENOMEM;
  }
  const size_t nclass_at = c->key_len;
  if (keyed && key_put(c, &k->n, sizeof k->n)) return WSISA_ENOMEM; /* patched below */
  const size_t bits_at = c->key_len;
  if (keyed) {
    if (key_grow(c, c->nbits_bytes)) return WSISA_ENOMEM;
    pack(&c->mask, c->key + bits_at, c->nbits_bytes);
    c->key_len += c->nbits_bytes;
  }
  for (int y = 0; y < c->h; y++) {
    const uint8_t *m = wsisa_image_row(&c->mask, y);
    const uint8_t *up = y ? wsisa_image_row(&c->mask, y - 1) : NULL;
    const uint8_t *down = y + 1 < c->h ? wsisa_image_row(&c->mask, y + 1) : NULL;
    int32_t *mk = wsisa_image_row(&c->markers, y);
    for (int x = 0; x < c->w; x++) {
      if (m[x]) {
        mk[x] = 0;
        continue;
      }
      const int beside = (x > 0 && m[x - 1]) || (x + 1 < c->w && m[x + 1]) || (up && up[x]) ||
                         (down && down[x]);
      if (!beside) {
        mk[x] = 1;
        continue;
      }
      int32_t r = run_at(bg, c->y0 + y, c->x0 + x), cls;
      if (r < 0) return WSISA_EINTERNAL; /* a neighbour of a cluster off the background */
      if (class_of(k, bg->run[r].id, &cls)) return WSISA_ENOMEM;
      mk[x] = cls;
      if (keyed && key_put(c, &cls, sizeof cls)) return WSISA_ENOMEM;
    }
  }
  if (keyed) {
    memcpy(c->key + nclass_at, &k->n, sizeof k->n);
    /* one class: the sequence says nothing the mask does not */
    if (k->n <= 1) c->key_len = bits_at + c->nbits_bytes;
  }
  return 0;
}

/* Level 6 on the crop: c->sep from c->mask and its background markers. */
static int crop_separate(crop *c, int conn, int32_t nclasses) {
  int rc = wsisa_cpu_edt(&c->mask, &c->f1);
  if (!rc) rc = wsisa_cpu_neg_dist(&c->f1, &c->mask, &c->f2);
  if (!rc) rc = wsisa_cpu_hmin(&c->f2, 1.0f, 8, &c->f1);
  if (!rc) rc = wsisa_cpu_regional_min(&c->f1, 8, &c->u1);
  if (rc) return rc;
  /* the group's own minima, labelled; the background's are its classes */
  for (int y = 0; y < c->h; y++) {
    uint8_t *u = wsisa_image_row(&c->u1, y);
    const uint8_t *m = wsisa_image_row(&c->mask, y);
    for (int x = 0; x < c->w; x++) u[x] = u[x] && m[x] ? 255 : 0;
  }
  if ((rc = wsisa_cpu_label(&c->u1, conn, &c->labels))) return rc;
  const int32_t offset = nclasses > 1 ? nclasses : 1;
  for (int y = 0; y < c->h; y++) {
    const int32_t *l = wsisa_image_row(&c->labels, y);
    const uint8_t *m = wsisa_image_row(&c->mask, y);
    int32_t *mk = wsisa_image_row(&c->markers, y);
    for (int x = 0; x < c->w; x++)
      if (m[x]) mk[x] = l[x] ? l[x] + offset : 0;
  }
  return wsisa_cpu_watershed(&c->rgb, &c->markers, &c->mask, &c->labels, &c->sep);
}

/* Level 7 on the crop: c->fin from c->sep. */
static int crop_final(crop *c, const wsisa_separate_params *p) {
  int rc = wsisa_cpu_area_filter(&c->sep, 4, p->min_size_seg, p->max_size_seg, &c->u1);
  return rc ? rc : wsisa_cpu_fill_object_holes(&c->u1, p->fill_holes_conn, &c->fin);
}

static void paste(const crop *c, wsisa_image *out) {
  for (int y = 0; y < c->h; y++) {
    const uint8_t *f = wsisa_image_row(&c->fin, y);
    uint8_t *o = (uint8_t *)wsisa_image_row(out, c->y0 + y) + c->x0;
    for (int x = 0; x < c->w; x++) o[x] |= f[x];
  }
}

/* One group: from the store, or computed (and stored). */
static int do_group(crop *c, const wsisa_separate_params *p, wsisa_object_store *store,
                    int32_t nclasses, wsisa_object_tally *t, wsisa_image *out) {
  int rc = 0;
  t->groups++;
  if (!store) {
    if (!(rc = crop_separate(c, p->watershed_conn, nclasses)) && !(rc = crop_final(c, p)))
      paste(c, out);
    return rc;
  }
  /* the final tier's key: its parameters before the common part */
  uint8_t *key7 = c->key + KEY_PREFIX - 13, *key6 = c->key + KEY_PREFIX - 1;
  const int32_t p7[3] = {p->min_size_seg, p->max_size_seg, p->fill_holes_conn};
  key7[0] = 7;
  memcpy(key7 + 1, p7, sizeof p7);
  const size_t len7 = c->key_len - (KEY_PREFIX - 13), len6 = c->key_len - (KEY_PREFIX - 1);
  const uint64_t h7 = wsisa_object_hash(key7, len7);
  if (wsisa_object_store_get(store, key7, len7, h7, c->bits, c->nbits_bytes)) {
    t->reused++;
    unpack(c->bits, &c->fin);
    paste(c, out);
    return 0;
  }
  key6[0] = 6;
  const uint64_t h6 = wsisa_object_hash(key6, len6);
  if (wsisa_object_store_get(store, key6, len6, h6, c->bits, c->nbits_bytes)) {
    t->separations_reused++;
    unpack(c->bits, &c->sep);
  } else {
    if ((rc = crop_separate(c, p->watershed_conn, nclasses))) return rc;
    pack(&c->sep, c->bits, c->nbits_bytes);
    /* an entry the store cannot take is computed again when next needed */
    (void)wsisa_object_store_put(store, key6, len6, h6, c->bits, c->nbits_bytes);
  }
  if ((rc = crop_final(c, p))) return rc;
  paste(c, out);
  /* key6[0] was written over key7's last parameter byte: write it back */
  memcpy(key7 + 1, p7, sizeof p7);
  pack(&c->fin, c->bits, c->nbits_bytes);
  (void)wsisa_object_store_put(store, key7, len7, h7, c->bits, c->nbits_bytes);
  return 0;
}

int wsisa_cpu_separate(const wsisa_image *rgb, const wsisa_image *mask,
                       const wsisa_separate_params *p, wsisa_object_store *store,
                       wsisa_object_tally *tally, wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  if (mask->type != WSISA_U8 || mask->channels != 1 || !wsisa__image_is(rgb, mask, 3, WSISA_U8) ||
      !wsisa__image_is(out, mask, 1, WSISA_U8) ||
      (p->watershed_conn != 4 && p->watershed_conn != 8) ||
      (p->fill_holes_conn != 4 && p->fill_holes_conn != 8) || width > WSISA_EDT_MAX_SIDE ||
      height > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  wsisa_object_tally t = {0};
  for (int y = 0; y < height; y++) memset(wsisa_image_row(out, y), 0, (size_t)width);
  wsisa__runs runs8 = {0}, bg = {0};
  wsisa_image *inverse = NULL;
  cluster *cl = NULL;
  int32_t *key = NULL, *first = NULL, *list = NULL, *gfirst = NULL, *glist = NULL;
  crop c = {0};
  classes k = {0};
  void *buf = NULL;
  int rc = wsisa__cpu_runs_find(mask, 8, &runs8);
  if (rc) goto done;
  const int32_t n = runs8.n, nruns = runs8.row[height];
  if (!n) goto done;
  /* the tile's background components, watershed_conn */
  rc = wsisa_image_new(width, height, 1, WSISA_U8, &inverse, NULL) ? WSISA_ENOMEM : 0;
  for (int y = 0; y < height && !rc; y++) {
    const uint8_t *m = wsisa_image_row(mask, y);
    uint8_t *v = wsisa_image_row(inverse, y);
    for (int x = 0; x < width; x++) v[x] = m[x] ? 0 : 255;
  }
  if (rc || (rc = wsisa__cpu_runs_find(inverse, p->watershed_conn, &bg))) goto done;
  wsisa_image_free(inverse);
  inverse = NULL;
  /* clusters: boxes and first pixels */
  cl = malloc(((size_t)n + 1) * sizeof *cl);
  key = malloc(((size_t)n + 1) * sizeof *key);
  if (!cl || !key) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  for (int32_t i = 0; i <= n; i++) {
    cl[i] = (cluster){INT32_MAX, INT32_MAX, -1, -1, 0, 0, i};
    key[i] = i;
  }
  for (int y = 0; y < height; y++)
    for (int32_t i = runs8.row[y]; i < runs8.row[y + 1]; i++) {
      const wsisa__run *r = &runs8.run[i];
      cluster *q = &cl[r->id];
      if (q->y1 < 0) q->fx = r->x0, q->fy = y;
      if (r->x0 < q->x0) q->x0 = r->x0;
      if (r->x1 - 1 > q->x1) q->x1 = r->x1 - 1;
      if (y < q->y0) q->y0 = y;
      q->y1 = y;
    }
  if ((rc = bucket_runs(&runs8, nruns, n, key, &first, &list)) ||
      (rc = find_groups(cl, n, &runs8, first, list, height)))
    goto done;
  /* groups: members' runs together, boxes merged into the root's */
  for (int32_t i = 1; i <= n; i++) {
    const int32_t g = key[i] = find(cl, i);
    if (g == i) continue;
    if (cl[i].x0 < cl[g].x0) cl[g].x0 = cl[i].x0;
    if (cl[i].x1 > cl[g].x1) cl[g].x1 = cl[i].x1;
    if (cl[i].y0 < cl[g].y0) cl[g].y0 = cl[i].y0;
    if (cl[i].y1 > cl[g].y1) cl[g].y1 = cl[i].y1;
  }
  if ((rc = bucket_runs(&runs8, nruns, n, key, &gfirst, &glist))) goto done;
  size_t most = 1;
  for (int32_t g = 1; g <= n; g++) {
    if (key[g] != g) continue;
    size_t w = (size_t)(cl[g].x1 - cl[g].x0 + 3), h = (size_t)(cl[g].y1 - cl[g].y0 + 3);
    if (w * h > most) most = w * h;
  }
  /* u8 x4, f32 x2, i32 x2, and the packed bits */
  buf = malloc(most * (4 + 2 * sizeof(float) + 2 * sizeof(int32_t)) + most / 8 + 1);
  if (!buf) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  for (int32_t g = 1; g <= n && !rc; g++) {
    if (key[g] != g) continue;
    c.x0 = cl[g].x0 > 0 ? cl[g].x0 - 1 : 0;
    c.y0 = cl[g].y0 > 0 ? cl[g].y0 - 1 : 0;
    c.w = (cl[g].x1 + 1 < width ? cl[g].x1 + 1 : width - 1) - c.x0 + 1;
    c.h = (cl[g].y1 + 1 < height ? cl[g].y1 + 1 : height - 1) - c.y0 + 1;
    char *b = buf;
    view(&c.f1, b, c.w, c.h, 1, WSISA_F32), b += most * sizeof(float);
    view(&c.f2, b, c.w, c.h, 1, WSISA_F32), b += most * sizeof(float);
    view(&c.markers, b, c.w, c.h, 1, WSISA_I32), b += most * sizeof(int32_t);
    view(&c.labels, b, c.w, c.h, 1, WSISA_I32), b += most * sizeof(int32_t);
    view(&c.mask, b, c.w, c.h, 1, WSISA_U8), b += most;
    view(&c.u1, b, c.w, c.h, 1, WSISA_U8), b += most;
    view(&c.sep, b, c.w, c.h, 1, WSISA_U8), b += most;
    view(&c.fin, b, c.w, c.h, 1, WSISA_U8), b += most;
    c.bits = (uint8_t *)b;
    c.nbits_bytes = ((size_t)c.w * (size_t)c.h + 7) / 8;
    c.rgb = wsisa_image_view((uint8_t *)wsisa_image_row(rgb, c.y0) + 3 * (size_t)c.x0, c.w, c.h,
                             3, WSISA_U8, rgb->stride);
    rc = crop_prepare(&c, &runs8, glist + gfirst[g], gfirst[g + 1] - gfirst[g], height, &bg, &k,
                      store != NULL, p->watershed_conn);
    if (!rc) rc = do_group(&c, p, store, k.n, &t, out);
  }
done:
  if (store && !rc) wsisa_object_store_count(store, &t);
  if (tally) *tally = t;
  wsisa__cpu_runs_free(&runs8);
  wsisa__cpu_runs_free(&bg);
  wsisa_image_free(inverse);
  free(cl);
  free(key);
  free(first);
  free(list);
  free(gfirst);
  free(glist);
  free(c.key);
  free(k.id);
  free(buf);
  return rc;
}
