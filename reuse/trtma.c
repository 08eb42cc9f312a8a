/* Task-Balanced Reuse-Tree Merging Algorithm (seed 000 §4.2.4, Algorithm 4,
 * Figures 8-10; seed 001 §3.3.4, Algorithms 4-5): Full-Merge cuts the reuse
 * tree at the first level with at least max_buckets nodes, Fold-Merge folds
 * the cost-sorted buckets down to max_buckets, and Balance moves subtrees from
 * the most to a least expensive bucket while that lowers both their imbalance
 * and the largest cost. Costs follow the selected model, so Balance evens out
 * measured time when level costs are given (the imbalance seed 001 §4.5.1
 * leaves open). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reuse/reuse_private.h"

typedef struct bucket {
  wsisa__ids ids;      /* distinct ids */
  wsisa_reuse_tree *t; /* trie over the design's distinct keys */
  double *sub;         /* subtree cost per node */
  double cost;
} bucket;

typedef struct trtma {
  const wsisa_reuse_design *d;
  const double *level_cost;
  double *cum;  /* cumulative level costs */
  double eps;   /* below this, costs are equal */
  bucket *b;
  size_t nb;
  /* Balance scratch, per node of bigRT, grown on demand. */
  size_t cap;
  size_t *match;      /* node of smallRT with the same task prefix, or NONE */
  size_t *diverge;    /* else: level of the deepest ancestor that has one */
  double *chain;      /* cost of the single-child ancestors that leave with v */
  double *extra;      /* matched v: cost smallRT gains if v moves */
  uint64_t *sig;      /* shape of the subtree */
  unsigned char *skip;
  size_t *unique;     /* unmatched children of one node with distinct shapes */
  unsigned char *moving; /* per distinct id */
} trtma;

static double level_cost_of(const trtma *x, size_t level) {
  return level == 0 ? 0 : x->cum[level] - x->cum[level - 1];
}

static void bucket_clear(bucket *b) {
  wsisa__ids_clear(&b->ids);
  wsisa_reuse_tree_free(b->t);
  free(b->sub);
  b->t = NULL;
  b->sub = NULL;
}

static int bucket_rebuild(trtma *x, bucket *b) {
  wsisa_reuse_tree_free(b->t);
  free(b->sub);
  b->sub = NULL;
  int rc = wsisa_reuse_tree_build(x->d->distinct_keys, x->d->k, b->ids.v, b->ids.len, &b->t);
  if (rc) return rc;
  const wsisa_reuse_tree *t = b->t;
  if (!(b->sub = malloc(t->n_nodes * sizeof *b->sub))) return WSISA_ENOMEM;
  for (size_t v = t->n_nodes; v-- > 0;) {
    const wsisa_reuse_node *node = &t->nodes[v];
    double s = level_cost_of(x, node->level);
    for (size_t j = 0; j < node->n_children; j++) s += b->sub[t->children[node->first_child + j]];
    b->sub[v] = s;
  }
  b->cost = b->sub[0];
  return 0;
}

/* ---- Full-Merge ----------------------------------------------------------- */

static int full_merge(trtma *x, size_t max_buckets) {
  const wsisa_reuse_tree *t = x->d->tree;
  size_t k = t->k, level = k;
  size_t *count = calloc(k + 1, sizeof *count);
  if (!count) return WSISA_ENOMEM;
  for (size_t v = 1; v < t->n_nodes; v++) count[t->nodes[v].level]++;
  for (size_t l = k; l >= 1; l--)
    if (count[l] >= max_buckets) level = l;
  size_t nb = count[level];
  free(count);
  if (!(x->b = calloc(nb, sizeof *x->b))) return WSISA_ENOMEM;
  x->nb = nb;
  size_t j = 0;
  for (size_t v = 1; v < t->n_nodes; v++) {
    const wsisa_reuse_node *node = &t->nodes[v];
    if (node->level != level) continue;
    bucket *b = &x->b[j++];
    for (size_t i = 0; i < node->n_instances; i++)
      if (wsisa__ids_push(&b->ids, t->instances[node->first_instance + i])) return WSISA_ENOMEM;
    int rc = bucket_rebuild(x, b);
    if (rc) return rc;
  }
  return 0;
}

