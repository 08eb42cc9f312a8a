/* Correlation measures on a small fixture with ties (expected values from
 * scipy.stats and least-squares residuals, computed independently), and
 * Pearson / PCC of y = 2 x1 + x2 + noise against their analytic values. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa.h"

static const double fixture_x[12][3] = {
    {1, 10, 0.5}, {2, 10, 0.1}, {2, 30, 0.9}, {3, 20, 0.3}, {4, 20, 0.3}, {4, 40, 0.7},
    {5, 30, 0.2}, {6, 50, 0.8}, {6, 50, 0.4}, {7, 60, 0.6}, {8, 40, 0.9}, {9, 70, 0.1}};
static const double fixture_y[12] = {3.0, 2.5, 6.0, 4.0, 4.0, 7.5, 5.0, 9.0, 8.0, 9.5, 8.0, 11.0};

Test(sa_correlation, ranks_average_ties) {
  double ranks[12];
  cr_assert_eq(wsisa_sa_rank(&fixture_x[0][0], 12, 3, ranks, NULL), 0);
  const double want[12] = {1, 2.5, 2.5, 4, 5.5, 5.5, 7, 8.5, 8.5, 10, 11, 12};
  cr_expect_arr_eq(ranks, want, sizeof want);
  cr_assert_eq(wsisa_sa_rank(fixture_y, 12, 1, ranks, NULL), 0);
  const double want_y[12] = {2, 1, 6, 3.5, 3.5, 7, 5, 10, 8.5, 11, 8.5, 12};
  cr_expect_arr_eq(ranks, want_y, sizeof want_y);
}

Test(sa_correlation, fixture_with_ties) {
  wsisa_sa_corr_result r;
  cr_assert_eq(wsisa_sa_correlation(&fixture_x[0][0], 12, 3, fixture_y, &r, NULL), 0);
  const double pearson[3] = {0.8628794335038957, 0.9844277428131714, 0.3054239425463202};
  const double spearman[3] = {0.8747809019617813, 0.9876245417550731, 0.29453308594277716};
  const double pcc[3] = {0.419872886197572, 0.9791629278032645, 0.868844067662222};
  const double prcc[3] = {0.44811603064402816, 0.9625797574774473, 0.6924481616986514};
  for (int i = 0; i < 3; i++) {
    cr_expect_float_eq(r.pearson[i], pearson[i], 1e-12, "pearson[%d] %.17g", i, r.pearson[i]);
    cr_expect_float_eq(r.spearman[i], spearman[i], 1e-12, "spearman[%d] %.17g", i, r.spearman[i]);
    cr_expect_float_eq(r.pcc[i], pcc[i], 1e-10, "pcc[%d] %.17g", i, r.pcc[i]);
    cr_expect_float_eq(r.prcc[i], prcc[i], 1e-10, "prcc[%d] %.17g", i, r.prcc[i]);
  }
  cr_expect_eq(r.n, 12);
  wsisa_sa_corr_result_free(&r);
}

Test(sa_correlation, missing_outputs_are_skipped) {
  double y[12];
  memcpy(y, fixture_y, sizeof y);
  y[4] = NAN;
  wsisa_sa_corr_result r;
  cr_assert_eq(wsisa_sa_correlation(&fixture_x[0][0], 12, 3, y, &r, NULL), 0);
  cr_expect_eq(r.n, 11);
  /* The same as the fixture without row 4. */
  double x11[11][3], y11[11];
  for (int i = 0, j = 0; i < 12; i++)
    if (i != 4) {
      memcpy(x11[j], fixture_x[i], sizeof x11[j]);
      y11[j++] = fixture_y[i];
    }
  wsisa_sa_corr_result r11;
  cr_assert_eq(wsisa_sa_correlation(&x11[0][0], 11, 3, y11, &r11, NULL), 0);
  cr_expect_arr_eq(r.prcc, r11.prcc, 3 * sizeof(double));
  wsisa_sa_corr_result_free(&r);
  wsisa_sa_corr_result_free(&r11);
}

Test(sa_correlation, constant_column_is_undefined_but_harmless) {
  double x[12][3];
  memcpy(x, fixture_x, sizeof x);
  for (int i = 0; i < 12; i++) x[i][2] = 0.5;
  wsisa_sa_corr_result r;
  cr_assert_eq(wsisa_sa_correlation(&x[0][0], 12, 3, fixture_y, &r, NULL), 0);
  cr_expect(isnan(r.pearson[2]));
  cr_expect(isnan(r.pcc[2]));
  cr_expect(isfinite(r.pcc[0]) && isfinite(r.pcc[1]), "the others are conditioned on each other");
  cr_expect_float_eq(r.pearson[0], 0.8628794335038957, 1e-12);
  wsisa_sa_corr_result_free(&r);
}

