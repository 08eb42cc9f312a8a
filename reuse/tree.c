/* The reuse tree (seed 000 §4.2.3, Figure 6; seed 001 §3.3.3): a trie of task
 * keys built with one hashed child lookup per task, O(k·n) instead of the
 * papers' O(n²) linear scan, then laid out in preorder for the executor. */
#include <stdlib.h>

#include "reuse/reuse_private.h"

/* The trie while it grows: nodes in creation order, children and the
 * instances of a leaf as singly linked lists that keep insertion order. */
typedef struct growing {
  size_t n_nodes;
  uint64_t *key;
  size_t *level, *parent, *first_child, *last_child, *next_sibling;
  size_t *inst_head, *inst_tail, *inst_next; /* inst_next is per input position */
  wsisa__reuse_index ix;
} growing;

static void growing_clear(growing *g) {
  free(g->key);
  free(g->level);
  free(g->parent);
  free(g->first_child);
  free(g->last_child);
  free(g->next_sibling);
  free(g->inst_head);
  free(g->inst_tail);
  free(g->inst_next);
  wsisa__index_clear(&g->ix);
}

static int growing_init(growing *g, size_t max_nodes, size_t count) {
  g->n_nodes = 0;
  g->key = malloc(max_nodes * sizeof *g->key);
  g->level = malloc(max_nodes * sizeof *g->level);
  g->parent = malloc(max_nodes * sizeof *g->parent);
  g->first_child = malloc(max_nodes * sizeof *g->first_child);
  g->last_child = malloc(max_nodes * sizeof *g->last_child);
  g->next_sibling = malloc(max_nodes * sizeof *g->next_sibling);
  g->inst_head = malloc(max_nodes * sizeof *g->inst_head);
  g->inst_tail = malloc(max_nodes * sizeof *g->inst_tail);
  g->inst_next = malloc((count ? count : 1) * sizeof *g->inst_next);
  if (!g->key || !g->level || !g->parent || !g->first_child || !g->last_child ||
      !g->next_sibling || !g->inst_head || !g->inst_tail || !g->inst_next ||
      wsisa__index_init(&g->ix, max_nodes))
    return WSISA_ENOMEM;
  return 0;
}

static size_t growing_add(growing *g, size_t parent, uint64_t key, size_t level) {
  size_t v = g->n_nodes++;
  g->key[v] = key;
  g->level[v] = level;
  g->parent[v] = parent;
  g->first_child[v] = g->last_child[v] = g->next_sibling[v] = WSISA_REUSE_NO_NODE;
  g->inst_head[v] = g->inst_tail[v] = WSISA_REUSE_NO_NODE;
  if (parent != WSISA_REUSE_NO_NODE) {
    if (g->last_child[parent] == WSISA_REUSE_NO_NODE) g->first_child[parent] = v;
    else g->next_sibling[g->last_child[parent]] = v;
    g->last_child[parent] = v;
    wsisa__index_put(&g->ix, parent, key, v);
  }
  return v;
}

/* Lay the grown trie out in preorder: ids, children lists, instance slices. */
static int layout(const growing *g, const size_t *ids, size_t count, size_t k,
                  wsisa_reuse_tree *t) {
  size_t *new_id = malloc(g->n_nodes * sizeof *new_id);
  size_t *order = malloc(g->n_nodes * sizeof *order); /* old ids in preorder */
  int rc = WSISA_ENOMEM;
  if (!new_id || !order) goto fail;

  /* Preorder by following first-child / next-sibling links. */
  size_t n = 0, v = 0;
  for (;;) {
    new_id[v] = n;
    order[n++] = v;
    if (g->first_child[v] != WSISA_REUSE_NO_NODE) {
      v = g->first_child[v];
      continue;
    }
    while (v != WSISA_REUSE_NO_NODE && g->next_sibling[v] == WSISA_REUSE_NO_NODE) v = g->parent[v];
    if (v == WSISA_REUSE_NO_NODE) break;
    v = g->next_sibling[v];
  }

  t->k = k;
  t->n_nodes = g->n_nodes;
  t->n_instances = count;
  t->nodes = malloc(g->n_nodes * sizeof *t->nodes);
  t->children = malloc((g->n_nodes > 1 ? g->n_nodes - 1 : 1) * sizeof *t->children);
  t->instances = malloc((count ? count : 1) * sizeof *t->instances);
  t->index = malloc(sizeof *t->index);
  if (!t->nodes || !t->children || !t->instances || !t->index) goto fail;
  if (wsisa__index_init(t->index, g->n_nodes)) {
    free(t->index);
    t->index = NULL;
    goto fail;
  }

  size_t n_children = 0, n_inst = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    size_t old = order[i];
    wsisa_reuse_node *node = &t->nodes[i];
    node->key = g->key[old];
    node->level = g->level[old];
    node->parent = g->parent[old] == WSISA_REUSE_NO_NODE ? WSISA_REUSE_NO_NODE : new_id[g->parent[old]];
    node->first_child = n_children;
    node->n_children = 0;
    for (size_t c = g->first_child[old]; c != WSISA_REUSE_NO_NODE; c = g->next_sibling[c]) {
      t->children[n_children++] = new_id[c];
      node->n_children++;
    }
    node->first_instance = n_inst;
    node->n_instances = 0;
    for (size_t p = g->inst_head[old]; p != WSISA_REUSE_NO_NODE; p = g->inst_next[p]) {
      t->instances[n_inst++] = ids ? ids[p] : p;
      node->n_instances++;
    }
    if (node->parent != WSISA_REUSE_NO_NODE) wsisa__index_put(t->index, node->parent, node->key, i);
  }
  /* Subtree ends and instance counts, children before parents. */
  for (size_t i = g->n_nodes; i-- > 0;) {
    wsisa_reuse_node *node = &t->nodes[i];
    if (node->n_children == 0) {
      node->end = i + 1;
      continue;
    }
    const wsisa_reuse_node *last = &t->nodes[t->children[node->first_child + node->n_children - 1]];
    const wsisa_reuse_node *first = &t->nodes[t->children[node->first_child]];
    node->end = last->end;
    node->first_instance = first->first_instance;
    node->n_instances = last->first_instance + last->n_instances - first->first_instance;
  }
  rc = 0;
