/* engine: a study's execution. The segmentation workflow as StarPU task
 * graphs, the executor that runs merged task trees with RMSR, the unit queue
 * that hands (tile x bucket) units to this process and to MPI ranks, and the
 * study runner with its journal and results. Uses io/, codelets/, reuse/,
 * sa/ and core/; nothing below includes this header. */
#ifndef WSISA_ENGINE_H
#define WSISA_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <starpu.h>

#include "codelets/cpu/cpu.h"
#include "core/core.h"
#include "io/io.h"
#include "reuse/reuse.h"

/* ==== the workflow ========================================================= */

/* The segmentation workflow of docs/workflow.md as StarPU task graphs: the
 * per-tile stage (normalization, and the parameter-free work every parameter
 * set shares) and the seven reuse-level tasks of the segmentation. */



/* The 15 parameters, indexed in canonical order (docs/workflow.md). */
enum {
  WSISA_P_B, WSISA_P_G, WSISA_P_R, WSISA_P_T1, WSISA_P_T2, WSISA_P_G1, WSISA_P_G2,
  WSISA_P_MIN_SIZE, WSISA_P_MAX_SIZE, WSISA_P_MIN_SIZE_PL, WSISA_P_MIN_SIZE_SEG,
  WSISA_P_MAX_SIZE_SEG, WSISA_P_FILL_HOLES_CONN, WSISA_P_RECON_CONN,
  WSISA_P_WATERSHED_CONN, WSISA_SEG_NPARAMS
};
#define WSISA_SEG_LEVELS 7

/* Share of background pixels at or above which a tile's mask is empty. */
#define WSISA_BACKGROUND_SKIP 0.9

/* Names, defaults and task levels come from the one table of the
 * segmentation's parameters, sa/'s wsisa_sa_seg_params, in this order. */
const char *wsisa_seg_param_name(int index);
/* Task level (1..7) whose identity includes the parameter. */
int wsisa_seg_param_level(int index);
/* The default parameter set (15 values, canonical order). */
const double *wsisa_seg_defaults(void);
/* Parse "name=value,name=value" onto `p` (which holds defaults or earlier
 * values); "@FILE" reads a JSON object of values instead, or the
 * "parameters" object of one (best.json's shape). */
int wsisa_seg_params_parse(const char *text, double *p, wsisa_err *e);

/* The feature stage (seed 000 Fig. 1, Table 2). Its channels are
 * parameter-free, so they belong to the tile stage (computed once per tile and
 * shared by every run); the per-run part labels a final mask and reduces it
 * per nucleus (codelets/cpu/cpu.h, WSISA_NF_*). */
#define WSISA_FEATURE_CHANNELS_MAX 8

/* What the whole tile shares: the normalized RGB, and the parameter-free
 * intermediates (rc = 255 - red, its opening by the 19x19 disk). */
typedef struct wsisa_tile_data {
  int width, height;
  starpu_data_handle_t rgb;
  starpu_data_handle_t rc;
  starpu_data_handle_t rc_open;
  /* the feature stage's channels (f32), when wsisa_workflow_channels_submit
   * made them: H, E, Sobel magnitude of H, filter-bank responses of H */
  int nchannels;
  starpu_data_handle_t channels[WSISA_FEATURE_CHANNELS_MAX];
} wsisa_tile_data;

/* What the tasks on one root-to-node path of a task tree have produced; a task
 * reads its ancestors' outputs, not only its parent's. */
typedef struct wsisa_task_data {
  starpu_data_handle_t rbc;   /* level 1: red blood cells */
  starpu_data_handle_t diff;  /* level 2: rc - reconstruction (saturating) */
  starpu_data_handle_t cand;  /* level 3: candidates, holes filled */
  starpu_data_handle_t sized; /* level 4: candidates within the size range */
  starpu_data_handle_t hyst;  /* level 5: hysteresis result */
  starpu_data_handle_t sep;   /* level 6: separated nuclei */
  starpu_data_handle_t final; /* level 7: the segmentation mask */
  /* level 6's watershed regions (i32, -1 on lines), written only into an
   * image the caller registered here before level 6; none by default */
  starpu_data_handle_t basins;
} wsisa_task_data;

/* Submit the tile stage: `rgb_in` is normalized into a new intermediate (or
 * used as is when `normalize` is 0, in which case the caller keeps it
 * registered until wsisa_workflow_tile_release). */
