/* Reference annotations: nuclei someone drew, read and checked against the
 * slide they annotate, and turned into a reference label image on a tile's
 * target-resolution grid, so a study's metrics can compare every run with
 * them instead of with the default-parameter run.
 *
 * Sources:
 * - GeoJSON (QuPath's export): a FeatureCollection, a Feature or an array of
 *   Features whose geometries are Polygon or MultiPolygon, in level-0 pixel
 *   coordinates on the pixel-corner lattice (pixel (i, j) spans [i, i+1) x
 *   [j, j+1)). Each feature is one nucleus.
 * - A label image (8-, 16- or 32-bit, PNG or TIFF): each value > 0 is a
 *   nucleus; or a binary mask, whose 8-connected components of non-zero
 *   pixels are the nuclei. It lies on the slide at `origin` (level-0 pixels),
 *   each of its pixels `downsample` level-0 pixels wide.
 *
 * The rules, which tests/golden/make_annotation.py implements independently:
 * - Target pixel (i, j) of the target-pixel rectangle at (x, y) is read from
 *   level-0 [(x+i) s, (x+i+1) s) (s = wsisa_scale_step); its centre is
 *   xc = ((double)(x + i) + 0.5) * s, likewise yc.
 * - Vertices lie on the slide: one at most WSISA_ANNOT_EDGE_SLACK level-0
 *   pixels past its edge (other programs round their outlines outwards) is
 *   moved onto the edge; one further out is refused.
 * - Polygons: a pixel is in a polygon when its centre is, by the even-odd
 *   rule over all the polygon's rings (so holes are out, and a
 *   self-intersecting ring is filled where a ray from the centre crosses it
 *   an odd number of times). An edge (x1, y1)-(x2, y2) crosses the ray
 *   from the centre towards +x when (y1 > yc) != (y2 > yc) and
 *   xc < x1 + (yc - y1) * (x2 - x1) / (y2 - y1), computed in double in that
 *   order: a centre on a left or top edge is inside, on a right or bottom
 *   edge outside, so an integer rectangle covers exactly its pixels. A
 *   feature covers the union of its polygons; a pixel in several features
 *   belongs to the first in the file.
 * - Label images, by nearest label (never averaged): the pixel takes the
 *   label of label-image pixel (floor((xc - ox) / d), floor((yc - oy) / d)).
 * - A tile's labels are renumbered 1..n in raster order of each object's
 *   first pixel (the canonical form the object matching reads).
 * - Which tiles are annotated: for a label image, those whose every pixel
 *   centre falls on the image; for GeoJSON with a `region` (level-0
 *   rectangle drawn exhaustively), those whose every pixel centre falls in
 *   the region; for GeoJSON without one, those where some polygon covers a
 *   pixel centre. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "io/io.h"

static const char *const kind_names[] = {"none", "geojson", "labels", "mask"};

const char *wsisa_annot_kind_name(wsisa_annot_kind kind) {
  return (unsigned)kind < sizeof kind_names / sizeof *kind_names ? kind_names[kind] : "?";
}

typedef struct ring {
  size_t first, n; /* positions in pts (x, y pairs), closed: the last is the first */
} ring;

typedef struct polygon {
  size_t first_ring, nrings;
  double x0, y0, x1, y1; /* bounding box */
  int32_t feature;       /* 1-based: the feature's place in the file */
} polygon;

struct wsisa_annotation {
  wsisa_annot_spec spec;
  char *path, *input;
  /* GeoJSON */
  double *pts;
  size_t npts, cap_pts;
  ring *rings;
  size_t nrings, cap_rings;
  polygon *polys;
  size_t npolys, cap_polys;
  int32_t nfeatures;
  /* label images: i32, 0 background */
  wsisa_image *labels;
  size_t nobjects;
};

void wsisa_annotation_free(wsisa_annotation *a) {
  if (!a) return;
  free(a->pts);
  free(a->rings);
  free(a->polys);
  wsisa_image_free(a->labels);
  free(a->path);
  free(a->input);
  free(a);
}

