/* SVG writers: axes with round-number ticks, grouped bars with whiskers, and a
 * labelled scatter. Coordinates are computed here; no external library. */
#include "io/svg.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"

#define WIDTH 760.0
#define HEIGHT 440.0
#define LEFT 70.0
#define RIGHT 20.0
#define TOP 52.0
#define BOTTOM 90.0

static const char *const palette[] = {"#3b6ea8", "#d9822b", "#5a9e4b", "#a84b6e", "#7a6bb0"};
#define NPALETTE (sizeof palette / sizeof *palette)

static void escaped(FILE *f, const char *s) {
  for (; *s; s++) switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
}

static void text(FILE *f, double x, double y, const char *anchor, const char *extra,
                 const char *s) {
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y, anchor, extra);
  escaped(f, s);
  fputs("</text>\n", f);
}

/* A tick step of 1, 2 or 5 x 10^k giving about `want` ticks over span. */
static double tick_step(double span, int want) {
  double raw = span / want, mag = pow(10, floor(log10(raw)));
  double n = raw / mag;
  return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
}

typedef struct axis {
  double lo, hi;         /* data range */
  double pix_lo, pix_hi; /* where lo and hi land */
} axis;

static double place(const axis *a, double v) {
  return a->pix_lo + (v - a->lo) / (a->hi - a->lo) * (a->pix_hi - a->pix_lo);
}

/* Widen [lo, hi] to round ticks; a flat range gets a unit span. */
static void nice_range(double *lo, double *hi) {
  if (!(*hi > *lo)) {
    *lo -= 0.5;
    *hi += 0.5;
  }
  double step = tick_step(*hi - *lo, 6);
  *lo = floor(*lo / step + 1e-9) * step;
  *hi = ceil(*hi / step - 1e-9) * step;
}

static void y_ticks(FILE *f, const axis *a, double x0, double x1) {
  double step = tick_step(a->hi - a->lo, 6);
  for (double v = a->lo; v <= a->hi + step * 1e-6; v += step) {
    double y = place(a, v);
    char label[32];
    snprintf(label, sizeof label, "%g", fabs(v) < step * 1e-9 ? 0 : v);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0,
            y, x1, y);
    text(f, x0 - 6, y + 4, "end", "", label);
  }
}

static FILE *begin(const char *path, const char *title, wsisa_err *e) {
  FILE *f = fopen(path, "w");
  if (!f) {
    char name[WSISA_PATH_MAX];
    wsisa_output_name(path, name, sizeof name);
    wsisa_error(e, WSISA_EIO, "%s: %s", name, strerror(errno));
    return NULL;
  }
  errno = 0; /* a failing write leaves its reason here (wsisa_output_close) */
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          WIDTH, HEIGHT, WIDTH, HEIGHT);
  text(f, WIDTH / 2, 20, "middle", " font-size=\"15\"", title);
  return f;
}

static int finish(FILE *f, const char *path, wsisa_err *e) {
  fputs("</svg>\n", f);
  return wsisa_output_close(f, path, e);
}

