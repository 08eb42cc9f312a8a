/* The feature stage end to end: `wsisa segment --features` (one row per
 * nucleus, slide coordinates for a region) and `wsisa run` with feature
 * metrics (values against a direct computation, the same with and without the
 * OpenCL worker). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run_internal.h"
#include "io/csv.h"
#include "io/io.h"
#include "tests/testutil.h"

static wsisa_csv *segment_features(const char *input_and_flags, const char *dir) {
  char args[8192], path[WSISA_PATH_MAX];
  tu_path(path, "%s/features.csv", dir);
  snprintf(args, sizeof args, "segment %s -o '%s/mask.png' --labels '%s/labels.tif' --features '%s'",
           input_and_flags, dir, dir, path);
  char *err = NULL;
  int status = tu_run(args, NULL, &err);
  cr_assert_eq(status, 0, "wsisa %s: %s", args, err ? err : "");
  free(err);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "label", &c, NULL), 0);
  return c;
}

static double cell(const wsisa_csv *c, size_t row, const char *name) {
  long col = wsisa_csv_column(c, name);
  cr_assert_geq(col, 0, "no column %s", name);
  double v;
  cr_assert_eq(wsisa_csv_number(c, row, (size_t)col, &v, NULL), 0);
  return v;
}

Test(features, segment_writes_one_row_per_nucleus) {
  const char *dir = tu_tmpdir("features");
  char input[TU_LINE_MAX];
  snprintf(input, sizeof input, "'%s'", tu_src("tests/data/tile_256.png"));
  wsisa_csv *c = segment_features(input, dir);
  /* the nucleus count of this tile, as in tests/golden/workflow/tile_256_default.png */
  cr_expect_eq(c->nrows, 93);
  static const char *const cols[] = {"centroid_x", "bbox_w", "perimeter", "solidity",
                                     "h_mean", "h_median", "e_std", "grad_energy", "fb_s1_energy",
                                     "fb_s4_mean"};
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
    cr_expect_geq(wsisa_csv_column(c, cols[i]), 0, "no column %s", cols[i]);
  /* areas add up to the mask's pixels, labels are 1..n, H is positive */
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/mask.png", dir);
  wsisa_image *mask = NULL;
  cr_assert_eq(wsisa_image_read(path, &mask, NULL), 0);
  double on = 0, area = 0;
  for (int y = 0; y < mask->height; y++)
    for (int x = 0; x < mask->width; x++) on += ((uint8_t *)wsisa_image_row(mask, y))[x] != 0;
  for (size_t r = 0; r < c->nrows; r++) {
    area += cell(c, r, "area");
    cr_expect_eq(cell(c, r, "label"), (double)(r + 1));
    cr_expect_gt(cell(c, r, "h_mean"), 0);
    cr_expect_leq(cell(c, r, "solidity"), 1);
  }
  cr_expect_eq(area, on);
  wsisa_image_free(mask);
  wsisa_csv_free(c);
}

Test(features, slide_region_positions_are_in_level_pixels) {
  const char *dir = tu_tmpdir("features_region");
  char input[TU_LINE_MAX];
  snprintf(input, sizeof input, "'%s' --region 1000,500,256,256", tu_src("tests/data/CMU-1-Small-Region.svs"));
  wsisa_csv *c = segment_features(input, dir);
  cr_assert_gt(c->nrows, 0);
  /* the nuclei centred in the region, whole: within the halo (128) around it */
  for (size_t r = 0; r < c->nrows; r++) {
    cr_expect_geq(cell(c, r, "centroid_x"), 1000);
    cr_expect_geq(cell(c, r, "centroid_y"), 500);
    cr_expect_lt(cell(c, r, "centroid_x"), 1256);
    cr_expect_lt(cell(c, r, "centroid_y"), 756);
    cr_expect_geq(cell(c, r, "bbox_x"), 1000 - 128);
    cr_expect_geq(cell(c, r, "bbox_y"), 500 - 128);
    cr_expect_leq(cell(c, r, "bbox_x") + cell(c, r, "bbox_w"), 1256 + 128);
    cr_expect_leq(cell(c, r, "bbox_y") + cell(c, r, "bbox_h"), 756 + 128);
    cr_expect_geq(cell(c, r, "centroid_x"), cell(c, r, "bbox_x"));
  }
  wsisa_csv_free(c);
}

/* ---- wsisa run with feature metrics ----------------------------------------- */

