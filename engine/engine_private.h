/* Shared-internal pieces of engine/. */
#ifndef WSISA_ENGINE_PRIVATE_H
#define WSISA_ENGINE_PRIVATE_H

#include <stdio.h>

#include <jansson.h>

#include "engine/engine.h"
#include "io/study.h"
#include "reuse/reuse.h"
#include "sa/sa.h"

/* `wsisa run`'s feature metrics (engine/features.c): mean_haematoxylin and
 * wasserstein:<feature>, from per-(run, tile) values journaled in
 * feature_values.csv. */
typedef struct wsisa__run_features wsisa__run_features;
struct wsisa_counts;
/* Is `metric` a feature metric with a known feature? */
int wsisa__run_features_is_metric(const char *metric);
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

/* ---- the MPI transport of the unit queue (engine/dist.c) -------------------- */
/* Without MPI, or not started by mpirun, the job has one rank and the unit
 * queue never calls these but wsisa__dist_alive. */

/* A unit's result as a worker sent it; the counts point into `rows` for
 * their feature rows, as the executor's do. */
typedef struct wsisa__dist_result {
  int rank;
  size_t tile, bucket, n;
  size_t *runs;
  wsisa_counts *counts;
  wsisa_exec_stats stats;
  double *rows;
} wsisa__dist_result;

/* Is rank r (> 0) still given work? */
int wsisa__dist_alive(int rank);
/* Give rank r up: it gets no more work. */
void wsisa__dist_lose(int rank, const char *why);
/* Seconds a worker may hold a unit. */
double wsisa__dist_timeout(void);
/* Send the job (tiles, design, plan, options) to every live worker. */
int wsisa__dist_send_job(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                         const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                         size_t paths_asked, uint64_t memory_limit, wsisa_err *e);
/* Hand unit (tile, bucket) to worker `rank`: non-zero when it cannot be sent. */
int wsisa__dist_send_unit(int rank, size_t tile, size_t bucket);
/* A worker's message if one is waiting: 0 none; 1 a result in *res (free it
 * with wsisa__dist_result_free); 2 a message used up with nothing to report
 * (from a rank given up on); negative on an error, a worker's included. A
 * result is checked against the job's sizes. */
int wsisa__dist_receive(size_t ntiles, size_t nbuckets, size_t nruns, wsisa__dist_result *res,
                        wsisa_err *e);
void wsisa__dist_result_free(wsisa__dist_result *res);
/* How long a rank with nothing to do waits before it looks for messages
 * again: it starts short and doubles while nothing happens, so an idle rank
 * neither spins on MPI nor answers late (a unit takes far longer). */
#define WSISA_IDLE_MIN 1e-4
#define WSISA_IDLE_MAX 5e-3
/* Tell every live worker to stop and wait for its answer. */
void wsisa__dist_stop_workers(void);

/* ---- checked lines: journal.csv and feature_values.csv (engine/journal.c) --- */

/* CRC-32 (IEEE) of `len` bytes. */
uint32_t wsisa__crc32(const char *text, size_t len);
/* The CRC-32 of a text whose first part had `crc`, `len` more bytes on. */
uint32_t wsisa__crc32_more(uint32_t crc, const char *text, size_t len);
/* Append `text` (no newline) with its proof of being whole: ",<fields>,<crc32>"
 * (the line's field count, and the CRC-32 in 8 hex digits of everything
 * before the last comma). -1 on a write error (the stream's error flag). */
int wsisa__line_put(FILE *f, const char *text, size_t len);
/* One whole line's data fields (the proof removed), numbered from 1 with the
 * header. Non-zero stops the reading with that error. */
typedef int (*wsisa__line_fn)(void *ctx, char **fields, size_t nfields, size_t lineno,
                              wsisa_err *e);
/* A header of an earlier format, and what its lines lack (for the refusal). */
typedef struct wsisa__old_header {
  const char *header, *lacks;
} wsisa__old_header;
/* Read a file of checked lines: the first must be `header` (one of `old`, the
 * headers of earlier formats ending with {NULL}, gets its own refusal,
 * naming what its lines lack); every other line
 * must carry `nfields` fields, proof included. A bad last line is a torn tail
 * (*torn = its line number): with `repair` the file is cut back before it and
 * a warning names file and line, else it is only reported. A bad line with
 * lines after it is an error naming file and line. *lines counts the whole
 * data lines. */
int wsisa__lines_read(const char *path, const char *header, const wsisa__old_header *old,
                      size_t nfields, int repair, wsisa__line_fn take, void *ctx,
                      size_t *lines, size_t *torn, wsisa_err *e);

/* ---- the stain check (engine/stain.c) ---------------------------------------- */

