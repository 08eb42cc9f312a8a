/* Smart Cut Algorithm (seed 000 §4.2.2, Algorithm 2, Figure 5; seed 001
 * §3.3.2): the distinct instances form a complete graph weighted by their
 * degree of reuse (the cost of their common task prefix); minimum 2-cuts split
 * it, the larger side is cut again until it fits in a bucket, the bucket leaves
 * the graph, and the process starts over on what remains.
 *
 * Every cut is an exact minimum cut. Stoer-Wagner finds it in O(s³) on a
 * dense graph of s vertices, which makes SCA O(n⁴) and worse, as the papers
 * say. One shortcut keeps it usable: an edge weighs more than zero exactly
 * when two instances share the prefix up to the first level of positive cost,
 * so the graph falls apart into cliques, one per such prefix. While a set
 * spans several cliques its minimum cut is 0 and needs no search: the
 * smallest clique is cut off (the rest is the larger side) until the set fits
 * or is one clique, and only a single clique goes to Stoer-Wagner. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reuse/reuse_private.h"

int wsisa__stoer_wagner(const double *w, size_t s, unsigned char *side, double *cut) {
  /* The contracted graph stays packed in rows 0..n-1 of `a`: contracting
   * moves the last vertex into the freed slot, so the O(s²) phase scans run
   * over contiguous memory. */
  double *a = malloc(s * s * sizeof *a);
  double *conn = malloc(s * sizeof *conn);
  size_t *head = malloc(s * sizeof *head), *tail = malloc(s * sizeof *tail);
  size_t *next = malloc(s * sizeof *next); /* members of a super-vertex, by original vertex */
  int rc = WSISA_ENOMEM;
  if (!a || !conn || !head || !tail || !next) goto fail;
  memcpy(a, w, s * s * sizeof *a);
  for (size_t v = 0; v < s; v++) {
    head[v] = tail[v] = v;
    next[v] = WSISA_REUSE_NO_NODE;
  }
  double best = -1;
  for (size_t n = s; n > 1; n--) {
    /* One phase: maximum-adjacency order from vertex 0. An added vertex's
     * connectivity becomes -inf, which the updates keep, so one fused loop
     * both updates and finds the next vertex. */
    memcpy(conn, a, n * sizeof *conn);
    conn[0] = -INFINITY;
    size_t prev = 0, last = 0, z = 1;
    double phase_cut = 0;
    for (size_t i = 2; i < n; i++)
      if (conn[i] > conn[z]) z = i;
    for (size_t step = 1; step < n; step++) {
      prev = last;
      last = z;
      phase_cut = conn[z];
      conn[z] = -INFINITY;
      const double *row = a + z * s;
      double most = -INFINITY;
      for (size_t i = 1; i < n; i++) {
        conn[i] += row[i];
        if (conn[i] > most) {
          most = conn[i];
          z = i;
        }
      }
    }
    if (best < 0 || phase_cut < best) {
      best = phase_cut;
      memset(side, 0, s);
      for (size_t v = head[last]; v != WSISA_REUSE_NO_NODE; v = next[v]) side[v] = 1;
    }
    /* Contract `last` into `prev`, then move vertex n-1 into slot `last`. */
    size_t u = prev, t = last, end = n - 1;
    for (size_t i = 0; i < n; i++) a[u * s + i] += a[t * s + i];
    for (size_t i = 0; i < n; i++) a[i * s + u] = a[u * s + i];
    a[u * s + u] = 0;
    next[tail[u]] = head[t];
    tail[u] = tail[t];
    if (t != end) {
      for (size_t i = 0; i < n; i++) a[t * s + i] = a[end * s + i];
      for (size_t i = 0; i < n; i++) a[i * s + t] = a[t * s + i];
      a[t * s + t] = 0;
      head[t] = head[end];
      tail[t] = tail[end];
    }
  }
  *cut = best;
  rc = 0;
fail:
  free(a);
  free(conn);
  free(head);
  free(tail);
  free(next);
  return rc;
}

typedef struct sca {
  size_t m;
  double *w;           /* m*m degree of reuse */
  size_t *clique;      /* clique id (0..m-1) per distinct instance */
  size_t *seen;        /* per clique id: its local index in the current set, or NONE */
  size_t *local;       /* per position in the current set: local clique index */
  struct clique_size { size_t size, index; } *sizes;
  unsigned char *kept; /* per local clique index */
  double *sub;         /* scratch for Stoer-Wagner */
  unsigned char *side;
} sca;

