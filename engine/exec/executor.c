/* The executor (docs/architecture.md). For each tile: its shared stage and the
 * reference segmentation (default parameters) once; then for each bucket, the
 * merged task tree is walked depth first and submitted in dependency order.
 * A node's outputs are released once its subtree is submitted, and at most K
 * root-to-leaf paths are active at once (RMSR, seed 003 §III, Algorithm 1): a
 * path stays active until its leaf's comparison has finished, so peak memory
 * is bounded by K, not by the bucket size. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codelets/codelets.h"
#include "engine/exec/exec_internal.h"
#include "io/io.h"

/* ---- active paths ------------------------------------------------------- */

/* What the workers' callbacks share with the submitting thread, under one
 * lock: the active paths, and unit placement's load per kind. */
typedef struct paths {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  size_t active, peak;
  /* unit placement: per kind, what is in flight (wsisa_exec_placement_choose;
   * its speed is read off the kinds' scopes), and the cost of the units given */
  wsisa_exec_kind_load load[WSISA_KINDS];
  double cost_given;
  /* the submitting thread's waits for a free path, and their seconds */
  uint64_t waits;
  double waited;
  /* called every wait_period seconds, unlocked, while a submission waits */
  void (*on_wait)(void *);
  void *wait_ctx;
  double wait_period;
} paths;

typedef struct unit unit;

typedef struct leaf leaf;

/* One measure of a leaf on its way home. */
typedef struct leaf_part {
  leaf *owner;
  starpu_data_handle_t handle;
} leaf_part;

/* PART_ROWS, the feature rows, is registered once the object count is home. */
enum { PART_COUNTS, PART_NUCLEI, PART_MATCH, PART_ROWS, NPARTS };

/* One leaf's measures against the reference: they come home here. The path
 * ends when all have arrived. */
struct leaf {
  uint64_t counts[3], nuclei, match[WSISA_MATCH_FIELDS];
  leaf_part part[NPARTS];
  int remaining;
  size_t node;
  unit *owner;
  /* the feature stage: labels kept for the reduction, its rows */
  const wsisa_tile_data *data;
  starpu_data_handle_t labels;
  double *rows;
  int failed;
  /* nuclei_out: the labels as spans, made when the unit is reported */
  uint32_t *spans;
  size_t nspans;
};

struct unit {
  size_t tile, bucket;
  const wsisa_reuse_tree *tree;
  leaf *leaves;
  size_t nleaves, pending; /* leaves whose comparison has not finished */
  uint8_t *skipped; /* per level-1 node: 1 when the background rule emptied its mask */
  paths *paths;
  size_t place;             /* its tile's place in the session */
  struct wsisa__tile_state *ts;    /* its tile (open until the unit is reported) */
  wsisa_tile_data own_tile; /* when the tile stage is not shared */
  int owns_tile;
  const double *ref_features; /* the tile's reference feature rows */
  const double *params;     /* the session's runs */
  int features, nuclei_out; /* the options' */
  int normalize;
  int object_match;         /* leaves match objects: skipped runs get the sums of no object */
  /* unit placement: the kind given the unit (-1: none, StarPU places each
   * task), its cost, and the scope its tasks were submitted under (NULL:
   * none); `submitted` once every leaf is */
  int kind;
  double cost;
  wsisa_codelets_scope *scope;
  int submitted;
};

/* A unit given to a kind starts, p->lock held. */
static void unit_started(paths *p, unit *u) {
  if (u->kind < 0) return;
  wsisa_exec_kind_load *k = &p->load[u->kind];
  k->units_in_flight++;
  k->in_flight += u->cost;
  p->cost_given += u->cost;
}

/* Every leaf of a unit given to a kind has arrived, p->lock held. */
static void unit_ended(paths *p, unit *u) {
  if (u->kind < 0) return;
  wsisa_exec_kind_load *k = &p->load[u->kind];
  k->in_flight -= u->cost;
  k->units_in_flight--;
}

static void leaf_arrived(leaf *l) {
  paths *p = l->owner->paths;
  pthread_mutex_lock(&p->lock);
  if (--l->remaining == 0) {
    p->active--;
    if (!--l->owner->pending && l->owner->submitted) unit_ended(p, l->owner);
    pthread_cond_broadcast(&p->cond);
  }
  pthread_mutex_unlock(&p->lock);
}

static void leaf_part_done(void *arg) {
  leaf_part *part = arg;
  starpu_data_release(part->handle);
  leaf_arrived(part->owner);
}

/* With features, the object count is home: the reduction's output can be
 * registered now. Runs in a callback: it only submits, never waits. */
