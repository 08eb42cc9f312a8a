/* The estimate from real performance models (engine/estimate/costs.c and
 * the probes): an uncalibrated codelet reported, no models no estimate, a
 * tile size never measured interpolated per pixel, run.json's predicted and
 * actual figures, cost-aware reuse leaving the metrics alone. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/estimate/estimate_internal.h"
#include "io/io.h"
#include "testutil.h"

/* ---- from real performance models ------------------------------------------------- */

/* A study of `trajectories` MOAT trajectories on one image, into dir. */
/* A temporary folder of our own: tu_tmpdir's buffers are reused. */
static const char *own_tmpdir(const char *tag) {
  static char dirs[4][WSISA_PATH_MAX];
  static int next;
  char *d = dirs[next++ % 4];
  snprintf(d, sizeof dirs[0], "%s", tu_tmpdir(tag));
  return d;
}

static const char *write_study(const char *dir, const char *name, const char *image,
                               const char *extra) {
  static char path[4][WSISA_PATH_MAX];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s.json", dir, name);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\"%s }\n",
          image, extra ? extra : "");
  fclose(f);
  return p;
}

static json_t *run_json(const char *home, const char *args, int expect) {
  char cmd[12800], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "env STARPU_HOME='%s' STARPU_NCPU=2 '%s' %s", home,
           WSISA_EXE, args);
  int rc = tu_run_shell(cmd, &out, &err);
  cr_assert_eq(rc, expect, "%s: exit %d: %s", cmd, rc, err ? err : "");
  json_t *root = NULL;
  if (expect == 0 && out && *out == '{') {
    json_error_t je;
    root = json_loads(out, 0, &je);
    cr_assert_not_null(root, "not JSON: %s", je.text);
  }
  free(out);
  free(err);
  return root;
}

static double num(const json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  cr_assert(json_is_number(v), "%s: not a number", key);
  return json_number_value(v);
}

/* A fresh STARPU_HOME calibrated on tile_256.png. */
static const char *calibrated_home(const char *dir, const char *study) {
  static char home[WSISA_PATH_MAX];
  tu_path(home, "%s/home", dir);
  char args[TU_LINE_MAX];
  snprintf(args, sizeof args, "calibrate --study '%s'", study);
  run_json(home, args, 0);
  return home;
}

/* A calibration probe's file beside the models set aside (`aside` 1), out of
 * the estimate's sight, or put back (0). */
static void set_aside(const char *home, const char *file, int aside) {
  char models[WSISA_PATH_MAX], away[WSISA_PATH_MAX];
  tu_path(models, "%s/.starpu/sampling/%s", home, file);
  tu_path(away, "%s/%s.aside", home, file);
  cr_assert_eq(aside ? rename(models, away) : rename(away, models), 0, "%s", file);
}

static json_t *estimate(const char *home, const char *study, const char *more) {
  char args[TU_LINE_MAX];
  snprintf(args, sizeof args, "plan --study '%s' --estimate --json %s", study, more ? more : "");
  json_t *root = run_json(home, args, 0);
  cr_assert_not_null(root);
  return root;
}

/* The estimate's makespan with a probe's file set aside (left aside), which
 * its `how` then says was not measured. */
static double estimate_without(const char *home, const char *study, const char *file,
                               const char *how_key) {
  set_aside(home, file, 1);
  json_t *root = estimate(home, study, NULL);
  json_t *est = json_object_get(root, "estimate");
  const char *how = json_string_value(json_object_get(est, how_key));
  cr_expect(how && strstr(how, "not measured"), "%s: %s", how_key, how ? how : "(none)");
  double makespan = num(est, "makespan_s");
  json_decref(root);
  return makespan;
}

/* Calibration's busy-workers file: its own round (the design's
 * segmentations), one worker against the two it ran with. */
