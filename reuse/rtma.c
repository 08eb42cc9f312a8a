/* Reuse-Tree Merging Algorithm (seed 000 §4.2.3, Algorithm 3, Figure 7; seed
 * 001 §3.3.3): bottom-up over the reuse tree, every parent of leaves packs its
 * leaves into buckets of exactly max_bucket_size, the rest move up one level;
 * what reaches the root is packed into buckets of at most max_bucket_size.
 *
 * All leaves sit at depth k and move up together, so the tree is handled one
 * depth at a time as lists of waiting leaves per node; listing nodes in
 * preorder keeps the leaves of one parent adjacent, which is exactly where
 * MoveReuseTreeUp puts them. O(k·n) for the whole merge. */
#include <stdlib.h>

#include "reuse/reuse_private.h"

int wsisa__merge_rtma(const wsisa_reuse_design *d, size_t max_bucket_size, wsisa__groups *g) {
  const wsisa_reuse_tree *t = d->tree;
  size_t m = d->n_distinct, len = 0;
  size_t *ids = malloc(m * sizeof *ids), *owner = malloc(m * sizeof *owner);
  int rc = WSISA_ENOMEM;
  if (!ids || !owner) goto fail;

  /* The leaves, each waiting at its parent (a node at depth k-1). */
  for (size_t v = 1; v < t->n_nodes; v++)
    if (t->nodes[v].level == t->k) {
      ids[len] = t->instances[t->nodes[v].first_instance];
      owner[len++] = t->nodes[v].parent;
    }

  for (size_t depth = t->k - 1; depth >= 1; depth--) {
    size_t kept = 0; /* compacting in place: remainders move to the parent */
    for (size_t i = 0; i < len;) {
      size_t run = i;
      while (run < len && owner[run] == owner[i]) run++;
      size_t full = (run - i) / max_bucket_size * max_bucket_size;
      for (size_t p = i; p < i + full; p++) {
        if (wsisa__ids_push(&g->ids, ids[p])) goto fail;
        if ((p - i + 1) % max_bucket_size == 0 && wsisa__groups_close(g)) goto fail;
      }
      size_t parent = t->nodes[owner[i]].parent;
      for (size_t p = i + full; p < run; p++) {
        ids[kept] = ids[p];
        owner[kept++] = parent;
      }
      i = run;
    }
    len = kept;
  }
  /* Height 1: the root's remaining children, in chunks. */
  for (size_t p = 0; p < len; p++) {
    if (wsisa__ids_push(&g->ids, ids[p])) goto fail;
    if ((p + 1) % max_bucket_size == 0 && wsisa__groups_close(g)) goto fail;
  }
  rc = wsisa__groups_close(g);
fail:
  free(ids);
  free(owner);
  return rc;
}
