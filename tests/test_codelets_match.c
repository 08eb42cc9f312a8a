/* Object matching (object Dice sums, F1 counts at IoU >= 0.5, AJI sums) on
 * hand-known shapes, against an independent scikit-image/SciPy computation
 * (tests/golden/make_object_dice.py, make_object_metrics.py), and the same
 * sums on both workers. */
#include <math.h>
#include <stdio.h>
#include <string.h>
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

static void match_cpu(const wsisa_image *g, const wsisa_image *s,
                      uint64_t sums[WSISA_MATCH_FIELDS]) {
  cr_assert_eq(wsisa_cpu_object_match(g, s, sums), 0);
}

/* TP, FP, FN, then the AJI's intersections, unions, unused area. */
static void expect_counts(const uint64_t *sums, uint64_t tp, uint64_t fp, uint64_t fn,
                          uint64_t inter, uint64_t uni, uint64_t unused) {
  const uint64_t want[] = {tp, fp, fn, inter, uni, unused};
  const int field[] = {WSISA_MATCH_TP,        WSISA_MATCH_FP,        WSISA_MATCH_FN,
                       WSISA_MATCH_AJI_INTER, WSISA_MATCH_AJI_UNION, WSISA_MATCH_AJI_UNUSED};
  for (int k = 0; k < 6; k++)
    cr_expect_eq(sums[field[k]], want[k], "field %d: %llu, want %llu", field[k],
                 (unsigned long long)sums[field[k]], (unsigned long long)want[k]);
}

Test(object_match, identical_objects_score_their_areas) {
  wsisa_image *g = labels_new(20, 10);
  fill(g, 1, 1, 5, 4, 1);  /* 12 px */
  fill(g, 10, 2, 17, 9, 2); /* 49 px */
  uint64_t sums[WSISA_MATCH_FIELDS];
  match_cpu(g, g, sums);
  cr_expect_eq(sums[WSISA_MATCH_DICE_REF], (uint64_t)(61 * ONE));
  cr_expect_eq(sums[WSISA_MATCH_DICE_RUN], (uint64_t)(61 * ONE));
  cr_expect_eq(sums[WSISA_MATCH_AREA_REF], 61);
  cr_expect_eq(sums[WSISA_MATCH_AREA_RUN], 61);
  expect_counts(sums, 2, 0, 0, 61, 61, 0);
  wsisa_object_metrics m;
  wsisa_object_metrics_of(sums, &m);
  cr_expect_eq(m.object_dice, 1.0);
  cr_expect_eq(m.f1, 1.0);
  cr_expect_eq(m.aji, 1.0);
  wsisa_image_free(g);
}

Test(object_match, a_split_object_and_a_missed_one) {
  wsisa_image *g = labels_new(16, 8), *s = labels_new(16, 8);
  fill(g, 0, 0, 4, 4, 1);   /* a 16-px square ... */
  fill(s, 0, 0, 4, 2, 1);   /* ... split in two 8-px halves */
  fill(s, 0, 2, 4, 4, 2);
  fill(g, 10, 0, 13, 3, 2); /* 9 px the run misses */
  fill(s, 10, 5, 12, 7, 3); /* 4 px the reference lacks */
  uint64_t sums[WSISA_MATCH_FIELDS];
  match_cpu(g, s, sums);
  /* square: best partner = half 1 (tie, smaller label): Dice 2*8/(16+8) */
  cr_expect_eq(sums[WSISA_MATCH_DICE_REF], (uint64_t)llrint(16.0 * 16.0 / 24.0 * ONE));
  /* each half: Dice 2*8/(8+16) with the square; the stray object 0 */
  cr_expect_eq(sums[WSISA_MATCH_DICE_RUN], 2 * (uint64_t)llrint(8.0 * 16.0 / 24.0 * ONE));
  /* Both halves have IoU 8/16 = 0.5 with the square, the one tie IoU >= 0.5
   * allows: the square takes half 1, half 2 and the stray are false
   * positives, the 9 px a false negative. AJI: the square with half 1 (IoU
   * tie, smaller label): 8 / 16; the 9 px alone; half 2 and the stray unused. */
  expect_counts(sums, 1, 2, 1, 8, 16 + 9, 8 + 4);
  wsisa_object_metrics m;
  wsisa_object_metrics_of(sums, &m);
  cr_expect_float_eq(m.precision, 1.0 / 3.0, 1e-15);
  cr_expect_float_eq(m.recall, 0.5, 1e-15);
  cr_expect_float_eq(m.f1, 2.0 / 5.0, 1e-15);
  cr_expect_float_eq(m.aji, 8.0 / 37.0, 1e-15);
  wsisa_image_free(g);
  wsisa_image_free(s);
}

