/* engine/run's own declarations: the state of a run as its steps share it,
 * the feature metrics, the journal, the results, the steps a run shares with
 * --check and the results folder. Included by engine/run/ and its suite
 * alone (tests/test_engine_run*.c). */
#ifndef WSISA_ENGINE_RUN_INTERNAL_H
#define WSISA_ENGINE_RUN_INTERNAL_H

#include "engine/run/run.h"

/* ==== a study's run, as its steps share it ==================================== */

/* The run's feature metrics (engine/run/features.c). */
typedef struct wsisa__run_features wsisa__run_features;

/* Everything one `wsisa run` knows, from the study to the counts. */
typedef struct wsisa__study_run {
  wsisa_study *study;
  char dir[WSISA_PATH_MAX];  /* the results folder (its temporary name while it is made) */
  char out[WSISA_PATH_MAX];  /* the results folder's name */
  wsisa__tile_set set;       /* its tiles, their names and inputs (wsisa__study_tiles) */
  wsisa_sa_space *space;
  wsisa_sa_opts sa;
  wsisa_sa_design *design;
  size_t nruns;
  double *params;           /* nruns x 15, canonical order */
  /* the design's runs: params' first ndesign rows, those of samples.csv,
   * outputs.csv and the analysis; nruns - ndesign (0 or 1) more follow, the
   * 15 defaults run to be scored against annotations (wsisa__study_defaults) */
  size_t ndesign;
  uint64_t *run_ids;        /* a design read from CSV keeps its run ids; NULL: 0..n-1 */
  int from_csv;
  wsisa_reuse_design *plan;
  wsisa_reuse_buckets *buckets;
  int workers;              /* StarPU workers over every MPI rank */
  wsisa_counts *counts;     /* nruns x ntiles */
  uint8_t *have;            /* nruns x ntiles: counts known */
  FILE *journal;
  double t_plan, t_exec, t_start;
  /* the process's page faults while the units ran (minor: a page first
   * written or mapped again; major: read from disk) */
  long faults_minor, faults_major;
  wsisa_exec_stats stats;
  uint64_t tasks_no_reuse;
  uint64_t object_store_bytes; /* a tile's object store at most (rank 0); 0: object reuse off */
  int object_match;         /* a metric needs the objects matched (object_dice, F1, AJI) */
  wsisa_machine machine;
  wsisa__run_features *features; /* NULL: no metric needs the feature stage */
  /* the bucket cost model in force: "tasks", "level_costs" (given) or
   * "models" (wsisa_estimate_level_costs), and its level costs */
  const char *cost_source;
  double level_cost[WSISA_SEG_LEVELS];
  wsisa_estimate *est;      /* the costs from the models, NULL without them */
  wsisa__run_estimate estimated;
  size_t units_total, units_run; /* (tile x bucket) units, and those run by this process */
  size_t units_journaled;   /* by this process */
  int lock_fd;              /* DIR/lock, flock'ed while this process writes DIR; -1 */
  int created;              /* this process made the results folder */
  int runtime;              /* StarPU is running */
  uint64_t baseline_rss;    /* bytes held before the units (run.json) */
  /* with annotations: the defaults' run, an index in params (the first of
   * the design with the 15 defaults, else the one added after it; -1: none),
   * and its value by best.json's metric, for the summary */
  long defaults_run;
  double defaults_value;
  int halo;                 /* target pixels read around each slide tile */
} wsisa__study_run;

/* ---- the feature metrics (engine/run/features.c) ---------------------------- */

/* `wsisa run`'s feature metrics (engine/run/features.c): mean_haematoxylin and
 * wasserstein:<feature>, from per-(run, tile) values journaled in
 * feature_values.csv. */
/* NULL in *out when no metric needs features; WSISA_EUSAGE for
 * wasserstein:<unknown feature>. */
int wsisa__run_features_new(char *const *metrics, size_t nmetrics, size_t nruns, size_t ntiles,
                            const char *dir, wsisa__run_features **out, wsisa_err *e);
void wsisa__run_features_free(wsisa__run_features *f);
int wsisa__run_features_open(wsisa__run_features *f, int fresh, wsisa_err *e);
/* The results folder was renamed into place: messages name `dir` now. */
int wsisa__run_features_move(wsisa__run_features *f, const char *dir, wsisa_err *e);
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
int wsisa__run_path(const wsisa__study_run *s, const char *name, char buf[WSISA_PATH_MAX],
                    wsisa_err *e);
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

/* ---- `wsisa run --check` (engine/run/check.c) -------------------------------- */

/* A results folder, locked and its run prepared as it began (its tiles and
 * design made): the journal against the design, the outputs made again from
 * it and compared; what was found printed, an error when it is not whole. */
int wsisa__run_check(wsisa__study_run *s, wsisa_err *e);

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

/* ---- `wsisa segment SLIDE --all` (engine/run/slide.c) ----------------------- */

/* A record's head: magic and format, then grid index, nuclei, tissue, spans,
 * feature rows and columns as u64. */
#define WSISA__SLIDE_RECORD_HEAD (2 * sizeof(uint32_t) + 6 * sizeof(uint64_t))

/* One tile of the slide to segment. */
typedef struct wsisa__slide_tile {
  size_t index;                 /* in the grid */
  int have;                     /* journaled, its record whole */
  uint64_t nuclei, tissue, offset, bytes;
  uint32_t crc;
  uint64_t first_id;            /* its first nucleus's number across the slide */
} wsisa__slide_tile;

/* The segmentation of a slide, as its steps share it. */
typedef struct wsisa__slide_run {
  const wsisa_slide_segment_request *r;
  wsisa_grid *grid;
  int64_t width0, height0;
  double step, pixel_mpp;
  wsisa__slide_tile *tiles;            /* ascending grid index */
  size_t n, done_before, journaled;
  wsisa_tile_ref *refs;         /* one per tile */
  size_t *chosen_at;            /* grid index -> place in tiles, SIZE_MAX when not chosen */
  int halo, has_stats;
  double stats[WSISA_STATS_N];
  double params[WSISA_SEG_NPARAMS];
  char work[WSISA_PATH_MAX];
  int lock_fd, store_fd, created;
  FILE *journal;
  uint64_t store_end;
  json_t *identity;
  int feature_cols;
  uint32_t salt;
  int runtime;
} wsisa__slide_run;

typedef struct wsisa__slide_totals {
  uint64_t nuclei, tissue;
} wsisa__slide_totals;

/* DIR/name of the work folder into buf. */
int wsisa__slide_work_path(const wsisa__slide_run *s, const char *name, char buf[WSISA_PATH_MAX],
                           wsisa_err *e);
/* Square millimetres of `pixels` target pixels. */
double wsisa__slide_tissue_mm2(const wsisa__slide_run *s, uint64_t pixels);
/* Every output from the journal, in grid order, staged and committed
 * together (engine/run/slide_outputs.c); the slide's totals into *tot. */
int wsisa__slide_assemble(wsisa__slide_run *s, wsisa__slide_totals *tot, wsisa_err *e);

#endif
