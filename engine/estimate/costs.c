/* The estimate's costs (seed 004; docs/architecture.md, "The estimate"): what
 * each piece of a study's workflow costs on each of its tile shapes, on each
 * kind of worker StarPU started, read from this host's history performance
 * models. The workflow is dry-run (wsisa_codelets_record): every codelet task
 * it would submit is built, its footprint and data size taken as StarPU's
 * models see them, and looked up in the models. A footprint never measured
 * is interpolated: the same task measured on other tile shapes (found by
 * recomputing its footprint on every shape whose pixel count matches a
 * model entry's size) gives a per-pixel cost across sizes; failing that,
 * the codelet's other footprints give a per-byte cost (seed 004 §3.2: "the
 * closest simulations in terms of the total number of grid points"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate.h"

/* ---- dry runs ---------------------------------------------------------------- */

#define REC_MAXBUF 20

typedef struct rec_task {
  int op;
  uint32_t where;        /* the kinds of worker it may run on */
  uint32_t footprint;
  double size;           /* bytes, as the model records them */
  int dependent;         /* its data sizes depend on the data: no exact footprint */
  int nbuf;
  const void *handle[REC_MAXBUF];
  unsigned char mode[REC_MAXBUF]; /* 1 read, 2 write */
} rec_task;

typedef struct recording {
  rec_task *t;
  size_t n, cap;
  int failed;
  int dependent; /* tasks recorded now have data-dependent sizes */
} recording;

static void record_task(void *ctx, struct starpu_task *task) {
  recording *rec = ctx;
  const wsisa_op *op = wsisa_op_of(task->cl);
  if (!op) return;
  if (rec->n == rec->cap) {
    size_t cap = rec->cap ? 2 * rec->cap : 16;
    rec_task *t = realloc(rec->t, cap * sizeof *t);
    if (!t) {
      rec->failed = 1;
      return;
    }
    rec->t = t;
    rec->cap = cap;
  }
  rec_task *r = &rec->t[rec->n++];
  memset(r, 0, sizeof *r);
  r->op = (int)(op - wsisa_ops);
  r->dependent = rec->dependent;
  r->where = task->where > 0 ? (uint32_t)task->where & task->cl->where : task->cl->where;
  struct starpu_perfmodel *model = task->cl->model;
  /* StarPU's own rule for history models: the codelet's footprint function,
   * else the data footprint; the size is the sum of the data sizes */
  r->footprint = model && model->footprint ? model->footprint(task) : starpu_task_data_footprint(task);
  unsigned n = STARPU_TASK_GET_NBUFFERS(task);
  for (unsigned i = 0; i < n; i++) {
    starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
    enum starpu_data_access_mode m = STARPU_TASK_GET_MODE(task, i);
    r->size += (double)starpu_data_get_size(h);
    if (r->nbuf < REC_MAXBUF) {
      r->handle[r->nbuf] = h;
      r->mode[r->nbuf++] = (unsigned char)(((m & STARPU_R) ? 1 : 0) | ((m & STARPU_W) ? 2 : 0));
    }
  }
}

static void recording_clear(recording *r) {
  free(r->t);
  memset(r, 0, sizeof *r);
}

/* The steps of the workflow the simulation schedules; level variants follow. */
enum { ST_STAGE, ST_REFERENCE, ST_BACKGROUND, ST_MEASURE, ST_LEVELS };

/* Every step's codelet tasks on one tile shape. */
typedef struct profile {
  int w, h;
  int invalid;     /* the workflow refuses this shape (a side too long ...) */
  recording *step; /* nsteps */
} profile;

/* A level's kinds of task: runs whose task of that level submits the same
 * codelets with the same footprints. */
typedef struct level_variants {
  size_t n;
  size_t *rep;        /* a run of each variant */
  uint64_t *sig;      /* its footprint signature */
  /* the design's distinct keys of this level -> variant */
  uint64_t *key;
  int *var;
  size_t nkeys;
} level_variants;

/* One kind of worker and what StarPU knows of each codelet on it. */
typedef struct model_entry {
  uint32_t footprint;
  double size, mean_us;
  unsigned n;
} model_entry;

typedef struct arch_models {
  struct starpu_perfmodel_arch *arch;
  int workers;          /* started here */
  int is_cpu;
  model_entry **entries; /* per op */
  size_t *nentries;
} arch_models;

struct wsisa_estimate {
  size_t nshapes;
  int (*shape)[2];         /* width, height */
  size_t *tile_shape;      /* per tile */
  size_t ntiles;
  size_t *shape_tiles;     /* tiles per shape */
  const double *params;    /* the caller's */
  size_t nruns;
  int object_match, features;
  level_variants lv[WSISA_SEG_LEVELS];
  size_t nvariants;        /* most variants of a level */
  size_t nsteps;
  size_t level_base[WSISA_SEG_LEVELS]; /* step of (level, 0) */
  int *run_variant;        /* nruns x 7 */
  profile *prof;           /* nshapes: the study's shapes, costed */
  /* costs per task of each profile: [shape][step] arrays of ntasks x narch */
  double ***cost;
  unsigned char ***cls;
  unsigned ***samples;     /* of the task's own footprint */
  arch_models *arch;
  size_t narch;
  unsigned calib_min;      /* StarPU's calibration minimum */
  /* shapes seen while matching model entries to tasks (footprints only) */
  profile *cand;
  size_t ncand, cap_cand;
  profile probe[2];        /* 64x64 and 64x65: each task's bytes per pixel */
  uint64_t baseline_rss;
  int any_calibrated;
  wsisa__objects_model objects; /* what calibration measured of object reuse */
  wsisa__levels_model levels;   /* ... and of the levels' times by parameter values */
  wsisa__busy_model busy;       /* ... and of a task's slowdown with the workers busy */
  wsisa__reads_model reads;     /* ... and of reading a tile */
  wsisa__fresh_model fresh;     /* ... and of a page's first write */
  double *run_scale;            /* from it: nruns x 7, or NULL */
  double *run_time;             /* ... the runs' level times on calibration's tile (s) */
  char level_source[4900];      /* how (empty: not measured) */
};

/* The measure of a mask against the reference, as the executor submits it:
 * comparison, objects, [object matching], [the feature reduction]. */
static int dry_measure(const wsisa_estimate *est, recording *rec, const wsisa_tile_data *tile,
                       starpu_data_handle_t mask, starpu_data_handle_t ref,
                       starpu_data_handle_t ref_labels, int reference,
                       starpu_data_handle_t *labels_out, wsisa_err *e) {
  uint64_t counts[3] = {0}, nuclei = 0, match[WSISA_MATCH_FIELDS] = {0};
  double rows[WSISA_NF_ROW(WSISA_FEATURE_CHANNELS_MAX)];
  starpu_data_handle_t hc = NULL, hn = NULL, hm = NULL, hr = NULL, labels = NULL;
  starpu_vector_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)counts, 3, sizeof counts[0]);
  starpu_vector_data_register(&hn, STARPU_MAIN_RAM, (uintptr_t)&nuclei, 1, sizeof nuclei);
  int want_match = !reference && est->object_match && ref_labels;
  if (want_match)
    starpu_vector_data_register(&hm, STARPU_MAIN_RAM, (uintptr_t)match, WSISA_MATCH_FIELDS, sizeof match[0]);
  int keep_labels = est->features || (reference && est->object_match);
  wsisa_measure m = {hc, hn, hm, ref_labels, keep_labels ? &labels : NULL};
  int rc = wsisa_workflow_measure_submit(tile, mask, ref, &m, e);
  if (!rc && est->features && labels) {
    /* one nucleus: the reduction's size is mostly its channels' */
    starpu_vector_data_register(&hr, STARPU_MAIN_RAM, (uintptr_t)rows,
                                (uint32_t)WSISA_NF_ROW(tile->nchannels), sizeof rows[0]);
    /* its output holds a row per nucleus: a size, and footprint, known only
     * once the run has counted them */
    rec->dependent = 1;
    rc = wsisa_workflow_reduce_submit(tile, labels, hr, e);
    rec->dependent = 0;
  }
  starpu_data_handle_t h[] = {hc, hn, hm, hr};
  for (size_t i = 0; i < sizeof h / sizeof *h; i++)
    if (h[i]) starpu_data_unregister(h[i]);
  if (labels && labels_out && reference && est->object_match) *labels_out = labels;
  else if (labels) starpu_data_unregister_submit(labels);
  return rc;
}

