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
  /* object reuse: the tile's object store (codelets/cpu/cpu.h), or NULL for
   * the fine-grain codelets of levels 6 and 7 (docs/architecture.md) */
  struct wsisa_object_store *objects;
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
 * `final_out` when given (a registered mask), else into an intermediate.
 * With tile->objects, levels 6 and 7 run object by object and reuse what
 * the tile's store holds (level 6 only when path->basins is not asked for):
 * the same masks. */
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

/* The stain check (engine/stain.c) of one RGB u8 image: 0 when it is
 * bright-field H&E or has too little tissue to say; else WSISA_EUSAGE with
 * one line naming `name`, what was seen, and `override` (how to run it
 * anyway). `dark_background`: the image is a region of a slide whose
 * background io's tissue detection found dark (fluorescence); 0 otherwise. */
int wsisa_stain_check_image(const wsisa_image *rgb, int dark_background, const char *name,
                            const char *override, wsisa_err *e);

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
  /* object reuse (docs/architecture.md): levels 6 and 7 object group by
   * object group on CPU workers, groups seen before on the tile taken from a
   * store of at most object_store_bytes; off by itself without a CPU worker */
  int object_reuse;
  uint64_t object_store_bytes;
} wsisa_exec_opts;

typedef struct wsisa_exec_stats {
  uint64_t tasks;        /* reuse-level tasks submitted (levels 1..7) */
  uint64_t tile_stages;  /* tile stages (normalization and shared work) */
  uint64_t skipped;      /* tasks not run because the background rule emptied the mask */
  size_t peak_paths;     /* most root-to-leaf paths active at once */
  /* object reuse: level 6's clusters and level 7's groups looked at, and
   * those taken from the store; entries evicted; the most bytes one tile's
   * store held */
  uint64_t clusters_seen, clusters_reused, groups_seen, groups_reused;
  uint64_t object_evictions, object_store_peak;
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
/* While a submission waits for a free path (RMSR's bound), call fn(ctx)
 * every `period` seconds, nothing of the session locked; fn must not use the
 * session. The manager of an MPI job serves the other ranks meanwhile. */
void wsisa_exec_session_on_wait(wsisa_exec_session *s, void (*fn)(void *), void *ctx,
                                double period);
/* Take the statistics gathered since the last call (`stats` is overwritten). */
void wsisa_exec_session_stats(wsisa_exec_session *s, wsisa_exec_stats *stats);
/* Wait for what is in flight (unreported), close the tile, free. */
void wsisa_exec_session_free(wsisa_exec_session *s);

/* RMSR's K on this rank: `asked` (0: this rank's StarPU workers, StarPU
 * running), lowered so the process fits in *memory_limit bytes: `baseline`
 * (what it holds before the first unit, measured), the largest of `tiles`,
 * its running tasks' temporaries (one task per worker), with object reuse
 * (o->object_reuse) the tile's object store, and K active paths over it,
 * sized for the options `o` (may be NULL). A limit of 0 becomes the baseline
 * plus 80% of `available` (bytes available now), written back. 0 when not
 * even one path fits; *minimum (may be NULL) receives the smallest limit with
 * which one does. */
size_t wsisa_exec_active_paths(size_t asked, uint64_t available, uint64_t baseline,
                               uint64_t *memory_limit, const wsisa_tile_ref *tiles, size_t ntiles,
                               const wsisa_exec_opts *o, uint64_t *minimum);
/* What a rank holds above its baseline with `paths` active paths and
 * `workers` running tasks over a tile of `pixels`, by the same per-pixel
 * figures (the estimate's peak memory, engine/estimate.c). */
double wsisa_exec_bytes(size_t paths, size_t workers, double pixels, const wsisa_exec_opts *o);
/* The object store's bytes under a memory limit: WSISA_OBJECT_STORE_SHARE of
 * what the limit leaves over the baseline (256 MiB without a limit). */
#define WSISA_OBJECT_STORE_SHARE 0.25
uint64_t wsisa_exec_object_store_bytes(uint64_t memory_limit, uint64_t baseline);

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

/* ==== the estimate: time, cost and memory before running (seed 004) ========= */

/* A study's cost predicted from this host's calibrated StarPU performance
 * models (docs/architecture.md, "The estimate"). Three parts: the cost of
 * every piece of the workflow on each tile shape, read from the models
 * (wsisa_estimate_*); a discrete-event simulation of the executor and the
 * unit queue on N ranks of W workers over those costs (wsisa_sim_*); and the
 * searches built on it (deadline -> ranks). */

/* Where a task's predicted time comes from, best first. */
typedef enum wsisa_est_class {
  WSISA_EST_MEASURED = 0, /* the task itself: its footprint, calibrated */
  WSISA_EST_INTERPOLATED, /* the same task on other tile sizes, per pixel */
  WSISA_EST_SIMILAR,      /* the codelet's other footprints, per byte */
  WSISA_EST_FEW,          /* as above, but below StarPU's calibration minimum */
  WSISA_EST_GUESSED,      /* no data for the codelet: the median per-byte cost */
  WSISA_EST_NCLASSES
} wsisa_est_class;
const char *wsisa_est_class_name(wsisa_est_class c);

/* Per-unit cost interpolated across sizes: n points (x[i] > 0, t[i] the
 * time at size x[i]) give the cost per unit size t/x; at `x` it is
 * interpolated linearly in log(x) between the two points that bracket it,
 * and taken from the nearest point outside their range (no extrapolated
 * trend: seed 004 §3.4). Returns the time at x; NaN when n is 0. */
double wsisa_est_interpolate(const double *x, const double *t, size_t n, double at);

/* ---- the simulation: a study's units on N ranks x W workers ---------------- */

/* Seconds of one worker per piece of work, per tile shape s (arrays of
 * nshapes values), and per task of level l (1..7) in variant v:
 * level[(s * WSISA_SEG_LEVELS + l - 1) * nvariants + v]. Variants are the
 * kinds of a level's task that cost differently (connectivities ...);
 * variant[r * WSISA_SEG_LEVELS + l - 1] is run r's, or NULL for variant 0. */
typedef struct wsisa_sim_costs {
  size_t nshapes, nvariants;
  const double *open;       /* opening a tile: its stage, the reference, its measure */
  const double *open_path;  /* ... the critical path of that */
  const double *stage;      /* the tile stage alone (every unit's under `none`) */
  const double *measure;    /* a leaf's comparison with the reference (and features) */
  const double *background; /* the background rule for a new (B, G, R) on a tile */
  const double *level;
  const int *variant;
} wsisa_sim_costs;

typedef struct wsisa_sim_job {
  size_t ntiles;
  const size_t *tile_shape;   /* shape index of each tile */
  const wsisa_reuse_buckets *buckets;
  const double *params;       /* WSISA_SEG_NPARAMS per run: (B, G, R) of the background rule */
  int share_tile_stage;       /* 0: `none`, every unit runs its own tile stage */
  size_t active_paths;        /* RMSR's K per rank; 0: unbounded */
  const uint8_t *done;        /* ntiles x n_buckets units already done, or NULL */
  int ranks, workers;         /* N ranks of W workers */
} wsisa_sim_job;

typedef struct wsisa_sim_result {
  double makespan;     /* seconds */
  double work;         /* worker-seconds of every task */
  double efficiency;   /* work / (makespan x ranks x workers) */
  uint64_t units, tasks, leaves, opens, stages, backgrounds;
  size_t peak_paths;   /* most paths active on a rank */
  /* per shape: units, opens, ...; level tasks per (shape, level, variant) as
   * in wsisa_sim_costs.level; malloc'd, freed by wsisa_sim_result_free */
  uint64_t *shape_opens, *shape_stages, *shape_leaves, *shape_backgrounds, *level_tasks;
  /* per rank: the tile shapes it opened (ranks x nshapes flags) */
  uint8_t *rank_shapes;
} wsisa_sim_result;

/* Run the executor's schedule as a discrete-event simulation: the unit queue
 * hands (tile x bucket) units to ranks on demand, two in flight per rank, a
 * rank's current tile first (engine/units.c); a rank opening a tile first
 * waits for its units in flight, then for the tile's stage and reference;
 * each unit's tree is submitted depth first, a leaf waiting while K paths are
 * active, a new (B, G, R) waiting for its background count
 * (engine/executor.c); W workers take ready tasks first come, first served.
 * A task of a level is one block of its codelets' time. */
int wsisa_sim_run(const wsisa_sim_costs *c, const wsisa_sim_job *j, wsisa_sim_result *r,
                  wsisa_err *e);
void wsisa_sim_result_free(wsisa_sim_result *r);

/* The smallest number of ranks in 1..max_ranks whose makespan is at most
 * `deadline` seconds, by doubling then bisection over makespan_of (taken as
 * non-increasing in the ranks): *ranks 0 when even max_ranks misses it, with
 * *makespan that of max_ranks. */
typedef int (*wsisa_sim_makespan_fn)(void *ctx, int ranks, double *makespan, wsisa_err *e);
int wsisa_sim_deadline(double deadline, int max_ranks, wsisa_sim_makespan_fn makespan_of,
                       void *ctx, int *ranks, double *makespan, wsisa_err *e);

/* ---- the costs: this host's performance models ------------------------------ */

typedef struct wsisa_estimate wsisa_estimate;

/* Is there a performance model file of any codelet under STARPU_HOME (set
 * to wsisa's default first, as StarPU start-up does)? Cheap: StarPU need
 * not run. */
int wsisa_estimate_models_present(void);

typedef struct wsisa_estimate_request {
  const wsisa_tile_ref *tiles;
  size_t ntiles;
  const double *params;     /* nruns x WSISA_SEG_NPARAMS, canonical order */
  size_t nruns;
  int object_match;         /* a metric matches objects (object_dice) */
  int features;             /* a metric needs the feature stage */
} wsisa_estimate_request;

/* The cost of every piece of the study's workflow on each of its tile
 * shapes, on each kind of worker StarPU started here, from the history
 * models under STARPU_HOME: the workflow is dry-run (wsisa_codelets_record)
 * to get each codelet task's footprint and data size, which are looked up
 * in the models, sizes never measured interpolated (wsisa_est_class). Also
 * measures the process's resident memory as the baseline of the memory
 * estimate. StarPU must be running; no task runs. */
int wsisa_estimate_new(const wsisa_estimate_request *r, wsisa_estimate **out, wsisa_err *e);
void wsisa_estimate_free(wsisa_estimate *est);
/* Does any task's time rest on calibrated data (measured or interpolated)? */
int wsisa_estimate_calibrated(const wsisa_estimate *est);
/* The process's resident memory when the estimate was made (bytes). */
uint64_t wsisa_estimate_baseline(const wsisa_estimate *est);
/* Seconds of one CPU worker per task of each level, averaged over the
 * study's tiles and the design's distinct tasks: the level costs of
 * cost-aware reuse. 0 when every level's time rests on calibrated data of
 * its own codelets (measured, interpolated or similar), else -1. */
int wsisa_estimate_level_costs(const wsisa_estimate *est, double cost[WSISA_SEG_LEVELS]);

/* What to predict: a reuse plan on N ranks of W workers. */
typedef struct wsisa_estimate_plan {
  const wsisa_reuse_buckets *buckets;
  int share_tile_stage;
  size_t active_paths;      /* K per rank (wsisa_exec_active_paths) */
  const uint8_t *done;      /* resume: units already done, or NULL */
  int ranks;
  int cpu_workers;          /* per rank; -1: as StarPU started here */
} wsisa_estimate_plan;

#define WSISA_EST_MAX_LISTED 8
typedef struct wsisa_estimate_figures {
  wsisa_sim_result sim;     /* makespan, work, efficiency, counts */
  int ranks, workers;       /* workers per rank (CPU + OpenCL) */
  double cpu_hours;         /* makespan x ranks x workers */
  size_t active_paths;
  uint64_t peak_rss;        /* bytes, per rank */
  uint64_t baseline_rss;    /* the process before any tile */
  double class_share[WSISA_EST_NCLASSES]; /* of the work, by evidence */
  /* the codelets whose time is not calibrated (SIMILAR excluded): name,
   * evidence, share of the work, largest first */
  size_t nlisted;
  struct {
    const char *op;
    wsisa_est_class cls;
    double share;
  } listed[WSISA_EST_MAX_LISTED];
} wsisa_estimate_figures;

int wsisa_estimate_predict(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                           wsisa_estimate_figures *out, wsisa_err *e);
void wsisa_estimate_figures_free(wsisa_estimate_figures *f);
/* The share of the work resting on uncalibrated codelets (FEW and GUESSED). */
double wsisa_estimate_uncalibrated_share(const wsisa_estimate_figures *f);

/* ---- calibration: filling the models on the study's own slides ------------- */

struct wsisa_study;

/* StarPU calibrates a footprint once it has this many samples beyond the
 * first, which it drops (STARPU_CALIBRATE_MINIMUM, default 10). */
typedef struct wsisa_calibrate_request {
  const char *samples_path; /* the design from a CSV, as `wsisa plan` reads it */
  const char *select;       /* two_phase: the phase-2 design */
  int force;                /* one round even when every task is calibrated */
} wsisa_calibrate_request;

typedef struct wsisa_calibrate_report {
  size_t ntiles;            /* tiles calibrated on: the largest and smallest */
  int shape[2][2];          /* their widths and heights */
  int rounds;               /* rounds run; 0: the models had every task */
  int passes;               /* StarPU sessions that ran rounds */
  size_t missing_before, missing_after, total; /* (task, kind of worker) pairs */
  unsigned minimum;         /* StarPU's calibration minimum */
  double seconds;
  char starpu_home[1024];
} wsisa_calibrate_report;

/* Run the study's workflow on its largest and smallest tile (two shapes to
 * interpolate between) under StarPU with calibration on, round after round,
 * until every codelet task of those tiles has StarPU's minimum of samples
 * on every kind of worker (at most three passes; the scheduler is dmda,
 * which sends uncalibrated tasks to the kinds of worker lacking samples).
 * A round is, per tile: its stage, the reference and, for each variant of
 * every level the design uses (wsisa_estimate_*), one segmentation and its
 * measure. StarPU saves the models at each pass's end. */
int wsisa_calibrate_study(struct wsisa_study *study, const wsisa_calibrate_request *r,
                          wsisa_calibrate_report *out, wsisa_err *e);
void wsisa_calibrate_print(const wsisa_calibrate_report *r, FILE *f);

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
  int workers;              /* TRTMA's MaxBuckets is 3 x workers; <= 0: the CPUs
                               (with estimate: workers per rank, <= 0: StarPU's) */
  long active_paths;        /* for the peak estimate; -1: the study's */
  const double *level_cost; /* 7 values, or NULL: the study's cost model */
  int force;                /* lift the cap on a design's runs (the memory check stays) */
  /* the estimate (wsisa_estimate_*): time, CPU-hours and memory of every
   * strategy and of the study's on `ranks` ranks (<= 0: 1) */
  int estimate;
  int ranks;
  double deadline;          /* seconds; > 0: the fewest ranks that meet it */
  uint64_t memory_limit;    /* bytes per rank, for K; 0: the study's */
} wsisa_plan_request;

