/* `wsisa analyze` on designs made elsewhere: another tool's MOAT and VBD
 * designs, SALib-shaped designs and problems without a study, groups and
 * distributions, SALib's own files and numpy's text. */
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

/* ---- designs made elsewhere ------------------------------------------------ */

static double linear_all(const wsisa_csv *c, size_t r) {
  return 3 * tu_csv_col(c, r, "a") - 0.5 * tu_csv_col(c, r, "b");
}

/* A small generator of the test's own, unrelated to wsisa's samplers. */
static double lcg(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0;
}

static void write_rows(const char *path, const char *header, const double *rows, size_t n,
                       size_t k, int first_id) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "%s\n", header);
  for (size_t r = 0; r < n; r++) {
    fprintf(f, "%d", (int)r + first_id);
    for (size_t i = 0; i < k; i++) fprintf(f, ",%.17g", rows[r * k + i]);
    fprintf(f, "\n");
  }
  fclose(f);
}

static void write_study(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

/* Saltelli's layout built here from random A and B (first order: A, AB_1..3,
 * B per base sample), run ids from 1 as other tools number them: detected as
 * a VBD design, and the Ishigami indices come out. */
Test(cli_sa_foreign, foreign_vbd_design) {
  const char *dir = tu_tmpdir("foreign_vbd");
  const char *study = tu_src("tests/studies/ishigami.json"); /* asks for second order */
  char samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(samples, "%s/s.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  const size_t n = 4000, k = 3, g = k + 2;
  double *rows = calloc(n * g * k, sizeof *rows);
  unsigned long long s = 12345;
  for (size_t j = 0; j < n; j++) {
    double a[3], b[3];
    for (size_t i = 0; i < k; i++) {
      a[i] = 3.141592653589793 * (2 * lcg(&s) - 1);
      b[i] = 3.141592653589793 * (2 * lcg(&s) - 1);
    }
    double *grp = rows + j * g * k;
    memcpy(grp, a, sizeof a);
    for (size_t i = 0; i < k; i++) {
      memcpy(grp + (1 + i) * k, a, sizeof a);
      grp[(1 + i) * k + i] = b[i];
    }
    memcpy(grp + (g - 1) * k, b, sizeof b);
  }
  write_rows(samples, "run_id,x1,x2,x3", rows, n * g, k, 1);
  free(rows);
  tu_write_outputs(samples, outputs, "f", tu_ishigami);
  char *out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples,
                     outputs, res);
  cr_expect(strstr(out, "analysed as a vbd design made elsewhere: 4000 base samples in "
                        "Saltelli's layout (first order)"),
            "%s", out);
  free(out);
  /* Monte Carlo with N = 4000: a few hundredths */
  const char *names[3] = {"x1", "x2", "x3"};
  const double s1[3] = {0.3139, 0.4424, 0}, st[3] = {0.5576, 0.4424, 0.2437};
  for (int i = 0; i < 3; i++) {
    cr_expect(fabs(tu_index_of(res, "f", names[i], "S1") - s1[i]) < 0.06, "S1 %s", names[i]);
    cr_expect(fabs(tu_index_of(res, "f", names[i], "ST") - st[i]) < 0.06, "ST %s", names[i]);
  }
  json_t *j = tu_indices_json(res);
  cr_expect_str_eq(json_string_value(json_object_get(j, "design")), "made elsewhere");
  json_decref(j);
}

/* Trajectories made here (random start, random order, steps of one grid
 * level) for y = 3a - b/2 + 0c: detected as MOAT; the effects in parameter
 * units are the coefficients exactly. The same rows shuffled are refused
 * with the layout MOAT wants. */
Test(cli_sa_foreign, foreign_moat_design) {
  const char *dir = tu_tmpdir("foreign_moat");
  char study[WSISA_PATH_MAX], samples[WSISA_PATH_MAX], shuffled[WSISA_PATH_MAX],
      outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(study, "%s/study.json", dir);
  tu_path(samples, "%s/s.csv", dir);
  tu_path(shuffled, "%s/shuffled.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  write_study(study, "{\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 10], "
                     "\"step\": 1}, \"c\": {\"values\": [1, 2, 3]}},"
                     " \"method\": {\"name\": \"moat\", \"trajectories\": 4, \"levels\": 4}}");
  const size_t r = 7, k = 3;
  double *rows = calloc(r * (k + 1) * k, sizeof *rows);
  unsigned long long s = 99;
  for (size_t t = 0; t < r; t++) {
    double x[3] = {floor(lcg(&s) * 3) / 3, floor(lcg(&s) * 10), 1 + floor(lcg(&s) * 2)};
    size_t order[3] = {0, 1, 2};
    for (size_t i = 2; i > 0; i--) {
      size_t j = (size_t)(lcg(&s) * (double)(i + 1));
      size_t tmp = order[i];
      order[i] = order[j], order[j] = tmp;
    }
    double *tr = rows + t * (k + 1) * k;
    memcpy(tr, x, sizeof x);
    for (size_t step = 0; step < k; step++) {
      size_t i = order[step];
      x[i] += i == 0 ? 1.0 / 3 : 1;
      memcpy(tr + (step + 1) * k, x, sizeof x);
    }
  }
  write_rows(samples, "run_id,a,b,c", rows, r * (k + 1), k, 0);
  /* rows 2 and 3 swapped: two parameters move in one step */
  double tmp[3];
  memcpy(tmp, rows + 1 * k, sizeof tmp);
  memcpy(rows + 1 * k, rows + 2 * k, sizeof tmp);
  memcpy(rows + 2 * k, tmp, sizeof tmp);
  write_rows(shuffled, "run_id,a,b,c", rows, r * (k + 1), k, 0);
  free(rows);
  tu_write_outputs(samples, outputs, "y", linear_all);
  char *out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples,
                     outputs, res);
  cr_expect(strstr(out, "analysed as a moat design made elsewhere: 7 trajectories of 4 runs"),
            "%s", out);
  free(out);
  cr_expect_float_eq(tu_index_of(res, "y", "a", "mu_param"), 3, 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "b", "mu_param"), -0.5, 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "c", "mu_star"), 0, 1e-12);
  cr_expect_float_eq(tu_index_of(res, "y", "a", "effects"), 7, 0);

  char args[16000], *err = NULL;
  snprintf(args, sizeof args, "analyze --study %s --samples %s --outputs %s -o %s/r2", study,
           shuffled, outputs, dir);
  out = NULL;
  cr_expect_eq(tu_run(args, &out, &err), 1);
  cr_expect(strstr(err, "nor is it a moat design made elsewhere: not a MOAT design: rows 1 and 2 "
                        "(trajectory 1) differ in more than one parameter"),
            "%s", err);
  free(out);
  free(err);
}

