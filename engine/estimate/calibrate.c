/* `wsisa calibrate`: this host's performance models filled with the study's
 * own tasks, round after round on its largest and smallest tiles, then the
 * probes (seed 004; docs/architecture.md, "The estimate": "Calibration"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate_internal.h"

#define MAX_PASSES 3

/* One measured segmentation of a round, its results at home. */
typedef struct leaf_home {
  uint64_t counts[3], nuclei, match[WSISA_MATCH_FIELDS];
  starpu_data_handle_t hc, hn, hm, labels;
} leaf_home;

/* Register the measure's outputs at home and submit it. */
static int measure(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                   starpu_data_handle_t ref, starpu_data_handle_t ref_labels, int object_match,
                   int keep_labels, leaf_home *l, wsisa_err *e) {
  starpu_vector_data_register(&l->hc, STARPU_MAIN_RAM, (uintptr_t)l->counts, 3, sizeof l->counts[0]);
  starpu_vector_data_register(&l->hn, STARPU_MAIN_RAM, (uintptr_t)&l->nuclei, 1, sizeof l->nuclei);
  if (object_match && ref_labels)
    starpu_vector_data_register(&l->hm, STARPU_MAIN_RAM, (uintptr_t)l->match, WSISA_MATCH_FIELDS, sizeof l->match[0]);
  wsisa_measure m = {l->hc, l->hn, l->hm, ref_labels, keep_labels ? &l->labels : NULL};
  return wsisa_workflow_measure_submit(tile, mask, ref, &m, e);
}

/* Wait for a leaf's measure; with features, reduce its nuclei (which needs
 * their count at home). */
static int leaf_finish(const wsisa_tile_data *tile, leaf_home *l, int features, int keep_labels,
                       starpu_data_handle_t *labels_out, wsisa_err *e) {
  int rc = 0;
  starpu_data_handle_t h[] = {l->hc, l->hn, l->hm};
  for (size_t i = 0; i < 3; i++)
    if (h[i]) starpu_data_unregister(h[i]);
  l->hc = l->hn = l->hm = NULL;
  if (features && l->labels) {
    double *rows = NULL;
    rc = wsisa_workflow_rows_compute(tile, l->labels, (size_t)l->nuclei, &rows, e);
    free(rows);
  }
  if (l->labels && labels_out && keep_labels) *labels_out = l->labels;
  else if (l->labels) starpu_data_unregister_submit(l->labels);
  l->labels = NULL;
  return rc;
}

/* One round on one tile, read as a run reads it (`halo` pixels around it,
 * its colour statistics): its stage, the reference, and one segmentation per
 * calibration vector; waits for all of it. */
static int round_on_tile(const wsisa_tile_ref *ref_tile, int halo, const double *vectors,
                         size_t nvec, int object_match, int features, wsisa_err *e) {
  wsisa_image *rgb = NULL;
  starpu_data_handle_t h_rgb = NULL, ref = NULL, ref_labels = NULL;
  starpu_data_handle_t *masks = calloc(nvec ? nvec : 1, sizeof *masks);
  leaf_home *leaves = calloc(nvec + 1, sizeof *leaves);
  wsisa_tile_data tile;
  wsisa_tile_frame frame;
  memset(&tile, 0, sizeof tile);
  int rc = masks && leaves ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) rc = wsisa_tile_load_framed(ref_tile, halo, &rgb, &frame, e);
  /* level 2's reconstructions in the tile stage, as a run makes them */
  frame.recon_conns = wsisa_workflow_recon_conns(vectors, nvec);
  if (!rc) rc = wsisa_image_register(rgb, &h_rgb, e);
  int w = rgb ? rgb->width : 0, h = rgb ? rgb->height : 0;
  if (!rc)
    rc = wsisa_workflow_tile_submit_framed(h_rgb, w, h, ref_tile->scale.target_mpp, 1, &frame,
                                           &tile, e);
  if (!rc && features) rc = wsisa_workflow_channels_submit(&tile, 1, e);
  if (!rc) rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, &ref, e);
  if (!rc) rc = wsisa_workflow_segment_submit(&tile, wsisa_seg_defaults(), ref, e);
  int keep = object_match || features;
  if (!rc) rc = measure(&tile, ref, ref, NULL, 0, keep, &leaves[nvec], e);
  /* the runs' object matching reads the reference's objects: wait for them */
  if (!rc && object_match)
    rc = leaf_finish(&tile, &leaves[nvec], features, object_match, &ref_labels, e);
  for (size_t i = 0; i < nvec && !rc; i++) {
    if ((rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, &masks[i], e))) break;
    if ((rc = wsisa_workflow_segment_submit(&tile, vectors + i * WSISA_SEG_NPARAMS, masks[i], e)))
      break;
    rc = measure(&tile, masks[i], ref, ref_labels, object_match, features, &leaves[i], e);
  }
  for (size_t i = 0; i <= nvec && leaves; i++) {
    if (i == nvec && (object_match || !rgb)) break; /* finished above, or never begun */
    int r2 = leaf_finish(&tile, &leaves[i], features && !rc, 0, NULL, e);
    if (!rc) rc = r2;
  }
  for (size_t i = 0; i < nvec && masks; i++)
    if (masks[i]) starpu_data_unregister_submit(masks[i]);
  if (ref_labels) starpu_data_unregister_submit(ref_labels);
  if (ref) starpu_data_unregister_submit(ref);
  if (tile.rc) wsisa_workflow_tile_release(&tile, 1);
  starpu_task_wait_for_all();
  if (h_rgb) starpu_data_unregister(h_rgb);
  wsisa_image_free(rgb);
  free(masks);
  free(leaves);
  return rc;
}

