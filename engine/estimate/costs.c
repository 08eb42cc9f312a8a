/* The estimate's costs: each piece of a study's workflow on each tile shape
 * and kind of worker, from dry runs and this host's history models (seed 004
 * §3.2; docs/architecture.md, "The estimate in detail": "Costs"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate_internal.h"

const char *wsisa_est_class_name(wsisa_est_class c) {
  static const char *const names[] = {"measured", "interpolated", "similar", "few samples",
                                      "no data"};
  return (unsigned)c < WSISA_EST_NCLASSES ? names[c] : "?";
}

double wsisa__est_interpolate(const double *x, const double *t, size_t n, double at) {
  if (!n) return NAN;
  /* the points bracketing `at`, or the nearest one */
  size_t lo = SIZE_MAX, hi = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    if (x[i] <= at && (lo == SIZE_MAX || x[i] > x[lo])) lo = i;
    if (x[i] >= at && (hi == SIZE_MAX || x[i] < x[hi])) hi = i;
  }
  if (lo == SIZE_MAX) return t[hi] / x[hi] * at;
  if (hi == SIZE_MAX || x[hi] == x[lo]) return t[lo] / x[lo] * at;
  double qlo = t[lo] / x[lo], qhi = t[hi] / x[hi];
  double f = (log(at) - log(x[lo])) / (log(x[hi]) - log(x[lo]));
  return (qlo + f * (qhi - qlo)) * at;
}

/* ---- dry runs ---------------------------------------------------------------- */

static void record_task(void *ctx, struct starpu_task *task) {
  wsisa__recording *rec = ctx;
  const wsisa_op *op = wsisa_op_of(task->cl);
  if (!op) return;
  wsisa__rec_task *t = wsisa_grow(rec->t, &rec->cap, rec->n + 1, sizeof *t, 16);
  if (!t) {
    rec->failed = 1;
    return;
  }
  rec->t = t;
  wsisa__rec_task *r = &rec->t[rec->n++];
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
    if (r->nbuf < WSISA__REC_MAXBUF) {
      r->handle[r->nbuf] = h;
      r->mode[r->nbuf++] = (unsigned char)(((m & STARPU_R) ? 1 : 0) | ((m & STARPU_W) ? 2 : 0));
    }
  }
}

static void recording_clear(wsisa__recording *r) {
  free(r->t);
  memset(r, 0, sizeof *r);
}

/* The measure of a mask against the reference, as the executor submits it:
 * comparison, objects, [object matching], [the feature reduction]. */
