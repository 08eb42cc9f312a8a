/* One segmentation of a slide region, a grid tile or an image: the input
 * opened through io's wsisa_input (slide or image alike), the rectangle laid
 * out as a study's tile, read as a study reads it (wsisa_tile_load_framed: a
 * halo around it, the slide's colour statistics; an image decoded once) and
 * segmented by the workflow's graph, keeping the nuclei whose centroid lies in
 * the rectangle; the outputs placed in level-0 pixels. `wsisa segment` is its
 * command line. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/exec/exec.h"
#include "io/csv.h"

/* Above this many target pixels a whole slide is not read at once. */
#define WHOLE_SLIDE_MAX_PIXELS (64.0 * 1024 * 1024)
/* StarPU's freed buffers kept for reuse (core's wsisa_runtime_opts). */
#define SEGMENT_KEEP_BUFFERS ((size_t)256 << 20)

void wsisa_segment_request_init(wsisa_segment_request *r, const char *input) {
  memset(r, 0, sizeof *r);
  r->input = input;
  r->tile_size = 1024;
  r->target_mpp = WSISA_TARGET_MPP;
  r->normalize = 1;
  r->stain_check = 1;
  r->halo = -1;
  memcpy(r->params, wsisa_seg_defaults(), sizeof r->params);
}

/* The target-pixel rectangle to segment: the region (level-0 pixels, widened
 * to whole target pixels), the grid tile, or the whole input when it is small
 * enough. */
static int rectangle(const wsisa_segment_request *q, wsisa_input *in, const wsisa_scale *sc,
                     int64_t r[4], wsisa_err *e) {
  int rc;
  r[0] = r[1] = 0, r[2] = sc->width, r[3] = sc->height;
  if (q->has_region) {
    const int64_t *g = q->region;
    char text[128];
    snprintf(text, sizeof text, "%lld,%lld,%lld,%lld", (long long)g[0], (long long)g[1],
             (long long)g[2], (long long)g[3]);
    int64_t w0, h0;
    wsisa_input_level0(in, &w0, &h0);
    if (g[2] <= 0 || g[3] <= 0)
      return wsisa_error(e, WSISA_EUSAGE, "--region %s: width and height must be positive", text);
    /* width and height are positive: w0 - g[2] cannot overflow, g[0] + g[2] could */
    if (g[0] < 0 || g[1] < 0 || g[0] > w0 - g[2] || g[1] > h0 - g[3])
      return wsisa_error(e, WSISA_EUSAGE,
                         "--region %s: outside level 0 of %s (%lldx%lld; regions are in "
                         "level-0 pixels)",
                         text, q->input, (long long)w0, (long long)h0);
    const double step = wsisa_scale_step(sc);
    int64_t x0 = (int64_t)floor((double)g[0] / step), y0 = (int64_t)floor((double)g[1] / step);
    int64_t x1 = (int64_t)ceil((double)(g[0] + g[2]) / step);
    int64_t y1 = (int64_t)ceil((double)(g[1] + g[3]) / step);
    if (x1 > sc->width) x1 = sc->width;
    if (y1 > sc->height) y1 = sc->height;
    if (x1 <= x0 || y1 <= y0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "--region %s: less than one pixel at %g um/pixel (one pixel is %g "
                         "level-0 pixels)",
                         text, sc->target_mpp, step);
    r[0] = x0, r[1] = y0, r[2] = x1 - x0, r[3] = y1 - y0;
  } else if (q->has_tile) {
    wsisa_grid *g = NULL;
    if (q->tile_size <= 0 || q->tile_size > WSISA_TILE_SIZE_MAX)
      return wsisa_error(e, WSISA_EUSAGE, "--tile-size %ld: must be from 1 to %d target pixels",
                         q->tile_size, WSISA_TILE_SIZE_MAX);
    if ((rc = wsisa_input_grid(in, sc, (int)q->tile_size, 0, &g, e))) return rc;
    const long i = q->tile[0], j = q->tile[1];
    if (i < 0 || j < 0 || i >= g->cols || j >= g->rows) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "--tile %ld,%ld: outside the %dx%d grid (columns 0..%d, rows 0..%d)", i, j,
                       g->cols, g->rows, g->cols - 1, g->rows - 1);
    } else {
      const wsisa_tile *t = &g->tiles[j * g->cols + i];
      r[0] = t->x, r[1] = t->y, r[2] = t->width, r[3] = t->height;
    }
    wsisa_grid_free(g);
    if (rc) return rc;
  } else if ((double)sc->width * (double)sc->height > WHOLE_SLIDE_MAX_PIXELS) {
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: %lldx%lld pixels at %g um/pixel; choose a --region or --tile, "
                       "or --all for every tile",
                       q->input, (long long)sc->width, (long long)sc->height, sc->target_mpp);
  }
  if (r[2] > INT32_MAX || r[3] > INT32_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "%s: region too large to read at once", q->input);
  return 0;
}

