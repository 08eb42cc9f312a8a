/* A study's tile: read as every rank reads it (whole, or framed by its halo
 * for the workflow; its slide's colour statistics), and opened for its units
 * (engine/exec/executor.c): its tile stage, its reference (the default
 * parameters' segmentation or its annotation), the background decisions of
 * the session's runs and its object store. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/exec/exec_internal.h"
#include "io/io.h"

/* The target-pixel rectangle r of the tile's input, read through io's input
 * (slide or image alike). */
static int read_rect(const wsisa_tile_ref *t, const int64_t r[4], wsisa_image **rgb,
                     wsisa_err *e) {
  *rgb = NULL;
  if (r[2] > INT32_MAX || r[3] > INT32_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "%s: a tile and its halo too large to read at once",
                       t->path);
  wsisa_input *in = NULL;
  int rc = wsisa_input_open(t->path, t->kind, &in, e);
  if (rc) return rc;
  rc = wsisa_input_read_scaled(in, &t->scale, r[0], r[1], (int)r[2], (int)r[3], rgb, e);
  wsisa_input_close(in);
  return rc;
}

int wsisa_tile_load(const wsisa_tile_ref *t, wsisa_image **rgb, wsisa_err *e) {
  const int64_t r[4] = {t->x, t->y, t->width, t->height};
  return read_rect(t, r, rgb, e);
}

int wsisa_tile_load_framed(const wsisa_tile_ref *t, int halo, wsisa_image **rgb,
                           wsisa_tile_frame *frame, wsisa_err *e) {
  memset(frame, 0, sizeof *frame);
  frame->stats = t->has_stats ? t->stats : NULL;
  int64_t r[4];
  wsisa_tile_read_rect(t, halo, r); /* the tile alone for an image, or without a halo */
  int rc = read_rect(t, r, rgb, e);
  if (rc || t->kind != WSISA_INPUT_SLIDE || halo <= 0) return rc;
  frame->core_x = (int)(t->x - r[0]);
  frame->core_y = (int)(t->y - r[1]);
  frame->core_w = t->width;
  frame->core_h = t->height;
  return 0;
}

int wsisa_tile_segment(const wsisa_tile_ref *t, const double *p, int halo, int normalize,
                       wsisa_image **mask, wsisa_tile_frame *frame, uint64_t *tissue,
                       wsisa_err *e) {
  *mask = NULL;
  wsisa_image *rgb = NULL;
  starpu_data_handle_t hrgb = NULL, hmask = NULL;
  wsisa_tile_data data;
  int have_data = 0, skip = 0;
  uint64_t seen = 0;
  int rc = wsisa_tile_load_framed(t, halo, &rgb, frame, e);
  if (!rc) rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_U8, mask, e);
  if (!rc) rc = wsisa_image_register(rgb, &hrgb, e);
  if (!rc) rc = wsisa_image_register(*mask, &hmask, e);
  if (!rc && !(rc = wsisa_workflow_tile_submit_framed(hrgb, rgb->width, rgb->height,
                                                      t->scale.target_mpp, normalize, frame,
                                                      &data, e)))
    have_data = 1;
  if (!rc) rc = wsisa_workflow_background_tissue(&data, p, &skip, &seen, e);
  if (!rc) rc = wsisa_workflow_segment_submit_decided(&data, p, skip, hmask, e);
  if (have_data) wsisa_workflow_tile_release(&data, normalize);
  if (hmask) starpu_data_unregister(hmask); /* waits for the mask */
  if (hrgb) starpu_data_unregister(hrgb);
  wsisa_image_free(rgb);
  if (tissue) *tissue = skip ? 0 : seen;
  if (rc) {
    wsisa_image_free(*mask);
    *mask = NULL;
  }
  return rc;
}