const wsisa_annot_spec *wsisa_annotation_spec(const wsisa_annotation *a) { return &a->spec; }

size_t wsisa_annotation_objects(const wsisa_annotation *a) {
  return a->spec.kind == WSISA_ANNOT_GEOJSON ? (size_t)a->nfeatures : a->nobjects;
}

/* ---- GeoJSON -------------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * size);
  if (!q) return -1;
  *p = q;
  *cap = n;
  return 0;
}

/* One ring: at least four positions [x, y, ...], finite, closed, inside the
 * slide. `where` names the feature for messages. */
static int add_ring(wsisa_annotation *a, json_t *r, const char *where, size_t index, polygon *pg,
                    wsisa_err *e) {
  const char *path = a->path;
  if (!json_is_array(r) || json_array_size(r) < 4)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: %s: ring %zu is not an array of at least 4 positions (a closed "
                       "linear ring)",
                       path, where, index);
  size_t n = json_array_size(r);
  if (grow((void **)&a->pts, &a->cap_pts, 2 * (a->npts + n), sizeof *a->pts) ||
      grow((void **)&a->rings, &a->cap_rings, a->nrings + 1, sizeof *a->rings))
    return wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  double *p = a->pts + 2 * a->npts;
  for (size_t k = 0; k < n; k++) {
    json_t *pos = json_array_get(r, k);
    json_t *x = json_array_get(pos, 0), *y = json_array_get(pos, 1);
    if (!json_is_array(pos) || !json_is_number(x) || !json_is_number(y) ||
        !isfinite(json_number_value(x)) || !isfinite(json_number_value(y)))
      return wsisa_error(e, WSISA_EFORMAT, "%s: %s: ring %zu, position %zu is not [x, y]", path,
                         where, index, k);
    p[2 * k] = json_number_value(x);
    p[2 * k + 1] = json_number_value(y);
    const double w0 = (double)a->spec.width0, h0 = (double)a->spec.height0;
    if (p[2 * k] < -WSISA_ANNOT_EDGE_SLACK || p[2 * k + 1] < -WSISA_ANNOT_EDGE_SLACK ||
        p[2 * k] > w0 + WSISA_ANNOT_EDGE_SLACK || p[2 * k + 1] > h0 + WSISA_ANNOT_EDGE_SLACK)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: %s: vertex (%g, %g) outside %s (level 0 is %lldx%lld pixels; "
                         "coordinates are level-0 pixels)",
                         path, where, p[2 * k], p[2 * k + 1], a->input,
                         (long long)a->spec.width0, (long long)a->spec.height0);
    /* a hair past the edge, as programs that round their outlines write them:
     * on the edge (no pixel centre lies between) */
    p[2 * k] = fmin(fmax(p[2 * k], 0), w0);
    p[2 * k + 1] = fmin(fmax(p[2 * k + 1], 0), h0);
    pg->x0 = fmin(pg->x0, p[2 * k]);
    pg->y0 = fmin(pg->y0, p[2 * k + 1]);
    pg->x1 = fmax(pg->x1, p[2 * k]);
    pg->y1 = fmax(pg->y1, p[2 * k + 1]);
  }
  if (p[0] != p[2 * (n - 1)] || p[1] != p[2 * (n - 1) + 1])
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: %s: ring %zu is not closed (its last position is not its first)",
                       path, where, index);
  a->rings[a->nrings++] = (ring){a->npts, n};
  a->npts += n;
  return 0;
}

/* One Polygon's coordinates: an outer ring and its holes. */
static int add_polygon(wsisa_annotation *a, json_t *coords, const char *where, wsisa_err *e) {
  if (!json_is_array(coords) || json_array_size(coords) == 0)
    return wsisa_error(e, WSISA_EFORMAT, "%s: %s: a polygon without rings", a->path, where);
  if (grow((void **)&a->polys, &a->cap_polys, a->npolys + 1, sizeof *a->polys))
    return wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", a->path);
  polygon pg = {a->nrings, json_array_size(coords), INFINITY, INFINITY, -INFINITY, -INFINITY,
                a->nfeatures};
  for (size_t r = 0; r < pg.nrings; r++) {
    int rc = add_ring(a, json_array_get(coords, r), where, r, &pg, e);
    if (rc) return rc;
  }
  a->polys[a->npolys++] = pg;
  return 0;
}