/* A correlation study takes any design: here the MOAT rows above would do,
 * and so does a plain table of random rows. A VBD study refuses the same
 * table, saying which layout it wants. */
Test(cli_sa_foreign, foreign_any_design_for_correlation_not_vbd) {
  const char *dir = tu_tmpdir("foreign_corr");
  char corr[WSISA_PATH_MAX], vbd[WSISA_PATH_MAX], samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX],
      res[WSISA_PATH_MAX];
  tu_path(corr, "%s/corr.json", dir);
  tu_path(vbd, "%s/vbd.json", dir);
  tu_path(samples, "%s/s.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  const char *params = "\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 10], "
                       "\"step\": 1}}";
  char text[1024];
  snprintf(text, sizeof text, "{%s, \"method\": {\"name\": \"correlation\", \"samples\": 50}}",
           params);
  write_study(corr, text);
  snprintf(text, sizeof text, "{%s, \"method\": {\"name\": \"vbd\", \"samples\": 16}}", params);
  write_study(vbd, text);
  const size_t n = 200;
  double *rows = calloc(n * 2, sizeof *rows);
  unsigned long long s = 7;
  for (size_t r = 0; r < n; r++) rows[2 * r] = lcg(&s), rows[2 * r + 1] = floor(lcg(&s) * 11);
  write_rows(samples, "run_id,a,b", rows, n, 2, 0);
  free(rows);
  tu_write_outputs(samples, outputs, "y", linear_all);
  char *out = tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", corr, samples, outputs,
                     res);
  cr_expect(strstr(out, "analysed as a correlation design made elsewhere: 200 runs"), "%s", out);
  free(out);
  cr_expect_float_eq(tu_index_of(res, "y", "a", "pcc"), 1, 1e-9);

  char args[16000], *err = NULL;
  snprintf(args, sizeof args, "analyze --study %s --samples %s --outputs %s -o %s/r2", vbd,
           samples, outputs, dir);
  out = NULL;
  cr_expect_eq(tu_run(args, &out, &err), 1);
  cr_expect(strstr(err, "not a VBD design") && strstr(err, "Saltelli"), "%s", err);
  free(out);
  free(err);
}

/* A 6-level MOAT design analysed under a study that asks for 4 levels: the
 * numbers use the design's own steps, and so does indices.json's
 * `conventions` (levels 6, Delta = 6 / (2 * 5) = 0.6), not the study's. */
Test(cli_sa_foreign, conventions_describe_the_design_analysed) {
  const char *dir = tu_tmpdir("conventions");
  char six[WSISA_PATH_MAX], four[WSISA_PATH_MAX], samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX],
      res[WSISA_PATH_MAX];
  tu_path(six, "%s/six.json", dir);
  tu_path(four, "%s/four.json", dir);
  tu_path(samples, "%s/s.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  const char *params = "\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [-1, 0.3]}}";
  char text[1024];
  snprintf(text, sizeof text, "{%s, \"method\": {\"name\": \"moat\", \"trajectories\": 6, "
           "\"levels\": 6}}", params);
  write_study(six, text);
  snprintf(text, sizeof text, "{%s, \"method\": {\"name\": \"moat\", \"trajectories\": 6, "
           "\"levels\": 4}}", params);
  write_study(four, text);
  free(tu_run_ok("sample --study %s -o %s", six, samples));
  tu_write_outputs(samples, outputs, "y", linear_all);
  free(tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", four, samples, outputs, res));
  json_t *j = tu_indices_json(res);
  json_t *conv = json_object_get(j, "conventions");
  cr_expect_eq(json_integer_value(json_object_get(conv, "levels")), 6);
  cr_expect_float_eq(json_number_value(json_object_get(conv, "delta")), 0.6, 1e-12);
  json_decref(j);
  cr_expect_float_eq(tu_index_of(res, "y", "a", "mu"), 3, 1e-9, "grid units: the 6-level step");
}

/* The expected indices of a method in tests/golden/salib/expected.json (made
 * with numpy and scipy from the formulas by make_salib.py beside it). */
static void expect_golden(const char *res, const char *method, const char *const *stats,
                          size_t nstats, const char *output) {
  json_error_t err;
  json_t *j = json_load_file(tu_src("tests/golden/salib/expected.json"), 0, &err);
  cr_assert_not_null(j, "%s", err.text);
  json_t *m = json_object_get(j, method);
  const char *names[3] = {"x1", "x2", "x3"};
  for (size_t s = 0; s < nstats; s++)
    for (size_t i = 0; i < 3; i++) {
      double want = json_number_value(json_array_get(json_object_get(m, stats[s]), i));
      double got = tu_index_of(res, output, names[i], stats[s]);
      cr_expect(fabs(got - want) <= 1e-8 * fmax(1, fabs(want)), "%s %s %s: %.17g, numpy %.17g",
                method, stats[s], names[i], got, want);
    }
  json_decref(j);
}