static void leaf_nuclei_done(void *arg) {
  leaf_part *part = arg;
  leaf *l = part->owner;
  starpu_data_release(part->handle);
  size_t len = l->owner->features ? (size_t)l->nuclei * WSISA_NF_ROW(l->data->nchannels) : 0;
  if (len) {
    l->rows = malloc(len * sizeof *l->rows);
    l->failed = !l->rows;
  }
  if (len && l->rows) {
    leaf_part *rows = &l->part[PART_ROWS];
    rows->owner = l;
    starpu_vector_data_register(&rows->handle, STARPU_MAIN_RAM, (uintptr_t)l->rows,
                                (uint32_t)len, sizeof *l->rows);
    /* on this worker's thread, under its unit's scope */
    wsisa_codelets_scope *was = wsisa_codelets_scope_set(l->owner->scope);
    l->failed = wsisa_workflow_reduce_submit(l->data, l->labels, rows->handle, NULL) ||
                starpu_data_acquire_cb(rows->handle, STARPU_R, leaf_part_done, rows);
    wsisa_codelets_scope_set(was);
  }
  /* nuclei_out: the labels stay for the unit's report */
  if (!l->owner->nuclei_out) {
    starpu_data_unregister_submit(l->labels);
    l->labels = NULL;
  }
  if (len && l->rows && !l->failed) return; /* the rows' arrival ends the path */
  leaf_arrived(l);
}

/* `seconds` from now on the clock of pthread_cond_timedwait (the paths'
 * condition keeps the default, CLOCK_REALTIME). */
static struct timespec deadline_in(double seconds) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  double whole = floor(seconds);
  t.tv_sec += (time_t)whole;
  t.tv_nsec += (long)((seconds - whole) * 1e9);
  if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
  return t;
}

/* One step of a wait on the paths' condition, p->lock held: with an on_wait
 * hook, wake after wait_period seconds at most and call it, unlocked. */
static void paths_wait_step(paths *p) {
  if (!p->on_wait) {
    pthread_cond_wait(&p->cond, &p->lock);
    return;
  }
  struct timespec until = deadline_in(p->wait_period);
  if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT) {
    pthread_mutex_unlock(&p->lock);
    p->on_wait(p->wait_ctx);
    pthread_mutex_lock(&p->lock);
  }
}

/* Wait until fewer than `limit` paths are active (limit 0: no bound); with
 * an on_wait hook, call it every wait_period seconds meanwhile, unlocked. */
static void paths_wait_below(paths *p, size_t limit) {
  if (!limit) return;
  pthread_mutex_lock(&p->lock);
  if (p->active < limit) {
    pthread_mutex_unlock(&p->lock);
    return;
  }
  double since = wsisa_now();
  p->waits++;
  while (p->active >= limit) paths_wait_step(p);
  p->waited += wsisa_now() - since;
  pthread_mutex_unlock(&p->lock);
}

static void paths_begin(paths *p) {
  pthread_mutex_lock(&p->lock);
  p->active++;
  if (p->active > p->peak) p->peak = p->active;
  pthread_mutex_unlock(&p->lock);
}

/* Wait for a unit's tasks to end, calling the on_wait hook meanwhile as a
 * wait for a path does: an MPI worker's heartbeat goes on through a long
 * unit. */
static void unit_wait(unit *u) {
  pthread_mutex_lock(&u->paths->lock);
  while (u->pending) paths_wait_step(u->paths);
  pthread_mutex_unlock(&u->paths->lock);
}

/* ---- units ---------------------------------------------------------------- */

static void unit_free(unit *u) {
  if (!u) return;
  for (size_t i = 0; i < u->nleaves; i++) {
    for (int k = 0; k < NPARTS; k++)
      if (u->leaves[i].part[k].handle) starpu_data_unregister(u->leaves[i].part[k].handle);
    if (u->leaves[i].labels) starpu_data_unregister_submit(u->leaves[i].labels);
    free(u->leaves[i].rows);
    free(u->leaves[i].spans);
  }
  /* with features, the leaves' reductions read the unit's own channels */
  if (u->owns_tile) wsisa_workflow_tile_release(&u->own_tile, u->normalize);
  free(u->leaves);
  free(u->skipped);
  free(u);
}

