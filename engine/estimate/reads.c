/* Reading a tile on the submitting thread, which no StarPU task accounts for:
 * its probe, a tile priced by the nearest in pixels (docs/architecture.md,
 * "The estimate in detail": "The schedule"). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"

#define FILE_NAME "wsisa_tile_reads.json"
#define READS 5

static int probe(const wsisa__probe_input *in, json_t **root, wsisa_err *e) {
  json_t *list = json_array();
  int rc = list ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < in->ntiles && !rc; i++) {
    double t[READS];
    for (int k = 0; k < READS && !rc; k++) {
      wsisa_image *rgb = NULL;
      wsisa_tile_frame frame;
      double t0 = wsisa_now();
      rc = wsisa_tile_load_framed(&in->tiles[i], in->halo, &rgb, &frame, e);
      t[k] = wsisa_now() - t0;
      wsisa_image_free(rgb);
    }
    if (!rc)
      json_array_append_new(list, json_pack("{s:i, s:i, s:f}", "width", in->tiles[i].width,
                                            "height", in->tiles[i].height, "seconds",
                                            wsisa_median(t, READS)));
  }
  if (rc) json_decref(list);
  else *root = json_pack("{s:i, s:i, s:o}", "halo", in->halo, "reads", READS, "tiles", list);
  return rc;
}

static int load(json_t *root, wsisa__models *models) {
  wsisa__reads_model *m = &models->reads;
  memset(m, 0, sizeof *m);
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
  m->loaded = m->n > 0;
  return m->loaded ? 0 : -1;
}

static int describe(const wsisa__models *models, char *how, size_t cap) {
  const wsisa__reads_model *m = &models->reads;
  if (!m->loaded) return -1;
  size_t used = (size_t)snprintf(how, cap, "a tile's read");
  for (int i = 0; i < m->n && used < cap; i++)
    used += (size_t)snprintf(how + used, cap - used, "%s %.1f ms at %.2f Mpx", i ? "," : "",
                             1e3 * m->seconds[i], m->pixels[i] / 1e6);
  return 0;
}

const wsisa__probe wsisa__probe_reads = {
    "tile reads", FILE_NAME, 0, NULL, probe, load, describe,
    offsetof(wsisa_estimate_figures, read_source), "a tile's read not priced"};

double wsisa__reads_seconds(const wsisa__reads_model *m, int width, int height) {
  if (!m->loaded || m->n < 1) return 0;
  const double px = (double)width * height;
  int best = 0;
  for (int i = 1; i < m->n; i++)
    if (fabs(log(m->pixels[i] / px)) < fabs(log(m->pixels[best] / px))) best = i;
  return m->seconds[best] * px / m->pixels[best];
}
