/* engine/study: the study. Its file (docs/study-file.md: the JSON contract
 * parsed and validated into a wsisa_study, and the resolved study written
 * back as JSON), its strategies and metrics, the design it asks for (or a
 * design CSV), its tiles and the analysis of its outputs. Above engine/exec. */
#ifndef WSISA_ENGINE_STUDY_H
#define WSISA_ENGINE_STUDY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "engine/workflow/workflow.h"
#include "io/csv.h"
#include "io/io.h"
#include "reuse/reuse.h"
#include "sa/sa.h"

/* Bucket cost: the papers' count of distinct tasks; measured task times (the
 * performance models' or --level-costs, required); or auto, the default:
 * measured when the models have calibrated times for every level, else
 * task counts. */
typedef enum {
  WSISA_STUDY_COST_TASKS = 0,
  WSISA_STUDY_COST_MEASURED,
  WSISA_STUDY_COST_AUTO
} wsisa_study_cost;

const char *wsisa_study_cost_name(wsisa_study_cost cost);

/* Slide-level metrics a segmentation study may name (docs/workflow.md), in
 * one table that parsing, `wsisa run`'s metrics.csv and its messages read:
 * the pixel and count metrics (always in metrics.csv), those of the object
 * matching, then those of the feature stage. */
typedef enum wsisa_study_metric_kind {
  WSISA_STUDY_METRIC_PIXEL = 0, /* from the masks' pixel and object counts */
  WSISA_STUDY_METRIC_OBJECT,    /* from the object matching (object_match) */
  WSISA_STUDY_METRIC_FEATURE    /* from the feature stage */
} wsisa_study_metric_kind;
typedef struct wsisa_study_metric {
  const char *name;
  wsisa_study_metric_kind kind;
  int direction; /* as wsisa_study_metric_direction */
} wsisa_study_metric;
extern const wsisa_study_metric wsisa_study_metrics[];
extern const size_t wsisa_study_nmetrics;
/* Prefix of the metric "wasserstein:<feature>": the Wasserstein-1 distance of
 * a per-nucleus feature's distribution to the reference run's. */
#define WSISA_STUDY_WASSERSTEIN "wasserstein:"
/* The table's index of `metric`, -1 when it is none of its names. */
long wsisa_study_metric_find(const char *metric);
/* The names of the table, then "wasserstein:<feature>", joined by ", " into
 * buf (for messages and --help). */
void wsisa_study_metric_list(char *buf, size_t cap);
/* The feature column (wsisa_workflow_feature_column) a feature metric reads:
 * mean_haematoxylin's h_mean, wasserstein:<feature>'s feature; -1 when the
 * metric is no feature metric or names no known feature. */
int wsisa_study_metric_feature(const char *metric);
/* Which way a metric is better when runs are compared with an annotation: 1
 * higher (Dice, Jaccard, object Dice, F1, precision, recall, AJI), -1 lower
 * (wasserstein:<feature>), 0 neither (counts, areas, intensities). */
int wsisa_study_metric_direction(const char *metric);

/* inputs.reference["<input>"]: the nuclei drawn on one slide or image, which
 * every run is compared with instead of the default-parameter run. */
typedef struct wsisa_study_reference {
  char *input;              /* the slide or image, as inputs.slides/images name it */
  wsisa_annot_kind kind;    /* geojson, labels or mask */
  char *path;               /* the annotation file, as written */
  double origin[2];         /* labels, mask: level-0 position of its corner; default 0, 0 */
  double downsample;        /* labels, mask: level-0 pixels per pixel; 0: not given */
  double mpp;               /* labels, mask: um per pixel instead; 0: not given (neither:
                               level 0's pixels) */
  int has_region;           /* geojson: drawn exhaustively in this level-0 rectangle */
  int64_t region[4];        /* x, y, width, height */
} wsisa_study_reference;

/* inputs.tiles: which tiles of each slide a study runs (docs/study-file.md). */
typedef enum wsisa_study_tiles_kind {
  WSISA_TILES_ALL = 0,  /* every tile (tissue ones with tissue_only) */
  WSISA_TILES_SAMPLE,   /* {"sample": N, "seed": s}: N tissue tiles spread over the tissue map */
  WSISA_TILES_LIST,     /* [i, ...]: these grid indices */
  WSISA_TILES_RECTS,    /* {"regions": [[x, y, w, h], ...]}: tiles that overlap them */
  WSISA_TILES_GEOJSON   /* {"regions": "file.geojson"}: tiles its polygons overlap */
} wsisa_study_tiles_kind;
typedef struct wsisa_study_tiles {
  wsisa_study_tiles_kind kind;
  size_t sample;        /* SAMPLE: N */
  uint64_t seed;        /* SAMPLE: the seed (default 1) */
  int64_t *values;      /* LIST: grid indices; RECTS: x, y, w, h per rectangle (level 0) */
  size_t nvalues;
  char *geojson;        /* GEOJSON: the file, as written */
  int has_crc;          /* GEOJSON: "crc32" given (a resolved study's): the file must match */
  uint32_t crc32;
} wsisa_study_tiles;
/* The choice's kind as study-file words ("all", "sample", "list", "regions",
 * "geojson"). */