/* Designs as SALib, numpy and pandas write them, with SALib's problem file
 * and no study: Saltelli's layout under numpy's plain header and outputs
 * without an id (rows in order); Morris trajectories with pandas' unnamed
 * index, whose values overshoot [-1, 0.3] by an ulp; random rows under
 * numpy's "# " header with a column that is no parameter (ignored, with a
 * warning). The indices are numpy's to 1e-8; x3's PCC of an output exactly
 * linear in x1 and x2 is an empty cell and a warning. */
Test(cli_sa_foreign, analyze_salib_shaped_design_without_study) {
  const char *dir = tu_tmpdir("salib_shaped");
  char problem[WSISA_PATH_MAX], x[WSISA_PATH_MAX], y[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(problem, "%s", tu_src("tests/golden/salib/problem.json"));
  const char *methods[3][2] = {{"sobol", "sobol"}, {"morris", "morris"}, {"correlation", "corr"}};
  for (int m = 0; m < 3; m++) {
    char name[64];
    snprintf(name, sizeof name, "tests/golden/salib/%s_X.csv", methods[m][1]);
    tu_path(x, "%s", tu_src(name));
    snprintf(name, sizeof name, "tests/golden/salib/%s_Y.csv", methods[m][1]);
    tu_path(y, "%s", tu_src(name));
    tu_path(res, "%s/%s", dir, methods[m][0]);
    char *out = tu_run_ok("analyze --problem %s --method %s --samples %s --outputs %s -o %s",
                       problem, methods[m][0], x, y, res);
    if (m == 2) {
      cr_expect(strstr(out, "warning: ") && strstr(out, "column 'label' is no parameter of"),
                "%s", out);
      cr_expect(strstr(out, "warning: lin: the pcc of x3 is undefined: the output is an exact "
                            "linear function of the other inputs"),
                "%s", out);
    }
    free(out);
    json_t *j = tu_indices_json(res);
    cr_expect(json_is_null(json_object_get(j, "study")));
    cr_expect_str_eq(json_string_value(json_object_get(j, "problem")), problem);
    cr_expect_str_eq(json_string_value(json_object_get(j, "design")), "made elsewhere");
    json_decref(j);
  }
  static const char *const sobol[] = {"S1", "ST"}, *const morris[] = {"mu", "mu_star", "sigma"},
                           *const corr[] = {"pearson", "spearman", "pcc", "prcc"};
  tu_path(res, "%s/sobol", dir);
  expect_golden(res, "sobol", sobol, 2, "f");
  /* SALib's half-widths: z * se, z = norm.ppf(0.975) */
  for (int i = 0; i < 3; i++) {
    const char *p = i == 0 ? "x1" : i == 1 ? "x2" : "x3";
    double se = tu_index_of(res, "f", p, "S1_se"), st_se = tu_index_of(res, "f", p, "ST_se");
    cr_expect(se > 0 && fabs(tu_index_of(res, "f", p, "S1_conf") - 1.959963984540054 * se) <= 1e-9 * se);
    cr_expect(fabs(tu_index_of(res, "f", p, "ST_conf") - 1.959963984540054 * st_se) <= 1e-9 * st_se);
  }
  tu_path(res, "%s/morris", dir);
  expect_golden(res, "morris", morris, 3, "f");
  cr_expect(tu_index_of(res, "f", "x2", "mu_star_conf") > 0);
  tu_path(res, "%s/correlation", dir);
  expect_golden(res, "correlation", corr, 4, "f");
  cr_expect(isnan(tu_index_of(res, "lin", "x3", "pcc")), "an empty cell");
  cr_expect_float_eq(tu_index_of(res, "lin", "x1", "pcc"), 1, 1e-9);
}

/* One of the indices of tests/golden/salib/expected_groups_dists.json (made
 * with Python's standard library from the formulas by make_groups_dists.py
 * beside it); NaN where it leaves the index out. */
static double golden2(const char *design, const char *factor, const char *stat) {
  json_error_t err;
  json_t *j = json_load_file(tu_src("tests/golden/salib/expected_groups_dists.json"), 0, &err);
  cr_assert_not_null(j, "%s", err.text);
  json_t *v = json_object_get(json_object_get(json_object_get(j, design), factor), stat);
  double want = v ? json_number_value(v) : NAN;
  json_decref(j);
  return want;
}

static void expect_close(double got, double want, const char *what) {
  cr_expect(fabs(got - want) <= 1e-8 * fmax(1, fabs(want)), "%s: %.17g, reference %.17g", what,
            got, want);
}

/* SALib problem files with groups and dists, designs made elsewhere: grouped
 * Morris (a group's row holds mu* alone: mu and sigma are empty, as SALib
 * leaves them), grouped Saltelli blocks, and Morris trajectories whose levels
 * went through truncnorm's and triang's quantiles (effects in quantile
 * space). The references are Python's, to 1e-8. */
Test(cli_sa_foreign, analyze_groups_and_dists_without_study) {
  const char *dir = tu_tmpdir("groups_dists");
  const char *runs[3][3] = {{"groups_problem", "gmorris", "morris"},
                            {"groups_problem", "gsobol", "sobol"},
                            {"dists_problem", "dmorris", "morris"}};
  char res[3][WSISA_PATH_MAX];
  for (int m = 0; m < 3; m++) {
    char problem[WSISA_PATH_MAX], x[WSISA_PATH_MAX], y[WSISA_PATH_MAX], name[128];
    snprintf(name, sizeof name, "tests/golden/salib/%s.json", runs[m][0]);
    tu_path(problem, "%s", tu_src(name));
    snprintf(name, sizeof name, "tests/golden/salib/%s_X.csv", runs[m][1]);
    tu_path(x, "%s", tu_src(name));
    snprintf(name, sizeof name, "tests/golden/salib/%s_Y.csv", runs[m][1]);
    tu_path(y, "%s", tu_src(name));
    snprintf(res[m], sizeof res[m], "%s/%s", dir, runs[m][1]);
    free(tu_run_ok("analyze --problem %s --method %s --samples %s --outputs %s -o %s", problem,
                runs[m][2], x, y, res[m]));
  }
  /* grouped Morris: G1 = {x1, x2} is one row named G1 */
  expect_close(tu_index_of(res[0], "f", "G1", "mu_star"), golden2("gmorris", "G1", "mu_star"),
               "G1 mu*");
  cr_expect(isnan(tu_index_of(res[0], "f", "G1", "mu")) && isnan(tu_index_of(res[0], "f", "G1", "sigma")));
  cr_expect(isnan(tu_index_of(res[0], "f", "x1", "mu_star")), "no row for a grouped parameter");
  const char *stats[] = {"mu", "mu_star", "sigma"};
  for (int s = 0; s < 3; s++) {
    expect_close(tu_index_of(res[0], "f", "G2", stats[s]), golden2("gmorris", "G2", stats[s]), "G2");
    expect_close(tu_index_of(res[0], "f", "G3", stats[s]), golden2("gmorris", "G3", stats[s]), "G3");
  }
  json_t *j = tu_indices_json(res[0]);
  json_t *g1 = json_object_get(json_object_get(j, "groups"), "G1");
  cr_expect_eq(json_array_size(g1), 2);
  cr_expect_str_eq(json_string_value(json_array_get(g1, 1)), "x2");
  json_decref(j);
  /* grouped Sobol' */
  const char *groups[] = {"G1", "G2", "G3"};
  for (int g = 0; g < 3; g++) {
    expect_close(tu_index_of(res[1], "f", groups[g], "S1"), golden2("gsobol", groups[g], "S1"), "S1");
    expect_close(tu_index_of(res[1], "f", groups[g], "ST"), golden2("gsobol", groups[g], "ST"), "ST");
  }
  /* Morris under truncnorm, triang, unif */
  const char *dstats[] = {"mu", "mu_star", "sigma", "mu_param"}, *names[] = {"y1", "y2", "y3"};
  for (int i = 0; i < 3; i++)
    for (int s = 0; s < 4; s++)
      expect_close(tu_index_of(res[2], "f", names[i], dstats[s]), golden2("dmorris", names[i], dstats[s]),
                   names[i]);
  j = tu_indices_json(res[2]);
  cr_expect_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "dists"),
                                                                     "y2"), "dist")),
                   "triang");
  json_decref(j);
}