/* One block's statistics (masked_stats' layout), waited for. */
static int block_stats(wsisa_image *rgb, double st[WSISA_STATS_N], wsisa_err *e) {
  starpu_data_handle_t h = NULL, fg = NULL, lab = NULL, hs = NULL;
  int rc = wsisa_image_register(rgb, &h, e);
  if (!rc) rc = wsisa_image_register_tmp(rgb->width, rgb->height, 1, WSISA_U8, &fg, e);
  if (!rc) rc = wsisa_image_register_tmp(rgb->width, rgb->height, 3, WSISA_F32, &lab, e);
  if (!rc) {
    starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)st, WSISA_STATS_N, sizeof *st);
    if (wsisa_submit_fisher_fg(h, fg) || wsisa_submit_rgb2lab(h, lab) ||
        wsisa_submit_masked_stats(lab, fg, hs))
      rc = wsisa_error(e, WSISA_ERUNTIME, "cannot submit the colour statistics");
  }
  if (fg) starpu_data_unregister_submit(fg);
  if (lab) starpu_data_unregister_submit(lab);
  if (hs) starpu_data_unregister(hs); /* waits for them */
  if (h) starpu_data_unregister(h);
  return rc;
}

int wsisa_slide_stats(const char *path, const wsisa_scale *scale, double stats[WSISA_STATS_N],
                      wsisa_err *e) {
  memset(stats, 0, WSISA_STATS_N * sizeof *stats);
  wsisa_input *in = NULL;
  wsisa_grid *g = NULL;
  int rc = wsisa_input_open(path, WSISA_INPUT_SLIDE, &in, e);
  if (rc) return rc;
  if ((rc = wsisa_input_grid(in, scale, WSISA_STATS_BLOCK, 0, &g, e))) goto done;
  /* pooled sums: pixels, and per channel the sum and the sum of squares */
  double n = 0, sum[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
  size_t picked = 0;
  for (size_t t = 0, seen = 0; t < g->ntiles && !rc; t++) {
    if (!g->tiles[t].tissue) continue;
    /* the k-th of WSISA_STATS_BLOCKS evenly spread over the tissue blocks */
    size_t want = g->ntissue <= WSISA_STATS_BLOCKS ? seen
                                                    : picked * g->ntissue / WSISA_STATS_BLOCKS;
    if (seen++ != want || picked >= WSISA_STATS_BLOCKS) continue;
    picked++;
    wsisa_image *rgb = NULL;
    double st[WSISA_STATS_N];
    const wsisa_tile *tl = &g->tiles[t];
    if ((rc = wsisa_input_read_scaled(in, &g->scale, tl->x, tl->y, tl->width, tl->height, &rgb, e)))
      break;
    rc = block_stats(rgb, st, e);
    wsisa_image_free(rgb);
    if (rc) break;
    const double k = st[WSISA_STATS_COUNT];
    n += k;
    for (int c = 0; c < 3; c++) {
      const double m = st[WSISA_STATS_MEAN + c], sd = st[WSISA_STATS_STD + c];
      sum[c] += k * m;
      sq[c] += k * (sd * sd + m * m);
    }
  }
  if (!rc && n > 0) {
    stats[WSISA_STATS_COUNT] = n;
    for (int c = 0; c < 3; c++) {
      const double m = sum[c] / n, var = sq[c] / n - m * m;
      stats[WSISA_STATS_MEAN + c] = m;
      stats[WSISA_STATS_STD + c] = var > 0 ? sqrt(var) : 0;
    }
  }
done:
  wsisa_grid_free(g);
  wsisa_input_close(in);
  return rc;
}


/* The reference's pixel and object counts home (they are needed only when
 * a unit is reported, or for the reference's feature rows). */
void wsisa__tile_reference_wait(wsisa__tile_state *ts) {
  if (!ts->ref_hc) return;
  starpu_data_unregister(ts->ref_hc);
  starpu_data_unregister(ts->ref_hn);
  ts->ref_hc = ts->ref_hn = NULL;
  ts->ref_pixels = ts->ref_counts[1];
  ts->ref_nuclei = ts->ref_objects;
}

/* Feature rows measured on the pixels read, placed on the tile: centroids
 * and bounding boxes from the core's corner. */
void wsisa__tile_rows_to_core(double *rows, size_t n, int cols, const wsisa_tile_data *d) {
  for (size_t i = 0; rows && i < n; i++) {
    double *r = rows + i * (size_t)cols;
    r[WSISA_NF_CENTROID_X] -= d->core_x;
    r[WSISA_NF_BBOX_X] -= d->core_x;
    r[WSISA_NF_CENTROID_Y] -= d->core_y;
    r[WSISA_NF_BBOX_Y] -= d->core_y;
  }
}

/* The tissue the tile's reference segments: the core's at the defaults'
 * (B, G, R), none when the background rule empties it; decided once. */
static void reference_tissue(wsisa__tile_state *ts, int skip, uint64_t tissue) {
  if (ts->ref_tissue_known) return;
  ts->ref_tissue = skip ? 0 : tissue;
  ts->ref_tissue_known = 1;
}

/* The background rule's decision for (B, G, R) of `p` on the tile, decided
 * once per (B, G, R) (a count submitted at the opening is waited for here),
 * and the tissue it leaves in the core (*tissue, may be NULL); for the
 * defaults' (B, G, R), the tissue the reference segments too. */
int wsisa__tile_skip(wsisa__tile_state *ts, const wsisa_tile_data *data, const double *p, int *skip,
                     uint64_t *tissue_out, wsisa_err *e) {
  const double *d = wsisa_seg_defaults();
  const int defaults = p[WSISA_P_B] == d[WSISA_P_B] && p[WSISA_P_G] == d[WSISA_P_G] &&
                       p[WSISA_P_R] == d[WSISA_P_R];
  for (size_t i = 0; i < ts->nbgr; i++)
    if (ts->bgr[i][0] == p[WSISA_P_B] && ts->bgr[i][1] == p[WSISA_P_G] &&
        ts->bgr[i][2] == p[WSISA_P_R]) {
      if (i < ts->nprefetched && ts->bg_h[i]) {
        ts->skip[i] = wsisa_workflow_background_wait(data, ts->bg_counts[i], &ts->bg_h[i]);
        ts->tissue[i] = wsisa_workflow_tissue(data, ts->bg_counts[i]);
        if (defaults) reference_tissue(ts, ts->skip[i], ts->tissue[i]);
      }
      *skip = ts->skip[i];
      if (tissue_out) *tissue_out = ts->tissue[i];
      return 0;
    }
  uint64_t tissue = 0;
  int rc = wsisa_workflow_background_tissue(data, p, skip, &tissue, e);
  if (rc) return rc;
  if (defaults) reference_tissue(ts, *skip, tissue);
  if (tissue_out) *tissue_out = tissue;
  if (ts->nbgr == ts->cap_bgr) {
    size_t cap = ts->cap_bgr ? 2 * ts->cap_bgr : 8;
    double(*b)[3] = realloc(ts->bgr, cap * sizeof *b);
    if (b) ts->bgr = b;
    int *s = realloc(ts->skip, cap * sizeof *s);
    if (s) ts->skip = s;
    uint64_t *t = realloc(ts->tissue, cap * sizeof *t);
    if (t) ts->tissue = t;
    if (!b || !s || !t) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    ts->cap_bgr = cap;
  }
  ts->bgr[ts->nbgr][0] = p[WSISA_P_B];
  ts->bgr[ts->nbgr][1] = p[WSISA_P_G];
  ts->bgr[ts->nbgr][2] = p[WSISA_P_R];
  ts->tissue[ts->nbgr] = tissue;
  ts->skip[ts->nbgr++] = *skip;
  return 0;
}

/* The tissue the tile's reference segments: the defaults' background count,
 * submitted at the opening, home by the time a unit is reported. */
int wsisa__tile_reference_tissue(wsisa__tile_state *ts, wsisa_err *e) {
  int skip = 0;
  return ts->ref_tissue_known ? 0
                              : wsisa__tile_skip(ts, &ts->data, wsisa_seg_defaults(), &skip, NULL, e);
}

/* The annotated nuclei a tile read with a halo owns: those whose centroid
 * lies in its core (own_objects' rule, here on the host where the
 * annotation is rasterised), renumbered 1..*n in their order. */
static int annotation_own(wsisa_image *labels, const wsisa_tile_data *d, size_t *n,
                          wsisa_err *e) {
  uint64_t *acc = calloc(3 * (*n + 1), sizeof *acc);
  int32_t *to = calloc(*n + 1, sizeof *to);
  if (!acc || !to) {
    free(acc);
    free(to);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *l = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++)
      if (l[x] > 0 && (size_t)l[x] <= *n) {
        uint64_t *a = acc + 3 * (size_t)l[x];
        a[0]++, a[1] += (uint64_t)x, a[2] += (uint64_t)y;
      }
  }
  const uint64_t x0 = (uint64_t)d->core_x, x1 = x0 + (uint64_t)d->core_w;
  const uint64_t y0 = (uint64_t)d->core_y, y1 = y0 + (uint64_t)d->core_h;
  int32_t kept = 0;
  for (size_t k = 1; k <= *n; k++) {
    const uint64_t *a = acc + 3 * k;
    if (a[0] && x0 * a[0] <= a[1] && a[1] < x1 * a[0] && y0 * a[0] <= a[2] && a[2] < y1 * a[0])
      to[k] = ++kept;
  }
  for (int y = 0; y < labels->height; y++) {
    int32_t *l = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) l[x] = l[x] > 0 && (size_t)l[x] <= *n ? to[l[x]] : 0;
  }
  *n = (size_t)kept;
  free(acc);
  free(to);
  return 0;
}

