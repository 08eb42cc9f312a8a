/* The segmentation workflow (docs/workflow.md) as StarPU graphs. Every level's
 * fine-grain operations are codelets; intermediates live only in StarPU
 * (home node -1) and are released as soon as their last consumer is
 * submitted. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/workflow/workflow.h"
#include "reuse/reuse.h"
#include "sa/sa.h"

/* the workflow's parameter vector is sa/'s table, row for row */
_Static_assert(WSISA_SEG_NPARAMS == WSISA_SA_NSEG,
               "WSISA_SEG_NPARAMS (workflow.h's enum) and WSISA_SA_NSEG (sa.h) count the "
               "same 15 parameters");

const char *wsisa_seg_param_name(int index) { return wsisa_sa_seg_params[index].name; }

int wsisa_seg_param_level(int index) { return wsisa_sa_seg_params[index].level; }

const double *wsisa_seg_defaults(void) {
  static double defaults[WSISA_SEG_NPARAMS];
  static int filled;
  if (!filled) {
    for (int i = 0; i < WSISA_SEG_NPARAMS; i++) defaults[i] = wsisa_sa_seg_params[i].def;
    filled = 1;
  }
  return defaults;
}

/* @FILE: a JSON object of parameter values, or an object whose "parameters"
 * object holds them (best.json, whose other keys are ignored). */
static int params_from_file(const char *path, double *p, wsisa_err *e) {
  json_error_t jerr;
  char *text;
  size_t len;
  wsisa_err read_err = WSISA_ERR_INIT;
  if (wsisa_text_read(path, WSISA_TEXT_MAX_PARAMS, "a JSON object of parameters", &text, &len,
                      &read_err))
    return wsisa_error(e, WSISA_EUSAGE, "--params @%s", read_err.msg);
  /* a key given twice is a slip, refused as a study file's is */
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  free(text);
  if (!root)
    return wsisa_error(e, WSISA_EUSAGE, "--params @%s:%d:%d: %s", path, jerr.line, jerr.column,
                       jerr.text);
  json_t *params = json_object_get(root, "parameters");
  const char *prefix = params ? "parameters." : "";
  if (!params) params = root;
  int rc = 0;
  if (!json_is_object(params))
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "--params @%s: %s not a JSON object of parameter values (name: number)",
                     path, params == root ? "the file is" : "\"parameters\" is");
  const char *name;
  json_t *v;
  double q[WSISA_SEG_NPARAMS];
  memcpy(q, p, sizeof q);
  json_object_foreach(params, name, v) {
    if (rc) break;
    wsisa_err inner = WSISA_ERR_INIT;
    const wsisa_sa_seg_param *sp = NULL;
    if (wsisa_sa_seg_lookup(name, &sp, &inner))
      rc = wsisa_error(e, WSISA_EUSAGE, "--params @%s: %s%s", path, prefix, inner.msg);
    else if (!json_is_number(v) || !isfinite(json_number_value(v)))
      rc = wsisa_error(e, WSISA_EUSAGE, "--params @%s: %s%s: not a number", path, prefix, name);
    else if (wsisa_sa_seg_validate(name, json_number_value(v), &inner))
      rc = wsisa_error(e, WSISA_EUSAGE, "--params @%s: %s%s", path, prefix, inner.msg);
    else
      q[sp - wsisa_sa_seg_params] = json_number_value(v);
  }
  json_decref(root);
  if (!rc) memcpy(p, q, sizeof q);
  return rc;
}

int wsisa_seg_params_parse(const char *text, double *p, wsisa_err *e) {
  if (text[0] == '@') return params_from_file(text + 1, p, e);
  char buf[1024];
  if (strlen(text) >= sizeof buf) return wsisa_error(e, WSISA_EUSAGE, "--params: too long");
  strcpy(buf, text);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq || eq == item || !eq[1])
      return wsisa_error(e, WSISA_EUSAGE, "--params %s: expected name=value", item);
    *eq = '\0';
    const wsisa_sa_seg_param *sp = NULL;
    int rc = wsisa_sa_seg_lookup(item, &sp, e);
    if (rc) return rc;
    char *end;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !isfinite(v))
      return wsisa_error(e, WSISA_EUSAGE, "--params %s=%s: not a number", item, eq + 1);
    if ((rc = wsisa_sa_seg_validate(item, v, e))) return rc;
    p[sp - wsisa_sa_seg_params] = v;
  }
  return 0;
}

#define MASK_RBC_RATIO_RB 1.0 /* red over blue above 1: reddish, part of the RBC rule */

static int tmp_mask(const wsisa_tile_data *t, starpu_data_handle_t *h, wsisa_err *e) {
  return wsisa_image_register_tmp(t->width, t->height, 1, WSISA_U8, h, e);
}