static void release_handle(starpu_data_handle_t *h) {
  if (*h) starpu_data_unregister_submit(*h);
  *h = NULL;
}

/* The intermediates a dry run's levels read: registered as w x h masks,
 * and each handed to `fn` to release. */
#define LEVEL_INPUTS(path) {&(path)->rbc, &(path)->diff, &(path)->cand, &(path)->sized, \
                            &(path)->hyst, &(path)->sep}
static int register_level_inputs(int w, int h, wsisa_task_data *path, wsisa_err *e) {
  starpu_data_handle_t *inputs[] = LEVEL_INPUTS(path);
  int rc = 0;
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs && !rc; i++)
    rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, inputs[i], e);
  return rc;
}
static void level_inputs(wsisa_task_data *path, void (*fn)(starpu_data_handle_t *)) {
  starpu_data_handle_t *inputs[] = LEVEL_INPUTS(path);
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) fn(inputs[i]);
}

/* Dry-run every step on a w x h tile into pr->step (est->nsteps recordings). */
static int dry_shape(const wsisa_estimate *est, int w, int h, profile *pr, wsisa_err *e) {
  pr->w = w;
  pr->h = h;
  pr->step = calloc(est->nsteps, sizeof *pr->step);
  if (!pr->step) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  starpu_data_handle_t rgb = NULL, ref = NULL, ref_labels = NULL, mask = NULL;
  wsisa_tile_data tile;
  wsisa_task_data path;
  memset(&tile, 0, sizeof tile);
  memset(&path, 0, sizeof path);
  int rc = wsisa_image_register_tmp(w, h, 3, WSISA_U8, &rgb, e);
  if (!rc) rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, &ref, e);
  if (!rc) rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, &mask, e);
  if (!rc) rc = register_level_inputs(w, h, &path, e);
  if (rc) goto out;
  wsisa_codelets_record(record_task, &pr->step[ST_STAGE]);
  /* the stage makes level 2's reconstructions the runs and the reference
   * ask for, as engine/exec/executor.c has it */
  const wsisa_tile_frame frame = {.recon_conns =
                                      wsisa_workflow_recon_conns(est->params, est->nruns)};
  rc = wsisa_workflow_tile_submit_framed(rgb, w, h, WSISA_TARGET_MPP, 1, &frame, &tile, e);
  if (!rc && est->features) rc = wsisa_workflow_channels_submit(&tile, 1, e);
  wsisa_codelets_record(record_task, &pr->step[ST_REFERENCE]);
  if (!rc) rc = wsisa_workflow_segment_submit(&tile, wsisa_seg_defaults(), ref, e);
  if (!rc) rc = dry_measure(est, &pr->step[ST_REFERENCE], &tile, ref, ref, NULL, 1, &ref_labels, e);
  wsisa_codelets_record(record_task, &pr->step[ST_BACKGROUND]);
  int skip = 0;
  if (!rc) rc = wsisa_workflow_background_skip(&tile, wsisa_seg_defaults(), &skip, e);
  for (int l = 1; l <= WSISA_SEG_LEVELS && !rc; l++)
    for (size_t v = 0; v < est->lv[l - 1].n && !rc; v++) {
      wsisa_codelets_record(record_task, &pr->step[est->level_base[l - 1] + v]);
      wsisa_task_data p = path;
      rc = wsisa_workflow_task_submit(l, est->params + est->lv[l - 1].rep[v] * WSISA_SEG_NPARAMS,
                                      &tile, &p, NULL, e);
      wsisa_workflow_task_release(l, &p); /* only the level's own output is new */
    }
  wsisa_codelets_record(record_task, &pr->step[ST_MEASURE]);
  if (!rc) rc = dry_measure(est, &pr->step[ST_MEASURE], &tile, mask, ref, ref_labels, 0, NULL, e);
out:
  wsisa_codelets_record(NULL, NULL);
  for (size_t i = 0; i < est->nsteps; i++)
    if (pr->step[i].failed && !rc) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (tile.rc) wsisa_workflow_tile_release(&tile, 1);
  level_inputs(&path, release_handle);
  release_handle(&ref_labels);
  release_handle(&ref);
  release_handle(&mask);
  release_handle(&rgb);
  return rc;
}

static void profile_clear(profile *pr, size_t nsteps) {
  if (pr->step)
    for (size_t i = 0; i < nsteps; i++) recording_clear(&pr->step[i]);
  free(pr->step);
  pr->step = NULL;
}

/* ---- level variants ----------------------------------------------------------- */

static uint64_t signature(const recording *r) {
  uint64_t h = 0x51;
  for (size_t i = 0; i < r->n; i++)
    h = wsisa_mix64(h ^ ((uint64_t)(unsigned)r->t[i].op << 32 | r->t[i].footprint));
  return h;
}

/* A w x h tile to dry-run levels on one at a time, each into `scratch`. */
typedef struct dry_levels {
  starpu_data_handle_t rgb;
  wsisa_tile_data tile;
  wsisa_task_data path;
  recording scratch;
} dry_levels;

static int dry_levels_open(dry_levels *d, int w, int h, wsisa_err *e) {
  memset(d, 0, sizeof *d);
  int rc = wsisa_image_register_tmp(w, h, 3, WSISA_U8, &d->rgb, e);
  if (!rc) rc = register_level_inputs(w, h, &d->path, e);
  wsisa_codelets_record(record_task, &d->scratch);
  if (!rc) rc = wsisa_workflow_tile_submit(d->rgb, w, h, 1, &d->tile, e);
  return rc;
}

/* The signature of level l's task with parameters p: its codelets and
 * their footprints. */
static int dry_levels_signature(dry_levels *d, int l, const double *p, uint64_t *sig,
                                wsisa_err *e) {
  d->scratch.n = 0;
  wsisa_task_data path = d->path;
  int rc = wsisa_workflow_task_submit(l, p, &d->tile, &path, NULL, e);
  wsisa_workflow_task_release(l, &path);
  if (!rc) *sig = signature(&d->scratch);
  return rc;
}

static int dry_levels_close(dry_levels *d, int rc, wsisa_err *e) {
  wsisa_codelets_record(NULL, NULL);
  if (!rc && d->scratch.failed) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  recording_clear(&d->scratch);
  if (d->tile.rc) wsisa_workflow_tile_release(&d->tile, 1);
  level_inputs(&d->path, release_handle);
  release_handle(&d->rgb);
  return rc;
}

/* Which runs' level-l tasks cost alike: dry-run the level once per distinct
 * key of the design on a w x h tile and group keys by the footprints their
 * codelets get. */