static char *run_features_study(const char *env, const char *flags, char *dir, size_t cap) {
  snprintf(dir, cap, "%s/results", tu_tmpdir("features_run"));
  char cmd[16384], path[WSISA_PATH_MAX];
  snprintf(cmd, sizeof cmd, "cd '%s' && env STARPU_NCPU=2 %s %s run --study tests/studies/features_metric.json -o '%s' %s",
           tu_src("."), env, WSISA_EXE, dir, flags);
  char *err = NULL;
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s failed: %s", cmd, err ? err : "");
  free(err);
  tu_path(path, "%s/metrics.csv", dir);
  char *metrics = tu_slurp(path, NULL);
  cr_assert_not_null(metrics, "no %s", path);
  return metrics;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* W1 of two samples as the integral of |F - G| over a fine sweep of both
 * sorted samples (written apart from the library's version). */
static double w1(double *a, size_t na, double *b, size_t nb) {
  qsort(a, na, sizeof *a, by_value);
  qsort(b, nb, sizeof *b, by_value);
  double *all = malloc((na + nb) * sizeof *all), sum = 0;
  memcpy(all, a, na * sizeof *a);
  memcpy(all + na, b, nb * sizeof *b);
  qsort(all, na + nb, sizeof *all, by_value);
  for (size_t k = 0; k + 1 < na + nb; k++) {
    size_t fa = 0, fb = 0;
    while (fa < na && a[fa] <= all[k]) fa++;
    while (fb < nb && b[fb] <= all[k]) fb++;
    sum += fabs((double)fa / (double)na - (double)fb / (double)nb) * (all[k + 1] - all[k]);
  }
  free(all);
  return sum;
}

static double *column(const wsisa_csv *c, const char *name) {
  double *v = malloc((c->nrows ? c->nrows : 1) * sizeof *v);
  for (size_t r = 0; r < c->nrows; r++) v[r] = cell(c, r, name);
  return v;
}

Test(features, study_metrics_are_right_and_the_same_on_every_worker, .timeout = 300) {
  char dir[WSISA_PATH_MAX], other[WSISA_PATH_MAX];
  char *cpu = run_features_study("", "", dir, sizeof dir);
  static const char *const variants[][2] = {
      {"STARPU_SCHED=dmda STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse trtma"},
      {"STARPU_SCHED=eager STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse none"}};
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    char *m = run_features_study(variants[i][0], variants[i][1], other, sizeof other);
    cr_expect_str_eq(m, cpu, "%s %s: metrics differ", variants[i][0], variants[i][1]);
    free(m);
  }
  free(cpu);

  /* against wsisa segment --features of the same parameters and of the defaults */
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/metrics.csv", dir);
  wsisa_csv *metrics = NULL;
  cr_assert_eq(wsisa_csv_read(path, &metrics, NULL), 0);
  char input[TU_LINE_MAX];
  snprintf(input, sizeof input, "'%s'", tu_src("tests/data/tile_256.png"));
  wsisa_csv *ref = segment_features(input, tu_tmpdir("features_ref"));
  static const char *const names[] = {"B", "G", "R", "T1", "T2", "G1", "G2", "min_size",
                                      "max_size", "min_size_pl", "min_size_seg", "max_size_seg",
                                      "fill_holes_conn", "recon_conn", "watershed_conn"};
  for (size_t run = 0; run < metrics->nrows; run += 3) {
    char params[1024] = "", item[64];
    for (size_t p = 0; p < sizeof names / sizeof *names; p++) {
      snprintf(item, sizeof item, "%s%s=%.17g", p ? "," : "", names[p], cell(metrics, run, names[p]));
      strcat(params, item);
    }
    char flags[TU_LINE_MAX + sizeof " --params " + sizeof params]; /* the input, the parameters */
    snprintf(flags, sizeof flags, "%s --params %s", input, params);
    wsisa_csv *f = segment_features(flags, tu_tmpdir("features_direct"));
    cr_assert_eq((double)f->nrows, cell(metrics, run, "nucleus_count"));
    double sum = 0;
    for (size_t r = 0; r < f->nrows; r++) sum += cell(f, r, "h_mean");
    cr_expect_eq(cell(metrics, run, "mean_haematoxylin"), sum / (double)f->nrows, "run %zu", run);
    static const char *const dist[][2] = {{"area", "wasserstein:area"},
                                          {"fb_s2_mean", "wasserstein:fb_s2_mean"}};
    for (size_t d = 0; d < 2; d++) {
      double *a = column(f, dist[d][0]), *b = column(ref, dist[d][0]);
      double want = w1(a, f->nrows, b, ref->nrows), got = cell(metrics, run, dist[d][1]);
      cr_expect_float_eq(got, want, 1e-9 * fmax(1, want), "run %zu %s: %.17g, direct %.17g", run,
                         dist[d][1], got, want);
      free(a);
      free(b);
    }
    wsisa_csv_free(f);
  }
  wsisa_csv_free(ref);
  wsisa_csv_free(metrics);
}

/* Cut both journals after a few units: --resume recomputes what is missing and
 * ends with the same metrics. */
Test(features, resume_keeps_feature_metrics_exact, .timeout = 300) {
  char dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  char *whole = run_features_study("", "--reuse none", dir, sizeof dir);
  static const char *const journals[][2] = {{"journal.csv", "3"}, {"feature_values.csv", "6"}};
  for (size_t j = 0; j < 2; j++) {
    char cmd[24000];
    tu_path(path, "%s/%s", dir, journals[j][0]);
    snprintf(cmd, sizeof cmd, "head -n %s '%s' > '%s.cut' && mv '%s.cut' '%s'", journals[j][1],
             path, path, path, path);
    cr_assert_eq(tu_run_shell(cmd, NULL, NULL), 0);
  }
  tu_path(path, "%s/metrics.csv", dir);
  remove(path);
  char args[TU_LINE_MAX], *err = NULL;
  snprintf(args, sizeof args, "cd '%s' && %s run --resume '%s'", tu_src("."), WSISA_EXE, dir);
  cr_assert_eq(tu_run_shell(args, NULL, &err), 0, "resume: %s", err ? err : "");
  free(err);
  char *resumed = tu_slurp(path, NULL);
  cr_assert_not_null(resumed);
  cr_expect_str_eq(resumed, whole);
  free(resumed);
  free(whole);
}

Test(features, wasserstein1_known_values) {
  const double a[] = {0, 1}, b[] = {1}, c[] = {0, 2}, d[] = {3, 4, 5};
  cr_expect_eq(wsisa__wasserstein1(a, 2, a, 2), 0);
  cr_expect_eq(wsisa__wasserstein1(a, 2, b, 1), 0.5); /* half the mass moves by 1 */
  cr_expect_eq(wsisa__wasserstein1(c, 2, b, 1), 1);
  cr_expect_float_eq(wsisa__wasserstein1(b, 1, d, 3), 3, 1e-12); /* no crossing: mean shift */
  cr_expect_float_eq(wsisa__wasserstein1(d, 3, b, 1), 3, 1e-12);
}
