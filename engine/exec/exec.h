/* engine/exec: running a study's units. The executor that runs merged task
 * trees on StarPU with at most K root-to-leaf paths active (RMSR), the unit
 * queue that hands (tile x bucket) units to this process and to MPI ranks,
 * and its MPI transport. Above engine/workflow. */
#ifndef WSISA_ENGINE_EXEC_H
#define WSISA_ENGINE_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include <starpu.h>

#include "codelets/codelets.h"
#include "core/core.h"
#include "engine/workflow/workflow.h"
#include "io/io.h"
#include "reuse/reuse.h"

/* ==== the executor ========================================================= */

/* The executor: runs a study's merged task trees on StarPU, unit by unit
 * (bucket x tile), with at most K root-to-leaf paths active (RMSR, seed 003
 * §III, Algorithm 1), and compares every result with the tile's reference. */

/* Pixel counts of one (run, tile) against the reference mask. */
typedef struct wsisa_counts {
  uint64_t both, run, ref; /* |A ∩ B|, |A| (this run), |B| (reference) */
  uint64_t nuclei, ref_nuclei; /* objects (4-connected) of the run and of the reference */
  /* the tile's tissue the reference segmented: its core's pixels off the
   * background at the default (B, G, R), 0 when the background rule emptied
   * the reference (or an annotation is the reference and emptied nothing) */
  uint64_t ref_tissue;
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
  /* with wsisa_exec_opts.nuclei_out: the run's nuclei (those its core owns,
   * whole) as spans over the pixels read (wsisa_tile_read_rect with the
   * options' halo), nspans of WSISA_SPAN_FIELDS uint32 each, in raster order
   * (WSISA_SPAN_ROW, _X, _LEN, _LABEL: labels 1..nuclei, label l the l-th
   * feature row); valid during the unit callback only; and the tissue its
   * background rule (its B, G, R) finds in the core */
  const uint32_t *spans;
  size_t nspans;
  uint64_t tissue;
} wsisa_counts;
enum { WSISA_SPAN_ROW, WSISA_SPAN_X, WSISA_SPAN_LEN, WSISA_SPAN_LABEL, WSISA_SPAN_FIELDS };

/* Where the tasks of a unit (tile x bucket) run when the worker set holds
 * both CPU and OpenCL workers (docs/architecture.md, Execution):
 * - unit: the session gives each unit to one kind of worker as it submits
 *   it, the kind on which it would finish first by what each kind has in
 *   flight and has done so far (wsisa_exec_placement_choose); every task of
 *   the unit, its levels 1-7 and its measures, runs on that kind (tasks of
 *   CPU-only codelets on a CPU worker), so a path's images stay where they
 *   were made. A tile's stage (normalization, the reference) goes with the
 *   tile's first unit.
 * - task: StarPU's scheduler places each task alone.
 * With one kind of worker the two are the same. Results never depend on it. */
typedef enum wsisa_placement { WSISA_PLACEMENT_UNIT, WSISA_PLACEMENT_TASK } wsisa_placement;
#define WSISA_PLACEMENTS 2
extern const char *const wsisa_placement_names[WSISA_PLACEMENTS];
/* The placement named `name` into *out; WSISA_EUSAGE when there is none. */
int wsisa_placement_parse(const char *name, wsisa_placement *out);

/* The kinds of worker a unit is given to. */
enum { WSISA_KIND_CPU, WSISA_KIND_OPENCL, WSISA_KINDS };

