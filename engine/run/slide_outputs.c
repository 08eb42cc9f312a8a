/* `wsisa segment SLIDE --all`'s outputs, assembled from its work folder
 * (engine/run/slide.c): each tile's record read back and proved, the
 * nuclei numbered across the slide into one GeoJSON, the features CSV, the
 * per-tile summary, the density map and the label image, staged and
 * committed together. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/run/run_internal.h"
#include "io/csv.h"
#include "io/io.h"
#include "io/svg.h"

/* The label image's tiles, and its ids as 24-bit RGB. */
#define LABEL_TILE 512
#define LABEL_MAX_ID 0xffffffu

int wsisa__slide_work_path(const wsisa__slide_run *s, const char *name, char buf[WSISA_PATH_MAX],
                           wsisa_err *e) {
  return wsisa_path_fmt_err(buf, e, "%s/%s", s->work, name);
}

/* A tile's record, read back (proved when it was journaled or reopened). */
typedef struct record {
  uint64_t nuclei, tissue, nspans, nrows, ncols;
  uint32_t *spans;
  double *rows;
  char *buf;
} record;

static int record_read(const wsisa__slide_run *s, const wsisa__slide_tile *t, record *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  if (!(out->buf = malloc(t->bytes))) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  char path[WSISA_PATH_MAX];
  int rc = wsisa__slide_work_path(s, "nuclei.bin", path, e);
  if (rc) {
    free(out->buf);
    out->buf = NULL;
    return rc;
  }
  if (pread(s->store_fd, out->buf, t->bytes, (off_t)t->offset) != (ssize_t)t->bytes ||
      wsisa__crc32(out->buf, t->bytes) != t->crc) {
    free(out->buf);
    out->buf = NULL;
    return wsisa_error(e, WSISA_EIO, "%s: tile %zu's record changed since it was written", path,
                       t->index);
  }
  uint64_t v[6];
  memcpy(v, out->buf + 2 * sizeof(uint32_t), sizeof v);
  out->nuclei = v[1], out->tissue = v[2], out->nspans = v[3], out->nrows = v[4], out->ncols = v[5];
  out->spans = (uint32_t *)(void *)(out->buf + WSISA__SLIDE_RECORD_HEAD);
  out->rows = (double *)(void *)(out->buf + WSISA__SLIDE_RECORD_HEAD + out->nspans * WSISA_SPAN_FIELDS *
                                                           sizeof(uint32_t));
  return 0;
}

static void record_free(record *r) {
  free(r->buf);
  memset(r, 0, sizeof *r);
}

/* The target-pixel rectangle read for a tile: its core and the halo. */
static void window_of(const wsisa__slide_run *s, size_t k, int64_t rect[4]) {
  wsisa_tile_read_rect(&s->refs[k], s->halo, rect);
}

/* A record's spans as the label image of the pixels read (labels 1..nuclei). */
static int record_labels(const wsisa__slide_run *s, size_t k, const record *rec, wsisa_image **out,
                         wsisa_err *e) {
  int64_t w[4];
  window_of(s, k, w);
  int rc = wsisa_image_new((int)w[2], (int)w[3], 1, WSISA_I32, out, e);
  if (rc) return rc;
  for (int y = 0; y < (*out)->height; y++) memset(wsisa_image_row(*out, y), 0, (size_t)w[2] * 4);
  for (uint64_t i = 0; i < rec->nspans; i++) {
    const uint32_t *sp = rec->spans + i * WSISA_SPAN_FIELDS;
    if (sp[WSISA_SPAN_ROW] >= (uint32_t)w[3] || sp[WSISA_SPAN_X] > (uint32_t)w[2] ||
        sp[WSISA_SPAN_LEN] > (uint32_t)w[2] - sp[WSISA_SPAN_X] || !sp[WSISA_SPAN_LABEL] ||
        sp[WSISA_SPAN_LABEL] > rec->nuclei) {
      wsisa_image_free(*out);
      *out = NULL;
      return wsisa_error(e, WSISA_EFORMAT, "%s: tile %zu: a span off its pixels", s->work,
                         s->tiles[k].index);
    }
    int32_t *row = (int32_t *)wsisa_image_row(*out, (int)sp[WSISA_SPAN_ROW]) + sp[WSISA_SPAN_X];
    for (uint32_t x = 0; x < sp[WSISA_SPAN_LEN]; x++) row[x] = (int32_t)sp[WSISA_SPAN_LABEL];
  }
  return 0;
}

