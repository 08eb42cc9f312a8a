/* engine/estimate: a study's time, cost and memory before running it, from
 * this host's calibrated StarPU performance models (seed 004), and the
 * calibration that fills those models on the study's own slides. Above
 * engine/study. */
#ifndef WSISA_ENGINE_ESTIMATE_H
#define WSISA_ENGINE_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "core/core.h"
#include "engine/exec/exec.h"
#include "engine/study/study.h"
#include "engine/workflow/workflow.h"
#include "reuse/reuse.h"

/* A study's cost estimated from this host's calibrated StarPU performance
 * models (docs/architecture.md, "The estimate"). Three parts: the cost of
 * every piece of the workflow on each tile shape, read from the models
 * (wsisa_estimate_*); a discrete-event simulation of the executor and the
 * unit queue on N ranks of W workers over those costs (wsisa_sim_*); and the
 * searches built on it (deadline -> ranks). */

/* Where a task's estimated time comes from, best first. */
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
  const double *open;       /* opening a tile: its stage, over the worker set */
  const double *open_path;  /* ... the critical path of that */
  const double *stage;      /* the tile stage alone (every unit's under `none`) */
  const double *measure;    /* a leaf's comparison with the reference (and features) */
  const double *background; /* the background rule for a new (B, G, R) on a tile */
  const double *level;
  const int *variant;
  /* the same pieces on one OpenCL worker (open and open_path unused;
   * INFINITY where it cannot run), or NULL: a CPU-only worker set */
  const struct wsisa_sim_costs *opencl;
  /* run r's task of level l costs run_scale[r * WSISA_SEG_LEVELS + l - 1]
   * times its variant's `level` on every kind of worker (its parameter
   * values: engine/estimate/levels.c), or NULL: 1 */
  const double *run_scale;
  /* the tile's reference (the defaults' segmentation and its measure) over
   * the worker set, and its critical path, or NULL: none. The submitter goes
   * on while it runs; a leaf's measure waits for it. */
  const double *reference, *reference_path;
  /* reading a tile's pixels on the submitting thread before its stage (no
   * worker's time), or NULL: not priced */
  const double *read;
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
  /* object reuse: levels 6 and 7 priced by what their tile's store on
   * their rank holds when they are submitted (engine/estimate/objects.c);
   * NULL: at the level's cost */
  const struct wsisa__objects_pricer *objects;
  int opencl_workers;         /* of the W, how many are OpenCL workers (costs->opencl) */
  /* with CPU and OpenCL workers, a wsisa_placement: unit, each unit's tasks
   * on the kind the executor's rule gives it (wsisa_exec_placement_choose,
   * on the simulated clock), its tile's stage with the unit that opens it;
   * task, each task where it would finish first */
  int placement;
} wsisa_sim_job;

typedef struct wsisa_sim_result {
  double makespan;     /* seconds */
  double work;         /* worker-seconds of every task */
  double work_cpu;     /* ... of those on CPU workers */
  double efficiency;   /* work / (makespan x ranks x workers) */
  uint64_t units, tasks, leaves, opens, stages, backgrounds;
  uint64_t opens_ahead; /* of the opens, tiles opened ahead of their first unit */
  size_t peak_paths;   /* most paths active on a rank */
  size_t peak_outputs; /* most level tasks' outputs held on a rank (paths share
                        * their prefixes) */
  /* per shape: units, opens, ...; level tasks per (shape, level, variant) as
   * in wsisa_sim_costs.level; malloc'd, freed by wsisa_sim_result_free */
  uint64_t *shape_opens, *shape_stages, *shape_leaves, *shape_backgrounds, *level_tasks;
  /* ... and those tasks in units of the level's cost (run_scale x the
   * object stores' multiple, summed) */
  double *level_units;
  /* object reuse: seconds of levels 6-7's reusable work (calibration's
   * tile) computed, and all of it */
  double objects_computed, objects_reusable;
  /* per rank: the tile shapes it opened (ranks x nshapes flags) */
  uint8_t *rank_shapes;
} wsisa_sim_result;