/* The tile to read, as a study lays out its tiles, and whether the input's
 * background is dark (for the stain check). A region or tile asks for a
 * slide; otherwise the input's content says. The input is left open in
 * *opened for the read (an image is decoded once). */
static int layout(const wsisa_segment_request *q, wsisa_tile_ref *t, int *dark,
                  int64_t *width0, int64_t *height0, wsisa_input **opened, wsisa_err *e) {
  memset(t, 0, sizeof *t);
  *dark = 0;
  *opened = NULL;
  const int part = q->has_region || q->has_tile;
  wsisa_input *in = NULL;
  wsisa_err open_err = WSISA_ERR_INIT;
  int rc = wsisa_input_open(q->input, part ? WSISA_INPUT_SLIDE : WSISA_INPUT_AUTO, &in, &open_err);
  /* an image file (which OpenSlide does not read) given --region or --tile */
  const char *kind = part && rc == WSISA_EFORMAT ? wsisa_image_file_kind(q->input) : NULL;
  if (kind && strcmp(kind, "TIFF") != 0) {
    const char *flag = q->has_region ? "--region" : "--tile";
    char text[128];
    if (q->has_region)
      snprintf(text, sizeof text, "%lld,%lld,%lld,%lld", (long long)q->region[0],
               (long long)q->region[1], (long long)q->region[2], (long long)q->region[3]);
    else
      snprintf(text, sizeof text, "%ld,%ld", q->tile[0], q->tile[1]);
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s %s: %s applies to slides; %s is an image file (segment it whole, "
                       "or crop it first)",
                       flag, text, flag, q->input);
  }
  if (rc) return wsisa_error(e, rc, "%s", open_err.msg);
  int64_t r[4] = {0, 0, 0, 0};
  *dark = wsisa_input_dark_background(in);
  wsisa_input_level0(in, width0, height0);
  if (!(rc = wsisa_input_scale(in, q->mpp, q->target_mpp, -1, &t->scale, e)) &&
      !(rc = rectangle(q, in, &t->scale, r, e))) {
    const double step = wsisa_scale_step(&t->scale);
    t->path = q->input;
    t->kind = wsisa_input_kind_of(in);
    t->x = r[0], t->y = r[1], t->width = (int)r[2], t->height = (int)r[3];
    t->level0 = (wsisa_rect){llround((double)r[0] * step), llround((double)r[1] * step),
                             llround((double)r[2] * step), llround((double)r[3] * step)};
  }
  if (rc) wsisa_input_close(in);
  else *opened = in;
  return rc;
}

/* The workflow on one tile: the tile stage, the segmentation into the mask,
 * and, when asked, the feature stage and the nucleus labels. */