static void expect_busy_workers_file(const char *home) {
  char bpath[WSISA_PATH_MAX];
  tu_path(bpath, "%s/.starpu/sampling/wsisa_busy_workers.json", home);
  json_t *bw = json_load_file(bpath, 0, NULL);
  cr_assert_not_null(bw, "%s", bpath);
  cr_expect_eq(json_integer_value(json_object_get(bw, "calibrated_cpu_workers")), 2);
  cr_expect_geq(json_integer_value(json_object_get(bw, "segmentations")), 1);
  cr_expect_gt(num(bw, "alone_s"), 0);
  json_t *pts = json_object_get(bw, "factors");
  cr_assert_geq(json_array_size(pts), 1);
  cr_expect_eq(json_integer_value(json_array_get(json_array_get(pts, 0), 0)), 1);
  cr_expect_float_eq(json_real_value(json_array_get(json_array_get(pts, 0), 1)), 1.0, 1e-12);
  for (size_t i = 0; i < json_array_size(pts); i++)
    cr_expect_gt(json_real_value(json_array_get(json_array_get(pts, i), 1)), 0);
  json_decref(bw);
}

/* The levels' probe screened pairs of parameters for their interplay, and
 * timed the pair it chose over the grid of their sweeps' values. */
static void expect_level_costs_file(const char *home) {
  char bpath[WSISA_PATH_MAX];
  tu_path(bpath, "%s/.starpu/sampling/wsisa_level_costs.json", home);
  json_t *lc = json_load_file(bpath, 0, NULL);
  cr_assert_not_null(lc, "%s", bpath);
  json_t *pair = json_object_get(lc, "pair"), *screened = json_object_get(pair, "screened");
  cr_assert(json_is_array(screened), "%s: no pair.screened", bpath);
  for (size_t i = 0; i < json_array_size(screened); i++)
    cr_expect_gt(num(json_array_get(screened, i), "over_product"), 0);
  json_t *names = json_object_get(pair, "parameters");
  if (names) {
    json_t *sweeps = json_object_get(lc, "parameters");
    size_t n0 = json_array_size(json_object_get(sweeps, json_string_value(json_array_get(names, 0))));
    size_t n1 = json_array_size(json_object_get(sweeps, json_string_value(json_array_get(names, 1))));
    cr_expect_gt(n0 * n1, 0);
    cr_expect_eq(json_array_size(json_object_get(pair, "points")), n0 * n1);
  }
  json_decref(lc);
}

/* The object-reuse probe ran each parameter at values spread over its
 * design range and compared every two: a point a distance apart, the
 * widest the whole range, each a share of pixels. */
static void expect_object_reuse_file(const char *home) {
  char bpath[WSISA_PATH_MAX];
  tu_path(bpath, "%s/.starpu/sampling/wsisa_object_reuse.json", home);
  json_t *orj = json_load_file(bpath, 0, NULL);
  cr_assert_not_null(orj, "%s", bpath);
  const char *pname;
  json_t *pv;
  int moved = 0;
  json_object_foreach(json_object_get(orj, "parameters"), pname, pv) {
    json_t *curves = json_object_get(pv, "curves");
    cr_expect_geq(json_array_size(curves), 1, "%s: no curve", pname);
    for (size_t c = 0; c < json_array_size(curves); c++) {
      json_t *cv = json_array_get(curves, c), *vals = json_object_get(cv, "values"),
             *points = json_object_get(cv, "points");
      size_t n = json_array_size(vals);
      cr_assert(n >= 2 && n <= 9, "%s: %zu values", pname, n);
      cr_expect_eq(json_array_size(points), n - 1, "%s: a point a gap", pname);
      double last = 0;
      for (size_t k = 0; k < json_array_size(points); k++) {
        json_t *pt = json_array_get(points, k);
        double d = json_number_value(json_array_get(pt, 0));
        cr_expect_gt(d, last, "%s: distances grow", pname);
        last = d;
        for (size_t l = 1; l <= 2; l++) {
          double miss = json_number_value(json_array_get(pt, l));
          cr_expect(miss >= 0 && miss <= 1, "%s: share %g", pname, miss);
          moved |= l == 1 && miss > 0;
        }
      }
      double span = json_number_value(json_array_get(vals, n - 1)) -
                    json_number_value(json_array_get(vals, 0));
      cr_expect_float_eq(last, span, 1e-9, "%s: the widest point, %g, the range, %g", pname,
                         last, span);
    }
  }
  cr_expect(moved, "no parameter's change moved a cluster");
  json_decref(orj);
}