/* A run that fails with exactly one line on stderr holding `want`. */
static void expect_one_line_error(const char *args, const char *want) {
  char *out = NULL, *err = NULL;
  int status = tu_run(args, &out, &err);
  cr_expect_neq(status, 0, "wsisa %s: succeeded", args);
  cr_expect(err && strstr(err, want), "wsisa %s: wanted '%s' in: %s", args, want, err ? err : "");
  size_t lines = 0;
  for (const char *c = err ? err : ""; *c; c++) lines += *c == '\n';
  cr_expect_eq(lines, 1, "one error line, not: %s", err ? err : "");
  free(out);
  free(err);
}

Test(cli_sa_foreign, groups_and_dists_refused_with_one_line) {
  const char *dir = tu_tmpdir("groups_dists_bad");
  char path[WSISA_PATH_MAX], args[8400];
  const char *studies[][2] = {
      {"{\"parameters\": {\"a\": {\"dist\": \"gamma\", \"bounds\": [1, 2]}}, \"method\": \"vbd\"}",
       "'gamma' is not a distribution"},
      {"{\"parameters\": {\"a\": {\"dist\": \"norm\", \"bounds\": [1, -2]}}, \"method\": \"vbd\"}",
       "a.bounds: norm's sd -2 is not positive"},
      {"{\"parameters\": {\"a\": {\"dist\": \"triang\", \"bounds\": [0, 1, 0.5, 2]}}, "
       "\"method\": \"vbd\"}",
       "a.bounds: triang takes 3 bounds"},
      {"{\"parameters\": {\"a\": {\"dist\": \"triang\", \"bounds\": [-1, 0.5]}}, \"method\": \"vbd\"}",
       "a.bounds: triang needs low < high, not 0, -1 (its two-bound form [high, peak] starts at 0)"},
      {"{\"parameters\": {\"a\": {\"dist\": \"logunif\", \"bounds\": [0, 10]}}, \"method\": \"vbd\"}",
       "a.bounds: logunif's low 0 is not above 0"},
      {"{\"parameters\": {\"a\": {\"dist\": \"truncnorm\", \"bounds\": [2, 1, 0, 1]}}, "
       "\"method\": \"vbd\"}",
       "truncnorm needs low < high"},
      {"{\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 1]}}, "
       "\"groups\": {\"G\": [\"a\", \"c\"]}, \"method\": \"moat\"}",
       "group G: 'c' is not a parameter"},
      {"{\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 1]}}, "
       "\"groups\": {\"G\": [\"a\", \"b\"], \"H\": [\"b\"]}, \"method\": \"moat\"}",
       "b is in two groups, G and H"},
      {"{\"parameters\": {\"a\": {\"range\": [0, 10], \"step\": 1, \"dist\": \"norm\", "
       "\"bounds\": [5, 1]}}, \"method\": \"vbd\"}",
       "parameters.a.range: does not go with dist and bounds"},
      {"{\"inputs\": {\"images\": [\"x.png\"]}, \"parameters\": {\"G1\": {\"dist\": \"triang\", "
       "\"bounds\": [5, 80, 0.5]}}, \"method\": \"vbd\"}",
       "G1 takes whole numbers only; a dist applies to a continuous parameter"},
  };
  for (size_t i = 0; i < sizeof studies / sizeof *studies; i++) {
    tu_path(path, "%s/s%zu.json", dir, i);
    write_study(path, studies[i][0]);
    snprintf(args, sizeof args, "sample --study %s -o %s/s%zu.csv", path, dir, i);
    expect_one_line_error(args, studies[i][1]);
  }
  /* MOAT's grid ends are quantiles 0 and 1: infinite under norm */
  tu_path(path, "%s/moat_norm.json", dir);
  write_study(path, "{\"parameters\": {\"a\": {\"dist\": \"norm\", \"bounds\": [0, 1]}, "
                    "\"b\": {\"range\": [0, 1]}}, \"method\": \"moat\"}");
  snprintf(args, sizeof args, "sample --study %s -o %s/m.csv", path, dir);
  expect_one_line_error(args, "a: MOAT's grid ends are the quantiles 0 and 1");
  /* problem files */
  const char *problems[][2] = {
      {"{\"names\": [\"a\", \"b\"], \"bounds\": [[0, 1], [0, 1]], \"dists\": [\"unif\", "
       "\"weibull\"]}",
       "dists[1]: 'weibull' is not a distribution"},
      {"{\"names\": [\"a\", \"b\"], \"bounds\": [[0, 1], [0, 1, 2]], \"dists\": [\"unif\", "
       "\"triang\"]}",
       "b.bounds: triang's peak 2 is not a fraction of the width"},
      {"{\"names\": [\"a\", \"b\"], \"bounds\": [[0, 1], [0, 1]], \"groups\": [\"G\"]}",
       "groups: one group name per name (2)"},
      {"{\"names\": [\"a\", \"b\"], \"bounds\": [[0, 1], [0, 1]], \"groups\": [\"b\", \"G\"]}",
       "group b: also the name of a parameter outside it"},
  };
  for (size_t i = 0; i < sizeof problems / sizeof *problems; i++) {
    tu_path(path, "%s/p%zu.json", dir, i);
    write_study(path, problems[i][0]);
    snprintf(args, sizeof args, "analyze --problem %s --method morris --samples %s --outputs %s",
             path, tu_src("tests/golden/salib/gmorris_X.csv"),
             tu_src("tests/golden/salib/gmorris_Y.csv"));
    expect_one_line_error(args, problems[i][1]);
  }
}