int wsisa_workflow_tile_submit(starpu_data_handle_t rgb_in, int width, int height,
                               int normalize, wsisa_tile_data *tile, wsisa_err *e);
void wsisa_workflow_tile_release(wsisa_tile_data *tile, int release_rgb);

/* The background share for (B, G, R) of `p`: submits the background mask and
 * its count, waits for them, and sets *skip when the tile's mask is empty by
 * the 90 % rule. Blocks the calling thread, never a worker. */
int wsisa_workflow_background_skip(const wsisa_tile_data *tile, const double *p, int *skip,
                                   wsisa_err *e);

/* Submit task `level` (1..7) with the parameters `p`, reading its ancestors'
 * outputs from `path` and storing its own there. Level 7 writes into
 * `final_out` when given (a registered mask), else into an intermediate. */
int wsisa_workflow_task_submit(int level, const double *p, const wsisa_tile_data *tile,
                               wsisa_task_data *path, starpu_data_handle_t final_out,
                               wsisa_err *e);
/* Release what task `level` produced, once its last consumer is submitted. */
void wsisa_workflow_task_release(int level, wsisa_task_data *path);

/* What to measure of a mask against the reference. */
typedef struct wsisa_measure {
  starpu_data_handle_t counts;      /* vector of 3 uint64: |mask ∩ ref|, |mask|, |ref| */
  starpu_data_handle_t nuclei;      /* vector of 1 uint64: 4-connected objects of mask
                                       (the final size filter's connectivity) */
  starpu_data_handle_t match;       /* NULL, or vector of WSISA_MATCH_FIELDS uint64:
                                       mask's objects matched with ref_labels'
                                       (object_match, codelets/cpu/cpu.h) */
  starpu_data_handle_t ref_labels;  /* the reference's labels, read when match is set */
  starpu_data_handle_t *labels_out; /* NULL, or receives mask's labels (the caller
                                       unregisters them) */
} wsisa_measure;

int wsisa_workflow_measure_submit(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                  starpu_data_handle_t ref, const wsisa_measure *m,
                                  wsisa_err *e);

/* The whole segmentation of one tile with one parameter set into `mask_out`
 * (u8 0/255, registered by the caller). An empty mask when the background rule
 * applies. */
int wsisa_workflow_segment_submit(const wsisa_tile_data *tile, const double *p,
                                  starpu_data_handle_t mask_out, wsisa_err *e);

/* ---- the feature stage ------------------------------------------------------ */

/* Channel names in the order wsisa_workflow_channels_submit makes them: "h",
 * "e", "grad" (Sobel magnitude of H), "fb_s<σ>" (filter bank on H, at
 * WSISA_FILTER_BANK_DEFAULT_SCALES). */
int wsisa_workflow_channel_count(void);
const char *wsisa_workflow_channel_name(int channel);
/* Submit the tile's channels (from its normalized RGB) into tile->channels;
 * released with the tile. filter_bank_on_cpu pins the filter bank to CPU
 * workers (its CPU and OpenCL versions agree only to rounding). */
int wsisa_workflow_channels_submit(wsisa_tile_data *tile, int filter_bank_on_cpu,
                                   wsisa_err *e);
/* Columns of a feature row (WSISA_NF_ROW(tile channels) of them): the shape
 * names, then <channel>_<statistic> ("h_mean", "grad_std", ...). Writes the
 * name of column `col` into buf; -1 when col is out of range. */
int wsisa_workflow_feature_column(int col, char *buf, size_t cap);
/* The first half of the per-run part: labels (i32, registered by the caller)
 * = 4-connected objects of `mask` (the final size filter's connectivity), and
 * `count` (vector of 1 uint64) their number. */
int wsisa_workflow_objects_submit(starpu_data_handle_t mask, starpu_data_handle_t labels,
                                  starpu_data_handle_t count, wsisa_err *e);
/* The second half, once the count n > 0 is known: rows (vector of
 * n × WSISA_NF_ROW(tile->nchannels) doubles) = the nuclei's features. */
int wsisa_workflow_reduce_submit(const wsisa_tile_data *tile, starpu_data_handle_t labels,
                                 starpu_data_handle_t rows, wsisa_err *e);
/* The second half for labels whose count n is known, waiting on the calling
 * thread (never a worker): *rows (malloc'd, NULL when n is 0). */
int wsisa_workflow_rows_compute(const wsisa_tile_data *tile, starpu_data_handle_t labels,
                                size_t n, double **rows, wsisa_err *e);