static void features_header(wsisa_csv_writer *w, int cols) {
  char name[64];
  wsisa_csv_text(w, "nucleus_id");
  wsisa_csv_text(w, "tile");
  for (int c = 0; c < cols; c++) {
    wsisa_workflow_feature_column(c, name, sizeof name);
    wsisa_csv_text(w, name);
  }
  wsisa_csv_text(w, "area_level0_pixels");
  wsisa_csv_text(w, "area_um2");
  wsisa_csv_end_row(w);
}

/* A tile's feature rows, positions from its core to level-0 pixels (pixel
 * corners: a centroid c, the mean of its pixels' indices, is at c + 0.5). */
static void features_rows(const wsisa__slide_run *s, size_t k, const record *rec, wsisa_csv_writer *w) {
  const wsisa_tile_ref *t = &s->refs[k];
  const int known = t->scale.source != WSISA_MPP_NONE;
  for (uint64_t i = 0; i < rec->nrows; i++) {
    double row[256];
    const size_t cols = rec->ncols < 256 ? (size_t)rec->ncols : 256;
    memcpy(row, rec->rows + i * rec->ncols, cols * sizeof *row);
    row[WSISA_NF_CENTROID_X] = ((double)t->x + row[WSISA_NF_CENTROID_X] + 0.5) * s->step;
    row[WSISA_NF_CENTROID_Y] = ((double)t->y + row[WSISA_NF_CENTROID_Y] + 0.5) * s->step;
    row[WSISA_NF_BBOX_X] = ((double)t->x + row[WSISA_NF_BBOX_X]) * s->step;
    row[WSISA_NF_BBOX_Y] = ((double)t->y + row[WSISA_NF_BBOX_Y]) * s->step;
    row[WSISA_NF_BBOX_W] *= s->step;
    row[WSISA_NF_BBOX_H] *= s->step;
    wsisa_csv_uint(w, s->tiles[k].first_id + i);
    wsisa_csv_uint(w, s->tiles[k].index);
    for (size_t c = 0; c < cols; c++) wsisa_csv_num(w, row[c]);
    wsisa_csv_num(w, row[WSISA_NF_AREA] * s->step * s->step);
    if (known) wsisa_csv_num(w, row[WSISA_NF_AREA] * s->pixel_mpp * s->pixel_mpp);
    else wsisa_csv_text(w, "");
    wsisa_csv_end_row(w);
  }
}

double wsisa__slide_tissue_mm2(const wsisa__slide_run *s, uint64_t pixels) {
  return (double)pixels * s->pixel_mpp * s->pixel_mpp * 1e-6;
}

static void summary_header(wsisa_csv_writer *w) {
  static const char *const cols[] = {"tile",   "col",    "row",         "x",
                                     "y",      "width",  "height",      "nuclei",
                                     "first_nucleus_id", "tissue_mm2", "nuclei_per_mm2"};
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) wsisa_csv_text(w, cols[i]);
  wsisa_csv_end_row(w);
}

static void summary_row(const wsisa__slide_run *s, size_t k, wsisa_csv_writer *w) {
  const wsisa__slide_tile *t = &s->tiles[k];
  const wsisa_tile *g = &s->grid->tiles[t->index];
  const double mm2 = wsisa__slide_tissue_mm2(s, t->tissue);
  wsisa_csv_uint(w, t->index);
  wsisa_csv_uint(w, (uint64_t)g->col);
  wsisa_csv_uint(w, (uint64_t)g->row);
  wsisa_csv_num(w, (double)g->level0.x);
  wsisa_csv_num(w, (double)g->level0.y);
  wsisa_csv_num(w, (double)g->level0.width);
  wsisa_csv_num(w, (double)g->level0.height);
  wsisa_csv_uint(w, t->nuclei);
  wsisa_csv_uint(w, t->nuclei ? t->first_id : 0);
  wsisa_csv_num(w, mm2);
  wsisa_csv_num(w, mm2 > 0 ? (double)t->nuclei / mm2 : NAN);
  wsisa_csv_end_row(w);
}

/* The label image's painter: the records of the tiles whose pixels read
 * meet the band being painted, kept while the painting moves down. */
typedef struct painter {
  const wsisa__slide_run *s;
  record *recs;      /* per tile, NULL buf when not loaded */
  int level;
} painter;