static double grouped_linear(const wsisa_csv *c, size_t r) {
  return tu_csv_col(c, r, "a") + tu_csv_col(c, r, "b") + 4 * tu_csv_col(c, r, "c") + tu_csv_col(c, r, "d");
}

static double triang_only(const wsisa_csv *c, size_t r) { return tu_csv_col(c, r, "d"); }

/* A study's own grouped designs: a MOAT trajectory of G + 1 runs (a and b
 * move together), a Saltelli design of N (G + 2) runs; and MOAT's mu under a
 * triangular input, by hand: d ~ triang [0, 1, 0.5] on a 4-level grid sits at
 * the quantiles 0, sqrt(1/6), 1 - sqrt(1/6), 1, so each step of y = d moves y
 * by 1 - sqrt(1/6) while u moves by Delta = 2/3: mu = 1.5 (1 - sqrt(1/6)) in
 * grid (quantile) units, and mu_param = dy/dd = 1. */
Test(cli_sa_foreign, study_groups_and_dists) {
  const char *dir = tu_tmpdir("study_groups");
  char study[WSISA_PATH_MAX], samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX], res[WSISA_PATH_MAX];
  tu_path(study, "%s/g.json", dir);
  tu_path(samples, "%s/s.csv", dir);
  tu_path(outputs, "%s/y.csv", dir);
  tu_path(res, "%s/res", dir);
  const char *params =
      "\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 1]}, \"c\": {\"range\": "
      "[0, 1]}, \"d\": {\"dist\": \"triang\", \"bounds\": [0, 1, 0.5]}}, \"groups\": {\"G\": "
      "[\"a\", \"b\"]}";
  char text[2048];
  snprintf(text, sizeof text, "{%s, \"method\": {\"name\": \"moat\", \"trajectories\": 6}}",
           params);
  write_study(study, text);
  char *out = tu_run_ok("sample --study %s -o %s", study, samples);
  cr_expect(strstr(out, "moat: 6 trajectories of 4 runs"), "%s", out);
  free(out);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read(samples, &c, NULL), 0);
  cr_expect_eq(c->nrows, 24);
  for (size_t r = 0; r < c->nrows; r++)
    if (r % 4) { /* a and b move together, or neither does */
      int ma = tu_csv_col(c, r, "a") != tu_csv_col(c, r - 1, "a"), mb = tu_csv_col(c, r, "b") != tu_csv_col(c, r - 1, "b");
      cr_expect_eq(ma, mb, "row %zu", r);
    }
  wsisa_csv_free(c);
  tu_write_outputs(samples, outputs, "y", grouped_linear);
  free(tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples, outputs, res));
  cr_expect_float_eq(tu_index_of(res, "y", "c", "mu"), 4, 1e-12);
  double g = tu_index_of(res, "y", "G", "mu_star");
  /* |da + db| / Delta is 2 or 0 as a and b move alike or not */
  cr_expect(g >= 0 && g <= 2 && fabs(g * 3 - round(g * 3)) < 1e-6, "%g", g);
  cr_expect(isnan(tu_index_of(res, "y", "G", "mu")));
  tu_write_outputs(samples, outputs, "y", triang_only);
  free(tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s/t", study, samples, outputs, res));
  tu_path(res, "%s/res/t", dir);
  /* indices.csv holds 10 significant digits */
  cr_expect_float_eq(fabs(tu_index_of(res, "y", "d", "mu")), 1.5 * (1 - sqrt(1.0 / 6)), 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "d", "mu_star"), 1.5 * (1 - sqrt(1.0 / 6)), 1e-9);
  cr_expect_float_eq(tu_index_of(res, "y", "d", "mu_param"), 1, 1e-9);
  /* VBD: N (G + 2) runs */
  snprintf(text, sizeof text, "{%s, \"method\": {\"name\": \"vbd\", \"samples\": 16, "
           "\"bootstrap\": 0}}", params);
  write_study(study, text);
  out = tu_run_ok("sample --study %s -o %s", study, samples);
  cr_expect(strstr(out, "80 runs") && strstr(out, "16 base samples x 5 runs"), "%s", out);
  free(out);
  tu_write_outputs(samples, outputs, "y", grouped_linear);
  tu_path(res, "%s/vbd", dir);
  free(tu_run_ok("analyze --study %s --samples %s --outputs %s -o %s", study, samples, outputs, res));
  cr_expect(tu_index_of(res, "y", "G", "ST") > 0 && tu_index_of(res, "y", "c", "ST") > 0);
  cr_expect(isnan(tu_index_of(res, "y", "a", "ST")), "no row for a grouped parameter");
}