/* The segmentations a round runs: vector i takes, for each level, the
 * parameters of that level's variant i (modulo their number), so every
 * variant of every level runs at least once; (B, G, R) keep their defaults,
 * which leave tissue tiles to the segmentation (the background rule would
 * skip the rest of a run). */
static int vectors_of(const wsisa_estimate *est, const double *rows, double **out, size_t *n,
                      wsisa_err *e) {
  size_t most = 1;
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) {
    const size_t *runs;
    size_t nv = wsisa__estimate_variants(est, l, &runs);
    if (nv > most) most = nv;
  }
  double *v = malloc(most * WSISA_SEG_NPARAMS * sizeof *v);
  if (!v) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < most; i++)
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
      const size_t *runs;
      size_t nv = wsisa__estimate_variants(est, wsisa_seg_param_level(p), &runs);
      int bgr = p == WSISA_P_B || p == WSISA_P_G || p == WSISA_P_R;
      v[i * WSISA_SEG_NPARAMS + p] = bgr || !nv ? wsisa_seg_defaults()[p]
                                                : rows[runs[i % nv] * WSISA_SEG_NPARAMS + p];
    }
  *out = v;
  *n = most;
  return 0;
}

/* Share of a tile's pixels the background rule counts with the default
 * (B, G, R); 1 when it cannot be read (never picked). */
static double background_share(const wsisa_tile_ref *t) {
  wsisa_image *rgb = NULL;
  if (wsisa_tile_load(t, &rgb, NULL)) return 1;
  const double *p = wsisa_seg_defaults();
  uint64_t n = 0;
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *row = wsisa_image_row(rgb, y);
    for (int x = 0; x < rgb->width; x++) {
      const uint8_t *px = row + 3 * x;
      n += px[2] > p[WSISA_P_B] && px[1] > p[WSISA_P_G] && px[0] > p[WSISA_P_R];
    }
  }
  double share = (double)n / ((double)rgb->width * rgb->height);
  wsisa_image_free(rgb);
  return share;
}

/* The tile of `shape` (w, h) whose background share is the median (the
 * lower one) among the first few tissue tiles of that shape (background
 * under 95 %, the tissue rule's 5 %): a task's time depends on the nuclei it
 * meets, not only on the tile's size, and the models' mean per footprint
 * stands for every tile of it, so the tile with the most tissue would price
 * every tile as the costliest. Without a tissue tile of the shape, the one
 * with the least background: a tile the background rule empties would
 * calibrate no segmentation task. */
#define TILES_SCANNED 16
static size_t median_tissue(const wsisa_tile_ref *tiles, size_t n, int w, int h) {
  size_t idx[TILES_SCANNED], k = 0, least = n;
  double share[TILES_SCANNED], least_share = 2;
  for (size_t t = 0, scanned = 0; t < n && scanned < TILES_SCANNED; t++) {
    if (tiles[t].width != w || tiles[t].height != h) continue;
    scanned++;
    double sh = background_share(&tiles[t]);
    if (sh < least_share) {
      least_share = sh;
      least = t;
    }
    if (sh >= 0.95) continue;
    size_t j = k++; /* insertion by share, first in the study on a tie */
    while (j > 0 && share[j - 1] > sh) {
      share[j] = share[j - 1];
      idx[j] = idx[j - 1];
      j--;
    }
    share[j] = sh;
    idx[j] = t;
  }
  return k ? idx[(k - 1) / 2] : least;
}