/* ---- Fold-Merge ----------------------------------------------------------- */

typedef struct ranked {
  double cost;
  size_t index;
} ranked;

/* Descending cost; among equals the later bucket first, which folds the first
 * and last of Figure 8's equal-cost buckets together as the paper draws it. */
static int by_cost_desc(const void *pa, const void *pb) {
  const ranked *a = pa, *b = pb;
  if (a->cost != b->cost) return a->cost > b->cost ? -1 : 1;
  return a->index > b->index ? -1 : a->index < b->index;
}

/* Fold the sorted list on the pivot between target and target+1 (Figure 9):
 * bucket target+j joins bucket target+1-j. Folding halves at most, so more
 * than 2·max_buckets buckets take several folds. */
static int fold_merge(trtma *x, size_t max_buckets) {
  while (x->nb > max_buckets) {
    size_t nb = x->nb, target = (nb + 1) / 2;
    if (target < max_buckets) target = max_buckets;
    ranked *r = malloc(nb * sizeof *r);
    bucket *next = calloc(target, sizeof *next);
    if (!r || !next) {
      free(r);
      free(next);
      return WSISA_ENOMEM;
    }
    for (size_t j = 0; j < nb; j++) r[j] = (ranked){x->b[j].cost, j};
    qsort(r, nb, sizeof *r, by_cost_desc);
    for (size_t j = 0; j < target; j++) next[j] = x->b[r[j].index];
    int rc = 0;
    for (size_t j = 1; j <= nb - target && !rc; j++) {
      bucket *into = &next[target - j], *from = &x->b[r[target - 1 + j].index];
      for (size_t i = 0; i < from->ids.len && !rc; i++) rc = wsisa__ids_push(&into->ids, from->ids.v[i]);
      bucket_clear(from);
      if (!rc) rc = bucket_rebuild(x, into);
    }
    free(r);
    free(x->b);
    x->b = next;
    x->nb = target;
    if (rc) return rc;
  }
  return 0;
}

/* ---- Balance ---------------------------------------------------------------- */

static int scratch_reserve(trtma *x, size_t n) {
  if (n <= x->cap) return 0;
  size_t cap = n * 2;
  size_t *match = realloc(x->match, cap * sizeof *match);
  if (match) x->match = match;
  size_t *diverge = realloc(x->diverge, cap * sizeof *diverge);
  if (diverge) x->diverge = diverge;
  double *chain = realloc(x->chain, cap * sizeof *chain);
  if (chain) x->chain = chain;
  double *extra = realloc(x->extra, cap * sizeof *extra);
  if (extra) x->extra = extra;
  uint64_t *sig = realloc(x->sig, cap * sizeof *sig);
  if (sig) x->sig = sig;
  unsigned char *skip = realloc(x->skip, cap);
  if (skip) x->skip = skip;
  size_t *unique = realloc(x->unique, cap * sizeof *unique);
  if (unique) x->unique = unique;
  if (!match || !diverge || !chain || !extra || !sig || !skip || !unique) return WSISA_ENOMEM;
  x->cap = cap;
  return 0;
}

/* Match bigRT's nodes against smallRT top-down; unmatched subtrees are
 * skipped when `prune_unmatched`. Returns the cost of the matched nodes: the
 * tasks the two buckets share. */
static double match_nodes(trtma *x, const bucket *big, const bucket *small, int prune_unmatched) {
  const wsisa_reuse_tree *t = big->t;
  double shared = 0;
  x->match[0] = 0;
  x->diverge[0] = 0;
  for (size_t v = 1; v < t->n_nodes;) {
    const wsisa_reuse_node *node = &t->nodes[v];
    size_t p = node->parent;
    if (x->match[p] != WSISA_REUSE_NO_NODE) {
      x->match[v] = wsisa_reuse_tree_child(small->t, x->match[p], node->key);
      x->diverge[v] = node->level - 1;
    } else {
      x->match[v] = WSISA_REUSE_NO_NODE;
      x->diverge[v] = x->diverge[p];
    }
    if (x->match[v] != WSISA_REUSE_NO_NODE) shared += level_cost_of(x, node->level);
    v = x->match[v] == WSISA_REUSE_NO_NODE && prune_unmatched ? node->end : v + 1;
  }
  return shared;
}