int wsisa_svg_bars(const char *path, const char *title, const char *ylabel, size_t nlabels,
                   const char *const *labels, size_t nseries, const wsisa_svg_series *series,
                   wsisa_err *e) {
  double lo = 0, hi = 0;
  for (size_t s = 0; s < nseries; s++)
    for (size_t i = 0; i < nlabels; i++) {
      const double v[3] = {series[s].value[i], series[s].lo ? series[s].lo[i] : NAN,
                           series[s].hi ? series[s].hi[i] : NAN};
      for (int j = 0; j < 3; j++)
        if (isfinite(v[j])) {
          lo = fmin(lo, v[j]);
          hi = fmax(hi, v[j]);
        }
    }
  nice_range(&lo, &hi);
  axis ya = {lo, hi, HEIGHT - BOTTOM, TOP};
  FILE *f = begin(path, title, e);
  if (!f) return WSISA_EIO;
  double x0 = LEFT, x1 = WIDTH - RIGHT;
  y_ticks(f, &ya, x0, x1);
  fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">",
          (TOP + HEIGHT - BOTTOM) / 2);
  escaped(f, ylabel);
  fputs("</text>\n", f);
  double group = (x1 - x0) / (double)(nlabels ? nlabels : 1);
  double bar = group * 0.8 / (double)(nseries ? nseries : 1);
  double zero = place(&ya, 0);
  for (size_t i = 0; i < nlabels; i++) {
    double gx = x0 + group * (double)i + group * 0.1;
    for (size_t s = 0; s < nseries; s++) {
      double v = series[s].value[i], bx = gx + bar * (double)s;
      const char *colour = palette[s % NPALETTE];
      if (isfinite(v)) {
        double y = place(&ya, v);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                "<title>",
                bx, fmin(y, zero), bar * 0.9, fabs(zero - y), colour);
        escaped(f, labels[i]);
        fprintf(f, " %s = %.4g</title></rect>\n", series[s].name, v);
      }
      double wl = series[s].lo ? series[s].lo[i] : NAN, wh = series[s].hi ? series[s].hi[i] : NAN;
      if (isfinite(wl) && isfinite(wh)) {
        double cx = bx + bar * 0.45, yl = place(&ya, wl), yh = place(&ya, wh);
        fprintf(f,
                "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh%.1fM%.1f %.1fh%.1f\" stroke=\"#222\" "
                "fill=\"none\"/>\n",
                cx, yl, yh, cx - 4, yl, 8.0, cx - 4, yh, 8.0);
      }
    }
    double lx = x0 + group * ((double)i + 0.5), ly = HEIGHT - BOTTOM + 14;
    char extra[96];
    snprintf(extra, sizeof extra, " transform=\"rotate(-35 %.1f %.1f)\"", lx, ly);
    text(f, lx, ly, "end", extra, labels[i]);
  }
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\"/>\n", x0,
          zero, x1, zero);
  /* The legend is one row between the title and the plot, so no bar hides it. */
  for (size_t s = 0; s < nseries; s++) {
    double lx = x1 - 130 * (double)(nseries - s), ly = TOP - 20;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx, ly,
            palette[s % NPALETTE]);
    text(f, lx + 18, ly + 10, "start", "", series[s].name);
  }
  return finish(f, path, e);
}

/* The scatter's axes: both ranges start at 0 or below and end on round ticks. */
static void scatter_axes(size_t n, const double *x, const double *y, axis *xa, axis *ya) {
  double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i]) && isfinite(y[i])) {
      xlo = fmin(xlo, x[i]);
      xhi = fmax(xhi, x[i]);
      ylo = fmin(ylo, y[i]);
      yhi = fmax(yhi, y[i]);
    }
  nice_range(&xlo, &xhi);
  nice_range(&ylo, &yhi);
  *xa = (axis){xlo, xhi, LEFT, WIDTH - RIGHT};
  *ya = (axis){ylo, yhi, HEIGHT - BOTTOM, TOP};
}

#define DOT_R 4.0       /* a dot's radius */
#define SHARE 6.0       /* points closer than this (both ways) share a label */
#define LINE_H 14.0     /* a text line's height */
#define WRAP 40         /* characters a label line holds before it wraps */
#define NEXT_TO 8.0     /* a box this close to its dot needs no leader line */

/* A text's width at font-size 12 in a common sans-serif, per character class,
 * rounded up so a box holds its text. */
static double text_width(const char *s) {
  double w = 0;
  for (; *s; s++)
    w += strchr("il.,:;'|!j", *s)          ? 3.5
         : *s == ' '                       ? 3.8
         : strchr("ftrI", *s)              ? 5.0
         : strchr("mwMW", *s)              ? 11.5
         : (*s >= 'A' && *s <= 'Z')        ? 8.8
         : (*s >= '0' && *s <= '9')        ? 7.7
                                           : 7.4;
  return w;
}

static int boxes_overlap(double ax, double ay, double aw, double ah, double bx, double by,
                         double bw, double bh) {
  return ax < bx + bw && bx < ax + aw && ay < by + bh && by < ay + ah;
}

/* Distance from (px, py) to the box, and the box's nearest point. */
static double box_distance(double bx, double by, double bw, double bh, double px, double py,
                           double *nx, double *ny) {
  *nx = fmin(fmax(px, bx), bx + bw);
  *ny = fmin(fmax(py, by), by + bh);
  return hypot(*nx - px, *ny - py);
}

/* A box at (bx, by) fits when it lies inside the plot and overlaps no dot and
 * no label placed before it. */