/* Colour-deconvolution measures of tissue pixels, summed over the tiles seen. */
typedef struct wsisa__stain {
  size_t tiles;
  uint64_t pixels, tissue;  /* pixels seen; tissue: summed optical density >= 0.3 */
  uint64_t outside;         /* tissue pixels with a clearly negative H or E amount */
  double od_sum;            /* mean optical density per channel, summed per pixel */
  double od_energy, residual_energy; /* |od|^2 and the residual amount^2, summed */
  double h_sum, e_sum;      /* |H| and |E| amounts, summed */
  uint64_t grey;            /* tissue pixels whose channels differ by at most 2 */
  int dark_background;      /* io's tissue detection took the slide as dark field */
} wsisa__stain;

/* Add the tissue pixels of an RGB u8 tile. */
void wsisa__stain_add(wsisa__stain *st, const wsisa_image *rgb);
/* A few of the grid's tissue tiles, spread over the slide, and its background. */
int wsisa__stain_sample(wsisa_slide *slide, const wsisa_grid *g, wsisa__stain *st,
                        wsisa_err *e);
/* 0 when what was seen is bright-field H&E (or too little tissue to say);
 * else WSISA_EUSAGE with one line naming `name`, what was seen and
 * `override`, how to run it anyway. */
int wsisa__stain_verdict(const wsisa__stain *st, const char *name, const char *override,
                         wsisa_err *e);
double wsisa__stain_mean_od(const wsisa__stain *st);
double wsisa__stain_outside(const wsisa__stain *st);
double wsisa__stain_residual(const wsisa__stain *st);
double wsisa__stain_haematoxylin(const wsisa__stain *st);

/* ---- a study's run: engine/runner.c, journal.c, results.c ------------------ */

/* The estimate made at the start of a run, for run.json and its log line. */
typedef struct wsisa__prediction {
  int made;
  double makespan, work, efficiency, cpu_hours, uncalibrated;
  uint64_t peak_rss, baseline_rss;
  int ranks, workers;
  size_t active_paths;
  char uncalibrated_ops[256]; /* "label (few samples) 5.8%, ..." */
} wsisa__prediction;
/* One input (slide or image) of a run: how it was read and what the checks
 * saw, for run.json. */
typedef struct wsisa__run_input {
  const char *path;         /* the study's string */
  int is_slide;
  wsisa_scale scale;        /* MPP and its source, level, factor */
  size_t first_tile, ntiles; /* its tiles in wsisa__study_run.tiles */
  double tissue_mm2;        /* tissue area of its tiles (tile area x tissue share) */
  int stain_checked;
  wsisa__stain stain;
  /* inputs.reference in a study that names one: the annotation (NULL: this
   * input has none, and none of its tiles run) and what it holds */
  wsisa_annot_spec *annot;
  size_t tiles_left_out;    /* tiles (tissue ones, with tissue_only) it does not cover */
  size_t annot_objects;     /* nuclei in the file */
  uint64_t annot_bytes;     /* the file as the run began with it */
  uint32_t annot_crc32;
} wsisa__run_input;

/* Everything one `wsisa run` knows, from the study to the counts. */
typedef struct wsisa__study_run {
  wsisa_study *study;
  char dir[4096];           /* the results folder (its temporary name while it is made) */
  char out[4096];           /* the results folder's name */
  wsisa_tile_ref *tiles;
  char **tile_names;
  size_t ntiles;
  wsisa_sa_space *space;
  wsisa_sa_opts sa;
  wsisa_sa_design *design;
  size_t nruns;
  double *params;           /* nruns x 15, canonical order */
  uint64_t *run_ids;        /* a design read from CSV keeps its run ids; NULL: 0..n-1 */
  int from_csv;
  wsisa_reuse_design *plan;
  wsisa_reuse_buckets *buckets;
  int workers;              /* StarPU workers over every MPI rank */
  wsisa_counts *counts;     /* nruns x ntiles */
  uint8_t *have;            /* nruns x ntiles: counts known */
  FILE *journal;
  double t_plan, t_exec, t_start;
  wsisa_exec_stats stats;
  uint64_t tasks_no_reuse;
  uint64_t object_store_bytes; /* a tile's object store at most (rank 0); 0: object reuse off */
  int object_match;         /* a metric needs the objects matched (object_dice, F1, AJI) */
  int annotated;            /* inputs.reference: runs are compared with annotations */
  size_t tiles_left_out;    /* tiles no annotation covers, over every input */
  wsisa_machine machine;
  wsisa__run_features *features; /* NULL: no metric needs the feature stage */
  /* the bucket cost model in force: "tasks", "level_costs" (given) or
   * "models" (wsisa_estimate_level_costs), and its level costs */
  const char *cost_source;
  double level_cost[WSISA_SEG_LEVELS];
  wsisa_estimate *est;      /* the costs from the models, NULL without them */
  wsisa__prediction predicted;
  wsisa__run_input *inputs; /* per slide or image, in the study's order */
  size_t ninputs;
  size_t units_total, units_run; /* (tile x bucket) units, and those run by this process */
  size_t units_journaled;   /* by this process */
  int lock_fd;              /* DIR/lock, flock'ed while this process writes DIR; -1 */
  int created;              /* this process made the results folder */
  int runtime;              /* StarPU is running */
  uint64_t baseline_rss;    /* bytes held before the units (run.json) */
} wsisa__study_run;