static int find_variants(wsisa_estimate *est, int w, int h, wsisa_err *e) {
  int level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = wsisa_seg_param_level(p);
  uint64_t *keys = malloc(est->nruns * WSISA_SEG_LEVELS * sizeof *keys);
  est->run_variant = malloc(est->nruns * WSISA_SEG_LEVELS * sizeof *est->run_variant);
  if (!keys || !est->run_variant) {
    free(keys);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  int rc = wsisa_workflow_keys(est->params, est->nruns, WSISA_SEG_NPARAMS, level, keys);
  if (rc) {
    free(keys);
    return wsisa_error(e, rc, "cannot key the design's tasks");
  }
  dry_levels d;
  rc = dry_levels_open(&d, w, h, e);
  for (int l = 1; l <= WSISA_SEG_LEVELS && !rc; l++) {
    level_variants *lv = &est->lv[l - 1];
    lv->key = malloc(est->nruns * sizeof *lv->key);
    lv->var = malloc(est->nruns * sizeof *lv->var);
    lv->rep = malloc(est->nruns * sizeof *lv->rep);
    lv->sig = malloc(est->nruns * sizeof *lv->sig);
    if (!lv->key || !lv->var || !lv->rep || !lv->sig) {
      rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
      break;
    }
    for (size_t r = 0; r < est->nruns && !rc; r++) {
      uint64_t key = keys[r * WSISA_SEG_LEVELS + (size_t)l - 1];
      size_t k = 0;
      while (k < lv->nkeys && lv->key[k] != key) k++;
      if (k == lv->nkeys) {
        uint64_t sig;
        if ((rc = dry_levels_signature(&d, l, est->params + r * WSISA_SEG_NPARAMS, &sig, e)))
          break;
        size_t v = 0;
        while (v < lv->n && lv->sig[v] != sig) v++;
        if (v == lv->n) {
          lv->sig[lv->n] = sig;
          lv->rep[lv->n++] = r;
        }
        lv->key[lv->nkeys] = key;
        lv->var[lv->nkeys++] = (int)v;
      }
      est->run_variant[r * WSISA_SEG_LEVELS + (size_t)l - 1] = lv->var[k];
    }
  }
  rc = dry_levels_close(&d, rc, e);
  free(keys);
  if (rc) return rc;
  size_t base = ST_LEVELS;
  est->nvariants = 1;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    est->level_base[l] = base;
    base += est->lv[l].n;
    if (est->lv[l].n > est->nvariants) est->nvariants = est->lv[l].n;
  }
  est->nsteps = base;
  return 0;
}

/* Each run's level tasks by its parameter values (engine/estimate/levels.c):
 * the calibration segmentations whose level footprints are a run's are
 * found by dry-running them beside the design's variants. */
