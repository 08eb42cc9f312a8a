/* Task keys, the reuse tree's layout and lookups, stage-level compaction, the
 * peak-intermediate estimate, Stoer-Wagner against brute force, and argument
 * checks of the reuse library. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "reuse/reuse.h"
#include "reuse/reuse_private.h"

Test(reuse_keys, exact_values) {
  double a[] = {220, 5.0}, b[] = {220, 5.0}, c[] = {220, 5.000000000000001}, z[] = {-0.0}, pz[] = {0.0};
  cr_expect_eq(wsisa_reuse_key_hash(a, 2), wsisa_reuse_key_hash(b, 2));
  cr_expect_neq(wsisa_reuse_key_hash(a, 2), wsisa_reuse_key_hash(c, 2), "one ulp apart is another task");
  cr_expect_neq(wsisa_reuse_key_hash(a, 2), wsisa_reuse_key_hash(a, 1));
  cr_expect_eq(wsisa_reuse_key_hash(z, 1), wsisa_reuse_key_hash(pz, 1));
  double swapped[] = {5.0, 220};
  cr_expect_neq(wsisa_reuse_key_hash(a, 2), wsisa_reuse_key_hash(swapped, 2), "order matters");
  double n1[] = {NAN}, n2[] = {-NAN};
  cr_expect_eq(wsisa_reuse_key_hash(n1, 1), wsisa_reuse_key_hash(n2, 1));
}

Test(reuse_keys, from_values_by_level) {
  /* Parameters in canonical order, levels interleaved. */
  const size_t level[] = {0, 2, 0, 1};
  const double values[] = {220, 80, 5.0, 8,   /* instance 0 */
                           220, 45, 5.0, 8};  /* instance 1: level 2 differs */
  uint64_t keys[2 * 3];
  cr_assert_eq(wsisa_reuse_keys_from_values(values, 2, 4, level, 3, keys), 0);
  double l0[] = {220, 5.0}, l1[] = {8}, l2[] = {80};
  cr_expect_eq(keys[0], wsisa_reuse_key_hash(l0, 2));
  cr_expect_eq(keys[1], wsisa_reuse_key_hash(l1, 1));
  cr_expect_eq(keys[2], wsisa_reuse_key_hash(l2, 1));
  cr_expect_eq(keys[3], keys[0]);
  cr_expect_eq(keys[4], keys[1]);
  cr_expect_neq(keys[5], keys[2]);
  const size_t bad[] = {0, 3, 0, 1};
  cr_expect_eq(wsisa_reuse_keys_from_values(values, 2, 4, bad, 3, keys), WSISA_EUSAGE);
  cr_expect_eq(wsisa_reuse_keys_from_values(values, 2, 4, level, 0, keys), WSISA_EUSAGE);
}

Test(reuse_keys, empty_level_is_shared) {
  const size_t level[] = {0, 0};
  const double values[] = {1, 2, 3, 4};
  uint64_t keys[2 * 2];
  cr_assert_eq(wsisa_reuse_keys_from_values(values, 2, 2, level, 2, keys), 0);
  cr_expect_neq(keys[0], keys[2]);
  cr_expect_eq(keys[1], keys[3], "a level without parameters is one task");
  cr_expect_eq(keys[1], wsisa_reuse_key_hash(NULL, 0));
}

/* Rows: a small tree with a shared prefix, a duplicate and a divergence at
 * level 1:  1-2-3 (x2), 1-2-4, 1-5-6, 7-8-9. */
static const uint64_t rows[5][3] = {{1, 2, 3}, {1, 2, 4}, {1, 5, 6}, {1, 2, 3}, {7, 8, 9}};