/* The earliest-finish rule of unit placement, for the executor and its
 * simulation (engine/estimate/simulate.c): per kind, the cost in flight
 * (units given, not finished) and the kind's speed. A unit of cost c goes
 * to the kind k with the least (in_flight[k] + c) x seconds[k], seconds[k]
 * the seconds per unit of cost of the kind as a whole: measured, once its
 * workers have ended WSISA_EXEC_KIND_MEASURED tasks of its units, as the
 * seconds those tasks took on them each (from the worker taking the task to
 * its end: waits for another kind's inputs do not count) x tasks_per_cost
 * (tasks submitted per unit of cost, over both kinds) / its workers; before,
 * `prior` (the same by the performance models; 0: none) scaled by a measured
 * kind's measure over its prior (the models give the kinds' ratio, the
 * measure their scale: a model's prior against the other kind's measure
 * kept a kind the models put 1.1x faster per task than one CPU out of
 * every unit on a node), and without one the kind gets a unit when it has
 * none in flight (its first unit measures it) and is left out while it
 * has. A unit's wall time is no measure: a kind with one worker and one
 * unit in flight waits on the other kind's tile stage and counts, and one
 * slow unit would keep it out for good. */
typedef struct wsisa_exec_kind_load {
  double in_flight, prior;
  double task_seconds, tasks; /* its units' tasks ended on its workers, their seconds */
  int workers;
  size_t units_in_flight;
} wsisa_exec_kind_load;
#define WSISA_EXEC_KIND_MEASURED 16
int wsisa_exec_placement_choose(const wsisa_exec_kind_load load[WSISA_KINDS], double cost,
                                double tasks_per_cost);
/* A unit's cost for the rule: its tasks (the tree's nodes, a measure per
 * leaf), and a tile stage's when the unit opens its tile. */
double wsisa_exec_unit_cost(const wsisa_reuse_tree *tree);
#define WSISA_EXEC_TILE_STAGE_COST (WSISA_SEG_LEVELS + 2)

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
  /* each slide tile read with this many target pixels around it (within the
   * slide), its results those of the objects its core owns
   * (wsisa_workflow_halo; 0: the tile alone) */
  int halo;
  /* with CPU and OpenCL workers: a wsisa_placement (unit, the default, or
   * task), and unit placement's prior: seconds of one worker of each kind
   * per level task by the calibrated models (0: none;
   * wsisa_estimate_kind_seconds) */
  int placement;
  double kind_task_seconds[WSISA_KINDS];
  /* the nuclei themselves (`wsisa segment --all`): no reference is
   * segmented (a leaf is measured against its own mask, object_match off)
   * and each leaf's nuclei come home (wsisa_counts.spans, .tissue) */
  int nuclei_out;
  /* tiles open at once: 0, WSISA_EXEC_OPEN_TILES (a study's tiles have many
   * units each); -1, one per unit in flight and one more
   * (wsisa_exec_open_tiles), each rank its own */
  int open_tiles;
} wsisa_exec_opts;

/* The tiles a session keeps open with `o` (may be NULL) on `workers` StarPU
 * workers (wsisa_exec_opts.open_tiles). */
size_t wsisa_exec_open_tiles(const wsisa_exec_opts *o, size_t workers);

typedef struct wsisa_exec_stats {
  uint64_t tasks;        /* reuse-level tasks submitted (levels 1..7) */
  uint64_t tile_stages;  /* tile stages (normalization and shared work) */
  uint64_t tiles_opened_ahead; /* of their tiles, opened ahead of their first unit */
  /* under mpirun, tiles whose units run on more than one rank: the stages
   * opened for a tile on a rank other than its first (moved there:
   * wsisa_exec_session_moved), and the objects their stores looked at and
   * found (levels 6 and 7 together); the units given to such ranks and
   * whether the queue kept tile affinity (the manager's, 0 from workers) */
  uint64_t tile_stages_moved, objects_seen_moved, objects_reused_moved;
  uint64_t units_moved;
  int tile_affinity;
  uint64_t skipped;      /* tasks not run because the background rule emptied the mask */
  size_t peak_paths;     /* most root-to-leaf paths active at once */
  /* object reuse: level 6's clusters and level 7's groups looked at, and
   * those taken from the store, in units and in pixels of their crops;
   * entries evicted; the most bytes one tile's store held */
  uint64_t objects_seen[2], objects_reused[2]; /* [0] level 6's clusters, [1] level 7's groups */
  uint64_t objects_area[2], objects_area_reused[2];
  uint64_t object_evictions, object_store_peak;
  /* the submitting thread: how often and how long (seconds) it waited for a
   * free path (RMSR's bound) and for a unit to end (the unit credit) */
  uint64_t path_waits, unit_waits;
  double path_wait_s, unit_wait_s;
  /* this rank's submitting thread: CPU seconds while the units ran */
  double submitter_cpu_s;
  /* with CPU and OpenCL workers (else all 0): the placement in force (1 unit,
   * 0 task); units and tile stages per kind they were given to (unit
   * placement); the tasks submitted and ended, those of codelets with both
   * implementations by the kind of worker that ran them, those that ran off
   * their unit's kind (0 under unit placement), and those with one place
   * only (CPU-only codelets, tasks pinned to the CPU) */
  int placed_by_unit;
  uint64_t units_on[WSISA_KINDS], tile_stages_on[WSISA_KINDS];
  uint64_t tasks_submitted, tasks_ended, tasks_on[WSISA_KINDS], tasks_astray, tasks_fixed;
} wsisa_exec_stats;

