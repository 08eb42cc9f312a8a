/* Small helpers the sa files share: allocation, order statistics. */
#include <math.h>
#include <stdlib.h>

#include "sa/sa_private.h"

void *wsisa__sa_calloc(size_t n, size_t size, wsisa_err *e) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p)
    wsisa_error(e, WSISA_ENOMEM, "out of memory allocating %zu x %zu bytes", n, size);
  return p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  if (isnan(x)) return isnan(y) ? 0 : 1;
  if (isnan(y)) return -1;
  return (x > y) - (x < y);
}

void wsisa__sa_sort(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double wsisa__sa_quantile(const double *sorted, size_t n, double q) {
  if (n == 0) return NAN;
  double h = q * (double)(n - 1);
  size_t lo = (size_t)floor(h);
  if (lo >= n - 1) return sorted[n - 1];
  return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

double wsisa__sa_stdev(const double *x, size_t n) {
  if (n < 2) return NAN;
  double mean = 0, m2 = 0;
  /* Welford: stable when the values sit far from zero. */
  for (size_t i = 0; i < n; i++) {
    double d = x[i] - mean;
    mean += d / (double)(i + 1);
    m2 += d * (x[i] - mean);
  }
  return sqrt(m2 / (double)(n - 1));
}
