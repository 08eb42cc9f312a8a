/* `wsisa sample` and `wsisa analyze` end to end on wsisa's own designs:
 * designs on disk, indices of a known function, missing outputs, the two
 * phases, and no partial output (designs made elsewhere:
 * tests/test_cli_sa_foreign.c). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/csv.h"
#include "tests/testutil.h"

Test(cli_sa, sample_writes_a_reproducible_design) {
  const char *dir = tu_tmpdir("sample");
  char *out = tu_run_ok("sample --study %s -o %s/a.csv", tu_src("tests/studies/moat_segmentation.json"),
                     dir);
  cr_expect(strstr(out, "160 runs, 15 parameters (15 varying, 0 fixed), sampler halton, seed 1"),
            "%s", out);
  free(out);
  free(tu_run_ok("sample --study %s -o %s/b.csv", tu_src("tests/studies/moat_segmentation.json"), dir));
  char a[WSISA_PATH_MAX], b[WSISA_PATH_MAX];
  tu_path(a, "%s/a.csv", dir);
  tu_path(b, "%s/b.csv", dir);
  char *ta = tu_slurp(a, NULL), *tb = tu_slurp(b, NULL);
  cr_assert(ta && tb);
  cr_expect_str_eq(ta, tb, "the same study gives the same design");
  cr_expect_eq(strncmp(ta,
                       "run_id,B,G,R,T1,T2,G1,G2,min_size,max_size,min_size_pl,min_size_seg,"
                       "max_size_seg,fill_holes_conn,recon_conn,watershed_conn\n",
                       120),
               0, "%.200s", ta);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read(a, &c, NULL), 0);
  cr_expect_eq(c->nrows, 160);
  cr_expect_eq(c->ncols, 16);
  for (size_t r = 0; r < c->nrows; r++) {
    double g1 = tu_csv_col(c, r, "G1"), fh = tu_csv_col(c, r, "fill_holes_conn");
    cr_expect(g1 == 5 || g1 == 30 || g1 == 55 || g1 == 80, "G1 %g on the 4-level grid", g1);
    cr_expect(fh == 4 || fh == 8);
  }
  wsisa_csv_free(c);
  free(ta);
  free(tb);
}

Test(cli_sa, analyze_ishigami) {
  const char *dir = tu_tmpdir("ishigami");
  const char *study = tu_src("tests/studies/ishigami.json");
  char samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(samples, "%s/s.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  free(tu_run_ok("sample --study %s -o %s", study, samples));
  tu_write_outputs(samples, outputs, "f", tu_ishigami);
  char *out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples,
                     outputs, res);
  cr_expect(strstr(out, "f: VBD, 4096 base samples"), "%s", out);
  free(out);
  /* N = 4096 Sobol' base samples: errors are a few thousandths (test_sa_vbd). */
  const char *names[3] = {"x1", "x2", "x3"};
  const double s1[3] = {0.3139, 0.4424, 0}, st[3] = {0.5576, 0.4424, 0.2437};
  for (int i = 0; i < 3; i++) {
    double v = tu_index_of(res, "f", names[i], "S1"), t = tu_index_of(res, "f", names[i], "ST");
    cr_expect(fabs(v - s1[i]) < 0.02, "S1 %s %g", names[i], v);
    cr_expect(fabs(t - st[i]) < 0.02, "ST %s %g", names[i], t);
    cr_expect_lt(tu_index_of(res, "f", names[i], "ST_lo"), t);
  }
  json_t *j = tu_indices_json(res);
  cr_expect_str_eq(json_string_value(json_object_get(j, "method")), "vbd");
  json_t *s13 = json_array_get(json_object_get(json_object_get(json_object_get(j, "results"), "f"),
                                               "second_order"),
                               1);
  cr_expect_str_eq(json_string_value(json_array_get(json_object_get(s13, "parameters"), 1)), "x3");
  cr_expect(fabs(json_number_value(json_object_get(s13, "S2")) - 0.2437) < 0.04);
  json_decref(j);
  char svg[WSISA_PATH_MAX];
  tu_path(svg, "%s/f_vbd.svg", res);
  char *plot = tu_slurp(svg, NULL);
  cr_assert_not_null(plot, "no %s", svg);
  cr_expect(strstr(plot, "<svg") && strstr(plot, "S1 (first order)") && strstr(plot, "<path d=\"M"),
            "bars with whiskers");
  free(plot);
}

static double linear(const wsisa_csv *c, size_t r) {
  /* Run 1 (inside trajectory 0) has no output. */
  return r == 1 ? NAN : 3 * tu_csv_col(c, r, "a") - 0.5 * tu_csv_col(c, r, "b");
}

Test(cli_sa, moat_drops_only_effects_touching_missing_outputs) {
  const char *dir = tu_tmpdir("moat");
  const char *study = tu_src("tests/studies/tiny_moat.json");
  const char *samples = tu_src("tests/studies/tiny_moat_samples.csv");
  char outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  tu_write_outputs(samples, outputs, "y", linear);
  char *out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples,
                     outputs, res);
  cr_expect(strstr(out, "y: 1 run with a missing or non-finite output: 1"), "%s", out);
  cr_expect(strstr(out, "y: dropped 2 of 4 elementary effects that touch those runs"), "%s", out);
  free(out);
  json_t *j = tu_indices_json(res);
  json_t *y = json_object_get(json_object_get(j, "results"), "y");
  cr_expect_eq(json_integer_value(json_object_get(y, "dropped_effects")), 2);
  cr_expect_eq(json_integer_value(json_array_get(json_object_get(y, "missing_runs"), 0)), 1);
  json_decref(j);
  cr_expect_float_eq(tu_index_of(res, "y", "a", "mu_param"), 3, 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "b", "mu_star_param"), 0.5, 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "a", "effects"), 1, 0, "one effect of a is left");
}

