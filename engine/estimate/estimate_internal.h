/* engine/estimate's own declarations, included from engine/estimate/ alone
 * (and its test suite); its files call only down the order of
 * docs/architecture.md's table of them (cmake/check_calls.cmake). */
#ifndef WSISA_ENGINE_ESTIMATE_INTERNAL_H
#define WSISA_ENGINE_ESTIMATE_INTERNAL_H

#include <time.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate.h"
#include "engine/workflow/workflow.h"

/* The time at size `at` from n points (x[i] > 0, t[i] the time at x[i]):
 * the cost per unit size t/x, linear in log(x) between the two points that
 * bracket it, the nearest's outside them (seed 004 §3.4); NaN when n is 0. */
double wsisa__est_interpolate(const double *x, const double *t, size_t n, double at);

/* ---- the simulation: a study's units on N ranks x W workers (simulate.c) -- */

/* Seconds of one worker per piece of work, per tile shape s (arrays of
 * nshapes values), and per task of level l (1..7) in variant v:
 * level[(s * WSISA_SEG_LEVELS + l - 1) * nvariants + v]. Variants are the
 * kinds of a level's task that cost differently (connectivities ...);
 * variant[r * WSISA_SEG_LEVELS + l - 1] is run r's, or NULL for variant 0. */
typedef struct wsisa__sim_costs {
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
  const struct wsisa__sim_costs *opencl;
  /* run r's task of level l costs run_scale[r * WSISA_SEG_LEVELS + l - 1]
   * times its variant's `level` (its parameter values), or NULL: 1 */
  const double *run_scale;
  /* the tile's reference (the defaults' segmentation and its measure) over
   * the worker set, and its critical path, or NULL: none */
  const double *reference, *reference_path;
  /* reading a tile on the submitting thread before its stage, or NULL */
  const double *read;
} wsisa__sim_costs;

typedef struct wsisa__sim_job {
  size_t ntiles;
  const size_t *tile_shape;   /* shape index of each tile */
  const wsisa_reuse_buckets *buckets;
  const double *params;       /* WSISA_SEG_NPARAMS per run: (B, G, R) of the background rule */
  int share_tile_stage;       /* 0: `none`, every unit runs its own tile stage */
  size_t active_paths;        /* RMSR's K per rank; 0: unbounded */
  const uint8_t *done;        /* ntiles x n_buckets units already done, or NULL */
  int ranks, workers;         /* N ranks of W workers */
  /* object reuse: levels 6 and 7 priced by what their tile's store on their
   * rank holds when they are submitted; NULL: at the level's cost */
  const struct wsisa__objects_pricer *objects;
  int opencl_workers;         /* of the W, how many are OpenCL workers (costs->opencl) */
  int placement;              /* with CPU and OpenCL workers: a wsisa_placement */
} wsisa__sim_job;

/* The executor's schedule as a discrete-event simulation (simulate.c says
 * which of its waits it follows). */
int wsisa__sim_run(const wsisa__sim_costs *c, const wsisa__sim_job *j, wsisa_sim_result *r,
                   wsisa_err *e);

/* ---- the probes' ground (probe.c) ------------------------------------------- */

/* A probe's tile: read, registered, its tile stage submitted; closing waits
 * for every task. */
typedef struct wsisa__probe_tile {
  wsisa_image *rgb;
  starpu_data_handle_t handle;
  wsisa_tile_data tile;
  int width, height;
} wsisa__probe_tile;
int wsisa__probe_tile_open(const wsisa_tile_ref *ref, wsisa__probe_tile *t, wsisa_err *e);
void wsisa__probe_tile_close(wsisa__probe_tile *t);
/* A probe's file FILE beside the performance models,
 * $STARPU_HOME/.starpu/sampling/FILE; read: NULL when absent or not JSON;
 * write: root taken (NULL: out of memory). */
json_t *wsisa__probe_read(const char *file);
int wsisa__probe_write(json_t *root, const char *file, wsisa_err *e);
/* The one CPU worker's thread CPU clock (StarPU up with one CPU worker), for
 * wsisa_clock_seconds. */
clockid_t wsisa__worker_clock(void);
/* The seconds the CPU workers spent in tasks since the last call (StarPU's
 * worker profiling, which must be on; it then resets them). */
double wsisa__workers_executing(void);
/* n values as a JSON array: a segmentation's parameters, its levels' times. */
json_t *wsisa__doubles_json(const double *v, size_t n);
#define WSISA__PARAMS_JSON(v) wsisa__doubles_json(v, WSISA_SEG_NPARAMS)
#define WSISA__TIMES_JSON(t) wsisa__doubles_json(t, WSISA_SEG_LEVELS)

/* ---- the models the probes measure ------------------------------------------ */