/* The annotation of the tile's slide as its reference: labels rasterised on
 * the host (io/annotation.c), the mask their support. `cache` keeps the last
 * annotation read, as consecutive tiles share their slide's. */
static int annotation_open(const wsisa_tile_ref *ref, const wsisa_exec_opts *o, wsisa__tile_state *ts,
                           wsisa_annotation **cache, wsisa_err *e) {
  const wsisa_annot_spec *sp = ref->annot;
  if (*cache) {
    const wsisa_annot_spec *have = wsisa_annotation_spec(*cache);
    if (have->kind != sp->kind || strcmp(have->path, sp->path) != 0 ||
        strcmp(have->input, sp->input) != 0) {
      wsisa_annotation_free(*cache);
      *cache = NULL;
    }
  }
  int rc = *cache ? 0 : wsisa_annotation_load(sp, cache, e);
  size_t n = 0;
  /* the pixels read: the tile and its halo */
  const int fw = ts->rgb->width, fh = ts->rgb->height;
  const int64_t fx = ref->x - (ts->data.core_x), fy = ref->y - (ts->data.core_y);
  if (!rc && ((fw == ref->width && fh == ref->height) ||
              wsisa_annotation_covers(*cache, &ref->scale, fx, fy, fw, fh)))
    rc = wsisa_annotation_rasterize(*cache, &ref->scale, fx, fy, fw, fh, &ts->annot_labels, &n,
                                    e);
  else if (!rc) {
    /* a halo beyond what is annotated: the tile's own annotation, the halo
     * without nuclei */
    wsisa_image *core = NULL;
    rc = wsisa_annotation_rasterize(*cache, &ref->scale, ref->x, ref->y, ref->width,
                                    ref->height, &core, &n, e);
    if (!rc) rc = wsisa_image_new(fw, fh, 1, WSISA_I32, &ts->annot_labels, e);
    for (int y = 0; !rc && y < fh; y++) {
      int32_t *l = wsisa_image_row(ts->annot_labels, y);
      memset(l, 0, (size_t)fw * sizeof *l);
      const int cy = y - ts->data.core_y;
      if (cy >= 0 && cy < ref->height)
        memcpy(l + ts->data.core_x, wsisa_image_row(core, cy), (size_t)ref->width * sizeof *l);
    }
    wsisa_image_free(core);
  }
  if (!rc) rc = wsisa_image_new(fw, fh, 1, WSISA_U8, &ts->annot_mask, e);
  if (!rc && ts->data.core_mask) rc = annotation_own(ts->annot_labels, &ts->data, &n, e);
  if (rc) return rc;
  uint64_t on = 0;
  for (int y = 0; y < fh; y++) {
    const int32_t *l = wsisa_image_row(ts->annot_labels, y);
    uint8_t *m = wsisa_image_row(ts->annot_mask, y);
    for (int x = 0; x < fw; x++) on += (m[x] = l[x] ? 255 : 0) != 0;
  }
  ts->ref_pixels = on;
  ts->ref_nuclei = n;
  if ((rc = wsisa_image_register(ts->annot_mask, &ts->ref, e))) return rc;
  if ((o->object_match || o->features) &&
      (rc = wsisa_image_register(ts->annot_labels, &ts->ref_labels, e)))
    return rc;
  if (o->features)
    rc = wsisa_workflow_rows_compute(&ts->data, ts->ref_labels, n, &ts->ref_features, e);
  if (!rc && o->features)
    wsisa__tile_rows_to_core(ts->ref_features, n, WSISA_NF_ROW(ts->data.nchannels), &ts->data);
  return rc;
}