Test(sa_correlation, linear_model_against_analytic_values) {
  /* x1, x2 ~ U(0, 1) (LHS), y = 2 x1 + x2 + e, e ~ N(0, s^2), s = 0.5.
   * Var x = 1/12; Pearson_1 = 2 sx / sqrt(5 sx^2 + s^2), Pearson_2 = sx / (same);
   * PCC_1 = 2 sx / sqrt(4 sx^2 + s^2), PCC_2 = sx / sqrt(sx^2 + s^2). */
  const size_t n = 20000;
  const double s = 0.5, vx = 1.0 / 12;
  double *u = malloc(n * 2 * sizeof *u), *y = malloc(n * sizeof *y);
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_LHS, n, 2, 3, u, NULL), 0);
  wsisa_sa_rng rng;
  wsisa_sa_rng_seed(&rng, 99, 0);
  for (size_t j = 0; j < n; j++) {
    /* Box–Muller */
    double a = 1 - wsisa_sa_rng_uniform(&rng), b = wsisa_sa_rng_uniform(&rng);
    double noise = s * sqrt(-2 * log(a)) * cos(2 * 3.14159265358979323846 * b);
    y[j] = 2 * u[j * 2] + u[j * 2 + 1] + noise;
  }
  wsisa_sa_corr_result r;
  cr_assert_eq(wsisa_sa_correlation(u, n, 2, y, &r, NULL), 0);
  double p1 = 2 * sqrt(vx) / sqrt(5 * vx + s * s), p2 = sqrt(vx) / sqrt(5 * vx + s * s);
  double c1 = 2 * sqrt(vx) / sqrt(4 * vx + s * s), c2 = sqrt(vx) / sqrt(vx + s * s);
  /* Standard error of a correlation ~ (1 - rho^2) / sqrt(n) <= 0.007: allow 3. */
  cr_expect(fabs(r.pearson[0] - p1) < 0.02, "pearson1 %g vs %g", r.pearson[0], p1);
  cr_expect(fabs(r.pearson[1] - p2) < 0.02, "pearson2 %g vs %g", r.pearson[1], p2);
  cr_expect(fabs(r.pcc[0] - c1) < 0.02, "pcc1 %g vs %g", r.pcc[0], c1);
  cr_expect(fabs(r.pcc[1] - c2) < 0.02, "pcc2 %g vs %g", r.pcc[1], c2);
  /* A monotone model: ranks agree with values closely. */
  cr_expect(fabs(r.spearman[0] - r.pearson[0]) < 0.03);
  cr_expect(r.prcc[0] > r.prcc[1]);
  wsisa_sa_corr_result_free(&r);
  free(u);
  free(y);
}

Test(sa_correlation, pearson_basics) {
  const double a[4] = {1, 2, 3, 4}, b[4] = {8, 6, 4, 2}, c[4] = {5, 5, 5, 5};
  cr_expect_float_eq(wsisa_sa_pearson(a, b, 4), -1, 1e-15);
  cr_expect(isnan(wsisa_sa_pearson(a, c, 4)));
}

/* y = 2 x1 + x2 exactly, x3 without effect: x3's partial correlation is 0/0
 * (nothing of y is left once x1 and x2 are known). Over 40 random designs it
 * is NaN with its reason every time, never +-1 or 10^-9; x1's and x2's are
 * exactly 1 (their residuals are proportional). */
Test(sa_correlation, partial_of_no_effect_under_exact_fit_is_undefined) {
  unsigned long long s = 2024;
  size_t undefined = 0;
  for (int design = 0; design < 40; design++) {
    double x[40][3], y[40];
    for (int r = 0; r < 40; r++) {
      for (int i = 0; i < 3; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[r][i] = -0.9 + 0.6 * (double)(s >> 11) / 9007199254740992.0;
      }
      y[r] = 2 * x[r][0] + x[r][1];
    }
    wsisa_sa_corr_result res;
    cr_assert_eq(wsisa_sa_correlation(&x[0][0], 40, 3, y, &res, NULL), 0);
    undefined += isnan(res.pcc[2]) && res.pcc_why[2] && strstr(res.pcc_why[2], "exact linear");
    cr_expect_float_eq(res.pcc[0], 1, 1e-9, "design %d", design);
    cr_expect_float_eq(res.pcc[1], 1, 1e-9, "design %d", design);
    cr_expect_null(res.pcc_why[0]);
    cr_expect(isfinite(res.prcc[2]), "ranks of y are not linear in the ranks of x");
    wsisa_sa_corr_result_free(&res);
  }
  cr_expect_eq(undefined, 40, "x3's PCC undefined in %zu of 40 designs", undefined);
}