/* Submit one unit: the depth-first walk of its tree. */
static int unit_submit(unit *u, wsisa__tile_state *ts, const double *params,
                       const wsisa_exec_opts *o, wsisa_exec_stats *stats, wsisa_err *e) {
  const wsisa_reuse_tree *t = u->tree;
  const wsisa_tile_data *data = &ts->data;
  int rc = 0;
  if (!o->share_tile_stage) {
    if ((rc = wsisa_workflow_tile_submit_framed(ts->h_rgb, ts->rgb->width, ts->rgb->height,
                                                WSISA_TARGET_MPP / ts->data.length_scale,
                                                o->normalize, &ts->frame, &u->own_tile, e)))
      return rc;
    u->owns_tile = 1;
    u->normalize = o->normalize;
    /* the same pixels as the session's tile stage: the same objects */
    u->own_tile.objects = ts->objects;
    if (o->features && (rc = wsisa_workflow_channels_submit(&u->own_tile, 1, e))) return rc;
    stats->tile_stages++;
    data = &u->own_tile;
  }
  size_t nleaves = 0;
  for (size_t v = 1; v < t->n_nodes; v++) nleaves += t->nodes[v].level == t->k;
  u->leaves = calloc(nleaves ? nleaves : 1, sizeof *u->leaves);
  u->skipped = calloc(t->n_nodes, 1);
  if (!u->leaves || !u->skipped) return wsisa_error(e, WSISA_ENOMEM, "out of memory");

  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  size_t stack[WSISA_SEG_LEVELS + 1], depth = 0;
  for (size_t v = 1; v < t->n_nodes && !rc;) {
    const wsisa_reuse_node *n = &t->nodes[v];
    /* leave the subtrees that are finished: their outputs have no consumer left */
    while (depth && t->nodes[stack[depth - 1]].end <= v)
      wsisa_workflow_task_release((int)t->nodes[stack[--depth]].level, &path);
    const double *p = params + t->instances[n->first_instance] * WSISA_SEG_NPARAMS;
    if (n->level == 1) {
      int skip = 0;
      if ((rc = wsisa__tile_skip(ts, data, p, &skip, NULL, e))) break;
      if (skip) {
        /* the 90 % background rule: an empty mask, the subtree is not run */
        u->skipped[v] = 1;
        stats->skipped += n->end - v;
        v = n->end;
        continue;
      }
    }
    if (n->level == t->k) paths_wait_below(u->paths, o->active_paths);
    rc = wsisa_workflow_task_submit((int)n->level, p, data, &path, NULL, e);
    if (rc) break;
    stats->tasks++;
    stack[depth++] = v;
    if (n->level == t->k) {
      leaf *l = &u->leaves[u->nleaves++];
      l->node = v;
      l->owner = u;
      l->remaining = o->object_match ? 3 : 2;
      uint64_t *home[NPARTS] = {l->counts, &l->nuclei, l->match};
      const uint32_t len[NPARTS] = {3, 1, WSISA_MATCH_FIELDS};
      for (int k = 0; k < l->remaining; k++) {
        l->part[k].owner = l;
        starpu_vector_data_register(&l->part[k].handle, STARPU_MAIN_RAM, (uintptr_t)home[k],
                                    len[k], sizeof(uint64_t));
      }
      l->data = data;
      wsisa_measure m = {l->part[PART_COUNTS].handle, l->part[PART_NUCLEI].handle,
                         l->part[PART_MATCH].handle, ts->ref_labels,
                         o->features || o->nuclei_out ? &l->labels : NULL};
      /* a tile read with a halo measures the objects its core owns */
      starpu_data_handle_t owned = NULL;
      if ((rc = wsisa_workflow_own_submit(data, path.final, &owned, e))) break;
      /* without a reference (nuclei_out) the leaf is its own */
      rc = wsisa_workflow_measure_submit(data, owned, ts->ref ? ts->ref : owned, &m, e);
      if (owned != path.final) starpu_data_unregister_submit(owned);
      if (rc) break;
      paths_begin(u->paths);
      pthread_mutex_lock(&u->paths->lock);
      u->pending++;
      pthread_mutex_unlock(&u->paths->lock);
      for (int k = 0, n = l->remaining; k < n && !rc; k++)
        if (starpu_data_acquire_cb(l->part[k].handle, STARPU_R,
                                   k == PART_NUCLEI && l->labels && o->features
                                       ? leaf_nuclei_done
                                       : leaf_part_done,
                                   &l->part[k]))
          rc = wsisa_error(e, WSISA_ERUNTIME, "cannot wait for a comparison");
      if (rc) break;
    }
    v++;
  }
  while (depth) wsisa_workflow_task_release((int)t->nodes[stack[--depth]].level, &path);
  if (u->owns_tile && !o->features) {
    wsisa_workflow_tile_release(&u->own_tile, o->normalize);
    u->owns_tile = 0;
  }
  return rc;
}

/* A leaf's nuclei as spans (nuclei_out), on the submitting thread: its
 * labels are home by now (its measures, which came home, ran after them). */