Test(object_match, iou_one_half_is_in_and_just_below_is_out) {
  wsisa_image *g = labels_new(30, 6), *s = labels_new(30, 6);
  /* 10 px against 10 px: 7 overlap, IoU 7/13 >= 0.5; 6 overlap, 6/14 < 0.5 */
  fill(g, 0, 0, 10, 1, 1);
  fill(s, 3, 0, 13, 1, 1);
  fill(g, 0, 3, 10, 4, 2);
  fill(s, 4, 3, 14, 4, 2);
  /* 12 px against its 6-px left half: 6/12, exactly 0.5 */
  fill(g, 16, 0, 28, 1, 3);
  fill(s, 16, 0, 22, 1, 3);
  uint64_t sums[WSISA_MATCH_FIELDS];
  match_cpu(g, s, sums);
  expect_counts(sums, 2, 1, 1, 7 + 6 + 6, 13 + 14 + 12, 0);
  wsisa_image_free(g);
  wsisa_image_free(s);
}

Test(object_match, a_merged_object_counts_in_two_unions) {
  wsisa_image *g = labels_new(12, 4), *s = labels_new(12, 4);
  fill(g, 0, 0, 4, 4, 1);  /* 16 px */
  fill(g, 5, 0, 8, 4, 2);  /* 12 px */
  fill(s, 0, 0, 8, 4, 1);  /* 32 px over both and the gap */
  fill(s, 9, 0, 12, 1, 2); /* 3 px alone */
  uint64_t sums[WSISA_MATCH_FIELDS];
  match_cpu(g, s, sums);
  /* IoUs 16/32 (a match, 3·16 >= 16 + 32) and 12/32; both take the merged
   * object as partner, whose area then counts in both unions (Kumar's
   * definition); the 3 px are unused. */
  expect_counts(sums, 1, 1, 1, 16 + 12, 32 + 32, 3);
  wsisa_image_free(g);
  wsisa_image_free(s);
}

Test(object_match, the_best_iou_is_not_the_most_overlap) {
  wsisa_image *g = labels_new(20, 3), *s = labels_new(20, 3);
  fill(g, 0, 0, 10, 1, 1);  /* 10 px */
  fill(s, 0, 0, 6, 3, 1);   /* 18 px, 6 overlap: IoU 6/22 */
  fill(s, 6, 0, 10, 1, 2);  /* 4 px, 4 overlap: IoU 4/10 */
  uint64_t sums[WSISA_MATCH_FIELDS];
  match_cpu(g, s, sums);
  /* Dice takes the most overlap (label 1), AJI the largest IoU (label 2) */
  cr_expect_eq(sums[WSISA_MATCH_DICE_REF], wsisa_object_match_term(10, 6, 18));
  expect_counts(sums, 0, 2, 1, 4, 10, 18);
  wsisa_image_free(g);
  wsisa_image_free(s);
}

Test(object_match, nothing_overlaps_or_nothing_at_all) {
  wsisa_image *g = labels_new(9, 9), *s = labels_new(9, 9);
  fill(g, 0, 0, 3, 3, 1);
  fill(s, 5, 5, 9, 9, 1);
  uint64_t sums[WSISA_MATCH_FIELDS];
  memset(sums, 7, sizeof sums);
  match_cpu(g, s, sums);
  cr_expect_eq(sums[WSISA_MATCH_DICE_REF], 0);
  cr_expect_eq(sums[WSISA_MATCH_DICE_RUN], 0);
  expect_counts(sums, 0, 1, 1, 0, 9, 16);
  wsisa_object_metrics m;
  wsisa_object_metrics_of(sums, &m);
  cr_expect_eq(m.f1, 0.0);
  cr_expect_eq(m.aji, 0.0);
  wsisa_image *empty = labels_new(9, 9);
  match_cpu(empty, empty, sums);
  for (int k = 0; k < WSISA_MATCH_FIELDS; k++) cr_expect_eq(sums[k], 0, "field %d", k);
  wsisa_object_metrics_of(sums, &m);
  cr_expect(m.object_dice == 1.0 && m.precision == 1.0 && m.recall == 1.0 && m.f1 == 1.0 &&
            m.aji == 1.0);
  wsisa_image_free(g);
  wsisa_image_free(s);
  wsisa_image_free(empty);
}