Test(reuse_tree, preorder_layout) {
  wsisa_reuse_tree *t = NULL;
  cr_assert_eq(wsisa_reuse_tree_build(&rows[0][0], 3, NULL, 5, &t), 0);
  cr_assert_eq(t->n_nodes, 1 + 2 + 3 + 4);
  cr_expect_eq(wsisa_reuse_tree_tasks(t), 9);
  /* Preorder in insertion order: root, 1, 2, 3, 4, 5, 6, 7, 8, 9. */
  const uint64_t expect_key[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const size_t expect_level[] = {0, 1, 2, 3, 3, 2, 3, 1, 2, 3};
  for (size_t v = 0; v < t->n_nodes; v++) {
    cr_expect_eq(t->nodes[v].key, expect_key[v], "node %zu", v);
    cr_expect_eq(t->nodes[v].level, expect_level[v], "node %zu", v);
  }
  cr_expect_eq(t->nodes[0].parent, WSISA_REUSE_NO_NODE);
  cr_expect_eq(t->nodes[0].end, 10);
  cr_expect_eq(t->nodes[1].end, 7);
  cr_expect_eq(t->nodes[2].n_children, 2);
  cr_expect_eq(t->children[t->nodes[2].first_child + 1], 4);
  /* Leaf 3 holds instances 0 and 3; the subtree of node 1 holds four. */
  cr_expect_eq(t->nodes[3].n_instances, 2);
  cr_expect_eq(t->instances[t->nodes[3].first_instance], 0);
  cr_expect_eq(t->instances[t->nodes[3].first_instance + 1], 3);
  cr_expect_eq(t->nodes[1].n_instances, 4);
  cr_expect_eq(t->nodes[7].n_instances, 1);
  cr_expect_eq(t->instances[t->nodes[7].first_instance], 4);
  cr_expect_eq(wsisa_reuse_tree_child(t, 1, 5), 5);
  cr_expect_eq(wsisa_reuse_tree_child(t, 0, 5), WSISA_REUSE_NO_NODE, "key 5 exists only at level 2");
  double cost[] = {10, 1, 0.5};
  cr_expect_float_eq(wsisa_reuse_tree_cost(t, cost), 2 * 10 + 3 * 1 + 4 * 0.5, 1e-12);
  wsisa_reuse_tree_free(t);
}

Test(reuse_tree, subset_by_ids) {
  wsisa_reuse_tree *t = NULL;
  const size_t ids[] = {4, 2};
  cr_assert_eq(wsisa_reuse_tree_build(&rows[0][0], 3, ids, 2, &t), 0);
  cr_expect_eq(wsisa_reuse_tree_tasks(t), 6);
  cr_expect_eq(t->nodes[1].key, 7, "insertion order: instance 4 came first");
  cr_expect_eq(t->instances[0], 4);
  cr_expect_eq(t->instances[1], 2);
  wsisa_reuse_tree_free(t);
}

Test(reuse_tree, peak_live) {
  /* A chain of 4 tasks: each output lives until its child ran. */
  const uint64_t chain[4] = {1, 2, 3, 4};
  wsisa_reuse_tree *t = NULL;
  cr_assert_eq(wsisa_reuse_tree_build(chain, 4, NULL, 1, &t), 0);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 1), 2);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 0), 2);
  wsisa_reuse_tree_free(t);
  /* One task feeding five leaves. */
  const uint64_t fan[5][2] = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}};
  cr_assert_eq(wsisa_reuse_tree_build(&fan[0][0], 2, NULL, 5, &t), 0);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 1), 2);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 2), 3);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 0), 6);
  wsisa_reuse_tree_free(t);
  /* Two level-1 tasks with two leaves each: one path at a time finishes the
   * first subtree, freeing its root, before the second starts. */
  const uint64_t two[4][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}};
  cr_assert_eq(wsisa_reuse_tree_build(&two[0][0], 2, NULL, 4, &t), 0);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 1), 2);
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 2), 4, "both roots held while a leaf of each runs");
  cr_expect_eq(wsisa_reuse_tree_peak_live(t, 0), 6, "two roots and four leaves at once");
  wsisa_reuse_tree_free(t);
}

