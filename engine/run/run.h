/* engine/run: a study's run (`wsisa run`: its steps, the results folder,
 * `--check`, the journal, the results and the feature metrics) and its plan
 * (`wsisa plan`: every strategy on the study's design, without running it).
 * The top room of engine/. */
#ifndef WSISA_ENGINE_RUN_H
#define WSISA_ENGINE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core/core.h"
#include "engine/estimate/estimate.h"
#include "engine/exec/exec.h"
#include "engine/study/study.h"
#include "engine/workflow/workflow.h"
#include "reuse/reuse.h"

/* ==== the study's reuse plan ================================================= */

/* RTMA's, naive's and SCA's MaxBucketSize when the study sets none: measured
 * best on this workflow (README, Performance). */
#define WSISA_DEFAULT_BUCKET_SIZE 8

/* The reuse options a study runs with on `workers` StarPU workers in all:
 * its strategy and limits, MaxBuckets 3 x workers and MaxBucketSize
 * WSISA_DEFAULT_BUCKET_SIZE unless the study sets them. `level_cost` (7
 * values, or NULL for the papers' task count) is kept by pointer. */
void wsisa_plan_reuse_opts(const struct wsisa_study *study, int workers,
                           const double *level_cost, wsisa_reuse_opts *o);

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
                               (with estimate: CPU workers per rank, <= 0: StarPU's) */
  int opencl_workers;       /* with estimate: OpenCL workers per rank; 0: StarPU's
                               here, -1: none */
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
  int opencl_workers;       /* per rank, as estimated */
  double deadline;
  int deadline_ranks;       /* 0: not met within deadline_max_ranks */
  int deadline_max_ranks;
  double deadline_makespan;
  char starpu_home[WSISA_PATH_MAX];
} wsisa_plan_report;

/* The reuse analysis of a segmentation study's design under each strategy,
 * with the limits `wsisa run` would use. */
int wsisa_plan_compare(const struct wsisa_study *study, const wsisa_plan_request *r,
                       wsisa_plan_report *out, wsisa_err *e);
void wsisa_plan_report_free(wsisa_plan_report *report);

/* ==== a whole slide's nuclei (`wsisa segment SLIDE --all`) ===================== */

typedef struct wsisa_slide_segment_request {
  const char *slide;
  const char *tiles;        /* --tiles: grid indices and ranges ("3,5,7-9"); NULL: the
                               tissue tiles (within the region when has_region) */
  int has_region;
  int64_t region[4];        /* level-0 x, y, width, height */
  long tile_size;           /* the grid's tiles, in target pixels */
  double mpp, target_mpp;   /* the slide's um/pixel (0: what it says); the resolution read */
  int halo;                 /* target pixels around each tile; -1: auto */
  int normalize, tile_stats, stain_check;
  double params[WSISA_SEG_NPARAMS];
  /* the outputs (NULL: not written), at least one */
  const char *geojson, *features, *summary, *density, *labels;
  const char *work;         /* the work folder; NULL: beside the first output (.parts) */
  int force;                /* replace outputs that exist */
  double unit_timeout;      /* under mpirun, seconds; 0: 600 */
} wsisa_slide_segment_request;

/* Segment every chosen tile (engine/run/slide.c), journaled in the work
 * folder as each ends, then write the outputs together from the journal
 * (engine/run/slide_outputs.c) and remove the folder; run again after an
 * interruption, it goes on from the tiles journaled. Under mpirun, ranks
 * other than 0 segment the tiles rank 0 hands out. */
int wsisa_slide_segment(const wsisa_slide_segment_request *r, wsisa_err *e);

/* ==== a whole study =========================================================== */

typedef struct wsisa_runner_request {
  const char *study;       /* study file; NULL: the default study on the bundled sample */
  const char *out;         /* a new results folder ... */
  const char *resume;      /* ... or an interrupted run's, to go on with */
  const char *samples;     /* a design CSV instead of the study's sampler */
  int strategy;            /* a wsisa_reuse_strategy, or -1: the study's */
  long max_buckets, max_bucket_size, active_paths; /* 0: the study's */
  uint64_t memory_limit;   /* bytes; 0: the study's */
  int object_reuse;        /* 0 off, 1 on, -1: the study's */
  int placement;           /* a wsisa_placement, or -1: the study's */
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