static int level_scales(wsisa_estimate *est, wsisa_err *e) {
  const wsisa__levels_model *m = &est->levels;
  size_t nv = m->nvectors, n = est->nruns * WSISA_SEG_LEVELS;
  uint8_t *same = calloc(n * (nv ? nv : 1), 1);
  est->run_scale = malloc(n * sizeof *est->run_scale);
  est->run_time = malloc(n * sizeof *est->run_time);
  if (!same || !est->run_scale || !est->run_time) {
    free(same);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  dry_levels d;
  int rc = dry_levels_open(&d, est->shape[0][0], est->shape[0][1], e);
  for (int l = 1; l <= WSISA_SEG_LEVELS && !rc; l++)
    for (size_t i = 0; i < nv && !rc; i++) {
      uint64_t sig;
      if ((rc = dry_levels_signature(&d, l, m->vector[i], &sig, e))) break;
      for (size_t r = 0; r < est->nruns; r++) {
        size_t at = r * WSISA_SEG_LEVELS + (size_t)l - 1;
        same[at * nv + i] = est->lv[l - 1].sig[est->run_variant[at]] == sig;
      }
    }
  rc = dry_levels_close(&d, rc, e);
  if (!rc)
    rc = wsisa__levels_scale(m, est->params, est->nruns, same, est->run_scale, est->run_time,
                             est->level_source, sizeof est->level_source);
  free(same);
  return rc;
}

/* ---- the models ------------------------------------------------------------------ */

/* The same kind of worker: its devices, compared field by field (StarPU
 * numbers a combination only once a model has used it, so before any task
 * every combination is -1). */
static int same_arch(const struct starpu_perfmodel_arch *x, const struct starpu_perfmodel_arch *y) {
  if (x->ndevices != y->ndevices) return 0;
  for (int d = 0; d < x->ndevices; d++)
    if (x->devices[d].type != y->devices[d].type || x->devices[d].devid != y->devices[d].devid ||
        x->devices[d].ncores != y->devices[d].ncores)
      return 0;
  return 1;
}

static int load_models(wsisa_estimate *est, wsisa_err *e) {
  /* the kinds of worker StarPU started here */
  unsigned nw = starpu_worker_get_count();
  est->arch = calloc(nw ? nw : 1, sizeof *est->arch);
  if (!est->arch) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (unsigned w = 0; w < nw; w++) {
    struct starpu_perfmodel_arch *a = starpu_worker_get_perf_archtype((int)w, STARPU_NMAX_SCHED_CTXS);
    size_t i = 0;
    while (i < est->narch && !same_arch(est->arch[i].arch, a)) i++;
    if (i == est->narch) {
      est->arch[i].arch = a;
      est->arch[i].is_cpu = starpu_worker_get_type((int)w) == STARPU_CPU_WORKER;
      est->narch++;
    }
    est->arch[i].workers++;
  }
  for (size_t a = 0; a < est->narch; a++) {
    est->arch[a].entries = calloc(wsisa_n_ops, sizeof *est->arch[a].entries);
    est->arch[a].nentries = calloc(wsisa_n_ops, sizeof *est->arch[a].nentries);
    if (!est->arch[a].entries || !est->arch[a].nentries)
      return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (size_t op = 0; op < wsisa_n_ops; op++) {
    /* a copy of the model, read and let go at once: StarPU saves the
     * codelet's own at shutdown, never this one */
    struct starpu_perfmodel m;
    memset(&m, 0, sizeof m);
    if (starpu_perfmodel_load_symbol(wsisa_ops[op].model->symbol, &m) != 0) {
      starpu_perfmodel_unload_model(&m);
      continue;
    }
    for (size_t a = 0; a < est->narch; a++) {
      struct starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&m, est->arch[a].arch, 0);
      size_t n = 0;
      for (struct starpu_perfmodel_history_list *l = pa ? pa->list : NULL; l; l = l->next) n++;
      model_entry *v = n ? malloc(n * sizeof *v) : NULL;
      if (n && !v) {
        starpu_perfmodel_unload_model(&m);
        return wsisa_error(e, WSISA_ENOMEM, "out of memory");
      }
      size_t k = 0;
      for (struct starpu_perfmodel_history_list *l = pa ? pa->list : NULL; l; l = l->next) {
        const struct starpu_perfmodel_history_entry *h = l->entry;
        if (!h || !h->nsample || !(h->mean > 0)) continue;
        v[k++] = (model_entry){h->footprint, (double)h->size, h->mean, h->nsample};
      }
      est->arch[a].entries[op] = v;
      est->arch[a].nentries[op] = k;
    }
    starpu_perfmodel_unload_model(&m);
  }
  return 0;
}

/* ---- matching model entries to tasks ------------------------------------------- */

static profile *candidate(wsisa_estimate *est, int w, int h, wsisa_err *e) {
  for (size_t i = 0; i < est->ncand; i++)
    if (est->cand[i].w == w && est->cand[i].h == h) return &est->cand[i];
  if (est->ncand == est->cap_cand) {
    size_t cap = est->cap_cand ? 2 * est->cap_cand : 16;
    profile *c = realloc(est->cand, cap * sizeof *c);
    if (!c) {
      wsisa_error(e, WSISA_ENOMEM, "out of memory");
      return NULL;
    }
    est->cand = c;
    est->cap_cand = cap;
  }
  profile *p = &est->cand[est->ncand];
  memset(p, 0, sizeof *p);
  wsisa_err why = WSISA_ERR_INIT;
  int rc = dry_shape(est, w, h, p, &why);
  if (rc == WSISA_ENOMEM) {
    profile_clear(p, est->nsteps);
    wsisa_error(e, rc, "%s", why.msg);
    return NULL;
  }
  /* a shape the workflow refuses measures nothing */
  if (rc) {
    profile_clear(p, est->nsteps);
    p->w = w;
    p->h = h;
    p->invalid = 1;
  }
  est->ncand++;
  return p;
}

/* Does the model entry (footprint fp, npix pixels) measure task `i` of step
 * `st`? Its footprint is recomputed on every shape of npix pixels. */
#define MAX_SHAPES_PER_SIZE 64
static int same_task(wsisa_estimate *est, size_t st, size_t i, int op, uint32_t fp,
                     uint64_t npix, wsisa_err *e) {
  size_t tried = 0;
  for (uint64_t a = 1; a * a <= npix && tried < MAX_SHAPES_PER_SIZE; a++) {
    if (npix % a) continue;
    uint64_t b = npix / a;
    if (b > (1u << 24)) continue;
    for (int swap = 0; swap < 2 && tried < MAX_SHAPES_PER_SIZE; swap++) {
      int w = (int)(swap ? b : a), h = (int)(swap ? a : b);
      if (swap && a == b) break;
      if (w > 256 * h || h > 256 * w) continue; /* no tile is that thin */
      tried++;
      profile *p = candidate(est, w, h, e);
      if (!p) return -1;
      if (p->invalid) continue;
      const recording *r = &p->step[st];
      if (i < r->n && r->t[i].op == op && r->t[i].footprint == fp) return 1;
    }
  }
  return 0;
}

typedef struct point {
  double x, t;
  unsigned n;
} point;

static double interpolate_points(point *p, size_t n, double at) {
  double x[64], t[64];
  size_t m = 0;
  /* equal sizes: the mean weighted by samples */
  for (size_t i = 0; i < n && m < 64; i++) {
    size_t j = 0;
    while (j < m && x[j] != p[i].x) j++;
    if (j == m) {
      x[m] = p[i].x;
      t[m] = 0;
      m++;
    }
  }
  for (size_t j = 0; j < m; j++) {
    double sum = 0, cnt = 0;
    for (size_t i = 0; i < n; i++)
      if (p[i].x == x[j]) {
        sum += p[i].t * p[i].n;
        cnt += p[i].n;
      }
    t[j] = sum / cnt;
  }
  return wsisa_est_interpolate(x, t, m, at);
}

/* The time (µs) of task i of step st on a w x h tile, on arch a, and where
 * it comes from. */
static int lookup(wsisa_estimate *est, const profile *pr, size_t st, size_t i, size_t a,
                  double *us, wsisa_est_class *cls, unsigned *samples, wsisa_err *e) {
  const rec_task *t = &pr->step[st].t[i];
  const model_entry *E = est->arch[a].entries[t->op];
  size_t nE = est->arch[a].nentries[t->op];
  unsigned min = est->calib_min;
  const model_entry *exact = NULL;
  for (size_t k = 0; k < nE && !exact && !t->dependent; k++)
    if (E[k].footprint == t->footprint && E[k].size == t->size) exact = &E[k];
  *samples = exact ? exact->n : 0;
  if (exact && exact->n >= min) {
    *us = exact->mean_us;
    *cls = WSISA_EST_MEASURED;
    return 0;
  }
  point *same = malloc((nE ? nE : 1) * sizeof *same), *similar = malloc((nE ? nE : 1) * sizeof *similar);
  if (!same || !similar) {
    free(same);
    free(similar);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  /* the task's bytes: a fixed part and a part per pixel */
  const rec_task *p0 = st < est->nsteps && i < est->probe[0].step[st].n ? &est->probe[0].step[st].t[i] : NULL;
  const rec_task *p1 = st < est->nsteps && i < est->probe[1].step[st].n ? &est->probe[1].step[st].t[i] : NULL;
  double bpp = p0 && p1 ? (p1->size - p0->size) / 64.0 : 0;
  double fixed = p0 ? p0->size - bpp * 64.0 * 64.0 : 0;
  double npix = (double)pr->w * pr->h;
  size_t nsame = 0, nsim = 0, nsame_cal = 0, nsim_cal = 0;
  int rc = 0;
  for (size_t k = 0; k < nE && !rc; k++) {
    similar[nsim++] = (point){E[k].size, E[k].mean_us, E[k].n};
    nsim_cal += E[k].n >= min;
    if (&E[k] == exact || !(bpp > 0) || t->dependent) continue;
    double px = (E[k].size - fixed) / bpp;
    if (!(px >= 1) || fabs(px - round(px)) > 1e-6 || round(px) == npix) continue;
    int is = same_task(est, st, i, t->op, E[k].footprint, (uint64_t)round(px), e);
    if (is < 0) rc = WSISA_ENOMEM;
    if (is > 0) {
      same[nsame++] = (point){round(px), E[k].mean_us, E[k].n};
      nsame_cal += E[k].n >= min;
    }
  }
  if (!rc) {
    /* calibrated points only, unless there are none */
    point *use = NULL;
    size_t nuse = 0;
    double at = npix;
    if (nsame_cal) {
      *cls = WSISA_EST_INTERPOLATED;
      use = same, nuse = nsame;
    } else if (nsim_cal) {
      *cls = WSISA_EST_SIMILAR;
      use = similar, nuse = nsim, at = t->size;
    } else if (exact) {
      *cls = WSISA_EST_FEW;
      *us = exact->mean_us;
    } else if (nsame) {
      *cls = WSISA_EST_FEW;
      use = same, nuse = nsame;
    } else if (nsim) {
      *cls = WSISA_EST_FEW;
      use = similar, nuse = nsim, at = t->size;
    } else {
      *cls = WSISA_EST_GUESSED;
      *us = NAN;
    }
    if (use) {
      size_t m = 0;
      int need_cal = *cls != WSISA_EST_FEW;
      for (size_t k = 0; k < nuse; k++)
        if (!need_cal || use[k].n >= min) use[m++] = use[k];
      *us = interpolate_points(use, m, at);
    }
  }
  free(same);
  free(similar);
  return rc;
}

/* Costs of every task of the study's shapes on every arch; then the guessed
 * ones: the median per-byte cost of the calibrated tasks of the arch, else
 * another arch's cost of the same task. */
static int cost_profiles(wsisa_estimate *est, wsisa_err *e) {
  est->cost = calloc(est->nshapes, sizeof *est->cost);
  est->cls = calloc(est->nshapes, sizeof *est->cls);
  est->samples = calloc(est->nshapes, sizeof *est->samples);
  if (!est->cost || !est->cls || !est->samples) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t s = 0; s < est->nshapes; s++) {
    est->cost[s] = calloc(est->nsteps, sizeof *est->cost[s]);
    est->cls[s] = calloc(est->nsteps, sizeof *est->cls[s]);
    est->samples[s] = calloc(est->nsteps, sizeof *est->samples[s]);
    if (!est->cost[s] || !est->cls[s] || !est->samples[s])
      return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    for (size_t st = 0; st < est->nsteps; st++) {
      size_t n = est->prof[s].step[st].n;
      est->cost[s][st] = malloc((n ? n : 1) * est->narch * sizeof(double));
      est->cls[s][st] = malloc((n ? n : 1) * est->narch);
      est->samples[s][st] = malloc((n ? n : 1) * est->narch * sizeof(unsigned));
      if (!est->cost[s][st] || !est->cls[s][st] || !est->samples[s][st])
        return wsisa_error(e, WSISA_ENOMEM, "out of memory");
      for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < est->narch; a++) {
          double us = NAN;
          wsisa_est_class c = WSISA_EST_GUESSED;
          unsigned samples = 0;
          int rc = lookup(est, &est->prof[s], st, i, a, &us, &c, &samples, e);
          if (rc) return rc;
          est->cost[s][st][i * est->narch + a] = us * 1e-6;
          est->cls[s][st][i * est->narch + a] = (unsigned char)c;
          est->samples[s][st][i * est->narch + a] = samples;
          if (c <= WSISA_EST_INTERPOLATED) est->any_calibrated = 1;
        }
    }
  }
  for (size_t a = 0; a < est->narch; a++) {
    size_t cap = 0, n = 0;
    for (size_t s = 0; s < est->nshapes; s++)
      for (size_t st = 0; st < est->nsteps; st++) cap += est->prof[s].step[st].n;
    double *ratio = malloc((cap ? cap : 1) * sizeof *ratio);
    if (!ratio) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    for (size_t s = 0; s < est->nshapes; s++)
      for (size_t st = 0; st < est->nsteps; st++)
        for (size_t i = 0; i < est->prof[s].step[st].n; i++)
          if (est->cls[s][st][i * est->narch + a] <= WSISA_EST_INTERPOLATED &&
              est->prof[s].step[st].t[i].size > 0)
            ratio[n++] = est->cost[s][st][i * est->narch + a] / est->prof[s].step[st].t[i].size;
    double median = NAN;
    if (n) {
      /* insertion sort is enough for the few hundred tasks of a workflow */
      for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ratio[j] < ratio[j - 1]; j--) {
          double x = ratio[j];
          ratio[j] = ratio[j - 1];
          ratio[j - 1] = x;
        }
      median = n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
    }
    free(ratio);
    for (size_t s = 0; s < est->nshapes; s++)
      for (size_t st = 0; st < est->nsteps; st++)
        for (size_t i = 0; i < est->prof[s].step[st].n; i++) {
          double *c = &est->cost[s][st][i * est->narch + a];
          if (!isnan(*c)) continue;
          *c = median * est->prof[s].step[st].t[i].size;
          for (size_t b = 0; b < est->narch && isnan(*c); b++)
            if (b != a && est->cls[s][st][i * est->narch + b] < WSISA_EST_GUESSED)
              *c = est->cost[s][st][i * est->narch + b];
        }
  }
  return 0;
}