/* SingleBalance (seed 001 Algorithm 4 with the journal's validity test of seed
 * 000 Algorithm 4): the node of bigRT whose instances, moved to smallRT, give
 * the smallest imbalance below the current one while the larger of the two
 * new costs stays below bigRT's; WSISA_REUSE_NO_NODE if there is none.
 *
 * A move's effect is known without moving: bigRT loses the subtree and the
 * single-child ancestors left empty; smallRT gains, for an unmatched node, the
 * missing path plus the subtree, and for a matched one the children it lacks
 * (summed bottom-up). Two prunings skip candidates whose outcome is already
 * known: a single child moves the same instances as its parent, and an
 * unmatched sibling shaped like an earlier unmatched sibling offers the same
 * moves throughout its subtree (seed 001 §3.3.4, Optimizations; the shape
 * signature makes the sibling test exact). */
static size_t single_balance(trtma *x, const bucket *big, const bucket *small) {
  const wsisa_reuse_tree *t = big->t;
  size_t n = t->n_nodes, total = t->nodes[0].n_instances;
  double big_cost = big->cost, small_cost = small->cost;
  match_nodes(x, big, small, 0);

  /* Shapes and the matched nodes' gain, children first. */
  for (size_t v = n; v-- > 0;) {
    const wsisa_reuse_node *node = &t->nodes[v];
    uint64_t h = 0;
    double extra = 0;
    for (size_t j = 0; j < node->n_children; j++) {
      size_t c = t->children[node->first_child + j];
      h += wsisa__mix64(x->sig[c]);
      extra += x->match[c] != WSISA_REUSE_NO_NODE ? x->extra[c] : big->sub[c];
    }
    x->sig[v] = wsisa__mix64(h ^ ((uint64_t)node->level << 32) ^ node->n_children);
    x->extra[v] = extra;
  }
  /* Single-child chains, and which subtrees the sibling pruning skips. */
  memset(x->skip, 0, n);
  x->chain[0] = 0;
  for (size_t v = 0; v < n;) {
    const wsisa_reuse_node *node = &t->nodes[v];
    if (x->skip[v]) {
      memset(x->skip + v, 1, node->end - v);
      v = node->end;
      continue;
    }
    if (v > 0) {
      const wsisa_reuse_node *parent = &t->nodes[node->parent];
      x->chain[v] = node->parent != 0 && parent->n_children == 1
                        ? x->chain[node->parent] + level_cost_of(x, parent->level)
                        : 0;
    }
    size_t n_unique = 0;
    for (size_t j = 0; j < node->n_children; j++) {
      size_t c = t->children[node->first_child + j], u = 0;
      if (x->match[c] != WSISA_REUSE_NO_NODE) continue;
      while (u < n_unique && x->sig[x->unique[u]] != x->sig[c]) u++;
      if (u < n_unique) x->skip[c] = 1;
      else x->unique[n_unique++] = c;
    }
    v++;
  }

  double current = big_cost - small_cost;
  size_t best = WSISA_REUSE_NO_NODE;
  double best_imbal = 0, best_max = 0;
  if (current <= x->eps) return WSISA_REUSE_NO_NODE;
  for (size_t v = 1; v < n; v++) {
    const wsisa_reuse_node *node = &t->nodes[v];
    if (x->skip[v] || node->n_instances == total) continue;
    if (node->parent != 0 && t->nodes[node->parent].n_children == 1) continue;
    double loss = big->sub[v] + x->chain[v];
    double gain = x->match[v] != WSISA_REUSE_NO_NODE
                      ? x->extra[v]
                      : x->cum[node->level - 1] - x->cum[x->diverge[v]] + big->sub[v];
    double nb = big_cost - loss, ns = small_cost + gain;
    double imbal = nb > ns ? nb - ns : ns - nb, mk = nb > ns ? nb : ns;
    if (imbal >= current - x->eps || mk >= big_cost - x->eps) continue;
    if (best == WSISA_REUSE_NO_NODE || imbal < best_imbal - x->eps ||
        (imbal <= best_imbal + x->eps && mk < best_max - x->eps)) {
      best = v;
      best_imbal = imbal;
      best_max = mk;
    }
  }
  return best;
}