/* Summed tile by tile, the fields give the slide's metrics: two tiles. */
Test(object_match, tiles_add_up) {
  wsisa_image *g = labels_new(8, 8), *s = labels_new(8, 8);
  fill(g, 0, 0, 4, 4, 1);
  fill(s, 0, 0, 4, 3, 1);
  uint64_t a[WSISA_MATCH_FIELDS], b[WSISA_MATCH_FIELDS], total[WSISA_MATCH_FIELDS];
  match_cpu(g, s, a);
  match_cpu(s, g, b);
  for (int k = 0; k < WSISA_MATCH_FIELDS; k++) total[k] = a[k] + b[k];
  wsisa_object_metrics m;
  wsisa_object_metrics_of(total, &m);
  /* 16 px against 12 px both ways: two matches, AJI 24 / 32 */
  cr_expect_eq(m.f1, 1.0);
  cr_expect_float_eq(m.aji, 24.0 / 32.0, 1e-15);
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
  starpu_vector_data_register(&hv, STARPU_MAIN_RAM, (uintptr_t)sums, WSISA_MATCH_FIELDS,
                              sizeof *sums);
  int rc = wsisa_submit_object_match(h[0], h[1], hv);
  starpu_data_unregister(hv); /* waits for the task */
  return rc;
}

/* Both workers' sums, expected equal; the CPU's in `sums`. */
static void both_workers(wsisa_image *g, wsisa_image *s, uint64_t sums[WSISA_MATCH_FIELDS],
                         const char *what) {
  const uint32_t where[2] = {STARPU_CPU, STARPU_OPENCL};
  uint64_t got[2][WSISA_MATCH_FIELDS];
  for (int k = 0; k < 2; k++) {
    memset(got[k], 0xAB, sizeof got[k]);
    wsisa_image *imgs[] = {g, s};
    cr_assert_eq(tu_run_op(where[k], imgs, 2, submit_match, got[k]), 0);
  }
  for (int f = 0; f < WSISA_MATCH_FIELDS; f++)
    cr_expect_eq(got[0][f], got[1][f], "%s, field %d: CPU %llu, OpenCL %llu", what, f,
                 (unsigned long long)got[0][f], (unsigned long long)got[1][f]);
  memcpy(sums, got[0], sizeof got[0]);
}

TestSuite(object_match_workers, .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop);

/* tests/golden/make_object_dice.py: scikit-image labels, NumPy overlaps. */
Test(object_match_workers, object_dice_golden) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker");
  wsisa_image *g = labels_of("tests/golden/workflow/tile_256_default.png");
  wsisa_image *s = labels_of("tests/golden/workflow/tile_256_varied.png");
  FILE *f = fopen(tu_src("tests/golden/objects/object_dice.txt"), "r");
  cr_assert(f);
  unsigned long long want_g, want_s;
  double want_dice;
  cr_assert_eq(fscanf(f, "%llu %llu %lf", &want_g, &want_s, &want_dice), 3);
  fclose(f);
  uint64_t sums[WSISA_MATCH_FIELDS];
  both_workers(g, s, sums, "object Dice");
  cr_expect_eq(sums[WSISA_MATCH_DICE_REF], want_g);
  cr_expect_eq(sums[WSISA_MATCH_DICE_RUN], want_s);
  wsisa_object_metrics m;
  wsisa_object_metrics_of(sums, &m);
  cr_expect_float_eq(m.object_dice, want_dice, 1e-9);
  wsisa_image_free(g);
  wsisa_image_free(s);
}

/* tests/golden/make_object_metrics.py: every field, on the workflow's golden
 * masks both ways round and against itself. */