static int box_fits(const wsisa_svg_layout *l, size_t placed, const size_t *order, double bx,
                    double by, double w, double h) {
  if (bx < LEFT + 2 || by < TOP + 2 || bx + w > WIDTH - RIGHT - 2 || by + h > HEIGHT - BOTTOM - 2)
    return 0;
  for (size_t i = 0; i < l->n; i++)
    if (!isnan(l->dot_x[i]) && boxes_overlap(bx, by, w, h, l->dot_x[i] - DOT_R - 1,
                                             l->dot_y[i] - DOT_R - 1, 2 * DOT_R + 2,
                                             2 * DOT_R + 2))
      return 0;
  for (size_t p = 0; p < placed; p++) {
    const wsisa_svg_label *o = &l->label[order[p]];
    if (boxes_overlap(bx, by, w, h, o->x - 1, o->y - 1, o->w + 2, o->h + 2)) return 0;
  }
  return 1;
}

/* Places label `which`: first beside its dot (right, left, above, below, at
 * the corners), else the nearest free spot of the plot on a 4-px grid, joined
 * to the dot by a leader line. A plot with no free spot left keeps the label
 * beside its dot. */
static void place_label(wsisa_svg_layout *l, size_t placed, const size_t *order) {
  wsisa_svg_label *b = &l->label[order[placed]];
  double px = b->dot_x, py = b->dot_y, w = b->w, h = b->h, gap = DOT_R + 3;
  const double beside[][2] = {{px + gap, py - h / 2},     {px - gap - w, py - h / 2},
                              {px + 2, py - gap - h},      {px + 2, py + gap},
                              {px - 2 - w, py - gap - h},  {px - 2 - w, py + gap},
                              {px - w / 2, py - gap - h},  {px - w / 2, py + gap}};
  for (size_t c = 0; c < sizeof beside / sizeof *beside; c++)
    if (box_fits(l, placed, order, beside[c][0], beside[c][1], w, h)) {
      b->x = beside[c][0], b->y = beside[c][1];
      return;
    }
  double best = INFINITY, nx, ny;
  for (double by = TOP + 2; by + h <= HEIGHT - BOTTOM - 2; by += 4)
    for (double bx = LEFT + 2; bx + w <= WIDTH - RIGHT - 2; bx += 4) {
      double d = box_distance(bx, by, w, h, px, py, &nx, &ny);
      if (d < best && box_fits(l, placed, order, bx, by, w, h)) {
        best = d;
        b->x = bx, b->y = by;
      }
    }
  if (isinf(best)) {
    b->x = fmin(fmax(beside[0][0], LEFT + 2), WIDTH - RIGHT - 2 - w);
    b->y = fmin(fmax(beside[0][1], TOP + 2), HEIGHT - BOTTOM - 2 - h);
  }
  if (box_distance(b->x, b->y, w, h, px, py, &nx, &ny) > NEXT_TO) {
    b->leader = 1;
    b->line_x = nx, b->line_y = ny;
  }
}

void wsisa_svg_layout_free(wsisa_svg_layout *layout) {
  if (!layout) return;
  for (size_t g = 0; layout->label && g < layout->nlabels; g++) {
    for (size_t t = 0; t < layout->label[g].nlines; t++) free(layout->label[g].line[t]);
    free(layout->label[g].line);
  }
  free(layout->label);
  free(layout->dot_x);
  free(layout->dot_y);
  free(layout->label_of);
  memset(layout, 0, sizeof *layout);
}

/* Appends name to label b, starting a new line when the last one is full. */
static int label_add(wsisa_svg_label *b, const char *name) {
  size_t len = b->nlines ? strlen(b->line[b->nlines - 1]) : 0;
  if (!b->nlines || len + strlen(name) + 2 > WRAP) {
    char **line = realloc(b->line, (b->nlines + 1) * sizeof *line);
    if (!line) return -1;
    b->line = line;
    if (!(line[b->nlines] = strdup(name))) return -1;
    b->nlines++;
    return 0;
  }
  char *grown = realloc(b->line[b->nlines - 1], len + strlen(name) + 3);
  if (!grown) return -1;
  snprintf(grown + len, strlen(name) + 3, ", %s", name);
  b->line[b->nlines - 1] = grown;
  return 0;
}