typedef struct wsisa_plan_row {
  wsisa_reuse_strategy strategy;
  size_t limit;             /* max bucket size, or max buckets (trtma) */
  int skipped;              /* SCA beyond WSISA_PLAN_SCA_LIMIT */
  wsisa_reuse_summary summary;
  double ms;                /* the strategy's merge */
  int estimated;
  double makespan, cpu_hours; /* predicted */
  uint64_t peak_rss;
} wsisa_plan_row;

typedef struct wsisa_plan_report {
  char source[512];         /* where the design came from, in words */
  wsisa_reuse_design *design;
  size_t active_paths;
  double design_ms;         /* stage-level reuse and the reuse tree */
  wsisa_plan_row rows[WSISA_PLAN_STRATEGIES];
  /* the bucket cost model in force: "tasks", "level_costs" (given) or
   * "models" (the performance models', wsisa_estimate_level_costs) */
  const char *cost_source;
  double level_cost[WSISA_SEG_LEVELS];
  /* the estimate of the study's own strategy */
  int estimated;
  const char *strategy;     /* the study's */
  wsisa_estimate_figures est;
  uint64_t memory_limit;    /* the limit K was derived from */
  int cpu_workers;          /* per rank, as estimated */
  double deadline;
  int deadline_ranks;       /* 0: not met within deadline_max_ranks */
  int deadline_max_ranks;
  double deadline_makespan;
  char starpu_home[1024];
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
  int object_reuse;        /* 0 off, 1 on, -1: the study's */
  double unit_timeout;     /* under mpirun, seconds; 0: 600 */
  const double *level_cost; /* 7 bucket costs per task level, or NULL: the study's
                               cost model (auto: the performance models') */
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
