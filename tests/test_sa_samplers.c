/* Samplers: radical inverse and Halton against hand-computed values, Sobol'
 * against the published sequence (values from an independent implementation),
 * Latin hypercube strata, seeding. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa.h"

Test(sa_samplers, radical_inverse_by_hand) {
  /* base 2: 1 -> 0.1b, 2 -> 0.01b, 3 -> 0.11b, 6 = 110b -> 0.011b */
  cr_expect_eq(wsisa_sa_radical_inverse(0, 2), 0.0);
  cr_expect_eq(wsisa_sa_radical_inverse(1, 2), 0.5);
  cr_expect_eq(wsisa_sa_radical_inverse(2, 2), 0.25);
  cr_expect_eq(wsisa_sa_radical_inverse(3, 2), 0.75);
  cr_expect_eq(wsisa_sa_radical_inverse(6, 2), 0.375);
  /* base 3: 5 = 12_3 -> 0.21_3 = 2/3 + 1/9 = 7/9; 11 = 102_3 -> 0.201_3 = 19/27 */
  cr_expect_float_eq(wsisa_sa_radical_inverse(1, 3), 1.0 / 3, 1e-15);
  cr_expect_float_eq(wsisa_sa_radical_inverse(5, 3), 7.0 / 9, 1e-15);
  cr_expect_float_eq(wsisa_sa_radical_inverse(11, 3), 19.0 / 27, 1e-15);
  /* base 5: 7 = 12_5 -> 0.21_5 = 11/25 */
  cr_expect_float_eq(wsisa_sa_radical_inverse(7, 5), 11.0 / 25, 1e-15);
  /* base 7, many digits: 123456 = 1022634_7 -> 0.4362201_7 */
  double want = (4.0 * 823543 + 3 * 117649 + 6 * 16807 + 2 * 2401 + 2 * 343 + 0 * 49 + 1 * 7) /
                (823543.0 * 7);
  cr_expect_float_eq(wsisa_sa_radical_inverse(123456, 7), want, 1e-15);
}

Test(sa_samplers, primes) {
  cr_expect_eq(wsisa_sa_prime(0), 2u);
  cr_expect_eq(wsisa_sa_prime(1), 3u);
  cr_expect_eq(wsisa_sa_prime(9), 29u);
  cr_expect_eq(wsisa_sa_prime(99), 541u);
}

Test(sa_samplers, halton_starts_at_index_1) {
  double u[5 * 3];
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_HALTON, 5, 3, 1, u, NULL), 0);
  const double want[5][3] = {{1.0 / 2, 1.0 / 3, 1.0 / 5},
                             {1.0 / 4, 2.0 / 3, 2.0 / 5},
                             {3.0 / 4, 1.0 / 9, 3.0 / 5},
                             {1.0 / 8, 4.0 / 9, 4.0 / 5},
                             {5.0 / 8, 7.0 / 9, 1.0 / 25}};
  for (int j = 0; j < 5; j++)
    for (int i = 0; i < 3; i++)
      cr_expect_float_eq(u[j * 3 + i], want[j][i], 1e-15, "point %d dim %d: %g", j, i,
                         u[j * 3 + i]);
}

Test(sa_samplers, hammersley_first_coordinate_is_stratum_centre) {
  double u[4 * 3];
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_HAMMERSLEY, 4, 3, 1, u, NULL), 0);
  const double want[4][3] = {{0.125, 1.0 / 2, 1.0 / 3},
                             {0.375, 1.0 / 4, 2.0 / 3},
                             {0.625, 3.0 / 4, 1.0 / 9},
                             {0.875, 1.0 / 8, 4.0 / 9}};
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 3; i++) cr_expect_float_eq(u[j * 3 + i], want[j][i], 1e-15);
}

/* Points 1..8 of the unscrambled Joe–Kuo Sobol' sequence in 30 dimensions, as
 * scipy.stats.qmc.Sobol(d=30, scramble=False) gives them (its point 0 is the
 * origin, which wsisa skips). */
