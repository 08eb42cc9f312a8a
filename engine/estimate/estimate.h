/* engine/estimate: a study's time, cost and memory before running it, from
 * this host's calibrated StarPU performance models (seed 004), and the
 * calibration that fills those models on the study's own slides
 * (docs/architecture.md, "The estimate"). Above engine/study. */
#ifndef WSISA_ENGINE_ESTIMATE_H
#define WSISA_ENGINE_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "engine/exec/exec.h"
#include "engine/study/study.h"
#include "reuse/reuse.h"

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

/* What the simulation of a plan found (engine/estimate/simulate.c). */
typedef struct wsisa_sim_result {
  double makespan;     /* seconds */
  double work;         /* worker-seconds of every task */
  double work_cpu;     /* ... of those on CPU workers */
  double efficiency;   /* work / (makespan x ranks x workers): the workers' time in tasks */
  uint64_t units, tasks, leaves, opens, stages, backgrounds;
  uint64_t opens_ahead; /* of the opens, tiles opened ahead of their first unit */
  size_t peak_paths;   /* most paths active on a rank */
  size_t peak_outputs; /* most level tasks' outputs held on a rank (paths share
                        * their prefixes) */
  /* per shape: opens, stages, leaves, counts; level tasks per (shape, level,
   * variant); malloc'd, freed by wsisa_sim_result_free */
  uint64_t *shape_opens, *shape_stages, *shape_leaves, *shape_backgrounds, *level_tasks;
  double *level_units; /* ... those tasks in units of their level's cost */
  /* object reuse: seconds of levels 6-7's reusable work computed, and all of it */
  double objects_computed, objects_reusable;
  uint8_t *rank_shapes; /* per rank: the tile shapes it opened (ranks x nshapes) */
} wsisa_sim_result;
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
 * to wsisa's default first)? Cheap: StarPU need not run. */
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

/* The costs of every piece of the study's workflow per tile shape and kind
 * of worker started here (docs/architecture.md, "The estimate", step 1); the
 * process's resident memory is the baseline. StarPU running; no task runs. */
int wsisa_estimate_new(const wsisa_estimate_request *r, wsisa_estimate **out, wsisa_err *e);
void wsisa_estimate_free(wsisa_estimate *est);
/* Does any task's time rest on calibrated data (measured or interpolated)? */
int wsisa_estimate_calibrated(const wsisa_estimate *est);
/* The process's resident memory when the estimate was made (bytes). */
uint64_t wsisa_estimate_baseline(const wsisa_estimate *est);
/* Seconds of one CPU worker per task of each level, averaged over the
 * study's tiles and the design's distinct tasks: the level costs of
 * cost-aware reuse. 0 when every level rests on calibrated data of its own
 * codelets (measured, interpolated or similar), else -1. */
int wsisa_estimate_level_costs(const wsisa_estimate *est, double cost[WSISA_SEG_LEVELS]);
/* Seconds of one worker of each kind (the first OpenCL kind started) per
 * level task, the mean of its level costs: unit placement's prior
 * (wsisa_exec_opts.kind_task_seconds). 0, or -1 when a kind is missing or
 * not calibrated. */
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

/* How a calibration probe's measure entered the estimate, in a line. */
#define WSISA_EST_HOW 512
#define WSISA_EST_MAX_LISTED 8
typedef struct wsisa_estimate_figures {
  wsisa_sim_result sim;     /* makespan (with the first writes), work (as slow as
                             * run), the workers' time in tasks, counts */
  double efficiency;        /* T1 / (p x Tp): the work on one worker alone over
                             * the makespan x ranks x workers */
  int ranks, workers;       /* workers per rank (CPU + OpenCL) */
  double cpu_hours;         /* makespan x ranks x workers */
  size_t active_paths;
  /* object reuse: the expected share of levels 6-7's reusable work taken
   * from the tiles' stores (-1: off, or not measured) */
  double object_share;
  double busy_factor;       /* the CPU task times x this: the workers busy at once
                             * against calibration's */
  double busy_workers;      /* ... the CPU workers busy on average on a machine, it taken at */
  double busy_slowdown;     /* ... a CPU task's time then over its time alone */
  double fresh_seconds;     /* a rank's first writes of its working set, over its
                             * workers, in the makespan */
  /* how each probe's measure was taken in (object_source empty: object
   * reuse off) */
  char level_source[WSISA_EST_HOW], object_source[WSISA_EST_HOW], busy_source[WSISA_EST_HOW],
      read_source[WSISA_EST_HOW], fresh_source[WSISA_EST_HOW];
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

/* ---- calibration: filling the models on the study's own slides ------------- */

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
  char starpu_home[WSISA_PATH_MAX];
} wsisa_calibrate_report;