/* ---- SALib's own files (tests/golden/salib/make_salib_cli.py) ------------------------- */

/* A number of tests/golden/salib/cli_expected.json by its path of keys (an
 * array's item by its index as a key); NaN where the file has none. */
static double cli_expected(const char *const *keys, size_t n) {
  json_error_t err;
  json_t *root = json_load_file(tu_src("tests/golden/salib/cli_expected.json"), 0, &err);
  cr_assert_not_null(root, "%s", err.text);
  json_t *v = root;
  for (size_t i = 0; v && i < n; i++)
    v = json_is_array(v) ? json_array_get(v, (size_t)atoi(keys[i])) : json_object_get(v, keys[i]);
  double want = json_is_number(v) ? json_number_value(v) : NAN;
  json_decref(root);
  return want;
}

static const char *cli_file(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/golden/salib/%s", name);
  return tu_src(rel);
}

/* One S2 of indices_s2.csv. */
static double s2_of(const char *dir, const char *output, const char *p1, const char *p2) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/indices_s2.csv", dir);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "output", &c, NULL), 0, "%s", path);
  double v = NAN;
  for (size_t r = 0; r < c->nrows; r++)
    if (!strcmp(wsisa_csv_cell(c, r, 0), output) && !strcmp(wsisa_csv_cell(c, r, 1), p1) &&
        !strcmp(wsisa_csv_cell(c, r, 2), p2))
      v = tu_csv_col(c, r, "S2");
  wsisa_csv_free(c);
  return v;
}

/* The Sobol' indices of one output of the Ishigami design, wsisa's and the
 * reference's (wsisa's centring) to 1e-9; ST is SALib's own too (centring
 * does not move it). `file_output` is the column's name in the outputs. */
static void expect_cli_sobol(const char *res, const char *file_output, const char *output) {
  const char *names[] = {"x1", "x2", "x3"}, *idx[] = {"0", "1", "2"};
  for (int i = 0; i < 3; i++) {
    const char *s1[] = {"sobol", output, "wsisa", "S1", idx[i]};
    const char *st[] = {"sobol", output, "salib", "ST", idx[i]};
    expect_close(tu_index_of(res, file_output, names[i], "S1"), cli_expected(s1, 5), names[i]);
    expect_close(tu_index_of(res, file_output, names[i], "ST"), cli_expected(st, 5), names[i]);
  }
  const char *pairs[][3] = {{"x1", "x2", "0,1"}, {"x1", "x3", "0,2"}, {"x2", "x3", "1,2"}};
  for (int p = 0; p < 3; p++) {
    const char *s2[] = {"sobol", output, "wsisa", "S2", pairs[p][2]};
    expect_close(s2_of(res, file_output, pairs[p][0], pairs[p][1]), cli_expected(s2, 5), "S2");
  }
}

/* The problem dicts SALib leaves: json.dump(problem) after saltelli.sample
 * ("sample_scaled": true, groups and dists null) and a ProblemSpec's keys
 * (groups = names, outputs, sample_scaled), each read with SALib's own
 * command-line design and outputs (numpy's text, no header); and SALib's
 * text parameter file for the same design. A key SALib never writes is
 * refused in one line; one group for every parameter is no groups, as SALib
 * reads it. */