/* Run the executor's schedule as a discrete-event simulation: the unit queue
 * hands (tile x bucket) units to ranks on demand, one in flight per worker
 * (two at least), a rank's current tile first (engine/exec/units.c); a rank keeps
 * WSISA_EXEC_OPEN_TILES tiles open, and opening another first waits for the
 * units in flight of the one opened first, then reads the tile (c->read, the
 * submitting thread's time), after which come its stage, the counts of every
 * (B, G, R) and the reference (run while the units are submitted; a leaf's
 * measure waits for it); a job of one rank opens its next tile ahead while
 * its units in flight run when a place is free (engine/exec/units.c's
 * open_ahead);
 * each unit's tree is submitted depth first, a leaf waiting while K paths are
 * active, a level-1 node waiting for its (B, G, R)'s count if unfinished
 * (engine/exec/executor.c); a ready task goes, in the order tasks become
 * ready, to the worker where it would finish first (dmda's placement, data
 * transfers aside): with W CPU workers, the one free first; with OpenCL
 * workers too, each kind at its own cost, among its unit's kind's workers
 * under unit placement (j->placement). A task of a level is one block of
 * its codelets' time. */
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
  int halo;                 /* slide tiles are read with it (wsisa_exec_opts.halo) */
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
/* Seconds of one worker of each kind (WSISA_KIND_CPU, WSISA_KIND_OPENCL: the
 * first OpenCL kind started) per level task, the mean of the levels' costs
 * as wsisa_estimate_level_costs averages them: unit placement's prior
 * (wsisa_exec_opts.kind_task_seconds). 0 when both kinds' levels rest on
 * calibrated data, else -1 (no OpenCL worker started, or not calibrated). */
int wsisa_estimate_kind_seconds(const wsisa_estimate *est, double seconds[WSISA_KINDS]);

/* What to estimate: a reuse plan on N ranks of W workers. */
typedef struct wsisa_estimate_plan {
  const wsisa_reuse_buckets *buckets;
  int share_tile_stage;
  size_t active_paths;      /* K per rank (wsisa_exec_active_paths) */
  const uint8_t *done;      /* resume: units already done, or NULL */
  int ranks;
  int cpu_workers;          /* per rank; -1: as StarPU started here */
  int opencl_workers;       /* per rank; -1: as StarPU started here (their model:
                             * the first OpenCL kind started here) */
  int object_reuse;         /* levels 6-7 object by object (the run's --object-reuse) */
  int placement;            /* with CPU and OpenCL workers: a wsisa_placement */
} wsisa_estimate_plan;

