/* The papers' worked examples: RTMA (seed 000 Fig. 7, seed 001 Fig. 3.7),
 * Full-Merge and Fold-Merge (seed 000 Figs. 8-9), Balance (seed 000 Fig. 10,
 * seed 001 Fig. 3.11), and a cost-weighted Balance (seed 001 §4.5.1) and
 * RTMA (reuse/rtma.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "reuse/reuse.h"

/* The 12-stage, 3-task reuse tree all four figures share, read off the text:
 * node 1 -> 5 -> {S1,S2,S3}; node 2 -> 6 -> {S4..S7} and 7 -> {S8,S9};
 * node 3 -> 8 -> {S10} and 9 -> {S11}; node 4 -> 10 -> {S12}. Keys are the
 * figure's node numbers (level 1 and 2) and the stage number (level 3).
 * Instance i is S(i+1). Full-Merge gives costs 5, 9, 5, 3 (Fig. 8), the fold
 * 8, 9, 5, Balance 8, 8, 8 (Fig. 10). */
static const uint64_t figure_keys[12][3] = {
    {1, 5, 1},  {1, 5, 2},  {1, 5, 3},  {2, 6, 4},  {2, 6, 5},  {2, 6, 6},
    {2, 6, 7},  {2, 7, 8},  {2, 7, 9},  {3, 8, 10}, {3, 9, 11}, {4, 10, 12},
};

static wsisa_reuse_design *figure_design(void) {
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(&figure_keys[0][0], 12, 3, &d), 0);
  return d;
}

static wsisa_reuse_buckets *run(const wsisa_reuse_design *d, wsisa_reuse_opts o) {
  wsisa_reuse_buckets *b = NULL;
  cr_assert_eq(wsisa_reuse_merge(d, &o, &b), 0);
  return b;
}

/* Bucket holding instance `id`. */
static size_t bucket_of(const wsisa_reuse_buckets *b, size_t id) {
  for (size_t j = 0; j < b->n_buckets; j++)
    for (size_t i = b->start[j]; i < b->start[j + 1]; i++)
      if (b->instances[i] == id) return j;
  cr_assert_fail("instance %zu in no bucket", id);
  return 0;
}

static size_t bucket_size(const wsisa_reuse_buckets *b, size_t j) {
  return b->start[j + 1] - b->start[j];
}

/* Bucket j holds exactly the listed stages (1-based, as in the figures). */
static void expect_bucket(const wsisa_reuse_buckets *b, size_t j, const int *stages, size_t n) {
  cr_assert_eq(bucket_size(b, j), n, "bucket %zu has %zu stages, expected %zu", j, bucket_size(b, j), n);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(bucket_of(b, (size_t)stages[i] - 1), j, "S%d not in bucket %zu", stages[i], j);
}

Test(reuse_papers, rtma_figure_7) {
  wsisa_reuse_design *d = figure_design();
  cr_assert_eq(wsisa_reuse_tree_tasks(d->tree), 22, "4 + 6 + 12 distinct tasks");
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_RTMA, .max_bucket_size = 3});
  cr_assert_eq(b->n_buckets, 4);
  /* Fig. 7C: S1-S3 and S4-S6 fill buckets under nodes 5 and 6, S7 stays;
   * Fig. 7E: S7, S8, S9 move up under node 2 and fill the next; S10-S12
   * reach the root and share the last. */
  expect_bucket(b, 0, (const int[]){1, 2, 3}, 3);
  expect_bucket(b, 1, (const int[]){4, 5, 6}, 3);
  expect_bucket(b, 2, (const int[]){7, 8, 9}, 3);
  expect_bucket(b, 3, (const int[]){10, 11, 12}, 3);
  size_t tasks[] = {5, 5, 6, 8};
  for (size_t j = 0; j < 4; j++) cr_expect_eq(b->tasks[j], tasks[j], "bucket %zu: %zu tasks", j, b->tasks[j]);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, rtma_exact_buckets_only_below_the_root) {
  /* With room for four, S4-S7 fill a bucket under node 6; nothing else fills
   * one before the root, where the rest goes in chunks of four. */
  wsisa_reuse_design *d = figure_design();
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_RTMA, .max_bucket_size = 4});
  cr_assert_eq(b->n_buckets, 3);
  expect_bucket(b, 0, (const int[]){4, 5, 6, 7}, 4);
  expect_bucket(b, 1, (const int[]){1, 2, 3, 8}, 4);
  expect_bucket(b, 2, (const int[]){9, 10, 11, 12}, 4);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void expect_costs(const wsisa_reuse_buckets *b, const double *sorted, size_t n) {
  cr_assert_eq(b->n_buckets, n);
  double *c = malloc(n * sizeof *c);
  memcpy(c, b->cost, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_double);
  for (size_t j = 0; j < n; j++) cr_expect_eq(c[j], sorted[j], "cost %zu: %g, expected %g", j, c[j], sorted[j]);
  free(c);
}