static const double sobol_first[8][30] = {
    {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
     0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
    {0.75, 0.25, 0.25, 0.25, 0.75, 0.75, 0.25, 0.75, 0.75, 0.75, 0.75, 0.75, 0.25, 0.25, 0.75,
     0.25, 0.75, 0.25, 0.75, 0.25, 0.25, 0.75, 0.25, 0.25, 0.25, 0.75, 0.25, 0.75, 0.25, 0.75},
    {0.25, 0.75, 0.75, 0.75, 0.25, 0.25, 0.75, 0.25, 0.25, 0.25, 0.25, 0.25, 0.75, 0.75, 0.25,
     0.75, 0.25, 0.75, 0.25, 0.75, 0.75, 0.25, 0.75, 0.75, 0.75, 0.25, 0.75, 0.25, 0.75, 0.25},
    {0.375, 0.375, 0.625, 0.875, 0.375, 0.125, 0.375, 0.875, 0.875, 0.625,
     0.875, 0.375, 0.375, 0.625, 0.375, 0.875, 0.375, 0.875, 0.875, 0.125,
     0.125, 0.125, 0.375, 0.875, 0.875, 0.875, 0.375, 0.625, 0.125, 0.125},
    {0.875, 0.875, 0.125, 0.375, 0.875, 0.625, 0.875, 0.375, 0.375, 0.125,
     0.375, 0.875, 0.875, 0.125, 0.875, 0.375, 0.875, 0.375, 0.375, 0.625,
     0.625, 0.625, 0.875, 0.375, 0.375, 0.375, 0.875, 0.125, 0.625, 0.625},
    {0.625, 0.125, 0.875, 0.625, 0.625, 0.875, 0.125, 0.125, 0.125, 0.375,
     0.125, 0.625, 0.125, 0.875, 0.625, 0.625, 0.625, 0.625, 0.125, 0.375,
     0.375, 0.875, 0.125, 0.625, 0.625, 0.125, 0.125, 0.375, 0.375, 0.875},
    {0.125, 0.625, 0.375, 0.125, 0.125, 0.375, 0.625, 0.625, 0.625, 0.875,
     0.625, 0.125, 0.625, 0.375, 0.125, 0.125, 0.125, 0.125, 0.625, 0.875,
     0.875, 0.375, 0.625, 0.125, 0.125, 0.625, 0.625, 0.875, 0.875, 0.375},
    {0.1875, 0.3125, 0.9375, 0.4375, 0.5625, 0.3125, 0.4375, 0.9375, 0.9375, 0.3125,
     0.6875, 0.0625, 0.9375, 0.9375, 0.8125, 0.9375, 0.8125, 0.8125, 0.9375, 0.3125,
     0.1875, 0.6875, 0.1875, 0.9375, 0.4375, 0.0625, 0.5625, 0.1875, 0.6875, 0.9375},
};

Test(sa_samplers, sobol_first_points_match_published) {
  double u[8 * 30];
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_SOBOL, 8, 30, 1, u, NULL), 0);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 30; i++)
      cr_expect_eq(u[j * 30 + i], sobol_first[j][i], "point %d dim %d: %g, published %g", j + 1,
                   i + 1, u[j * 30 + i], sobol_first[j][i]);
}

Test(sa_samplers, sobol_deep_points_and_high_dimensions) {
  /* Points 1000 and 999999 (scipy's fast_forward) in dimensions 1, 2, 3, 10,
   * 30, 64, 256 and 1024: these use direction numbers from the recurrence, far
   * past the table's initial values. */
  const size_t dims[8] = {0, 1, 2, 9, 29, 63, 255, 1023};
  const double want[2][8] = {
      {0.2197265625, 0.0966796875, 0.5185546875, 0.0693359375, 0.3408203125, 0.4462890625,
       0.2490234375, 0.7138671875},
      {0.018662452697753906, 0.8978567123413086, 0.36705875396728516, 0.7934637069702148,
       0.35384464263916016, 0.2534341812133789, 0.8916997909545898, 0.025404930114746094}};
  const uint64_t index[2] = {1000, 999999};
  double *u = malloc(1024 * sizeof *u);
  cr_assert_not_null(u);
  for (int t = 0; t < 2; t++) {
    cr_assert_eq(wsisa_sa_sobol_points(index[t], 1, 1024, u, NULL), 0);
    for (int i = 0; i < 8; i++)
      cr_expect_eq(u[dims[i]], want[t][i], "point %llu dim %zu: %.17g, published %.17g",
                   (unsigned long long)index[t], dims[i] + 1, u[dims[i]], want[t][i]);
  }
  free(u);
}

Test(sa_samplers, sobol_start_anywhere_continues_the_sequence) {
  double all[20 * 5], tail[7 * 5];
  cr_assert_eq(wsisa_sa_sobol_points(0, 20, 5, all, NULL), 0);
  cr_assert_eq(wsisa_sa_sobol_points(13, 7, 5, tail, NULL), 0);
  cr_expect_arr_eq(tail, all + 13 * 5, sizeof tail);
  for (int i = 0; i < 5; i++) cr_expect_eq(all[i], 0.0, "index 0 is the origin");
}

Test(sa_samplers, sobol_refuses_too_many_dimensions) {
  double u[1];
  wsisa_err e = WSISA_ERR_INIT;
  size_t d = wsisa_sa_sobol_max_dims() + 1;
  cr_expect_eq(wsisa_sa_sobol_points(1, 0, d, u, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "covers 1024 dimensions"), "%s", e.msg);
}

