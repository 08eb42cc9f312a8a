/* SVG scatter labels: every point named once, labels clear of each other and
 * of every dot, leader lines to the labels set away from their dots. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/svg.h"
#include "tests/testutil.h"

/* Times name appears as a whole entry of a comma-separated label line. */
static int count_in_line(const char *line, const char *name) {
  int count = 0;
  size_t len = strlen(name);
  for (const char *p = line; p;) {
    const char *end = strstr(p, ", ");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    count += n == len && !strncmp(p, name, len);
    p = end ? end + 2 : NULL;
  }
  return count;
}

/* Checks the layout of n points: names once, no overlap, leaders. */
static void check_layout(size_t n, const char *const *names, const double *x,
                         const double *y) {
  wsisa_svg_layout l;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_svg_scatter_layout(n, names, x, y, &l, &e), 0, "%s", e.msg);
  for (size_t i = 0; i < n; i++) {
    int named = 0;
    for (size_t g = 0; g < l.nlabels; g++)
      for (size_t t = 0; t < l.label[g].nlines; t++) named += count_in_line(l.label[g].line[t], names[i]);
    if (!isfinite(x[i]) || !isfinite(y[i])) {
      cr_expect_eq(l.label_of[i], SIZE_MAX);
      cr_expect_eq(named, 0, "%s is left out", names[i]);
      continue;
    }
    cr_expect_eq(named, 1, "%s is named %d times", names[i], named);
    cr_expect_lt(l.label_of[i], l.nlabels);
  }
  for (size_t g = 0; g < l.nlabels; g++) {
    const wsisa_svg_label *a = &l.label[g];
    cr_expect(a->x >= 0 && a->y >= 0 && a->x + a->w <= 760 && a->y + a->h <= 440,
              "label %zu (%s) leaves the picture", g, a->line[0]);
    for (size_t h = g + 1; h < l.nlabels; h++) {
      const wsisa_svg_label *b = &l.label[h];
      cr_expect(!(a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h &&
                  b->y < a->y + a->h),
                "labels \"%s\" and \"%s\" overlap", a->line[0], b->line[0]);
    }
    for (size_t i = 0; i < n; i++) {
      if (isnan(l.dot_x[i])) continue;
      double dx = l.dot_x[i], dy = l.dot_y[i];
      cr_expect(!(a->x < dx + 4 && dx - 4 < a->x + a->w && a->y < dy + 4 && dy - 4 < a->y + a->h),
                "label \"%s\" covers the dot of %s", a->line[0], names[i]);
    }
    double nx = fmin(fmax(a->dot_x, a->x), a->x + a->w);
    double ny = fmin(fmax(a->dot_y, a->y), a->y + a->h);
    double gap = hypot(nx - a->dot_x, ny - a->dot_y);
    if (a->leader)
      cr_expect(fabs(a->line_x - nx) < 1e-9 && fabs(a->line_y - ny) < 1e-9,
                "the leader of \"%s\" leaves the box where it is nearest the dot", a->line[0]);
    else
      cr_expect_leq(gap, 8.0, "label \"%s\" is %.1f px from its dot without a leader line",
                    a->line[0], gap);
  }
  wsisa_svg_layout_free(&l);
}

/* A screening plot: most parameters piled at 0, a chain of points 5 px apart
 * (0, 0.003 and 0.006 on a 0..0.4 axis: the middle one is near both ends),
 * a few important ones apart. */
static const char *const demo_names[] = {
    "B", "max_size_seg", "fill_holes_conn", "T2", "G", "R", "T1", "G1", "G2",
    "min_size", "max_size", "min_size_pl", "min_size_seg", "recon_conn", "watershed_conn",
    "min_dist", "opening_size"};
static const double demo_mu[] = {0.0, 0.006, 0.003, 0.0062, 0.001, 0.0, 0.002, 0.38,
                                  0.21, 0.012, 0.0,   0.004, 0.02, 0.0, 0.001, 0.15, 0.0005};
static const double demo_sigma[] = {0.0, 0.0, 0.0, 0.001, 0.002, 0.0, 0.001, 0.30,
                                    0.26, 0.01, 0.003, 0.0, 0.015, 0.0, 0.002, 0.05, 0.0};
#define NDEMO (sizeof demo_names / sizeof *demo_names)

Test(io_svg, scatter_names_each_point_once_clear_of_labels_and_dots) {
  check_layout(NDEMO, demo_names, demo_mu, demo_sigma);
}

Test(io_svg, scatter_crowded_and_missing_points) {
  enum { N = 40 };
  static char name[N][16];
  const char *names[N];
  double x[N], y[N];
  uint64_t s = 12345;
  for (size_t i = 0; i < N; i++) {
    snprintf(name[i], sizeof name[i], "param_%zu", i);
    names[i] = name[i];
    s = s * 6364136223846793005u + 1442695040888963407u;
    double u = (double)(s >> 11) / 9007199254740992.0;
    s = s * 6364136223846793005u + 1442695040888963407u;
    double v = (double)(s >> 11) / 9007199254740992.0;
    /* Two in three near the origin, the rest across the plot. */
    double spread = i % 3 ? 0.03 : 1.0;
    x[i] = u * spread, y[i] = v * spread * 0.8;
  }
  x[7] = NAN;
  y[11] = INFINITY;
  check_layout(N, names, x, y);
}

Test(io_svg, scatter_file_names_each_point_once_with_leaders) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/moat.svg", tu_tmpdir("svg"));
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_svg_scatter(path, "MOAT: dice", "mu*", "sigma", NDEMO, demo_names, demo_mu,
                                 demo_sigma, &e),
               0, "%s", e.msg);
  char *svg = tu_slurp(path, NULL);
  cr_assert_not_null(svg);
  /* Every name once among the texts of the file. */
  for (size_t i = 0; i < NDEMO; i++) {
    int named = 0;
    for (const char *p = strstr(svg, "<text"); p; p = strstr(p + 1, "<text")) {
      const char *open = strchr(p, '>'), *close = strstr(p, "</text>");
      cr_assert(open && close && open < close);
      char line[512];
      snprintf(line, sizeof line, "%.*s", (int)(close - open - 1), open + 1);
      named += count_in_line(line, demo_names[i]);
    }
    cr_expect_eq(named, 1, "%s is written %d times", demo_names[i], named);
  }
  /* The file draws the layout's leader lines, one per label set away. */
  wsisa_svg_layout l;
  cr_assert_eq(wsisa_svg_scatter_layout(NDEMO, demo_names, demo_mu, demo_sigma, &l, &e), 0);
  size_t leaders = 0, drawn = 0;
  for (size_t g = 0; g < l.nlabels; g++) leaders += (size_t)l.label[g].leader;
  for (const char *p = strstr(svg, "class=\"leader\""); p; p = strstr(p + 1, "class=\"leader\""))
    drawn++;
  cr_expect_eq(drawn, leaders);
  cr_expect_gt(leaders, 0, "the pile at 0 leaves some labels away from their dots");
  wsisa_svg_layout_free(&l);
  free(svg);
}
