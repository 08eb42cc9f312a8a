/* Nucleus outlines as GeoJSON (QuPath and other viewers import it): each
 * 4-connected label's outer boundary traced along pixel edges, so the polygon
 * covers exactly the label's pixels (holes aside). */
#include <errno.h>
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

/* Crack following with the region on the right; diagonal neighbours are not
 * joined (4-connectivity). Starts at the top-left corner of the label's first
 * pixel in raster order, heading east. */
static json_t *trace(const wsisa_image *lab, int32_t l, int px, int py, double x0, double y0,
                     double scale) {
  json_t *ring = json_array();
  int cx = px, cy = py, d = 0, prev = -1;
  do {
    int rx, ry, lx, ly;
    ahead(d, cx, cy, &rx, &ry, &lx, &ly);
    if (!in_label(lab, rx, ry, l)) d = (d + 1) % 4;
    else if (in_label(lab, lx, ly, l)) d = (d + 3) % 4;
    if (d != prev)
      json_array_append_new(ring, json_pack("[f,f]", x0 + cx * scale, y0 + cy * scale));
    prev = d;
    cx += DX[d];
    cy += DY[d];
  } while (!(cx == px && cy == py));
  json_array_append_new(ring, json_pack("[f,f]", x0 + px * scale, y0 + py * scale));
  return ring;
}

int wsisa_geojson_write_staged(wsisa_stage *s, const char *path, const wsisa_image *labels,
                               double x0, double y0, double scale, double mpp, wsisa_err *e) {
  if (labels->type != WSISA_I32 || labels->channels != 1)
    return wsisa_error(e, WSISA_EINTERNAL, "GeoJSON needs an i32 label image");
  json_t *features = json_array();
  size_t *area = NULL;
  int32_t max_label = 0;
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) max_label = row[x] > max_label ? row[x] : max_label;
  }
  area = calloc((size_t)max_label + 1, sizeof *area);
  if (!area) {
    json_decref(features);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory for %d outlines", max_label);
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++)
      if (row[x] > 0) area[row[x]]++;
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *row = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) {
      int32_t l = row[x];
      if (l <= 0 || area[l] == 0) continue;
      json_t *ring = trace(labels, l, x, y, x0, y0, scale);
      json_t *feature = json_pack(
          "{s:s, s:{s:s, s:[o]}, s:{s:s, s:{s:s}, s:i, s:f}}", "type", "Feature", "geometry",
          "type", "Polygon", "coordinates", ring, "properties", "objectType", "detection",
          "classification", "name", "Nucleus", "label", l, "area_level0_pixels",
          (double)area[l] * scale * scale);
      json_object_set_new(json_object_get(feature, "properties"), "area_um2",
                          mpp > 0 ? json_real((double)area[l] * scale * scale * mpp * mpp)
                                  : json_null());
      json_array_append_new(features, feature);
      area[l] = 0; /* traced: later pixels of this label are skipped */
    }
  }
  free(area);
  json_t *root = json_pack("{s:s, s:o}", "type", "FeatureCollection", "features", features);
  char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(10));
  json_decref(root);
  if (!text) return wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  const char *temp = wsisa_stage_add(s, path, e);
  FILE *f = temp ? fopen(temp, "w") : NULL;
  int rc = 0;
  if (!temp) rc = e && e->code ? e->code : WSISA_EIO;
  else if (!f) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (f) {
    errno = 0;
    fputs(text, f);
    rc = wsisa_output_close(f, temp, e);
  }
  free(text);
  return rc;
}

int wsisa_geojson_write_at(const char *path, const wsisa_image *labels, double x0, double y0,
                           double scale, wsisa_err *e) {
  wsisa_stage s = WSISA_STAGE_INIT;
  int rc = wsisa_geojson_write_staged(&s, path, labels, x0, y0, scale, 0, e);
  if (!rc) rc = wsisa_stage_commit(&s, e);
  if (rc) wsisa_stage_abort(&s);
  return rc;
}

int wsisa_geojson_write(const char *path, const wsisa_image *labels, wsisa_err *e) {
  return wsisa_geojson_write_at(path, labels, 0, 0, 1, e);
}