static int dry_measure(const wsisa_estimate *est, wsisa__recording *rec,
                       const wsisa_tile_data *tile, starpu_data_handle_t mask, starpu_data_handle_t ref,
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
static int dry_shape(const wsisa_estimate *est, int w, int h, wsisa__profile *pr, wsisa_err *e) {
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
  wsisa_codelets_record(record_task, &pr->step[WSISA__ST_STAGE]);
  /* the stage makes level 2's reconstructions the runs and the reference
   * ask for, as engine/exec/tile.c has it */
  const wsisa_tile_frame frame = {.recon_conns =
                                      wsisa_workflow_recon_conns(est->params, est->nruns)};
  rc = wsisa_workflow_tile_submit_framed(rgb, w, h, WSISA_TARGET_MPP, 1, &frame, &tile, e);
  if (!rc && est->features) rc = wsisa_workflow_channels_submit(&tile, 1, e);
  wsisa_codelets_record(record_task, &pr->step[WSISA__ST_REFERENCE]);
  if (!rc) rc = wsisa_workflow_segment_submit(&tile, wsisa_seg_defaults(), ref, e);
  if (!rc)
    rc = dry_measure(est, &pr->step[WSISA__ST_REFERENCE], &tile, ref, ref, NULL, 1, &ref_labels, e);
  wsisa_codelets_record(record_task, &pr->step[WSISA__ST_BACKGROUND]);
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
  wsisa_codelets_record(record_task, &pr->step[WSISA__ST_MEASURE]);
  if (!rc)
    rc = dry_measure(est, &pr->step[WSISA__ST_MEASURE], &tile, mask, ref, ref_labels, 0, NULL, e);
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

static void profile_clear(wsisa__profile *pr, size_t nsteps) {
  if (pr->step)
    for (size_t i = 0; i < nsteps; i++) recording_clear(&pr->step[i]);
  free(pr->step);
  pr->step = NULL;
}

/* ---- level variants ----------------------------------------------------------- */

static uint64_t signature(const wsisa__recording *r) {
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
  wsisa__recording scratch;
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
    wsisa__level_variants *lv = &est->lv[l - 1];
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
  size_t base = WSISA__ST_LEVELS;
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
  const wsisa__levels_model *m = &est->models.levels;
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
  if (!rc) wsisa__levels_scale(m, est->params, est->nruns, same, est->run_scale, est->run_time);
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
      wsisa__model_entry *v = n ? malloc(n * sizeof *v) : NULL;
      if (n && !v) {
        starpu_perfmodel_unload_model(&m);
        return wsisa_error(e, WSISA_ENOMEM, "out of memory");
      }
      size_t k = 0;
      for (struct starpu_perfmodel_history_list *l = pa ? pa->list : NULL; l; l = l->next) {
        const struct starpu_perfmodel_history_entry *h = l->entry;
        if (!h || !h->nsample || !(h->mean > 0)) continue;
        v[k++] = (wsisa__model_entry){h->footprint, (double)h->size, h->mean, h->nsample};
      }
      est->arch[a].entries[op] = v;
      est->arch[a].nentries[op] = k;
    }
    starpu_perfmodel_unload_model(&m);
  }
  return 0;
}

/* ---- matching model entries to tasks ------------------------------------------- */

static wsisa__profile *candidate(wsisa_estimate *est, int w, int h, wsisa_err *e) {
  for (size_t i = 0; i < est->ncand; i++)
    if (est->cand[i].w == w && est->cand[i].h == h) return &est->cand[i];
  wsisa__profile *c = wsisa_grow(est->cand, &est->cap_cand, est->ncand + 1, sizeof *c, 16);
  if (!c) {
    wsisa_error(e, WSISA_ENOMEM, "out of memory");
    return NULL;
  }
  est->cand = c;
  wsisa__profile *p = &est->cand[est->ncand];
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
      wsisa__profile *p = candidate(est, w, h, e);
      if (!p) return -1;
      if (p->invalid) continue;
      const wsisa__recording *r = &p->step[st];
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
  return wsisa__est_interpolate(x, t, m, at);
}

/* The time (µs) of task i of step st on a w x h tile, on arch a, and where
 * it comes from. */
static int lookup(wsisa_estimate *est, const wsisa__profile *pr, size_t st, size_t i, size_t a,
                  double *us, wsisa_est_class *cls, unsigned *samples, wsisa_err *e) {
  const wsisa__rec_task *t = &pr->step[st].t[i];
  const wsisa__model_entry *E = est->arch[a].entries[t->op];
  size_t nE = est->arch[a].nentries[t->op];
  unsigned min = est->calib_min;
  const wsisa__model_entry *exact = NULL;
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
  const wsisa__rec_task *p0 = i < est->probe[0].step[st].n ? &est->probe[0].step[st].t[i] : NULL;
  const wsisa__rec_task *p1 = i < est->probe[1].step[st].n ? &est->probe[1].step[st].t[i] : NULL;
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
  /* the evidence, best first: calibrated points only, unless there are none */
  const struct {
    size_t have, n;
    wsisa_est_class cls;
    point *use;
    double at;
  } ways[] = {{nsame_cal, nsame, WSISA_EST_INTERPOLATED, same, npix},
              {nsim_cal, nsim, WSISA_EST_SIMILAR, similar, t->size},
              {exact != NULL, 0, WSISA_EST_FEW, NULL, 0},
              {nsame, nsame, WSISA_EST_FEW, same, npix},
              {nsim, nsim, WSISA_EST_FEW, similar, t->size}};
  if (!rc) {
    size_t w = 0, nways = sizeof ways / sizeof *ways;
    while (w < nways && !ways[w].have) w++;
    *cls = w < nways ? ways[w].cls : WSISA_EST_GUESSED;
    *us = w < nways && !ways[w].use ? exact->mean_us : NAN;
    point *use = w < nways ? ways[w].use : NULL;
    size_t m = 0;
    for (size_t k = 0; use && k < ways[w].n; k++)
      if (*cls == WSISA_EST_FEW || use[k].n >= min) use[m++] = use[k];
    if (use) *us = interpolate_points(use, m, ways[w].at);
  }
  free(same);
  free(similar);
  return rc;
}