static double missing_two(const wsisa_csv *c, size_t r) {
  return r == 5 || r == 9 ? NAN : tu_csv_col(c, r, "a") + tu_csv_col(c, r, "b");
}

Test(cli_sa, vbd_refuses_missing_outputs_and_writes_nothing) {
  const char *dir = tu_tmpdir("vbd");
  const char *study = tu_src("tests/studies/tiny_vbd.json");
  const char *samples = tu_src("tests/studies/tiny_vbd_samples.csv");
  char outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX], args[12000];
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  tu_write_outputs(samples, outputs, "y", missing_two);
  snprintf(args, sizeof args, "analyze --study %s --samples %s --outputs %s -o %s", study,
           samples, outputs, res);
  char *out = NULL, *err = NULL;
  cr_expect_eq(tu_run(args, &out, &err), 1);
  cr_expect(strstr(err, "'y' is missing or not finite for runs 5, 9"), "%s", err);
  cr_expect_str_empty(out);
  free(out);
  free(err);
  DIR *d = opendir(res);
  size_t files = 0;
  for (struct dirent *ent; d && (ent = readdir(d));) files += ent->d_name[0] != '.';
  if (d) closedir(d);
  cr_expect_null(d, "a refused analysis creates no directory and no file");
  cr_expect_eq(files, 0);
  out = tu_run_ok("%s --drop-missing", args);
  cr_expect(strstr(out, "y: dropped 2 of 4 base samples"), "%s", out);
  free(out);
  json_t *j = tu_indices_json(res);
  json_t *y = json_object_get(json_object_get(j, "results"), "y");
  cr_expect_eq(json_integer_value(json_object_get(y, "base_samples")), 2);
  json_decref(j);
}

static double screening(const wsisa_csv *c, size_t r) {
  return 0.9 - 0.004 * (80 - tu_csv_col(c, r, "G1")) - 0.003 * tu_csv_col(c, r, "G2") +
         0.0001 * tu_csv_col(c, r, "T1");
}

Test(cli_sa, two_phase_study) {
  const char *dir = tu_tmpdir("two");
  const char *study = tu_src("tests/studies/two_phase_segmentation.json");
  char p1[WSISA_PATH_MAX], y1[WSISA_PATH_MAX], r1[WSISA_PATH_MAX], p2[WSISA_PATH_MAX],
      y2[WSISA_PATH_MAX], r2[WSISA_PATH_MAX];
  tu_path(p1, "%s/p1.csv", dir);
  tu_path(y1, "%s/y1.csv", dir);
  tu_path(r1, "%s/r1", dir);
  tu_path(p2, "%s/p2.csv", dir);
  tu_path(y2, "%s/y2.csv", dir);
  tu_path(r2, "%s/r2", dir);
  char *out = tu_run_ok("sample --study %s -o %s", study, p1);
  cr_expect(strstr(out, "320 runs") && strstr(out, "Campolongo"), "%s", out);
  free(out);
  tu_write_outputs(p1, y1, "dice", screening);
  out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, p1, y1, r1);
  cr_expect(strstr(out, "go to phase 2 (VBD)") && strstr(out, "--select G1,G2,"), "%s", out);
  free(out);
  json_t *j = tu_indices_json(r1);
  json_t *sel = json_object_get(j, "selected");
  cr_expect_eq(json_array_size(sel), 8);
  cr_expect_str_eq(json_string_value(json_array_get(sel, 0)), "G1");
  cr_expect_str_eq(json_string_value(json_array_get(sel, 1)), "G2");
  cr_expect_str_eq(json_string_value(json_array_get(sel, 2)), "T1");
  json_decref(j);
  out = tu_run_ok("sample --study %s --select G1,G2,T1 -o %s", study, p2);
  cr_expect(strstr(out, "1280 runs, 15 parameters (3 varying, 12 fixed)"), "%s", out);
  free(out);
  tu_write_outputs(p2, y2, "dice", screening);
  free(tu_run_ok("analyze --study %s --select G1,G2,T1 --samples %s --outputs %s -o %s", study, p2,
              y2, r2));
  j = tu_indices_json(r2);
  cr_expect_str_eq(json_string_value(json_object_get(j, "method")), "vbd");
  cr_expect_eq(json_integer_value(json_object_get(j, "two_phase_phase")), 2);
  json_decref(j);
  /* Additive model: first-order indices hold nearly all the variance. */
  double g1 = tu_index_of(r2, "dice", "G1", "S1"), g2 = tu_index_of(r2, "dice", "G2", "S1");
  cr_expect(g1 > g2 && g1 + g2 > 0.9, "S1 G1 %g G2 %g", g1, g2);
}

Test(cli_sa, correlation_study) {
  const char *dir = tu_tmpdir("corr");
  char study[WSISA_PATH_MAX], samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(study, "%s/study.json", dir);
  tu_path(samples, "%s/s.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  FILE *f = fopen(study, "w");
  fputs("{\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 10], \"step\": 1}},"
        " \"method\": {\"name\": \"correlation\", \"samples\": 500}}",
        f);
  fclose(f);
  free(tu_run_ok("sample --study %s -o %s", study, samples));
  tu_write_outputs(samples, outputs, "y", linear);
  char *out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples,
                     outputs, res);
  cr_expect(strstr(out, "y: correlations over 499 runs"), "%s", out);
  free(out);
  /* y = 3a - b/2 exactly: the partial correlations are +-1. */
  cr_expect_float_eq(tu_index_of(res, "y", "a", "pcc"), 1, 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "b", "pcc"), -1, 1e-9);
  cr_expect_lt(tu_index_of(res, "y", "b", "spearman"), -0.5);
}