/* ---- the estimate --------------------------------------------------------------- */

int wsisa_estimate_new(const wsisa_estimate_request *r, wsisa_estimate **out, wsisa_err *e) {
  *out = NULL;
  if (!wsisa_runtime_active()) return wsisa_error(e, WSISA_EINTERNAL, "estimate: StarPU is not running");
  if (!r->ntiles || !r->nruns) return wsisa_error(e, WSISA_EUSAGE, "estimate: no tile or no run");
  wsisa_estimate *est = calloc(1, sizeof *est);
  if (!est) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  est->baseline_rss = wsisa_rss_now();
  wsisa_log(WSISA_LOG_DEBUG, "estimate", "baseline: %.1f MiB resident",
            (double)est->baseline_rss / 1048576.0);
  est->params = r->params;
  est->nruns = r->nruns;
  est->ntiles = r->ntiles;
  est->object_match = r->object_match;
  est->features = r->features;
  wsisa_env env;
  wsisa_env_read(&env);
  est->calib_min = env.calibrate_minimum > 0 ? (unsigned)env.calibrate_minimum : 10;
  est->shape = malloc(r->ntiles * sizeof *est->shape);
  est->tile_shape = malloc(r->ntiles * sizeof *est->tile_shape);
  est->shape_tiles = calloc(r->ntiles, sizeof *est->shape_tiles);
  int rc = 0;
  if (!est->shape || !est->tile_shape || !est->shape_tiles) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto fail;
  }
  for (size_t t = 0; t < r->ntiles; t++) {
    /* the pixels a unit works on: a slide tile with its halo, within the slide */
    int64_t rect[4];
    wsisa_tile_read_rect(&r->tiles[t], r->halo, rect);
    const int w = (int)rect[2], h = (int)rect[3];
    size_t s = 0;
    while (s < est->nshapes && (est->shape[s][0] != w || est->shape[s][1] != h)) s++;
    if (s == est->nshapes) {
      est->shape[s][0] = w;
      est->shape[s][1] = h;
      est->nshapes++;
    }
    est->tile_shape[t] = s;
    est->shape_tiles[s]++;
  }
  if ((rc = load_models(est, e))) goto fail;
  wsisa__objects_load(&est->objects);
  wsisa__busy_load(&est->busy);
  wsisa__reads_load(&est->reads);
  wsisa__fresh_load(&est->fresh);
  if ((rc = find_variants(est, est->shape[0][0], est->shape[0][1], e))) goto fail;
  if (wsisa__levels_load(&est->levels) == 0 && (rc = level_scales(est, e))) goto fail;
  est->prof = calloc(est->nshapes, sizeof *est->prof);
  if (!est->prof) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto fail;
  }
  for (size_t s = 0; s < est->nshapes && !rc; s++)
    rc = dry_shape(est, est->shape[s][0], est->shape[s][1], &est->prof[s], e);
  if (!rc) rc = dry_shape(est, 64, 64, &est->probe[0], e);
  if (!rc) rc = dry_shape(est, 64, 65, &est->probe[1], e);
  if (!rc) rc = cost_profiles(est, e);
  if (rc) goto fail;
  *out = est;
  return 0;
fail:
  wsisa_estimate_free(est);
  return rc;
}

void wsisa_estimate_free(wsisa_estimate *est) {
  if (!est) return;
  for (size_t s = 0; s < est->nshapes; s++) {
    if (est->prof) profile_clear(&est->prof[s], est->nsteps);
    for (size_t st = 0; st < est->nsteps; st++) {
      if (est->cost && est->cost[s]) free(est->cost[s][st]);
      if (est->cls && est->cls[s]) free(est->cls[s][st]);
      if (est->samples && est->samples[s]) free(est->samples[s][st]);
    }
    if (est->cost) free(est->cost[s]);
    if (est->cls) free(est->cls[s]);
    if (est->samples) free(est->samples[s]);
  }
  for (size_t i = 0; i < est->ncand; i++) profile_clear(&est->cand[i], est->nsteps);
  for (int i = 0; i < 2; i++) profile_clear(&est->probe[i], est->nsteps);
  for (size_t a = 0; a < est->narch; a++) {
    for (size_t op = 0; est->arch[a].entries && op < wsisa_n_ops; op++) free(est->arch[a].entries[op]);
    free(est->arch[a].entries);
    free(est->arch[a].nentries);
  }
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    free(est->lv[l].rep);
    free(est->lv[l].sig);
    free(est->lv[l].key);
    free(est->lv[l].var);
  }
  free(est->arch);
  free(est->cand);
  free(est->prof);
  free(est->cost);
  free(est->cls);
  free(est->samples);
  free(est->run_variant);
  free(est->run_scale);
  free(est->run_time);
  free(est->shape);
  free(est->tile_shape);
  free(est->shape_tiles);
  free(est);
}

