/* SVG writers: axes with round-number ticks, grouped bars with whiskers, and a
 * labelled scatter. Coordinates are computed here; no external library. */
#include "io/svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
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
    char name[4096];
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

int wsisa_svg_scatter(const char *path, const char *title, const char *xlabel,
                      const char *ylabel, size_t n, const char *const *labels, const double *x,
                      const double *y, wsisa_err *e) {
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
  axis xa = {xlo, xhi, LEFT, WIDTH - RIGHT}, ya = {ylo, yhi, HEIGHT - BOTTOM, TOP};
  FILE *f = begin(path, title, e);
  if (!f) return WSISA_EIO;
  y_ticks(f, &ya, LEFT, WIDTH - RIGHT);
  double step = tick_step(xhi - xlo, 6);
  for (double v = xlo; v <= xhi + step * 1e-6; v += step) {
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
  double top = fmin(xhi, yhi);
  if (top > 0)
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
            "stroke-dasharray=\"5 4\"/>\n",
            place(&xa, 0), place(&ya, 0), place(&xa, top), place(&ya, top));
  double boxes[256][4];
  size_t nboxes = 0;
  /* Points closer than a few pixels share one label, "B, G, R", wrapped and
   * stacked upwards: screening plots pile the unimportant parameters at 0. */
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) || !isfinite(y[i])) continue;
    double px = place(&xa, x[i]), py = place(&ya, y[i]);
    int leader = 1;
    for (size_t j = 0; j < i && leader; j++)
      leader = !(isfinite(x[j]) && isfinite(y[j]) && fabs(place(&xa, x[j]) - px) < 6 &&
                 fabs(place(&ya, y[j]) - py) < 6);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", px, py, palette[0]);
    if (!leader) continue;
    char lines[16][64];
    size_t nl = 0;
    lines[0][0] = '\0';
    for (size_t j = i; j < n; j++) {
      if (!isfinite(x[j]) || !isfinite(y[j]) || fabs(place(&xa, x[j]) - px) >= 6 ||
          fabs(place(&ya, y[j]) - py) >= 6)
        continue;
      size_t len = strlen(lines[nl]);
      if (len && len + strlen(labels[j]) + 2 > 40 && nl + 1 < 16) lines[++nl][0] = '\0';
      len = strlen(lines[nl]);
      snprintf(lines[nl] + len, sizeof lines[nl] - len, "%s%s", len ? ", " : "", labels[j]);
    }
    int right = px > WIDTH - RIGHT - 220;
    size_t widest = 0;
    for (size_t l = 0; l <= nl; l++) widest = strlen(lines[l]) > widest ? strlen(lines[l]) : widest;
    /* Approximate text box (7 px per character, 14 px per line), moved up or
     * down a line at a time until it clears the labels already placed. */
    double w = 7.0 * (double)widest, h = 14.0 * (double)(nl + 1);
    double bx = right ? px - 6 - w : px + 6, base = py - 6;
    for (int t = 0; t < 40; t++) {
      double shift = t % 2 ? 14.0 * (t / 2 + 1) : -14.0 * (t / 2);
      double top = base + shift - h, clash = 0;
      for (size_t b = 0; b < nboxes && !clash; b++)
        clash = bx < boxes[b][0] + boxes[b][2] && boxes[b][0] < bx + w &&
                top < boxes[b][1] + boxes[b][3] && boxes[b][1] < top + h;
      if (!clash && top > TOP - 10 && top + h < HEIGHT - BOTTOM + 4) {
        base += shift;
        break;
      }
    }
    if (nboxes < sizeof boxes / sizeof *boxes) {
      double *box = boxes[nboxes++];
      box[0] = bx, box[1] = base - h, box[2] = w, box[3] = h;
    }
    for (size_t l = 0; l <= nl; l++)
      text(f, right ? px - 6 : px + 6, base - 14 * (double)(nl - l) - 3, right ? "end" : "start",
           "", lines[l]);
  }
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
             "stroke=\"#222\"/>\n",
          LEFT, TOP, WIDTH - RIGHT - LEFT, HEIGHT - BOTTOM - TOP);
  return finish(f, path, e);
}