static int tmp_float(const wsisa_tile_data *t, starpu_data_handle_t *h, wsisa_err *e) {
  return wsisa_image_register_tmp(t->width, t->height, 1, WSISA_F32, h, e);
}

static int tmp_labels(const wsisa_tile_data *t, starpu_data_handle_t *h, wsisa_err *e) {
  return wsisa_image_register_tmp(t->width, t->height, 1, WSISA_I32, h, e);
}

static void release(starpu_data_handle_t *h) {
  if (*h) starpu_data_unregister_submit(*h);
  *h = NULL;
}

static int submitted(int ret, const char *what, wsisa_err *e) {
  if (ret == 0) return 0;
  return wsisa_error(e, ret == WSISA_EUSAGE ? WSISA_EUSAGE : WSISA_ERUNTIME,
                     "cannot submit %s to StarPU", what);
}

/* A size parameter (an area in pixels at WSISA_TARGET_MPP) in the tile's
 * pixels: by the square of the length scale, rounded; as it is at 0.5 um. */
static int area_px(const wsisa_tile_data *t, double area) {
  if (t->length_scale == 1) return (int)area;
  return (int)llround(area * t->length_scale * t->length_scale);
}

/* The tile stage's opening: a 19x19 disk (radius 9) at WSISA_TARGET_MPP, its
 * radius scaled linearly. */
static int opening_side(const wsisa_tile_data *t) {
  return 2 * (int)llround(WSISA_OPENING_RADIUS * t->length_scale) + 1;
}

int wsisa_workflow_halo(const double *p, size_t nruns) {
  /* What an owned object's pixels depend on: the object itself, which the
   * size filters bound (a disk of the largest area kept, 2 sqrt(A / pi)
   * across, as the centroid may sit at the core's edge), the opening of rc
   * (an erosion then a dilation by the disk: 2 x its radius), and the 3x3
   * operations (hysteresis opening, separation's dilation: 3 pixels). The
   * reconstructions (levels 1, 2, 5) and hole filling reach as far as the
   * structures they follow, without bound; twice the sum covers them on
   * H&E at the parameters' resolution (docs/workflow.md, Tiles, measures
   * the agreement it gives). Rounded up to 16 pixels. */
  double area = 0;
  for (size_t r = 0; r < nruns; r++) {
    const double *q = p + r * WSISA_SEG_NPARAMS;
    area = fmax(area, fmax(q[WSISA_P_MAX_SIZE], q[WSISA_P_MAX_SIZE_SEG]));
  }
  double reach = 2.0 * sqrt(area / 3.14159265358979323846) + 2 * WSISA_OPENING_RADIUS + 3;
  int halo = (int)ceil(WSISA_HALO_MARGIN * reach);
  return (halo + 15) / 16 * 16;
}

int wsisa_workflow_halo_at(const double *p, size_t nruns, double target_mpp) {
  int h = wsisa_workflow_halo(wsisa_seg_defaults(), 1);
  int hr = p && nruns ? wsisa_workflow_halo(p, nruns) : 0;
  if (hr > h) h = hr;
  /* the reach is in pixels at WSISA_TARGET_MPP; at another resolution the
   * size parameters follow it */
  const double mpp = target_mpp > 0 ? target_mpp : WSISA_TARGET_MPP;
  return mpp == WSISA_TARGET_MPP ? h : ((int)ceil(h * WSISA_TARGET_MPP / mpp) + 15) / 16 * 16;
}

int wsisa_workflow_tile_submit(starpu_data_handle_t rgb_in, int width, int height,
                               int normalize, wsisa_tile_data *tile, wsisa_err *e) {
  return wsisa_workflow_tile_submit_framed(rgb_in, width, height, WSISA_TARGET_MPP, normalize,
                                           NULL, tile, e);
}

/* The given statistics as a vector of their own (no home: StarPU frees it). */
static int stats_handle(const double *stats, starpu_data_handle_t *h, wsisa_err *e) {
  starpu_vector_data_register(h, -1, 0, WSISA_STATS_N, sizeof(double));
  if (starpu_data_acquire(*h, STARPU_W)) {
    release(h);
    return wsisa_error(e, WSISA_ERUNTIME, "cannot acquire the colour statistics");
  }
  memcpy((void *)starpu_vector_get_local_ptr(*h), stats, WSISA_STATS_N * sizeof *stats);
  starpu_data_release(*h);
  return 0;
}