/* Rounds of the study's workflow until every task has StarPU's minimum of
 * samples (at most three passes), then the probes (docs/architecture.md,
 * "The estimate": "Calibration"). */
int wsisa_calibrate_study(struct wsisa_study *study, const wsisa_calibrate_request *r,
                          wsisa_calibrate_report *out, wsisa_err *e);
void wsisa_calibrate_print(const wsisa_calibrate_report *r, FILE *f);

/* ---- the estimate of a study (engine/estimate/estimate.c) -------------------- */

/* What the estimate of a study needs: its tiles, StarPU up for the dry
 * runs, and the costs. */
typedef struct wsisa__estimate_study {
  wsisa_study *study;
  wsisa__tile_set set;      /* its tiles (wsisa__study_tiles) */
  wsisa_estimate *est;
  int started;              /* StarPU was started here */
  int workers;              /* StarPU workers here (CPU + OpenCL) */
} wsisa__estimate_study;

/* Tiles, StarPU (unless running: no OpenCL programs are needed to dry-run),
 * the costs of the design's nruns rows. */
int wsisa__estimate_study_open(wsisa_study *study, const double *params, size_t nruns,
                               wsisa__estimate_study *f, wsisa_err *e);
void wsisa__estimate_study_close(wsisa__estimate_study *f);
/* RMSR's K on a rank of `workers` workers: `asked` (0: workers) lowered to
 * what fits in *memory_limit (0: 80% of the memory available here). */
size_t wsisa__estimate_study_paths(const wsisa__estimate_study *f, size_t asked, int workers,
                                   uint64_t *memory_limit);
/* `wsisa run`, StarPU up, before its reuse plan: the costs of request r
 * when there are models (*est, NULL otherwise), and the level costs of
 * cost-aware reuse into level_cost (and the study's reuse.level_costs, for
 * study.json; *cost_source "models") when *cost_source is "tasks" and the
 * study's cost model takes them from the models; an error when it is
 * `measured` and they have none. */
int wsisa__estimate_run_costs(wsisa_study *study, const wsisa_estimate_request *r,
                              const char **cost_source, double level_cost[WSISA_SEG_LEVELS],
                              wsisa_estimate **est, wsisa_err *e);
/* The estimate made at the start of a run, for run.json and its log line. */
typedef struct wsisa__run_estimate {
  int made;
  double makespan, work, efficiency, cpu_hours, uncalibrated;
  double interpolated;        /* of the work: tasks timed at other tile sizes, per pixel */
  uint64_t peak_rss, baseline_rss;
  int ranks, workers;
  size_t active_paths;
  char uncalibrated_ops[256]; /* "label (few samples) 5.8%, ..." */
  int object_reuse;           /* the run's */
  double object_share;        /* levels 6-7's reusable work expected reused; -1: not priced */
  char object_source[WSISA_EST_HOW]; /* how that share was obtained */
  char level_source[WSISA_EST_HOW];  /* how the level tasks follow their runs' parameter values */
  double busy_factor;         /* the CPU task times x this: the workers busy at once */
  double busy_workers;        /* ... on average on a machine, the factor taken at */
  char busy_source[WSISA_EST_HOW]; /* how it was obtained */
  char read_source[WSISA_EST_HOW]; /* how a tile's read was priced */
  double fresh_seconds;       /* the working set's first writes, in the makespan */
  char fresh_source[WSISA_EST_HOW]; /* how they were priced */
} wsisa__run_estimate;
/* After the run's plan: estimate it (est may be NULL) into *out, and log it
 * in one line. Never fails the run. */
void wsisa__estimate_run(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                         wsisa__run_estimate *out);

#endif
