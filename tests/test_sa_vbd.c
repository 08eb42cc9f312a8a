/* VBD: Sobol' indices of the Ishigami and G functions against their analytic
 * values, the design built from one 2k-dimensional sequence (and the wrong
 * indices consecutive blocks give), bootstrap intervals, missing outputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa.h"

/* Accuracy: with N = 2^14 independent base samples the standard error of these
 * estimators on Ishigami is at most 0.012 (Jansen's ST of x1, whose x3^4 term
 * makes it the noisiest; see mc_intervals_cover_the_truth). Sobol' points at
 * the same N err several times less (within 0.003 here), so 0.02 leaves room
 * without hiding a wrong estimator: the gaps between indices are >= 0.1. */
#define N_BASE 16384
#define TOL 0.02

static const double PI = 3.14159265358979323846;

static wsisa_sa_space *cube(size_t k, double lo, double hi) {
  wsisa_sa_space *s = wsisa_sa_space_new();
  for (size_t i = 0; i < k; i++) {
    wsisa_sa_param p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "x%zu", i + 1);
    p.kind = WSISA_SA_CONTINUOUS;
    p.lo = lo;
    p.hi = hi;
    p.value = lo;
    cr_assert_eq(wsisa_sa_space_add(s, &p, NULL), 0);
  }
  return s;
}

static double ishigami(const double *x) {
  double s2 = sin(x[1]);
  return sin(x[0]) + 7 * s2 * s2 + 0.1 * pow(x[2], 4) * sin(x[0]);
}

/* Outputs of a design over [-pi, pi]^3 for Ishigami. */
static double *ishigami_outputs(const wsisa_sa_design *d) {
  double *y = malloc(d->nrows * sizeof *y);
  for (size_t r = 0; r < d->nrows; r++) y[r] = ishigami(d->values + r * 3);
  return y;
}

static wsisa_sa_design *vbd_design(const wsisa_sa_space *s, wsisa_sa_sampler sampler,
                                   size_t n, int second_order) {
  wsisa_sa_opts o;
  wsisa_sa_opts_default(&o, WSISA_SA_VBD);
  o.sampler = sampler;
  o.samples = n;
  o.second_order = second_order;
  o.seed = 5;
  wsisa_sa_design *d = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_sa_design_make(s, &o, &d, &e), 0, "%s", e.msg);
  return d;
}

static const double ishigami_s1[3] = {0.3139, 0.4424, 0};
static const double ishigami_st[3] = {0.5576, 0.4424, 0.2437};

Test(sa_vbd, ishigami_indices) {
  wsisa_sa_space *s = cube(3, -PI, PI);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_SOBOL, N_BASE, 1);
  cr_assert_eq(d->nrows, N_BASE * 8);
  double *y = ishigami_outputs(d);
  wsisa_sa_vbd_opts vo = {200, 0.95, 1, 0};
  wsisa_sa_vbd_result r;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, 3, 1, &vo, &r, NULL, NULL), 0);
  for (int i = 0; i < 3; i++) {
    cr_expect(fabs(r.s1[i] - ishigami_s1[i]) < TOL, "S1[%d] %g vs %g", i, r.s1[i], ishigami_s1[i]);
    cr_expect(fabs(r.st[i] - ishigami_st[i]) < TOL, "ST[%d] %g vs %g", i, r.st[i], ishigami_st[i]);
    cr_expect(r.s1_lo[i] <= r.s1[i] + 1e-12 && r.s1[i] <= r.s1_hi[i] + 1e-12);
    cr_expect(r.st_lo[i] <= r.st[i] + 1e-12 && r.st[i] <= r.st_hi[i] + 1e-12);
  }
  /* Analytic variance (a = 7, b = 0.1): a^2/8 + b pi^4/5 + b^2 pi^8/18 + 1/2. */
  double v = 49.0 / 8 + 0.1 * pow(PI, 4) / 5 + 0.01 * pow(PI, 8) / 18 + 0.5;
  cr_expect(fabs(r.variance - v) / v < 0.02, "variance %g vs %g", r.variance, v);
  /* Second order: only x1 and x3 interact, S13 = ST1 - S1_1 = 0.2437. */
  cr_expect(fabs(r.s2[0 * 3 + 2] - 0.2437) < 2 * TOL, "S13 %g", r.s2[2]);
  cr_expect(fabs(r.s2[0 * 3 + 1]) < 2 * TOL, "S12 %g", r.s2[1]);
  cr_expect(fabs(r.s2[1 * 3 + 2]) < 2 * TOL, "S23 %g", r.s2[5]);
  cr_expect(isnan(r.s2[1 * 3 + 0]), "the lower triangle is not an index");
  wsisa_sa_vbd_result_free(&r);
  free(y);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

