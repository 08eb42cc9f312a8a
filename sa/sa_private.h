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

/* Campolongo selection of r of m trajectories of `rows` rows of k. */
int wsisa__sa_morris_select(const double *pool, size_t m, size_t rows, size_t k, size_t r,
                            size_t *chosen, wsisa_err *e);
/* MOAT moves a group's parameters by one step: they must share their grid
 * (the same number of levels), or the group's step has no single size. */
int wsisa__sa_check_group_steps(const wsisa_sa_space *space, const wsisa_sa_opts *o,
                                wsisa_err *e);

#endif