static int paint_labels(void *ctx, int level, int64_t x, int64_t y, int w, int h, uint8_t *rgb,
                        size_t stride, wsisa_err *e) {
  painter *p = ctx;
  const wsisa__slide_run *s = p->s;
  const int64_t k = (int64_t)1 << level;
  /* the target pixels this tile samples: [x k, (x + w) k) x [y k, (y + h) k) */
  const int64_t tx0 = x * k, ty0 = y * k, tx1 = (x + w) * k, ty1 = (y + h) * k;
  if (level != p->level) {
    for (size_t i = 0; i < s->n; i++) record_free(&p->recs[i]);
    p->level = level;
  }
  const int ts = s->grid->tile_size, halo = s->halo;
  int64_t c0 = (tx0 - halo) / ts - 1, c1 = (tx1 + halo) / ts + 1;
  int64_t r0 = (ty0 - halo) / ts - 1, r1 = (ty1 + halo) / ts + 1;
  if (c0 < 0) c0 = 0;
  if (r0 < 0) r0 = 0;
  if (c1 >= s->grid->cols) c1 = s->grid->cols - 1;
  if (r1 >= s->grid->rows) r1 = s->grid->rows - 1;
  /* tiles entirely above this band are not needed again at this level */
  for (size_t i = 0; i < s->n; i++) {
    if (!p->recs[i].buf) continue;
    int64_t win[4];
    window_of(s, i, win);
    if (win[1] + win[3] <= ty0) record_free(&p->recs[i]);
  }
  for (int64_t r = r0; r <= r1; r++)
    for (int64_t c = c0; c <= c1; c++) {
      const size_t at = s->chosen_at[(size_t)(r * s->grid->cols + c)];
      if (at == SIZE_MAX || !s->tiles[at].nuclei) continue;
      int64_t win[4];
      window_of(s, at, win);
      if (win[0] >= tx1 || win[0] + win[2] <= tx0 || win[1] >= ty1 || win[1] + win[3] <= ty0)
        continue;
      record *rec = &p->recs[at];
      int rc = rec->buf ? 0 : record_read(s, &s->tiles[at], rec, e);
      if (rc) return rc;
      for (uint64_t i = 0; i < rec->nspans; i++) {
        const uint32_t *sp = rec->spans + i * WSISA_SPAN_FIELDS;
        const int64_t ty = win[1] + sp[WSISA_SPAN_ROW];
        if (ty < ty0 || ty >= ty1 || ty % k) continue;
        const int64_t sx0 = win[0] + sp[WSISA_SPAN_X], sx1 = sx0 + sp[WSISA_SPAN_LEN];
        int64_t lx0 = (sx0 > tx0 ? sx0 : tx0 + 0), lx1 = sx1 < tx1 ? sx1 : tx1;
        lx0 = (lx0 + k - 1) / k; /* the first sampled column in the span */
        const uint64_t id = s->tiles[at].first_id + sp[WSISA_SPAN_LABEL] - 1;
        uint8_t *row = rgb + (size_t)(ty / k - y) * stride;
        for (int64_t lx = lx0; lx * k < lx1; lx++) {
          uint8_t *px = row + (size_t)(lx - x) * 3;
          /* a pixel two owners claim (never, when the tiling does not change
           * the segmentation) keeps the first tile's nucleus */
          if (px[0] | px[1] | px[2]) continue;
          px[0] = (uint8_t)(id >> 16), px[1] = (uint8_t)(id >> 8), px[2] = (uint8_t)id;
        }
      }
    }
  return 0;
}

static char *labels_description(const wsisa__slide_run *s) {
  const wsisa_scale *sc = &s->grid->scale;
  json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:[f, f], s:f, s:i, s:f}", "software",
                        "wsisa " WSISA_VERSION, "content", "nucleus labels",
                        "encoding", "RGB = nucleus_id as 24 bits (R * 65536 + G * 256 + B); 0: "
                        "no nucleus", "source", s->r->slide, "level0_origin", 0.0, 0.0,
                        "level0_per_pixel", s->step, "level", sc->level, "factor", sc->factor);
  if (!j) return NULL;
  json_object_set_new(j, "mpp", sc->source == WSISA_MPP_NONE ? json_null()
                                                              : json_real(s->pixel_mpp));
  char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
  json_decref(j);
  return text;
}