Test(sa_vbd, g_function_indices) {
  const double a[8] = {0, 1, 4.5, 9, 99, 99, 99, 99};
  wsisa_sa_space *s = cube(8, 0, 1);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_SOBOL, N_BASE, 0);
  double *y = malloc(d->nrows * sizeof *y);
  for (size_t r = 0; r < d->nrows; r++) {
    double f = 1;
    for (int i = 0; i < 8; i++) f *= (fabs(4 * d->values[r * 8 + i] - 2) + a[i]) / (1 + a[i]);
    y[r] = f;
  }
  wsisa_sa_vbd_opts vo = {100, 0.95, 1, 0};
  wsisa_sa_vbd_result r;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, 8, 0, &vo, &r, NULL, NULL), 0);
  double vi[8], v = 1;
  for (int i = 0; i < 8; i++) {
    vi[i] = 1 / (3 * (1 + a[i]) * (1 + a[i]));
    v *= 1 + vi[i];
  }
  v -= 1;
  for (int i = 0; i < 8; i++) {
    double total = vi[i];
    for (int j = 0; j < 8; j++)
      if (j != i) total *= 1 + vi[j];
    cr_expect(fabs(r.s1[i] - vi[i] / v) < TOL, "S1[%d] %g vs %g", i, r.s1[i], vi[i] / v);
    cr_expect(fabs(r.st[i] - total / v) < TOL, "ST[%d] %g vs %g", i, r.st[i], total / v);
  }
  cr_expect_null(r.s2);
  wsisa_sa_vbd_result_free(&r);
  free(y);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

/* A and B as consecutive blocks of one 3-dimensional Sobol' sequence: the
 * blocks are correlated, and the indices come out wrong. The same points split
 * by columns of a 6-dimensional sequence are right. */
Test(sa_vbd, consecutive_blocks_give_wrong_indices) {
  const size_t n = 4096, k = 3;
  double *blocks = malloc(2 * n * k * sizeof *blocks);
  double *unit = malloc(n * (k + 2) * k * sizeof *unit);
  double *y = malloc(n * (k + 2) * sizeof *y);
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_SOBOL, 2 * n, k, 1, blocks, NULL), 0);
  wsisa_sa_saltelli_unit(blocks, blocks + n * k, n, k, 0, unit);
  for (size_t r = 0; r < n * (k + 2); r++) {
    double x[3];
    for (size_t i = 0; i < 3; i++) x[i] = -PI + 2 * PI * unit[r * k + i];
    y[r] = ishigami(x);
  }
  wsisa_sa_vbd_opts vo = {0, 0.95, 1, 0};
  wsisa_sa_vbd_result wrong;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, n, k, 0, &vo, &wrong, NULL, NULL), 0);
  double worst = 0;
  for (int i = 0; i < 3; i++) {
    worst = fmax(worst, fabs(wrong.s1[i] - ishigami_s1[i]));
    worst = fmax(worst, fabs(wrong.st[i] - ishigami_st[i]));
  }
  cr_expect_gt(worst, 0.2, "consecutive blocks should be visibly wrong; worst error %g", worst);

  wsisa_sa_space *s = cube(3, -PI, PI);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_SOBOL, n, 0);
  double *yr = ishigami_outputs(d);
  wsisa_sa_vbd_result right;
  cr_assert_eq(wsisa_sa_vbd_analyze(yr, n, k, 0, &vo, &right, NULL, NULL), 0);
  for (int i = 0; i < 3; i++) {
    cr_expect(fabs(right.s1[i] - ishigami_s1[i]) < 2 * TOL, "S1[%d] %g", i, right.s1[i]);
    cr_expect(fabs(right.st[i] - ishigami_st[i]) < 2 * TOL, "ST[%d] %g", i, right.st[i]);
  }
  cr_expect(isnan(right.s1_lo[0]), "no bootstrap, no interval");
  wsisa_sa_vbd_result_free(&wrong);
  wsisa_sa_vbd_result_free(&right);
  free(blocks);
  free(unit);
  free(y);
  free(yr);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

