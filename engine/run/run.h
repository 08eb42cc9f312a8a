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
  char starpu_home[1024];
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
 * folder as each ends, then write the outputs together from the journal and
 * remove the folder; run again after an interruption, it goes on from the
 * tiles journaled. Under mpirun, ranks other than 0 segment the tiles rank 0
 * hands out. */
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

/* `wsisa run`'s feature metrics (engine/run/features.c): mean_haematoxylin and
 * wasserstein:<feature>, from per-(run, tile) values journaled in
 * feature_values.csv. */
typedef struct wsisa__run_features wsisa__run_features;
/* NULL in *out when no metric needs features; WSISA_EUSAGE for
 * wasserstein:<unknown feature>. */
int wsisa__run_features_new(char *const *metrics, size_t nmetrics, size_t nruns, size_t ntiles,
                            const char *dir, wsisa__run_features **out, wsisa_err *e);
void wsisa__run_features_free(wsisa__run_features *f);
int wsisa__run_features_open(wsisa__run_features *f, int fresh, wsisa_err *e);
/* The results folder was renamed into place: messages name `dir` now. */
void wsisa__run_features_move(wsisa__run_features *f, const char *dir);
/* Resume: read the values back (checked lines, as the journal's; `repair`,
 * lines and torn as wsisa__lines_read); a (run, tile) of `have` without them
 * is cleared. */
int wsisa__run_features_read(wsisa__run_features *f, uint8_t *have, int repair, size_t *lines,
                             size_t *torn, wsisa_err *e);
/* A finished unit's values, journaled (synced) and kept. */
int wsisa__run_features_unit(wsisa__run_features *f, size_t tile, const size_t *runs,
                             const struct wsisa_counts *counts, size_t n, wsisa_err *e);
/* The metric of a run; NaN when undefined (no nucleus). */
double wsisa__run_features_metric(wsisa__run_features *f, size_t run, const char *metric);
/* Wasserstein-1 distance of two sorted, non-empty samples. */
double wsisa__wasserstein1(const double *a, size_t na, const double *b, size_t nb);

/* DIR/name into buf. */
void wsisa__run_path(const wsisa__study_run *s, const char *name, char *buf, size_t cap);
/* The run id of run r (an index in params): the design CSV's, else r. */
uint64_t wsisa__run_id(const wsisa__study_run *s, size_t r);

/* journal.csv: one line per finished (run, tile), flushed and synced. */
int wsisa__journal_open(wsisa__study_run *s, int fresh, wsisa_err *e);
typedef struct wsisa__journal_summary {
  size_t lines;   /* whole data lines */
  size_t repeats; /* lines of a (run, tile) seen before, with the same counts */
  size_t torn;    /* line number of a torn last line, 0 if none */
} wsisa__journal_summary;
/* The counts an earlier run finished. With `repair` (resume) a torn last line
 * is cut off; without (--check) it is only reported in *sum (may be NULL). */
int wsisa__journal_read(wsisa__study_run *s, int repair, wsisa__journal_summary *sum,
                        wsisa_err *e);
/* The unit callback (wsisa_exec_unit_fn) that journals and keeps the counts. */
int wsisa__journal_unit(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                        const wsisa_counts *counts, size_t n, wsisa_err *e);

/* Does the file at `path` differ from `made` (the same file made again, by
 * `what`: "the journal")? 1 and, in `why`, the first line that differs, or
 * why `path` cannot be read; 0 when they agree. */
int wsisa__results_differs(const char *path, const char *made, const char *what, char *why,
                           size_t cap);

/* Is every metric of the study one `wsisa run` computes? Sets s->object_match. */
int wsisa__results_check_metrics(wsisa__study_run *s, const char *study_path, wsisa_err *e);
/* study.json (resolved) and samples.csv (and design.csv for a CSV design):
 * what --resume reads back. */
int wsisa__results_study(wsisa__study_run *s, wsisa_err *e);
/* samples.csv (and design.csv) into `dir` (NULL: the results folder). */
int wsisa__results_samples(wsisa__study_run *s, const char *dir, wsisa_err *e);
/* metrics.csv and outputs.csv from the counts, into `dir` (NULL: the results
 * folder), together or not at all; with annotations, best.json beside them
 * (the best run by the first metric that has a better direction). */
int wsisa__results_metrics(wsisa__study_run *s, const char *dir, wsisa_err *e);
/* The reference the runs were compared with, as run.json's "reference". */
json_t *wsisa__results_reference_json(const wsisa__study_run *s);
/* With annotations, reference.json into `dir` (NULL: the results folder):
 * which files, their sizes and CRC-32, which tiles they cover. A resume or
 * --check holds the files to it: an annotation changed since the run began
 * would mix two references. */
int wsisa__results_reference(wsisa__study_run *s, const char *dir, wsisa_err *e);
/* Resume: refuse when reference.json is not what the annotations give now. */
int wsisa__results_reference_check(wsisa__study_run *s, wsisa_err *e);
/* The reference segmentation's nuclei per mm² of tissue of each input, and a
 * warning (stderr, run.json) for an input where it found almost nothing. */
#define WSISA_MIN_NUCLEI_PER_MM2 200.0
/* run.json: versions, workers, machine, reuse, tasks, times, memory, the
 * inputs (resolution, stain, nucleus density) and warnings. On a resume of a
 * run whose run.json exists, its figures are kept and the resume is added to
 * its "resumes", with the outputs it rewrote because they disagreed with the
 * journal (`rewritten`, taken: an array of {file, why}; NULL: none). */
int wsisa__results_provenance(wsisa__study_run *s, json_t *rewritten, wsisa_err *e);
/* Whether the run writes sensitivity indices: not for a design from a CSV,
 * nor for the one run of a study with every parameter fixed. */
int wsisa__results_indexed(const wsisa__study_run *s);
/* The parameters ranked by the first metric's main index, on stdout. */
void wsisa__results_print_top(const wsisa__study_run *s);

/* ---- the steps a run shares with --check (engine/run/runner.c) ------------- */

/* The study's request applied, its tiles and design made, and every check
 * that can refuse the run passed before anything is written. */
int wsisa__run_prepare(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e);
/* `wsisa run --check` (engine/run/check.c). */
int wsisa__run_check(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e);

/* ---- the results folder (engine/run/folder.c) --------------------------------- */

/* flock DIR/lock (exclusive: to write; else to read) into *fd_out, refusing
 * with the holder's pid when another process has it. */
int wsisa__run_folder_lock(const char *dir, int exclusive, int *fd_out, wsisa_err *e);
/* Remove a folder this process made and its files. */
void wsisa__run_folder_remove(const char *dir);
/* Refuse a results folder that exists and is not empty. */
int wsisa__run_folder_check_new(const char *dir, wsisa_err *e);
/* Make the results folder complete enough to resume, as DIR.tmp-XXXXXX beside
 * `out` (s->dir names it until it is renamed into place). */
int wsisa__run_folder_create(wsisa__study_run *s, const char *out, wsisa_err *e);

#endif