/* The background counts of `n` (B, G, R), submitted after the tile stage, and
 * of the defaults' (the tissue the reference segments) when not among them. */
static int tile_prefetch(wsisa__tile_state *ts, const double (*bgr)[3], size_t n, wsisa_err *e) {
  const double *d = wsisa_seg_defaults();
  const double dflt[3] = {d[WSISA_P_B], d[WSISA_P_G], d[WSISA_P_R]};
  int have = 0;
  for (size_t i = 0; i < n && !have; i++)
    have = bgr[i][0] == dflt[0] && bgr[i][1] == dflt[1] && bgr[i][2] == dflt[2];
  const size_t all = n + !have;
  ts->bgr = malloc(all * sizeof *ts->bgr);
  ts->skip = calloc(all, sizeof *ts->skip);
  ts->tissue = calloc(all, sizeof *ts->tissue);
  ts->bg_counts = calloc(all, sizeof *ts->bg_counts);
  ts->bg_h = calloc(all, sizeof *ts->bg_h);
  if (!ts->bgr || !ts->skip || !ts->tissue || !ts->bg_counts || !ts->bg_h)
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ts->cap_bgr = all;
  int rc = 0;
  for (size_t i = 0; i < all && !rc; i++) {
    const double *b = i < n ? bgr[i] : dflt;
    double p[WSISA_SEG_NPARAMS] = {0};
    p[WSISA_P_B] = b[0], p[WSISA_P_G] = b[1], p[WSISA_P_R] = b[2];
    memcpy(ts->bgr[i], b, sizeof ts->bgr[i]);
    ts->nbgr++, ts->nprefetched++;
    rc = wsisa_workflow_background_submit(&ts->data, p, ts->bg_counts[i], &ts->bg_h[i], e);
  }
  return rc;
}