static int segment(const wsisa_segment_request *q, wsisa_image *rgb,
                   const wsisa_tile_frame *frame, wsisa_segment_result *res, wsisa_err *e) {
  starpu_data_handle_t hrgb = NULL, hmask = NULL, hlabels = NULL;
  wsisa_tile_data tile;
  int rc = wsisa_image_register(rgb, &hrgb, e);
  if (!rc) rc = wsisa_image_register(res->mask, &hmask, e);
  if (!rc && res->labels) rc = wsisa_image_register(res->labels, &hlabels, e);
  if (!rc)
    rc = wsisa_workflow_tile_submit_framed(hrgb, rgb->width, rgb->height,
                                           res->tile.scale.target_mpp, q->normalize, frame,
                                           &tile, e);
  if (!rc) {
    /* the tissue: what the workflow's background rule leaves of the core */
    uint64_t counts[3];
    starpu_data_handle_t hcounts = NULL;
    rc = wsisa_workflow_background_submit(&tile, q->params, counts, &hcounts, e);
    const int empty = wsisa_workflow_background_wait(&tile, counts, &hcounts);
    res->tissue_pixels = wsisa_workflow_tissue(&tile, counts);
    /* the segmentation's own background rule: the counts just waited for */
    if (!rc) rc = wsisa_workflow_segment_submit_decided(&tile, q->params, empty, hmask, e);
    if (!rc && q->features) rc = wsisa_workflow_channels_submit(&tile, 0, e);
    if (!rc && q->features)
      rc = wsisa_workflow_features_compute(&tile, hmask, &res->features, &res->nfeatures, e);
    wsisa_workflow_tile_release(&tile, q->normalize);
  }
  if (!rc && wsisa_submit_label(hmask, hlabels, 4))
    rc = wsisa_error(e, WSISA_ERUNTIME, "cannot submit the labelling");
  starpu_task_wait_for_all();
  if (hlabels) starpu_data_unregister(hlabels);
  if (hmask) starpu_data_unregister(hmask);
  if (hrgb) starpu_data_unregister(hrgb);
  return rc;
}

/* Feature positions from segmented pixels of the tile to level-0 pixels,
 * QuPath's convention, whatever level, factor or tile was read, on pixel
 * corners as the outlines and bounding boxes are (pixel i spans [i, i + 1),
 * its centre at i + 0.5): a centroid c, the mean of its pixels' indices, is
 * at c + 0.5, so level-0 c0 = (x + c + 0.5) * step. Areas: in level-0 pixels
 * and in um^2 after the shape columns. */
static void features_to_level0(wsisa_segment_result *res) {
  const double step = wsisa_scale_step(&res->tile.scale);
  const double ox = (double)(res->tile.x - res->core_x), oy = (double)(res->tile.y - res->core_y);
  for (size_t i = 0; i < res->nfeatures; i++) {
    double *row = res->features + i * (size_t)res->feature_cols;
    row[WSISA_NF_CENTROID_X] = (ox + row[WSISA_NF_CENTROID_X] + 0.5) * step;
    row[WSISA_NF_CENTROID_Y] = (oy + row[WSISA_NF_CENTROID_Y] + 0.5) * step;
    row[WSISA_NF_BBOX_X] = (ox + row[WSISA_NF_BBOX_X]) * step;
    row[WSISA_NF_BBOX_Y] = (oy + row[WSISA_NF_BBOX_Y]) * step;
    row[WSISA_NF_BBOX_W] *= step;
    row[WSISA_NF_BBOX_H] *= step;
  }
}

static int measure(const wsisa_segment_request *q, wsisa_segment_result *res, wsisa_err *e);

/* The halo a request reads a slide's rectangle with (an image: none). */
static int halo_of(const wsisa_segment_request *q, const wsisa_tile_ref *t) {
  if (t->kind != WSISA_INPUT_SLIDE) return 0;
  return q->halo >= 0 ? q->halo : wsisa_workflow_halo_at(q->params, 1, t->scale.target_mpp);
}

