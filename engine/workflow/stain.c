/* The stain check of `wsisa run`, `wsisa calibrate` and `wsisa segment`:
 * before any work, a few tissue tiles of each input (segment: the pixels it
 * read) are measured, and what is certainly not bright-field H&E, the stain
 * the segmentation's parameters are tuned for, is refused: dark field
 * (fluorescence), greyscale, a DAB-dominant chromogen (immunohistochemistry),
 * no tissue. What only may be wrong (red and blue swapped, a brown share, a
 * stain far paler or darker than usual) is a warning, and the run goes on.
 *
 * The measures are physical facts of transmitted light, checked on H&E of
 * other labs (tests/data/he-variety) and on the bundled sample, not fixed
 * stain vectors: in bright field the brightest pixels are the light through
 * glass or pale tissue, near grey; neither haematoxylin nor eosin absorbs
 * blue most, DAB's brown does; eosin absorbs green and blue, hardly red. The
 * slide's own two stain vectors come from its optical densities as Macenko
 * et al. (2009) find them: the plane of the two main eigenvectors of the
 * optical densities, and the directions at the 1st and 99th percentile of
 * angle in it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/workflow/workflow.h"

/* Tissue: a summed optical density over R, G, B of at least this (glass is
 * below 0.15, pale eosin above 0.4). */
#define STAIN_TISSUE_OD 0.3
/* Clearly stained, for the brown share: a summed optical density of at
 * least this, past the colour fringes of pale edges. */
#define STAIN_STAINED_OD 0.6
/* Fewer tissue pixels than WSISA_STAIN_MIN_TISSUE leave the check
 * undecided: passed. No tissue: under WSISA_STAIN_NO_TISSUE of the pixels is
 * tissue, of at least WSISA_STAIN_MIN_PIXELS seen (a 256 x 256 region); a
 * plain white image has none, the palest H&E of the variety set (adipose
 * tissue, its optical density halved) 2 %. */
/* Dark field: the brightest 1 % of the pixels have their weakest channel
 * below STAIN_MIN_WHITE of their strongest on average, or their mean level
 * ((R + G + B) / 3) is below STAIN_MIN_LIGHT: no light passed. In bright
 * field they are the light through glass or pale tissue, near grey (85-100 %
 * on every image and tile measured, the optical density doubled included)
 * and light (level 198 or more); nuclei lit blue on black: 15 %, level 131 at
 * most; a region of black background: level 0. */
#define STAIN_BRIGHTEST 0.01
#define STAIN_MIN_WHITE 0.5
#define STAIN_MIN_LIGHT 64
/* Greyscale: more than this share of tissue pixels whose channels differ by
 * at most STAIN_GREY_SPREAD levels (a greyscale scan or JPEG keeps a few
 * levels of noise between channels); H&E: at most 2 %, 5 % darkened 2x. */
#define STAIN_GREY_SPREAD 6
#define STAIN_MAX_GREY 0.5
/* Brown: the share of the stained pixels' optical density in pixels that
 * absorb blue most (DAB does; haematoxylin and eosin never: at most 1 % on
 * the sample's tiles, 8 % on the colour fringes of the variety set's adipose
 * tissue, 14 % darkened 2x; scikit-image's IHC image 98-100 %).
 * From STAIN_MAX_BROWN it is refused as DAB-dominant, unless red and blue
 * are swapped; from STAIN_WARN_BROWN it is a warning. */
#define STAIN_MAX_BROWN 0.5
#define STAIN_WARN_BROWN 0.25
/* A slide whose stain vectors turn round by more than this (swap measure
 * below it) reads as H&E with red and blue swapped, brown or not: its
 * haematoxylin absorbs blue most (the sample's tiles swapped: -1.16 to -0.46,
 * up to 45 % brown; the variety set's, -0.59 to -0.32; DAB with eosin
 * faded, -0.25 to 0.18). */
#define STAIN_SWAPPED -0.3
/* Eosin is found when the greener of the slide's two stain vectors absorbs
 * green at least STAIN_EOSIN_GREEN times red and blue, and the lesser of red
 * and blue at most STAIN_EOSIN_MINOR times green: eosin absorbs green
 * narrowly (1.38-1.73 and 0.07-0.36 on the variety set, 1.87 and 0.09 on
 * the sample), while the greener vector of the adipose tissue, of few nuclei
 * and hardly any eosin, reaches 1.03-1.06, that of the IHC image 1.07-1.10
 * and 0.80-0.88. */