Test(sa_vbd, mc_intervals_cover_the_truth) {
  /* With independent points the bootstrap is valid: each true index lies within
   * 4 bootstrap standard errors, and the 95 % interval is about 4 se wide. */
  wsisa_sa_space *s = cube(3, -PI, PI);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_MC, N_BASE, 0);
  double *y = ishigami_outputs(d);
  wsisa_sa_vbd_opts vo = {300, 0.95, 9, 0};
  wsisa_sa_vbd_result r;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, 3, 0, &vo, &r, NULL, NULL), 0);
  for (int i = 0; i < 3; i++) {
    cr_expect_lt(r.s1_se[i], 0.012, "S1[%d] se %g", i, r.s1_se[i]);
    cr_expect_lt(r.st_se[i], 0.012, "ST[%d] se %g", i, r.st_se[i]);
    cr_expect(fabs(r.s1[i] - ishigami_s1[i]) < 4 * r.s1_se[i], "S1[%d] %g se %g", i, r.s1[i],
              r.s1_se[i]);
    cr_expect(fabs(r.st[i] - ishigami_st[i]) < 4 * r.st_se[i], "ST[%d] %g se %g", i, r.st[i],
              r.st_se[i]);
    double width = (r.s1_hi[i] - r.s1_lo[i]) / r.s1_se[i];
    cr_expect(width > 3 && width < 5, "interval / se = %g", width);
  }
  /* The same seed gives the same intervals. */
  wsisa_sa_vbd_result again;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, 3, 0, &vo, &again, NULL, NULL), 0);
  cr_expect_arr_eq(again.s1_lo, r.s1_lo, 3 * sizeof(double));
  wsisa_sa_vbd_result_free(&again);
  wsisa_sa_vbd_result_free(&r);
  free(y);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

Test(sa_vbd, missing_outputs_refused_unless_dropped) {
  wsisa_sa_space *s = cube(3, -PI, PI);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_SOBOL, 512, 0);
  double *y = ishigami_outputs(d);
  y[7] = NAN;   /* group 1 (rows 5..9) */
  y[12] = NAN;  /* group 2 */
  y[14] = NAN;  /* group 2 again */
  wsisa_sa_vbd_opts vo = {0, 0.95, 1, 0};
  wsisa_sa_vbd_result r;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_sa_vbd_analyze(y, d->groups, 3, 0, &vo, &r, NULL, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "2 of 512 base samples have a missing output"), "%s", e.msg);
  cr_expect_null(r.s1);
  vo.drop_missing = 1;
  size_t dropped = 0;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, 3, 0, &vo, &r, &dropped, NULL), 0);
  cr_expect_eq(dropped, 2);
  cr_expect_eq(r.n, 510);
  cr_expect(isfinite(r.s1[0]));
  wsisa_sa_vbd_result_free(&r);
  free(y);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

Test(sa_vbd, layout_groups_a_ab_b) {
  const double a[2 * 2] = {0.1, 0.2, 0.3, 0.4}, b[2 * 2] = {0.5, 0.6, 0.7, 0.8};
  double unit[2 * 6 * 2];
  wsisa_sa_saltelli_unit(a, b, 2, 2, 1, unit);
  const double want[6][2] = {{0.1, 0.2}, {0.5, 0.2}, {0.1, 0.6},
                             {0.1, 0.6}, {0.5, 0.2}, {0.5, 0.6}};
  for (int r = 0; r < 6; r++)
    for (int i = 0; i < 2; i++) cr_expect_eq(unit[r * 2 + i], want[r][i], "row %d col %d", r, i);
  cr_expect_eq(unit[6 * 2], 0.3, "the second group starts with A_2");
}

/* Ishigami with x1 and x3 in one group: the group's S1 is V(E[y | x1, x3]) / V
 * = S1_1 + S1_3 + S13 = 0.3139 + 0 + 0.2437 = 0.5576, its ST 1 - S1_2 = 0.5576;
 * x2 alone keeps 0.4424 (the published values above). The design is N (G + 2)
 * runs, AB_G taking x1 and x3 from B together; second order between the two
 * factors is 0. */