Test(reuse_design, stage_level_compaction) {
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(&rows[0][0], 5, 3, &d), 0);
  cr_expect_eq(d->n_distinct, 4);
  const size_t distinct_of[] = {0, 1, 2, 0, 3};
  for (size_t i = 0; i < 5; i++) cr_expect_eq(d->distinct_of[i], distinct_of[i]);
  cr_expect_eq(d->first[3], 4);
  cr_expect_eq(d->member_start[1] - d->member_start[0], 2);
  cr_expect_eq(d->members[0], 0);
  cr_expect_eq(d->members[1], 3);
  cr_expect_eq(d->distinct_keys[3 * 3], 7);
  cr_expect_eq(wsisa_reuse_tree_tasks(d->tree), 9);
  wsisa_reuse_design_free(d);
}

Test(reuse_design, bad_arguments) {
  wsisa_reuse_design *d = NULL;
  cr_expect_eq(wsisa_reuse_design_new(&rows[0][0], 0, 3, &d), WSISA_EUSAGE);
  cr_expect_eq(wsisa_reuse_design_new(&rows[0][0], 5, 0, &d), WSISA_EUSAGE);
  cr_expect_null(d);
  cr_assert_eq(wsisa_reuse_design_new(&rows[0][0], 5, 3, &d), 0);
  wsisa_reuse_buckets *b = NULL;
  wsisa_reuse_opts o = {.strategy = WSISA_REUSE_RTMA};
  cr_expect_eq(wsisa_reuse_merge(d, &o, &b), WSISA_EUSAGE, "max_bucket_size 0");
  o = (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA};
  cr_expect_eq(wsisa_reuse_merge(d, &o, &b), WSISA_EUSAGE, "max_buckets 0");
  double cost[] = {1, -1, 1};
  o = (wsisa_reuse_opts){.strategy = WSISA_REUSE_NAIVE, .max_bucket_size = 2, .level_cost = cost};
  cr_expect_eq(wsisa_reuse_merge(d, &o, &b), WSISA_EUSAGE, "negative level cost");
  cr_expect_null(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_design, strategy_names) {
  for (int s = WSISA_REUSE_STAGE; s <= WSISA_REUSE_TRTMA; s++) {
    wsisa_reuse_strategy back;
    cr_assert_eq(wsisa_reuse_strategy_parse(wsisa_reuse_strategy_name((wsisa_reuse_strategy)s), &back), 0);
    cr_expect_eq((int)back, s);
  }
  wsisa_reuse_strategy x;
  cr_expect_eq(wsisa_reuse_strategy_parse("rtm", &x), WSISA_EUSAGE);
}

/* ---- Stoer-Wagner ---------------------------------------------------------- */

static double cut_weight(const double *w, size_t s, const unsigned char *side) {
  double sum = 0;
  for (size_t i = 0; i < s; i++)
    for (size_t j = i + 1; j < s; j++)
      if (side[i] != side[j]) sum += w[i * s + j];
  return sum;
}

Test(reuse_sca, stoer_wagner_matches_brute_force) {
  unsigned seed = 12345;
  for (int trial = 0; trial < 200; trial++) {
    size_t s = 2 + (size_t)(rand_r(&seed) % 9);
    double w[11 * 11];
    for (size_t i = 0; i < s; i++) {
      w[i * s + i] = 0;
      for (size_t j = i + 1; j < s; j++) {
        /* Integer weights, some zero, as degrees of reuse are. */
        w[i * s + j] = w[j * s + i] = (double)(rand_r(&seed) % 5);
      }
    }
    double best = INFINITY;
    unsigned char side[11];
    for (unsigned mask = 1; mask < (1u << s) - 1; mask++) {
      for (size_t i = 0; i < s; i++) side[i] = (unsigned char)(mask >> i & 1);
      double c = cut_weight(w, s, side);
      if (c < best) best = c;
    }
    double cut;
    cr_assert_eq(wsisa__stoer_wagner(w, s, side, &cut), 0);
    size_t ones = 0;
    for (size_t i = 0; i < s; i++) ones += side[i];
    cr_assert(ones > 0 && ones < s, "trial %d: a proper cut", trial);
    cr_assert_eq(cut, best, "trial %d (s=%zu): cut %g, minimum %g", trial, s, cut, best);
    cr_assert_eq(cut_weight(w, s, side), cut, "trial %d: the side has the reported weight", trial);
  }
}