#define STAIN_EOSIN_GREEN 1.2
#define STAIN_EOSIN_MINOR 0.45
/* Stain strength warns: the darkest 5 % of tissue below STAIN_PALE_OD per
 * channel, paler than any H&E measured even at half its optical density
 * (the variety set halved 0.21-0.29, the sample's tiles halved 0.23-0.57,
 * as it is 0.42-1.11); or tissue above STAIN_DARK_OD on average, darker than
 * any H&E measured doubled (the sample's tiles doubled 0.40-1.14). */
#define STAIN_PALE_OD 0.2
#define STAIN_DARK_OD 1.2
/* Tissue tiles read per slide, spread evenly over its tissue tiles. */
#define STAIN_TILES 4

void wsisa__stain_add(wsisa__stain *st, const wsisa_image *rgb) {
  /* optical density of an 8-bit level; 0 read as 1 */
  double od_table[256];
  for (int v = 0; v < 256; v++) od_table[v] = log10(255.0 / (v ? v : 1));
  st->tiles++;
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *p = wsisa_image_row(rgb, y);
    for (int x = 0; x < rgb->width; x++, p += 3) {
      int lo = p[0] < p[1] ? p[0] : p[1], hi = p[0] < p[1] ? p[1] : p[0];
      lo = p[2] < lo ? p[2] : lo, hi = p[2] > hi ? p[2] : hi;
      const int level = (p[0] + p[1] + p[2]) / 3;
      st->pixels++;
      st->level[level]++;
      st->level_grey[level] += hi ? (double)lo / hi : 1.0;
      const double r = od_table[p[0]], g = od_table[p[1]], b = od_table[p[2]];
      const double sum = r + g + b;
      if (sum < STAIN_TISSUE_OD) continue;
      st->tissue++;
      st->od_sum += sum / 3;
      st->colourless += hi - lo <= STAIN_GREY_SPREAD;
      int bin = (int)(sum / 3 * 100);
      st->od_bins[bin < WSISA_STAIN_OD_BINS ? bin : WSISA_STAIN_OD_BINS - 1]++;
      st->moment[0] += r * r, st->moment[1] += r * g, st->moment[2] += r * b;
      st->moment[3] += g * g, st->moment[4] += g * b, st->moment[5] += b * b;
      int cr = (int)(r / sum * WSISA_STAIN_CHROMA), cg = (int)(g / sum * WSISA_STAIN_CHROMA);
      cr = cr < WSISA_STAIN_CHROMA ? cr : WSISA_STAIN_CHROMA - 1;
      cg = cg < WSISA_STAIN_CHROMA ? cg : WSISA_STAIN_CHROMA - 1;
      st->chroma[cr * WSISA_STAIN_CHROMA + cg]++;
      if (sum < STAIN_STAINED_OD) continue;
      st->stained_od += sum;
      if (b > g && b > r) st->brown_od += sum;
    }
  }
}

int wsisa__stain_sample(wsisa_input *in, const wsisa_grid *g, wsisa__stain *st,
                        wsisa_err *e) {
  st->dark_background = g->dark_background;
  size_t n = g->ntissue < STAIN_TILES ? g->ntissue : STAIN_TILES;
  for (size_t k = 0, seen = 0, t = 0; k < n && t < g->ntiles; t++) {
    if (!g->tiles[t].tissue) continue;
    /* the k-th of n picks is tissue tile k * ntissue / n */
    if (seen++ != k * g->ntissue / n) continue;
    wsisa_image *rgb = NULL;
    const wsisa_tile *tl = &g->tiles[t];
    int rc = wsisa_input_read_scaled(in, &g->scale, tl->x, tl->y, tl->width, tl->height, &rgb, e);
    if (rc) return rc;
    wsisa__stain_add(st, rgb);
    wsisa_image_free(rgb);
    k++;
  }
  return 0;
}

/* ---- the slide's own stain vectors ------------------------------------------ */

/* Eigenvalues (descending) and unit eigenvectors (columns of vec) of the
 * symmetric 3 x 3 matrix a (rr, rg, rb, gg, gb, bb), by Jacobi rotations. */
