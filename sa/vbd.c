/* Variance-based decomposition (Sobol' indices; seed 000 §3): first order after
 * Saltelli et al. (2010), total after Jansen (1999), second order after Saltelli
 * (2002), with bootstrap intervals over base samples. Layout in sa.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"

enum { STREAM_BOOTSTRAP = 4 };

void wsisa_sa_vbd_result_free(wsisa_sa_vbd_result *r) {
  if (!r) return;
  double **arrays[] = {&r->s1, &r->s1_lo, &r->s1_hi, &r->s1_se, &r->st, &r->st_lo,
                       &r->st_hi, &r->st_se, &r->s2, &r->s2_lo, &r->s2_hi, &r->s2_se};
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(*arrays[i]);
  memset(r, 0, sizeof *r);
}

typedef struct layout {
  const double *y;
  size_t k, group;
  int second_order;
  double centre;  /* subtracted from every output */
} layout;

/* Indices from the groups idx[0..n-1] (repeats allowed: the bootstrap). s2 is
 * k x k (upper triangle) or NULL; acc is scratch of 2k + k^2 doubles. */
static double estimate(const layout *l, const size_t *idx, size_t n, double *s1, double *st,
                       double *s2, double *acc) {
  size_t k = l->k;
  double *a1 = acc, *at = acc + k, *a2 = acc + 2 * k;
  memset(acc, 0, (2 * k + (s2 ? k * k : 0)) * sizeof *acc);
  double sum = 0, sumsq = 0;
  for (size_t j = 0; j < n; j++) {
    const double *g = l->y + idx[j] * l->group;
    double fa = g[0] - l->centre, fb = g[l->group - 1] - l->centre;
    sum += fa + fb;
    sumsq += fa * fa + fb * fb;
    for (size_t i = 0; i < k; i++) {
      double fab = g[1 + i] - l->centre;
      a1[i] += fb * (fab - fa);
      at[i] += (fa - fab) * (fa - fab);
    }
    if (s2)
      for (size_t i = 0; i < k; i++) {
        double fba = g[1 + k + i] - l->centre;
        for (size_t m = i + 1; m < k; m++) a2[i * k + m] += fba * (g[1 + m] - l->centre) - fa * fb;
      }
  }
  double mean = sum / (double)(2 * n);
  double var = sumsq / (double)(2 * n) - mean * mean;
  for (size_t i = 0; i < k; i++) {
    s1[i] = a1[i] / (double)n / var;
    st[i] = at[i] / (2.0 * (double)n) / var;
  }
  if (s2)
    for (size_t i = 0; i < k; i++)
      for (size_t m = i + 1; m < k; m++)
        s2[i * k + m] = a2[i * k + m] / (double)n / var - s1[i] - s1[m];
  return var;
}

/* Percentile interval and standard error of `count` bootstrap values per index,
 * stored index-major in boot (count values each). */
static void intervals(double *boot, size_t count, size_t nidx, double confidence, double *lo,
                      double *hi, double *se) {
  for (size_t i = 0; i < nidx; i++) {
    double *b = boot + i * count;
    se[i] = wsisa__sa_stdev(b, count);
    wsisa__sa_sort(b, count);
    lo[i] = wsisa__sa_quantile(b, count, 0.5 * (1 - confidence));
    hi[i] = wsisa__sa_quantile(b, count, 0.5 * (1 + confidence));
  }
}