Test(reuse_papers, full_merge_figure_8) {
  wsisa_reuse_design *d = figure_design();
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 3,
                                                     .trtma_last_phase = WSISA_REUSE_FULL_MERGE});
  /* Level 1 has four nodes (>= 3): one bucket each, costs 5, 9, 5, 3. */
  cr_assert_eq(b->n_buckets, 4);
  double costs[] = {5, 9, 5, 3};
  for (size_t j = 0; j < 4; j++) cr_expect_eq(b->cost[j], costs[j]);
  expect_bucket(b, 1, (const int[]){4, 5, 6, 7, 8, 9}, 6);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, fold_merge_figure_8) {
  wsisa_reuse_design *d = figure_design();
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 3,
                                                     .trtma_last_phase = WSISA_REUSE_FOLD_MERGE});
  /* 5, 9, 5, 3 -> 8, 9, 5: the first and the last buckets fold together. */
  expect_costs(b, (const double[]){5, 8, 9}, 3);
  size_t j = bucket_of(b, 0);
  expect_bucket(b, j, (const int[]){1, 2, 3, 12}, 4);
  cr_expect_eq(b->cost[j], 8);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, balance_figure_10) {
  wsisa_reuse_design *d = figure_design();
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 3});
  /* 8, 9, 5 -> 8, 8, 8: one of S4-S9 (interchangeable, Fig. 10E) joins
   * S10 and S11; nodes 6 and 7 whole would not help (Figs. 10C, 10D). */
  expect_costs(b, (const double[]){8, 8, 8}, 3);
  size_t small = bucket_of(b, 9);
  cr_assert_eq(bucket_of(b, 10), small);
  cr_assert_eq(bucket_size(b, small), 3);
  size_t moved = 0;
  for (size_t s = 3; s < 9; s++) moved += bucket_of(b, s) == small;
  cr_expect_eq(moved, 1, "exactly one of S4-S9 moved");
  expect_bucket(b, bucket_of(b, 0), (const int[]){1, 2, 3, 12}, 4);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, fold_merge_pairing_figure_9) {
  /* Six level-1 subtrees with costs 12 > 10 > 8 > 6 > 4 > 3 (a node and its
   * leaves, two levels), inserted out of order; folding to four pairs b4 with
   * b5 and b3 with b6. */
  const size_t leaves[6] = {11, 9, 7, 5, 3, 2};      /* b1..b6: cost = leaves + 1 */
  const size_t insertion[6] = {3, 0, 5, 2, 4, 1};    /* b4, b1, b6, b3, b5, b2 */
  uint64_t keys[37 * 2];
  size_t owner[37], n = 0;
  for (size_t i = 0; i < 6; i++) {
    size_t bk = insertion[i];
    for (size_t leaf = 0; leaf < leaves[bk]; leaf++) {
      keys[2 * n] = 100 + bk;
      keys[2 * n + 1] = leaf;
      owner[n++] = bk;
    }
  }
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(keys, n, 2, &d), 0);
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 4,
                                                     .trtma_last_phase = WSISA_REUSE_FOLD_MERGE});
  cr_assert_eq(b->n_buckets, 4);
  size_t first_of[6];
  for (size_t i = n; i-- > 0;) first_of[owner[i]] = i;
  size_t bucket[6];
  for (size_t bk = 0; bk < 6; bk++) bucket[bk] = bucket_of(b, first_of[bk]);
  for (size_t i = 0; i < n; i++) cr_assert_eq(bucket_of(b, i), bucket[owner[i]], "subtrees stay whole");
  cr_expect_eq(bucket[3], bucket[4], "b4 and b5 fold together");
  cr_expect_eq(bucket[2], bucket[5], "b3 and b6 fold together");
  cr_expect_neq(bucket[0], bucket[1]);
  cr_expect_neq(bucket[0], bucket[2]);
  cr_expect_neq(bucket[0], bucket[3]);
  cr_expect_neq(bucket[1], bucket[2]);
  cr_expect_neq(bucket[1], bucket[3]);
  cr_expect_neq(bucket[2], bucket[3]);
  expect_costs(b, (const double[]){10, 10, 11, 12}, 4);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, fold_merge_repeats_above_twice_the_target) {
  /* Nine single-task subtrees folded to two: 9 -> 5 -> 3 -> 2. */
  uint64_t keys[9];
  for (size_t i = 0; i < 9; i++) keys[i] = i;
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(keys, 9, 1, &d), 0);
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 2,
                                                     .trtma_last_phase = WSISA_REUSE_FOLD_MERGE});
  expect_costs(b, (const double[]){4, 5}, 2);
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, balance_by_level_cost) {
  /* seed 001 §4.5.1: buckets even in tasks can be uneven in time. Level 3
   * costs four times the others. Full-Merge gives {A} and {B, C, D}; by task
   * count (3 and 6) no move lowers the larger bucket, so Balance keeps them
   * and the time is 15 against 6. Weighted, moving C leaves 12 and 11. */
  const uint64_t keys[4][3] = {{0, 1, 0}, {1, 0, 1}, {1, 1, 1}, {1, 1, 0}};
  const double cost[3] = {1, 1, 4};
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(&keys[0][0], 4, 3, &d), 0);

  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 2});
  expect_costs(b, (const double[]){3, 6}, 2);
  double time = 0;
  for (size_t j = 0; j < 2; j++) {
    double c = wsisa_reuse_tree_cost(b->trees[j], cost);
    if (c > time) time = c;
  }
  cr_expect_eq(time, 15);
  wsisa_reuse_buckets_free(b);

  b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_TRTMA, .max_buckets = 2, .level_cost = cost});
  expect_costs(b, (const double[]){11, 12}, 2);
  cr_expect_eq(bucket_of(b, 0), bucket_of(b, 2), "C joins A");
  cr_expect_eq(bucket_of(b, 1), bucket_of(b, 3));
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}