/* Called on the submitting thread when unit (tile, bucket) has finished:
 * counts[i] belongs to runs[i]. Return non-zero to stop (the error is kept). */
typedef int (*wsisa_exec_unit_fn)(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                                  const wsisa_counts *counts, size_t nruns, wsisa_err *e);

/* Units one at a time, for the unit queue (engine/exec/units.c) and the MPI
 * workers (engine/exec/dist.c): up to WSISA_EXEC_OPEN_TILES tiles stay loaded
 * while their units run (the next tile opens while the last one's units
 * drain), and several units may be in flight. At a tile's opening the
 * background counts of every distinct (B, G, R) of the session's runs are
 * submitted, so level 1 seldom waits for one. */
#define WSISA_EXEC_OPEN_TILES 2
/* With wsisa_exec_opts.open_tiles -1 (a unit per tile, as `segment --all`'s):
 * one tile per unit the rank has in flight and one more, at most this many. */
#define WSISA_EXEC_MAX_OPEN_TILES 64

typedef struct wsisa_exec_session wsisa_exec_session;
/* Open `tile` before its first unit comes, when a place is free now: a free
 * one, or one whose tile has no unit in flight and is not `keep` (the tile
 * whose units are being submitted); one tile ahead at a time. The tile is
 * read on this thread; its stage, counts and reference are submitted and
 * run while the units in flight do, so its first unit does not wait for
 * them. Nothing is waited for; 0 also when nothing was opened (no place,
 * already open, or unit placement in force: a tile's stage goes with its
 * first unit's kind). can_open_ahead: whether a place is free now. */
int wsisa_exec_session_can_open_ahead(const wsisa_exec_session *s, size_t keep);
int wsisa_exec_session_open_ahead(wsisa_exec_session *s, size_t tile, size_t keep,
                                  wsisa_err *e);
int wsisa_exec_session_new(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                           const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                           wsisa_exec_session **out, wsisa_err *e);
/* Submit unit (tile, bucket). A unit of a tile not open, with every place
 * taken, first waits for the units in flight of the tile opened first (they
 * are reported through on_unit), which then closes. */
int wsisa_exec_session_submit(wsisa_exec_session *s, size_t tile, size_t bucket,
                              wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e);
/* Under mpirun: `tile`'s units came to this rank after another rank had its
 * first, so the stage this session opens for it, and the objects its store
 * looks at, are counted as moved (the stats' *_moved). Call before the unit's
 * submission. */
void wsisa_exec_session_moved(wsisa_exec_session *s, size_t tile);
/* Report the units that have finished, whichever end first (the oldest first
 * among those ended), until at most `keep` are in flight: with `wait`,
 * waiting for one to end when none has, else stopping when none has;
 * *in_flight (may be NULL) is what remains. */
int wsisa_exec_session_poll(wsisa_exec_session *s, size_t keep, int wait,
                            wsisa_exec_unit_fn on_unit, void *ctx, size_t *in_flight,
                            wsisa_err *e);