int wsisa_sa_vbd_analyze(const double *y, size_t n, size_t k, int second_order,
                         const wsisa_sa_vbd_opts *o, wsisa_sa_vbd_result *out, size_t *dropped,
                         wsisa_err *e) {
  memset(out, 0, sizeof *out);
  if (dropped) *dropped = 0;
  layout l = {y, k, second_order ? 2 * k + 2 : k + 2, second_order, 0};
  size_t *idx = wsisa__sa_calloc(n, sizeof *idx, e);
  if (!idx) return WSISA_ENOMEM;
  size_t used = 0, missing = 0;
  for (size_t j = 0; j < n; j++) {
    int ok = 1;
    for (size_t r = 0; r < l.group && ok; r++) ok = isfinite(y[j * l.group + r]);
    if (ok)
      idx[used++] = j;
    else
      missing++;
  }
  double *acc = NULL, *boot = NULL, *rs1 = NULL, *rst = NULL, *rs2 = NULL;
  size_t *draw = NULL;
  int rc = 0;
  if (missing && !o->drop_missing) {
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%zu of %zu base samples have a missing output; VBD needs every run "
                     "unless told to drop them",
                     missing, n);
    goto fail;
  }
  if (used < 2) {
    rc = wsisa_error(e, WSISA_EUSAGE, "VBD needs at least 2 complete base samples, not %zu",
                     used);
    goto fail;
  }
  if (dropped) *dropped = missing;
  /* Centring on the mean of f(A) and f(B) leaves every estimator's expectation
   * unchanged and keeps a large output offset from inflating its variance. */
  double centre = 0;
  for (size_t j = 0; j < used; j++)
    centre += y[idx[j] * l.group] + y[idx[j] * l.group + l.group - 1];
  l.centre = centre / (double)(2 * used);

  size_t nb = o->bootstrap, k2 = second_order ? k * k : 0;
  out->k = k;
  out->n = used;
  double **arrays[] = {&out->s1, &out->s1_lo, &out->s1_hi, &out->s1_se,
                       &out->st, &out->st_lo, &out->st_hi, &out->st_se};
  for (size_t i = 0; i < 8; i++)
    if (!(*arrays[i] = wsisa__sa_calloc(k, sizeof(double), e))) rc = WSISA_ENOMEM;
  double **arrays2[] = {&out->s2, &out->s2_lo, &out->s2_hi, &out->s2_se};
  for (size_t i = 0; second_order && i < 4; i++)
    if (!(*arrays2[i] = wsisa__sa_calloc(k2, sizeof(double), e))) rc = WSISA_ENOMEM;
  acc = wsisa__sa_calloc(2 * k + k * k, sizeof *acc, e);
  boot = wsisa__sa_calloc((nb ? nb : 1) * (2 * k + k2), sizeof *boot, e);
  rs1 = wsisa__sa_calloc(k, sizeof *rs1, e);
  rst = wsisa__sa_calloc(k, sizeof *rst, e);
  rs2 = wsisa__sa_calloc(k2 ? k2 : 1, sizeof *rs2, e);
  draw = wsisa__sa_calloc(used, sizeof *draw, e);
  if (rc || !acc || !boot || !rs1 || !rst || !rs2 || !draw) {
    rc = WSISA_ENOMEM;
    goto fail;
  }
  out->variance = estimate(&l, idx, used, out->s1, out->st, out->s2, acc);

  if (nb == 0) {
    for (size_t i = 0; i < 8; i++)
      if (i % 4)
        for (size_t c = 0; c < k; c++) (*arrays[i])[c] = NAN;
    for (size_t i = 1; second_order && i < 4; i++)
      for (size_t c = 0; c < k2; c++) (*arrays2[i])[c] = NAN;
  } else {
    /* Resample whole groups: A_j, B_j and AB_j share the base sample j. */
    wsisa_sa_rng rng;
    wsisa_sa_rng_seed(&rng, o->seed, STREAM_BOOTSTRAP);
    for (size_t b = 0; b < nb; b++) {
      for (size_t j = 0; j < used; j++) draw[j] = idx[wsisa_sa_rng_below(&rng, used)];
      estimate(&l, draw, used, rs1, rst, second_order ? rs2 : NULL, acc);
      for (size_t i = 0; i < k; i++) {
        boot[i * nb + b] = rs1[i];
        boot[(k + i) * nb + b] = rst[i];
      }
      for (size_t c = 0; c < k2; c++) boot[(2 * k + c) * nb + b] = rs2[c];
    }
    intervals(boot, nb, k, o->confidence, out->s1_lo, out->s1_hi, out->s1_se);
    intervals(boot + k * nb, nb, k, o->confidence, out->st_lo, out->st_hi, out->st_se);
    if (second_order)
      intervals(boot + 2 * k * nb, nb, k2, o->confidence, out->s2_lo, out->s2_hi, out->s2_se);
  }
  /* Only the upper triangle is an index; keep the rest visibly undefined. */
  for (size_t i = 0; second_order && i < k; i++)
    for (size_t m = 0; m <= i; m++)
      for (size_t a = 0; a < 4; a++) (*arrays2[a])[i * k + m] = NAN;
  goto done;
fail:
  wsisa_sa_vbd_result_free(out);
done:
  free(idx);
  free(acc);
  free(boot);
  free(rs1);
  free(rst);
  free(rs2);
  free(draw);
  return rc;
}