Test(sa_vbd, ishigami_by_groups) {
  wsisa_sa_space *s = cube(3, -PI, PI);
  cr_assert_eq(wsisa_sa_space_group(s, "G13", "x1", NULL), 0);
  cr_assert_eq(wsisa_sa_space_group(s, "G13", "x3", NULL), 0);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_SOBOL, N_BASE, 1);
  cr_assert_eq(d->nfactors, 2);
  cr_assert_eq(d->nrows, N_BASE * 6, "2G + 2 runs a base sample");
  /* AB_G13 of the second base sample: x1, x3 from B, x2 from A */
  const double *g = d->unit + 6 * 3, *ab = g + 3, *b = g + 5 * 3;
  cr_expect(ab[0] == b[0] && ab[2] == b[2] && ab[1] == g[1]);
  double *y = ishigami_outputs(d);
  wsisa_sa_vbd_opts vo = {0, 0.95, 1, 0};
  wsisa_sa_vbd_result r;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, d->nfactors, 1, &vo, &r, NULL, NULL), 0);
  cr_expect(fabs(r.s1[0] - 0.5576) < TOL, "S1 G13 %g", r.s1[0]);
  cr_expect(fabs(r.st[0] - 0.5576) < TOL, "ST G13 %g", r.st[0]);
  cr_expect(fabs(r.s1[1] - 0.4424) < TOL, "S1 x2 %g", r.s1[1]);
  cr_expect(fabs(r.st[1] - 0.4424) < TOL, "ST x2 %g", r.st[1]);
  cr_expect(fabs(r.s2[1]) < 2 * TOL, "S2 %g", r.s2[1]);
  wsisa_sa_vbd_result_free(&r);
  free(y);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

/* Inputs by their dists: y = x1 + 2 x2, x1 ~ norm [0, 1] (variance 1), x2 ~
 * triang [0, 1, 0.5] (variance 1/24, so 2 x2 has 1/6): S1 = ST = 6/7 and 1/7.
 * The design's values are the quantiles of its unit coordinates. */
Test(sa_vbd, indices_under_input_distributions) {
  wsisa_sa_space *s = cube(2, 0, 1);
  cr_assert_eq(wsisa_sa_param_set_dist(&s->params[0], WSISA_SA_NORM, (double[]){0, 1}, 2, NULL), 0);
  cr_assert_eq(wsisa_sa_param_set_dist(&s->params[1], WSISA_SA_TRIANG, (double[]){0, 1, 0.5}, 3,
                                       NULL), 0);
  wsisa_sa_design *d = vbd_design(s, WSISA_SA_SOBOL, N_BASE, 0);
  double *y = malloc(d->nrows * sizeof *y);
  for (size_t r = 0; r < d->nrows; r++) {
    const double *v = d->values + r * 2, *u = d->unit + r * 2;
    cr_assert_eq(v[0], wsisa_sa_param_quantile(&s->params[0], u[0]));
    y[r] = v[0] + 2 * v[1];
  }
  wsisa_sa_vbd_opts vo = {0, 0.95, 1, 0};
  wsisa_sa_vbd_result r;
  cr_assert_eq(wsisa_sa_vbd_analyze(y, d->groups, 2, 0, &vo, &r, NULL, NULL), 0);
  cr_expect(fabs(r.s1[0] - 6.0 / 7) < TOL && fabs(r.st[0] - 6.0 / 7) < TOL, "%g %g", r.s1[0], r.st[0]);
  cr_expect(fabs(r.s1[1] - 1.0 / 7) < TOL && fabs(r.st[1] - 1.0 / 7) < TOL, "%g %g", r.s1[1], r.st[1]);
  cr_expect(fabs(r.variance - (1 + 1.0 / 6)) < 0.02, "variance %g", r.variance);
  wsisa_sa_vbd_result_free(&r);
  free(y);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

/* A correlation design under lognorm [0, 0.5]: LHS puts one run in each 1/n
 * slice of the quantiles, so the sample's ln x has mean 0 and sd 0.5 to
 * within a few 10^-3, and every value is positive. */
Test(sa_vbd, correlation_design_under_lognorm) {
  wsisa_sa_space *s = cube(2, 0, 1);
  cr_assert_eq(wsisa_sa_param_set_dist(&s->params[0], WSISA_SA_LOGNORM, (double[]){0, 0.5}, 2,
                                       NULL), 0);
  wsisa_sa_opts o;
  wsisa_sa_opts_default(&o, WSISA_SA_CORRELATION);
  wsisa_sa_design *d = NULL;
  cr_assert_eq(wsisa_sa_design_make(s, &o, &d, NULL), 0);
  double sum = 0, sumsq = 0;
  for (size_t r = 0; r < d->nrows; r++) {
    double v = d->values[r * 2];
    cr_assert_gt(v, 0);
    sum += log(v);
    sumsq += log(v) * log(v);
  }
  double n = (double)d->nrows, mean = sum / n, sd = sqrt(sumsq / n - mean * mean);
  cr_expect(fabs(mean) < 0.005 && fabs(sd - 0.5) < 0.005, "mean %g sd %g", mean, sd);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}
