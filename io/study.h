/* Study files (docs/study-file.md): the JSON contract parsed and validated into a
 * wsisa_study, and the resolved study written back as JSON. */
#ifndef WSISA_IO_STUDY_H
#define WSISA_IO_STUDY_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "io/io.h"
#include "sa/sa.h"

/* Reuse strategies (seed 000 §4): none runs every parameter set alone, stage
 * merges identical stage instances, the others merge tasks into buckets. */
typedef enum {
  WSISA_STUDY_REUSE_NONE = 0,
  WSISA_STUDY_REUSE_STAGE,
  WSISA_STUDY_REUSE_NAIVE,
  WSISA_STUDY_REUSE_SCA,
  WSISA_STUDY_REUSE_RTMA,
  WSISA_STUDY_REUSE_TRTMA
} wsisa_study_reuse;

/* Bucket cost: the papers' count of distinct tasks; measured task times (the
 * performance models' or --level-costs, required); or auto, the default:
 * measured when the models have calibrated times for every level, else
 * task counts. */
typedef enum {
  WSISA_STUDY_COST_TASKS = 0,
  WSISA_STUDY_COST_MEASURED,
  WSISA_STUDY_COST_AUTO
} wsisa_study_cost;

const char *wsisa_study_reuse_name(wsisa_study_reuse strategy);
const char *wsisa_study_cost_name(wsisa_study_cost cost);

/* Slide-level metrics a segmentation study may name (docs/workflow.md). */
extern const char *const wsisa_study_metrics[];
/* Prefix of the metric "wasserstein:<feature>": the Wasserstein-1 distance of
 * a per-nucleus feature's distribution to the reference run's. */
#define WSISA_STUDY_WASSERSTEIN "wasserstein:"
extern const size_t wsisa_study_nmetrics;
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
  wsisa_study_reference *references; /* none: the default-parameter run is the
                                        reference */
  size_t nreferences;
} wsisa_study_inputs;

/* Task levels of the segmentation workflow (docs/workflow.md). */
#define WSISA_STUDY_LEVELS 7

typedef struct wsisa_study_reuse_opts {
  wsisa_study_reuse strategy;  /* default rtma */
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

#endif