static int add_feature(wsisa_annotation *a, json_t *f, size_t index, wsisa_err *e) {
  char where[64];
  snprintf(where, sizeof where, "features[%zu]", index);
  json_t *type = json_object_get(f, "type");
  if (!json_is_object(f) || !json_is_string(type) || strcmp(json_string_value(type), "Feature"))
    return wsisa_error(e, WSISA_EFORMAT, "%s: %s: not a GeoJSON Feature", a->path, where);
  json_t *g = json_object_get(f, "geometry");
  json_t *gtype = json_object_get(g, "type"), *coords = json_object_get(g, "coordinates");
  if (!json_is_object(g) || !json_is_string(gtype))
    return wsisa_error(e, WSISA_EFORMAT, "%s: %s: no geometry (a nucleus is a Polygon)",
                       a->path, where);
  const char *t = json_string_value(gtype);
  a->nfeatures++;
  if (strcmp(t, "Polygon") == 0) return add_polygon(a, coords, where, e);
  if (strcmp(t, "MultiPolygon") != 0)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: %s: a %s, not a polygon (the reference takes Polygon and "
                       "MultiPolygon geometries)",
                       a->path, where, t);
  if (!json_is_array(coords) || json_array_size(coords) == 0)
    return wsisa_error(e, WSISA_EFORMAT, "%s: %s: a MultiPolygon without polygons", a->path,
                       where);
  for (size_t k = 0; k < json_array_size(coords); k++) {
    int rc = add_polygon(a, json_array_get(coords, k), where, e);
    if (rc) return rc;
  }
  return 0;
}

static int load_geojson(wsisa_annotation *a, wsisa_err *e) {
  json_error_t err;
  char *text;
  size_t len;
  int read_rc = wsisa_text_read(a->path, WSISA_TEXT_MAX_GEOJSON, "a GeoJSON annotation", &text,
                                &len, e);
  if (read_rc) return read_rc;
  json_t *root = json_loadb(text, len, 0, &err);
  free(text);
  if (!root)
    return wsisa_error(e, WSISA_EFORMAT, "%s:%d:%d: not JSON: %s", a->path, err.line,
                       err.column, err.text);
  json_t *features = NULL, *type = json_object_get(root, "type");
  int rc = 0;
  if (json_is_array(root)) {
    features = root;
  } else if (json_is_string(type) && strcmp(json_string_value(type), "FeatureCollection") == 0) {
    features = json_object_get(root, "features");
    if (!json_is_array(features)) features = NULL;
  } else if (json_is_string(type) && strcmp(json_string_value(type), "Feature") == 0) {
    rc = add_feature(a, root, 0, e);
  } else {
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: not GeoJSON features (a FeatureCollection, a Feature or an array of "
                     "Features)",
                     a->path);
  }
  for (size_t i = 0; !rc && features && i < json_array_size(features); i++)
    rc = add_feature(a, json_array_get(features, i), i, e);
  json_decref(root);
  if (!rc && a->npolys == 0) rc = wsisa_error(e, WSISA_EFORMAT, "%s: no polygon", a->path);
  return rc;
}

/* ---- label images ----------------------------------------------------------------- */

/* 8-connected components of the non-zero pixels of `src` into a new i32
 * image, numbered in raster order of their first pixel. */