static void eigen3(const double a6[6], double val[3], double vec[3][3]) {
  double a[3][3] = {{a6[0], a6[1], a6[2]}, {a6[1], a6[3], a6[4]}, {a6[2], a6[4], a6[5]}};
  double v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int sweep = 0; sweep < 50; sweep++) {
    double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
    if (off < 1e-15 * (fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]) + 1e-300)) break;
    for (int p = 0; p < 2; p++)
      for (int q = p + 1; q < 3; q++) {
        if (a[p][q] == 0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
        const double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; k++) { /* columns p, q */
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq, a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) { /* rows p, q */
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk, a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; k++) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq, v[k][q] = s * vkp + c * vkq;
        }
      }
  }
  int order[3] = {0, 1, 2};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (a[order[j]][order[j]] > a[order[i]][order[i]]) {
        int t = order[i];
        order[i] = order[j], order[j] = t;
      }
  for (int i = 0; i < 3; i++) {
    val[i] = a[order[i]][order[i]];
    for (int k = 0; k < 3; k++) vec[k][i] = v[k][order[i]];
  }
}

typedef struct angle_bin {
  double angle;
  uint64_t count;
  int index;
} angle_bin;

static int by_angle(const void *pa, const void *pb) {
  const angle_bin *a = pa, *b = pb;
  if (a->angle != b->angle) return a->angle < b->angle ? -1 : 1;
  return a->index - b->index;
}

/* The direction at `angle` in the plane (e1, e2), of positive sum, unit. */
static void direction(const double e1[3], const double e2[3], double angle, double out[3]) {
  double n = 0, s = 0;
  for (int k = 0; k < 3; k++) out[k] = cos(angle) * e1[k] + sin(angle) * e2[k], s += out[k];
  for (int k = 0; k < 3; k++) out[k] *= s < 0 ? -1 : 1, n += out[k] * out[k];
  for (int k = 0; k < 3; k++) out[k] /= sqrt(n);
}

/* Macenko et al. 2009: the plane of the optical densities' two main
 * eigenvectors, and in it the directions at the 1st and 99th percentile of
 * angle (over the tissue pixels, from their chromaticity histogram). The one
 * with the larger green share is the eosin candidate. 0, or -1 when there is
 * nothing to estimate from. */
static int stain_vectors(const wsisa__stain *st, wsisa__stain_measures *m) {
  double val[3], vec[3][3];
  eigen3(st->moment, val, vec);
  const double total = val[0] + val[1] + val[2];
  if (!(total > 0)) return -1;
  double e1[3], e2[3], s1 = 0;
  for (int k = 0; k < 3; k++) e1[k] = vec[k][0], e2[k] = vec[k][1], s1 += e1[k];
  for (int k = 0; k < 3; k++) e1[k] *= s1 < 0 ? -1 : 1;
  m->residual = val[2] > 0 ? val[2] / total : 0;
  enum { NB = WSISA_STAIN_CHROMA * WSISA_STAIN_CHROMA };
  angle_bin *bins = malloc(NB * sizeof *bins);
  if (!bins) return -1;
  size_t n = 0;
  uint64_t all = 0;
  for (int i = 0; i < NB; i++) {
    if (!st->chroma[i]) continue;
    const double r = (i / WSISA_STAIN_CHROMA + 0.5) / WSISA_STAIN_CHROMA;
    const double g = (i % WSISA_STAIN_CHROMA + 0.5) / WSISA_STAIN_CHROMA;
    const double d[3] = {r, g, r + g < 1 ? 1 - r - g : 0};
    const double x = d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2];
    const double y = d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2];
    bins[n++] = (angle_bin){atan2(y, x), st->chroma[i], i};
    all += st->chroma[i];
  }
  if (!n) {
    free(bins);
    return -1;
  }
  qsort(bins, n, sizeof *bins, by_angle);
  double lo = bins[0].angle, hi = bins[n - 1].angle;
  uint64_t cum = 0;
  int have_lo = 0;
  for (size_t i = 0; i < n; i++) {
    cum += bins[i].count;
    if (!have_lo && (double)cum >= 0.01 * (double)all) lo = bins[i].angle, have_lo = 1;
    if ((double)cum >= 0.99 * (double)all) {
      hi = bins[i].angle;
      break;
    }
  }
  free(bins);
  double a[3], b[3];
  direction(e1, e2, lo, a);
  direction(e1, e2, hi, b);
  const double ga = a[1] / (a[0] + a[1] + a[2]), gb = b[1] / (b[0] + b[1] + b[2]);
  const double *eo = ga > gb ? a : b, *h = ga > gb ? b : a;
  memcpy(m->eosin, eo, sizeof m->eosin);
  memcpy(m->haematoxylin, h, sizeof m->haematoxylin);
  /* ratios of absorptions, finite whatever the signs (a component may be
   * a rounding below zero) */
  const double red_blue = eo[0] > eo[2] ? eo[0] : eo[2], minor = eo[0] < eo[2] ? eo[0] : eo[2];
  m->eosin_green = eo[1] / fmax(red_blue, 1e-6);
  m->eosin_minor = minor / fmax(eo[1], 1e-6);
  m->eosin_found = m->eosin_green >= STAIN_EOSIN_GREEN && m->eosin_minor <= STAIN_EOSIN_MINOR;
  /* eosin absorbs blue more than red, haematoxylin red more than blue;
   * with red and blue swapped both turn round */
  m->swap = (eo[2] - eo[0]) + (h[0] - h[2]);
  return 0;
}