Test(object_match_workers, all_fields_golden) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker");
  FILE *f = fopen(tu_src("tests/golden/objects/object_metrics.txt"), "r");
  cr_assert(f);
  char ref[256], run[256], path[300];
  unsigned long long want[WSISA_MATCH_FIELDS];
  double dice, f1, aji;
  int cases = 0;
  while (fscanf(f, "%255s %255s", ref, run) == 2) {
    for (int k = 0; k < WSISA_MATCH_FIELDS; k++) cr_assert_eq(fscanf(f, "%llu", &want[k]), 1);
    cr_assert_eq(fscanf(f, "%lf %lf %lf", &dice, &f1, &aji), 3);
    snprintf(path, sizeof path, "tests/golden/%s", ref);
    wsisa_image *g = labels_of(path);
    snprintf(path, sizeof path, "tests/golden/%s", run);
    wsisa_image *s = labels_of(path);
    uint64_t sums[WSISA_MATCH_FIELDS];
    both_workers(g, s, sums, ref);
    for (int k = 0; k < WSISA_MATCH_FIELDS; k++)
      cr_expect_eq(sums[k], want[k], "%s vs %s, field %d: %llu, want %llu", run, ref, k,
                   (unsigned long long)sums[k], want[k]);
    wsisa_object_metrics m;
    wsisa_object_metrics_of(sums, &m);
    cr_expect_float_eq(m.object_dice, dice, 1e-9);
    cr_expect_float_eq(m.f1, f1, 1e-9);
    cr_expect_float_eq(m.aji, aji, 1e-9);
    cr_log_info("%s vs %s: object Dice %.4f, F1 %.4f, AJI %.4f\n", run, ref, m.object_dice, m.f1,
                m.aji);
    wsisa_image_free(g);
    wsisa_image_free(s);
    cases++;
  }
  fclose(f);
  cr_expect_eq(cases, 3);
}

/* Random labels, ties everywhere: small objects of few sizes (some
 * overwritten, in pieces or gone), many exact halves and equal IoUs, so the
 * order-free choices show; and a hand-made tie, so the devices agree on it. */
static uint32_t noise(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

Test(object_match_workers, workers_agree_on_ties) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker");
  for (int run = 0; run < 3; run++) {
    uint32_t seed = 5u + (uint32_t)run;
    wsisa_image *g = labels_new(73, 41), *s = labels_new(73, 41);
    int32_t next_g = 1, next_s = 1;
    for (int k = 0; k < 60; k++) {
      int x = (int)(noise(&seed) % 66), y = (int)(noise(&seed) % 36);
      int w = 2 + 2 * (int)(noise(&seed) % 3), h = 1 + (int)(noise(&seed) % 4);
      if (noise(&seed) % 2) fill(g, x, y, x + w, y + h, next_g++);
      /* halves and shifted copies of it in the run */
      if (noise(&seed) % 3 == 0) {
        fill(s, x, y, x + w / 2, y + h, next_s++);
        fill(s, x + w / 2, y, x + w, y + h, next_s++);
      } else {
        int dx = (int)(noise(&seed) % 3);
        fill(s, x + dx, y, x + dx + w, y + h, next_s++);
      }
    }
    uint64_t sums[WSISA_MATCH_FIELDS];
    both_workers(g, s, sums, "random");
    cr_expect_gt(sums[WSISA_MATCH_TP], 0);
    cr_expect_gt(sums[WSISA_MATCH_FP] + sums[WSISA_MATCH_FN], 0);
    wsisa_image_free(g);
    wsisa_image_free(s);
  }
  /* a_split_object_and_a_missed_one's shapes */
  wsisa_image *g = labels_new(16, 8), *s = labels_new(16, 8);
  fill(g, 0, 0, 4, 4, 1);
  fill(s, 0, 0, 4, 2, 1);
  fill(s, 0, 2, 4, 4, 2);
  fill(g, 10, 0, 13, 3, 2);
  fill(s, 10, 5, 12, 7, 3);
  uint64_t sums[WSISA_MATCH_FIELDS];
  both_workers(g, s, sums, "halves");
  expect_counts(sums, 1, 2, 1, 8, 25, 12);
  wsisa_image_free(g);
  wsisa_image_free(s);
}