/* A mask of the core: 255 inside, 0 in the halo. */
static int core_mask(wsisa_tile_data *t, wsisa_err *e) {
  int rc = tmp_mask(t, &t->core_mask, e);
  if (rc) return rc;
  if (starpu_data_acquire(t->core_mask, STARPU_W))
    return wsisa_error(e, WSISA_ERUNTIME, "cannot acquire the core mask");
  wsisa_image m = wsisa_image_view((void *)starpu_matrix_get_local_ptr(t->core_mask), t->width,
                                   t->height, 1, WSISA_U8,
                                   starpu_matrix_get_local_ld(t->core_mask));
  for (int y = 0; y < m.height; y++) {
    uint8_t *row = wsisa_image_row(&m, y);
    memset(row, 0, (size_t)m.width);
    if (y >= t->core_y && y < t->core_y + t->core_h)
      memset(row + t->core_x, 255, (size_t)t->core_w);
  }
  starpu_data_release(t->core_mask);
  return 0;
}

int wsisa_workflow_tile_submit_framed(starpu_data_handle_t rgb_in, int width, int height,
                                      double target_mpp, int normalize,
                                      const wsisa_tile_frame *frame, wsisa_tile_data *tile,
                                      wsisa_err *e) {
  memset(tile, 0, sizeof *tile);
  tile->width = width;
  tile->height = height;
  tile->core_w = width;
  tile->core_h = height;
  tile->length_scale = target_mpp > 0 ? WSISA_TARGET_MPP / target_mpp : 1;
  int rc = 0;
  if (frame && frame->core_w > 0) {
    if (frame->core_x < 0 || frame->core_y < 0 || frame->core_h <= 0 ||
        frame->core_x + frame->core_w > width || frame->core_y + frame->core_h > height)
      return wsisa_error(e, WSISA_EINTERNAL, "a tile's core outside the pixels read");
    tile->core_x = frame->core_x;
    tile->core_y = frame->core_y;
    tile->core_w = frame->core_w;
    tile->core_h = frame->core_h;
    if ((tile->core_w != width || tile->core_h != height) && (rc = core_mask(tile, e)))
      goto fail;
  }
  if (normalize) {
    starpu_data_handle_t stats = NULL;
    if (frame && frame->stats && (rc = stats_handle(frame->stats, &stats, e))) goto fail;
    if ((rc = wsisa_image_register_tmp(width, height, 3, WSISA_U8, &tile->rgb, e))) {
      release(&stats);
      goto fail;
    }
    rc = submitted(wsisa_normalize_submit_stats(rgb_in, tile->rgb, width, height, stats),
                   "normalization", e);
    release(&stats);
    if (rc) goto fail;
  } else {
    tile->rgb = rgb_in;
  }
  if ((rc = tmp_mask(tile, &tile->rc, e)) || (rc = tmp_mask(tile, &tile->rc_open, e))) goto fail;
  if ((rc = submitted(wsisa_submit_invert(tile->rgb, tile->rc, 0), "invert", e)) ||
      (rc = submitted(wsisa_submit_morph(tile->rc, tile->rc_open, WSISA_MORPH_OPEN, opening_side(tile)),
                      "opening", e)))
    goto fail;
  /* level 2's reconstructions, once per tile instead of once per level-1
   * prefix (they do not read level 1's output) */
  for (int k = 0; k < 2 && frame; k++) {
    if (!(frame->recon_conns & (1 << k))) continue;
    if ((rc = tmp_mask(tile, &tile->recon[k], e)) ||
        (rc = submitted(wsisa_submit_reconstruct(tile->rc_open, tile->rc, tile->recon[k],
                                                 k ? 8 : 4),
                        "reconstruction", e)))
      goto fail;
  }
  return 0;
fail:
  wsisa_workflow_tile_release(tile, normalize);
  return rc;
}

void wsisa_workflow_tile_release(wsisa_tile_data *tile, int release_rgb) {
  if (release_rgb) release(&tile->rgb);
  tile->rgb = NULL;
  release(&tile->rc);
  release(&tile->rc_open);
  release(&tile->recon[0]);
  release(&tile->recon[1]);
  release(&tile->core_mask);
  for (int c = 0; c < tile->nchannels; c++) release(&tile->channels[c]);
  tile->nchannels = 0;
}

int wsisa_workflow_background_submit(const wsisa_tile_data *tile, const double *p,
                                     uint64_t counts[3], starpu_data_handle_t *h, wsisa_err *e) {
  starpu_data_handle_t bg = NULL;
  counts[0] = counts[1] = counts[2] = 0;
  *h = NULL;
  int rc = tmp_mask(tile, &bg, e);
  if (rc) return rc;
  starpu_vector_data_register(h, STARPU_MAIN_RAM, (uintptr_t)counts, 3, sizeof counts[0]);
  rc = submitted(wsisa_submit_background(tile->rgb, bg, (int)p[WSISA_P_B], (int)p[WSISA_P_G],
                                         (int)p[WSISA_P_R]),
                 "background", e);
  /* a tile read with a halo: its core's background only */
  starpu_data_handle_t in_core = NULL;
  if (!rc && tile->core_mask && !(rc = tmp_mask(tile, &in_core, e)))
    rc = submitted(wsisa_submit_mask_logic(bg, tile->core_mask, in_core, WSISA_MASK_AND),
                   "background of the core", e);
  if (in_core) {
    release(&bg);
    bg = in_core;
  }
  if (!rc) rc = submitted(wsisa_submit_compare(bg, bg, *h), "background count", e);
  release(&bg);
  return rc;
}

