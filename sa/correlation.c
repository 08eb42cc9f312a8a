/* Importance measures by correlation (seed 000 §3; Saltelli et al. 2004, ch. 5):
 * Pearson, Spearman, partial (PCC) and partial rank (PRCC) coefficients. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"

double wsisa_sa_pearson(const double *a, const double *b, size_t n) {
  if (n < 2) return NAN;
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; i++) {
    ma += a[i];
    mb += b[i];
  }
  ma /= (double)n;
  mb /= (double)n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; i++) {
    double da = a[i] - ma, db = b[i] - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  if (saa <= 0 || sbb <= 0) return NAN;
  return sab / sqrt(saa * sbb);
}

/* A double as an unsigned key with the same order (IEEE 754: flip the sign
 * bit of positives, every bit of negatives); -0 and 0 get one key. */
static uint64_t order_key(double x) {
  if (x == 0) x = 0;
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* Stable LSD radix sort of idx by key, a byte at a time; passes where every
 * key shares the byte are skipped (discrete parameters share most). Ranking
 * 16 columns of 10^5 runs this way is several times faster than qsort. */
static void radix_sort(uint64_t *key, size_t *idx, uint64_t *key2, size_t *idx2, size_t n) {
  for (int shift = 0; shift < 64; shift += 8) {
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[((key[i] >> shift) & 0xff) + 1]++;
    int skip = 0;
    for (int b = 1; b <= 256 && !skip; b++) skip = count[b] == n;
    if (skip) continue;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (size_t i = 0; i < n; i++) {
      size_t at = count[(key[i] >> shift) & 0xff]++;
      key2[at] = key[i];
      idx2[at] = idx[i];
    }
    memcpy(key, key2, n * sizeof *key);
    memcpy(idx, idx2, n * sizeof *idx);
  }
}

int wsisa_sa_rank(const double *x, size_t n, size_t stride, double *ranks, wsisa_err *e) {
  uint64_t *key = wsisa__sa_calloc(2 * n, sizeof *key, e);
  size_t *idx = wsisa__sa_calloc(2 * n, sizeof *idx, e);
  if (!key || !idx) {
    free(key);
    free(idx);
    return WSISA_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    key[i] = order_key(x[i * stride]);
    idx[i] = i;
  }
  radix_sort(key, idx, key + n, idx + n, n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && key[j + 1] == key[i]) j++;
    /* Ties share the mean of the ranks they span: (i+1 + j+1) / 2. */
    double r = 0.5 * (double)(i + j) + 1;
    for (size_t t = i; t <= j; t++) ranks[idx[t]] = r;
    i = j + 1;
  }
  free(key);
  free(idx);
  return 0;
}

/* Invert the m x m matrix a in place (Gauss-Jordan, partial pivoting); 0 when
 * it is singular to working precision. */
static int invert(double *a, size_t m, double *inv) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) inv[i * m + j] = i == j;
  for (size_t c = 0; c < m; c++) {
    size_t piv = c;
    for (size_t r = c + 1; r < m; r++)
      if (fabs(a[r * m + c]) > fabs(a[piv * m + c])) piv = r;
    /* A correlation matrix has a unit diagonal: a pivot this small means
     * collinear inputs. */
    if (!(fabs(a[piv * m + c]) > 1e-10)) return 0;
    if (piv != c)
      for (size_t j = 0; j < m; j++) {
        double t = a[c * m + j];
        a[c * m + j] = a[piv * m + j];
        a[piv * m + j] = t;
        t = inv[c * m + j];
        inv[c * m + j] = inv[piv * m + j];
        inv[piv * m + j] = t;
      }
    double d = a[c * m + c];
    for (size_t j = 0; j < m; j++) {
      a[c * m + j] /= d;
      inv[c * m + j] /= d;
    }
    for (size_t r = 0; r < m; r++) {
      if (r == c) continue;
      double f = a[r * m + c];
      if (f == 0) continue;
      for (size_t j = 0; j < m; j++) {
        a[r * m + j] -= f * a[c * m + j];
        inv[r * m + j] -= f * inv[c * m + j];
      }
    }
  }
  return 1;
}

/* Pearson of every column of z (n x m, the last column the output) with the
 * output, and the partial correlations given the other columns. With R the
 * inputs' correlation matrix, r their correlations with y, beta = R^-1 r and
 * R^2 = r . beta, block inversion of the full matrix gives
 *   pcc_i = beta_i / sqrt((1 - R^2) (R^-1)_ii + beta_i^2),
 * which stays defined (+-1) when y is an exact linear function of the inputs,
 * where the full matrix is singular. The denominator over (R^-1)_ii is what
 * the other inputs leave of y's variance: when that is nothing (y an exact
 * linear function of the others, x_i without effect) the coefficient is 0/0,
 * and rounding would give it any sign: it is NaN, and why[i] says why. */