/* A page's first write: a rank's working set (peak over baseline) at that
 * rate over its workers, in the makespan; without the file, none. */
static void expect_fresh_memory_priced(const char *home, const char *study) {
  json_t *root = estimate(home, study, NULL);
  json_t *est = json_object_get(root, "estimate");
  const char *fresh = json_string_value(json_object_get(est, "fresh_memory_how"));
  cr_expect(fresh && strstr(fresh, "calibration:"), "%s", fresh ? fresh : "(none)");
  cr_expect_gt(num(est, "fresh_memory_s"), 0);
  json_decref(root);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/.starpu/sampling/wsisa_fresh_memory.json", home);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "{ \"bytes\": 1048576, \"maps\": 5, \"seconds\": 0.001 }\n");
  fclose(f);
  root = estimate(home, study, NULL);
  est = json_object_get(root, "estimate");
  double set = num(est, "fresh_memory_s"), with = num(est, "makespan_s");
  double ws = num(est, "peak_rss_bytes") - num(est, "baseline_rss_bytes");
  cr_expect_float_eq(set, ws / 1048576.0 * 0.001 / 2, 1e-9, "fresh %g for %g bytes", set, ws);
  json_decref(root);
  cr_assert_eq(remove(path), 0);
  root = estimate(home, study, NULL);
  est = json_object_get(root, "estimate");
  fresh = json_string_value(json_object_get(est, "fresh_memory_how"));
  cr_expect(fresh && strstr(fresh, "not measured"), "%s", fresh ? fresh : "(none)");
  cr_expect_float_eq(num(est, "fresh_memory_s"), 0, 1e-12);
  cr_expect_float_eq(num(est, "makespan_s"), with - set, 1e-9);
  json_decref(root);
}

/* The watershed's model gone: its time is a guess, and said to be. */
static void expect_watershed_said_uncalibrated(const char *home, const char *study) {
  char cmd[8600];
  snprintf(cmd, sizeof cmd, "rm -f '%s'/.starpu/sampling/codelets/*/wsisa_watershed_v*", home);
  cr_assert_eq(system(cmd), 0);
  json_t *root = estimate(home, study, NULL);
  json_t *est = json_object_get(root, "estimate");
  double share = num(est, "uncalibrated_share");
  cr_expect_gt(share, 0);
  cr_expect_lt(share, 1);
  json_t *listed = json_object_get(est, "uncalibrated");
  cr_assert_eq(json_array_size(listed), 1, "the watershed, and nothing else");
  json_t *w = json_array_get(listed, 0);
  cr_expect_str_eq(json_string_value(json_object_get(w, "codelet")), "watershed");
  cr_expect_str_eq(json_string_value(json_object_get(w, "evidence")), "no data");
  cr_expect_float_eq(num(w, "share"), share, 1e-9);
  cr_expect_float_eq(num(json_object_get(est, "evidence"), "no data"), share, 1e-9);
  cr_expect_gt(num(est, "makespan_s"), 0);
  json_decref(root);
}

