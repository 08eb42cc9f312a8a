/* Reuse-Tree Merging Algorithm (seed 000 §4.2.3, Algorithm 3, Figure 7; seed
 * 001 §3.3.3): bottom-up over the reuse tree, every parent of leaves packs its
 * leaves into buckets of exactly max_bucket_size, the rest move up one level;
 * what reaches the root is packed into buckets of at most max_bucket_size.
 *
 * All leaves sit at depth k and move up together, so the tree is handled one
 * depth at a time as lists of waiting leaves per node; listing nodes in
 * preorder keeps the leaves of one parent adjacent, which is exactly where
 * MoveReuseTreeUp puts them. O(k·n) for the whole merge.
 *
 * With level costs (measured task times), a bucket is also full when its
 * cost would pass a budget, the mean cost of the buckets the count rule
 * makes. Counting leaves leaves buckets of unequal cost (the limitation seed
 * 001 §4.5.1 leaves open): leaves of one deep parent share most of their
 * tasks and cost little together, leaves that meet only near the root cost
 * a whole workflow each. The budget splits the expensive buckets and keeps
 * the cheap ones, so the largest bucket, which bounds the makespan once
 * workers outnumber buckets, comes down to about the mean. */
#include <stdlib.h>

#include "reuse/reuse_private.h"

typedef struct packer {
  size_t max;             /* leaves per bucket (count rule) */
  const double *cum;      /* cumulative level costs; NULL: the count rule */
  double budget;          /* cost rule: a bucket is full at this cost */
  const wsisa_reuse_tree *t;
  const size_t *leaf;     /* distinct id -> its leaf node */
} packer;

/* Depth of the deepest common ancestor of two leaves. */
static size_t common_depth(const packer *p, size_t a, size_t b) {
  size_t u = p->leaf[a], v = p->leaf[b];
  while (u != v) {
    u = p->t->nodes[u].parent;
    v = p->t->nodes[v].parent;
  }
  return p->t->nodes[u].level;
}

/* What leaf ids[j] adds to a bucket whose last leaf (in preorder) is ids[j-1]:
 * its path below their deepest common ancestor, which is the deepest it
 * shares with any earlier leaf of the bucket. */
static double added_cost(const packer *p, const size_t *ids, size_t first, size_t j) {
  size_t k = p->t->k;
  if (j == first) return p->cum[k];
  return p->cum[k] - p->cum[common_depth(p, ids[j - 1], ids[j])];
}

/* Pack the leaves ids[i..run) waiting at one node into full buckets (count
 * rule: max_bucket_size leaves; cost rule: that, or the budget reached); the
 * rest, a suffix, moves up. At the root (`last`), everything goes out.
 * Returns where the rest begins. */
static size_t pack_run(const packer *p, const size_t *ids, size_t i, size_t run, int last,
                       wsisa__groups *g, int *rc) {
  size_t rest = run;
  if (!p->cum) {
    size_t full = last ? run - i : (run - i) / p->max * p->max;
    for (size_t q = i; q < i + full && !*rc; q++) {
      if (wsisa__ids_push(&g->ids, ids[q])) *rc = WSISA_ENOMEM;
      if (!*rc && ((q - i + 1) % p->max == 0 || q + 1 == i + full) && wsisa__groups_close(g))
        *rc = WSISA_ENOMEM;
    }
    return i + full;
  }
  size_t first = i;
  double cost = 0;
  for (size_t q = i; q < run && !*rc; q++) {
    double add = added_cost(p, ids, first, q);
    if (q > first && (q - first == p->max || cost + add > p->budget)) {
      /* ids[first..q) is a full bucket */
      for (size_t x = first; x < q && !*rc; x++)
        if (wsisa__ids_push(&g->ids, ids[x])) *rc = WSISA_ENOMEM;
      if (!*rc && wsisa__groups_close(g)) *rc = WSISA_ENOMEM;
      first = q;
      add = added_cost(p, ids, first, q);
      cost = 0;
    }
    cost += add;
  }
  rest = first;
  /* a bucket that reached max_bucket_size is full: it goes out */
  if (!last && run - first == p->max) {
    for (size_t x = first; x < run && !*rc; x++)
      if (wsisa__ids_push(&g->ids, ids[x])) *rc = WSISA_ENOMEM;
    if (!*rc && wsisa__groups_close(g)) *rc = WSISA_ENOMEM;
    rest = run;
  }
  if (last) {
    for (size_t x = first; x < run && !*rc; x++)
      if (wsisa__ids_push(&g->ids, ids[x])) *rc = WSISA_ENOMEM;
    if (!*rc && wsisa__groups_close(g)) *rc = WSISA_ENOMEM;
    rest = run;
  }
  return rest;
}