static int mask_components(const wsisa_image *src, wsisa_image **out, size_t *n, wsisa_err *e) {
  const int w = src->width, h = src->height;
  wsisa_image *lab = NULL;
  int rc = wsisa_image_new(w, h, 1, WSISA_I32, &lab, e);
  if (rc) return rc;
  size_t *stack = malloc((size_t)w * h * sizeof *stack);
  if (!stack) {
    wsisa_image_free(lab);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory labelling a mask");
  }
  const size_t bytes = wsisa_dtype_size(src->type);
  int32_t next = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const unsigned char *p = (const unsigned char *)wsisa_image_row(src, y) + (size_t)x * bytes;
      int on = 0;
      for (size_t b = 0; b < bytes; b++) on |= p[b] != 0;
      if (!on || ((int32_t *)wsisa_image_row(lab, y))[x]) continue;
      ++next;
      size_t top = 0;
      stack[top++] = (size_t)y * w + x;
      ((int32_t *)wsisa_image_row(lab, y))[x] = next;
      while (top) {
        size_t at = stack[--top];
        int cy = (int)(at / (size_t)w), cx = (int)(at % (size_t)w);
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) {
            int nx = cx + dx, ny = cy + dy;
            if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
            int32_t *l = (int32_t *)wsisa_image_row(lab, ny) + nx;
            const unsigned char *q =
                (const unsigned char *)wsisa_image_row(src, ny) + (size_t)nx * bytes;
            int qon = 0;
            for (size_t b = 0; b < bytes; b++) qon |= q[b] != 0;
            if (!qon || *l) continue;
            *l = next;
            stack[top++] = (size_t)ny * w + nx;
          }
      }
    }
  free(stack);
  *out = lab;
  *n = (size_t)next;
  return 0;
}

/* Instance labels as i32 (u8, u16 and i32 files; negative values refused). */
static int label_values(const wsisa_annotation *a, const wsisa_image *src, wsisa_image **out,
                        size_t *n, wsisa_err *e) {
  wsisa_image *lab = NULL;
  int rc = wsisa_image_new(src->width, src->height, 1, WSISA_I32, &lab, e);
  if (rc) return rc;
  int32_t most = 0;
  for (int y = 0; y < src->height && !rc; y++) {
    int32_t *d = wsisa_image_row(lab, y);
    for (int x = 0; x < src->width; x++) {
      int32_t v = src->type == WSISA_U8    ? ((const uint8_t *)wsisa_image_row(src, y))[x]
                  : src->type == WSISA_U16 ? ((const uint16_t *)wsisa_image_row(src, y))[x]
                                           : ((const int32_t *)wsisa_image_row(src, y))[x];
      if (v < 0) {
        rc = wsisa_error(e, WSISA_EFORMAT, "%s: negative label %d at (%d, %d)", a->path, v, x, y);
        break;
      }
      d[x] = v;
      most = v > most ? v : most;
    }
  }
  if (rc) {
    wsisa_image_free(lab);
    return rc;
  }
  *out = lab;
  *n = (size_t)most; /* at most: labels need not be consecutive */
  return 0;
}

static int load_labels(wsisa_annotation *a, wsisa_err *e) {
  const wsisa_annot_spec *s = &a->spec;
  wsisa_image *img = NULL;
  int rc = wsisa_image_read(a->path, &img, e);
  if (rc) return rc;
  if (img->channels != 1)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: %d channels; a %s image has one", a->path,
                     img->channels, s->kind == WSISA_ANNOT_MASK ? "mask" : "label");
  else if (img->type == WSISA_F32)
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: floating-point pixels; labels are whole numbers (8, 16 or 32 bits)",
                     a->path);
  const double d = s->downsample;
  if (!rc && (s->origin_x < 0 || s->origin_y < 0 || s->origin_x >= (double)s->width0 ||
              s->origin_y >= (double)s->height0))
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: origin (%g, %g) outside %s (level 0 is %lldx%lld pixels)",
                     a->path, s->origin_x, s->origin_y, a->input, (long long)s->width0,
                     (long long)s->height0);
  /* its last pixel must start on the slide: a whole-slide image at this
   * downsample is at most ceil(level-0 size / downsample) wide */
  if (!rc && ((double)(img->width - 1) * d + s->origin_x >= (double)s->width0 ||
              (double)(img->height - 1) * d + s->origin_y >= (double)s->height0))
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: %dx%d pixels of %g level-0 pixels from (%g, %g) reach past %s (level 0 "
                     "is %lldx%lld pixels, so at most %.0fx%.0f): wrong size for it",
                     a->path, img->width, img->height, d, s->origin_x, s->origin_y, a->input,
                     (long long)s->width0, (long long)s->height0,
                     ceil(((double)s->width0 - s->origin_x) / d),
                     ceil(((double)s->height0 - s->origin_y) / d));
  if (!rc)
    rc = s->kind == WSISA_ANNOT_MASK ? mask_components(img, &a->labels, &a->nobjects, e)
                                     : label_values(a, img, &a->labels, &a->nobjects, e);
  wsisa_image_free(img);
  return rc;
}