/* Nothing to do for now: wait up to `seconds` for a unit in flight to end
 * (a unit's end wakes the caller at once), or sleep when none is. For a
 * caller that also waits for messages and must not spin. */
void wsisa_exec_session_idle(wsisa_exec_session *s, double seconds);
/* While a submission waits for a free path (RMSR's bound) or a call waits
 * for a unit to end, call fn(ctx) every `period` seconds, nothing of the
 * session locked; fn must not use the session (fn NULL: no hook). The
 * manager of an MPI job serves the other ranks meanwhile, a worker sends its
 * heartbeat. */
void wsisa_exec_session_on_wait(wsisa_exec_session *s, void (*fn)(void *), void *ctx,
                                double period);
/* Take the statistics gathered since the last call (`stats` is overwritten). */
void wsisa_exec_session_stats(wsisa_exec_session *s, wsisa_exec_stats *stats);
/* Wait for what is in flight (unreported), close the tiles, free. */
void wsisa_exec_session_free(wsisa_exec_session *s);

/* RMSR's K on this rank: `asked` (0: WSISA_EXEC_PATHS_PER_WORKER x this
 * rank's StarPU workers, StarPU running), lowered so the process fits in
 * *memory_limit bytes: `baseline` (what it holds before the first unit,
 * measured), the largest of `tiles` once per tile open at once, its running
 * tasks' temporaries (one task per worker), with object reuse
 * (o->object_reuse) the object stores, and K active paths over it,
 * sized for the options `o` (may be NULL). A limit of 0 becomes the baseline
 * plus 80% of `available` (bytes available now), written back. 0 when not
 * even one path fits; *minimum (may be NULL) receives the smallest limit with
 * which one does. */
size_t wsisa_exec_active_paths(size_t asked, uint64_t available, uint64_t baseline,
                               uint64_t *memory_limit, const wsisa_tile_ref *tiles, size_t ntiles,
                               const wsisa_exec_opts *o, uint64_t *minimum);
/* The default K per worker: a path is a chain whose tasks wait on each
 * other and on the prefixes it shares, so one path per worker leaves workers
 * idle. The 160-run MOAT on 16 workers (plan --estimate): efficiency 0.89
 * with 4 per worker, 0.96 with 8 (16: the same), for 1.28 -> 1.63 GiB of
 * peak memory; on 32 workers 0.79 -> 0.90. */
#define WSISA_EXEC_PATHS_PER_WORKER 8
/* What a rank holds above its baseline with `paths` active paths and
 * `workers` running tasks over a tile of `pixels`, by the same per-pixel
 * figures (the estimate's peak memory, engine/estimate/costs.c); the paths
 * hold `outputs` level tasks' outputs in all (they share their prefixes),
 * 0: each its own, the bound the memory limit keeps to. */
double wsisa_exec_bytes(size_t paths, size_t outputs, size_t workers, double pixels,
                        const wsisa_exec_opts *o);
/* The object store's bytes under a memory limit: WSISA_OBJECT_STORE_SHARE of
 * what the limit leaves over the baseline (256 MiB without a limit). */
#define WSISA_OBJECT_STORE_SHARE 0.25
uint64_t wsisa_exec_object_store_bytes(uint64_t memory_limit, uint64_t baseline);

/* Load a tile's RGB pixels at the target resolution: its rectangle of the
 * input (slide or image, io's wsisa_input) read through its scale. */
int wsisa_tile_load(const wsisa_tile_ref *tile, wsisa_image **rgb, wsisa_err *e);
/* The target-pixel rectangle (x, y, w, h) read for a tile: a slide tile and
 * `halo` pixels around it, as far as the slide goes; an image whole. */
void wsisa_tile_read_rect(const wsisa_tile_ref *tile, int halo, int64_t rect[4]);
/* The same with `halo` target pixels around a slide tile, as far as the slide
 * goes: *frame receives the core's place in the pixels read and the tile's
 * colour statistics (pointing into `tile`). An image file is read whole. */
int wsisa_tile_load_framed(const wsisa_tile_ref *tile, int halo, wsisa_image **rgb,
                           wsisa_tile_frame *frame, wsisa_err *e);