/* Both halves for one mask, waiting on the calling thread (never a worker):
 * *rows (malloc'd, NULL when there is no nucleus) holds *n rows. */
int wsisa_workflow_features_compute(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                    double **rows, size_t *n, wsisa_err *e);

/* ==== the executor ========================================================= */

/* The executor: runs a study's merged task trees on StarPU, unit by unit
 * (bucket x tile), with at most K root-to-leaf paths active (RMSR, seed 003
 * §III, Algorithm 1), and compares every result with the tile's reference. */



/* One tile of the study, as every rank reads it: a rectangle of a slide at
 * the study's target resolution, or a whole image file (resampled when the
 * study gives its MPP). Plain data, sent whole to MPI ranks. */
typedef struct wsisa_tile_ref {
  const char *path;
  int is_slide;
  /* how the slide or image is read: level, factor, MPP (wsisa_scale_choose,
   * wsisa_scale_for_image) */
  wsisa_scale scale;
  int64_t x, y;       /* origin in target pixels (0, 0 for an image) */
  int width, height;  /* in target pixels */
  wsisa_rect level0;  /* the same rectangle in level-0 pixels of the slide or image */
  /* the reference: NULL, the segmentation with the default parameters; else
   * the annotation of the tile's slide (io/annotation.c), rasterised onto the
   * tile (the tile is annotated: the study runs no other) */
  const wsisa_annot_spec *annot;
} wsisa_tile_ref;

