/* Object matching (object Dice sums) on hand-known shapes, against an
 * independent scikit-image computation, and the same sums on both workers. */
#include <math.h>
#include <stdio.h>
#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/io.h"
#include "tests/testutil.h"

#define ONE WSISA_OBJECT_MATCH_ONE

static wsisa_image *labels_new(int w, int h) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_I32, &img, NULL), 0);
  return img;
}

static void fill(wsisa_image *img, int x0, int y0, int x1, int y1, int32_t v) {
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) ((int32_t *)wsisa_image_row(img, y))[x] = v;
}

static void match_cpu(const wsisa_image *g, const wsisa_image *s, uint64_t sums[2]) {
  cr_assert_eq(wsisa_cpu_object_match(g, s, sums), 0);
}

Test(object_match, identical_objects_score_their_areas) {
  wsisa_image *g = labels_new(20, 10);
  fill(g, 1, 1, 5, 4, 1);  /* 12 px */
  fill(g, 10, 2, 17, 9, 2); /* 49 px */
  uint64_t sums[2];
  match_cpu(g, g, sums);
  cr_expect_eq(sums[0], (uint64_t)(61 * ONE));
  cr_expect_eq(sums[1], (uint64_t)(61 * ONE));
  wsisa_image_free(g);
}

Test(object_match, a_split_object_and_a_missed_one) {
  wsisa_image *g = labels_new(16, 8), *s = labels_new(16, 8);
  fill(g, 0, 0, 4, 4, 1);   /* a 16-px square ... */
  fill(s, 0, 0, 4, 2, 1);   /* ... split in two 8-px halves */
  fill(s, 0, 2, 4, 4, 2);
  fill(g, 10, 0, 13, 3, 2); /* 9 px the run misses */
  fill(s, 10, 5, 12, 7, 3); /* 4 px the reference lacks */
  uint64_t sums[2];
  match_cpu(g, s, sums);
  /* square: best partner = half 1 (tie, smaller label): Dice 2*8/(16+8) */
  cr_expect_eq(sums[0], (uint64_t)llrint(16.0 * 16.0 / 24.0 * ONE));
  /* each half: Dice 2*8/(8+16) with the square; the stray object 0 */
  cr_expect_eq(sums[1], 2 * (uint64_t)llrint(8.0 * 16.0 / 24.0 * ONE));
  wsisa_image_free(g);
  wsisa_image_free(s);
}

Test(object_match, nothing_overlaps) {
  wsisa_image *g = labels_new(9, 9), *s = labels_new(9, 9);
  fill(g, 0, 0, 3, 3, 1);
  fill(s, 5, 5, 9, 9, 1);
  uint64_t sums[2] = {7, 7};
  match_cpu(g, s, sums);
  cr_expect_eq(sums[0], 0);
  cr_expect_eq(sums[1], 0);
  wsisa_image_free(g);
  wsisa_image_free(s);
}

static wsisa_image *labels_of(const char *png) {
  wsisa_image *mask = NULL, *labels = NULL;
  cr_assert_eq(wsisa_image_read(tu_src(png), &mask, NULL), 0);
  labels = labels_new(mask->width, mask->height);
  cr_assert_eq(wsisa_cpu_label(mask, 4, labels), 0);
  wsisa_image_free(mask);
  return labels;
}

static int submit_match(starpu_data_handle_t *h, void *arg) {
  uint64_t *sums = arg;
  starpu_data_handle_t hv;
  starpu_vector_data_register(&hv, STARPU_MAIN_RAM, (uintptr_t)sums, 2, sizeof *sums);
  int rc = wsisa_submit_object_match(h[0], h[1], hv);
  starpu_data_unregister(hv); /* waits for the task */
  return rc;
}

/* tests/golden/make_object_dice.py: scikit-image labels, NumPy overlaps. */
Test(object_match, golden_and_both_workers, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker");
  wsisa_image *g = labels_of("tests/golden/workflow/tile_256_default.png");
  wsisa_image *s = labels_of("tests/golden/workflow/tile_256_varied.png");
  FILE *f = fopen(tu_src("tests/golden/objects/object_dice.txt"), "r");
  cr_assert(f);
  unsigned long long want_g, want_s;
  double want_dice;
  cr_assert_eq(fscanf(f, "%llu %llu %lf", &want_g, &want_s, &want_dice), 3);
  fclose(f);
  const uint32_t where[2] = {STARPU_CPU, STARPU_OPENCL};
  for (int k = 0; k < 2; k++) {
    uint64_t sums[2] = {0, 0};
    wsisa_image *imgs[] = {g, s};
    cr_assert_eq(tu_run_op(where[k], imgs, 2, submit_match, sums), 0);
    cr_expect_eq(sums[0], want_g, "worker %d: %llu", k, (unsigned long long)sums[0]);
    cr_expect_eq(sums[1], want_s, "worker %d: %llu", k, (unsigned long long)sums[1]);
  }
  wsisa_image_free(g);
  wsisa_image_free(s);
}
