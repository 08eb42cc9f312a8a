/* Nucleus outlines as GeoJSON (QuPath and other viewers import it): each
 * 4-connected label's outer boundary traced along pixel edges, so the polygon
 * covers exactly the label's pixels (holes aside), every vertex on the slide.
 * A FeatureCollection is written feature by feature, so a whole slide's
 * nuclei never need to be held at once. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "io/csv.h"
#include "io/io.h"

/* Directions in clockwise order (y down): east, south, west, north. */
static const int DX[4] = {1, 0, -1, 0}, DY[4] = {0, 1, 0, -1};

static int in_label(const wsisa_image *lab, int x, int y, int32_t l) {
  if (x < 0 || y < 0 || x >= lab->width || y >= lab->height) return 0;
  return ((const int32_t *)wsisa_image_row(lab, y))[x] == l;
}

/* Pixels ahead of corner (cx, cy) heading d: to the right and to the left of
 * the edge going straight on. */
static void ahead(int d, int cx, int cy, int *rx, int *ry, int *lx, int *ly) {
  static const int RX[4] = {0, -1, -1, 0}, RY[4] = {0, 0, -1, -1};
  static const int LX[4] = {0, 0, -1, -1}, LY[4] = {-1, 0, 0, -1};
  *rx = cx + RX[d], *ry = cy + RY[d], *lx = cx + LX[d], *ly = cy + LY[d];
}

/* A corner of the pixel lattice in level-0 pixels, on the slide: a corner
 * past its edge (a target pixel of a resampled level reaching beyond the
 * slide's last level-0 pixel) is taken on the edge. */
static json_t *vertex(const wsisa_outline_place *p, int cx, int cy) {
  double x = p->x0 + cx * p->scale, y = p->y0 + cy * p->scale;
  if (p->width0 > 0) x = fmin(fmax(x, 0), p->width0);
  if (p->height0 > 0) y = fmin(fmax(y, 0), p->height0);
  return json_pack("[f,f]", x, y);
}

/* Crack following with the region on the right; diagonal neighbours are not
 * joined (4-connectivity). Starts at the top-left corner of the label's first
 * pixel in raster order, heading east. */
static json_t *trace(const wsisa_image *lab, int32_t l, int px, int py,
                     const wsisa_outline_place *p) {
  json_t *ring = json_array();
  int cx = px, cy = py, d = 0, prev = -1;
  do {
    int rx, ry, lx, ly;
    ahead(d, cx, cy, &rx, &ry, &lx, &ly);
    if (!in_label(lab, rx, ry, l)) d = (d + 1) % 4;
    else if (in_label(lab, lx, ly, l)) d = (d + 3) % 4;
    if (d != prev) json_array_append_new(ring, vertex(p, cx, cy));
    prev = d;
    cx += DX[d];
    cy += DY[d];
  } while (!(cx == px && cy == py));
  json_array_append_new(ring, vertex(p, px, py));
  return ring;
}

struct wsisa_geojson_writer {
  FILE *f;
  char *temp;  /* the staged name written */
  size_t written;
};

int wsisa_geojson_open(struct wsisa_stage *s, const char *path, wsisa_geojson_writer **out,
                       wsisa_err *e) {
  *out = NULL;
  const char *temp = wsisa_stage_add(s, path, e);
  if (!temp) return e && e->code ? e->code : WSISA_EIO;
  wsisa_geojson_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->temp = strdup(temp))) {
    free(w);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  if (!(w->f = fopen(temp, "w"))) {
    int rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
    free(w->temp);
    free(w);
    return rc;
  }
  errno = 0; /* a failing write leaves its reason here (wsisa_output_close) */
  fputs("{\"type\":\"FeatureCollection\",\"features\":[", w->f);
  *out = w;
  return 0;
}

/* A nucleus's id in the UUID form QuPath keeps for its objects: `salt` (the
 * slide's) then the nucleus's number, so ids stay unique when several slides'
 * nuclei meet in one project. */
static void uuid_of(uint32_t salt, uint64_t id, char *buf, size_t cap) {
  snprintf(buf, cap, "%08x-0000-4000-8000-%012llx", (unsigned)salt,
           (unsigned long long)(id & 0xffffffffffffULL));
}