/* Algorithm 3 with the packer's rule for a full bucket. */
static int merge(const wsisa_reuse_design *d, const packer *p, wsisa__groups *g) {
  const wsisa_reuse_tree *t = d->tree;
  size_t m = d->n_distinct, len = 0;
  size_t *ids = malloc(m * sizeof *ids), *owner = malloc(m * sizeof *owner);
  int rc = ids && owner ? 0 : WSISA_ENOMEM;

  /* The leaves, each waiting at its parent (a node at depth k-1). */
  for (size_t v = 1; v < t->n_nodes && !rc; v++)
    if (t->nodes[v].level == t->k) {
      ids[len] = t->instances[t->nodes[v].first_instance];
      owner[len++] = t->nodes[v].parent;
    }

  for (size_t depth = t->k - 1; depth >= 1 && !rc; depth--) {
    size_t kept = 0; /* compacting in place: remainders move to the parent */
    for (size_t i = 0; i < len && !rc;) {
      size_t run = i;
      while (run < len && owner[run] == owner[i]) run++;
      size_t rest = pack_run(p, ids, i, run, 0, g, &rc);
      size_t parent = t->nodes[owner[i]].parent;
      for (size_t q = rest; q < run; q++) {
        ids[kept] = ids[q];
        owner[kept++] = parent;
      }
      i = run;
    }
    len = kept;
  }
  /* Height 1: the root's remaining children, in chunks. */
  if (!rc && len) pack_run(p, ids, 0, len, 1, g, &rc);
  if (!rc && wsisa__groups_close(g)) rc = WSISA_ENOMEM;
  free(ids);
  free(owner);
  return rc;
}

int wsisa__merge_rtma(const wsisa_reuse_design *d, size_t max_bucket_size,
                      const double *level_cost, wsisa__groups *g) {
  packer p = {max_bucket_size, NULL, 0, d->tree, NULL};
  if (!level_cost) return merge(d, &p, g);

  /* the budget: the mean cost of the count rule's buckets */
  double *cum = NULL;
  size_t *leaf = malloc(d->n_distinct * sizeof *leaf);
  wsisa__groups count;
  int rc = wsisa__groups_init(&count);
  if (!rc && !leaf) rc = WSISA_ENOMEM;
  if (!rc) rc = wsisa__cum_costs(level_cost, d->k, &cum);
  for (size_t v = 1; !rc && v < d->tree->n_nodes; v++)
    if (d->tree->nodes[v].level == d->tree->k)
      leaf[d->tree->instances[d->tree->nodes[v].first_instance]] = v;
  if (!rc) rc = merge(d, &p, &count);
  p.cum = cum;
  p.leaf = leaf;
  if (!rc) {
    double total = 0;
    size_t nb = count.start.len - 1;
    for (size_t b = 0; b < nb; b++)
      for (size_t q = count.start.v[b]; q < count.start.v[b + 1]; q++)
        total += added_cost(&p, count.ids.v, count.start.v[b], q);
    p.budget = nb ? total / (double)nb : 0;
    /* a bucket holds at least one leaf */
    if (p.budget < cum[d->k]) p.budget = cum[d->k];
    rc = merge(d, &p, g);
  }
  wsisa__groups_clear(&count);
  free(cum);
  free(leaf);
  return rc;
}