uint64_t wsisa_workflow_tissue(const wsisa_tile_data *tile, const uint64_t counts[3]) {
  const uint64_t core = (uint64_t)tile->core_w * (uint64_t)tile->core_h;
  return counts[1] < core ? core - counts[1] : 0;
}

int wsisa_workflow_background_wait(const wsisa_tile_data *tile, const uint64_t counts[3],
                                   starpu_data_handle_t *h) {
  /* unregister waits for the count and brings it home */
  if (*h) starpu_data_unregister(*h);
  *h = NULL;
  /* tissue, the core's pixels off the background, under the detector's
   * share: the same numbers as WSISA_BACKGROUND_SKIP's, without rounding */
  const double core = (double)tile->core_w * tile->core_h;
  return (double)wsisa_workflow_tissue(tile, counts) < WSISA_TISSUE_THRESHOLD * core;
}

int wsisa_workflow_background_tissue(const wsisa_tile_data *tile, const double *p, int *skip,
                                     uint64_t *tissue, wsisa_err *e) {
  uint64_t counts[3];
  starpu_data_handle_t hcounts = NULL;
  int rc = wsisa_workflow_background_submit(tile, p, counts, &hcounts, e);
  int empty = wsisa_workflow_background_wait(tile, counts, &hcounts);
  if (rc) return rc;
  *skip = empty;
  if (tissue) *tissue = wsisa_workflow_tissue(tile, counts);
  return 0;
}

int wsisa_workflow_background_skip(const wsisa_tile_data *tile, const double *p, int *skip,
                                   wsisa_err *e) {
  return wsisa_workflow_background_tissue(tile, p, skip, NULL, e);
}

/* Level 1: red blood cells. r/(g+eps) > T1 seeds a reconstruction of
 * r/(g+eps) > T2 (8-connected), kept where r/(b+eps) > 1. */
static int level1(const double *p, const wsisa_tile_data *t, wsisa_task_data *d, wsisa_err *e) {
  starpu_data_handle_t seeds = NULL, loose = NULL, grown = NULL, reddish = NULL;
  int rc = 0;
  if ((rc = tmp_mask(t, &seeds, e)) || (rc = tmp_mask(t, &loose, e)) ||
      (rc = tmp_mask(t, &grown, e)) || (rc = tmp_mask(t, &reddish, e)) ||
      (rc = tmp_mask(t, &d->rbc, e)))
    goto done;
  rc = submitted(wsisa_submit_ratio_mask(t->rgb, seeds, 0, 1, p[WSISA_P_T1]), "RBC seeds", e);
  if (!rc) rc = submitted(wsisa_submit_ratio_mask(t->rgb, loose, 0, 1, p[WSISA_P_T2]), "RBC mask", e);
  if (!rc) rc = submitted(wsisa_submit_bin_reconstruct(seeds, loose, grown, 8), "RBC reconstruction", e);
  if (!rc) rc = submitted(wsisa_submit_ratio_mask(t->rgb, reddish, 0, 2, MASK_RBC_RATIO_RB), "RBC red/blue", e);
  if (!rc) rc = submitted(wsisa_submit_mask_logic(grown, reddish, d->rbc, WSISA_MASK_AND), "RBC and", e);
done:
  release(&seeds);
  release(&loose);
  release(&grown);
  release(&reddish);
  return rc;
}

/* Level 2's connectivity as a bit of wsisa_tile_frame.recon_conns (its
 * reconstruction is wsisa_tile_data.recon[bit >> 1]). */
static int recon_conn_bit(const double *p) { return p[WSISA_P_RECON_CONN] == 4 ? 1 : 2; }

/* Level 2: rc_recon = reconstruction of rc_open under rc (RC-connected); the
 * candidates' contrast diff = rc - rc_recon (saturating). */
static int level2(const double *p, const wsisa_tile_data *t, wsisa_task_data *d, wsisa_err *e) {
  starpu_data_handle_t recon = NULL;
  int conn = (int)p[WSISA_P_RECON_CONN], rc = tmp_mask(t, &d->diff, e);
  if (rc) return rc;
  /* the tile stage's when it made it */
  starpu_data_handle_t made = t->recon[recon_conn_bit(p) >> 1];
  if (!made) {
    if ((rc = tmp_mask(t, &recon, e))) return rc;
    rc = submitted(wsisa_submit_reconstruct(t->rc_open, t->rc, recon, conn), "reconstruction", e);
  }
  if (!rc) rc = submitted(wsisa_submit_sub_sat(t->rc, made ? made : recon, d->diff), "subtract", e);
  release(&recon);
  return rc;
}

