/* The executor: runs a study's merged task trees on StarPU, unit by unit
 * (bucket x tile), with at most K root-to-leaf paths active (RMSR, seed 003
 * §III, Algorithm 1), and compares every result with the tile's reference. */
#ifndef WSISA_EXECUTOR_H
#define WSISA_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "core/workflow.h"
#include "reuse/reuse.h"

/* One tile of the study: a region of a slide level, or a whole image file. */
typedef struct wsisa_tile_ref {
  const char *path;
  int is_slide;
  int level;
  int64_t x, y;
  int width, height;
} wsisa_tile_ref;

/* Pixel counts of one (run, tile) against the reference mask. */
typedef struct wsisa_counts {
  uint64_t both, run, ref; /* |A ∩ B|, |A| (this run), |B| (reference) */
  uint64_t nuclei, ref_nuclei; /* objects (4-connected) of the run and of the reference */
  /* object Dice sums Σ|G|·Dice(G, S*(G)) and Σ|S|·Dice(G*(S), S) on the grid of
   * 2^-20 (codelets/cpu/object_match.c); 0 unless objects are matched */
  uint64_t obj_ref, obj_run;
  /* with wsisa_exec_opts.features: the nuclei's feature rows (feature_cols
   * doubles each, WSISA_NF_* then channel statistics) of the run (`nuclei`
   * rows) and of the reference (`ref_nuclei` rows); valid during the unit
   * callback only */
  const double *features, *ref_features;
  int feature_cols;
} wsisa_counts;

typedef struct wsisa_exec_opts {
  size_t active_paths; /* K; 0: unbounded */
  int normalize;       /* normalize tiles first (default 1) */
  /* 0 ("none"): every run recomputes the whole workflow, normalization
   * included; 1: the tile stage is shared by the runs. */
  int share_tile_stage;
  int object_match;    /* also match objects with the reference's (object Dice) */
  /* compute the feature stage (channels per tile, a reduction per leaf) for
   * feature metrics; its filter bank runs on CPU workers so the metrics do
   * not depend on the worker */
  int features;
} wsisa_exec_opts;

typedef struct wsisa_exec_stats {
  uint64_t tasks;        /* reuse-level tasks submitted (levels 1..7) */
  uint64_t tile_stages;  /* tile stages (normalization and shared work) */
  uint64_t skipped;      /* tasks not run because the background rule emptied the mask */
  size_t peak_paths;     /* most root-to-leaf paths active at once */
} wsisa_exec_stats;

/* Called on the submitting thread when unit (tile, bucket) has finished:
 * counts[i] belongs to runs[i]. Return non-zero to stop (the error is kept). */
typedef int (*wsisa_exec_unit_fn)(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                                  const wsisa_counts *counts, size_t nruns, wsisa_err *e);

/* Run every (tile, bucket) unit not marked in `done` (ntiles x n_buckets, may be
 * NULL). `params` holds a row of WSISA_SEG_NPARAMS values per run. StarPU must
 * be running. */
int wsisa_exec_run(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                   const wsisa_reuse_buckets *buckets, const uint8_t *done,
                   const wsisa_exec_opts *opts, wsisa_exec_unit_fn on_unit, void *ctx,
                   wsisa_exec_stats *stats, wsisa_err *e);

/* Units one at a time, for a caller that hands them out itself (the MPI
 * manager and its workers, core/dist.c): the current tile stays loaded while
 * its units run, and several units may be in flight. */
typedef struct wsisa_exec_session wsisa_exec_session;
int wsisa_exec_session_new(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                           const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                           wsisa_exec_session **out, wsisa_err *e);
/* Submit unit (tile, bucket). A unit of another tile first waits for the
 * units in flight, which are reported through on_unit. */
int wsisa_exec_session_submit(wsisa_exec_session *s, size_t tile, size_t bucket,
                              wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e);
/* Report the units that have finished, oldest first (all of them, waiting,
 * when `wait` is set); *in_flight is what remains. */
int wsisa_exec_session_poll(wsisa_exec_session *s, int wait, wsisa_exec_unit_fn on_unit,
                            void *ctx, size_t *in_flight, wsisa_err *e);
/* Take the statistics gathered since the last call (`stats` is overwritten). */
void wsisa_exec_session_stats(wsisa_exec_session *s, wsisa_exec_stats *stats);
/* Wait for what is in flight (unreported), close the tile, free. */
void wsisa_exec_session_free(wsisa_exec_session *s);

/* RMSR's K on this rank: `asked` (0: this rank's StarPU workers, StarPU
 * running), lowered so the active paths over the largest of `tiles` fit in
 * *memory_limit bytes; a limit of 0 becomes 80% of `available` (bytes
 * available now), written back. At least 1. */
size_t wsisa_exec_active_paths(size_t asked, uint64_t available, uint64_t *memory_limit,
                               const wsisa_tile_ref *tiles, size_t ntiles);

/* Load a tile's RGB pixels (slide region or image file). */
int wsisa_tile_load(const wsisa_tile_ref *tile, wsisa_image **rgb, wsisa_err *e);

#endif