/* Pixel counts of one (run, tile) against the reference mask. */
typedef struct wsisa_counts {
  uint64_t both, run, ref; /* |A ∩ B|, |A| (this run), |B| (reference) */
  uint64_t nuclei, ref_nuclei; /* objects (4-connected) of the run and of the reference */
  /* the object matching's integer sums (wsisa_match_field: object Dice,
   * TP/FP/FN at IoU >= 0.5, AJI; codelets/cpu/object_match.c); all 0 unless
   * objects are matched */
  uint64_t match[WSISA_MATCH_FIELDS];
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
  int object_match;    /* also match objects with the reference's (object Dice, F1, AJI) */
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

/* Units one at a time, for the unit queue (engine/units.c) and the MPI
 * workers (engine/dist.c): the current tile stays loaded while its units run,
 * and several units may be in flight. */
typedef struct wsisa_exec_session wsisa_exec_session;
int wsisa_exec_session_new(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                           const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                           wsisa_exec_session **out, wsisa_err *e);
/* Submit unit (tile, bucket). A unit of another tile first waits for the
 * units in flight, which are reported through on_unit. */
int wsisa_exec_session_submit(wsisa_exec_session *s, size_t tile, size_t bucket,
                              wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e);
/* Report the units that have finished, oldest first, until at most `keep`
 * are in flight: with `wait`, waiting for them, else stopping at the first
 * that has not finished; *in_flight (may be NULL) is what remains. */
int wsisa_exec_session_poll(wsisa_exec_session *s, size_t keep, int wait,
                            wsisa_exec_unit_fn on_unit, void *ctx, size_t *in_flight,
                            wsisa_err *e);
/* Nothing to do for now: wait up to `seconds` for the oldest unit in flight to
 * end (a unit's end wakes the caller at once), or sleep when none is. For a
 * caller that also waits for messages and must not spin. */
void wsisa_exec_session_idle(wsisa_exec_session *s, double seconds);
/* Take the statistics gathered since the last call (`stats` is overwritten). */
void wsisa_exec_session_stats(wsisa_exec_session *s, wsisa_exec_stats *stats);
/* Wait for what is in flight (unreported), close the tile, free. */
void wsisa_exec_session_free(wsisa_exec_session *s);

/* RMSR's K on this rank: `asked` (0: this rank's StarPU workers, StarPU
 * running), lowered so the process fits in *memory_limit bytes: `baseline`
 * (what it holds before the first unit, measured), the largest of `tiles`,
 * its running tasks' temporaries (one task per worker) and K active paths
 * over it, sized for the options `o` (may be NULL). A limit of 0 becomes the baseline plus 80% of
 * `available` (bytes available now), written back. 0 when not even one path
 * fits; *minimum (may be NULL) receives the smallest limit with which one
 * does. */
size_t wsisa_exec_active_paths(size_t asked, uint64_t available, uint64_t baseline,
                               uint64_t *memory_limit, const wsisa_tile_ref *tiles, size_t ntiles,
                               const wsisa_exec_opts *o, uint64_t *minimum);

/* Load a tile's RGB pixels at the target resolution: the slide rectangle
 * read through its scale (wsisa_slide_read_scaled), or the image file read
 * and, when it has a user-given MPP, area-averaged (wsisa_image_read_scaled). */
int wsisa_tile_load(const wsisa_tile_ref *tile, wsisa_image **rgb, wsisa_err *e);

/* ==== the unit queue ========================================================= */

/* Run every (tile, bucket) unit not marked in `done` (ntiles x n_buckets, may
 * be NULL) on every rank of the job: this process (rank 0, the only one
 * without mpirun) and the MPI workers. Units go out on demand, two in flight
 * per rank; a worker that dies or passes the unit timeout loses only its
 * units in flight, which run elsewhere. `params` holds a row of
 * WSISA_SEG_NPARAMS values per run; on_unit sees every unit once, on this
 * thread. Each worker derives its K with wsisa_exec_active_paths from
 * `paths_asked` (0: its own worker count) and `memory_limit` (bytes per
 * rank, 0: 80% of its memory available), as rank 0 did for
 * opts->active_paths. StarPU must be running. */
int wsisa_units_run(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                    const wsisa_reuse_buckets *buckets, const uint8_t *done,
                    const wsisa_exec_opts *opts, size_t paths_asked, uint64_t memory_limit,
                    wsisa_exec_unit_fn on_unit, void *ctx, wsisa_exec_stats *stats,
                    wsisa_err *e);

/* SIGINT and SIGTERM from now on only set a flag: wsisa_units_run then hands
 * out no more units, lets those in flight end (they are reported, so
 * journaled) and returns WSISA_EINTERRUPTED without a message. A second
 * signal ends the process at once. */
void wsisa_units_catch_signals(void);
/* The signal that arrived (SIGINT or SIGTERM), or 0. */
int wsisa_units_interrupted(void);

/* ==== MPI: the unit queue's transport to other ranks ========================= */

/* Beyond one machine: `mpirun -np N wsisa run` runs rank 0 as the manager and
 * every other rank as a worker driving its own StarPU (docs/architecture.md). */


/* Join the MPI job when launched by mpirun with more than one rank (Open MPI
 * sets OMPI_COMM_WORLD_SIZE); otherwise nothing happens and a plain
 * `wsisa run` never initialises MPI. `unit_timeout` (seconds, > 0) is how long
 * the manager waits for a unit before giving its worker up; WSISA_UNIT_TIMEOUT
 * overrides it. Must run before StarPU starts. */
int wsisa_dist_start(double unit_timeout, wsisa_err *e);
/* More than one rank. */
int wsisa_dist_active(void);
int wsisa_dist_rank(void);
int wsisa_dist_size(void);
/* Ranks given up (died or timed out) so far. */
int wsisa_dist_lost(void);

/* A worker rank's whole life: start StarPU with the manager's scheduler, then
 * run the units the manager hands out until it says stop. */
int wsisa_dist_worker(wsisa_err *e);

/* Manager, StarPU running: start the workers' StarPU and add their worker
 * counts to `local` into *total (just `local` when not distributed). The
 * reuse plan sizes itself on the total (MaxBuckets = 3 x workers). */
int wsisa_dist_workers(int local, int *total, wsisa_err *e);

/* Tell the live workers to stop and leave MPI. With a rank lost, MPI_Finalize
 * is skipped (it may wait for a rank that never comes); call it only once the
 * results are on disk. */
void wsisa_dist_end(void);

/* ==== the study's reuse plan ================================================= */

/* RTMA's, naive's and SCA's MaxBucketSize when the study sets none: measured
 * best on this workflow (README, Performance). */
#define WSISA_DEFAULT_BUCKET_SIZE 8

struct wsisa_study;
/* The reuse options a study runs with on `workers` StarPU workers in all:
 * its strategy and limits, MaxBuckets 3 x workers and MaxBucketSize
 * WSISA_DEFAULT_BUCKET_SIZE unless the study sets them. `level_cost` (7
 * values, or NULL for the papers' task count) is kept by pointer. */
void wsisa_plan_reuse_opts(const struct wsisa_study *study, int workers,
                           const double *level_cost, wsisa_reuse_opts *o);
/* The reuse-level task keys (WSISA_SEG_LEVELS per run) of runs given as rows
 * of `nparams` values whose task level (1..7) `level` names per column. */
int wsisa_plan_keys(const double *values, size_t nruns, size_t nparams, const int *level,
                    uint64_t *keys);

/* The none strategy: every run alone in a bucket of its own, its own chain of
 * WSISA_SEG_LEVELS tasks, even when two runs are equal. */
int wsisa_plan_singletons(const uint64_t *keys, size_t nruns, wsisa_reuse_buckets **out);

/* ---- `wsisa plan`: every strategy on a study's design, without running it -- */

#define WSISA_PLAN_STRATEGIES 5 /* stage, naive, sca, rtma, trtma */
/* SCA is O(n^4): beyond this many distinct stage instances it is reported,
 * not run. */
#define WSISA_PLAN_SCA_LIMIT 2000

typedef struct wsisa_plan_request {
  const char *samples_path; /* a design CSV instead of the study's own */
  const char *select;       /* two_phase: plan the phase-2 design */
  int workers;              /* TRTMA's MaxBuckets is 3 x workers; <= 0: the CPUs */
  long active_paths;        /* for the peak estimate; -1: the study's */
  const double *level_cost; /* 7 values, or NULL: the papers' task count */
  int force;                /* lift the cap on a design's runs (the memory check stays) */
} wsisa_plan_request;

typedef struct wsisa_plan_row {
  wsisa_reuse_strategy strategy;
  size_t limit;             /* max bucket size, or max buckets (trtma) */
  int skipped;              /* SCA beyond WSISA_PLAN_SCA_LIMIT */
  wsisa_reuse_summary summary;
  double ms;                /* the strategy's merge */
} wsisa_plan_row;

typedef struct wsisa_plan_report {
  char source[512];         /* where the design came from, in words */
  wsisa_reuse_design *design;
  size_t active_paths;
  double design_ms;         /* stage-level reuse and the reuse tree */
  wsisa_plan_row rows[WSISA_PLAN_STRATEGIES];
} wsisa_plan_report;

/* The reuse analysis of a segmentation study's design under each strategy,
 * with the limits `wsisa run` would use. */
int wsisa_plan_compare(const struct wsisa_study *study, const wsisa_plan_request *r,
                       wsisa_plan_report *out, wsisa_err *e);
void wsisa_plan_report_free(wsisa_plan_report *report);

/* ==== analysis of a study's outputs =========================================== */

typedef struct wsisa_analysis_request {
  const char *study_path;   /* the study the samples came from */
  const char *samples_path; /* its design, as `wsisa sample` wrote it */
  const char *outputs_path; /* run_id, then output columns */
  const char *dir;          /* where indices.csv, indices.json and plots go; NULL: . */
  const char *select;       /* two_phase: the parameters kept for phase 2 */
  int drop_missing;         /* VBD: drop base samples with a missing output */
} wsisa_analysis_request;

/* Check samples and outputs against the study's design, compute the indices
 * of every output, write them (all or nothing), and print the report. */
int wsisa_analysis_run(const wsisa_analysis_request *r, wsisa_err *e);

/* ==== a whole study =========================================================== */

typedef struct wsisa_runner_request {
  const char *study;       /* study file; NULL: the default study on the bundled sample */
  const char *out;         /* a new results folder ... */
  const char *resume;      /* ... or an interrupted run's, to go on with */
  const char *samples;     /* a design CSV instead of the study's sampler */
  int strategy;            /* a wsisa_study_reuse, or -1: the study's */
  long max_buckets, max_bucket_size, active_paths; /* 0: the study's */
  uint64_t memory_limit;   /* bytes; 0: the study's */
  double unit_timeout;     /* under mpirun, seconds; 0: 600 */
  const char *check;       /* verify this results folder instead of running */
  int force;               /* lift the cap on a design's runs (the memory check stays) */
} wsisa_runner_request;

/* `wsisa run`: tiles, design, reuse plan, execution on StarPU (and MPI ranks
 * when started by mpirun), journal, metrics, indices, run.json. With
 * r->check: verify a results folder (journal against the design, the outputs
 * against the journal), print what was found; an error when it is not whole.
 * SIGINT and SIGTERM end it with WSISA_EINTERRUPTED once the units in flight
 * are journaled. */
int wsisa_runner_run(const wsisa_runner_request *r, wsisa_err *e);

#endif
