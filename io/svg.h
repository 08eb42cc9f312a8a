/* SVG plots of sensitivity indices: grouped bars with interval whiskers, and
 * the Morris mu*-sigma scatter with labelled points. Plain SVG 1.1, no scripts. */
#ifndef WSISA_IO_SVG_H
#define WSISA_IO_SVG_H

#include <stddef.h>

#include "core/core.h"

typedef struct wsisa_svg_series {
  const char *name;     /* legend entry */
  const double *value;  /* one per label; NaN draws no bar */
  const double *lo, *hi; /* whisker ends, or NULL; NaN draws no whisker */
} wsisa_svg_series;

/* One group of bars per label, one bar per series. */
int wsisa_svg_bars(const char *path, const char *title, const char *ylabel, size_t nlabels,
                   const char *const *labels, size_t nseries, const wsisa_svg_series *series,
                   wsisa_err *e);

/* Points (x[i], y[i]) labelled with labels[i]; NaN points are left out. The
 * dashed line y = x marks sigma = mu* in a Morris plot. */
int wsisa_svg_scatter(const char *path, const char *title, const char *xlabel,
                      const char *ylabel, size_t n, const char *const *labels, const double *x,
                      const double *y, wsisa_err *e);

#endif
