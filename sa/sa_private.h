/* sa internals shared between its files. */
#ifndef WSISA_SA_PRIVATE_H
#define WSISA_SA_PRIVATE_H

#include "sa/sa.h"

/* calloc that fails with a message instead of returning NULL silently. */
void *wsisa__sa_calloc(size_t n, size_t size, wsisa_err *e);

/* Percentile (linear interpolation between order statistics) of sorted data. */
double wsisa__sa_quantile(const double *sorted, size_t n, double q);
/* Sort doubles ascending (NaN last). */
void wsisa__sa_sort(double *x, size_t n);
/* Sample standard deviation (n - 1 denominator) of x. */
double wsisa__sa_stdev(const double *x, size_t n);

#endif
