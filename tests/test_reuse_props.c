/* Property tests of every merging strategy on random designs (fixed seeds):
 * discrete and continuous values over the segmentation's 15 parameters and 7
 * task levels, and bare keys over other level counts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "reuse/reuse.h"

/* Task level (0-based) of the 15 parameters in canonical order: B, G, R, T1,
 * T2, G1, G2, min_size, max_size, min_size_pl, min_size_seg, max_size_seg,
 * fill_holes_conn, recon_conn, watershed_conn. */
static const size_t seg_level[15] = {0, 0, 0, 0, 0, 2, 4, 3, 3, 5, 6, 6, 2, 1, 5};

static double uniform(unsigned *seed) { return (rand_r(seed) + 0.5) / ((double)RAND_MAX + 1); }

typedef enum { DISCRETE, CONTINUOUS } value_kind;

/* n parameter sets. Discrete: each parameter takes one of `levels` values.
 * Continuous: uniform values, and most sets repeat an earlier set with one
 * parameter changed (as one-at-a-time designs do), so prefixes are shared. */
static uint64_t *segmentation_keys(size_t n, value_kind kind, size_t levels, unsigned seed) {
  double *v = malloc(n * 15 * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    double *row = v + i * 15;
    if (kind == DISCRETE) {
      for (size_t p = 0; p < 15; p++) row[p] = (double)(rand_r(&seed) % levels);
    } else if (i == 0 || rand_r(&seed) % 4 == 0) {
      for (size_t p = 0; p < 15; p++) row[p] = uniform(&seed);
    } else {
      memcpy(row, v + (size_t)(rand_r(&seed) % i) * 15, 15 * sizeof *row);
      row[rand_r(&seed) % 15] = uniform(&seed);
    }
  }
  uint64_t *keys = malloc(n * 7 * sizeof *keys);
  cr_assert_eq(wsisa_reuse_keys_from_values(v, n, 15, seg_level, 7, keys), 0);
  free(v);
  return keys;
}

/* Bare keys over k levels, `values` possible keys per level. */
static uint64_t *random_keys(size_t n, size_t k, size_t values, unsigned seed) {
  uint64_t *keys = malloc(n * k * sizeof *keys);
  for (size_t i = 0; i < n * k; i++) keys[i] = (uint64_t)(rand_r(&seed) % values);
  return keys;
}

/* Distinct task prefixes of a set of instances, counted pairwise: instance i
 * adds the levels beyond its longest common prefix with an earlier one. */
static size_t distinct_prefixes(const uint64_t *keys, size_t k, const size_t *ids, size_t count) {
  size_t total = 0;
  for (size_t i = 0; i < count; i++) {
    size_t longest = 0;
    for (size_t j = 0; j < i && longest < k; j++) {
      const uint64_t *a = keys + ids[i] * k, *b = keys + ids[j] * k;
      size_t l = 0;
      while (l < k && a[l] == b[l]) l++;
      if (l > longest) longest = l;
    }
    total += k - longest;
  }
  return total;
}

static void check_tree(const wsisa_reuse_tree *t, const size_t *ids, size_t count) {
  cr_assert_eq(t->n_instances, count);
  cr_assert_eq(t->nodes[0].n_instances, count);
  for (size_t v = 1; v < t->n_nodes; v++) {
    const wsisa_reuse_node *node = &t->nodes[v], *parent = &t->nodes[node->parent];
    cr_assert_lt(node->parent, v, "preorder: parents first");
    cr_assert_eq(node->level, parent->level + 1);
    cr_assert(v >= node->parent && node->end <= parent->end, "subtree nested in its parent's");
    cr_assert_eq(node->n_children == 0, node->level == t->k, "leaves exactly at level k");
    for (size_t j = 0; j < node->n_children; j++)
      cr_assert_eq(t->nodes[t->children[node->first_child + j]].parent, v);
    cr_assert_eq(wsisa_reuse_tree_child(t, node->parent, node->key), v);
  }
  /* The leaves list each id once. */
  for (size_t i = 0; i < count; i++) {
    size_t seen = 0;
    for (size_t j = 0; j < t->n_instances; j++) seen += t->instances[j] == ids[i];
    cr_assert_eq(seen, 1, "instance %zu listed %zu times", ids[i], seen);
  }
}

typedef struct limits {
  size_t max_bucket_size, max_buckets;
} limits;