const char *wsisa_study_tiles_kind_name(wsisa_study_tiles_kind kind);

typedef struct wsisa_study_inputs {
  char **slides;        /* whole-slide images, as written (relative to the
                           working directory) */
  size_t nslides;
  char **images;        /* or PNG/TIFF tiles */
  size_t nimages;
  int tile_size;        /* default 1024 */
  int overlap;          /* default 0 */
  int tissue_only;      /* default 1 */
  double mpp;           /* target resolution the slides are read at, um per pixel;
                           default WSISA_TARGET_MPP (0.5, what the parameters are
                           tuned for) */
  int level;            /* pyramid level to read (resampled to mpp); -1
                           (default): the coarsest level at or finer than mpp */
  double slide_mpp;     /* um per level-0 pixel of the slides, or per pixel of the
                           images, overriding what they say; 0 (default): the
                           slides' own, and images taken as they are */
  int stain_check;      /* refuse inputs that do not look like bright-field H&E
                           (engine/workflow/stain.c); default 1 */
  int halo;             /* target pixels read around each slide tile, its results
                           those of the nuclei its core owns; -1 (default,
                           "auto"): wsisa_workflow_halo of the study's runs */
  int tile_stats;       /* normalization statistics per tile (the papers'); 0
                           (default, "slide"): once per slide, from its tissue */
  wsisa_study_reference *references; /* none: the default-parameter run is the
                                        reference */
  size_t nreferences;
  wsisa_study_tiles tiles; /* inputs.tiles; kind ALL when not given */
} wsisa_study_inputs;

/* Task levels of the segmentation workflow (docs/workflow.md). */
#define WSISA_STUDY_LEVELS 7

typedef struct wsisa_study_reuse_opts {
  wsisa_reuse_strategy strategy; /* (reuse/reuse.h) default rtma */
  int max_buckets;             /* TRTMA MaxBuckets; 0: 3 x workers */
  int max_bucket_size;         /* RTMA MaxBucketSize; 0: the strategy's choice */
  int active_paths;            /* RMSR K; 0: not set (wsisa run: its workers) */
  wsisa_study_cost cost;       /* default auto */
  /* reuse.level_costs: the bucket cost per task of each of the 7 task levels
   * (seconds, or any unit), as --level-costs; `wsisa run` writes the costs
   * it planned with here in the resolved study.json, so a resume plans the
   * same buckets. 0 when not given. */
  size_t nlevel_costs;
  double level_costs[WSISA_STUDY_LEVELS];
  int object_reuse;            /* levels 6-7 nucleus cluster by cluster, those seen
                                  before on the tile taken from a store
                                  (docs/architecture.md); default 1 */
} wsisa_study_reuse_opts;

typedef struct wsisa_study_execution {
  uint64_t memory_limit;  /* bytes; 0: none. "4G" = 4 x 2^30 */
  char *scheduler;        /* NULL: STARPU_SCHED or StarPU's default; the runner
                             validates the name */
  /* with CPU and OpenCL workers, a wsisa_placement: unit (the default) or
   * task (engine/exec/exec.h) */
  int placement;
} wsisa_study_execution;

typedef struct wsisa_study {
  char *path;              /* as given to wsisa_study_load, for messages */
  char *name;              /* optional "name" */
  char *description;       /* optional "description" */
  int segmentation;        /* 1 when the study has inputs: parameters are the
                              segmentation's 15 and unnamed ones keep defaults */
  wsisa_study_inputs inputs;
  wsisa_sa_space *space;   /* every parameter, fixed ones included */
  wsisa_sa_opts sa;        /* method, its knobs, sampler and seed */
  char **metrics;          /* segmentation: metric names (default dice); pure SA:
                              the output columns to analyse (none: all) */
  size_t nmetrics;
  wsisa_study_reuse_opts reuse;
  wsisa_study_execution execution;
} wsisa_study;