/* The rectangle inside the pixels read (a view, no copy). */
static wsisa_image core_view(const wsisa_segment_result *res, const wsisa_image *img) {
  const size_t px = wsisa_image_pixel_bytes(img);
  return wsisa_image_view((char *)wsisa_image_row(img, res->core_y) + (size_t)res->core_x * px,
                          res->tile.width, res->tile.height, img->channels, img->type,
                          img->stride);
}

int wsisa_segment_run(const wsisa_segment_request *q, wsisa_segment_result *res, wsisa_err *e) {
  memset(res, 0, sizeof *res);
  res->nuclei = -1;
  wsisa_image *rgb = NULL;
  wsisa_tile_frame frame;
  memset(&frame, 0, sizeof frame);
  wsisa_input *in = NULL;
  int dark = 0;
  int rc = layout(q, &res->tile, &dark, &res->width0, &res->height0, &in, e);
  if (!rc && res->tile.kind == WSISA_INPUT_SLIDE) {
    /* a slide's rectangle and its halo, read as a study reads its tiles */
    wsisa_input_close(in);
    in = NULL;
    rc = wsisa_tile_load_framed(&res->tile, res->halo = halo_of(q, &res->tile), &rgb, &frame, e);
  } else if (!rc) {
    /* an image: the one opened, decoded once, read whole */
    rc = wsisa_input_take_scaled(in, &res->tile.scale, res->tile.x, res->tile.y,
                                 res->tile.width, res->tile.height, &rgb, e);
  }
  wsisa_input_close(in);
  if (!rc && frame.core_w == 0) /* read alone: the rectangle is all of it */
    frame.core_w = rgb->width, frame.core_h = rgb->height;
  res->core_x = frame.core_x, res->core_y = frame.core_y;
  res->normalized = q->normalize;
  /* the parameters are tuned for bright-field H&E: refused before any work,
   * as `wsisa run` refuses it (on the rectangle asked, not its halo) */
  if (!rc && q->stain_check) {
    const wsisa_image core = core_view(res, rgb);
    rc = wsisa_stain_check_image(&core, dark, q->input, "give --no-stain-check",
                                  res->stain_warning, sizeof res->stain_warning, e);
  }
  if (!rc) rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_U8, &res->mask, e);
  if (!rc) rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_I32, &res->labels, e);
  /* one tile's graph: its intermediates' buffers reused from task to task */
  const wsisa_runtime_opts ro = {.ncpu = -1, .nopencl = -1, .keep_buffers = SEGMENT_KEEP_BUFFERS};
  if (!rc && !(rc = wsisa_codelets_start(&ro, e))) {
    /* a slide's colour statistics, as a study's tiles are normalized */
    if (res->tile.kind == WSISA_INPUT_SLIDE && q->normalize && !q->tile_stats &&
        !(rc = wsisa_slide_stats(q->input, &res->tile.scale, res->tile.stats, e)))
      res->tile.has_stats = res->tile.stats[WSISA_STATS_COUNT] > 0;
    frame.stats = res->tile.has_stats ? res->tile.stats : NULL;
    if (!rc) rc = segment(q, rgb, &frame, res, e);
    wsisa_runtime_shutdown();
  }
  wsisa_image_free(rgb);
  if (rc) {
    wsisa_segment_result_free(res);
    return rc;
  }
  res->feature_cols = WSISA_NF_ROW(wsisa_workflow_channel_count());
  features_to_level0(res);
  if ((rc = measure(q, res, e))) wsisa_segment_result_free(res);
  return rc;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The counts a pathologist reads: nucleus pixels, nuclei, their median area
 * in um^2 and their density in tissue, at the pixel size actually read; a
 * warning when the median area says the pixel size is wrong. */