Test(engine_estimate, an_uncalibrated_codelet_is_reported) {
  const char *dir = own_tmpdir("estimate-uncal");
  const char *study = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  const char *home = calibrated_home(dir, study);
  json_t *root = estimate(home, study, NULL);
  json_t *est = json_object_get(root, "estimate");
  cr_assert_not_null(est);
  cr_expect_gt(num(est, "makespan_s"), 0);
  cr_expect_float_eq(num(json_object_get(est, "evidence"), "measured"), 1.0, 1e-9,
                     "calibration leaves no task unmeasured");
  cr_expect_float_eq(num(est, "uncalibrated_share"), 0, 1e-12);
  cr_expect_str_eq(json_string_value(json_object_get(root, "cost_model")), "models");
  /* calibration measured the workers busy at once */
  const char *busy = json_string_value(json_object_get(est, "busy_workers_how"));
  cr_expect(busy && strstr(busy, "calibration:"), "%s", busy ? busy : "(none)");
  cr_expect_gt(num(est, "busy_factor"), 0);
  /* at the workers its simulation kept busy: one at least, two at most */
  cr_expect_geq(num(est, "busy_workers"), 1);
  cr_expect_leq(num(est, "busy_workers"), 2 + 1e-9);
  expect_busy_workers_file(home);
  expect_level_costs_file(home);
  expect_object_reuse_file(home);
  /* ... and a tile's read, which holds the submitter before its stage: the
   * estimate without it is shorter. The busy factor is set aside for both:
   * the workers a simulation keeps busy move with the read, and a move under
   * 1 % is not simulated again, so with it the two could tie or cross. */
  const char *reads = json_string_value(json_object_get(est, "tile_reads_how"));
  cr_expect(reads && strstr(reads, "calibration:"), "%s", reads ? reads : "(none)");
  json_decref(root);
  double makespan = estimate_without(home, study, "wsisa_busy_workers.json", "busy_workers_how");
  cr_expect_lt(estimate_without(home, study, "wsisa_tile_reads.json", "tile_reads_how"), makespan);
  set_aside(home, "wsisa_tile_reads.json", 0);
  set_aside(home, "wsisa_busy_workers.json", 0);
  expect_fresh_memory_priced(home, study);
  expect_watershed_said_uncalibrated(home, study);
  /* the text report names it too */
  char *out = NULL, *err = NULL, cmd[8600];
  snprintf(cmd, sizeof cmd, "env STARPU_HOME='%s' '%s' plan --study '%s' --estimate", home,
           WSISA_EXE, study);
  cr_assert_eq(tu_run_shell(cmd, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "uncalibrated") && strstr(out, "watershed (no data)"), "%s", out);
  free(out);
  free(err);
}

Test(engine_estimate, no_models_no_estimate) {
  const char *dir = own_tmpdir("estimate-none");
  const char *study = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  char home[WSISA_PATH_MAX], cmd[12800], *out = NULL, *err = NULL;
  tu_path(home, "%s/empty", dir);
  snprintf(cmd, sizeof cmd, "env STARPU_HOME='%s' '%s' plan --study '%s' --estimate", home, WSISA_EXE,
           study);
  cr_expect_eq(tu_run_shell(cmd, &out, &err), 2);
  cr_expect(err && strstr(err, "no calibrated performance model of this study's tasks") &&
                strstr(err, "wsisa calibrate --study"),
            "%s", err);
  cr_expect(out && !*out, "no partial output");
  free(out);
  free(err);
  /* without --estimate the plan goes on, by task counts */
  snprintf(cmd, sizeof cmd, "plan --study '%s' --json", study);
  json_t *root = run_json(home, cmd, 0);
  cr_assert_not_null(root);
  cr_expect_str_eq(json_string_value(json_object_get(root, "cost_model")), "tasks");
  cr_expect(!json_object_get(root, "estimate"));
  json_decref(root);
}

Test(engine_estimate, a_tile_size_never_measured_is_interpolated_per_pixel) {
  const char *dir = own_tmpdir("estimate-interp");
  const char *big = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  /* the same design on a 128 x 128 crop of the tile */
  wsisa_image *img = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_read_rgb(tu_src("tests/data/tile_256.png"), &img, &e), 0, "%s", e.msg);
  wsisa_image crop = *img;
  crop.width = crop.height = 128;
  crop.owns_data = 0;
  char png[WSISA_PATH_MAX];
  tu_path(png, "%s/tile_128.png", dir);
  cr_assert_eq(wsisa_image_write(png, &crop, &e), 0, "%s", e.msg);
  wsisa_image_free(img);
  const char *small = write_study(dir, "s128", png, NULL);
  const char *home = calibrated_home(dir, big);

  json_t *a = estimate(home, big, NULL), *b = estimate(home, small, NULL);
  json_t *eb = json_object_get(b, "estimate");
  cr_expect_geq(num(json_object_get(eb, "evidence"), "interpolated"), 0.99,
                "the 256 x 256 tasks stand for the 128 x 128 ones");
  cr_expect_float_eq(num(eb, "uncalibrated_share"), 0, 1e-12);
  /* one size measured: the cost per pixel carries over, a quarter the time */
  json_t *ca = json_object_get(a, "level_costs"), *cb = json_object_get(b, "level_costs");
  cr_assert_eq(json_array_size(ca), 7);
  cr_assert_eq(json_array_size(cb), 7);
  for (size_t l = 0; l < 7; l++) {
    double x = json_number_value(json_array_get(ca, l)), y = json_number_value(json_array_get(cb, l));
    cr_expect_float_eq(y, x / 4, 1e-9 * x + 1e-12, "level %zu: %g against %g / 4", l + 1, y, x);
  }
  json_decref(a);
  json_decref(b);
}