int wsisa_workflow_recon_conns(const double *p, size_t nruns) {
  int conns = recon_conn_bit(wsisa_seg_defaults());
  for (size_t r = 0; r < nruns; r++) conns |= recon_conn_bit(p + r * WSISA_SEG_NPARAMS);
  return conns;
}

/* Level 3: bw1 = fill holes (FH) of diff > G1. */
static int level3(const double *p, const wsisa_tile_data *t, wsisa_task_data *d, wsisa_err *e) {
  starpu_data_handle_t above = NULL;
  int rc = 0;
  if ((rc = tmp_mask(t, &above, e)) || (rc = tmp_mask(t, &d->cand, e))) goto done;
  rc = submitted(wsisa_submit_threshold(d->diff, above, (int)p[WSISA_P_G1]), "threshold G1", e);
  if (!rc)
    rc = submitted(wsisa_submit_fill_holes(above, d->cand, (int)p[WSISA_P_FILL_HOLES_CONN]),
                   "fill holes", e);
done:
  release(&above);
  return rc;
}

/* Level 4: 8-connected candidates with minS <= area < maxS. */
static int level4(const double *p, const wsisa_tile_data *t, wsisa_task_data *d, wsisa_err *e) {
  int rc = tmp_mask(t, &d->sized, e);
  if (rc) return rc;
  return submitted(wsisa_submit_area_filter(d->cand, d->sized, 8, area_px(t, p[WSISA_P_MIN_SIZE]),
                                            area_px(t, p[WSISA_P_MAX_SIZE])),
                   "area filter", e);
}

/* Level 5: hysteresis. Reconstruct diff > G2 from the sized candidates
 * (8-conn), drop red blood cells, fill holes (4-conn), open with the 3x3
 * ellipse. */
static int level5(const double *p, const wsisa_tile_data *t, wsisa_task_data *d, wsisa_err *e) {
  starpu_data_handle_t above = NULL, grown = NULL, no_rbc = NULL, filled = NULL;
  int rc = 0;
  if ((rc = tmp_mask(t, &above, e)) || (rc = tmp_mask(t, &grown, e)) ||
      (rc = tmp_mask(t, &no_rbc, e)) || (rc = tmp_mask(t, &filled, e)) ||
      (rc = tmp_mask(t, &d->hyst, e)))
    goto done;
  rc = submitted(wsisa_submit_threshold(d->diff, above, (int)p[WSISA_P_G2]), "threshold G2", e);
  if (!rc) rc = submitted(wsisa_submit_bin_reconstruct(d->sized, above, grown, 8), "hysteresis", e);
  if (!rc) rc = submitted(wsisa_submit_mask_logic(grown, d->rbc, no_rbc, WSISA_MASK_ANDNOT), "RBC removal", e);
  if (!rc) rc = submitted(wsisa_submit_fill_holes(no_rbc, filled, 4), "fill holes", e);
  if (!rc) rc = submitted(wsisa_submit_morph(filled, d->hyst, WSISA_MORPH_OPEN, 3), "opening", e);
done:
  release(&above);
  release(&grown);
  release(&no_rbc);
  release(&filled);
  return rc;
}

/* Level 6: separation of touching nuclei. Components >= minSPL (8-conn),
 * dilated by the 3x3 ellipse; markers are the regional minima (8-conn) of the
 * h-minima (h = 1) of the negated distance, labelled with WConn; a marker
 * watershed of the masked RGB removes the lines between regions. */