int wsisa_annotation_load(const wsisa_annot_spec *spec, wsisa_annotation **out, wsisa_err *e) {
  *out = NULL;
  wsisa_annotation *a = calloc(1, sizeof *a);
  if (!a || !(a->path = strdup(spec->path)) ||
      !(a->input = strdup(spec->input ? spec->input : "the slide"))) {
    wsisa_annotation_free(a);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  a->spec = *spec;
  a->spec.path = a->path;
  a->spec.input = a->input;
  int rc = 0;
  if (spec->kind == WSISA_ANNOT_GEOJSON) {
    const wsisa_rect *r = &spec->region;
    if (spec->has_region && (r->width <= 0 || r->height <= 0 || r->x < 0 || r->y < 0 ||
                             r->x + r->width > spec->width0 || r->y + r->height > spec->height0))
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "%s: region %lld,%lld,%lld,%lld outside %s (level 0 is %lldx%lld pixels)",
                       a->path, (long long)r->x, (long long)r->y, (long long)r->width,
                       (long long)r->height, a->input, (long long)spec->width0,
                       (long long)spec->height0);
    if (!rc) rc = load_geojson(a, e);
  } else if (spec->kind == WSISA_ANNOT_LABELS || spec->kind == WSISA_ANNOT_MASK) {
    rc = spec->downsample > 0 ? load_labels(a, e)
                              : wsisa_error(e, WSISA_EINTERNAL, "%s: no downsample", a->path);
  } else {
    rc = wsisa_error(e, WSISA_EINTERNAL, "%s: no annotation kind", a->path);
  }
  if (rc) {
    wsisa_annotation_free(a);
    return rc;
  }
  *out = a;
  return 0;
}

/* ---- the tile's grid ------------------------------------------------------------------ */

typedef struct grid {
  int64_t x, y;
  int w, h;
  double step;
} grid;

/* Centre of pixel i of a line starting at target pixel x0, in level-0 pixels. */
static double centre(int64_t x0, int64_t i, double step) { return ((double)(x0 + i) + 0.5) * step; }