Test(engine_estimate, run_json_holds_predicted_and_actual) {
  const char *dir = own_tmpdir("estimate-run");
  const char *study = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  const char *home = calibrated_home(dir, study);
  char args[8600], path[WSISA_PATH_MAX];
  snprintf(args, sizeof args, "run --study '%s' -o '%s/r'", study, dir);
  run_json(home, args, 0);
  tu_path(path, "%s/r/run.json", dir);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  json_t *est = json_object_get(root, "estimate");
  json_t *p = json_object_get(est, "predicted"), *a = json_object_get(est, "actual");
  cr_assert(p && a, "run.json: no estimate");
  cr_expect_gt(num(p, "makespan_s"), 0);
  cr_expect_gt(num(p, "peak_rss_bytes"), num(p, "baseline_rss_bytes"));
  cr_expect_float_eq(num(p, "interpolated_share"), 0, 1e-12, "calibrated on the run's own tile");
  cr_expect_float_eq(num(a, "makespan_s"), num(json_object_get(root, "seconds"), "execute"), 1e-6);
  cr_expect_float_eq(num(a, "peak_rss_bytes"), 1024 * num(root, "peak_rss_kib"), 1);
  double err = num(json_object_get(est, "error_percent"), "makespan");
  cr_expect_float_eq(err, 100 * (num(p, "makespan_s") - num(a, "makespan_s")) / num(a, "makespan_s"),
                     1e-4 * (1 + fabs(err)));
  cr_expect_str_eq(json_string_value(json_object_get(json_object_get(root, "reuse"), "cost_model")),
                   "models");
  json_decref(root);
  /* the costs the plan was made with stay in the resolved study, for a resume */
  tu_path(path, "%s/r/study.json", dir);
  root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  json_t *lc = json_object_get(json_object_get(root, "reuse"), "level_costs");
  cr_expect_eq(json_array_size(lc), 7);
  cr_expect_gt(json_number_value(json_array_get(lc, 5)), 0);
  json_decref(root);
  /* a resume with nothing left reads them back */
  snprintf(args, sizeof args, "run --resume '%s/r'", dir);
  run_json(home, args, 0);
}

Test(engine_estimate, cost_aware_reuse_leaves_the_metrics_alone) {
  const char *dir = own_tmpdir("estimate-metrics");
  const char *image = tu_src("tests/data/tile_256.png");
  const char *models = write_study(dir, "models", image, ", \"reuse\": { \"strategy\": \"trtma\" }");
  const char *tasks = write_study(dir, "tasks", image,
                                  ", \"reuse\": { \"strategy\": \"trtma\", \"cost_model\": \"tasks\" }");
  const char *home = calibrated_home(dir, models);
  char args[8600];
  const char *studies[] = {models, tasks, models};
  const char *more[] = {"", "", "--reuse rtma --max-bucket-size 3"};
  char *csv[3];
  for (int i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "run --study '%s' -o '%s/r%d' %s", studies[i], dir, i, more[i]);
    run_json(home, args, 0);
    char path[WSISA_PATH_MAX];
    tu_path(path, "%s/r%d/metrics.csv", dir, i);
    csv[i] = tu_slurp(path, NULL);
    cr_assert_not_null(csv[i]);
  }
  cr_expect_str_eq(csv[0], csv[1], "measured level costs against task counts");
  cr_expect_str_eq(csv[0], csv[2], "trtma by cost against rtma by cost");
  for (int i = 0; i < 3; i++) free(csv[i]);
}