static int level6(const double *p, const wsisa_tile_data *t, wsisa_task_data *d, wsisa_err *e) {
  starpu_data_handle_t big0 = NULL, big = NULL, dist = NULL, relief = NULL, hmin = NULL,
                       minima = NULL, markers = NULL, labels = NULL;
  int rc = 0;
  if (t->objects && !d->basins) {
    /* object reuse: the separation cluster by cluster, from the store when
     * seen before; it gives no watershed regions */
    if ((rc = tmp_mask(t, &big0, e)) || (rc = tmp_mask(t, &big, e)) ||
        (rc = tmp_mask(t, &d->sep, e)))
      goto done;
    rc = submitted(wsisa_submit_area_filter(d->hyst, big0, 8, area_px(t, p[WSISA_P_MIN_SIZE_PL]), 0),
                   "area filter", e);
    if (!rc) rc = submitted(wsisa_submit_morph(big0, big, WSISA_MORPH_DILATE, 3), "dilation", e);
    if (!rc)
      rc = submitted(wsisa_submit_separate(t->rgb, big, d->sep, (int)p[WSISA_P_WATERSHED_CONN],
                                           t->objects),
                     "separation by clusters", e);
    goto done;
  }
  if ((rc = tmp_mask(t, &big0, e)) || (rc = tmp_mask(t, &big, e)) ||
      (rc = tmp_float(t, &dist, e)) || (rc = tmp_float(t, &relief, e)) ||
      (rc = tmp_float(t, &hmin, e)) || (rc = tmp_mask(t, &minima, e)) ||
      (rc = tmp_labels(t, &markers, e)) || (!d->basins && (rc = tmp_labels(t, &labels, e))) ||
      (rc = tmp_mask(t, &d->sep, e)))
    goto done;
  rc = submitted(wsisa_submit_area_filter(d->hyst, big0, 8, area_px(t, p[WSISA_P_MIN_SIZE_PL]), 0),
                 "area filter", e);
  if (!rc) rc = submitted(wsisa_submit_morph(big0, big, WSISA_MORPH_DILATE, 3), "dilation", e);
  if (!rc) rc = submitted(wsisa_submit_edt(big, dist), "distance transform", e);
  if (!rc) rc = submitted(wsisa_submit_neg_dist(dist, big, relief), "relief", e);
  if (!rc) rc = submitted(wsisa_submit_hmin(relief, hmin, 1.0f, 8), "h-minima", e);
  if (!rc) rc = submitted(wsisa_submit_regional_min(hmin, minima, 8), "regional minima", e);
  if (!rc)
    rc = submitted(wsisa_submit_label(minima, markers, (int)p[WSISA_P_WATERSHED_CONN]),
                   "marker labelling", e);
  if (!rc)
    rc = submitted(wsisa_submit_watershed(t->rgb, markers, big, d->basins ? d->basins : labels,
                                          d->sep),
                   "watershed", e);
done:
  release(&big0);
  release(&big);
  release(&dist);
  release(&relief);
  release(&hmin);
  release(&minima);
  release(&markers);
  release(&labels);
  return rc;
}

/* Level 7: 4-connected components with minSS <= area < maxSS, holes filled (FH)
 * object by object: a hole holding another object stays, so the watershed's
 * objects are never joined again. */
static int level7(const double *p, const wsisa_tile_data *t, wsisa_task_data *d,
                  starpu_data_handle_t final_out, wsisa_err *e) {
  starpu_data_handle_t sized = NULL;
  int rc = 0;
  if (final_out) d->final = final_out;
  else if ((rc = tmp_mask(t, &d->final, e))) return rc;
  if (t->objects)
    /* object reuse: group by group, from the store when seen before */
    return submitted(wsisa_submit_final_size(d->sep, d->final, area_px(t, p[WSISA_P_MIN_SIZE_SEG]),
                                             area_px(t, p[WSISA_P_MAX_SIZE_SEG]),
                                             (int)p[WSISA_P_FILL_HOLES_CONN], t->objects),
                     "final size by groups", e);
  if ((rc = tmp_mask(t, &sized, e))) return rc;
  rc = submitted(wsisa_submit_area_filter(d->sep, sized, 4, area_px(t, p[WSISA_P_MIN_SIZE_SEG]),
                                          area_px(t, p[WSISA_P_MAX_SIZE_SEG])),
                 "area filter", e);
  if (!rc)
    rc = submitted(wsisa_submit_fill_object_holes(sized, d->final,
                                                  (int)p[WSISA_P_FILL_HOLES_CONN]),
                   "fill holes", e);
  release(&sized);
  return rc;
}

int wsisa_workflow_task_submit(int level, const double *p, const wsisa_tile_data *tile,
                               wsisa_task_data *path, starpu_data_handle_t final_out,
                               wsisa_err *e) {
  switch (level) {
    case 1: return level1(p, tile, path, e);
    case 2: return level2(p, tile, path, e);
    case 3: return level3(p, tile, path, e);
    case 4: return level4(p, tile, path, e);
    case 5: return level5(p, tile, path, e);
    case 6: return level6(p, tile, path, e);
    case 7: return level7(p, tile, path, final_out, e);
  }
  return wsisa_error(e, WSISA_EINTERNAL, "no task level %d", level);
}

void wsisa_workflow_task_release(int level, wsisa_task_data *path) {
  starpu_data_handle_t *outputs[] = {&path->rbc, &path->diff, &path->cand, &path->sized,
                                     &path->hyst, &path->sep, &path->final};
  if (level < 1 || level > WSISA_SEG_LEVELS) return;
  release(outputs[level - 1]);
}

int wsisa_workflow_measure_submit(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                  starpu_data_handle_t ref, const wsisa_measure *m,
                                  wsisa_err *e) {
  starpu_data_handle_t labels = NULL;
  int rc = tmp_labels(tile, &labels, e);
  if (rc) return rc;
  rc = submitted(wsisa_submit_compare(mask, ref, m->counts), "comparison", e);
  if (!rc) rc = wsisa_workflow_objects_submit(mask, labels, m->nuclei, e);
  if (!rc && m->match)
    rc = submitted(wsisa_submit_object_match(m->ref_labels, labels, m->match), "object matching",
                   e);
  if (!rc && m->labels_out) {
    *m->labels_out = labels;
    return 0;
  }
  release(&labels);
  return rc;
}

