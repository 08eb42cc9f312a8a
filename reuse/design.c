/* Stage-level reuse (seed 000 §4.1, Algorithm 1): identical stage instances
 * collapse into one. With the parent stages shared by all instances, the
 * compact graph's find reduces to a hashed lookup of the whole key tuple, O(k)
 * per instance and O(k·n) in all. */
#include <stdlib.h>
#include <string.h>

#include "reuse/reuse_private.h"

static uint64_t row_hash(const uint64_t *row, size_t k) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (size_t l = 0; l < k; l++) h = wsisa__mix64(h ^ row[l]);
  return h;
}

/* Number the distinct rows by first appearance. */
static int compact(wsisa_reuse_design *d) {
  size_t n = d->n, k = d->k, cap = 16;
  while (cap < 2 * n) cap <<= 1;
  size_t *slot = malloc(cap * sizeof *slot); /* distinct id, or NONE */
  size_t *count = NULL;
  int rc = WSISA_ENOMEM;
  if (!slot) goto fail;
  for (size_t i = 0; i < cap; i++) slot[i] = WSISA_REUSE_NO_NODE;

  d->n_distinct = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t *row = d->keys + i * k;
    size_t s = (size_t)row_hash(row, k) & (cap - 1);
    for (;; s = (s + 1) & (cap - 1)) {
      if (slot[s] == WSISA_REUSE_NO_NODE) {
        slot[s] = d->n_distinct;
        d->first[d->n_distinct++] = i;
        break;
      }
      if (memcmp(d->keys + d->first[slot[s]] * k, row, k * sizeof *row) == 0) break;
    }
    d->distinct_of[i] = slot[s];
  }

  /* Members grouped by distinct id (a counting sort keeps them ascending). */
  count = calloc(d->n_distinct + 1, sizeof *count);
  d->member_start = malloc((d->n_distinct + 1) * sizeof *d->member_start);
  d->distinct_keys = malloc(d->n_distinct * k * sizeof *d->distinct_keys);
  if (!count || !d->member_start || !d->distinct_keys) goto fail;
  for (size_t i = 0; i < n; i++) count[d->distinct_of[i] + 1]++;
  for (size_t u = 0; u < d->n_distinct; u++) count[u + 1] += count[u];
  memcpy(d->member_start, count, (d->n_distinct + 1) * sizeof *count);
  for (size_t i = 0; i < n; i++) d->members[count[d->distinct_of[i]]++] = i;
  for (size_t u = 0; u < d->n_distinct; u++)
    memcpy(d->distinct_keys + u * k, d->keys + d->first[u] * k, k * sizeof *d->keys);
  rc = 0;
fail:
  free(slot);
  free(count);
  return rc;
}

int wsisa_reuse_design_new(const uint64_t *keys, size_t n, size_t k,
                           wsisa_reuse_design **out) {
  *out = NULL;
  if (n == 0 || k == 0) return WSISA_EUSAGE;
  wsisa_reuse_design *d = calloc(1, sizeof *d);
  int rc = WSISA_ENOMEM;
  if (!d) return rc;
  d->n = n;
  d->k = k;
  d->keys = malloc(n * k * sizeof *d->keys);
  d->distinct_of = malloc(n * sizeof *d->distinct_of);
  d->first = malloc(n * sizeof *d->first);
  d->members = malloc(n * sizeof *d->members);
  if (!d->keys || !d->distinct_of || !d->first || !d->members) goto fail;
  memcpy(d->keys, keys, n * k * sizeof *keys);
  if ((rc = compact(d)) ||
      (rc = wsisa_reuse_tree_build(d->distinct_keys, k, NULL, d->n_distinct, &d->tree)))
    goto fail;
  *out = d;
  return 0;
fail:
  wsisa_reuse_design_free(d);
  return rc;
}

void wsisa_reuse_design_free(wsisa_reuse_design *d) {
  if (!d) return;
  free(d->keys);
  free(d->distinct_of);
  free(d->first);
  free(d->member_start);
  free(d->members);
  free(d->distinct_keys);
  wsisa_reuse_tree_free(d->tree);
  free(d);
}