/* Every task of the study's shapes: s, st and i. */
#define FOR_TASKS(est, s, st, i)                    \
  for (size_t s = 0; s < (est)->nshapes; s++)       \
    for (size_t st = 0; st < (est)->nsteps; st++)   \
      for (size_t i = 0; i < (est)->prof[s].step[st].n; i++)

/* Costs of every task of the study's shapes on every arch; then the guessed
 * ones: the median per-byte cost of the calibrated tasks of the arch, else
 * another arch's cost of the same task. */
static int cost_profiles(wsisa_estimate *est, wsisa_err *e) {
  size_t n = 0, na = est->narch;
  est->first = malloc((est->nshapes * est->nsteps + 1) * sizeof *est->first);
  for (size_t s = 0; est->first && s < est->nshapes; s++)
    for (size_t st = 0; st < est->nsteps; st++) {
      est->first[s * est->nsteps + st] = n;
      n += est->prof[s].step[st].n;
    }
  est->cost = malloc((n ? n : 1) * na * sizeof *est->cost);
  est->cls = malloc((n ? n : 1) * na * sizeof *est->cls);
  est->samples = malloc((n ? n : 1) * na * sizeof *est->samples);
  double *ratio = malloc((n ? n : 1) * sizeof *ratio);
  int rc = est->first && est->cost && est->cls && est->samples && ratio
               ? 0
               : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  FOR_TASKS(est, s, st, i)
  for (size_t a = 0; a < na && !rc; a++) {
    double us = NAN;
    wsisa_est_class c = WSISA_EST_GUESSED;
    unsigned samples = 0;
    rc = lookup(est, &est->prof[s], st, i, a, &us, &c, &samples, e);
    size_t at = wsisa__est_at(est, s, st, i, a);
    est->cost[at] = us * 1e-6;
    est->cls[at] = (unsigned char)c;
    est->samples[at] = samples;
    if (c <= WSISA_EST_INTERPOLATED) est->any_calibrated = 1;
  }
  for (size_t a = 0; a < na && !rc; a++) {
    size_t m = 0;
    FOR_TASKS(est, s, st, i) {
      size_t at = wsisa__est_at(est, s, st, i, a);
      double size = est->prof[s].step[st].t[i].size;
      if (est->cls[at] <= WSISA_EST_INTERPOLATED && size > 0) ratio[m++] = est->cost[at] / size;
    }
    double median = m ? wsisa_median(ratio, m) : NAN;
    FOR_TASKS(est, s, st, i) {
      double *c = &est->cost[wsisa__est_at(est, s, st, i, a)];
      if (!isnan(*c)) continue;
      *c = median * est->prof[s].step[st].t[i].size;
      for (size_t b = 0; b < na && isnan(*c); b++)
        if (b != a && est->cls[wsisa__est_at(est, s, st, i, b)] < WSISA_EST_GUESSED)
          *c = est->cost[wsisa__est_at(est, s, st, i, b)];
    }
  }
  free(ratio);
  return rc;
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
  wsisa__probes_load(&est->models);
  if ((rc = find_variants(est, est->shape[0][0], est->shape[0][1], e))) goto fail;
  if (est->models.levels.loaded && (rc = level_scales(est, e))) goto fail;
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
  }
  for (size_t i = 0; i < est->ncand; i++) profile_clear(&est->cand[i], est->nsteps);
  for (int i = 0; i < 2; i++) profile_clear(&est->probe[i], est->nsteps);
  for (size_t a = 0; a < est->narch; a++) {
    for (size_t op = 0; est->arch[a].entries && op < wsisa_n_ops; op++) free(est->arch[a].entries[op]);
    free(est->arch[a].entries);
    free(est->arch[a].nentries);
  }
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    void *level[] = {est->lv[l].rep, est->lv[l].sig, est->lv[l].key, est->lv[l].var};
    for (size_t i = 0; i < sizeof level / sizeof *level; i++) free(level[i]);
  }
  void *owned[] = {est->arch,        est->cand,      est->prof,      est->first,
                   est->cost,        est->cls,       est->samples,   est->run_variant,
                   est->run_scale,   est->run_time,  est->shape,     est->tile_shape,
                   est->shape_tiles, est};
  for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) free(owned[i]);
}