/* The first pixel i in [0, n] whose centre is >= c (n: none). */
static int first_at_or_after(int64_t x0, int n, double step, double c) {
  double guess = ceil(c / step - 0.5) - (double)x0;
  int64_t i = guess < 0 ? 0 : guess > n ? n : (int64_t)guess;
  while (i > 0 && centre(x0, i - 1, step) >= c) i--;
  while (i < n && centre(x0, i, step) < c) i++;
  return (int)i;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Fill the pixels of `g` inside polygon `pg` (even-odd over its rings) with
 * `label` where out is still 0; with out NULL, only say whether any pixel is
 * inside (1) and stop there. `xs` is a scratch buffer for the crossings. */
static int fill_polygon(const wsisa_annotation *a, const polygon *pg, const grid *g,
                        int32_t *out, int32_t label, double **xs, size_t *cap, wsisa_err *e) {
  const double step = g->step;
  /* rows whose centre may lie within the polygon's box */
  int j0 = first_at_or_after(g->y, g->h, step, pg->y0);
  int j1 = first_at_or_after(g->y, g->h, step, pg->y1); /* centres < y1: a centre at y1 is out */
  int i0 = first_at_or_after(g->x, g->w, step, pg->x0);
  int i1 = first_at_or_after(g->x, g->w, step, pg->x1);
  if (j0 >= j1 || i0 >= i1) return 0;
  size_t edges = 0;
  for (size_t r = 0; r < pg->nrings; r++) edges += a->rings[pg->first_ring + r].n;
  if (grow((void **)xs, cap, edges, sizeof **xs))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory rasterising %s", a->path);
  int hit = 0;
  for (int j = j0; j < j1; j++) {
    const double yc = centre(g->y, j, step);
    size_t n = 0;
    for (size_t r = 0; r < pg->nrings; r++) {
      const ring *rg = &a->rings[pg->first_ring + r];
      const double *p = a->pts + 2 * rg->first;
      for (size_t k = 0; k + 1 < rg->n; k++) {
        const double x1 = p[2 * k], y1 = p[2 * k + 1], x2 = p[2 * k + 2], y2 = p[2 * k + 3];
        if ((y1 > yc) != (y2 > yc)) (*xs)[n++] = x1 + (yc - y1) * (x2 - x1) / (y2 - y1);
      }
    }
    qsort(*xs, n, sizeof **xs, cmp_double);
    /* inside: an odd number of crossings to the right, i.e. [c0, c1), [c2, c3), ... */
    for (size_t k = 0; k + 1 < n; k += 2) {
      int from = first_at_or_after(g->x, g->w, step, (*xs)[k]);
      int to = first_at_or_after(g->x, g->w, step, (*xs)[k + 1]);
      if (from >= to) continue;
      if (!out) return 1;
      hit = 1;
      int32_t *row = out + (size_t)j * g->w;
      for (int i = from; i < to; i++)
        if (!row[i]) row[i] = label;
    }
  }
  return hit;
}

/* Label-image pixel of each tile column (or row): floor((c - origin) / d). */
static void nearest(int64_t x0, int n, double step, double origin, double d, int64_t *idx) {
  for (int i = 0; i < n; i++) idx[i] = (int64_t)floor((centre(x0, i, step) - origin) / d);
}

static int within(const wsisa_rect *r, const grid *g) {
  /* every pixel centre in [r.x, r.x + r.width) x [r.y, r.y + r.height) */
  return centre(g->x, 0, g->step) >= (double)r->x &&
         centre(g->x, g->w - 1, g->step) < (double)(r->x + r->width) &&
         centre(g->y, 0, g->step) >= (double)r->y &&
         centre(g->y, g->h - 1, g->step) < (double)(r->y + r->height);
}

static int label_extent_covers(const wsisa_annotation *a, const grid *g) {
  const wsisa_annot_spec *s = &a->spec;
  int64_t first, last;
  nearest(g->x, 1, g->step, s->origin_x, s->downsample, &first);
  nearest(g->x + g->w - 1, 1, g->step, s->origin_x, s->downsample, &last);
  if (first < 0 || last >= a->labels->width) return 0;
  nearest(g->y, 1, g->step, s->origin_y, s->downsample, &first);
  nearest(g->y + g->h - 1, 1, g->step, s->origin_y, s->downsample, &last);
  return first >= 0 && last < a->labels->height;
}

int wsisa_annotation_covers(const wsisa_annotation *a, const wsisa_scale *scale, int64_t x,
                            int64_t y, int w, int h) {
  grid g = {x, y, w, h, wsisa_scale_step(scale)};
  if (w <= 0 || h <= 0) return 0;
  if (a->spec.kind != WSISA_ANNOT_GEOJSON) return label_extent_covers(a, &g);
  if (a->spec.has_region) return within(&a->spec.region, &g);
  double *xs = NULL;
  size_t cap = 0;
  int any = 0;
  for (size_t p = 0; p < a->npolys && any == 0; p++) any = fill_polygon(a, &a->polys[p], &g, NULL, 0, &xs, &cap, NULL);
  free(xs);
  return any > 0;
}

/* ---- canonical labels ---------------------------------------------------------------- */

/* Renumber the labels > 0 of `lab` 1..n in raster order of first pixels;
 * values are below `bound` when bound > 0 (an array map), else any
 * (an open-addressing map). */
static int canonical(wsisa_image *lab, size_t bound, size_t *n, wsisa_err *e) {
  int use_array = bound > 0 && bound <= (size_t)64 << 20;
  size_t cap = use_array ? bound + 1 : 1024;
  int32_t *key = use_array ? NULL : calloc(cap, sizeof *key);
  int32_t *val = calloc(cap, sizeof *val);
  if ((!use_array && !key) || !val) {
    free(key);
    free(val);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory renumbering labels");
  }
  size_t used = 0;
  int32_t next = 0;
  int rc = 0;
  for (int y = 0; y < lab->height && !rc; y++) {
    int32_t *row = wsisa_image_row(lab, y);
    for (int x = 0; x < lab->width; x++) {
      int32_t v = row[x];
      if (v <= 0) continue;
      if (use_array) {
        if (!val[v]) val[v] = ++next;
        row[x] = val[v];
        continue;
      }
      if (2 * (used + 1) > cap) {
        /* grow: rehash every key */
        size_t ncap = 2 * cap;
        int32_t *nk = calloc(ncap, sizeof *nk), *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
          free(nk);
          free(nv);
          rc = wsisa_error(e, WSISA_ENOMEM, "out of memory renumbering labels");
          break;
        }
        for (size_t k = 0; k < cap; k++) {
          if (!key[k]) continue;
          size_t h = ((uint32_t)key[k] * 2654435761u) & (ncap - 1);
          while (nk[h]) h = (h + 1) & (ncap - 1);
          nk[h] = key[k];
          nv[h] = val[k];
        }
        free(key);
        free(val);
        key = nk, val = nv, cap = ncap;
      }
      size_t h = ((uint32_t)v * 2654435761u) & (cap - 1);
      while (key[h] && key[h] != v) h = (h + 1) & (cap - 1);
      if (!key[h]) {
        key[h] = v;
        val[h] = ++next;
        used++;
      }
      row[x] = val[h];
    }
  }
  free(key);
  free(val);
  *n = (size_t)next;
  return rc;
}