#define WSISA_EST_MAX_LISTED 8
typedef struct wsisa_estimate_figures {
  wsisa_sim_result sim;     /* makespan, work, efficiency, counts */
  int ranks, workers;       /* workers per rank (CPU + OpenCL) */
  double cpu_hours;         /* makespan x ranks x workers */
  size_t active_paths;
  /* object reuse: the expected share of levels 6-7's work taken from the
   * tiles' stores (-1: off, or no calibration of it: priced without) and how
   * it was obtained */
  double object_share;
  char object_source[4800]; /* empty: object reuse off */
  char level_source[4900];  /* how the level tasks follow their runs' parameter values */
  double busy_factor;       /* the CPU workers' task times x this: the workers busy at once
                             * against calibration's */
  double busy_workers;      /* ... the CPU workers busy on average on a machine, it taken at */
  char busy_source[4800];   /* how it was obtained */
  char read_source[4800];   /* how a tile's read was priced */
  double fresh_seconds;     /* a rank's first writes of its working set, over its
                             * workers, in the makespan */
  char fresh_source[4900];  /* how they were priced */
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

int wsisa_estimate_compute(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                           wsisa_estimate_figures *out, wsisa_err *e);
void wsisa_estimate_figures_free(wsisa_estimate_figures *f);
/* The share of the work resting on uncalibrated codelets (FEW and GUESSED). */
double wsisa_estimate_uncalibrated_share(const wsisa_estimate_figures *f);

/* ---- object reuse (engine/estimate/objects.c) ------------------------------- */

/* What calibration measured of levels 6 and 7 with a tile's object store,
 * relative to their fine-grain time: with an empty store (cold) and with one
 * holding the same run (hit); per parameter of levels 1-6, the share of the
 * reusable work a change of it leaves to compute, by how much it changes
 * (fill: not measured, its level's mean). [0] level 6, [1] 7. */
#define WSISA__OBJECTS_POINTS 8
#define WSISA__OBJECTS_SEGS 9
typedef struct wsisa__objects_model {
  int loaded, width, height;
  double fine[2], cold[2], hit[2];
  /* the same at the defaults and calibration's segmentations, per level, by
   * their fine-grain time (seconds, ascending): the crop-by-crop work grows
   * with the nuclei faster than the whole tile's passes do */
  int nsegs[2];
  double seg_fine[2][WSISA__OBJECTS_SEGS], seg_cold[2][WSISA__OBJECTS_SEGS],
      seg_hit[2][WSISA__OBJECTS_SEGS];
  /* per parameter, from up to two places (runs): the changes measured
   * (npoints of step, smallest first) and the share missed at each, per
   * level; the estimate takes the place nearest its design's runs */
  int ncurves[WSISA_SEG_NPARAMS];                     /* measured from 1 or 2 places */
  double base[2][WSISA_SEG_NPARAMS][WSISA_SEG_NPARAMS]; /* [curve][p]: the run changed */
  int npoints[2][WSISA_SEG_NPARAMS];
  double step[2][WSISA_SEG_NPARAMS][WSISA__OBJECTS_POINTS];
  double at[2][2][WSISA_SEG_NPARAMS][WSISA__OBJECTS_POINTS]; /* [curve][level][p][point] */
  double miss[2][WSISA_SEG_NPARAMS]; /* at the largest change, or its level's mean */
  int fill[2][WSISA_SEG_NPARAMS];
  char source[4800];
} wsisa__objects_model;

/* Calibration: measure them on one tile (StarPU up with one CPU worker) for
 * the design's rows and calibration's segmentations (nvec vectors), into a
 * file beside the performance models. */
int wsisa__objects_probe(const wsisa_tile_ref *tile, const double *rows, size_t nruns,
                         const double *vectors, size_t nvec, wsisa_err *e);
/* Read them; -1 when calibration has not measured them. */
int wsisa__objects_load(wsisa__objects_model *m);
/* Pricing level-6/7 tasks by what their tile's store holds, as the
 * simulation walks them: the plan's runs (params) and their level times on
 * calibration's tile (wsisa__levels_scale, which pick each task's cold and
 * hit ratios; NULL: the defaults'), and per parameter the curve nearest the
 * design's runs. A store is followed through WSISA__OBJECTS_STANDINS
 * stand-in objects a level: each changes, along each parameter of levels
 * 1-6 the design varies, at a few values drawn so that a change of that
 * parameter alone misses, over the stand-ins, the share calibration
 * measured (a share sens of them change at all, at cuts spread with
 * density rate over the parameter's values; rate infinite: at every
 * change). A stand-in is found when an earlier task of the store gave it
 * the same cell along every parameter (and, for groups, the same level-7
 * values, which are in their key). */
#define WSISA__OBJECTS_STANDINS 400
/* An open-addressing table of 64-bit keys (0: empty; a power-of-2 cap),
 * with a value a key where vals is kept. */
typedef struct wsisa__objects_table {
  uint64_t *keys;
  double *vals;
  size_t n, cap;
} wsisa__objects_table;
typedef struct wsisa__objects_pricer {
  const wsisa__objects_model *m;
  const double *params, *run_time;
  int curve[WSISA_SEG_NPARAMS];
  double sens[2][WSISA_SEG_NPARAMS], rate[2][WSISA_SEG_NPARAMS]; /* per level, fitted */
  int nvar, var[WSISA_SEG_NPARAMS];   /* the parameters of levels 1-6 the design varies */
  int nheld, held[WSISA_SEG_NPARAMS]; /* ... and holds (the reference may differ) */
  int nlev7, lev7[WSISA_SEG_NPARAMS]; /* the parameters of level 7 */
  double lo[WSISA_SEG_NPARAMS], hi[WSISA_SEG_NPARAMS]; /* every parameter's range in the design */
  /* per level, stand-in and varied parameter ([l][o][v]): its cuts, ncut of
   * them from cuts + first (-1: at every change, -2: the parameter does not
   * move it at all; 0: it does, at no cut in the design's range) */
  int *ncut;
  size_t *first;
  double *cuts;
  /* the share missed by a task, by the hash of the runs its store saw in
   * order and its own: stores that saw the same runs get the same answer */
  wsisa__objects_table *memo;
} wsisa__objects_pricer;
/* One store, per level (6 [0], 7 [1]): the runs of the tasks it saw, in
 * order, and a hash of that sequence; the set of stand-ins' cells held by
 * its first `held` runs (a task the memo answers leaves it behind, the next
 * one it does not brings it up to date). Zeroed: empty. */
typedef struct wsisa__objects_seen {
  wsisa__objects_table set[2];
  size_t *runs[2];
  size_t nruns[2], capruns[2], held[2];
  uint64_t seq[2];
} wsisa__objects_seen;
/* 0, or -1: out of memory. */
int wsisa__objects_pricer_init(wsisa__objects_pricer *pr, const wsisa__objects_model *m,
                               const wsisa_reuse_buckets *b, const double *params,
                               const double *run_time);
void wsisa__objects_pricer_free(wsisa__objects_pricer *pr);
/* Run `run`'s task of level 6 or 7 after the tasks `seen` holds: its cost as
 * a multiple of its level's fine-grain cost, and it joins `seen`; adds the
 * seconds of reusable work it computes and could have reused (calibration's
 * tile) to *computed and *reusable; -1: out of memory. */
double wsisa__objects_price(const wsisa__objects_pricer *pr, wsisa__objects_seen *seen,
                            size_t run, int level, double *computed, double *reusable);
/* Empty it (a tile opened again starts an empty store). */
void wsisa__objects_seen_clear(wsisa__objects_seen *seen);
/* The tile's reference segmentation (the defaults) into the store, first:
 * it runs before the tile's units, into the same store, and is priced on
 * its own (engine/estimate/simulate.c). A value of the defaults outside the
 * design's range, or a parameter the design holds at another value, moves a
 * stand-in as a change that long does (the parameter's fitted curve).
 * 0, or -1: out of memory. */
int wsisa__objects_seen_reference(wsisa__objects_seen *seen);
void wsisa__objects_seen_free(wsisa__objects_seen *seen);

/* ---- workers busy at once (engine/estimate/busy.c) --------------------------- */

/* What calibration measured of a task's slowdown with k CPU workers busy
 * at once: the seconds in tasks of a set of its segmentations on k CPU
 * workers over those on one (factor[0] = 1 at k = 1), k = 1, 2, 4, ... up
 * to the cores offered, with the workers the set kept busy on average. */
#define WSISA__BUSY_POINTS 16
typedef struct wsisa__busy_model {
  int loaded, n;
  int calibrated_with; /* the CPU workers calibration's rounds ran on */
  int workers[WSISA__BUSY_POINTS];
  double factor[WSISA__BUSY_POINTS];
  double busy[WSISA__BUSY_POINTS]; /* the workers the set kept busy on average
                                    * (1 at one worker; k without the figure) */
  double calibration_busy;          /* ... and calibration's rounds (0: not measured) */
  char source[4800];
} wsisa__busy_model;

/* The seconds the CPU workers spent in tasks since the last call (StarPU's
 * worker profiling, which must be on; it then resets them). */
double wsisa__workers_executing(void);

/* What the busy probe runs: calibration's segmentations on its largest tile;
 * and the CPU workers calibration's rounds kept busy on average (0: not
 * measured). */
typedef struct wsisa__busy_work {
  const wsisa_tile_ref *tile;
  const double *vectors;
  size_t nvec;
  double calibration_busy;
} wsisa__busy_work;

/* Calibration: measure it for k = 1, 2, 4, ... up to `cores` (StarPU
 * started and stopped for each k, with k CPU workers under `sched`), into a
 * file beside the performance models, with the CPU workers the models were
 * filled with (`calibrated_with`). StarPU must not be running. */
int wsisa__busy_probe(const wsisa__busy_work *work, const char *sched, int cores,
                      int calibrated_with, wsisa_err *e);
/* Read it; -1 when calibration has not measured it. */
int wsisa__busy_load(wsisa__busy_model *m);
/* The factor with `busy` CPU workers busy on average: linear in log(busy)
 * between the widths measured (each at the workers its set kept busy),
 * the last two's line past them up to the widest width, flat beyond; 1
 * without a model. */
double wsisa__busy_factor(const wsisa__busy_model *m, double busy);
/* The CPU workers the probe's set kept busy on average with `workers` CPU
 * workers (between the widths measured; past them, the widest's share). */
double wsisa__busy_at_width(const wsisa__busy_model *m, int workers);
/* What a model's CPU time is multiplied by with `busy` CPU workers busy on
 * average: the factor there over the factor at the workers calibration's
 * rounds kept busy (1 without a model). */
double wsisa__busy_ratio(const wsisa__busy_model *m, double busy);

/* ---- reading a tile (engine/estimate/reads.c) ---------------------------------- */

/* What calibration measured of reading its tiles on the submitting thread. */
#define WSISA__READS_TILES 8
typedef struct wsisa__reads_model {
  int loaded, n;
  double pixels[WSISA__READS_TILES], seconds[WSISA__READS_TILES];
  char source[4800];
} wsisa__reads_model;

/* Calibration: time reading each of `n` tiles as a run reads them (`halo`
 * pixels around, their colour statistics), into a file beside the
 * performance models. */
int wsisa__reads_probe(const wsisa_tile_ref *tiles, size_t n, int halo, wsisa_err *e);
/* Read it; -1 when calibration has not measured it. */
int wsisa__reads_load(wsisa__reads_model *m);
/* Seconds to read a tile of width x height (0 without a model). */
double wsisa__reads_seconds(const wsisa__reads_model *m, int width, int height);

/* ---- fresh memory (engine/estimate/fresh.c) ------------------------------------ */

/* What calibration measured of writing a page for the first time. */
typedef struct wsisa__fresh_model {
  int loaded;
  double seconds_per_byte;
  char source[4800];
} wsisa__fresh_model;

/* Calibration: time the first write of each page of fresh mappings, into a
 * file beside the performance models. */
int wsisa__fresh_probe(wsisa_err *e);
/* Read it; -1 when calibration has not measured it. */
int wsisa__fresh_load(wsisa__fresh_model *m);
/* Seconds a rank spends writing its working set for the first time: its
 * peak memory over its baseline, in bytes (0 without a model). */
double wsisa__fresh_seconds(const wsisa__fresh_model *m, uint64_t peak, uint64_t baseline);

/* ---- level costs by parameter values (engine/estimate/levels.c) ------------- */

/* The probes time work on one CPU worker by its thread's CPU clock: its
 * work whatever else the machine runs (a wall clock counts the other
 * processes' share of the core too, and a shared machine's load moves by
 * the second). StarPU up with one CPU worker. */
clockid_t wsisa__worker_clock(void);
double wsisa__clock_seconds(clockid_t clock);

/* What calibration measured of each level's time (CPU seconds of one CPU
 * worker, its largest tile) against the parameters: at the defaults, at the
 * segmentations its rounds run (vectors: the reference's defaults, then one
 * per variant) and, per parameter, at values across its range with the
 * others at the defaults (value[p] sorted, the defaults' among them; ratio:
 * the level's time over the defaults'). */
#define WSISA__LEVELS_POINTS 6
#define WSISA__LEVELS_VECTORS 8
typedef struct wsisa__levels_model {
  int loaded, width, height;
  double at_defaults[WSISA_SEG_LEVELS];
  size_t nvectors;
  double vector[WSISA__LEVELS_VECTORS][WSISA_SEG_NPARAMS];
  double vector_time[WSISA__LEVELS_VECTORS][WSISA_SEG_LEVELS];
  int npoints[WSISA_SEG_NPARAMS];
  double value[WSISA_SEG_NPARAMS][WSISA__LEVELS_POINTS];
  double ratio[WSISA_SEG_NPARAMS][WSISA__LEVELS_POINTS][WSISA_SEG_LEVELS];
  /* the two parameters that move a segmentation the most (-1: none), timed
   * together over the grid of their curves' values: pair_ratio[i][j], at
   * value[pair[0]][i] and value[pair[1]][j], the level's time over the
   * defaults' (the curves' where one of them is at its default) */
  int pair[2];
  double pair_ratio[WSISA__LEVELS_POINTS][WSISA__LEVELS_POINTS][WSISA_SEG_LEVELS];
  char source[4600];
} wsisa__levels_model;

/* Calibration: measure them on one tile (StarPU up with one CPU worker) for
 * the design's rows and the calibration's segmentations, into a file beside
 * the performance models. */
int wsisa__levels_probe(const wsisa_tile_ref *tile, const double *rows, size_t nruns,
                        const double *vectors, size_t nvec, wsisa_err *e);
/* Read them; -1 when calibration has not measured them. */
int wsisa__levels_load(wsisa__levels_model *m);
/* Level `level`'s time at x by the curves: the defaults' times the product
 * of each parameter's ratio at its value, the pair's ratio (interpolated
 * over its grid) for the two parameters timed together, on the levels
 * both reach. */
double wsisa__levels_product(const wsisa__levels_model *m, int level, const double *x);
/* Each run's level tasks as multiples of the models' time (nruns x
 * WSISA_SEG_LEVELS into scale): the curves' product at the run, corrected
 * for the interplay of the parameters it moves together (the calibration
 * segmentations' measured time over their product, by the share of each
 * one's joint move the run makes), over the mean measured time of the calibration
 * segmentations whose level-l footprints are the run's
 * (same_variant[(r * WSISA_SEG_LEVELS + l - 1) * nvectors + i]); time, unless
 * NULL: the same runs' level times in seconds on calibration's tile (the
 * numerators; 0 where unknown); how: a line for run.json. */
int wsisa__levels_scale(const wsisa__levels_model *m, const double *params, size_t nruns,
                        const uint8_t *same_variant, double *scale, double *time, char *how,
                        size_t cap);

/* ---- calibration: filling the models on the study's own slides ------------- */

/* The probes' tile (engine/estimate/calibrate.c): read, registered, its tile
 * stage submitted; closing waits for every task. Their files lie beside the
 * performance models: $STARPU_HOME/.starpu/sampling/NAME. */
typedef struct wsisa__probe_tile {
  wsisa_image *rgb;
  starpu_data_handle_t handle;
  wsisa_tile_data tile;
  int width, height;
} wsisa__probe_tile;
int wsisa__probe_tile_open(const wsisa_tile_ref *ref, wsisa__probe_tile *t, wsisa_err *e);
void wsisa__probe_tile_close(wsisa__probe_tile *t);
void wsisa__probe_path(const char *name, char *path, size_t cap);
/* The file NAME read back (its path in path[cap], for messages); NULL when
 * absent or not JSON. */
json_t *wsisa__probe_read(const char *name, char *path, size_t cap);
/* Write root (taken, NULL: out of memory) as the file NAME. */
int wsisa__probe_write(json_t *root, const char *name, wsisa_err *e);


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

/* ---- the estimate of a study (engine/estimate/estimate.c) -------------------- */

/* What the estimate of a study needs: its tiles, its design in canonical
 * rows, StarPU up for the dry runs, and the costs. */
typedef struct wsisa__estimate_study {
  wsisa__study_run run;     /* the study and its tiles */
  wsisa_estimate *est;
  int started;              /* StarPU was started here */
  int workers;              /* StarPU workers here (CPU + OpenCL) */
} wsisa__estimate_study;

/* Tiles, StarPU (unless running: no OpenCL programs are needed to dry-run),
 * the costs. */
int wsisa__estimate_study_open(wsisa_study *study, const double *params, size_t nruns,
                         wsisa__estimate_study *f, wsisa_err *e);
void wsisa__estimate_study_close(wsisa__estimate_study *f);
/* `wsisa run`, StarPU up, before its reuse plan: the costs from the
 * performance models when there are any (*est, NULL otherwise), and the
 * level costs of cost-aware reuse into s->level_cost (and the study's
 * reuse.level_costs, for study.json) when the study's cost model takes them
 * from the models (an error when it is `measured` and they have none). */
int wsisa__estimate_run_costs(wsisa__study_run *s, wsisa_estimate **est, wsisa_err *e);

/* After the plan: estimate the run (est may be NULL), keep the figures in
 * s->estimated and log them in one line. Never fails the run. */
void wsisa__estimate_run(wsisa__study_run *s, const wsisa_estimate *est,
                                 const wsisa_exec_opts *eo, const uint8_t *done);
/* RMSR's K on a rank of `workers` workers: `asked` (0: workers) lowered to
 * what fits in *memory_limit (0: 80% of the memory available here). */
size_t wsisa__estimate_study_paths(const wsisa__estimate_study *f, size_t asked, int workers,
                             uint64_t *memory_limit);

/* Calibration's view of an estimate (engine/estimate/calibrate.c): how many
 * (codelet task, kind of worker) pairs of its tile shapes lack a calibrated
 * time of their own, out of *total, and the fewest samples among them;
 * StarPU's calibration minimum; a run of each variant of a level. */
size_t wsisa__estimate_missing(const wsisa_estimate *est, size_t *total, unsigned *fewest);
unsigned wsisa__estimate_minimum(const wsisa_estimate *est);
size_t wsisa__estimate_variants(const wsisa_estimate *est, int level, const size_t **runs);

#endif