/* A tile of the largest and of the smallest shape (by pixels), of median
 * tissue. */
static size_t pick_tiles(const wsisa_tile_ref *tiles, size_t n, wsisa_tile_ref out[2]) {
  size_t big = 0, small = 0;
  for (size_t t = 1; t < n; t++) {
    double a = (double)tiles[t].width * tiles[t].height;
    if (a > (double)tiles[big].width * tiles[big].height) big = t;
    if (a < (double)tiles[small].width * tiles[small].height) small = t;
  }
  out[0] = tiles[median_tissue(tiles, n, tiles[big].width, tiles[big].height)];
  if (tiles[small].width == tiles[big].width && tiles[small].height == tiles[big].height) return 1;
  out[1] = tiles[median_tissue(tiles, n, tiles[small].width, tiles[small].height)];
  return 2;
}

/* What the rounds work on, and what they found. */
typedef struct rounds {
  wsisa_tile_ref pick[2];
  const double *rows;
  size_t nruns;
  double *vectors;          /* the segmentations every round runs */
  size_t nvec;
  int halo, object_match, features;
  wsisa_sched sched;
  int cal_cpu;              /* the CPU workers the models are filled with */
  double in_tasks, wall;    /* ... their seconds in tasks and the rounds' wall time */
} rounds;

/* Passes of rounds, each under a StarPU of its own (which saves the models
 * at its end), until every task is calibrated or the last pass only
 * checked. The rounds read the tiles as `wsisa run` does: with the study's
 * halo and their slide's colour statistics. */
static int fill_models(rounds *rd, int have_stats, int force, wsisa_calibrate_report *out,
                       wsisa_err *e) {
  int rc = 0;
  for (int pass = 0; !rc && pass <= MAX_PASSES; pass++) {
    wsisa_runtime_opts o = {.resolved = &rd->sched, .ncpu = -1, .nopencl = -1, .calibrate = 2};
    if ((rc = wsisa_codelets_start(&o, e))) break;
    rd->cal_cpu = wsisa_runtime_ncpu();
    wsisa_tile_ref *pick = rd->pick;
    for (size_t i = 0; i < out->ntiles && !have_stats && !rc; i++) {
      if (pick[i].kind != WSISA_INPUT_SLIDE) continue;
      if (i > 0 && strcmp(pick[i].path, pick[0].path) == 0 && pick[0].has_stats) {
        memcpy(pick[i].stats, pick[0].stats, sizeof pick[i].stats);
        pick[i].has_stats = 1;
      } else if (!(rc = wsisa_slide_stats(pick[i].path, &pick[i].scale, pick[i].stats, e))) {
        pick[i].has_stats = pick[i].stats[WSISA_STATS_COUNT] > 0;
      }
    }
    have_stats = 1;
    wsisa_estimate *est = NULL;
    wsisa_estimate_request q = {pick,          out->ntiles,  rd->rows, rd->nruns,
                                rd->object_match, rd->features, rd->halo};
    if (!rc) rc = wsisa_estimate_new(&q, &est, e);
    size_t missing = 0;
    unsigned fewest = 0;
    if (!rc) {
      missing = wsisa__estimate_missing(est, &out->total, &fewest);
      out->minimum = wsisa__estimate_minimum(est);
      if (pass == 0) out->missing_before = missing;
      out->missing_after = missing;
    }
    /* done: calibrated, or the last pass only checked */
    int run = !rc && pass < MAX_PASSES && (missing || (pass == 0 && force));
    /* the same segmentations every pass (the design's variants) */
    if (!rc && !rd->vectors) rc = vectors_of(est, rd->rows, &rd->vectors, &rd->nvec, e);
    if (run && !rc) {
      /* StarPU drops a footprint's first sample; later passes top up the
       * samples it refused as outliers (STARPU_HISTORY_MAX_ERROR) */
      int n = missing ? (int)(out->minimum + 1 - (fewest < out->minimum ? fewest : 0)) : 1;
      if (pass > 0 && n < 2) n = 2;
      /* ... and how busy the rounds keep the workers: their seconds in
       * tasks over their wall time */
      starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
      for (int k = 0; k < n && !rc; k++) {
        for (size_t t = 0; t < out->ntiles && !rc; t++) {
          wsisa__workers_executing();
          double t0 = wsisa_now();
          rc = round_on_tile(&pick[t], rd->halo, rd->vectors, rd->nvec, rd->object_match,
                             rd->features, e);
          rd->wall += wsisa_now() - t0;
          rd->in_tasks += wsisa__workers_executing();
        }
        out->rounds++;
      }
      starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
      out->passes++;
    }
    wsisa_estimate_free(est);
    wsisa_runtime_shutdown(); /* StarPU saves the models */
    if (!run) break;
  }
  return rc;
}