static int by_size_desc(const void *pa, const void *pb) {
  const struct clique_size *a = pa, *b = pb;
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* Shrink set[0..*len) by zero cuts while it exceeds max and spans several
 * cliques. Cutting off the smallest clique (the latest-seen among equals)
 * keeps the larger side every time, so the survivors are the largest cliques
 * in order of first appearance. */
static void zero_cuts(sca *c, size_t *set, size_t *len, size_t max) {
  size_t nq = 0;
  for (size_t i = 0; i < *len; i++) {
    size_t q = c->clique[set[i]];
    if (c->seen[q] == WSISA_REUSE_NO_NODE) {
      c->seen[q] = nq;
      c->sizes[nq] = (struct clique_size){0, nq};
      nq++;
    }
    c->local[i] = c->seen[q];
    c->sizes[c->seen[q]].size++;
  }
  for (size_t i = 0; i < *len; i++) c->seen[c->clique[set[i]]] = WSISA_REUSE_NO_NODE;
  if (nq < 2) return;
  qsort(c->sizes, nq, sizeof *c->sizes, by_size_desc);
  size_t keep = nq, total = *len;
  while (keep > 1 && total > max) total -= c->sizes[--keep].size;
  memset(c->kept, 0, nq);
  for (size_t j = 0; j < keep; j++) c->kept[c->sizes[j].index] = 1;
  size_t out = 0;
  for (size_t i = 0; i < *len; i++)
    if (c->kept[c->local[i]]) set[out++] = set[i];
  *len = out;
}

/* Cut set[0..*len) with Stoer-Wagner and keep the larger side (the side of
 * set[0] among equals). */
static int min_cut(sca *c, size_t *set, size_t *len) {
  size_t s = *len;
  for (size_t i = 0; i < s; i++)
    for (size_t j = 0; j < s; j++) c->sub[i * s + j] = c->w[set[i] * c->m + set[j]];
  double cut;
  int rc = wsisa__stoer_wagner(c->sub, s, c->side, &cut);
  if (rc) return rc;
  size_t ones = 0;
  for (size_t i = 0; i < s; i++) ones += c->side[i];
  unsigned char keep = ones * 2 > s || (ones * 2 == s && c->side[0]);
  size_t out = 0;
  for (size_t i = 0; i < s; i++)
    if (c->side[i] == keep) set[out++] = set[i];
  *len = out;
  return 0;
}

/* Degree of reuse (the cost of the common prefix) and the cliques: instances
 * are in one clique when they share the tree node at the first level of
 * positive cost; with no such level every weight is 0 and each stands alone. */
static void build_graph(sca *c, const wsisa_reuse_design *d, const double *cum) {
  size_t m = c->m, k = d->k;
  for (size_t a = 0; a < m; a++) {
    c->w[a * m + a] = 0;
    for (size_t b = a + 1; b < m; b++) {
      const uint64_t *ra = d->distinct_keys + a * k, *rb = d->distinct_keys + b * k;
      size_t l = 0;
      while (l < k && ra[l] == rb[l]) l++;
      c->w[a * m + b] = c->w[b * m + a] = cum[l];
    }
  }
  size_t clique_level = 1;
  while (clique_level <= k && !(cum[clique_level] > 0)) clique_level++;
  if (clique_level > k) clique_level = k; /* leaves: one instance each */
  const wsisa_reuse_tree *t = d->tree;
  size_t next_id = 0;
  for (size_t v = 1; v < t->n_nodes; v++) {
    const wsisa_reuse_node *node = &t->nodes[v];
    if (node->level != clique_level) continue;
    for (size_t i = 0; i < node->n_instances; i++)
      c->clique[t->instances[node->first_instance + i]] = next_id;
    next_id++;
  }
  for (size_t q = 0; q < m; q++) c->seen[q] = WSISA_REUSE_NO_NODE;
}

static void sca_clear(sca *c) {
  free(c->w);
  free(c->clique);
  free(c->seen);
  free(c->local);
  free(c->sizes);
  free(c->kept);
  free(c->sub);
  free(c->side);
}

int wsisa__merge_sca(const wsisa_reuse_design *d, size_t max_bucket_size,
                     const double *level_cost, wsisa__groups *g) {
  size_t m = d->n_distinct;
  sca c = {.m = m};
  double *cum = NULL;
  size_t *remaining = malloc(m * sizeof *remaining), *set = malloc(m * sizeof *set);
  unsigned char *taken = calloc(m, 1);
  c.w = malloc(m * m * sizeof *c.w);
  c.clique = malloc(m * sizeof *c.clique);
  c.seen = malloc(m * sizeof *c.seen);
  c.local = malloc(m * sizeof *c.local);
  c.sizes = malloc(m * sizeof *c.sizes);
  c.kept = malloc(m);
  c.sub = malloc(m * m * sizeof *c.sub);
  c.side = malloc(m);
  int rc = WSISA_ENOMEM;
  if (!remaining || !set || !taken || !c.w || !c.clique || !c.seen || !c.local || !c.sizes ||
      !c.kept || !c.sub || !c.side || wsisa__cum_costs(level_cost, d->k, &cum))
    goto fail;
  build_graph(&c, d, cum);

  size_t n_remaining = m;
  for (size_t u = 0; u < m; u++) remaining[u] = u;
  while (n_remaining > 0) {
    size_t len = n_remaining;
    memcpy(set, remaining, len * sizeof *set);
    while (len > max_bucket_size) {
      zero_cuts(&c, set, &len, max_bucket_size);
      if (len > max_bucket_size && min_cut(&c, set, &len)) goto fail;
    }
    for (size_t i = 0; i < len; i++) {
      taken[set[i]] = 1;
      if (wsisa__ids_push(&g->ids, set[i])) goto fail;
    }
    if (wsisa__groups_close(g)) goto fail;
    size_t out = 0;
    for (size_t i = 0; i < n_remaining; i++)
      if (!taken[remaining[i]]) remaining[out++] = remaining[i];
    n_remaining = out;
  }
  rc = 0;
fail:
  sca_clear(&c);
  free(cum);
  free(remaining);
  free(set);
  free(taken);
  return rc;
}