/* A task's slowdown with k CPU workers busy at once (busy.c), k = 1, 2, 4, ... */
#define WSISA__BUSY_POINTS 16
typedef struct wsisa__busy_model {
  int loaded, n;
  int calibrated_with; /* the CPU workers calibration's rounds ran on */
  int workers[WSISA__BUSY_POINTS];
  double factor[WSISA__BUSY_POINTS];
  double busy[WSISA__BUSY_POINTS]; /* the workers the set kept busy on average */
  double calibration_busy;         /* ... and calibration's rounds (0: not measured) */
} wsisa__busy_model;

/* Reading a tile on the submitting thread (reads.c). */
#define WSISA__READS_TILES 8
typedef struct wsisa__reads_model {
  int loaded, n;
  double pixels[WSISA__READS_TILES], seconds[WSISA__READS_TILES];
} wsisa__reads_model;

/* Writing a page for the first time (fresh.c). */
typedef struct wsisa__fresh_model {
  int loaded;
  double seconds_per_byte;
} wsisa__fresh_model;

/* Each level's time (one CPU worker's CPU seconds, calibration's largest
 * tile) against the parameters (levels.c): vector: the defaults, then one
 * per variant; value[p] sorted, the defaults' among them, ratio: over the
 * defaults' time; pair_ratio[i][j] at value[pair[0]][i], value[pair[1]][j]
 * (pair -1: none). */
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
  int pair[2];
  double pair_ratio[WSISA__LEVELS_POINTS][WSISA__LEVELS_POINTS][WSISA_SEG_LEVELS];
} wsisa__levels_model;

/* Levels 6 and 7 with a tile's object store (objects.c), [0] level 6, [1] 7,
 * over their fine-grain time: cold (empty store), hit (the same run), the
 * segmentations by fine-grain time, ascending; per parameter of levels 1-6
 * up to two curves (base: where the run changed), the share left to compute
 * by change (step, ascending; miss: at the largest, or with fill its level's mean). */
#define WSISA__OBJECTS_POINTS 8
#define WSISA__OBJECTS_SEGS 9
typedef struct wsisa__objects_model {
  int loaded, width, height;
  double fine[2], cold[2], hit[2];
  int nsegs[2];
  double seg_fine[2][WSISA__OBJECTS_SEGS], seg_cold[2][WSISA__OBJECTS_SEGS],
      seg_hit[2][WSISA__OBJECTS_SEGS];
  int ncurves[WSISA_SEG_NPARAMS];
  double base[2][WSISA_SEG_NPARAMS][WSISA_SEG_NPARAMS];
  int npoints[2][WSISA_SEG_NPARAMS];
  double step[2][WSISA_SEG_NPARAMS][WSISA__OBJECTS_POINTS];
  double at[2][2][WSISA_SEG_NPARAMS][WSISA__OBJECTS_POINTS]; /* [curve][level][p][point] */
  double miss[2][WSISA_SEG_NPARAMS];
  int fill[2][WSISA_SEG_NPARAMS];
} wsisa__objects_model;

typedef struct wsisa__models {
  wsisa__levels_model levels;
  wsisa__objects_model objects;
  wsisa__busy_model busy;
  wsisa__reads_model reads;
  wsisa__fresh_model fresh;
} wsisa__models;

/* ---- the probes: one row each (probes.c holds the table) ------------------- */

/* What calibration hands every probe. */
typedef struct wsisa__probe_input {
  const wsisa_tile_ref *tiles; /* calibration's tiles, the largest first */
  size_t ntiles;
  int halo;                    /* read as a run reads them */
  const double *rows;          /* the design, canonical rows */
  size_t nruns;
  const double *vectors;       /* calibration's segmentations */
  size_t nvec;
  int object_reuse;            /* the study's */
  const char *sched;
  int cores;                   /* the cores offered */
  int calibrated_with;         /* the CPU workers the models were filled with */
  double calibration_busy;     /* ... and how busy its rounds kept them (0: not measured) */
} wsisa__probe_input;

typedef struct wsisa__probe {
  const char *name;
  const char *file;         /* beside the performance models */
  int one_worker;           /* runs with StarPU up with one CPU worker (else down) */
  int (*wanted)(const wsisa__probe_input *in); /* NULL: always */
  /* measure: 0 with *root the file's content (NULL: out of memory) */
  int (*probe)(const wsisa__probe_input *in, json_t **root, wsisa_err *e);
  /* the file (NULL: absent) into its model: 0, or -1 (the model zeroed, not
   * loaded) when absent or not whole */
  int (*load)(json_t *root, wsisa__models *m);
  /* how the estimate takes it in, in a line: 0, or -1 when not measured */
  int (*describe)(const wsisa__models *m, char *how, size_t cap);
  size_t how;               /* offsetof(wsisa_estimate_figures, its line) */
  const char *unmeasured;   /* what the estimate does without it */
} wsisa__probe;