int wsisa_svg_scatter_layout(size_t n, const char *const *labels, const double *x,
                             const double *y, wsisa_svg_layout *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  axis xa, ya;
  scatter_axes(n, x, y, &xa, &ya);
  size_t *order = NULL;
  out->n = n;
  out->dot_x = malloc((n ? n : 1) * sizeof *out->dot_x);
  out->dot_y = malloc((n ? n : 1) * sizeof *out->dot_y);
  out->label_of = malloc((n ? n : 1) * sizeof *out->label_of);
  out->label = calloc(n ? n : 1, sizeof *out->label);
  order = malloc((n ? n : 1) * sizeof *order);
  if (!out->dot_x || !out->dot_y || !out->label_of || !out->label || !order) goto nomem;
  /* Points closer than a few pixels share one label, "B, G, R", wrapped:
   * screening plots pile the unimportant parameters at 0. A point joins the
   * first label whose dot is that close, so each is named once. */
  for (size_t i = 0; i < n; i++) {
    out->label_of[i] = SIZE_MAX;
    out->dot_x[i] = out->dot_y[i] = NAN;
    if (!isfinite(x[i]) || !isfinite(y[i])) continue;
    double px = place(&xa, x[i]), py = place(&ya, y[i]);
    out->dot_x[i] = px, out->dot_y[i] = py;
    size_t g = 0;
    while (g < out->nlabels &&
           !(fabs(out->label[g].dot_x - px) < SHARE && fabs(out->label[g].dot_y - py) < SHARE))
      g++;
    if (g == out->nlabels) {
      out->label[g].dot_x = px, out->label[g].dot_y = py;
      out->nlabels++;
    }
    out->label_of[i] = g;
    if (label_add(&out->label[g], labels[i])) goto nomem;
  }
  for (size_t g = 0; g < out->nlabels; g++) {
    wsisa_svg_label *b = &out->label[g];
    double widest = 0;
    for (size_t t = 0; t < b->nlines; t++) widest = fmax(widest, text_width(b->line[t]));
    b->w = ceil(widest) + 2;
    b->h = LINE_H * (double)b->nlines;
    order[g] = g;
  }
  /* The taller labels first, they are the hardest to fit; else in order. */
  for (size_t g = 1; g < out->nlabels; g++)
    for (size_t j = g; j > 0 && out->label[order[j]].nlines > out->label[order[j - 1]].nlines; j--) {
      size_t t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  for (size_t p = 0; p < out->nlabels; p++) place_label(out, p, order);
  free(order);
  return 0;
nomem:
  free(order);
  wsisa_svg_layout_free(out);
  return wsisa_error(e, WSISA_ENOMEM, "scatter plot: out of memory");
}

int wsisa_svg_scatter(const char *path, const char *title, const char *xlabel,
                      const char *ylabel, size_t n, const char *const *labels, const double *x,
                      const double *y, wsisa_err *e) {
  axis xa, ya;
  scatter_axes(n, x, y, &xa, &ya);
  wsisa_svg_layout l;
  if (wsisa_svg_scatter_layout(n, labels, x, y, &l, e)) return WSISA_ENOMEM;
  FILE *f = begin(path, title, e);
  if (!f) {
    wsisa_svg_layout_free(&l);
    return WSISA_EIO;
  }
  y_ticks(f, &ya, LEFT, WIDTH - RIGHT);
  double step = tick_step(xa.hi - xa.lo, 6);
  for (double v = xa.lo; v <= xa.hi + step * 1e-6; v += step) {
    char label[32];
    snprintf(label, sizeof label, "%g", fabs(v) < step * 1e-9 ? 0 : v);
    text(f, place(&xa, v), HEIGHT - BOTTOM + 16, "middle", "", label);
  }
  text(f, (LEFT + WIDTH - RIGHT) / 2, HEIGHT - BOTTOM + 40, "middle", "", xlabel);
  fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">",
          (TOP + HEIGHT - BOTTOM) / 2);
  escaped(f, ylabel);
  fputs("</text>\n", f);
  /* sigma = mu*: effects above it vary more than they average (non-linear or
   * interacting parameters). */
  double top = fmin(xa.hi, ya.hi);
  if (top > 0)
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
            "stroke-dasharray=\"5 4\"/>\n",
            place(&xa, 0), place(&ya, 0), place(&xa, top), place(&ya, top));
  /* Leader lines under the dots, dots under the labels. */
  for (size_t g = 0; g < l.nlabels; g++)
    if (l.label[g].leader)
      fprintf(f,
              "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
              "stroke=\"#777\" stroke-width=\"0.8\"/>\n",
              l.label[g].line_x, l.label[g].line_y, l.label[g].dot_x, l.label[g].dot_y);
  for (size_t i = 0; i < n; i++)
    if (!isnan(l.dot_x[i]))
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.0f\" fill=\"%s\"/>\n", l.dot_x[i],
              l.dot_y[i], DOT_R, palette[0]);
  for (size_t g = 0; g < l.nlabels; g++)
    for (size_t t = 0; t < l.label[g].nlines; t++)
      text(f, l.label[g].x + 1, l.label[g].y + LINE_H * (double)(t + 1) - 3, "start",
           " class=\"label\"", l.label[g].line[t]);
  wsisa_svg_layout_free(&l);
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
             "stroke=\"#222\"/>\n",
          LEFT, TOP, WIDTH - RIGHT - LEFT, HEIGHT - BOTTOM - TOP);
  return finish(f, path, e);
}