static int measure(const wsisa_segment_request *q, wsisa_segment_result *res, wsisa_err *e) {
  int32_t top = 0;
  const wsisa_image core = core_view(res, res->mask);
  for (int y = 0; y < core.height; y++) {
    const uint8_t *m = wsisa_image_row(&core, y);
    for (int x = 0; x < core.width; x++) res->mask_pixels += m[x] != 0;
  }
  for (int y = 0; y < res->labels->height; y++) {
    const int32_t *l = wsisa_image_row(res->labels, y);
    for (int x = 0; x < res->labels->width; x++) top = l[x] > top ? l[x] : top;
  }
  res->nuclei = top;
  res->pixel_mpp = wsisa_scale_pixel_mpp(&res->tile.scale);
  const double um2 = res->pixel_mpp * res->pixel_mpp;
  if (res->tissue_pixels)
    res->nuclei_per_mm2 = (double)top / ((double)res->tissue_pixels * um2 * 1e-6);
  if (top == 0) return 0;
  uint64_t *area = calloc((size_t)top + 1, sizeof *area);
  if (!area) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (int y = 0; y < res->labels->height; y++) {
    const int32_t *l = wsisa_image_row(res->labels, y);
    for (int x = 0; x < res->labels->width; x++)
      if (l[x] > 0) area[l[x]]++;
  }
  qsort(area + 1, (size_t)top, sizeof *area, cmp_u64);
  const size_t n = (size_t)top;
  const double median = n % 2 ? (double)area[1 + n / 2]
                              : 0.5 * ((double)area[n / 2] + (double)area[n / 2 + 1]);
  free(area);
  res->median_area_um2 = median * um2;
  if (res->median_area_um2 < WSISA_NUCLEUS_AREA_MIN_UM2 ||
      res->median_area_um2 > WSISA_NUCLEUS_AREA_MAX_UM2)
    snprintf(res->warning, sizeof res->warning,
              "%s: the median nucleus is %.3g um2 at %.4g um/pixel (%s), outside the %g-%g um2 "
              "H&E nuclei measure: the pixel size looks wrong (check the slide's MPP, or give "
              "--mpp)",
              q->input, res->median_area_um2, res->pixel_mpp,
              wsisa_mpp_source_text(res->tile.scale.source), WSISA_NUCLEUS_AREA_MIN_UM2,
              WSISA_NUCLEUS_AREA_MAX_UM2);
  return 0;
}

void wsisa_segment_result_free(wsisa_segment_result *res) {
  wsisa_image_free(res->mask);
  wsisa_image_free(res->labels);
  free(res->features);
  res->mask = res->labels = NULL;
  res->features = NULL;
}