Test(cli_sa_foreign, salib_problem_dicts_as_salib_leaves_them) {
  const char *dir = tu_tmpdir("salib_dicts");
  char x[WSISA_PATH_MAX], y[WSISA_PATH_MAX], res[WSISA_PATH_MAX], path[WSISA_PATH_MAX], args[20000];
  tu_path(x, "%s", cli_file("cli_sobol_X.txt"));
  tu_path(y, "%s", cli_file("cli_sobol_Y.txt"));
  const char *problems[] = {"cli_sobol_problem.json", "cli_sobol_problemspec.json",
                            "cli_params.txt"};
  for (int p = 0; p < 3; p++) {
    tu_path(res, "%s/p%d", dir, p);
    char *out = tu_run_ok("analyze --problem %s --method sobol --samples %s --outputs %s -o %s",
                       cli_file(problems[p]), x, y, res);
    cr_expect(strstr(out, "32 base samples in Saltelli's layout (second order)"), "%s", out);
    free(out);
    expect_cli_sobol(res, "y0", "y0");
    expect_cli_sobol(res, "y1", "y1");
  }
  tu_path(res, "%s/spec_morris", dir);
  free(tu_run_ok("analyze --problem %s --method morris --samples %s --outputs %s -o %s",
              cli_file("cli_morris_problemspec.json"), cli_file("cli_morris_X.txt"),
              cli_file("cli_morris_Y.txt"), res));
  const char *g1[] = {"morris", "y0", "G1", "mu_star"};
  expect_close(tu_index_of(res, "y0", "G1", "mu_star"), cli_expected(g1, 4), "G1 mu*");
  /* keys SALib never writes, and values of the wrong kind */
  const char *bad[][2] = {
      {"\"bound\": [[0, 1], [0, 1], [0, 1]]", "unknown key 'bound' (a SALib problem has names, "
                                              "bounds, and optionally num_vars, groups, dists, "
                                              "outputs, sample_scaled)"},
      {"\"samples\": [[0, 0, 0]]", "unknown key 'samples'"},
      {"\"sample_scaled\": \"yes\"", "sample_scaled: true or false"},
      {"\"outputs\": \"Y\"", "outputs: a list of output names, or null"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tu_path(path, "%s/bad%zu.json", dir, i);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"names\": [\"x1\", \"x2\", \"x3\"], \"bounds\": [[-3.14159265359, 3.14159265359], "
             "[-3.14159265359, 3.14159265359], [-3.14159265359, 3.14159265359]], %s}",
             bad[i][0]);
    write_study(path, text);
    snprintf(args, sizeof args, "analyze --problem %s --method sobol --samples %s --outputs %s -o %s/x",
             path, x, y, dir);
    expect_one_line_error(args, bad[i][1]);
  }
  tu_path(path, "%s/one_group.json", dir);
  write_study(path, "{\"names\": [\"x1\", \"x2\", \"x3\"], \"groups\": [\"G\", \"G\", \"G\"], "
                    "\"bounds\": [[-3.14159265359, 3.14159265359], [-3.14159265359, 3.14159265359], "
                    "[-3.14159265359, 3.14159265359]], \"sample_scaled\": true}");
  tu_path(res, "%s/one_group", dir);
  char *out = tu_run_ok("analyze --problem %s --method sobol --samples %s --outputs %s -o %s", path,
                     x, y, res);
  cr_expect(strstr(out, "every parameter is in group 'G'; read as no groups"), "%s", out);
  free(out);
  expect_cli_sobol(res, "y0", "y0");
}

/* SALib's text parameter files, the format told by the content: comma-
 * delimited with a comment, groups and NA (grouped Morris trajectories of
 * SALib's sampler), tab-delimited with dists at two bounds a line (logunif,
 * the older triang, lognorm); and what SALib's reader refuses, or what a
 * JSON problem would be refused for, refused in one line naming the line. */
Test(cli_sa_foreign, salib_parameter_files) {
  const char *dir = tu_tmpdir("salib_params");
  char res[WSISA_PATH_MAX], path[WSISA_PATH_MAX], args[20000];
  tu_path(res, "%s/morris", dir);
  free(tu_run_ok("analyze --problem %s --method morris --samples %s --outputs %s -o %s",
              cli_file("cli_groups_params.txt"), cli_file("cli_morris_X.txt"),
              cli_file("cli_morris_Y.txt"), res));
  const char *factors[] = {"G1", "x3", "G2"}, *stats[] = {"mu", "mu_star", "sigma"};
  for (int f = 0; f < 3; f++)
    for (int s = 0; s < 3; s++) {
      const char *keys[] = {"morris", "y0", factors[f], stats[s]};
      double want = cli_expected(keys, 4), got = tu_index_of(res, "y0", factors[f], stats[s]);
      if (f == 0 && s != 1) /* a group of two: mu* alone; SALib's mu is finite, its sigma NaN */
        cr_expect(isnan(got) && (s == 2 ? isnan(want) : isfinite(want)), "G1 %s", stats[s]);
      else
        expect_close(got, want, factors[f]);
    }
  json_t *j = tu_indices_json(res);
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(j, "conventions"), "levels")), 4,
               "SALib's 9 digits still show the 4-level grid");
  cr_expect_eq(json_array_size(json_object_get(json_object_get(j, "groups"), "G1")), 2);
  json_decref(j);
  tu_path(res, "%s/dists", dir);
  free(tu_run_ok("analyze --problem %s --method sobol --samples %s --outputs %s -o %s",
              cli_file("cli_dists_params.txt"), cli_file("cli_dists_X.txt"),
              cli_file("cli_dists_Y.txt"), res));
  const char *names[] = {"a", "b", "c", "d"}, *idx[] = {"0", "1", "2", "3"};
  for (int i = 0; i < 4; i++) {
    const char *s1[] = {"dists", "y0", "wsisa", "S1", idx[i]}, *st[] = {"dists", "y0", "wsisa",
                                                                          "ST", idx[i]};
    expect_close(tu_index_of(res, "y0", names[i], "S1"), cli_expected(s1, 5), names[i]);
    expect_close(tu_index_of(res, "y0", names[i], "ST"), cli_expected(st, 5), names[i]);
  }
  j = tu_indices_json(res);
  json_t *b = json_object_get(json_object_get(j, "dists"), "b");
  cr_expect_str_eq(json_string_value(json_object_get(b, "dist")), "triang");
  cr_expect_float_eq(json_number_value(json_array_get(json_object_get(b, "bounds"), 1)), 2, 0,
                     "SALib's [2, 0.25] is [0, 2, 0.25]");
  cr_expect_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "dists"),
                                                                     "a"), "dist")),
                   "logunif");
  json_decref(j);
  const char *bad[][2] = {
      {"x1 0 1\nx2 0\n", "p0.txt:2: 2 fields; a parameter line is: name lower upper [group [dist]]"},
      {"x1,0,1\nx2,0,one\n", "p1.txt:2: x2: 'one' is not a number (its second bound)"},
      {"x1 0 1 G\n# x2 in G too\nx2 0 1 G\n", "p2.txt: every parameter is in group 'G'"},
      {"x1\t0\t1\tNA\tgamma\nx2\t0\t1\tNA\tunif\n", "p3.txt:1: 'gamma' is not a distribution"},
      {"x1 0 1 NA truncnorm\nx2 0 1 NA unif\n",
       "p4.txt:1: truncnorm takes 4 bounds, and a parameter file gives 2"},
      {"x1 1 0\nx2 0 1\n", "p5.txt:1: x1.bounds: unif needs low < high, not 1, 0"},
      {"# x1 0 1\n\n", "p6.txt: no parameter lines"},
      {"x1 0 1 G1 unif 7\nx2 0 1\n", "p7.txt:1: more than 5 fields"},
      {"x1 0 1 G1\nx1 0 1 G2\n", "p8.txt:2: "},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tu_path(path, "%s/p%zu.txt", dir, i);
    write_study(path, bad[i][0]);
    snprintf(args, sizeof args, "analyze --problem %s --method sobol --samples %s --outputs %s -o %s/x",
             path, cli_file("cli_sobol_X.txt"), cli_file("cli_sobol_Y.txt"), dir);
    expect_one_line_error(args, bad[i][1]);
  }
}