Test(reuse_papers, rtma_by_level_cost) {
  /* Level 1 costs ten times level 2. A, B, C, D share their level-1 task;
   * E, F, G, H share nothing. By count (4 per bucket) RTMA makes {A..D} at
   * 10 + 4 and {E..H} at 4 x 11: 14 and 44. By cost the budget is their
   * mean, 29: {A..D} stays, {E, F} and {G, H} cost 22 each. */
  const uint64_t keys[8][2] = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {3, 1}, {4, 1}, {5, 1}};
  const double cost[2] = {10, 1};
  wsisa_reuse_design *d = NULL;
  cr_assert_eq(wsisa_reuse_design_new(&keys[0][0], 8, 2, &d), 0);
  wsisa_reuse_buckets *b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_RTMA, .max_bucket_size = 4});
  cr_assert_eq(b->n_buckets, 2);
  double by_count[2];
  for (size_t j = 0; j < 2; j++) by_count[j] = wsisa_reuse_tree_cost(b->trees[j], cost);
  cr_expect(by_count[0] + by_count[1] == 58 && (by_count[0] == 44 || by_count[1] == 44));
  wsisa_reuse_buckets_free(b);

  b = run(d, (wsisa_reuse_opts){.strategy = WSISA_REUSE_RTMA, .max_bucket_size = 4, .level_cost = cost});
  expect_costs(b, (const double[]){14, 22, 22}, 3);
  cr_expect_eq(bucket_of(b, 0), bucket_of(b, 3), "A..D together");
  cr_expect_eq(bucket_of(b, 4), bucket_of(b, 5), "E with F");
  cr_expect_eq(bucket_of(b, 6), bucket_of(b, 7), "G with H");
  cr_expect_neq(bucket_of(b, 4), bucket_of(b, 6));
  wsisa_reuse_buckets_free(b);
  wsisa_reuse_design_free(d);
}