int wsisa_estimate_calibrated(const wsisa_estimate *est) { return est->any_calibrated; }

uint64_t wsisa_estimate_baseline(const wsisa_estimate *est) { return est->baseline_rss; }

/* The arch that stands for "one CPU worker": the CPU's, else the first. */
size_t wsisa__est_cpu_arch(const wsisa_estimate *est) {
  for (size_t a = 0; a < est->narch; a++)
    if (est->arch[a].is_cpu) return a;
  return 0;
}

static double step_seconds(const wsisa_estimate *est, size_t s, size_t st, size_t a,
                           unsigned char *worst) {
  double sum = 0;
  for (size_t i = 0; i < est->prof[s].step[st].n; i++) {
    sum += est->cost[wsisa__est_at(est, s, st, i, a)];
    unsigned char c = est->cls[wsisa__est_at(est, s, st, i, a)];
    if (worst && c > *worst) *worst = c;
  }
  return sum;
}

/* The level costs on worker arch `a`: 0, or -1 when one rests on no
 * calibrated data of its own codelets. */
static int arch_level_costs(const wsisa_estimate *est, size_t a, double cost[WSISA_SEG_LEVELS]) {
  unsigned char worst = 0;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    const wsisa__level_variants *lv = &est->lv[l];
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
  return arch_level_costs(est, wsisa__est_cpu_arch(est), cost);
}

int wsisa_estimate_kind_seconds(const wsisa_estimate *est, double seconds[WSISA_KINDS]) {
  size_t arch[WSISA_KINDS] = {wsisa__est_cpu_arch(est), est->narch};
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

/* ---- what calibration needs ----------------------------------------------------- */

size_t wsisa__estimate_missing(const wsisa_estimate *est, size_t *total, unsigned *fewest) {
  size_t missing = 0;
  *total = 0;
  *fewest = est->calib_min;
  FOR_TASKS(est, s, st, i)
  for (size_t a = 0; a < est->narch; a++) {
    const wsisa__rec_task *t = &est->prof[s].step[st].t[i];
    if (!(t->where & (est->arch[a].is_cpu ? STARPU_CPU : STARPU_OPENCL))) continue;
    (*total)++;
    size_t at = wsisa__est_at(est, s, st, i, a);
    /* a task whose footprint depends on the data is calibrated when its
     * codelet is, on sizes like its own */
    if (est->cls[at] == WSISA_EST_MEASURED || (est->cls[at] == WSISA_EST_SIMILAR && t->dependent))
      continue;
    missing++;
    if (est->samples[at] < *fewest) *fewest = est->samples[at];
  }
  return missing;
}

unsigned wsisa__estimate_minimum(const wsisa_estimate *est) { return est->calib_min; }

size_t wsisa__estimate_variants(const wsisa_estimate *est, int level, const size_t **runs) {
  *runs = est->lv[level - 1].rep;
  return est->lv[level - 1].n;
}