/* ---- a map over a tile grid ------------------------------------------------- */

/* Light to dark (ColorBrewer's Oranges): low values pale, high ones dark. */
static const unsigned char ramp[][3] = {{255, 245, 235}, {253, 208, 162}, {253, 141, 60},
                                        {217, 72, 1}, {127, 39, 4}};
#define NRAMP (sizeof ramp / sizeof *ramp)

static void ramp_colour(double t, char *buf, size_t cap) {
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  double at = t * (double)(NRAMP - 1);
  size_t i = (size_t)at < NRAMP - 1 ? (size_t)at : NRAMP - 2;
  double f = at - (double)i;
  int c[3];
  for (int k = 0; k < 3; k++)
    c[k] = (int)lround((1 - f) * ramp[i][k] + f * ramp[i + 1][k]);
  snprintf(buf, cap, "#%02x%02x%02x", c[0], c[1], c[2]);
}

int wsisa_svg_grid_map(const char *path, const char *title, const char *unit, int cols,
                       int rows, const double *values, wsisa_err *e) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < (size_t)cols * (size_t)rows; i++)
    if (isfinite(values[i])) lo = fmin(lo, values[i]), hi = fmax(hi, values[i]);
  if (!(lo <= hi)) lo = hi = 0;
  FILE *f = begin(path, title, e);
  if (!f) return WSISA_EIO;
  /* the cells as square as the room allows, the legend to their right */
  const double legend = 110, room_w = WIDTH - LEFT - RIGHT - legend, room_h = HEIGHT - TOP - 30;
  const double cell = fmin(room_w / (cols > 0 ? cols : 1), room_h / (rows > 0 ? rows : 1));
  const double x0 = LEFT + (room_w - cell * cols) / 2, y0 = TOP;
  char colour[16];
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      const double v = values[(size_t)r * cols + c];
      if (isfinite(v)) ramp_colour(hi > lo ? (v - lo) / (hi - lo) : 0.5, colour, sizeof colour);
      else snprintf(colour, sizeof colour, "#eeeeee");
      fprintf(f,
              "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
              "stroke=\"white\" stroke-width=\"%.2f\"><title>tile %zu (%d, %d): ",
              x0 + c * cell, y0 + r * cell, cell, cell, colour, fmin(1.0, cell / 10),
              (size_t)r * cols + c, c, r);
      if (isfinite(v)) {
        fprintf(f, "%.4g ", v);
        escaped(f, unit);
      } else {
        fputs("not segmented", f);
      }
      fputs("</title></rect>\n", f);
    }
  /* the legend: the ramp from its lowest value (bottom) to its highest */
  const double lx = WIDTH - RIGHT - legend + 20, ly = TOP, lh = fmin(room_h, 200);
  const int steps = 40;
  for (int i = 0; i < steps; i++) {
    ramp_colour(1.0 - (i + 0.5) / steps, colour, sizeof colour);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"16\" height=\"%.2f\" fill=\"%s\"/>\n", lx,
            ly + lh * i / steps, lh / steps + 0.5, colour);
  }
  char label[64];
  snprintf(label, sizeof label, "%.4g", hi);
  text(f, lx + 22, ly + 10, "start", "", label);
  snprintf(label, sizeof label, "%.4g", lo);
  text(f, lx + 22, ly + lh, "start", "", label);
  text(f, lx, ly + lh + 20, "start", "", unit);
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" fill=\"#eeeeee\"/>\n", lx,
          ly + lh + 32);
  text(f, lx + 22, ly + lh + 42, "start", "", "not segmented");
  return finish(f, path, e);
}