static int correlate(const double *z, size_t n, size_t m, double *pearson, double *partial,
                     const char **why, wsisa_err *e) {
  double *mean = wsisa__sa_calloc(m, sizeof *mean, e);
  double *cov = wsisa__sa_calloc(m * m, sizeof *cov, e);
  double *corr = wsisa__sa_calloc(m * m, sizeof *corr, e);
  double *inv = wsisa__sa_calloc(m * m, sizeof *inv, e);
  size_t *live = wsisa__sa_calloc(m, sizeof *live, e);
  if (!mean || !cov || !corr || !inv || !live) goto done;
  for (size_t r = 0; r < n; r++)
    for (size_t i = 0; i < m; i++) mean[i] += z[r * m + i];
  for (size_t i = 0; i < m; i++) mean[i] /= (double)n;
  for (size_t r = 0; r < n; r++) {
    const double *row = z + r * m;
    for (size_t i = 0; i < m; i++) {
      double di = row[i] - mean[i];
      for (size_t j = i; j < m; j++) cov[i * m + j] += di * (row[j] - mean[j]);
    }
  }
  size_t y = m - 1;
  for (size_t i = 0; i < y; i++) {
    pearson[i] = partial[i] = NAN;
    why[i] = !(cov[y * m + y] > 0) ? "the output is constant"
             : !(cov[i * m + i] > 0) ? "the input is constant"
                                     : NULL;
    if (cov[i * m + i] > 0 && cov[y * m + y] > 0)
      pearson[i] = cov[i * m + y] / sqrt(cov[i * m + i] * cov[y * m + y]);
  }
  /* A constant input carries no information: condition on the others only. */
  size_t nl = 0;
  for (size_t i = 0; i < y; i++)
    if (cov[i * m + i] > 0) live[nl++] = i;
  if (nl == 0 || !(cov[y * m + y] > 0)) goto done;
  for (size_t a = 0; a < nl; a++)
    for (size_t b = a; b < nl; b++) {
      size_t i = live[a], j = live[b];
      double v = a == b ? 1 : cov[i * m + j] / sqrt(cov[i * m + i] * cov[j * m + j]);
      corr[a * nl + b] = corr[b * nl + a] = v;
    }
  if (!invert(corr, nl, inv)) {
    for (size_t a = 0; a < nl; a++) why[live[a]] = "the inputs are collinear";
    goto done;
  }
  double *beta = corr; /* the inverted matrix's copy is spent: reuse it */
  double r2 = 0;
  for (size_t a = 0; a < nl; a++) {
    beta[a] = 0;
    for (size_t b = 0; b < nl; b++) beta[a] += inv[a * nl + b] * pearson[live[b]];
  }
  for (size_t a = 0; a < nl; a++) r2 += beta[a] * pearson[live[a]];
  double unexplained = fmax(0, 1 - r2);
  for (size_t a = 0; a < nl; a++) {
    double d = unexplained * inv[a * nl + a] + beta[a] * beta[a];
    /* 10^-10 of y's variance: rounding of an exact fit is ~10^-15 */
    if (d / inv[a * nl + a] > 1e-10)
      partial[live[a]] = beta[a] / sqrt(d);
    else
      why[live[a]] = "the output is an exact linear function of the other inputs (0/0)";
  }
done:;
  int rc = mean && cov && corr && inv && live ? 0 : WSISA_ENOMEM;
  free(mean);
  free(cov);
  free(corr);
  free(inv);
  free(live);
  return rc;
}

void wsisa_sa_corr_result_free(wsisa_sa_corr_result *r) {
  if (!r) return;
  free(r->pearson);
  free(r->spearman);
  free(r->pcc);
  free(r->prcc);
  free(r->pcc_why);
  free(r->prcc_why);
  memset(r, 0, sizeof *r);
}

int wsisa_sa_correlation(const double *x, size_t n, size_t k, const double *y,
                         wsisa_sa_corr_result *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  size_t m = k + 1, used = 0;
  for (size_t r = 0; r < n; r++) used += isfinite(y[r]) != 0;
  if (used < m + 1)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%zu complete runs are too few for partial correlations of %zu "
                       "parameters (at least %zu)",
                       used, k, m + 1);
  double *z = wsisa__sa_calloc(used * m, sizeof *z, e);
  double *ranked = wsisa__sa_calloc(used * m, sizeof *ranked, e);
  double *column = wsisa__sa_calloc(used, sizeof *column, e);
  out->k = k;
  out->n = used;
  out->pearson = wsisa__sa_calloc(k, sizeof(double), e);
  out->spearman = wsisa__sa_calloc(k, sizeof(double), e);
  out->pcc = wsisa__sa_calloc(k, sizeof(double), e);
  out->prcc = wsisa__sa_calloc(k, sizeof(double), e);
  out->pcc_why = wsisa__sa_calloc(k, sizeof(const char *), e);
  out->prcc_why = wsisa__sa_calloc(k, sizeof(const char *), e);
  int rc = z && ranked && column && out->pearson && out->spearman && out->pcc && out->prcc &&
                   out->pcc_why && out->prcc_why
               ? 0
               : WSISA_ENOMEM;
  if (!rc) {
    for (size_t r = 0, u = 0; r < n; r++) {
      if (!isfinite(y[r])) continue;
      memcpy(z + u * m, x + r * k, k * sizeof *z);
      z[u * m + k] = y[r];
      u++;
    }
    for (size_t i = 0; i < m && !rc; i++) {
      rc = wsisa_sa_rank(z + i, used, m, column, e);
      for (size_t r = 0; r < used; r++) ranked[r * m + i] = column[r];
    }
  }
  if (!rc) rc = correlate(z, used, m, out->pearson, out->pcc, out->pcc_why, e);
  if (!rc) rc = correlate(ranked, used, m, out->spearman, out->prcc, out->prcc_why, e);
  free(z);
  free(ranked);
  free(column);
  if (rc) wsisa_sa_corr_result_free(out);
  return rc;
}