int wsisa_calibrate_study(wsisa_study *study, const wsisa_calibrate_request *r,
                          wsisa_calibrate_report *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  if (!study->segmentation)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: no inputs: a pure SA study has no workflow to calibrate", study->path);
  double t0 = wsisa_now();
  double *rows = NULL;
  size_t nruns = 0;
  rounds rd;
  memset(&rd, 0, sizeof rd);
  wsisa__tile_set all;
  memset(&all, 0, sizeof all);
  char source[512];
  int rc = wsisa__study_design_rows(study, r->samples_path, r->select, &rows, &nruns, source,
                                    sizeof source, e);
  if (!rc) rc = wsisa__study_tiles(study, &all, e);
  if (!rc) out->ntiles = pick_tiles(all.tiles, all.ntiles, rd.pick);
  /* the tile picked has the least background of those scanned: if even it
   * is background, no segmentation task would run (as run refuses a slide
   * without tissue) */
  if (!rc && background_share(&rd.pick[0]) >= 0.95)
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: inputs: no tissue found (%s: 95 %% or more background by the "
                     "default B, G, R): nothing to calibrate the segmentation on",
                     study->path, rd.pick[0].path);
  for (size_t i = 0; i < out->ntiles; i++) {
    out->shape[i][0] = rd.pick[i].width;
    out->shape[i][1] = rd.pick[i].height;
  }
  rd.rows = rows;
  rd.nruns = nruns;
  rd.halo = rc ? 0 : wsisa__study_halo_for(study, rows, nruns);
  wsisa__study_needs(study, &rd.object_match, &rd.features);
  /* dmda sends a task without calibrated time to the kind of worker lacking
   * it; a scheduler the user chose stays */
  if (!rc) rc = wsisa_sched_resolve(study->execution.scheduler, study->path, "dmda", &rd.sched, e);
  rd.cal_cpu = 1;
  if (!rc) rc = fill_models(&rd, study->inputs.tile_stats, r->force, out, e);
  /* then the probes, on the largest tile (engine/estimate/probes.c) */
  if (!rc) {
    wsisa_machine_cores cores;
    wsisa_machine_cores_read(&cores);
    wsisa__probe_input in = {rd.pick, out->ntiles, rd.halo, rows, nruns, rd.vectors, rd.nvec,
                             study->reuse.object_reuse, rd.sched.name,
                             cores.offered > 0 ? cores.offered : 1,
                             rd.cal_cpu > 0 ? rd.cal_cpu : 1,
                             rd.in_tasks > 0 && rd.wall > 0 ? rd.in_tasks / rd.wall : 0};
    rc = wsisa__probes_run(&in, e);
  }
  wsisa_runtime_default_home();
  const char *home = getenv("STARPU_HOME");
  snprintf(out->starpu_home, sizeof out->starpu_home, "%s", home ? home : "(unset)");
  out->seconds = wsisa_now() - t0;
  free(rows);
  free(rd.vectors);
  wsisa__study_tiles_free(&all);
  return rc;
}

void wsisa_calibrate_print(const wsisa_calibrate_report *r, FILE *f) {
  fprintf(f, "calibration on %zu tile%s (", r->ntiles, r->ntiles > 1 ? "s" : "");
  for (size_t i = 0; i < r->ntiles; i++)
    fprintf(f, "%s%dx%d", i ? ", " : "", r->shape[i][0], r->shape[i][1]);
  if (!r->rounds)
    fprintf(f, "): the models under %s already hold %zu of %zu tasks x kinds of worker; nothing "
               "to run\n",
            r->starpu_home, r->total - r->missing_after, r->total);
  else
    fprintf(f, "): %d round%s in %d pass%s, %.1f s; tasks x kinds of worker calibrated: %zu of %zu "
               "before, %zu after (minimum %u samples); models in %s\n",
            r->rounds, r->rounds > 1 ? "s" : "", r->passes, r->passes > 1 ? "es" : "", r->seconds,
            r->total - r->missing_before, r->total, r->total - r->missing_after, r->minimum,
            r->starpu_home);
}