int wsisa_estimate_calibrated(const wsisa_estimate *est) { return est->any_calibrated; }

uint64_t wsisa_estimate_baseline(const wsisa_estimate *est) { return est->baseline_rss; }

/* The arch that stands for "one CPU worker": the CPU's, else the first. */
static size_t cpu_arch(const wsisa_estimate *est) {
  for (size_t a = 0; a < est->narch; a++)
    if (est->arch[a].is_cpu) return a;
  return 0;
}

static double step_seconds(const wsisa_estimate *est, size_t s, size_t st, size_t a,
                           unsigned char *worst) {
  double sum = 0;
  for (size_t i = 0; i < est->prof[s].step[st].n; i++) {
    sum += est->cost[s][st][i * est->narch + a];
    unsigned char c = est->cls[s][st][i * est->narch + a];
    if (worst && c > *worst) *worst = c;
  }
  return sum;
}

/* The level costs on worker arch `a`: 0, or -1 when one rests on no
 * calibrated data of its own codelets. */
static int arch_level_costs(const wsisa_estimate *est, size_t a, double cost[WSISA_SEG_LEVELS]) {
  unsigned char worst = 0;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    const level_variants *lv = &est->lv[l];
    double sum = 0;
    for (size_t s = 0; s < est->nshapes; s++)
      for (size_t k = 0; k < lv->nkeys; k++)
        sum += (double)est->shape_tiles[s] *
               step_seconds(est, s, est->level_base[l] + (size_t)lv->var[k], a, &worst);
    cost[l] = lv->nkeys ? sum / ((double)est->ntiles * (double)lv->nkeys) : 0;
    if (!(cost[l] >= 0) || isnan(cost[l])) return -1;
  }
  return worst <= WSISA_EST_SIMILAR ? 0 : -1;
}

int wsisa_estimate_level_costs(const wsisa_estimate *est, double cost[WSISA_SEG_LEVELS]) {
  return arch_level_costs(est, cpu_arch(est), cost);
}

int wsisa_estimate_kind_seconds(const wsisa_estimate *est, double seconds[WSISA_KINDS]) {
  size_t arch[WSISA_KINDS] = {cpu_arch(est), est->narch};
  for (size_t a = 0; a < est->narch && arch[WSISA_KIND_OPENCL] == est->narch; a++)
    if (!est->arch[a].is_cpu) arch[WSISA_KIND_OPENCL] = a;
  for (int k = 0; k < WSISA_KINDS; k++) {
    double cost[WSISA_SEG_LEVELS];
    seconds[k] = 0;
    if (arch[k] == est->narch || !est->arch[arch[k]].is_cpu != (k == WSISA_KIND_OPENCL) ||
        arch_level_costs(est, arch[k], cost))
      return -1;
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) seconds[k] += cost[l] / WSISA_SEG_LEVELS;
    if (!(seconds[k] > 0)) return -1;
  }
  return 0;
}

/* ---- the estimate of a plan ------------------------------------------------------------ */

/* Seconds of task i of step st on shape s for a pool of workers[a] per arch:
 * each kind of task is spread over the pool at its pooled rate (the
 * throughput of W workers of mixed speed), so W workers of the pool run it
 * in W / sum(w_a / t_a). */
static double pooled(const wsisa_estimate *est, size_t s, size_t st, size_t i, const int *workers,
                     int total) {
  double rate = 0;
  uint32_t where = est->prof[s].step[st].t[i].where;
  for (size_t a = 0; a < est->narch; a++) {
    double c = est->cost[s][st][i * est->narch + a];
    uint32_t kind = est->arch[a].is_cpu ? STARPU_CPU : STARPU_OPENCL;
    if (workers[a] > 0 && c > 0 && (where & kind)) rate += workers[a] / c;
  }
  if (rate > 0) return total / rate;
  /* none of the pool runs it: a CPU worker does, beside it */
  size_t a = cpu_arch(est);
  return est->arch[a].is_cpu ? est->cost[s][st][i * est->narch + a] : 0;
}

/* Work and critical path of steps [first, last] on shape s, in submission
 * order: a task waits for the last writer of each datum it reads. */
typedef struct writer {
  const void *handle;
  double finish;
} writer;

static void steps_cost(const wsisa_estimate *est, size_t s, const size_t *steps, size_t nsteps,
                       const int *workers, int total, double *work, double *path) {
  size_t n = 0;
  for (size_t k = 0; k < nsteps; k++) n += est->prof[s].step[steps[k]].n * REC_MAXBUF;
  writer *wr = malloc((n ? n : 1) * sizeof *wr);
  size_t nw = 0;
  *work = *path = 0;
  for (size_t k = 0; k < nsteps; k++) {
    const recording *r = &est->prof[s].step[steps[k]];
    for (size_t i = 0; i < r->n; i++) {
      double c = pooled(est, s, steps[k], i, workers, total), start = 0;
      *work += c;
      if (!wr) continue;
      const rec_task *t = &r->t[i];
      for (int b = 0; b < t->nbuf; b++)
        if (t->mode[b] & 1)
          for (size_t j = nw; j-- > 0;)
            if (wr[j].handle == t->handle[b]) {
              if (wr[j].finish > start) start = wr[j].finish;
              break;
            }
      double finish = start + c;
      for (int b = 0; b < t->nbuf; b++)
        if (t->mode[b] & 2) wr[nw++] = (writer){t->handle[b], finish};
      if (finish > *path) *path = finish;
    }
  }
  if (!wr) *path = *work;
  free(wr);
}

/* A second simulation only when the workers the first kept busy move the
 * busy factor by more than this share: under it, the makespan moves by less
 * than the factor's own spread between calibrations, and a simulation is
 * most of `plan --estimate`'s time. */
#define BUSY_AGAIN 0.01

/* The CPU workers' costs x `by`: a tile's opening and reference (on the whole
 * set), and the CPU's column of every other piece. */
static void scale_cpu(size_t ns, size_t nv, double by, double *open, double *open_path,
                      double *ref, double *ref_path, double *stage, double *measure,
                      double *background, double *level) {
  for (size_t s = 0; s < ns; s++) {
    open[s] *= by;
    open_path[s] *= by;
    ref[s] *= by;
    ref_path[s] *= by;
    stage[s] *= by;
    measure[s] *= by;
    background[s] *= by;
    for (size_t i = 0; i < WSISA_SEG_LEVELS * nv; i++) level[s * WSISA_SEG_LEVELS * nv + i] *= by;
  }
}

/* The work of each evidence class and codelet in `count` runs of a step. */
static void account(const wsisa_estimate *est, size_t s, size_t st, double count, const int *workers,
                    int total, double *by_class, double *by_op_class) {
  if (count <= 0) return;
  const recording *r = &est->prof[s].step[st];
  for (size_t i = 0; i < r->n; i++) {
    double c = pooled(est, s, st, i, workers, total) * count;
    unsigned char worst = 0;
    for (size_t a = 0; a < est->narch; a++)
      if (workers[a] > 0 && est->cls[s][st][i * est->narch + a] > worst)
        worst = est->cls[s][st][i * est->narch + a];
    by_class[worst] += c;
    by_op_class[(size_t)r->t[i].op * WSISA_EST_NCLASSES + worst] += c;
  }
}