static int move_subtree(trtma *x, bucket *big, bucket *small, size_t v) {
  const wsisa_reuse_node *node = &big->t->nodes[v];
  for (size_t i = 0; i < node->n_instances; i++) {
    size_t u = big->t->instances[node->first_instance + i];
    x->moving[u] = 1;
    if (wsisa__ids_push(&small->ids, u)) return WSISA_ENOMEM;
  }
  size_t out = 0;
  for (size_t i = 0; i < big->ids.len; i++) {
    size_t u = big->ids.v[i];
    if (x->moving[u]) x->moving[u] = 0;
    else big->ids.v[out++] = u;
  }
  big->ids.len = out;
  int rc = bucket_rebuild(x, big);
  return rc ? rc : bucket_rebuild(x, small);
}

/* Balance (seed 001 Algorithm 5): bigRT is the most expensive bucket; smallRT
 * the cheapest, and among equally cheap ones the one sharing the most tasks
 * with bigRT (seed 001 §3.3.4, Discussion). Stops at the first pair without a
 * valid improvement. Every move lowers the sorted cost vector
 * lexicographically, so it ends. */
static int balance(trtma *x) {
  while (x->nb >= 2) {
    size_t big = 0;
    for (size_t j = 1; j < x->nb; j++)
      if (x->b[j].cost > x->b[big].cost) big = j;
    double low = INFINITY;
    for (size_t j = 0; j < x->nb; j++)
      if (j != big && x->b[j].cost < low) low = x->b[j].cost;
    if (x->b[big].cost - low <= x->eps) break;
    int rc = scratch_reserve(x, x->b[big].t->n_nodes);
    if (rc) return rc;
    size_t small = WSISA_REUSE_NO_NODE;
    double most_shared = -1;
    for (size_t j = 0; j < x->nb; j++) {
      if (j == big || x->b[j].cost > low + x->eps) continue;
      double shared = match_nodes(x, &x->b[big], &x->b[j], 1);
      if (shared > most_shared) {
        most_shared = shared;
        small = j;
      }
    }
    size_t v = single_balance(x, &x->b[big], &x->b[small]);
    if (v == WSISA_REUSE_NO_NODE) break;
    if ((rc = move_subtree(x, &x->b[big], &x->b[small], v))) return rc;
  }
  return 0;
}

int wsisa__merge_trtma(const wsisa_reuse_design *d, size_t max_buckets,
                       const double *level_cost, wsisa_reuse_trtma_phase last,
                       wsisa__groups *g) {
  trtma x = {.d = d, .level_cost = level_cost};
  int rc = wsisa__cum_costs(level_cost, d->k, &x.cum);
  if (rc) return rc;
  x.eps = 1e-9 * (x.cum[d->k] > 0 ? x.cum[d->k] : 1);
  if (!(x.moving = calloc(d->n_distinct, 1))) {
    rc = WSISA_ENOMEM;
    goto fail;
  }
  if ((rc = full_merge(&x, max_buckets))) goto fail;
  if (last != WSISA_REUSE_FULL_MERGE && (rc = fold_merge(&x, max_buckets))) goto fail;
  if (last == WSISA_REUSE_BALANCE && (rc = balance(&x))) goto fail;
  for (size_t j = 0; j < x.nb; j++) {
    for (size_t i = 0; i < x.b[j].ids.len; i++)
      if ((rc = wsisa__ids_push(&g->ids, x.b[j].ids.v[i]))) goto fail;
    if ((rc = wsisa__groups_close(g))) goto fail;
  }
fail:
  for (size_t j = 0; j < x.nb; j++) bucket_clear(&x.b[j]);
  free(x.b);
  free(x.cum);
  free(x.match);
  free(x.diverge);
  free(x.chain);
  free(x.extra);
  free(x.sig);
  free(x.skip);
  free(x.unique);
  free(x.moving);
  return rc;
}