/* ---- the measures and the verdict ------------------------------------------ */

void wsisa__stain_measure(const wsisa__stain *st, wsisa__stain_measures *m) {
  memset(m, 0, sizeof *m);
  m->tiles = st->tiles;
  m->pixels = st->pixels;
  m->tissue = st->tissue;
  m->tissue_share = st->pixels ? (double)st->tissue / (double)st->pixels : 0;
  m->mean_od = st->tissue ? st->od_sum / (double)st->tissue : 0;
  m->colourless = st->tissue ? (double)st->colourless / (double)st->tissue : 0;
  m->brown = st->stained_od > 0 ? st->brown_od / st->stained_od : 0;
  /* the darkest 5 % of tissue: the 95th percentile of its optical density */
  uint64_t seen = 0;
  for (int i = 0; i < WSISA_STAIN_OD_BINS && st->tissue; i++) {
    seen += st->od_bins[i];
    if ((double)seen >= 0.95 * (double)st->tissue) {
      m->dark_od = (i + 0.5) / 100;
      break;
    }
  }
  /* the brightest 1 % of the pixels: how grey they are */
  const double want = ceil(STAIN_BRIGHTEST * (double)st->pixels);
  double got = 0, grey = 0, light = 0;
  for (int level = 255; level >= 0 && got < want; level--) {
    if (!st->level[level]) continue;
    const double take = fmin((double)st->level[level], want - got);
    grey += st->level_grey[level] / (double)st->level[level] * take;
    light += level * take;
    got += take;
  }
  m->white = got > 0 ? grey / got : 1;
  m->light = got > 0 ? light / got : 0;
  m->dark_background = st->dark_background;
  if (st->tissue >= WSISA_STAIN_MIN_TISSUE) m->vectors = stain_vectors(st, m) == 0;
}

/* A clause of a message: appended, "; " between clauses. */
typedef struct clauses {
  char *buf;
  size_t cap, at;
} clauses;