static int leaf_spans(leaf *l, wsisa_err *e) {
  if (starpu_data_acquire(l->labels, STARPU_R))
    return wsisa_error(e, WSISA_ERUNTIME, "cannot read the nuclei's labels");
  const int32_t *px = (const int32_t *)starpu_matrix_get_local_ptr(l->labels);
  const uint32_t nx = starpu_matrix_get_nx(l->labels), ny = starpu_matrix_get_ny(l->labels);
  const size_t ld = starpu_matrix_get_local_ld(l->labels);
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (uint32_t y = 0; y < ny; y++) {
      const int32_t *row = px + (size_t)y * ld;
      for (uint32_t x = 0; x < nx;) {
        const int32_t v = row[x];
        uint32_t end = x + 1;
        while (end < nx && row[end] == v) end++;
        if (v > 0 && pass) {
          uint32_t *sp = l->spans + n * WSISA_SPAN_FIELDS;
          sp[WSISA_SPAN_ROW] = y, sp[WSISA_SPAN_X] = x, sp[WSISA_SPAN_LEN] = end - x;
          sp[WSISA_SPAN_LABEL] = (uint32_t)v;
        }
        n += v > 0;
        x = end;
      }
    }
    if (!pass && !(l->spans = malloc((n ? n : 1) * WSISA_SPAN_FIELDS * sizeof *l->spans)))
      break;
  }
  starpu_data_release(l->labels);
  if (!l->spans) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  l->nspans = n;
  return 0;
}

