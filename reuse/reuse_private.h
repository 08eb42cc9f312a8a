/* reuse internals shared between its files: the child index, growable id
 * lists, and each merging algorithm's entry point over distinct instances. */
#ifndef WSISA_REUSE_PRIVATE_H
#define WSISA_REUSE_PRIVATE_H

#include "reuse/reuse.h"

/* splitmix64's finaliser: a cheap bijective mix for hash tables and keys. */
static inline uint64_t wsisa__mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Open-addressing map (parent node, key) -> child node, sized once. */
typedef struct wsisa__reuse_index {
  size_t mask;
  size_t *parent;   /* WSISA_REUSE_NO_NODE marks an empty slot */
  uint64_t *key;
  size_t *child;
} wsisa__reuse_index;

int wsisa__index_init(wsisa__reuse_index *ix, size_t entries);
void wsisa__index_clear(wsisa__reuse_index *ix);
size_t wsisa__index_find(const wsisa__reuse_index *ix, size_t parent, uint64_t key);
/* Insert a pair known to be absent. */
void wsisa__index_put(wsisa__reuse_index *ix, size_t parent, uint64_t key, size_t child);

/* A growable list of ids. */
typedef struct wsisa__ids {
  size_t *v;
  size_t len, cap;
} wsisa__ids;

int wsisa__ids_push(wsisa__ids *l, size_t id);
void wsisa__ids_clear(wsisa__ids *l);

/* Buckets of distinct ids, as the algorithms produce them. */
typedef struct wsisa__groups {
  wsisa__ids ids;     /* all ids, group by group */
  wsisa__ids start;   /* group g is ids[start[g] .. start[g+1]); start[0] = 0 */
} wsisa__groups;

int wsisa__groups_init(wsisa__groups *g);
/* Close the group made of the ids pushed since the last close. */
int wsisa__groups_close(wsisa__groups *g);
void wsisa__groups_clear(wsisa__groups *g);

/* Cumulative level costs: cum[0] = 0, cum[l] = cost of levels 1..l. */
int wsisa__cum_costs(const double *level_cost, size_t k, double **out);

/* The algorithms: each fills `g` with buckets of the design's distinct ids. */
int wsisa__merge_naive(const wsisa_reuse_design *d, size_t max_bucket_size, wsisa__groups *g);
int wsisa__merge_sca(const wsisa_reuse_design *d, size_t max_bucket_size,
                     const double *level_cost, wsisa__groups *g);
int wsisa__merge_rtma(const wsisa_reuse_design *d, size_t max_bucket_size,
                      const double *level_cost, wsisa__groups *g);
int wsisa__merge_trtma(const wsisa_reuse_design *d, size_t max_buckets,
                       const double *level_cost, wsisa_reuse_trtma_phase last,
                       wsisa__groups *g);

/* Minimum cut of the complete graph on s vertices with symmetric weights
 * w[i*s + j] >= 0 (Stoer-Wagner). Writes 1 into side[i] for the vertices of one
 * side, 0 for the other, and the cut weight into *cut. s >= 2. */
int wsisa__stoer_wagner(const double *w, size_t s, unsigned char *side, double *cut);

#endif