int wsisa__tile_open(const wsisa_tile_ref *ref, const wsisa_exec_opts *o, int recon_conns,
                     wsisa__tile_state *ts, const double (*bgr)[3], size_t nbgr,
                     wsisa_exec_stats *stats, wsisa_annotation **annot, wsisa_err *e) {
  memset(ts, 0, sizeof *ts);
  int rc = wsisa_tile_load_framed(ref, o->halo, &ts->rgb, &ts->frame, e);
  if (rc) return rc;
  ts->frame.recon_conns = recon_conns;
  int w = ts->rgb->width, h = ts->rgb->height;
  if ((rc = wsisa_image_register(ts->rgb, &ts->h_rgb, e))) return rc;
  if ((rc = wsisa_workflow_tile_submit_framed(ts->h_rgb, w, h, ref->scale.target_mpp,
                                              o->normalize, &ts->frame, &ts->data, e)))
    return rc;
  if (o->features && (rc = wsisa_workflow_channels_submit(&ts->data, 1, e))) return rc;
  stats->tile_stages++;
  if ((rc = tile_prefetch(ts, bgr, nbgr, e))) return rc;
  /* the store holds this tile's objects only: it starts with the tile, the
   * reference segmentation included, and ends with it */
  /* the open tiles' stores share the store's bytes */
  if (o->object_reuse &&
      wsisa_object_store_new(
          o->object_store_bytes /
              wsisa_exec_open_tiles(o, (size_t)(wsisa_runtime_ncpu() + wsisa_runtime_nopencl())),
          &ts->objects))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ts->data.objects = ts->objects;
  /* the tissue the reference segments (the core's at the defaults' (B, G, R),
   * none when the background rule empties it) comes with its count, submitted
   * above: tile_reference_tissue */
  if (ref->annot) return annotation_open(ref, o, ts, annot, e);
  if (o->nuclei_out) return 0; /* the nuclei are the product: no reference */
  if ((rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, &ts->ref, e))) return rc;
  if ((rc = wsisa_workflow_segment_submit(&ts->data, wsisa_seg_defaults(), ts->ref, e)))
    return rc;
  /* the counts come home while the tile's first units are submitted: the
   * submitting thread does not wait for the reference's segmentation */
  starpu_vector_data_register(&ts->ref_hc, STARPU_MAIN_RAM, (uintptr_t)ts->ref_counts, 3,
                              sizeof ts->ref_counts[0]);
  starpu_vector_data_register(&ts->ref_hn, STARPU_MAIN_RAM, (uintptr_t)&ts->ref_objects, 1,
                              sizeof ts->ref_objects);
  /* the reference's objects: matched with every run's, and reduced to feature rows */
  wsisa_measure m = {ts->ref_hc, ts->ref_hn, NULL, NULL,
                     o->object_match || o->features ? &ts->ref_labels : NULL};
  rc = wsisa_workflow_measure_submit(&ts->data, ts->ref, ts->ref, &m, e);
  /* the feature rows are sized by the object count: home first */
  if (rc || o->features) wsisa__tile_reference_wait(ts);
  if (!rc && o->features)
    rc = wsisa_workflow_rows_compute(&ts->data, ts->ref_labels, (size_t)ts->ref_nuclei,
                                     &ts->ref_features, e);
  if (!rc && o->features)
    wsisa__tile_rows_to_core(ts->ref_features, (size_t)ts->ref_nuclei, WSISA_NF_ROW(ts->data.nchannels), &ts->data);
  if (ts->ref_labels && !o->object_match) {
    starpu_data_unregister_submit(ts->ref_labels);
    ts->ref_labels = NULL;
  }
  return rc;
}