int wsisa_workflow_own_submit(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                              starpu_data_handle_t *owned, wsisa_err *e) {
  *owned = mask;
  if (!tile->core_mask) return 0;
  starpu_data_handle_t labels = NULL, out = NULL;
  int rc = tmp_labels(tile, &labels, e);
  if (!rc) rc = tmp_mask(tile, &out, e);
  /* 4-connected, as the final size filter and the measures count objects */
  if (!rc) rc = submitted(wsisa_submit_label(mask, labels, 4), "labelling", e);
  if (!rc)
    rc = submitted(wsisa_submit_own_objects(labels, out, tile->core_x, tile->core_y,
                                            tile->core_x + tile->core_w,
                                            tile->core_y + tile->core_h),
                   "the core's objects", e);
  release(&labels);
  if (rc) {
    release(&out);
    return rc;
  }
  *owned = out;
  return 0;
}

int wsisa_workflow_segment_submit(const wsisa_tile_data *tile, const double *p,
                                  starpu_data_handle_t mask_out, wsisa_err *e) {
  int skip = 0, rc = wsisa_workflow_background_skip(tile, p, &skip, e);
  if (rc) return rc;
  return wsisa_workflow_segment_submit_decided(tile, p, skip, mask_out, e);
}

int wsisa_workflow_segment_submit_decided(const wsisa_tile_data *tile, const double *p,
                                          int empty, starpu_data_handle_t mask_out,
                                          wsisa_err *e) {
  int rc = 0;
  if (empty) {
    if (starpu_data_acquire(mask_out, STARPU_W))
      return wsisa_error(e, WSISA_ERUNTIME, "cannot acquire the output mask");
    wsisa_image m = wsisa_image_view((void *)starpu_matrix_get_local_ptr(mask_out),
                                     (int)starpu_matrix_get_nx(mask_out),
                                     (int)starpu_matrix_get_ny(mask_out), 1, WSISA_U8,
                                     starpu_matrix_get_local_ld(mask_out));
    for (int y = 0; y < m.height; y++) memset(wsisa_image_row(&m, y), 0, (size_t)m.width);
    starpu_data_release(mask_out);
    return 0;
  }
  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  /* with a halo, level 7 writes an intermediate the core's objects come from */
  starpu_data_handle_t final_out = tile->core_mask ? NULL : mask_out;
  for (int level = 1; level <= WSISA_SEG_LEVELS && !rc; level++)
    rc = wsisa_workflow_task_submit(level, p, tile, &path, final_out, e);
  if (!rc && tile->core_mask) {
    starpu_data_handle_t labels = NULL;
    if (!(rc = tmp_labels(tile, &labels, e)) &&
        !(rc = submitted(wsisa_submit_label(path.final, labels, 4), "labelling", e)))
      rc = submitted(wsisa_submit_own_objects(labels, mask_out, tile->core_x, tile->core_y,
                                              tile->core_x + tile->core_w,
                                              tile->core_y + tile->core_h),
                     "the core's objects", e);
    release(&labels);
  }
  /* mask_out belongs to the caller: forget it before releasing the path. */
  if (!tile->core_mask) path.final = NULL;
  for (int level = 1; level <= WSISA_SEG_LEVELS; level++)
    wsisa_workflow_task_release(level, &path);
  return rc;
}

/* ---- the feature stage ------------------------------------------------------ */

/* H, E, the Sobel magnitude of H, then the filter bank on H at each scale. */
static const float fb_scales[] = WSISA_FILTER_BANK_DEFAULT_SCALES;
#define NSCALES ((int)(sizeof fb_scales / sizeof *fb_scales))
#define NCHANNELS (3 + NSCALES)

int wsisa_workflow_channel_count(void) { return NCHANNELS; }

const char *wsisa_workflow_channel_name(int channel) {
  static char names[NCHANNELS][24] = {"h", "e", "grad"};
  if (channel < 0 || channel >= NCHANNELS) return NULL;
  if (channel >= 3 && !names[channel][0])
    snprintf(names[channel], sizeof names[channel], "fb_s%g", (double)fb_scales[channel - 3]);
  return names[channel];
}