/* Read and validate a study file. Every message names the file and the JSON
 * path: "study.json: parameters.G1.range: lower bound 80 is above upper bound 5".
 * Unknown keys are refused with their path. */
int wsisa_study_load(const char *path, wsisa_study **out, wsisa_err *e);
/* The same from JSON text; `name` stands for the file in messages. */
int wsisa_study_parse(const char *text, const char *name, wsisa_study **out, wsisa_err *e);
void wsisa_study_free(wsisa_study *study);

/* The resolved study (defaults filled in, every parameter listed) as indented
 * JSON text that wsisa_study_parse reads back to the same study; free() it. */
int wsisa_study_to_json(const wsisa_study *study, char **out, wsisa_err *e);

/* The design a study asks for, over *space (a copy the caller frees). A
 * two-phase study gives its first phase, MOAT over every varying parameter;
 * with `select` (comma-separated names kept after screening) it gives the
 * second: VBD over those, every other parameter fixed at its default. Only
 * two-phase studies take a selection. *opts receives the settings used. */
int wsisa_study_design(const wsisa_study *study, const char *select, wsisa_sa_space **space,
                       wsisa_sa_opts *opts, wsisa_sa_design **design, wsisa_err *e);

/* Caps on a design's runs that --force lifts (the memory check stays): a
 * segmentation study runs every run on every tile; a design for another
 * model is only written out. */
#define WSISA_STUDY_MAX_RUNS ((size_t)1000000)
#define WSISA_STUDY_MAX_SAMPLE_ROWS ((size_t)10000000)

/* The runs of the design wsisa_study_design would make (same `select`),
 * computed from the method's knobs without making it, and the bytes making
 * it takes at its peak. */
int wsisa_study_design_size(const wsisa_study *study, const char *select, size_t *rows,
                            double *bytes);
/* Refuse, before anything is made, a design of more than `max_rows` runs (0:
 * no cap, as --force asks) or one whose making plus `bytes_per_row` per run
 * (what the command keeps per run) exceeds `memory` bytes (0: the memory
 * available now; `memory_source` names it, e.g. "--memory-limit"). Messages
 * name the study field that sets the size (method.samples, ...). */
int wsisa_study_check_size(const wsisa_study *study, const char *select, size_t max_rows,
                           double bytes_per_row, uint64_t memory, const char *memory_source,
                           size_t *rows, wsisa_err *e);

/* "4G", "512M", "1.5G", "64K", "1T", "1048576" (bytes; optional B or iB after
 * the unit) into bytes. */
int wsisa_study_parse_bytes(const char *text, uint64_t *out);

/* ==== analysis of a study's outputs (engine/study/analysis.c) ================ */

typedef struct wsisa_analysis_request {
  const char *study_path;   /* the study the samples came from (or a problem below) */
  const char *samples_path; /* its design: parameter columns, run_id first or none */
  const char *outputs_path; /* output columns, run_id first or none (rows in order) */
  const char *dir;          /* where indices.csv, indices.json and plots go; NULL: . */
  const char *select;       /* two_phase: the parameters kept for phase 2 */
  int drop_missing;         /* VBD: drop base samples with a missing output */
  const char *problem_path; /* instead of a study: a problem file in SALib's shape */
  const char *method;       /* with a problem: morris, sobol or correlation */
  const size_t *columns;    /* output columns to analyse by position, 0-based after
                               any id column (SALib's -c); NULL: the study's
                               metrics, else every column */
  size_t ncolumns;
} wsisa_analysis_request;

/* Check samples and outputs against the study's design, compute the indices
 * of every output, write them (all or nothing), and print the report. */
int wsisa_analysis_run(const wsisa_analysis_request *r, wsisa_err *e);

/* ==== its tiles (engine/study/tiles.c) ====================================== */

/* One input (slide or image) of a study's tiles: how it is read and what the
 * checks saw (a run writes it in run.json). */
typedef struct wsisa__study_input {
  const char *path;         /* the study's string */
  wsisa_input_kind kind;
  wsisa_scale scale;        /* MPP and its source, level, factor */
  size_t first_tile, ntiles; /* its tiles in wsisa__tile_set.tiles */
  size_t *grid_index;       /* a slide's: each tile's index in its grid (inputs.tiles) */
  int has_stats;            /* normalized with the slide's colour statistics: */
  double stats[WSISA_STATS_N]; /* masked_stats' layout (wsisa_slide_stats) */
  int stain_checked;
  wsisa__stain stain;
  char *stain_warning;      /* the check's warning (malloc'd), NULL: none */
  /* inputs.reference in a study that names one: the annotation (NULL: this
   * input has none, and none of its tiles run) and what it holds */
  wsisa_annot_spec *annot;
  size_t tiles_left_out;    /* tiles (tissue ones, with tissue_only) it does not cover */
  size_t annot_objects;     /* nuclei in the file */
  uint64_t annot_bytes;     /* the file as the run began with it */
  uint32_t annot_crc32;
} wsisa__study_input;