int wsisa_estimate_compute(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                           wsisa_estimate_figures *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  int *workers = calloc(est->narch ? est->narch : 1, sizeof *workers);
  if (!workers) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  int total = 0, nocl = 0;
  size_t ocl_arch = est->narch; /* the OpenCL workers' model: the first OpenCL kind */
  for (size_t a = 0; a < est->narch; a++)
    if (!est->arch[a].is_cpu && ocl_arch == est->narch) ocl_arch = a;
  for (size_t a = 0; a < est->narch; a++) {
    if (est->arch[a].is_cpu)
      workers[a] = plan->cpu_workers >= 0 ? plan->cpu_workers : est->arch[a].workers;
    else if (plan->opencl_workers >= 0)
      workers[a] = a == ocl_arch ? plan->opencl_workers : 0;
    else
      workers[a] = est->arch[a].workers;
    if (!est->arch[a].is_cpu) nocl += workers[a];
    total += workers[a];
  }
  if (plan->cpu_workers > 0 && !est->arch[cpu_arch(est)].is_cpu) {
    free(workers);
    return wsisa_error(e, WSISA_EUSAGE, "estimate: no CPU worker started here to measure CPU workers by");
  }
  if (plan->opencl_workers > 0 && ocl_arch == est->narch) {
    free(workers);
    return wsisa_error(e, WSISA_EUSAGE,
                       "estimate: no OpenCL worker started here to measure OpenCL workers by "
                       "(with PoCL, STARPU_OPENCL_ON_CPUS=1; calibrate with the same)");
  }
  if (total < 1 || plan->ranks < 1) {
    free(workers);
    return wsisa_error(e, WSISA_EUSAGE, "estimate: want at least one rank and one worker");
  }
  size_t ns = est->nshapes, nv = est->nvariants;
  double *open = calloc(ns, sizeof *open), *open_path = calloc(ns, sizeof *open_path),
         *ref = calloc(ns, sizeof *ref), *ref_path = calloc(ns, sizeof *ref_path),
         *read = calloc(ns, sizeof *read),
         *level = calloc(2 * ns * WSISA_SEG_LEVELS * nv, sizeof *level),
         *stage = calloc(2 * ns, sizeof *stage), *measure = calloc(2 * ns, sizeof *measure),
         *background = calloc(2 * ns, sizeof *background),
         *by_op = calloc(wsisa_n_ops * WSISA_EST_NCLASSES, sizeof *by_op);
  int *one_worker = calloc(est->narch ? est->narch : 1, sizeof *one_worker);
  wsisa__objects_pricer pricer;
  memset(&pricer, 0, sizeof pricer);
  int rc = 0;
  if (!open || !open_path || !ref || !ref_path || !read || !stage || !measure || !background ||
      !level || !by_op || !one_worker) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t s = 0; s < ns; s++) {
    /* opening a tile: its stage, then its reference, each on the whole set */
    const size_t stage_step = ST_STAGE, ref_step = ST_REFERENCE;
    steps_cost(est, s, &stage_step, 1, workers, total, &open[s], &open_path[s]);
    steps_cost(est, s, &ref_step, 1, workers, total, &ref[s], &ref_path[s]);
    /* and before them, its read on the submitting thread */
    read[s] = wsisa__reads_seconds(&est->reads, est->shape[s][0], est->shape[s][1]);
  }
  /* every other piece on one worker of each kind: [0] CPU, [1] OpenCL
   * (its codelets without an OpenCL kernel on a CPU worker) */
  for (int k = 0; k < (nocl ? 2 : 1); k++) {
    memset(one_worker, 0, est->narch * sizeof *one_worker);
    one_worker[k ? ocl_arch : cpu_arch(est)] = 1;
    for (size_t s = 0; s < ns; s++) {
      double path;
      const size_t one[] = {ST_STAGE}, m = ST_MEASURE, b = ST_BACKGROUND;
      size_t at = (size_t)k * ns + s;
      steps_cost(est, s, one, 1, one_worker, 1, &stage[at], &path);
      steps_cost(est, s, &m, 1, one_worker, 1, &measure[at], &path);
      steps_cost(est, s, &b, 1, one_worker, 1, &background[at], &path);
      for (int l = 0; l < WSISA_SEG_LEVELS; l++)
        for (size_t v = 0; v < est->lv[l].n; v++) {
          size_t st = est->level_base[l] + v;
          steps_cost(est, s, &st, 1, one_worker, 1,
                     &level[(size_t)k * ns * WSISA_SEG_LEVELS * nv +
                            (s * WSISA_SEG_LEVELS + (size_t)l) * nv + v],
                     &path);
        }
    }
  }
  /* the CPU workers' tasks as slow as with the CPU workers busy at once
   * against the models' (filled at calibration's width, as busy as its
   * rounds kept them): first with every CPU worker of the machine busy, a
   * rank's times the ranks sharing its machine (mpirun's local ranks in a
   * run; plan's ranks taken to share this machine), then, when what that
   * simulation kept busy moves the factor by more than BUSY_AGAIN, again
   * at that */
  int ncpu = est->arch[cpu_arch(est)].is_cpu ? workers[cpu_arch(est)] : 0;
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  int sharing = local && atoi(local) > 0 ? atoi(local) : plan->ranks > 0 ? plan->ranks : 1;
  if (sharing > plan->ranks) sharing = plan->ranks;
  out->busy_workers = ncpu * sharing;
  out->busy_factor = wsisa__busy_ratio(&est->busy, out->busy_workers);
  double alone = wsisa__busy_ratio(&est->busy, 1);
  snprintf(out->read_source, sizeof out->read_source, "%s",
           est->reads.loaded ? est->reads.source
                             : "not measured (wsisa calibrate measures it): a tile's read not "
                               "priced");
  snprintf(out->busy_source, sizeof out->busy_source, "%s",
           est->busy.loaded ? est->busy.source
                            : "not measured (wsisa calibrate measures it): the models' times at "
                              "any number of workers busy");
  scale_cpu(ns, nv, out->busy_factor, open, open_path, ref, ref_path, stage, measure, background,
            level);
  wsisa_sim_costs ocl = {ns, nv, open, open_path, stage + ns, measure + ns, background + ns,
                         level + ns * WSISA_SEG_LEVELS * nv, est->run_variant, NULL, est->run_scale,
                         NULL, NULL, NULL};
  wsisa_sim_costs c = {ns, nv, open, open_path, stage, measure, background, level, est->run_variant,
                       nocl ? &ocl : NULL, est->run_scale, ref, ref_path, read};
  snprintf(out->level_source, sizeof out->level_source, "%s",
           est->run_scale ? est->level_source
                          : "not measured (wsisa calibrate measures it): every run's level tasks "
                            "at the models' time");
  wsisa_sim_job j = {est->ntiles, est->tile_shape, plan->buckets, est->params,
                     plan->share_tile_stage, plan->active_paths, plan->done, plan->ranks, total,
                     NULL, nocl, plan->placement};
  /* object reuse: levels 6-7 priced by what their tiles' stores are expected
   * to hold, when calibration measured it */
  out->object_share = -1;
  if (plan->object_reuse && est->objects.loaded && est->params) {
    if (wsisa__objects_pricer_init(&pricer, &est->objects, plan->buckets, est->params,
                                   est->run_scale ? est->run_time : NULL)) {
      rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
      goto out;
    }
    j.objects = &pricer;
    snprintf(out->object_source, sizeof out->object_source, "%s", est->objects.source);
  } else if (plan->object_reuse) {
    snprintf(out->object_source, sizeof out->object_source, "%s",
             "not measured (wsisa calibrate measures it): levels 6-7 priced without object "
             "reuse, an upper bound");
  }
  if ((rc = wsisa_sim_run(&c, &j, &out->sim, e))) goto out;
  if (est->busy.loaded && ncpu > 0 && out->sim.makespan > 0) {
    /* the CPU workers that simulation kept busy on a machine, on average;
     * a StarPU that keeps the last awake worker of each rank polling when
     * idle keeps at least one a rank busy */
    double busy = out->sim.work_cpu / out->sim.makespan * sharing / plan->ranks;
    const int floor_busy = wsisa_runtime_last_worker_sleeps() ? 1 : sharing;
    busy = fmin(fmax(busy, (double)floor_busy), (double)(ncpu * sharing));
    double again = wsisa__busy_ratio(&est->busy, busy);
    if (fabs(again / out->busy_factor - 1) > BUSY_AGAIN) {
      scale_cpu(ns, nv, again / out->busy_factor, open, open_path, ref, ref_path, stage, measure,
                background, level);
      out->busy_factor = again;
      out->busy_workers = busy;
      wsisa_sim_result_free(&out->sim);
      memset(&out->sim, 0, sizeof out->sim);
      if ((rc = wsisa_sim_run(&c, &j, &out->sim, e))) goto out;
    }
  }
  if (j.objects)
    out->object_share = out->sim.objects_reusable > 0
                            ? 1 - out->sim.objects_computed / out->sim.objects_reusable
                            : 0;
  out->ranks = plan->ranks;
  out->workers = total;
  out->active_paths = plan->active_paths;
  /* the work by evidence: every piece the simulation ran, task by task */
  double by_class[WSISA_EST_NCLASSES] = {0};
  const wsisa_sim_result *sr = &out->sim;
  for (size_t s = 0; s < ns; s++) {
    account(est, s, ST_STAGE, (double)(sr->shape_opens[s] + sr->shape_stages[s]), workers, total,
            by_class, by_op);
    account(est, s, ST_REFERENCE, (double)sr->shape_opens[s], workers, total, by_class, by_op);
    account(est, s, ST_MEASURE, (double)sr->shape_leaves[s], workers, total, by_class, by_op);
    account(est, s, ST_BACKGROUND, (double)sr->shape_backgrounds[s], workers, total, by_class, by_op);
    for (int l = 0; l < WSISA_SEG_LEVELS; l++)
      for (size_t v = 0; v < est->lv[l].n; v++)
        account(est, s, est->level_base[l] + v,
                sr->level_units[(s * WSISA_SEG_LEVELS + (size_t)l) * nv + v], workers,
                total, by_class, by_op);
  }
  double work = 0;
  for (int k = 0; k < WSISA_EST_NCLASSES; k++) work += by_class[k];
  for (int k = 0; k < WSISA_EST_NCLASSES; k++) out->class_share[k] = work > 0 ? by_class[k] / work : 0;
  /* ... as slow as the simulation ran it */
  out->sim.work = work * out->busy_factor;
  /* the uncalibrated codelets, largest share first */
  for (size_t op = 0; op < wsisa_n_ops; op++)
    for (int k = WSISA_EST_FEW; k < WSISA_EST_NCLASSES; k++) {
      double share = work > 0 ? by_op[op * WSISA_EST_NCLASSES + (size_t)k] / work : 0;
      if (!(share > 0)) continue;
      size_t at = out->nlisted;
      while (at > 0 && out->listed[at - 1].share < share) at--;
      if (at >= WSISA_EST_MAX_LISTED) continue;
      size_t n = out->nlisted < WSISA_EST_MAX_LISTED ? out->nlisted : WSISA_EST_MAX_LISTED - 1;
      memmove(&out->listed[at + 1], &out->listed[at], (n - at) * sizeof out->listed[0]);
      out->listed[at].op = wsisa_ops[op].name;
      out->listed[at].cls = (wsisa_est_class)k;
      out->listed[at].share = share;
      if (out->nlisted < WSISA_EST_MAX_LISTED) out->nlisted++;
    }
  /* memory: the process, then what the executor holds over the largest
   * tile a rank opens: the tile, a running task per worker, K paths and the
   * level outputs they held at most in the simulation, prefixes shared (its
   * per-pixel figures, wsisa_exec_bytes) */
  out->baseline_rss = est->baseline_rss;
  size_t k_paths = plan->active_paths ? plan->active_paths : sr->peak_paths;
  if (sr->peak_paths && k_paths > sr->peak_paths) k_paths = sr->peak_paths;
  wsisa_exec_opts eo = {.share_tile_stage = plan->share_tile_stage,
                        .object_match = est->object_match,
                        .features = est->features};
  double peak = 0;
  for (int q = 0; q < plan->ranks; q++)
    for (size_t s = 0; s < ns; s++)
      if (sr->rank_shapes[(size_t)q * ns + s])
        peak = fmax(peak, wsisa_exec_bytes(k_paths, sr->peak_outputs, (size_t)total,
                                           (double)est->shape[s][0] * est->shape[s][1], &eo));
  out->peak_rss = est->baseline_rss + (uint64_t)peak;
  /* a rank's working set written for the first time, inside its tasks:
   * spread over its workers, in the makespan */
  out->fresh_seconds = wsisa__fresh_seconds(&est->fresh, out->peak_rss, est->baseline_rss) / total;
  snprintf(out->fresh_source, sizeof out->fresh_source, "%s",
           est->fresh.loaded ? est->fresh.source
                             : "not measured (wsisa calibrate measures it): a page's first "
                               "write not priced");
  out->sim.makespan += out->fresh_seconds;
  /* the efficiency over one worker alone (T1 / (p x Tp)): a task slower
   * with the others busy, and the first writes, count against it */
  double capacity = out->sim.makespan * plan->ranks * total;
  out->sim.efficiency = capacity > 0 ? work * alone / capacity : 1.0;
  out->cpu_hours = capacity / 3600.0;
