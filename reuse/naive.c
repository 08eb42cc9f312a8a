/* Naive merging (seed 000 §4.2.1; seed 001 §3.3.1): consecutive chunks of
 * max_bucket_size distinct instances in design order. Its reuse depends only
 * on how similar neighbouring parameter sets happen to be. */
#include "reuse/reuse_private.h"

int wsisa__merge_naive(const wsisa_reuse_design *d, size_t max_bucket_size, wsisa__groups *g) {
  for (size_t u = 0; u < d->n_distinct; u++) {
    if (wsisa__ids_push(&g->ids, u)) return WSISA_ENOMEM;
    if ((u + 1) % max_bucket_size == 0 && wsisa__groups_close(g)) return WSISA_ENOMEM;
  }
  return wsisa__groups_close(g);
}
