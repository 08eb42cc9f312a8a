/* Reading a tile in the estimate (docs/architecture.md, "The estimate"): the
 * executor reads a tile's pixels (the slide's region and its halo, decoded,
 * with the colour statistics) on the submitting thread when it opens the
 * tile, before the tile stage is submitted, and no StarPU task accounts for
 * that time. Calibration times the read of each of its tiles as a run reads
 * it (median of a few reads, each opening the slide as a run does); the
 * estimate prices a tile's read by the calibrated tile nearest in pixels,
 * per pixel, and its simulation holds the submitter for it. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate.h"

#define READS 5

int wsisa__reads_probe(const wsisa_tile_ref *tiles, size_t n, int halo, wsisa_err *e) {
  json_t *list = json_array();
  int rc = list ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    double t[READS];
    for (int k = 0; k < READS && !rc; k++) {
      wsisa_image *rgb = NULL;
      wsisa_tile_frame frame;
      double t0 = wsisa_now();
      rc = wsisa_tile_load_framed(&tiles[i], halo, &rgb, &frame, e);
      t[k] = wsisa_now() - t0;
      wsisa_image_free(rgb);
    }
    if (rc) break;
    qsort(t, READS, sizeof *t, wsisa_compare_doubles);
    json_array_append_new(list, json_pack("{s:i, s:i, s:f}", "width", tiles[i].width, "height",
                                          tiles[i].height, "seconds", t[READS / 2]));
  }
  if (rc) {
    json_decref(list);
    return rc;
  }
  return wsisa__probe_write(json_pack("{s:i, s:i, s:o}", "halo", halo, "reads", READS, "tiles", list),
                            "wsisa_tile_reads.json", e);
}

int wsisa__reads_load(wsisa__reads_model *m) {
  memset(m, 0, sizeof *m);
  char path[4200];
  json_t *root = wsisa__probe_read("wsisa_tile_reads.json", path, sizeof path);
  if (!root) return -1;
  json_t *tiles = json_object_get(root, "tiles");
  for (size_t i = 0; i < json_array_size(tiles) && m->n < WSISA__READS_TILES; i++) {
    int w, h;
    double s;
    if (json_unpack(json_array_get(tiles, i), "{s:i, s:i, s:F}", "width", &w, "height", &h,
                    "seconds", &s) ||
        w < 1 || h < 1 || !(s >= 0) || !isfinite(s))
      continue;
    m->pixels[m->n] = (double)w * h;
    m->seconds[m->n++] = s;
  }
  json_decref(root);
  if (!m->n) return -1;
  char list[256];
  size_t used = 0;
  list[0] = 0;
  for (int i = 0; i < m->n && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%.1f ms at %.2f Mpx",
                             i ? ", " : "", 1e3 * m->seconds[i], m->pixels[i] / 1e6);
  snprintf(m->source, sizeof m->source,
           "calibration: a tile's read as a run reads it (its halo, its colour statistics; "
           "median of %d) on the submitting thread, %s; a tile's by the calibrated one nearest "
           "in pixels, per pixel; %s",
           READS, list, path);
  m->loaded = 1;
  return 0;
}

double wsisa__reads_seconds(const wsisa__reads_model *m, int width, int height) {
  if (!m->loaded || m->n < 1) return 0;
  const double px = (double)width * height;
  int best = 0;
  for (int i = 1; i < m->n; i++)
    if (fabs(log(m->pixels[i] / px)) < fabs(log(m->pixels[best] / px))) best = i;
  return m->seconds[best] * px / m->pixels[best];
}