int wsisa__slide_assemble(wsisa__slide_run *s, wsisa__slide_totals *tot, wsisa_err *e) {
  const wsisa_slide_segment_request *r = s->r;
  uint64_t next = 1;
  memset(tot, 0, sizeof *tot);
  for (size_t k = 0; k < s->n; k++) {
    s->tiles[k].first_id = next;
    next += s->tiles[k].nuclei;
    tot->nuclei += s->tiles[k].nuclei;
    tot->tissue += s->tiles[k].tissue;
  }
  if (r->labels && tot->nuclei > LABEL_MAX_ID)
    return wsisa_error(e, WSISA_EUSAGE,
                       "-o %s: %" PRIu64 " nuclei, more than the %u the label image's 24-bit "
                       "ids hold (leave -o out, or segment --tiles in parts)",
                       r->labels, tot->nuclei, LABEL_MAX_ID);
  wsisa_stage stage = WSISA_STAGE_INIT;
  wsisa_geojson_writer *gj = NULL;
  wsisa_csv_writer *fw = NULL, *sw = NULL;
  int rc = 0;
  if (r->geojson) rc = wsisa_geojson_open(&stage, r->geojson, &gj, e);
  if (!rc && r->features) rc = wsisa_csv_create_staged(&stage, r->features, &fw, e);
  if (!rc && r->summary) rc = wsisa_csv_create_staged(&stage, r->summary, &sw, e);
  if (fw) features_header(fw, s->feature_cols);
  if (sw) summary_header(sw);
  const wsisa_outline_place base = {.scale = s->step, .width0 = (double)s->width0,
                                    .height0 = (double)s->height0,
                                    .mpp = s->grid->scale.source == WSISA_MPP_NONE ? 0
                                                                                   : s->grid->scale.mpp};
  for (size_t k = 0; k < s->n && !rc; k++) {
    if (sw) summary_row(s, k, sw);
    if (!s->tiles[k].nuclei || (!gj && !fw)) continue;
    record rec;
    if ((rc = record_read(s, &s->tiles[k], &rec, e))) break;
    if (fw && rec.nrows != rec.nuclei)
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: tile %zu: %" PRIu64 " feature rows for %" PRIu64
                       " nuclei", s->work, s->tiles[k].index, rec.nrows, rec.nuclei);
    if (!rc && fw) features_rows(s, k, &rec, fw);
    if (!rc && gj) {
      wsisa_image *lab = NULL;
      int64_t win[4];
      window_of(s, k, win);
      wsisa_outline_place place = base;
      place.x0 = (double)win[0] * s->step, place.y0 = (double)win[1] * s->step;
      const wsisa_geojson_ids ids = {.first = s->tiles[k].first_id, .tile = (long)s->tiles[k].index,
                                     .salt = s->salt};
      rc = record_labels(s, k, &rec, &lab, e);
      if (!rc) rc = wsisa_geojson_add(gj, lab, &place, &ids, e);
      wsisa_image_free(lab);
    }
    record_free(&rec);
  }
  if (gj) {
    int c = wsisa_geojson_close(gj, e);
    if (!rc) rc = c;
  }
  if (fw) {
    int c = wsisa_csv_close(fw, e);
    if (!rc) rc = c;
  }
  if (sw) {
    int c = wsisa_csv_close(sw, e);
    if (!rc) rc = c;
  }
  if (!rc && r->density) {
    const wsisa_grid *g = s->grid;
    double *map = malloc((g->ntiles ? g->ntiles : 1) * sizeof *map);
    const char *temp = map ? wsisa_stage_add(&stage, r->density, e) : NULL;
    if (!map) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    else if (!temp) rc = e && e->code ? e->code : WSISA_EIO;
    if (!rc) {
      for (size_t i = 0; i < g->ntiles; i++) map[i] = NAN;
      for (size_t k = 0; k < s->n; k++) {
        const double mm2 = wsisa__slide_tissue_mm2(s, s->tiles[k].tissue);
        map[s->tiles[k].index] = mm2 > 0 ? (double)s->tiles[k].nuclei / mm2 : 0;
      }
      char title[512];
      const char *slash = strrchr(r->slide, '/');
      snprintf(title, sizeof title, "%s: nuclei per mm2 of tissue, tile by tile",
               slash ? slash + 1 : r->slide);
      rc = wsisa_svg_grid_map(temp, title, "nuclei per mm2", g->cols, g->rows, map, e);
    }
    free(map);
  }
  if (!rc && r->labels) {
    painter p = {s, calloc(s->n ? s->n : 1, sizeof(record)), 0};
    char *desc = labels_description(s);
    if (!p.recs || !desc) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    const wsisa_pyramid_opts po = {
        .tile = LABEL_TILE, .description = desc,
        .mpp = s->grid->scale.source == WSISA_MPP_NONE ? 0 : s->pixel_mpp};
    if (!rc)
      rc = wsisa_pyramid_write_staged(&stage, r->labels, s->grid->width, s->grid->height, &po,
                                      paint_labels, &p, e);
    for (size_t i = 0; p.recs && i < s->n; i++) record_free(&p.recs[i]);
    free(p.recs);
    free(desc);
  }
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc) wsisa_stage_abort(&stage);
  return rc;
}