/* numpy's text as SALib's command line reads and writes it: space-, tab- and
 * comma-delimited, with and without a header; outputs without one are y0,
 * y1, ...; --column K (0-based, SALib's -c) picks one, several pick several;
 * a first line of numbers is a row; a count of rows says which lines it
 * counted. */
Test(cli_sa_foreign, numpy_text_samples_and_outputs) {
  const char *dir = tu_tmpdir("salib_numpy");
  char problem[WSISA_PATH_MAX], x[WSISA_PATH_MAX], res[WSISA_PATH_MAX], path[WSISA_PATH_MAX],
      args[20000];
  tu_path(problem, "%s", cli_file("cli_params.txt"));
  tu_path(x, "%s", cli_file("cli_sobol_X.txt"));
  /* a tab-delimited design with a header, comma-delimited outputs under "# f,g" */
  tu_path(res, "%s/named", dir);
  free(tu_run_ok("analyze --problem %s --method sobol --samples %s --outputs %s -o %s", problem,
              cli_file("cli_sobol_X_tab.txt"), cli_file("cli_sobol_Y_comma.txt"), res));
  expect_cli_sobol(res, "f", "y0");
  expect_cli_sobol(res, "g", "y1");
  /* one column, then two in the order given */
  tu_path(res, "%s/column1", dir);
  free(tu_run_ok("analyze --problem %s --method sobol --samples %s --outputs %s -c 1 -o %s", problem,
              x, cli_file("cli_sobol_Y.txt"), res));
  expect_cli_sobol(res, "y1", "y1");
  cr_expect(isnan(tu_index_of(res, "y0", "x1", "S1")), "-c 1 analyses y1 alone");
  tu_path(res, "%s/columns", dir);
  free(tu_run_ok("analyze --problem %s --method sobol --samples %s --outputs %s --column 1 "
              "--column 0 -o %s",
              problem, x, cli_file("cli_sobol_Y_comma.txt"), res));
  expect_cli_sobol(res, "f", "y0");
  expect_cli_sobol(res, "g", "y1");
  snprintf(args, sizeof args, "analyze --problem %s --method sobol --samples %s --outputs %s -c 2",
           problem, x, cli_file("cli_sobol_Y.txt"));
  char *err = NULL;
  cr_expect_eq(tu_run(args, NULL, &err), 2, "a column the file lacks is a usage error");
  cr_expect(err && strstr(err, "--column 2: ") && strstr(err, "has 2 output columns (0 to 1)"),
            "%s", err ? err : "");
  free(err);
  /* the outputs one row short: which rows were counted, in both files */
  tu_path(path, "%s/short_Y.txt", dir);
  snprintf(args, sizeof args, "head -n 255 '%s' > '%s'", cli_file("cli_sobol_Y.txt"), path);
  cr_assert_eq(system(args), 0);
  snprintf(args, sizeof args, "analyze --problem %s --method sobol --samples %s --outputs %s",
           problem, x, path);
  expect_one_line_error(args, "short_Y.txt: 255 rows (lines 1-255, no header) for the 256 runs of");
  expect_one_line_error(args, "cli_sobol_X.txt (lines 1-256, no header)");
  /* a design without a header holds every parameter, in order */
  tu_path(path, "%s/two_columns.txt", dir);
  snprintf(args, sizeof args, "cut -d ' ' -f 1,2 '%s' > '%s'", x, path);
  cr_assert_eq(system(args), 0);
  snprintf(args, sizeof args, "analyze --problem %s --method sobol --samples %s --outputs %s",
           problem, path, cli_file("cli_sobol_Y.txt"));
  expect_one_line_error(args, "two_columns.txt:1: 2 columns and no header, but a file without one "
                              "holds the 3 parameters of");
}
