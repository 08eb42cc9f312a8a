/* Task-level merging entry point: run the chosen algorithm over the distinct
 * instances, then hand back buckets of original instances, each with its
 * merged task tree and cost. */
#include <stdlib.h>
#include <string.h>

#include "reuse/reuse_private.h"

const char *const wsisa_reuse_strategy_names[WSISA_REUSE_NSTRATEGIES] = {
    "none", "stage", "naive", "sca", "rtma", "trtma"};

int wsisa_reuse_strategy_parse(const char *name, wsisa_reuse_strategy *out) {
  for (int s = 0; s < WSISA_REUSE_NSTRATEGIES; s++)
    if (strcmp(name, wsisa_reuse_strategy_names[s]) == 0) {
      *out = (wsisa_reuse_strategy)s;
      return 0;
    }
  return WSISA_EUSAGE;
}

const char *wsisa_reuse_strategy_name(wsisa_reuse_strategy s) {
  return (unsigned)s < WSISA_REUSE_NSTRATEGIES ? wsisa_reuse_strategy_names[s] : "?";
}

static int merge_stage(const wsisa_reuse_design *d, wsisa__groups *g) {
  for (size_t u = 0; u < d->n_distinct; u++)
    if (wsisa__ids_push(&g->ids, u) || wsisa__groups_close(g)) return WSISA_ENOMEM;
  return 0;
}

/* A bucket set's arrays for nb buckets over n instances, zeroed. */
static int buckets_alloc(wsisa_reuse_buckets *b, size_t nb, size_t n, size_t k) {
  b->n_buckets = nb;
  b->k = k;
  b->start = calloc(nb + 1, sizeof *b->start);
  b->instances = calloc(n ? n : 1, sizeof *b->instances);
  b->trees = calloc(nb ? nb : 1, sizeof *b->trees);
  b->tasks = calloc(nb ? nb : 1, sizeof *b->tasks);
  b->cost = calloc(nb ? nb : 1, sizeof *b->cost);
  return !b->start || !b->instances || !b->trees || !b->tasks || !b->cost ? WSISA_ENOMEM : 0;
}

int wsisa_reuse_buckets_new(size_t n_buckets, size_t n_instances, size_t k,
                            wsisa_reuse_buckets **out) {
  wsisa_reuse_buckets *b = calloc(1, sizeof *b);
  if (!b || buckets_alloc(b, n_buckets, n_instances, k)) {
    wsisa_reuse_buckets_free(b);
    return WSISA_ENOMEM;
  }
  *out = b;
  return 0;
}

/* Expand groups of distinct ids into buckets of instances with their trees. */
static int make_buckets(const wsisa_reuse_design *d, const wsisa__groups *g,
                        const double *level_cost, wsisa_reuse_buckets *b) {
  size_t nb = g->start.len - 1;
  if (buckets_alloc(b, nb, d->n, d->k)) return WSISA_ENOMEM;
  size_t n = 0;
  for (size_t j = 0; j < nb; j++) {
    b->start[j] = n;
    for (size_t p = g->start.v[j]; p < g->start.v[j + 1]; p++) {
      size_t u = g->ids.v[p];
      for (size_t m = d->member_start[u]; m < d->member_start[u + 1]; m++)
        b->instances[n++] = d->members[m];
    }
    int rc = wsisa_reuse_tree_build(d->keys, d->k, b->instances + b->start[j], n - b->start[j],
                                    &b->trees[j]);
    if (rc) return rc;
    b->tasks[j] = wsisa_reuse_tree_tasks(b->trees[j]);
    b->cost[j] = wsisa_reuse_tree_cost(b->trees[j], level_cost);
  }
  b->start[nb] = n;
  return n == d->n ? 0 : WSISA_EINTERNAL;
}

int wsisa_reuse_merge(const wsisa_reuse_design *d, const wsisa_reuse_opts *opts,
                      wsisa_reuse_buckets **out) {
  *out = NULL;
  const double *cost = opts->level_cost;
  if (cost)
    for (size_t l = 0; l < d->k; l++)
      if (!(cost[l] >= 0)) return WSISA_EUSAGE; /* also rejects NaN */
  wsisa_reuse_strategy s = opts->strategy;
  /* none merges nothing: each run is its own bucket (the engine builds them) */
  if (s == WSISA_REUSE_NONE || (unsigned)s >= WSISA_REUSE_NSTRATEGIES) return WSISA_EUSAGE;
  if ((s == WSISA_REUSE_NAIVE || s == WSISA_REUSE_SCA || s == WSISA_REUSE_RTMA) &&
      opts->max_bucket_size == 0)
    return WSISA_EUSAGE;
  if (s == WSISA_REUSE_TRTMA && opts->max_buckets == 0) return WSISA_EUSAGE;

  wsisa__groups g;
  wsisa_reuse_buckets *b = calloc(1, sizeof *b);
  int rc = wsisa__groups_init(&g);
  if (!b || rc) {
    rc = WSISA_ENOMEM;
    goto fail;
  }
  switch (s) {
  case WSISA_REUSE_STAGE: rc = merge_stage(d, &g); break;
  case WSISA_REUSE_NAIVE: rc = wsisa__merge_naive(d, opts->max_bucket_size, &g); break;
  case WSISA_REUSE_SCA: rc = wsisa__merge_sca(d, opts->max_bucket_size, cost, &g); break;
  case WSISA_REUSE_RTMA: rc = wsisa__merge_rtma(d, opts->max_bucket_size, cost, &g); break;
  case WSISA_REUSE_TRTMA:
    rc = wsisa__merge_trtma(d, opts->max_buckets, cost, opts->trtma_last_phase, &g);
    break;
  default: rc = WSISA_EUSAGE;
  }
  if (rc || (rc = make_buckets(d, &g, cost, b))) goto fail;
  wsisa__groups_clear(&g);
  *out = b;
  return 0;
fail:
  wsisa__groups_clear(&g);
  wsisa_reuse_buckets_free(b);
  return rc;
}

void wsisa_reuse_buckets_free(wsisa_reuse_buckets *b) {
  if (!b) return;
  if (b->trees)
    for (size_t j = 0; j < b->n_buckets; j++) wsisa_reuse_tree_free(b->trees[j]);
  free(b->trees);
  free(b->start);
  free(b->instances);
  free(b->tasks);
  free(b->cost);
  free(b);
}

void wsisa_reuse_buckets_summarize(const wsisa_reuse_buckets *b, size_t active_paths,
                                   wsisa_reuse_summary *s) {
  memset(s, 0, sizeof *s);
  s->n_buckets = b->n_buckets;
  for (size_t j = 0; j < b->n_buckets; j++) {
    const wsisa_reuse_tree *t = b->trees[j];
    size_t leaves = 0, peak = wsisa_reuse_tree_peak_live(t, active_paths);
    for (size_t v = 0; v < t->n_nodes; v++) leaves += t->nodes[v].level == t->k;
    s->tasks += b->tasks[j];
    s->cost += b->cost[j];
    if (b->cost[j] > s->max_cost) s->max_cost = b->cost[j];
    if (leaves > s->max_instances) s->max_instances = leaves;
    if (peak > s->peak_live) s->peak_live = peak;
  }
  if (b->n_buckets) s->mean_cost = s->cost / (double)b->n_buckets;
  /* Rounding can put an even max a hair below the mean. */
  if (s->mean_cost > 0 && s->max_cost > s->mean_cost) s->imbalance = s->max_cost / s->mean_cost - 1;
}