extern const wsisa__probe wsisa__probe_levels, wsisa__probe_objects, wsisa__probe_reads,
    wsisa__probe_fresh, wsisa__probe_busy;
/* Calibration: every probe wanted, in the table's order, into its file. */
int wsisa__probes_run(const wsisa__probe_input *in, wsisa_err *e);
/* The estimate: every probe's file into m (absent or not whole: not loaded). */
void wsisa__probes_load(wsisa__models *m);
/* One probe's file into m: 0, or -1 (probe.c). */
int wsisa__probe_load(const wsisa__probe *p, wsisa__models *m);
/* Each probe's line into the figures. */
void wsisa__probes_describe(const wsisa__models *m, wsisa_estimate_figures *f);

/* ---- what the models give --------------------------------------------------- */

/* The factor with `busy` CPU workers busy on average (1 without a model);
 * the CPU workers the probe's set kept busy with `workers`; what a model's
 * CPU time is multiplied by at `busy`: the factor there over the factor at
 * calibration's rounds' (busy.c). */
double wsisa__busy_factor(const wsisa__busy_model *m, double busy);
double wsisa__busy_at_width(const wsisa__busy_model *m, int workers);
double wsisa__busy_ratio(const wsisa__busy_model *m, double busy);
/* Seconds to read a tile of width x height (0 without a model). */
double wsisa__reads_seconds(const wsisa__reads_model *m, int width, int height);
/* Seconds a rank spends writing its working set (peak over baseline, bytes)
 * for the first time (0 without a model). */
double wsisa__fresh_seconds(const wsisa__fresh_model *m, uint64_t peak, uint64_t baseline);
/* Level `level`'s time at x by the curves (and the pair's grid). */
double wsisa__levels_product(const wsisa__levels_model *m, int level, const double *x);
/* Each run's level tasks as multiples of the models' time (nruns x
 * WSISA_SEG_LEVELS into scale): the curves' product at the run, times the
 * interplay the calibration segmentations measured, over the mean measured
 * time of those whose level-l footprints are the run's
 * (same_variant[(r * WSISA_SEG_LEVELS + l - 1) * nvectors + i]); time,
 * unless NULL: the numerators, seconds on calibration's tile (0: unknown). */
void wsisa__levels_scale(const wsisa__levels_model *m, const double *params, size_t nruns,
                         const uint8_t *same_variant, double *scale, double *time);

/* Pricing level-6/7 tasks by what their tile's store holds, as the
 * simulation walks them (objects.c): each store is followed through
 * WSISA__OBJECTS_STANDINS stand-in objects a level, whose cells along each
 * parameter the design varies follow the curves measured. */
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
   * move it at all) */
  int *ncut;
  size_t *first;
  double *cuts;
  /* the share missed by a task, by the hash of the runs its store saw in
   * order and its own: stores that saw the same runs get the same answer */
  wsisa__objects_table *memo;
} wsisa__objects_pricer;
/* One store, per level (6 [0], 7 [1]): the runs of the tasks it saw, in
 * order, a hash of that sequence, and the set of stand-ins' cells held by
 * its first `held` runs. Zeroed: empty. */
typedef struct wsisa__objects_seen {
  wsisa__objects_table set[2];
  size_t *runs[2];
  size_t nruns[2], capruns[2], held[2];
  uint64_t seq[2];
} wsisa__objects_seen;
/* The plan's runs (params) and their level times on calibration's tile
 * (run_time, NULL: the defaults'). 0, or -1: out of memory. */
int wsisa__objects_pricer_init(wsisa__objects_pricer *pr, const wsisa__objects_model *m,
                               const wsisa_reuse_buckets *b, const double *params,
                               const double *run_time);
void wsisa__objects_pricer_free(wsisa__objects_pricer *pr);
/* Run `run`'s task of level 6 or 7 after the tasks `seen` holds: its cost as
 * a multiple of its level's fine-grain cost, and it joins `seen`; adds the
 * seconds of reusable work it computes and could have reused to *computed
 * and *reusable; -1: out of memory. */
double wsisa__objects_price(const wsisa__objects_pricer *pr, wsisa__objects_seen *seen,
                            size_t run, int level, double *computed, double *reusable);
/* Empty it (a tile opened again starts an empty store); the tile's
 * reference segmentation (the defaults) into it first (0, or -1: out of
 * memory); free it. */
void wsisa__objects_seen_clear(wsisa__objects_seen *seen);
int wsisa__objects_seen_reference(wsisa__objects_seen *seen);
void wsisa__objects_seen_free(wsisa__objects_seen *seen);

