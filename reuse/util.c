/* Small containers the reuse algorithms share: the hashed child index, id
 * lists and bucket groups, and cumulative level costs. */
#include <stdlib.h>

#include "reuse/reuse_private.h"

int wsisa__index_init(wsisa__reuse_index *ix, size_t entries) {
  size_t cap = 16;
  while (cap < 2 * entries) cap <<= 1;  /* load factor <= 1/2 keeps probes short */
  ix->mask = cap - 1;
  ix->parent = malloc(cap * sizeof *ix->parent);
  ix->key = malloc(cap * sizeof *ix->key);
  ix->child = malloc(cap * sizeof *ix->child);
  if (!ix->parent || !ix->key || !ix->child) {
    wsisa__index_clear(ix);
    return WSISA_ENOMEM;
  }
  for (size_t i = 0; i < cap; i++) ix->parent[i] = WSISA_REUSE_NO_NODE;
  return 0;
}

void wsisa__index_clear(wsisa__reuse_index *ix) {
  free(ix->parent);
  free(ix->key);
  free(ix->child);
  ix->parent = NULL;
  ix->key = NULL;
  ix->child = NULL;
}

static size_t slot_of(const wsisa__reuse_index *ix, size_t parent, uint64_t key) {
  return (size_t)(wsisa__mix64(key ^ wsisa__mix64((uint64_t)parent)) & ix->mask);
}

size_t wsisa__index_find(const wsisa__reuse_index *ix, size_t parent, uint64_t key) {
  for (size_t i = slot_of(ix, parent, key);; i = (i + 1) & ix->mask) {
    if (ix->parent[i] == WSISA_REUSE_NO_NODE) return WSISA_REUSE_NO_NODE;
    if (ix->parent[i] == parent && ix->key[i] == key) return ix->child[i];
  }
}

void wsisa__index_put(wsisa__reuse_index *ix, size_t parent, uint64_t key, size_t child) {
  size_t i = slot_of(ix, parent, key);
  while (ix->parent[i] != WSISA_REUSE_NO_NODE) i = (i + 1) & ix->mask;
  ix->parent[i] = parent;
  ix->key[i] = key;
  ix->child[i] = child;
}

int wsisa__ids_push(wsisa__ids *l, size_t id) {
  if (l->len == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    size_t *v = realloc(l->v, cap * sizeof *v);
    if (!v) return WSISA_ENOMEM;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->len++] = id;
  return 0;
}

void wsisa__ids_clear(wsisa__ids *l) {
  free(l->v);
  l->v = NULL;
  l->len = l->cap = 0;
}

int wsisa__groups_init(wsisa__groups *g) {
  g->ids = (wsisa__ids){0};
  g->start = (wsisa__ids){0};
  return wsisa__ids_push(&g->start, 0);
}

int wsisa__groups_close(wsisa__groups *g) {
  if (g->ids.len == g->start.v[g->start.len - 1]) return 0; /* never an empty bucket */
  return wsisa__ids_push(&g->start, g->ids.len);
}

void wsisa__groups_clear(wsisa__groups *g) {
  wsisa__ids_clear(&g->ids);
  wsisa__ids_clear(&g->start);
}

int wsisa__cum_costs(const double *level_cost, size_t k, double **out) {
  double *cum = malloc((k + 1) * sizeof *cum);
  if (!cum) return WSISA_ENOMEM;
  cum[0] = 0;
  for (size_t l = 1; l <= k; l++) cum[l] = cum[l - 1] + (level_cost ? level_cost[l - 1] : 1.0);
  *out = cum;
  return 0;
}