/* Check one merge of a design; returns its largest bucket cost. */
static double check_merge(const wsisa_reuse_design *d, const wsisa_reuse_opts *o) {
  wsisa_reuse_buckets *b = NULL;
  cr_assert_eq(wsisa_reuse_merge(d, o, &b), 0);
  const char *name = wsisa_reuse_strategy_name(o->strategy);
  size_t *count = calloc(d->n, sizeof *count), *bucket = malloc(d->n * sizeof *bucket), tasks = 0;
  double max_cost = 0;
  for (size_t j = 0; j < b->n_buckets; j++) {
    const size_t *ids = b->instances + b->start[j];
    size_t size = b->start[j + 1] - b->start[j], distinct = 0;
    cr_assert_gt(size, 0, "%s: empty bucket", name);
    for (size_t i = 0; i < size; i++) {
      count[ids[i]]++;
      bucket[ids[i]] = j;
    }
    for (size_t v = 0; v < b->trees[j]->n_nodes; v++) distinct += b->trees[j]->nodes[v].level == d->k;
    if (o->strategy == WSISA_REUSE_NAIVE || o->strategy == WSISA_REUSE_SCA ||
        o->strategy == WSISA_REUSE_RTMA)
      cr_assert_leq(distinct, o->max_bucket_size, "%s: bucket %zu has %zu distinct instances", name, j,
                    distinct);
    check_tree(b->trees[j], ids, size);
    size_t prefixes = distinct_prefixes(d->keys, d->k, ids, size);
    cr_assert_eq(b->tasks[j], prefixes, "%s: bucket %zu: %zu tasks, %zu distinct prefixes", name, j,
                 b->tasks[j], prefixes);
    cr_assert_float_eq(b->cost[j], wsisa_reuse_tree_cost(b->trees[j], o->level_cost), 1e-9);
    tasks += b->tasks[j];
    if (b->cost[j] > max_cost) max_cost = b->cost[j];
  }
  for (size_t i = 0; i < d->n; i++) {
    cr_assert_eq(count[i], 1, "%s: instance %zu is in %zu buckets", name, i, count[i]);
    cr_assert_eq(bucket[i], bucket[d->first[d->distinct_of[i]]], "%s: identical instances together", name);
  }
  if (o->strategy == WSISA_REUSE_TRTMA) {
    size_t expect = d->n_distinct < o->max_buckets ? d->n_distinct : o->max_buckets;
    cr_assert_eq(b->n_buckets, expect, "trtma: %zu buckets for max %zu", b->n_buckets, o->max_buckets);
  }
  cr_assert_leq(tasks, d->n_distinct * d->k, "%s: worse than stage-level reuse", name);
  cr_assert_geq(tasks, wsisa_reuse_tree_tasks(d->tree), "%s: below the lower bound", name);
  if (o->strategy == WSISA_REUSE_STAGE) cr_assert_eq(tasks, d->n_distinct * d->k);
  wsisa_reuse_summary s;
  wsisa_reuse_buckets_summarize(b, 2, &s);
  cr_assert_eq(s.tasks, tasks);
  cr_assert_float_eq(s.max_cost, max_cost, 1e-9);
  cr_assert_geq(s.imbalance, 0);
  cr_assert_leq(s.peak_live, 2 * d->k, "two paths hold at most two chains");
  free(count);
  free(bucket);
  wsisa_reuse_buckets_free(b);
  return max_cost;
}

static void check_design(const uint64_t *keys, size_t n, size_t k, const double *level_cost,
                         const limits *lim, size_t n_lim) {
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(keys, n, k, &d), 0);
  check_merge(d, &(wsisa_reuse_opts){.strategy = WSISA_REUSE_STAGE, .level_cost = level_cost});
  for (size_t i = 0; i < n_lim; i++) {
    wsisa_reuse_opts o = {.max_bucket_size = lim[i].max_bucket_size,
                          .max_buckets = lim[i].max_buckets,
                          .level_cost = level_cost};
    o.strategy = WSISA_REUSE_NAIVE;
    check_merge(d, &o);
    o.strategy = WSISA_REUSE_RTMA;
    check_merge(d, &o);
    if (d->n_distinct <= 120) {
      o.strategy = WSISA_REUSE_SCA;
      check_merge(d, &o);
    }
    o.strategy = WSISA_REUSE_TRTMA;
    o.trtma_last_phase = WSISA_REUSE_FOLD_MERGE;
    double folded = check_merge(d, &o);
    o.trtma_last_phase = WSISA_REUSE_BALANCE;
    double balanced = check_merge(d, &o);
    cr_assert_leq(balanced, folded + 1e-9, "Balance raised the largest cost: %g > %g", balanced, folded);
  }
  wsisa_reuse_design_free(d);
}

static const limits some_limits[] = {{1, 1}, {2, 2}, {3, 5}, {7, 16}, {50, 3}};
#define N_LIMITS (sizeof some_limits / sizeof *some_limits)

Test(reuse_props, discrete_segmentation_designs) {
  for (unsigned seed = 1; seed <= 6; seed++) {
    size_t n = 40 + 20 * seed;
    uint64_t *keys = segmentation_keys(n, DISCRETE, 2 + seed % 2, seed);
    check_design(keys, n, 7, NULL, some_limits, N_LIMITS);
    free(keys);
  }
}

Test(reuse_props, continuous_segmentation_designs) {
  for (unsigned seed = 11; seed <= 16; seed++) {
    size_t n = 30 + 25 * (seed - 10);
    uint64_t *keys = segmentation_keys(n, CONTINUOUS, 0, seed);
    check_design(keys, n, 7, NULL, some_limits, N_LIMITS);
    free(keys);
  }
}

Test(reuse_props, cost_weighted) {
  /* seed 001 Table 4.3: relative task costs of the seven levels. */
  const double cost[7] = {1.14, 1.99, 0.65, 0.33, 0.76, 3.76, 0.86};
  for (unsigned seed = 21; seed <= 24; seed++) {
    uint64_t *keys = segmentation_keys(150, seed % 2 ? DISCRETE : CONTINUOUS, 2, seed);
    check_design(keys, 150, 7, cost, some_limits, N_LIMITS);
    free(keys);
  }
  /* A level of zero cost. */
  const double with_zero[3] = {0, 2, 1};
  uint64_t *keys = random_keys(80, 3, 3, 25);
  check_design(keys, 80, 3, with_zero, some_limits, N_LIMITS);
  free(keys);
}

Test(reuse_props, other_level_counts) {
  const size_t ks[] = {1, 2, 4, 9};
  for (size_t i = 0; i < 4; i++) {
    uint64_t *keys = random_keys(90, ks[i], 3, 31 + (unsigned)i);
    check_design(keys, 90, ks[i], NULL, some_limits, N_LIMITS);
    free(keys);
  }
}

Test(reuse_props, all_identical) {
  uint64_t keys[20 * 7] = {0};
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(keys, 20, 7, &d), 0);
  cr_assert_eq(d->n_distinct, 1);
  check_design(keys, 20, 7, NULL, some_limits, N_LIMITS);
  wsisa_reuse_design_free(d);
}