out:
  wsisa__objects_pricer_free(&pricer);
  free(workers);
  free(one_worker);
  free(open);
  free(open_path);
  free(ref);
  free(ref_path);
  free(read);
  free(stage);
  free(measure);
  free(background);
  free(level);
  free(by_op);
  return rc;
}

void wsisa_estimate_figures_free(wsisa_estimate_figures *f) { wsisa_sim_result_free(&f->sim); }

double wsisa_estimate_uncalibrated_share(const wsisa_estimate_figures *f) {
  return f->class_share[WSISA_EST_FEW] + f->class_share[WSISA_EST_GUESSED];
}

/* ---- what calibration needs ----------------------------------------------------- */

size_t wsisa__estimate_missing(const wsisa_estimate *est, size_t *total, unsigned *fewest) {
  size_t missing = 0;
  *total = 0;
  *fewest = est->calib_min;
  for (size_t s = 0; s < est->nshapes; s++)
    for (size_t st = 0; st < est->nsteps; st++)
      for (size_t i = 0; i < est->prof[s].step[st].n; i++)
        for (size_t a = 0; a < est->narch; a++) {
          const rec_task *t = &est->prof[s].step[st].t[i];
          if (!(t->where & (est->arch[a].is_cpu ? STARPU_CPU : STARPU_OPENCL))) continue;
          (*total)++;
          wsisa_est_class c = (wsisa_est_class)est->cls[s][st][i * est->narch + a];
          /* a task whose footprint depends on the data is calibrated when
           * its codelet is, on sizes like its own */
          if (c == WSISA_EST_MEASURED || (c == WSISA_EST_SIMILAR && t->dependent)) continue;
          missing++;
          unsigned n = est->samples[s][st][i * est->narch + a];
          if (n < *fewest) *fewest = n;
        }
  return missing;
}

unsigned wsisa__estimate_minimum(const wsisa_estimate *est) { return est->calib_min; }

size_t wsisa__estimate_variants(const wsisa_estimate *est, int level, const size_t **runs) {
  *runs = est->lv[level - 1].rep;
  return est->lv[level - 1].n;
}