int wsisa_workflow_channels_submit(wsisa_tile_data *tile, int filter_bank_on_cpu,
                                   wsisa_err *e) {
  starpu_data_handle_t res = NULL;
  int rc = 0;
  tile->nchannels = NCHANNELS;
  for (int c = 0; c < NCHANNELS && !rc; c++) rc = tmp_float(tile, &tile->channels[c], e);
  if (!rc) rc = tmp_float(tile, &res, e);
  if (!rc)
    rc = submitted(wsisa_submit_deconv(tile->rgb, NULL, tile->channels[0], tile->channels[1], res),
                   "colour deconvolution", e);
  if (!rc) rc = submitted(wsisa_submit_sobel(tile->channels[0], tile->channels[2]), "Sobel", e);
  if (!rc) {
    /* FFT (CPU) and direct convolution (OpenCL) agree only to rounding: a
     * study metric must not depend on the worker, so it pins this task */
    uint32_t where = wsisa_codelets_where();
    if (filter_bank_on_cpu) wsisa_codelets_set_where(STARPU_CPU);
    rc = submitted(wsisa_submit_filter_bank(tile->channels[0], fb_scales, NSCALES,
                                            tile->channels + 3),
                   "filter bank", e);
    wsisa_codelets_set_where(where);
  }
  release(&res);
  return rc;
}

int wsisa_workflow_feature_column(int col, char *buf, size_t cap) {
  if (col < 0 || col >= WSISA_NF_ROW(NCHANNELS)) return -1;
  if (col < WSISA_NF_SHAPE) snprintf(buf, cap, "%s", wsisa_nf_shape_names[col]);
  else
    snprintf(buf, cap, "%s_%s", wsisa_workflow_channel_name((col - WSISA_NF_SHAPE) / WSISA_NF_STATS),
             wsisa_nf_stat_names[(col - WSISA_NF_SHAPE) % WSISA_NF_STATS]);
  return 0;
}

int wsisa_workflow_feature_find(const char *name) {
  char buf[64];
  for (int c = 0; wsisa_workflow_feature_column(c, buf, sizeof buf) == 0; c++)
    if (strcmp(buf, name) == 0) return c;
  return -1;
}

int wsisa_workflow_objects_submit(starpu_data_handle_t mask, starpu_data_handle_t labels,
                                  starpu_data_handle_t count, wsisa_err *e) {
  int rc = submitted(wsisa_submit_label(mask, labels, 4), "object labelling", e);
  if (!rc) rc = submitted(wsisa_submit_count_labels(labels, count), "object count", e);
  return rc;
}

int wsisa_workflow_reduce_submit(const wsisa_tile_data *tile, starpu_data_handle_t labels,
                                 starpu_data_handle_t rows, wsisa_err *e) {
  return submitted(wsisa_submit_nucleus_features(labels, tile->channels, tile->nchannels, rows),
                   "nucleus features", e);
}

int wsisa_workflow_rows_compute(const wsisa_tile_data *tile, starpu_data_handle_t labels,
                                size_t n, double **rows, wsisa_err *e) {
  *rows = NULL;
  if (!n) return 0;
  size_t len = n * WSISA_NF_ROW(tile->nchannels);
  double *r = malloc(len * sizeof *r);
  if (!r) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  starpu_data_handle_t hrows = NULL;
  starpu_vector_data_register(&hrows, STARPU_MAIN_RAM, (uintptr_t)r, (uint32_t)len, sizeof *r);
  int rc = wsisa_workflow_reduce_submit(tile, labels, hrows, e);
  starpu_data_unregister(hrows); /* waits for the rows and brings them home */
  if (rc) free(r);
  else *rows = r;
  return rc;
}

int wsisa_workflow_features_compute(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                    double **rows, size_t *n, wsisa_err *e) {
  *rows = NULL;
  *n = 0;
  uint64_t count = 0;
  starpu_data_handle_t labels = NULL, hcount = NULL;
  int rc = tmp_labels(tile, &labels, e);
  if (rc) return rc;
  starpu_vector_data_register(&hcount, STARPU_MAIN_RAM, (uintptr_t)&count, 1, sizeof count);
  rc = wsisa_workflow_objects_submit(mask, labels, hcount, e);
  starpu_data_unregister(hcount); /* waits for the count and brings it home */
  if (!rc && !(rc = wsisa_workflow_rows_compute(tile, labels, (size_t)count, rows, e)))
    *n = (size_t)count;
  release(&labels);
  return rc;
}

/* ---- the task keys ---------------------------------------------------------- */

int wsisa_workflow_keys(const double *values, size_t nruns, size_t nparams, const int *level,
                        uint64_t *keys) {
  size_t *level0 = malloc((nparams ? nparams : 1) * sizeof *level0);
  if (!level0) return WSISA_ENOMEM;
  for (size_t p = 0; p < nparams; p++) level0[p] = (size_t)level[p] - 1;
  int rc = wsisa_reuse_keys_from_values(values, nruns, nparams, level0, WSISA_SEG_LEVELS, keys);
  free(level0);
  return rc ? WSISA_EINTERNAL : 0;
}
