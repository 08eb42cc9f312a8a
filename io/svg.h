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
 * dashed line y = x marks sigma = mu* in a Morris plot. Labels are placed as
 * wsisa_svg_scatter_layout says. */
int wsisa_svg_scatter(const char *path, const char *title, const char *xlabel,
                      const char *ylabel, size_t n, const char *const *labels, const double *x,
                      const double *y, wsisa_err *e);

/* One label of a scatter: the names of the points within a few pixels of
 * each other, wrapped into lines, in a box (pixels, y down) that overlaps no
 * other label and no dot. A label not next to its dot gets a leader line from
 * the box's nearest edge to the dot. */
typedef struct wsisa_svg_label {
  double x, y, w, h;       /* the box: top-left corner, width, height */
  double dot_x, dot_y;     /* the dot it names (its group's first point) */
  int leader;              /* 1: drawn with a line from (line_x, line_y) to the dot */
  double line_x, line_y;   /* where the leader leaves the box */
  size_t nlines;
  char **line;             /* nlines lines of text, "B, G, R" */
} wsisa_svg_label;

typedef struct wsisa_svg_layout {
  size_t n;                /* points */
  double *dot_x, *dot_y;   /* each point's centre in pixels; NaN when left out */
  size_t *label_of;        /* the label naming point i; SIZE_MAX when left out */
  size_t nlabels;
  wsisa_svg_label *label;
} wsisa_svg_layout;

/* The scatter's dots and labels as wsisa_svg_scatter draws them: each point
 * named in exactly one label. Free with wsisa_svg_layout_free. */
int wsisa_svg_scatter_layout(size_t n, const char *const *labels, const double *x,
                             const double *y, wsisa_svg_layout *out, wsisa_err *e);
void wsisa_svg_layout_free(wsisa_svg_layout *layout);

/* A map of a cols x rows tile grid: cell (c, r) coloured by values[r * cols
 * + c] on a light-to-dark ramp from the lowest value to the highest (NaN:
 * grey, "not segmented"), a legend in `unit` beside it; each cell says its
 * tile and value when pointed at. */
int wsisa_svg_grid_map(const char *path, const char *title, const char *unit, int cols,
                       int rows, const double *values, wsisa_err *e);

#endif