int wsisa_geojson_add(wsisa_geojson_writer *w, const wsisa_image *labels,
                      const wsisa_outline_place *p, const wsisa_geojson_ids *ids,
                      wsisa_err *e) {
  if (labels->type != WSISA_I32 || labels->channels != 1)
    return wsisa_error(e, WSISA_EINTERNAL, "GeoJSON needs an i32 label image");
  int32_t max_label = 0;
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) max_label = row[x] > max_label ? row[x] : max_label;
  }
  if (!max_label) return 0;
  /* per label: its pixels and its first pixel in raster order */
  const size_t n = (size_t)max_label + 1;
  size_t *area = calloc(n, sizeof *area);
  int *first = malloc(2 * n * sizeof *first);
  if (!area || !first) {
    free(area);
    free(first);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory for %d outlines", max_label);
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) {
      const int32_t l = row[x];
      if (l <= 0) continue;
      if (!area[l]++) first[2 * l] = x, first[2 * l + 1] = y;
    }
  }
  const double px_area = p->scale * p->scale;
  int rc = 0;
  for (int32_t l = 1; l <= max_label && !rc; l++) {
    if (!area[l]) continue;
    json_t *ring = trace(labels, l, first[2 * l], first[2 * l + 1], p);
    json_t *props = json_pack("{s:s, s:{s:s}}", "objectType", "detection", "classification",
                              "name", "Nucleus");
    json_t *feature = json_pack("{s:s}", "type", "Feature");
    if (ids) {
      char uuid[48];
      const uint64_t id = ids->first + (uint64_t)(l - 1);
      uuid_of(ids->salt, id, uuid, sizeof uuid);
      json_object_set_new(feature, "id", json_string(uuid));
      json_object_set_new(props, "nucleus_id", json_integer((json_int_t)id));
      if (ids->tile >= 0) json_object_set_new(props, "tile", json_integer(ids->tile));
    } else {
      json_object_set_new(props, "label", json_integer(l));
    }
    json_object_set_new(feature, "geometry",
                        json_pack("{s:s, s:[o]}", "type", "Polygon", "coordinates", ring));
    json_object_set_new(props, "area_level0_pixels", json_real((double)area[l] * px_area));
    json_object_set_new(props, "area_um2", p->mpp > 0 ? json_real((double)area[l] * px_area *
                                                                  p->mpp * p->mpp)
                                                      : json_null());
    json_object_set_new(feature, "properties", props);
    if (w->written++) fputc(',', w->f);
    if (json_dumpf(feature, w->f, JSON_COMPACT | JSON_REAL_PRECISION(10)) || ferror(w->f)) {
      /* the system's reason, under the name asked for (a full disk fails
       * here first, not at the close) */
      char name[WSISA_PATH_MAX];
      wsisa_output_name(w->temp, name, sizeof name);
      rc = wsisa_error(e, WSISA_EIO, "%s: %s", name, strerror(errno ? errno : EIO));
    }
    json_decref(feature);
  }
  free(area);
  free(first);
  return rc;
}

size_t wsisa_geojson_count(const wsisa_geojson_writer *w) { return w ? w->written : 0; }

int wsisa_geojson_close(wsisa_geojson_writer *w, wsisa_err *e) {
  if (!w) return 0;
  fputs("]}", w->f);
  int rc = wsisa_output_close(w->f, w->temp, e);
  free(w->temp);
  free(w);
  return rc;
}

int wsisa_geojson_write_staged(wsisa_stage *s, const char *path, const wsisa_image *labels,
                               const wsisa_outline_place *p, wsisa_err *e) {
  wsisa_geojson_writer *w = NULL;
  int rc = wsisa_geojson_open(s, path, &w, e);
  if (!rc) rc = wsisa_geojson_add(w, labels, p, NULL, e);
  if (w) {
    int crc = wsisa_geojson_close(w, e);
    if (!rc) rc = crc;
  }
  return rc;
}

int wsisa_geojson_write_at(const char *path, const wsisa_image *labels, double x0, double y0,
                           double scale, wsisa_err *e) {
  wsisa_stage s = WSISA_STAGE_INIT;
  const wsisa_outline_place p = {.x0 = x0, .y0 = y0, .scale = scale};
  int rc = wsisa_geojson_write_staged(&s, path, labels, &p, e);
  if (!rc) rc = wsisa_stage_commit(&s, e);
  if (rc) wsisa_stage_abort(&s);
  return rc;
}