/* features.csv: one row per nucleus, in the feature stage's columns. */
static int write_features(wsisa_stage *stage, const char *path, const wsisa_segment_result *res,
                          wsisa_err *e) {
  wsisa_csv_writer *w = NULL;
  int rc = wsisa_csv_create_staged(stage, path, &w, e);
  if (rc) return rc;
  char name[64];
  for (int c = 0; c < res->feature_cols; c++) {
    wsisa_workflow_feature_column(c, name, sizeof name);
    wsisa_csv_text(w, name);
  }
  wsisa_csv_text(w, "area_level0_pixels");
  wsisa_csv_text(w, "area_um2");
  wsisa_csv_end_row(w);
  const double step = wsisa_scale_step(&res->tile.scale);
  const int known = res->tile.scale.source != WSISA_MPP_NONE;
  for (size_t i = 0; i < res->nfeatures; i++) {
    const double *row = res->features + i * (size_t)res->feature_cols;
    for (int c = 0; c < res->feature_cols; c++) wsisa_csv_num(w, row[c]);
    wsisa_csv_num(w, row[WSISA_NF_AREA] * step * step);
    if (known) wsisa_csv_num(w, row[WSISA_NF_AREA] * res->pixel_mpp * res->pixel_mpp);
    else wsisa_csv_text(w, "");
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

/* The ImageDescription of the mask and labels TIFFs: where their pixels are
 * on the input, so a viewer can put them back (level-0 x = level0_origin[0] +
 * x * level0_per_pixel, on pixel corners). */
static char *placement_json(const wsisa_segment_result *res) {
  const wsisa_scale *sc = &res->tile.scale;
  const double step = wsisa_scale_step(sc);
  json_t *j = json_pack("{s:s, s:s, s:s, s:[f, f], s:f, s:i, s:f, s:s}", "software",
                        "wsisa " WSISA_VERSION, "content", "nucleus segmentation", "source",
                        res->tile.path, "level0_origin", (double)res->tile.x * step,
                        (double)res->tile.y * step, "level0_per_pixel", step, "level",
                        sc->level, "factor", sc->factor, "mpp_source",
                        wsisa_mpp_source_name(sc->source));
  if (!j) return NULL;
  /* the pixels' own size, as read; the target they were read for beside it */
  json_object_set_new(j, "mpp", sc->source == WSISA_MPP_NONE ? json_null() : json_real(res->pixel_mpp));
  json_object_set_new(j, "target_mpp", json_real(sc->target_mpp));
  json_object_set_new(j, "slide_mpp", sc->source == WSISA_MPP_NONE ? json_null() : json_real(sc->mpp));
  char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
  json_decref(j);
  return text;
}

int wsisa_segment_write(const wsisa_segment_result *res, const wsisa_segment_outputs *to,
                        wsisa_err *e) {
  char *meta = placement_json(res);
  if (!meta) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  const wsisa_scale *sc = &res->tile.scale;
  const double step = wsisa_scale_step(sc);
  /* a pixel size only when known: an image taken as it is has none */
  const double mpp = sc->source == WSISA_MPP_NONE ? 0 : res->pixel_mpp;
  /* every output appears together, or none does */
  wsisa_stage stage = WSISA_STAGE_INIT;
  int rc = 0;
  /* the mask and labels of the rectangle; the outlines of its nuclei whole */
  const wsisa_image mask = core_view(res, res->mask), labels = core_view(res, res->labels);
  if (to->mask) rc = wsisa_image_write_staged(&stage, to->mask, &mask, meta, mpp, e);
  if (!rc && to->labels) rc = wsisa_image_write_staged(&stage, to->labels, &labels, meta, mpp, e);
  if (!rc && to->geojson) {
    /* every vertex on the input: a resampled level's last pixel may reach
     * past the slide's last level-0 pixel */
    const wsisa_outline_place place = {
        .x0 = (double)(res->tile.x - res->core_x) * step,
        .y0 = (double)(res->tile.y - res->core_y) * step, .scale = step,
        .width0 = (double)res->width0, .height0 = (double)res->height0,
        .mpp = sc->source == WSISA_MPP_NONE ? 0 : sc->mpp};
    rc = wsisa_geojson_write_staged(&stage, to->geojson, res->labels, &place, e);
  }
  if (!rc && to->features) rc = write_features(&stage, to->features, res, e);
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc) wsisa_stage_abort(&stage);
  free(meta);
  return rc;
}

void wsisa_segment_describe(const wsisa_segment_result *res, char *buf, size_t cap) {
  const wsisa_scale *sc = &res->tile.scale;
  const double step = wsisa_scale_step(sc);
  if (res->tile.kind != WSISA_INPUT_SLIDE) {
    snprintf(buf, cap, "%s", "");
    return;
  }
  snprintf(buf, cap,
           "read at %.4g um/pixel (target %g): level %d, factor %g; level-0 rectangle "
           "%.0f,%.0f,%.0f,%.0f; halo %d pixels, %s",
           res->pixel_mpp, sc->target_mpp, sc->level, sc->factor, (double)res->tile.x * step,
           (double)res->tile.y * step, res->tile.width * step, res->tile.height * step, res->halo,
           !res->normalized     ? "not normalized"
           : res->tile.has_stats ? "normalized with the slide's colour statistics"
                                 : "normalized with the colour statistics of the pixels read");
}