/* A study's tiles, as wsisa__study_tiles makes them: every tile, its name,
 * and the inputs they come from. */
typedef struct wsisa__tile_set {
  wsisa_tile_ref *tiles;
  char **tile_names;
  size_t ntiles;
  wsisa__study_input *inputs; /* per slide or image, in the study's order */
  size_t ninputs;
  int annotated;              /* inputs.reference: runs are compared with annotations */
  size_t tiles_left_out;      /* tiles no annotation covers, over every input */
} wsisa__tile_set;

/* The halo a study's slide tiles are read with: inputs.halo, or with "auto"
 * wsisa_workflow_halo over its runs (nruns rows of params) and the defaults. */
int wsisa__study_halo_for(const wsisa_study *study, const double *params, size_t nruns);

/* The study's tiles: its slides' tile grids (tissue tiles only unless asked)
 * and its images, into *set (zeroed first). */
int wsisa__study_tiles(wsisa_study *study, wsisa__tile_set *set, wsisa_err *e);
/* Free what wsisa__study_tiles made (tiles, their names, the inputs). */
void wsisa__study_tiles_free(wsisa__tile_set *set);

/* The tiles a study runs, for `wsisa tiles --study`: its slides' grids with
 * inputs.tiles and inputs.reference applied, its images (index -1), each
 * tile's input (the study's string), grid index, column, row and level-0
 * rectangle; *out (free() it) holds *n. */
typedef struct wsisa_study_tile {
  const char *input;
  long index;
  int col, row;
  wsisa_rect level0;
} wsisa_study_tile;
int wsisa_study_tiles_list(wsisa_study *study, wsisa_study_tile **out, size_t *n, wsisa_err *e);

/* ---- its design (engine/study/design.c) -------------------------------------- */

/* The rows of the 15 parameters (canonical order) of a segmentation
 * study's design (`select`: two_phase's phase 2), or of the design CSV
 * `samples` read as `wsisa run` reads it (without its cap on runs), for
 * `wsisa plan` and calibration; `source` receives where they came from, in
 * words. */
int wsisa__study_design_rows(const wsisa_study *study, const char *samples, const char *select,
                             double **rows, size_t *nruns, char *source, size_t cap,
                             wsisa_err *e);
/* `wsisa run`'s design: its rows of the 15 parameters (canonical order) and
 * where they came from. */
typedef struct wsisa__run_design {
  wsisa_sa_space *space;    /* the study's sampler's: its space, options and design */
  wsisa_sa_opts sa;
  wsisa_sa_design *design;
  size_t nruns;
  double *params;           /* nruns x 15 */
  uint64_t *run_ids;        /* a design read from CSV keeps its run ids; NULL: 0..n-1 */
  int from_csv;
} wsisa__run_design;
/* `wsisa run`'s design into *out (zeroed first):
 * the study's sampler's, or the design file `samples` (wsisa__design_read:
 * segmentation parameters by their canonical names, the others at the
 * study's values or their defaults; without a header, the study's varying
 * parameters in its order), of at most max_runs runs (0: no cap). */
int wsisa__study_design_make(wsisa_study *study, const char *samples, size_t max_runs,
                             wsisa__run_design *out, wsisa_err *e);

/* ---- checked lines: journal.csv, feature_values.csv (engine/study/lines.c) -- */

/* CRC-32 (IEEE) of `len` bytes. */
uint32_t wsisa__crc32(const char *text, size_t len);
/* Append `text` (no newline) with its proof of being whole: ",<fields>,<crc32>"
 * (the line's field count, and the CRC-32 in 8 hex digits of everything
 * before the last comma). -1 on a write error (the stream's error flag). */
int wsisa__line_put(FILE *f, const char *text, size_t len);
/* Open a file of checked lines to append to (`fresh`: made anew with its
 * `header` line), flushed and synced before anything is appended. */
int wsisa__lines_open(const char *path, int fresh, const char *header, FILE **out, wsisa_err *e);
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

/* ---- its metrics' needs ------------------------------------------------------- */

/* What the study's metrics ask of each run and tile: the object matching
 * (any object metric), the feature stage (a feature metric). */
void wsisa__study_needs(const wsisa_study *study, int *object_match, int *features);

#endif