/* ---- the costs (costs.c) ----------------------------------------------------- */

/* A codelet task of a dry run, as StarPU's models see it. */
#define WSISA__REC_MAXBUF 20
typedef struct wsisa__rec_task {
  int op;
  uint32_t where;        /* the kinds of worker it may run on */
  uint32_t footprint;
  double size;           /* bytes, as the model records them */
  int dependent;         /* its data sizes depend on the data: no exact footprint */
  int nbuf;
  const void *handle[WSISA__REC_MAXBUF];
  unsigned char mode[WSISA__REC_MAXBUF]; /* 1 read, 2 write */
} wsisa__rec_task;

typedef struct wsisa__recording {
  wsisa__rec_task *t;
  size_t n, cap;
  int failed;
  int dependent; /* tasks recorded now have data-dependent sizes */
} wsisa__recording;

/* The steps of the workflow the simulation schedules; level variants follow. */
enum { WSISA__ST_STAGE, WSISA__ST_REFERENCE, WSISA__ST_BACKGROUND, WSISA__ST_MEASURE,
       WSISA__ST_LEVELS };

/* Every step's codelet tasks on one tile shape. */
typedef struct wsisa__profile {
  int w, h;
  int invalid;                /* the workflow refuses this shape */
  wsisa__recording *step;     /* nsteps */
} wsisa__profile;

/* A level's kinds of task: runs whose task of that level submits the same
 * codelets with the same footprints; the design's distinct keys of the
 * level -> variant. */
typedef struct wsisa__level_variants {
  size_t n;
  size_t *rep;        /* a run of each variant */
  uint64_t *sig;      /* its footprint signature */
  uint64_t *key;
  int *var;
  size_t nkeys;
} wsisa__level_variants;

/* One kind of worker and what StarPU knows of each codelet on it. */
typedef struct wsisa__model_entry {
  uint32_t footprint;
  double size, mean_us;
  unsigned n;
} wsisa__model_entry;

typedef struct wsisa__arch_models {
  struct starpu_perfmodel_arch *arch;
  int workers;          /* started here */
  int is_cpu;
  wsisa__model_entry **entries; /* per op */
  size_t *nentries;
} wsisa__arch_models;

struct wsisa_estimate {
  size_t nshapes;
  int (*shape)[2];         /* width, height */
  size_t *tile_shape;      /* per tile */
  size_t ntiles;
  size_t *shape_tiles;     /* tiles per shape */
  const double *params;    /* the caller's */
  size_t nruns;
  int object_match, features;
  wsisa__level_variants lv[WSISA_SEG_LEVELS];
  size_t nvariants;        /* most variants of a level */
  size_t nsteps;
  size_t level_base[WSISA_SEG_LEVELS]; /* step of (level, 0) */
  int *run_variant;        /* nruns x 7 */
  wsisa__profile *prof;    /* nshapes: the study's shapes, costed */
  /* task i of step st on shape s, on kind of worker a: at
   * (first[s * nsteps + st] + i) * narch + a (wsisa__est_at), its seconds,
   * evidence (a wsisa_est_class) and samples of its own footprint */
  size_t *first;
  double *cost;
  unsigned char *cls;
  unsigned *samples;
  wsisa__arch_models *arch;
  size_t narch;
  unsigned calib_min;      /* StarPU's calibration minimum */
  /* shapes seen while matching model entries to tasks (footprints only) */
  wsisa__profile *cand;
  size_t ncand, cap_cand;
  wsisa__profile probe[2]; /* 64x64 and 64x65: each task's bytes per pixel */
  uint64_t baseline_rss;
  int any_calibrated;
  wsisa__models models;    /* what calibration's probes measured */
  double *run_scale;       /* from the level costs: nruns x 7, or NULL */
  double *run_time;        /* ... the runs' level times on calibration's tile (s) */
};

static inline size_t wsisa__est_at(const wsisa_estimate *est, size_t s, size_t st, size_t i,
                                   size_t a) {
  return (est->first[s * est->nsteps + st] + i) * est->narch + a;
}
/* The kind of worker that stands for "one CPU worker": the CPU's, else the
 * first. */
size_t wsisa__est_cpu_arch(const wsisa_estimate *est);

/* Calibration's view of an estimate: how many (codelet task, kind of
 * worker) pairs of its tile shapes lack a calibrated time of their own, out
 * of *total, and the fewest samples among them; StarPU's calibration
 * minimum; a run of each variant of a level. */
size_t wsisa__estimate_missing(const wsisa_estimate *est, size_t *total, unsigned *fewest);
unsigned wsisa__estimate_minimum(const wsisa_estimate *est);
size_t wsisa__estimate_variants(const wsisa_estimate *est, int level, const size_t **runs);

#endif
