/* The MPI transport's bytes (engine/exec/dist.c): a growing byte buffer and
 * the job every rank must agree on, written by the manager and read back by
 * each worker. No MPI here: only what travels in a message. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/exec/exec_internal.h"

/* ---- byte buffers ---------------------------------------------------------- */

void wsisa__buf_put(wsisa__buf *b, const void *x, size_t n) {
  if (b->bad) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) {
      b->bad = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, x, n);
  b->n += n;
}

void wsisa__buf_put_u64(wsisa__buf *b, uint64_t v) { wsisa__buf_put(b, &v, sizeof v); }

void wsisa__buf_get(wsisa__buf *b, void *x, size_t n) {
  if (b->bad || n > b->n - b->at) {
    b->bad = 1;
    memset(x, 0, n);
    return;
  }
  memcpy(x, b->p + b->at, n);
  b->at += n;
}

uint64_t wsisa__buf_get_u64(wsisa__buf *b) {
  uint64_t v;
  wsisa__buf_get(b, &v, sizeof v);
  return v;
}

void wsisa__buf_free(wsisa__buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* ---- the job: what every rank must agree on --------------------------------- */

void wsisa__dist_job_encode(wsisa__buf *b, const wsisa_tile_ref *tiles, size_t ntiles,
                            const double *params, const wsisa_reuse_buckets *bk,
                            const wsisa_exec_opts *o, size_t paths_asked, uint64_t memory_limit,
                            double timeout) {
  wsisa__buf_put_u64(b, ntiles);
  for (size_t t = 0; t < ntiles; t++) {
    const wsisa_tile_ref *r = &tiles[t];
    size_t len = strlen(r->path);
    wsisa__buf_put_u64(b, len);
    wsisa__buf_put(b, r->path, len);
    int32_t ints[3] = {(int32_t)r->kind, r->width, r->height};
    wsisa__buf_put(b, ints, sizeof ints);
    wsisa__buf_put(b, &r->x, sizeof r->x);
    wsisa__buf_put(b, &r->y, sizeof r->y);
    /* the scale and the level-0 rectangle as bytes, like the options */
    wsisa__buf_put_u64(b, sizeof r->scale);
    wsisa__buf_put(b, &r->scale, sizeof r->scale);
    wsisa__buf_put(b, &r->level0, sizeof r->level0);
    int32_t has_stats = r->has_stats;
    wsisa__buf_put(b, &has_stats, sizeof has_stats);
    wsisa__buf_put(b, r->stats, sizeof r->stats);
    /* the reference: the annotation's spec, its strings apart */
    const wsisa_annot_spec *a = r->annot;
    int32_t kind = a ? (int32_t)a->kind : 0;
    wsisa__buf_put(b, &kind, sizeof kind);
    if (!a) continue;
    wsisa_annot_spec plain = *a;
    plain.path = plain.input = NULL;
    wsisa__buf_put_u64(b, sizeof plain);
    wsisa__buf_put(b, &plain, sizeof plain);
    const char *strs[2] = {a->path, a->input};
    for (int k = 0; k < 2; k++) {
      wsisa__buf_put_u64(b, strlen(strs[k]));
      wsisa__buf_put(b, strs[k], strlen(strs[k]));
    }
  }
  size_t nruns = 0;
  for (size_t i = 0; i < bk->start[bk->n_buckets]; i++)
    if (bk->instances[i] + 1 > nruns) nruns = bk->instances[i] + 1;
  wsisa__buf_put_u64(b, nruns);
  wsisa__buf_put(b, params, nruns * WSISA_SEG_NPARAMS * sizeof *params);
  wsisa__buf_put_u64(b, bk->n_buckets);
  for (size_t i = 0; i <= bk->n_buckets; i++) wsisa__buf_put_u64(b, bk->start[i]);
  for (size_t i = 0; i < bk->start[bk->n_buckets]; i++) wsisa__buf_put_u64(b, bk->instances[i]);
  wsisa__buf_put_u64(b, paths_asked);
  wsisa__buf_put_u64(b, memory_limit);
  /* the options as bytes: fields added to them travel without a change here */
  wsisa__buf_put_u64(b, sizeof *o);
  wsisa__buf_put(b, o, sizeof *o);
  wsisa__buf_put(b, &timeout, sizeof timeout);
}

void wsisa__dist_job_free(wsisa__dist_job *j) {
  for (size_t t = 0; j->paths && t < j->ntiles; t++) free(j->paths[t]);
  for (size_t t = 0; j->annot_strings && t < 2 * j->ntiles; t++) free(j->annot_strings[t]);
  free(j->paths);
  free(j->annots);
  free(j->annot_strings);
  free(j->tiles);
  free(j->params);
  if (j->buckets) wsisa_reuse_buckets_free(j->buckets);
  memset(j, 0, sizeof *j);
}

/* Each bucket's merged tree, rebuilt from its runs: the trie of their task
 * keys, as the manager's plan has it. */
static int job_trees(wsisa__dist_job *j, wsisa_err *e) {
  wsisa_reuse_buckets *b = j->buckets;
  int level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = wsisa_seg_param_level(p);
  uint64_t *keys = malloc((j->nruns ? j->nruns : 1) * WSISA_SEG_LEVELS * sizeof *keys);
  if (!keys) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  int rc = wsisa_workflow_keys(j->params, j->nruns, WSISA_SEG_NPARAMS, level, keys);
  for (size_t k = 0; k < b->n_buckets && !rc; k++)
    rc = wsisa_reuse_tree_build(keys, WSISA_SEG_LEVELS, b->instances + b->start[k],
                                b->start[k + 1] - b->start[k], &b->trees[k]);
  free(keys);
  return rc ? wsisa_error(e, WSISA_ENOMEM, "cannot rebuild the manager's task trees") : 0;
}

int wsisa__dist_job_decode(wsisa__buf *b, wsisa__dist_job *j, wsisa_err *e) {
  memset(j, 0, sizeof *j);
  j->ntiles = wsisa__buf_get_u64(b);
  if (b->bad || j->ntiles > b->n) goto bad;
  j->tiles = calloc(j->ntiles ? j->ntiles : 1, sizeof *j->tiles);
  j->paths = calloc(j->ntiles ? j->ntiles : 1, sizeof *j->paths);
  j->annots = calloc(j->ntiles ? j->ntiles : 1, sizeof *j->annots);
  j->annot_strings = calloc(2 * (j->ntiles ? j->ntiles : 1), sizeof *j->annot_strings);
  if (!j->tiles || !j->paths || !j->annots || !j->annot_strings) goto nomem;
  for (size_t t = 0; t < j->ntiles; t++) {
    size_t len = wsisa__buf_get_u64(b);
    if (b->bad || len > b->n - b->at) goto bad;
    if (!(j->paths[t] = calloc(len + 1, 1))) goto nomem;
    wsisa__buf_get(b, j->paths[t], len);
    int32_t ints[3];
    wsisa__buf_get(b, ints, sizeof ints);
    wsisa_tile_ref *r = &j->tiles[t];
    r->path = j->paths[t];
    r->kind = (wsisa_input_kind)ints[0], r->width = ints[1], r->height = ints[2];
    wsisa__buf_get(b, &r->x, sizeof r->x);
    wsisa__buf_get(b, &r->y, sizeof r->y);
    if (wsisa__buf_get_u64(b) != sizeof r->scale) goto bad;
    wsisa__buf_get(b, &r->scale, sizeof r->scale);
    wsisa__buf_get(b, &r->level0, sizeof r->level0);
    int32_t has_stats = 0;
    wsisa__buf_get(b, &has_stats, sizeof has_stats);
    wsisa__buf_get(b, r->stats, sizeof r->stats);
    r->has_stats = has_stats != 0;
    int32_t kind;
    wsisa__buf_get(b, &kind, sizeof kind);
    if (b->bad) goto bad;
    if (!kind) continue;
    wsisa_annot_spec *a = &j->annots[t];
    if (wsisa__buf_get_u64(b) != sizeof *a) goto bad;
    wsisa__buf_get(b, a, sizeof *a);
    for (int k = 0; k < 2; k++) {
      size_t slen = wsisa__buf_get_u64(b);
      if (b->bad || slen > b->n - b->at) goto bad;
      if (!(j->annot_strings[2 * t + k] = calloc(slen + 1, 1))) goto nomem;
      wsisa__buf_get(b, j->annot_strings[2 * t + k], slen);
    }
    if (a->kind != (wsisa_annot_kind)kind) goto bad;
    a->path = j->annot_strings[2 * t];
    a->input = j->annot_strings[2 * t + 1];
    r->annot = a;
  }
  j->nruns = wsisa__buf_get_u64(b);
  if (b->bad || j->nruns > b->n / (WSISA_SEG_NPARAMS * sizeof(double))) goto bad;
  if (!(j->params = malloc((j->nruns ? j->nruns : 1) * WSISA_SEG_NPARAMS * sizeof *j->params)))
    goto nomem;
  wsisa__buf_get(b, j->params, j->nruns * WSISA_SEG_NPARAMS * sizeof *j->params);
  size_t nb = wsisa__buf_get_u64(b);
  if (b->bad || nb > b->n) goto bad;
  /* the bucket starts say how many instances follow: peek at the last */
  size_t at = b->at;
  if (nb > (b->n - at) / sizeof(uint64_t)) goto bad;
  b->at += nb * sizeof(uint64_t);
  size_t ninst = wsisa__buf_get_u64(b);
  b->at = at;
  if (b->bad || ninst > b->n) goto bad;
  if (wsisa_reuse_buckets_new(nb, ninst, WSISA_SEG_LEVELS, &j->buckets)) goto nomem;
  wsisa_reuse_buckets *bk = j->buckets;
  for (size_t i = 0; i <= nb; i++) bk->start[i] = wsisa__buf_get_u64(b);
  for (size_t i = 0; i < ninst; i++) {
    bk->instances[i] = wsisa__buf_get_u64(b);
    if (bk->instances[i] >= j->nruns) goto bad;
  }
  for (size_t i = 0; i < nb; i++)
    if (bk->start[i] > bk->start[i + 1]) goto bad;
  size_t paths = wsisa__buf_get_u64(b);
  uint64_t limit = wsisa__buf_get_u64(b);
  if (wsisa__buf_get_u64(b) != sizeof j->opts) goto bad;
  wsisa__buf_get(b, &j->opts, sizeof j->opts);
  wsisa__buf_get(b, &j->timeout, sizeof j->timeout);
  if (b->bad) goto bad;
  /* K as rank 0 derives its own: the memory limit holds on every rank */
  wsisa_machine mc;
  wsisa_machine_read(&mc);
  const uint64_t baseline = wsisa_rss_now();
  j->opts.active_paths = wsisa_exec_active_paths(paths, mc.memory_available, baseline, &limit,
                                                 j->tiles, j->ntiles, &j->opts, NULL);
  if (!j->opts.active_paths) {
    wsisa_log(WSISA_LOG_WARN, "mpi", "memory limit %.0f MiB is below one active path here; K = 1",
              (double)limit / 1048576.0);
    j->opts.active_paths = 1;
  }
  /* the object store's share on this rank, as rank 0 derives its own */
  j->opts.object_store_bytes =
      j->opts.object_reuse ? wsisa_exec_object_store_bytes(limit, baseline) : 0;
  wsisa_log(WSISA_LOG_INFO, "mpi", "K = %zu active paths (memory limit %.0f MiB)",
            j->opts.active_paths, (double)limit / 1048576.0);
  return job_trees(j, e);
bad:
  return wsisa_error(e, WSISA_EFORMAT, "the manager's job message is malformed");
nomem:
  return wsisa_error(e, WSISA_ENOMEM, "out of memory");
}