static void add(clauses *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(clauses *c, const char *fmt, ...) {
  if (c->at + 1 >= c->cap) return;
  if (c->at) c->at += (size_t)snprintf(c->buf + c->at, c->cap - c->at, "; ");
  if (c->at + 1 >= c->cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(c->buf + c->at, c->cap - c->at, fmt, ap);
  va_end(ap);
  c->at += n > 0 ? (size_t)n : 0;
  if (c->at >= c->cap) c->at = c->cap - 1;
}

static const char *tiles_word(const wsisa__stain_measures *m) {
  return m->tiles == 1 ? "tile" : "tiles";
}

int wsisa__stain_verdict(const wsisa__stain *st, const char *name, const char *override,
                         char *warning, size_t cap, wsisa_err *e) {
  if (warning && cap) warning[0] = '\0';
  wsisa__stain_measures m;
  wsisa__stain_measure(st, &m);
  wsisa_log(WSISA_LOG_INFO, "stain",
            "%s: %zu %s, %llu pixels, tissue %.2f%%, brightest grey %.0f%% level %.0f, "
            "colourless %.1f%%, brown %.1f%%, mean OD %.2f, darkest OD %.2f, eosin %s (green "
            "%.2f, minor %.2f), swap %+.2f",
            name, m.tiles, tiles_word(&m), (unsigned long long)m.pixels, 100 * m.tissue_share,
            100 * m.white, m.light, 100 * m.colourless, 100 * m.brown, m.mean_od, m.dark_od,
            !m.vectors ? "undecided" : m.eosin_found ? "found" : "not found", m.eosin_green,
            m.eosin_minor, m.swap);
  if (m.pixels >= WSISA_STAIN_MIN_PIXELS && m.tissue_share < WSISA_STAIN_NO_TISSUE)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: no tissue: %.2f%% of the pixels stained (summed optical density "
                       "0.3 or more; no tissue: below %.1f%%), nothing to segment (measured on "
                       "%zu %s); %s to run it anyway",
                       name, 100 * m.tissue_share, 100 * WSISA_STAIN_NO_TISSUE, m.tiles,
                       tiles_word(&m), override);
  if (m.tissue < WSISA_STAIN_MIN_TISSUE) return 0; /* too little tissue to say */
  if (m.white < STAIN_MIN_WHITE || m.light < STAIN_MIN_LIGHT) {
    char what[160];
    if (m.white < STAIN_MIN_WHITE)
      snprintf(what, sizeof what,
               "coloured, their weakest channel %.0f%% of the strongest (bright field: near "
               "grey, above %.0f%%)",
               100 * m.white, 100 * STAIN_MIN_WHITE);
    else
      snprintf(what, sizeof what, "dark, level %.0f of 255 (bright field: above %d)", m.light,
               STAIN_MIN_LIGHT);
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: dark field (fluorescence?): the segmentation needs bright-field "
                       "H&E: the brightest pixels%s are %s, not the light through glass or pale "
                       "tissue (measured on %zu %s); %s to run it anyway",
                       name, m.dark_background ? ", on a dark background," : "", what, m.tiles,
                       tiles_word(&m), override);
  }
  if (m.colourless > STAIN_MAX_GREY)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: greyscale: the segmentation needs bright-field H&E in colour: R, G "
                       "and B within %d levels of each other in %.0f%% of tissue pixels (H&E: "
                       "below %.0f%%) (measured on %zu %s); %s to run it anyway",
                       name, STAIN_GREY_SPREAD, 100 * m.colourless, 100 * STAIN_MAX_GREY, m.tiles,
                       tiles_word(&m), override);
  /* only a swap of red and blue turns H&E brown: its haematoxylin then
   * absorbs blue most */
  const int eosin = m.vectors && m.eosin_found;
  if (m.brown >= STAIN_MAX_BROWN && !(eosin && m.swap < STAIN_SWAPPED))
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: a brown chromogen (DAB, immunohistochemistry?): the segmentation "
                       "needs bright-field H&E: %.0f%% of the stained optical density in pixels "
                       "that absorb blue most, as DAB does (H&E: none; refused from %.0f%%) "
                       "(measured on %zu %s); %s to run it anyway",
                       name, 100 * m.brown, 100 * STAIN_MAX_BROWN, m.tiles, tiles_word(&m),
                       override);
  char seen[1024];
  clauses c = {seen, sizeof seen, 0};
  seen[0] = '\0';
  if (eosin && m.swap < 0)
    add(&c,
        "red and blue may be swapped (BGR saved as RGB?): the slide's stain vectors turn "
        "round, eosin absorbing red more than blue and haematoxylin blue more than red "
        "(swap measure %+.2f; H&E above 0)",
        m.swap);
  else if (m.brown >= STAIN_WARN_BROWN)
    add(&c,
        "%.0f%% of the stained optical density absorbs blue most, as DAB does (H&E: none): "
        "another chromogen?",
        100 * m.brown);
  if (m.dark_od < STAIN_PALE_OD)
    add(&c,
        "pale stain: the darkest 5%% of tissue at optical density %.2f per channel (below "
        "%.2f), nuclei may be missed",
        m.dark_od, STAIN_PALE_OD);
  if (m.mean_od > STAIN_DARK_OD)
    add(&c, "dark stain: tissue optical density %.2f per channel on average (above %.1f)",
        m.mean_od, STAIN_DARK_OD);
  if (c.at && warning && cap) {
    snprintf(warning, cap, "%s: %s (measured on %zu %s); going on (%s to skip the check)",
             name, seen, m.tiles, tiles_word(&m), override);
    wsisa_log(WSISA_LOG_WARN, "stain", "%s", warning);
  }
  return 0;
}

int wsisa_stain_check_image(const wsisa_image *rgb, int dark_background, const char *name,
                            const char *override, char *warning, size_t cap, wsisa_err *e) {
  wsisa__stain *st = calloc(1, sizeof *st);
  if (!st) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  st->dark_background = dark_background;
  wsisa__stain_add(st, rgb);
  int rc = wsisa__stain_verdict(st, name, override, warning, cap, e);
  free(st);
  return rc;
}