fail:
  free(new_id);
  free(order);
  return rc;
}

int wsisa_reuse_tree_build(const uint64_t *keys, size_t k, const size_t *ids,
                           size_t count, wsisa_reuse_tree **out) {
  *out = NULL;
  if (k == 0) return WSISA_EUSAGE;
  growing g = {0};
  wsisa_reuse_tree *t = calloc(1, sizeof *t);
  int rc = WSISA_ENOMEM;
  if (!t || growing_init(&g, 1 + count * k, count)) goto fail;

  growing_add(&g, WSISA_REUSE_NO_NODE, 0, 0);
  for (size_t i = 0; i < count; i++) {
    const uint64_t *row = keys + (ids ? ids[i] : i) * k;
    size_t v = 0;
    for (size_t l = 0; l < k; l++) {
      size_t c = wsisa__index_find(&g.ix, v, row[l]);
      v = c != WSISA_REUSE_NO_NODE ? c : growing_add(&g, v, row[l], l + 1);
    }
    g.inst_next[i] = WSISA_REUSE_NO_NODE;
    if (g.inst_tail[v] == WSISA_REUSE_NO_NODE) g.inst_head[v] = i;
    else g.inst_next[g.inst_tail[v]] = i;
    g.inst_tail[v] = i;
  }
  if ((rc = layout(&g, ids, count, k, t))) goto fail;
  growing_clear(&g);
  *out = t;
  return 0;
fail:
  growing_clear(&g);
  wsisa_reuse_tree_free(t);
  return rc;
}

void wsisa_reuse_tree_free(wsisa_reuse_tree *t) {
  if (!t) return;
  if (t->index) wsisa__index_clear(t->index);
  free(t->index);
  free(t->nodes);
  free(t->children);
  free(t->instances);
  free(t);
}

size_t wsisa_reuse_tree_tasks(const wsisa_reuse_tree *t) { return t->n_nodes - 1; }

double wsisa_reuse_tree_cost(const wsisa_reuse_tree *t, const double *level_cost) {
  if (!level_cost) return (double)(t->n_nodes - 1);
  double sum = 0;
  for (size_t v = 1; v < t->n_nodes; v++) sum += level_cost[t->nodes[v].level - 1];
  return sum;
}

size_t wsisa_reuse_tree_child(const wsisa_reuse_tree *t, size_t node, uint64_t key) {
  return wsisa__index_find(t->index, node, key);
}

size_t wsisa_reuse_tree_peak_live(const wsisa_reuse_tree *t, size_t active_paths) {
  size_t n = t->n_nodes;
  size_t *stack = malloc(n * sizeof *stack);
  size_t *pending = malloc(n * sizeof *pending); /* children not yet run */
  size_t *running = malloc(n * sizeof *running);
  size_t peak = 0;
  if (!stack || !pending || !running) goto done; /* 0: no estimate */

  size_t top = 0, live = 0;
  const wsisa_reuse_node *root = &t->nodes[0];
  /* Push children last-first so the first child is on top: depth first in
   * insertion order. */
  for (size_t j = root->n_children; j-- > 0;) stack[top++] = t->children[root->first_child + j];
  for (size_t v = 0; v < n; v++) pending[v] = t->nodes[v].n_children;
  while (top > 0) {
    size_t r = 0;
    while (top > 0 && (active_paths == 0 || r < active_paths)) running[r++] = stack[--top];
    if (live + r > peak) peak = live + r;
    for (size_t i = 0; i < r; i++) {
      const wsisa_reuse_node *node = &t->nodes[running[i]];
      if (node->n_children > 0) {
        live++; /* held until its last child has run */
        for (size_t j = node->n_children; j-- > 0;) stack[top++] = t->children[node->first_child + j];
      }
      if (node->parent != 0 && --pending[node->parent] == 0) live--;
    }
  }
done:
  free(stack);
  free(pending);
  free(running);
  return peak;
}