Test(sa_samplers, lhs_hits_each_stratum_once) {
  const size_t n = 97, d = 6;
  double *u = malloc(n * d * sizeof *u);
  int *hits = calloc(n, sizeof *hits);
  cr_assert(u && hits);
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_LHS, n, d, 42, u, NULL), 0);
  for (size_t i = 0; i < d; i++) {
    memset(hits, 0, n * sizeof *hits);
    for (size_t j = 0; j < n; j++) {
      double x = u[j * d + i];
      cr_assert(x >= 0 && x < 1);
      hits[(size_t)(x * (double)n)]++;
    }
    for (size_t s = 0; s < n; s++) cr_expect_eq(hits[s], 1, "dim %zu stratum %zu hit %d times", i, s, hits[s]);
  }
  free(u);
  free(hits);
}

Test(sa_samplers, seeds_reproduce_and_differ) {
  const wsisa_sa_sampler random[2] = {WSISA_SA_MC, WSISA_SA_LHS};
  double a[64 * 3], b[64 * 3], c[64 * 3];
  for (int s = 0; s < 2; s++) {
    cr_assert_eq(wsisa_sa_unit_sample(random[s], 64, 3, 7, a, NULL), 0);
    cr_assert_eq(wsisa_sa_unit_sample(random[s], 64, 3, 7, b, NULL), 0);
    cr_assert_eq(wsisa_sa_unit_sample(random[s], 64, 3, 8, c, NULL), 0);
    cr_expect_arr_eq(a, b, sizeof a, "%s: same seed, same points", wsisa_sa_sampler_name(random[s]));
    cr_expect_neq(memcmp(a, c, sizeof a), 0, "%s: another seed, other points",
                  wsisa_sa_sampler_name(random[s]));
  }
}

Test(sa_samplers, monte_carlo_is_uniform) {
  const size_t n = 20000;
  double *u = malloc(n * sizeof *u);
  cr_assert_not_null(u);
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_MC, n, 1, 3, u, NULL), 0);
  double mean = 0;
  size_t below = 0;
  for (size_t j = 0; j < n; j++) {
    cr_assert(u[j] >= 0 && u[j] < 1);
    mean += u[j];
    below += u[j] < 0.25;
  }
  mean /= (double)n;
  /* Standard errors: sqrt(1/12/n) = 0.002 for the mean, sqrt(3/16/n) = 0.003 for
   * the quarter fraction; allow 4 of them. */
  cr_expect(fabs(mean - 0.5) < 0.008, "mean %g", mean);
  cr_expect(fabs((double)below / (double)n - 0.25) < 0.012, "quarter %zu", below);
}

Test(sa_samplers, names_round_trip) {
  for (int s = 0; s < WSISA_SA_NSAMPLERS; s++)
    cr_expect_eq(wsisa_sa_sampler_from_name(wsisa_sa_sampler_name((wsisa_sa_sampler)s)), s);
  cr_expect_eq(wsisa_sa_sampler_from_name("sobel"), -1);
}

/* Owen-scrambled Sobol' starts at index 0 (the skip rule): its first 2^m
 * points keep the net's balance, one point in each 2^-m slice of every
 * coordinate, and pairs of coordinates keep the (0, 2)-net of dimensions 1
 * and 2 (one point in each 2^-a x 2^-(m-a) box). The seed reproduces the
 * points and another seed changes them; none is the unscrambled point. */
Test(sa_samplers, sobol_owen_keeps_the_net_and_follows_the_seed) {
  enum { M = 8, N = 1 << M, D = 12 };
  static double u[N * D], v[N * D], w[N * D], plain[N * D];
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_SOBOL_OWEN, N, D, 7, u, NULL), 0);
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_SOBOL_OWEN, N, D, 7, v, NULL), 0);
  cr_assert_eq(wsisa_sa_unit_sample(WSISA_SA_SOBOL_OWEN, N, D, 8, w, NULL), 0);
  cr_assert_eq(wsisa_sa_sobol_points(0, N, D, plain, NULL), 0);
  cr_expect_arr_eq(u, v, sizeof u);
  size_t same = 0, same_plain = 0;
  for (size_t j = 0; j < N * D; j++) same += u[j] == w[j], same_plain += u[j] == plain[j];
  cr_expect_lt(same, N * D / 100, "%zu of %d coordinates unchanged by another seed", same, N * D);
  cr_expect_lt(same_plain, N * D / 100);
  for (size_t i = 0; i < D; i++) {
    unsigned char hit[N] = {0};
    for (size_t j = 0; j < N; j++) hit[(size_t)(u[j * D + i] * N)]++;
    for (size_t s = 0; s < N; s++) cr_expect_eq(hit[s], 1, "dimension %zu, slice %zu", i, s);
  }
  for (int a = 0; a <= M; a++) {
    unsigned char box[N] = {0};
    for (size_t j = 0; j < N; j++)
      box[((size_t)(u[j * D] * (1 << a)) << (M - a)) + (size_t)(u[j * D + 1] * (1 << (M - a)))]++;
    for (size_t s = 0; s < N; s++) cr_expect_eq(box[s], 1, "a %d, box %zu", a, s);
  }
}