/* One tile segmented with the parameters `p` as a study reads it: the tile
 * and `halo` pixels around it (wsisa_tile_load_framed), normalized (unless
 * `normalize` is 0) with its colour statistics, the objects its core owns.
 * *mask (u8 0/255, new) covers the pixels read, *frame says where the core
 * is in them; *tissue (may be NULL) receives the core's tissue pixels, 0
 * when the background rule emptied the mask. Waits on the calling thread;
 * StarPU running. */
int wsisa_tile_segment(const wsisa_tile_ref *tile, const double *p, int halo, int normalize,
                       wsisa_image **mask, wsisa_tile_frame *frame, uint64_t *tissue,
                       wsisa_err *e);
/* The colour statistics of a slide at `scale` (WSISA_STATS_N doubles, as
 * masked_stats: count, mean, population std of lαβ over the Fisher
 * foreground), from its tissue: blocks of WSISA_STATS_BLOCK target pixels on
 * a grid of their own (so they do not depend on a study's tiles) that the
 * tissue detection keeps, at most WSISA_STATS_BLOCKS of them spread evenly,
 * pooled in grid order. StarPU must be running. */
#define WSISA_STATS_BLOCK 1024
#define WSISA_STATS_BLOCKS 64
int wsisa_slide_stats(const char *path, const wsisa_scale *scale, double stats[WSISA_STATS_N],
                      wsisa_err *e);

/* ==== one segmentation (`wsisa segment`) ====================================== */

/* What to segment: a slide's level-0 region or grid tile, or the whole input
 * (a small slide, an image); read as a study reads its tiles
 * (wsisa_tile_load_framed: a slide's rectangle with a halo around it,
 * normalized with the slide's colour statistics) and segmented by the same
 * graph (the tile stage, the segmentation keeping the nuclei whose centroid
 * lies in the rectangle, the feature stage). An image has no neighbours: it
 * is read whole, with its own statistics. */
typedef struct wsisa_segment_request {
  const char *input;
  int has_region;
  int64_t region[4];    /* level-0 x, y, width, height */
  int has_tile;
  long tile[2];         /* column, row of the tile_size grid */
  long tile_size;       /* in target pixels */
  double mpp;           /* the input's um/pixel at level 0 (0: what it says; an image as it is) */
  double target_mpp;
  int normalize, stain_check;
  /* a slide's rectangle is read with this many target pixels around it
   * (inputs.halo; -1, "auto": wsisa_workflow_halo_at of the parameters) */
  int halo;
  /* normalization statistics: 0 ("slide"), the slide's (wsisa_slide_stats);
   * 1 ("tile"), those of the pixels read (inputs.normalization) */
  int tile_stats;
  double params[WSISA_SEG_NPARAMS];
  int features;         /* also measure the nuclei's features */
} wsisa_segment_request;

/* A request's defaults: the workflow's parameters, WSISA_TARGET_MPP,
 * normalized with the slide's statistics, the halo "auto", stain-checked,
 * 1024-pixel tiles. */
void wsisa_segment_request_init(wsisa_segment_request *r, const char *input);

typedef struct wsisa_segment_result {
  wsisa_tile_ref tile;  /* what was asked: the input, its scale and rectangle */
  int64_t width0, height0; /* the input's level 0 (outlines stay on it) */
  /* the pixels read: the rectangle and `halo` target pixels around it (as
   * far as the slide goes); the rectangle at (core_x, core_y) in them */
  int halo, core_x, core_y;
  int normalized;       /* normalized (with tile.has_stats, by the slide's statistics) */
  /* u8 0/255 and i32 nucleus labels 1..nuclei (4-connected) over the pixels
   * read: the nuclei whose centroid lies in the rectangle, whole */
  wsisa_image *mask;
  wsisa_image *labels;
  double *features;     /* with request.features: nfeatures rows of feature_cols, the
                           centroid and bounding box in level-0 pixels (pixel corners) */
  size_t nfeatures;
  int feature_cols;
  uint64_t mask_pixels; /* nucleus pixels in the rectangle */
  uint64_t tissue_pixels; /* the rectangle's pixels the background rule leaves */
  long nuclei;
  double pixel_mpp;     /* um per pixel read (wsisa_scale_pixel_mpp) */
  double median_area_um2; /* the nuclei's median area (0 without nuclei) */
  double nuclei_per_mm2;  /* nuclei per mm2 of tissue (0 without tissue) */
  char warning[WSISA_NOTE_MAX];       /* "" or why the figures look wrong (the pixel size) */
  char stain_warning[WSISA_NOTE_MAX]; /* "" or what the stain check doubts (logged when seen) */
} wsisa_segment_result;