/* Gather a finished unit's counts per run and hand them over. */
static int unit_report(unit *u, wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  const wsisa_reuse_tree *t = u->tree;
  size_t n = t->n_instances;
  size_t *runs = malloc((n ? n : 1) * sizeof *runs);
  wsisa_counts *counts = calloc(n ? n : 1, sizeof *counts);
  if (!runs || !counts) {
    free(runs);
    free(counts);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  size_t m = 0;
  /* the tile's reference counts, home by now (the leaves' measures ran after it) */
  wsisa__tile_reference_wait(u->ts);
  const uint64_t ref_nuclei = u->ts->ref_nuclei;
  int tissue_rc = u->nuclei_out ? 0 : wsisa__tile_reference_tissue(u->ts, e);
  for (size_t i = 0; i < u->nleaves && u->nuclei_out && !tissue_rc; i++)
    tissue_rc = leaf_spans(&u->leaves[i], e);
  if (tissue_rc) {
    free(runs);
    free(counts);
    return tissue_rc;
  }
  const uint64_t ref_tissue = u->ts->ref_tissue;
  for (size_t i = 0; i < u->nleaves; i++)
    if (u->leaves[i].failed) {
      free(runs);
      free(counts);
      return wsisa_error(e, WSISA_ERUNTIME, "cannot compute the nucleus features");
    }
  for (size_t i = 0; i < u->nleaves; i++)
    wsisa__tile_rows_to_core(u->leaves[i].rows, u->leaves[i].nuclei, WSISA_NF_ROW(u->leaves[i].data->nchannels),
                 u->leaves[i].data);
  for (size_t i = 0; i < u->nleaves; i++) {
    const wsisa_reuse_node *leaf_node = &t->nodes[u->leaves[i].node];
    for (size_t j = 0; j < leaf_node->n_instances; j++) {
      runs[m] = t->instances[leaf_node->first_instance + j];
      const leaf *l = &u->leaves[i];
      wsisa_counts *c = &counts[m++];
      *c = (wsisa_counts){.both = l->counts[0], .run = l->counts[1], .ref = l->counts[2],
                          .nuclei = l->nuclei, .ref_nuclei = ref_nuclei,
                          .ref_tissue = ref_tissue,
                          .features = l->rows, .ref_features = u->ref_features,
                          .feature_cols = WSISA_NF_ROW(l->data->nchannels),
                          .spans = l->spans, .nspans = l->nspans};
      memcpy(c->match, l->match, sizeof c->match);
    }
  }
  for (size_t v = 1; v < t->n_nodes; v++) {
    if (t->nodes[v].level != 1 || !u->skipped[v]) continue;
    const wsisa_reuse_node *nd = &t->nodes[v];
    /* an empty mask: every reference object unmatched, its pixels in no
     * intersection (the reference's objects cover its mask) */
    const uint64_t ref = u->ts->ref_pixels;
    for (size_t j = 0; j < nd->n_instances; j++) {
      runs[m] = t->instances[nd->first_instance + j];
      wsisa_counts *c = &counts[m++];
      *c = (wsisa_counts){.ref = ref, .ref_nuclei = ref_nuclei, .ref_tissue = ref_tissue,
                          .ref_features = u->ref_features};
      /* an empty mask: no span to send (the tissue is filled in below) */
      if (u->object_match) {
        c->match[WSISA_MATCH_AREA_REF] = ref;
        c->match[WSISA_MATCH_FN] = ref_nuclei;
        c->match[WSISA_MATCH_AJI_UNION] = ref;
      }
    }
  }
  int rc = 0;
  /* nuclei_out: the tissue each run's background rule found in the core
   * (decided when its level 1 was submitted: no count waits here) */
  for (size_t i = 0; i < m && u->nuclei_out && !rc; i++) {
    int skip = 0;
    rc = wsisa__tile_skip(u->ts, &u->ts->data, u->params + runs[i] * WSISA_SEG_NPARAMS, &skip,
                   &counts[i].tissue, e);
  }
  if (!rc) rc = on_unit ? on_unit(ctx, u->tile, u->bucket, runs, counts, m, e) : 0;
  free(runs);
  free(counts);
  return rc;
}

/* ---- sessions: units handed out one at a time ---------------------------- */

#define ANY_KIND WSISA_KINDS

/* A scope's counters, read at once. */
typedef struct scope_counts {
  uint64_t submitted, ended, on[WSISA_KINDS], astray, fixed;
} scope_counts;

static scope_counts scope_read(wsisa_codelets_scope *c) {
  return (scope_counts){atomic_load(&c->submitted), atomic_load(&c->ended),
                        {atomic_load(&c->on_cpu), atomic_load(&c->on_opencl)},
                        atomic_load(&c->astray), atomic_load(&c->fixed)};
}

struct wsisa_exec_session {
  const wsisa_tile_ref *tiles;
  size_t ntiles;
  const double *params;
  const wsisa_reuse_buckets *buckets;
  wsisa_exec_opts opts;
  paths ps;
  /* the tiles open at once: tile[i] is ts[i]'s, ntiles when the place is
   * free; opened[i] orders them by opening */
  wsisa__tile_state ts[WSISA_EXEC_MAX_OPEN_TILES];
  size_t tile[WSISA_EXEC_MAX_OPEN_TILES], opened[WSISA_EXEC_MAX_OPEN_TILES], opens;
  size_t nopen; /* the places: wsisa_exec_open_tiles */
  /* opened ahead of its first unit (wsisa_exec_session_open_ahead), no unit
   * submitted yet: kept until one is */
  int ahead[WSISA_EXEC_MAX_OPEN_TILES];
  unsigned char *moved; /* per tile: its units moved here (wsisa_exec_session_moved) */
  /* the distinct (B, G, R) of the runs, whose counts each tile prefetches,
   * and the level-2 reconstructions each tile stage makes for them
   * (wsisa_tile_frame.recon_conns) */
  double (*bgr)[3];
  size_t nbgr;
  int recon_conns;
  unit **queue;
  size_t nq, cap;
  wsisa_exec_stats stats; /* since the last wsisa_exec_session_stats */
  wsisa_annotation *annot; /* the last annotation read, for the next tile of its slide */
  /* with CPU and OpenCL workers: the placement in force (-1: one kind of
   * worker, nothing to choose), the scopes tasks are submitted under (one
   * per kind for unit placement, ANY_KIND's for task placement, which only
   * counts) and what their counters held when last taken */
  int placement;
  wsisa_codelets_scope scope[WSISA_KINDS + 1];
  scope_counts taken[WSISA_KINDS + 1];
};

/* The distinct (B, G, R) of the buckets' runs, in the order of their
 * instances (engine/simulate.c prefetches the same), and the level-2
 * reconstructions the runs and the reference ask for. */
static int bgr_distinct(wsisa_exec_session *s) {
  const wsisa_reuse_buckets *b = s->buckets;
  size_t ni = b->start[b->n_buckets];
  s->recon_conns = wsisa_workflow_recon_conns(NULL, 0);
  if (!ni) return 0;
  if (!(s->bgr = malloc(ni * sizeof *s->bgr))) return -1;
  for (size_t i = 0; i < ni; i++) {
    const double *p = s->params + b->instances[i] * WSISA_SEG_NPARAMS;
    s->recon_conns |= wsisa_workflow_recon_conns(p, 1);
    size_t k = 0;
    while (k < s->nbgr && !(s->bgr[k][0] == p[WSISA_P_B] && s->bgr[k][1] == p[WSISA_P_G] &&
                            s->bgr[k][2] == p[WSISA_P_R]))
      k++;
    if (k == s->nbgr) {
      s->bgr[k][0] = p[WSISA_P_B], s->bgr[k][1] = p[WSISA_P_G], s->bgr[k][2] = p[WSISA_P_R];
      s->nbgr++;
    }
  }
  return 0;
}

int wsisa_exec_session_new(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                           const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                           wsisa_exec_session **out, wsisa_err *e) {
  wsisa_exec_session *s = calloc(1, sizeof *s);
  if (!s) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->tiles = tiles;
  s->ntiles = ntiles;
  s->params = params;
  s->buckets = buckets;
  s->opts = *opts;
  pthread_mutex_init(&s->ps.lock, NULL);
  pthread_cond_init(&s->ps.cond, NULL);
  s->nopen = wsisa_exec_open_tiles(opts, (size_t)(wsisa_runtime_ncpu() + wsisa_runtime_nopencl()));
  for (size_t i = 0; i < WSISA_EXEC_MAX_OPEN_TILES; i++) s->tile[i] = ntiles;
  /* a placement to choose only with both kinds of worker, both allowed */
  const uint32_t both = STARPU_CPU | STARPU_OPENCL;
  s->placement = wsisa_runtime_ncpu() > 0 && wsisa_runtime_nopencl() > 0 &&
                         (wsisa_codelets_where() & both) == both
                     ? opts->placement
                     : -1;
  /* the models' seconds per task, over the kind's workers */
  const int workers[WSISA_KINDS] = {wsisa_runtime_ncpu(), wsisa_runtime_nopencl()};
  for (int k = 0; k < WSISA_KINDS; k++)
    if (workers[k] > 0) {
      s->ps.load[k].prior = opts->kind_task_seconds[k] / workers[k];
      s->ps.load[k].workers = workers[k];
    }
  s->scope[WSISA_KIND_CPU].where = STARPU_CPU;
  s->scope[WSISA_KIND_OPENCL].where = STARPU_OPENCL;
  s->scope[ANY_KIND].where = both;
  *out = s;
  if (!(s->moved = calloc(ntiles ? ntiles : 1, 1)) || bgr_distinct(s)) {
    wsisa_exec_session_free(s);
    *out = NULL;
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  return 0;
}

/* The first unit of the queue whose leaves have all arrived, oldest first;
 * s->nq when none has. s->ps.lock held. */
static size_t first_finished(const wsisa_exec_session *s) {
  size_t i = 0;
  while (i < s->nq && s->queue[i]->pending) i++;
  return i;
}

/* first_finished; with `wait`, waits until one has (the queue not empty). */
static size_t session_finished(wsisa_exec_session *s, int wait) {
  pthread_mutex_lock(&s->ps.lock);
  size_t i;
  while ((i = first_finished(s)) == s->nq && wait) paths_wait_step(&s->ps);
  pthread_mutex_unlock(&s->ps.lock);
  return i;
}

/* Report finished units until at most `keep` are in flight, whichever end
 * first (the oldest first among those ended); with `wait`, wait for one to
 * end when none has, else stop. Not the oldest unit first: with one unit
 * per worker in flight, a long unit at the head kept the workers that had
 * ended theirs without a next one until it ended too. */
static int session_report(wsisa_exec_session *s, size_t keep, int wait,
                          wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  int rc = 0;
  while (s->nq > keep && !rc) {
    size_t i = session_finished(s, 0);
    if (i == s->nq) {
      if (!wait) break;
      double since = wsisa_now();
      i = session_finished(s, 1);
      s->stats.unit_waits++;
      s->stats.unit_wait_s += wsisa_now() - since;
    }
    rc = unit_report(s->queue[i], on_unit, ctx, e);
    unit_free(s->queue[i]);
    s->nq--;
    memmove(s->queue + i, s->queue + i + 1, (s->nq - i) * sizeof *s->queue);
  }
  return rc;
}

int wsisa_exec_session_poll(wsisa_exec_session *s, size_t keep, int wait,
                            wsisa_exec_unit_fn on_unit, void *ctx, size_t *in_flight,
                            wsisa_err *e) {
  int rc = session_report(s, keep, wait, on_unit, ctx, e);
  if (in_flight) *in_flight = s->nq;
  return rc;
}

/* Close the tile at place i: its units have all been reported. */
static void session_close_tile(wsisa_exec_session *s, size_t i) {
  if (s->tile[i] == s->ntiles) return;
  wsisa__tile_objects_count(&s->ts[i], &s->stats);
  wsisa__tile_close(&s->ts[i], &s->opts);
  s->tile[i] = s->ntiles;
  s->ahead[i] = 0;
}

/* A place a tile may open at: a free one, else the tile opened first among
 * those with no unit in flight, other than `keep` (NONE: any); NONE while
 * every open tile has one. Nothing is closed. */
static size_t place_free(const wsisa_exec_session *s, size_t keep) {
  size_t best = (size_t)-1;
  for (size_t i = 0; i < s->nopen; i++) {
    if (s->tile[i] == s->ntiles) return i;
    int busy = s->tile[i] == keep;
    for (size_t q = 0; q < s->nq && !busy; q++) busy = s->queue[q]->place == i;
    if (!busy && (best == (size_t)-1 || s->opened[i] < s->opened[best])) best = i;
  }
  return best;
}

/* A place for a new tile (place_free), its tile closed. */
static size_t session_place(wsisa_exec_session *s) {
  size_t at = place_free(s, (size_t)-1);
  if (at != (size_t)-1) session_close_tile(s, at);
  return at;
}

/* A place for a tile opened ahead, without waiting (place_free, the current
 * tile `keep` kept); NONE while a tile opened ahead waits for its first unit
 * (one at a time), or under unit placement. */
static size_t place_ahead(const wsisa_exec_session *s, size_t keep) {
  if (s->placement == WSISA_PLACEMENT_UNIT) return (size_t)-1;
  for (size_t i = 0; i < s->nopen; i++)
    if (s->ahead[i]) return (size_t)-1;
  return place_free(s, keep);
}

int wsisa_exec_session_can_open_ahead(const wsisa_exec_session *s, size_t keep) {
  return place_ahead(s, keep) != (size_t)-1;
}

/* The place of `tile`, opened there under the calling thread's scope when
 * not open yet (*opened set): a place is freed first if none is. */
static int session_open(wsisa_exec_session *s, size_t tile, size_t *place, int *opened,
                        wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  size_t at = 0;
  int rc = 0;
  *opened = 0;
  while (at < s->nopen && s->tile[at] != tile) at++;
  if (at == s->nopen) {
    /* a tile's pixels must outlive every unit that reads them: units are
     * waited for, whichever end first, until an open tile has none left */
    while ((at = session_place(s)) == (size_t)-1)
      if ((rc = wsisa_exec_session_poll(s, s->nq - 1, 1, on_unit, ctx, NULL, e))) return rc;
    *opened = 1;
  }
  *place = at;
  return 0;
}

/* The kind unit placement gives a unit of cost `cost` (-1: task placement,
 * or one kind of worker), and the scope its tasks go under. */
static int session_kind(wsisa_exec_session *s, double cost, wsisa_codelets_scope **scope) {
  *scope = NULL;
  if (s->placement < 0) return -1;
  if (s->placement == WSISA_PLACEMENT_TASK) {
    *scope = &s->scope[ANY_KIND];
    return -1;
  }
  /* each kind's speed: the tasks of its units its workers have ended */
  const wsisa_codelets_scope *cpu = &s->scope[WSISA_KIND_CPU],
                             *ocl = &s->scope[WSISA_KIND_OPENCL];
  pthread_mutex_lock(&s->ps.lock);
  s->ps.load[WSISA_KIND_CPU].tasks = (double)atomic_load(&cpu->on_cpu);
  s->ps.load[WSISA_KIND_CPU].task_seconds = (double)atomic_load(&cpu->ns_on_cpu) * 1e-9;
  s->ps.load[WSISA_KIND_OPENCL].tasks = (double)atomic_load(&ocl->on_opencl);
  s->ps.load[WSISA_KIND_OPENCL].task_seconds = (double)atomic_load(&ocl->ns_on_opencl) * 1e-9;
  const double placed = (double)(atomic_load(&cpu->placed) + atomic_load(&ocl->placed));
  const double per_cost = s->ps.cost_given > 0 ? placed / s->ps.cost_given : 0;
  int k = wsisa_exec_placement_choose(s->ps.load, cost, per_cost);
  pthread_mutex_unlock(&s->ps.lock);
  *scope = &s->scope[k];
  return k;
}

/* Open `tile` at place `at` (free) under the calling thread's scope. */
static int session_open_at(wsisa_exec_session *s, size_t tile, size_t at, wsisa_err *e) {
  int rc = wsisa__tile_open(&s->tiles[tile], &s->opts, s->recon_conns, &s->ts[at],
                     (const double(*)[3])s->bgr, s->nbgr, &s->stats, &s->annot, e);
  s->ts[at].moved = s->moved[tile];
  s->stats.tile_stages_moved += s->moved[tile];
  s->tile[at] = tile;
  s->opened[at] = s->opens++;
  if (rc) {
    /* what it submitted may still run */
    starpu_task_wait_for_all();
    session_close_tile(s, at);
  }
  return rc;
}

int wsisa_exec_session_open_ahead(wsisa_exec_session *s, size_t tile, size_t keep,
                                  wsisa_err *e) {
  if (tile >= s->ntiles) return 0;
  for (size_t i = 0; i < s->nopen; i++)
    if (s->tile[i] == tile) return 0;
  size_t at = place_ahead(s, keep);
  if (at == (size_t)-1) return 0;
  session_close_tile(s, at);
  wsisa_codelets_scope *was =
      wsisa_codelets_scope_set(s->placement < 0 ? NULL : &s->scope[ANY_KIND]);
  int rc = session_open_at(s, tile, at, e);
  wsisa_codelets_scope_set(was);
  if (!rc) {
    s->ahead[at] = 1;
    s->stats.tiles_opened_ahead++;
  }
  return rc;
}

void wsisa_exec_session_moved(wsisa_exec_session *s, size_t tile) {
  if (tile < s->ntiles) s->moved[tile] = 1;
}

int wsisa_exec_session_submit(wsisa_exec_session *s, size_t tile, size_t bucket,
                              wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  if (tile >= s->ntiles || bucket >= s->buckets->n_buckets)
    return wsisa_error(e, WSISA_EINTERNAL, "unit (tile %zu, bucket %zu) is not in the study",
                       tile, bucket);
  size_t at;
  int opening;
  int rc = session_open(s, tile, &at, &opening, on_unit, ctx, e);
  if (rc) return rc;
  if (s->nq == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 4;
    unit **q = realloc(s->queue, cap * sizeof *q);
    if (!q) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    s->queue = q;
    s->cap = cap;
  }
  unit *u = calloc(1, sizeof *u);
  if (!u) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  u->tile = tile;
  u->bucket = bucket;
  u->tree = s->buckets->trees[bucket];
  u->paths = &s->ps;
  u->place = at;
  u->ts = &s->ts[at];
  u->object_match = s->opts.object_match;
  u->params = s->params;
  u->features = s->opts.features;
  u->nuclei_out = s->opts.nuclei_out;
  /* the tile's stage goes with its first unit: the reference's path is then
   * that unit's too */
  u->cost = wsisa_exec_unit_cost(u->tree) + (opening ? WSISA_EXEC_TILE_STAGE_COST : 0);
  u->kind = session_kind(s, u->cost, &u->scope);
  if (u->kind >= 0) {
    s->stats.units_on[u->kind]++;
    if (opening) s->stats.tile_stages_on[u->kind]++;
  }
  wsisa_codelets_scope *was = wsisa_codelets_scope_set(u->scope);
  if (opening && (rc = session_open_at(s, tile, at, e))) {
    wsisa_codelets_scope_set(was);
    free(u);
    return rc;
  }
  s->ahead[at] = 0;
  u->ref_features = s->ts[at].ref_features;
  pthread_mutex_lock(&s->ps.lock);
  unit_started(&s->ps, u);
  pthread_mutex_unlock(&s->ps.lock);
  rc = unit_submit(u, &s->ts[at], s->params, &s->opts, &s->stats, e);
  wsisa_codelets_scope_set(was);
  pthread_mutex_lock(&s->ps.lock);
  u->submitted = 1;
  if (!u->pending) unit_ended(&s->ps, u);
  pthread_mutex_unlock(&s->ps.lock);
  if (rc) {
    unit_wait(u);
    unit_free(u);
    return rc;
  }
  s->queue[s->nq++] = u;
  return 0;
}

void wsisa_exec_session_on_wait(wsisa_exec_session *s, void (*fn)(void *), void *ctx,
                                double period) {
  pthread_mutex_lock(&s->ps.lock);
  s->ps.on_wait = fn;
  s->ps.wait_ctx = ctx;
  s->ps.wait_period = period;
  pthread_mutex_unlock(&s->ps.lock);
}

void wsisa_exec_session_idle(wsisa_exec_session *s, double seconds) {
  struct timespec until = deadline_in(seconds);
  pthread_mutex_lock(&s->ps.lock);
  /* a leaf's end broadcasts: a unit's end wakes this thread at once */
  if (s->nq)
    while (first_finished(s) == s->nq &&
           pthread_cond_timedwait(&s->ps.cond, &s->ps.lock, &until) != ETIMEDOUT) {
    }
  pthread_mutex_unlock(&s->ps.lock);
  if (!s->nq) clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, NULL);
}

void wsisa_exec_session_stats(wsisa_exec_session *s, wsisa_exec_stats *stats) {
  pthread_mutex_lock(&s->ps.lock);
  s->stats.peak_paths = s->ps.peak;
  s->stats.path_waits = s->ps.waits;
  s->stats.path_wait_s = s->ps.waited;
  s->ps.waits = 0;
  s->ps.waited = 0;
  pthread_mutex_unlock(&s->ps.lock);
  for (size_t i = 0; i < s->nopen; i++)
    if (s->tile[i] != s->ntiles) wsisa__tile_objects_count(&s->ts[i], &s->stats);
  /* the tasks counted under the scopes since they were last taken */
  s->stats.placed_by_unit = s->placement == WSISA_PLACEMENT_UNIT;
  for (int i = 0; i <= ANY_KIND; i++) {
    const scope_counts now = scope_read(&s->scope[i]), *was = &s->taken[i];
    s->stats.tasks_submitted += now.submitted - was->submitted;
    s->stats.tasks_ended += now.ended - was->ended;
    for (int k = 0; k < WSISA_KINDS; k++) s->stats.tasks_on[k] += now.on[k] - was->on[k];
    s->stats.tasks_astray += now.astray - was->astray;
    s->stats.tasks_fixed += now.fixed - was->fixed;
    s->taken[i] = now;
  }
  *stats = s->stats;
  memset(&s->stats, 0, sizeof s->stats);
}

void wsisa_exec_session_free(wsisa_exec_session *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nq; i++) {
    unit_wait(s->queue[i]);
    unit_free(s->queue[i]);
  }
  /* after an error, tasks no leaf waits for may still be running */
  starpu_task_wait_for_all();
  for (size_t i = 0; i < s->nopen; i++) session_close_tile(s, i);
  free(s->bgr);
  free(s->moved);
  wsisa_annotation_free(s->annot);
  pthread_mutex_destroy(&s->ps.lock);
  pthread_cond_destroy(&s->ps.cond);
  free(s->queue);
  free(s);
}