/* The store's counts since they were last taken, into `stats`. */
void wsisa__tile_objects_count(wsisa__tile_state *ts, wsisa_exec_stats *stats) {
  if (!ts->objects) return;
  wsisa_object_tally now;
  wsisa_object_store_tally(ts->objects, &now);
  for (int l = 0; l < 2; l++) {
    stats->objects_seen[l] += now.seen[l] - ts->counted.seen[l];
    stats->objects_reused[l] += now.reused[l] - ts->counted.reused[l];
    if (ts->moved) {
      stats->objects_seen_moved += now.seen[l] - ts->counted.seen[l];
      stats->objects_reused_moved += now.reused[l] - ts->counted.reused[l];
    }
    stats->objects_area[l] += now.area[l] - ts->counted.area[l];
    stats->objects_area_reused[l] += now.area_reused[l] - ts->counted.area_reused[l];
  }
  stats->object_evictions += now.evictions - ts->counted.evictions;
  if (now.bytes_peak > stats->object_store_peak) stats->object_store_peak = now.bytes_peak;
  ts->counted = now;
}

/* Every unit of the tile has finished: what is left reading it (a count
 * prefetched and never looked at, a tile stage output no leaf needed) is
 * waited for here. */
void wsisa__tile_close(wsisa__tile_state *ts, const wsisa_exec_opts *o) {
  wsisa__tile_reference_wait(ts);
  for (size_t i = 0; i < ts->nprefetched; i++)
    wsisa_workflow_background_wait(&ts->data, ts->bg_counts[i], &ts->bg_h[i]);
  wsisa_object_store_free(ts->objects);
  if (ts->data.rc) wsisa_workflow_tile_release(&ts->data, o->normalize);
  /* an annotation's handles sit on host images freed below: wait for them */
  void (*unregister)(starpu_data_handle_t) =
      ts->annot_mask ? starpu_data_unregister : starpu_data_unregister_submit;
  if (ts->ref) unregister(ts->ref);
  if (ts->ref_labels) unregister(ts->ref_labels);
  wsisa_image_free(ts->annot_mask);
  wsisa_image_free(ts->annot_labels);
  if (ts->h_rgb) starpu_data_unregister(ts->h_rgb); /* waits for its readers */
  wsisa_image_free(ts->rgb);
  free(ts->bgr);
  free(ts->skip);
  free(ts->tissue);
  free(ts->bg_counts);
  free(ts->bg_h);
  free(ts->ref_features);
  memset(ts, 0, sizeof *ts);
}