/* A median nucleus area outside this range (um^2) is not what H&E nuclei
 * measure: the pixel size (the slide's MPP, --mpp) looks wrong. */
#define WSISA_NUCLEUS_AREA_MIN_UM2 10.0
#define WSISA_NUCLEUS_AREA_MAX_UM2 150.0

/* Read, check the stain (request.stain_check) and segment; starts and stops
 * the runtime. res->warning says when the median nucleus area is implausible. Refusals name the request's flags (--region, --tile,
 * --tile-size) as `wsisa segment` takes them. */
int wsisa_segment_run(const wsisa_segment_request *r, wsisa_segment_result *out, wsisa_err *e);
/* Where the outputs go (NULL: not written). */
typedef struct wsisa_segment_outputs {
  const char *mask, *labels, *geojson, *features;
} wsisa_segment_outputs;
/* Write the mask (.png, .tif: a TIFF's ImageDescription says where its pixels
 * lie on the input) and the labels of the rectangle, the GeoJSON outlines
 * and the features CSV of its nuclei, whole (positions in level-0 pixels):
 * all of them, or none. */
int wsisa_segment_write(const wsisa_segment_result *res, const wsisa_segment_outputs *to,
                        wsisa_err *e);
/* The line saying where the pixels were read (level, factor, level-0
 * rectangle) into buf; "" for an input read whole as it is (an image). */
void wsisa_segment_describe(const wsisa_segment_result *res, char *buf, size_t cap);
void wsisa_segment_result_free(wsisa_segment_result *res);

/* ==== the unit queue ========================================================= */

/* Run every (tile, bucket) unit not marked in `done` (ntiles x n_buckets, may
 * be NULL) on every rank of the job: this process (rank 0, the only one
 * without mpirun) and the MPI workers. Units go out on demand, one in flight
 * per StarPU worker of the rank (two at least); a worker that dies or passes the unit timeout loses only its
 * units in flight, which run elsewhere. `params` holds a row of
 * WSISA_SEG_NPARAMS values per run; on_unit sees every unit once, on this
 * thread. Each worker derives its K with wsisa_exec_active_paths from
 * `paths_asked` (0: from its own worker count) and `memory_limit` (bytes per
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

/* The unit queue (engine/exec/units.c), shared with its simulation
 * (engine/estimate/simulate.c): units in flight on a rank of `workers` StarPU workers
 * (its credit), and the next unit for a rank
 * holding tile *held (SIZE_MAX: none) given per-unit state (0: to do),
 * per-tile units to do and per-tile holders; moves *held and the holders
 * count to the chosen unit's tile. SIZE_MAX when nothing is left. With tile
 * affinity (`back` given), *back says whether the rank takes its tile's
 * buckets from the last down, set when it turns to a tile another rank
 * holds; NULL: always from the first up. */
size_t wsisa__units_credit(int workers);
/* The tile the queue turns to once `held` (SIZE_MAX: none) has no unit left
 * to do: the first with units to do that no rank holds, else the one with
 * the most; SIZE_MAX when there is none. */
size_t wsisa__units_next_tile(const size_t *todo, const size_t *holders, size_t ntiles,
                              size_t held);
size_t wsisa__units_pick(const uint8_t *state, const size_t *todo, size_t *holders,
                         size_t ntiles, size_t nb, size_t *held, int *back);

#endif