int wsisa_annotation_rasterize(const wsisa_annotation *a, const wsisa_scale *scale, int64_t x,
                               int64_t y, int w, int h, wsisa_image **labels, size_t *n,
                               wsisa_err *e) {
  *labels = NULL;
  *n = 0;
  if (!wsisa_annotation_covers(a, scale, x, y, w, h))
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: the tile at %lld,%lld (%dx%d target pixels) is not annotated", a->path,
                       (long long)x, (long long)y, w, h);
  wsisa_image *lab = NULL;
  int rc = wsisa_image_new(w, h, 1, WSISA_I32, &lab, e);
  if (rc) return rc;
  grid g = {x, y, w, h, wsisa_scale_step(scale)};
  if (a->spec.kind == WSISA_ANNOT_GEOJSON) {
    double *xs = NULL;
    size_t cap = 0;
    /* packed rows: the image was made tight */
    int32_t *pix = lab->data;
    for (size_t p = 0; p < a->npolys && rc >= 0; p++)
      rc = fill_polygon(a, &a->polys[p], &g, pix, a->polys[p].feature, &xs, &cap, e);
    free(xs);
    if (rc > 0) rc = 0;
    if (!rc) rc = canonical(lab, (size_t)a->nfeatures, n, e);
  } else {
    const wsisa_annot_spec *s = &a->spec;
    int64_t *cols = malloc((size_t)w * sizeof *cols), *rows = malloc((size_t)h * sizeof *rows);
    if (!cols || !rows) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    if (!rc) {
      nearest(x, w, g.step, s->origin_x, s->downsample, cols);
      nearest(y, h, g.step, s->origin_y, s->downsample, rows);
      for (int j = 0; j < h; j++) {
        const int32_t *src = wsisa_image_row(a->labels, (int)rows[j]);
        int32_t *dst = wsisa_image_row(lab, j);
        for (int i = 0; i < w; i++) dst[i] = src[cols[i]];
      }
      rc = canonical(lab, a->nobjects < ((size_t)1 << 26) ? a->nobjects : 0, n, e);
    }
    free(cols);
    free(rows);
  }
  if (rc) {
    wsisa_image_free(lab);
    return rc;
  }
  *labels = lab;
  return 0;
}