/* The unit queue (engine/units.c), shared with its simulation
 * (engine/simulate.c): units in flight per rank, and the next unit for a rank
 * holding tile *held (SIZE_MAX: none) given per-unit state (0: to do),
 * per-tile units to do and per-tile holders; moves *held and the holders
 * count to the chosen unit's tile. SIZE_MAX when nothing is left. */
#define WSISA__UNIT_CREDIT 2
size_t wsisa__units_pick(const uint8_t *state, const size_t *todo, size_t *holders,
                         size_t ntiles, size_t nb, size_t *held);

/* The study's tiles (s->study set): its slides' tile grids (tissue tiles
 * only unless asked) and its images, into s->tiles and s->tile_names. */
int wsisa__study_tiles(wsisa__study_run *s, wsisa_err *e);
/* Free what wsisa__study_tiles made (tiles, their names, the inputs). */
void wsisa__study_tiles_free(wsisa__study_run *s);

/* ---- the estimate of a study (engine/forecast.c) ----------------------------- */

/* What the estimate of a study needs: its tiles, its design in canonical
 * rows, StarPU up for the dry runs, and the costs. */
typedef struct wsisa__forecast {
  wsisa__study_run run;     /* the study and its tiles */
  wsisa_estimate *est;
  int started;              /* StarPU was started here */
  int workers;              /* StarPU workers here (CPU + OpenCL) */
} wsisa__forecast;

/* Tiles, StarPU (unless running: no OpenCL programs are needed to dry-run),
 * the costs. */
int wsisa__forecast_open(wsisa_study *study, const double *params, size_t nruns,
                         wsisa__forecast *f, wsisa_err *e);
void wsisa__forecast_close(wsisa__forecast *f);
/* The rows of the 15 parameters (canonical order) of a segmentation
 * study's design, or of the design CSV `samples` (columns named as the
 * study's parameters), as `wsisa plan` reads them. */
int wsisa__plan_design_rows(const wsisa_study *study, const char *samples, const char *select,
                            double **rows, size_t *nruns, wsisa_err *e);
/* `wsisa run`, StarPU up, before its reuse plan: the costs from the
 * performance models when there are any (*est, NULL otherwise), and the
 * level costs of cost-aware reuse into s->level_cost (and the study's
 * reuse.level_costs, for study.json) when the study's cost model takes them
 * from the models (an error when it is `measured` and they have none). */
int wsisa__run_forecast_costs(wsisa__study_run *s, wsisa_estimate **est, wsisa_err *e);

/* After the plan: predict the run (est may be NULL), keep the figures in
 * s->predicted and log them in one line. Never fails the run. */
void wsisa__run_forecast_predict(wsisa__study_run *s, const wsisa_estimate *est,
                                 const wsisa_exec_opts *eo, const uint8_t *done);
/* RMSR's K on a rank of `workers` workers: `asked` (0: workers) lowered to
 * what fits in *memory_limit (0: 80% of the memory available here). */
size_t wsisa__forecast_paths(const wsisa__forecast *f, size_t asked, int workers,
                             uint64_t *memory_limit);

/* Calibration's view of an estimate (engine/calibrate.c): how many
 * (codelet task, kind of worker) pairs of its tile shapes lack a calibrated
 * time of their own, out of *total, and the fewest samples among them;
 * StarPU's calibration minimum; a run of each variant of a level. */
size_t wsisa__estimate_missing(const wsisa_estimate *est, size_t *total, unsigned *fewest);
unsigned wsisa__estimate_minimum(const wsisa_estimate *est);
size_t wsisa__estimate_variants(const wsisa_estimate *est, int level, const size_t **runs);

/* DIR/name into buf. */
void wsisa__run_path(const wsisa__study_run *s, const char *name, char *buf, size_t cap);

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

/* Is every metric of the study one `wsisa run` computes? Sets s->object_match. */
int wsisa__results_check_metrics(wsisa__study_run *s, const char *study_path, wsisa_err *e);
/* What the study's metrics ask of each run and tile: the object matching
 * (any object metric), the feature stage (a feature metric). */
void wsisa__study_needs(const wsisa_study *study, int *object_match, int *features);
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
 * its "resumes". */
int wsisa__results_provenance(wsisa__study_run *s, wsisa_err *e);
/* The parameters ranked by the first metric's main index, on stdout. */
void wsisa__results_print_top(const wsisa__study_run *s);

#endif
