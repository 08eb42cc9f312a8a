/* The stain check of `wsisa run` and `wsisa segment`: before any work, a few
 * tissue tiles of each input (segment: the pixels it read) are measured to
 * be bright-field H&E, the stain the segmentation's parameters are tuned
 * for. Measures are those of colour deconvolution
 * (Ruifrok–Johnston, the feature stage's stain rows): on tissue pixels, the
 * mean optical density, the share of pixels whose haematoxylin or eosin
 * amount is clearly negative (colours no mix of the two stains makes), and the
 * share of optical density off the haematoxylin–eosin plane (the residual
 * stain). A dark slide background (io's tissue detection) means dark field.
 * Two slips of saving are named as such: a greyscale image saved as RGB
 * (tissue without colour), and H&E saved with red and blue swapped (BGR
 * written as RGB), whose dark pixels (the nuclei) fit the H&E plane much
 * better with red and blue swapped back. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/workflow/workflow.h"

/* Tissue, for these measures: a summed optical density over R, G, B of at
 * least this (glass is below 0.15, pale eosin above 0.4). */
#define STAIN_TISSUE_OD 0.3
/* A stain amount below this is not rounding: the colour lies outside the
 * H&E cone. */
#define STAIN_NEGATIVE -0.1
/* Bounds of bright-field H&E. On the bundled sample's tissue (and the 40x
 * slide made from it) the mean optical density per channel is 0.32–0.51, 2–6 %
 * of tissue pixels fall outside the cone, and 3–5 % of the optical-density
 * energy is residual. Fluorescence (lit tissue on black) has a mean density
 * near 2 and every pixel outside; an unstained or greyscale scan has ~45 %
 * outside; DAB (IHC) brown puts ~33 % of the energy in the residual. The
 * bounds sit well away from both sides. */
#define STAIN_MAX_MEAN_OD 1.2
#define STAIN_MAX_OUTSIDE 0.25
#define STAIN_MAX_RESIDUAL 0.15
/* A greyscale image saved as RGB has no colour: more than this share of
 * tissue pixels whose channels differ by at most STAIN_GREY_SPREAD (a
 * greyscale scan or JPEG keeps a few levels of noise between channels). On
 * the bundled sample's tissue at most 0.3 % of pixels are that grey; a
 * greyscale version of it, exact or with +-3 levels of noise per channel,
 * over 91 %. */
#define STAIN_GREY_SPREAD 6
#define STAIN_MAX_GREY 0.5
/* Red and blue swapped: on dark tissue pixels (summed optical density at
 * least STAIN_DARK_OD: the nuclei, where haematoxylin shows), the residual's
 * share of the optical-density energy is more than STAIN_SWAP_RATIO times
 * that of the same pixels with red and blue swapped back, and above
 * STAIN_SWAP_RESIDUAL. On the sample's tissue tiles (512 and 1024) and the
 * repository's tiles the ratio is 0.19-0.68 and the share 2.5-5.0 %; their
 * BGR versions give 1.47-5.35 and 6.5-24 %. A small region can mislead it
 * (two of the sample's 256-pixel tissue tiles, rich in red blood cells, give
 * 5.7 and 6.9), so fewer than WSISA_STAIN_MIN_DARK dark pixels (a 256 x 256
 * region of nuclei) leave it undecided, as does pale eosin alone. */
#define STAIN_DARK_OD 0.9
#define STAIN_SWAP_RATIO 1.4
#define STAIN_SWAP_RESIDUAL 0.06
/* Fewer tissue pixels than this leave the check undecided: passed. */
#define STAIN_MIN_TISSUE 4096
/* Tissue tiles read per slide, spread evenly over its tissue tiles. */
#define STAIN_TILES 4

void wsisa__stain_add(wsisa__stain *st, const wsisa_image *rgb) {
  wsisa_deconv_consts k;
  if (wsisa_cpu_deconv_setup(wsisa_stains_he, &k)) return; /* the constant rows are regular */
  const float *m = k.m;
  st->tiles++;
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *p = wsisa_image_row(rgb, y);
    for (int x = 0; x < rgb->width; x++, p += 3) {
      st->pixels++;
      const double r = k.od[p[0]], g = k.od[p[1]], b = k.od[p[2]];
      const double sum = r + g + b;
      if (sum < STAIN_TISSUE_OD) continue;
      double c[3];
      for (int j = 0; j < 3; j++) c[j] = r * m[j] + g * m[3 + j] + b * m[6 + j];
      st->tissue++;
      st->od_sum += sum / 3;
      /* the residual row is a unit vector orthogonal to H and E, so its
       * amount is the optical density's distance from their plane */
      st->od_energy += r * r + g * g + b * b;
      st->residual_energy += c[2] * c[2];
      st->outside += c[0] < STAIN_NEGATIVE || c[1] < STAIN_NEGATIVE;
      st->h_sum += fabs(c[0]);
      st->e_sum += fabs(c[1]);
      int lo = p[0] < p[1] ? p[0] : p[1], hi = p[0] < p[1] ? p[1] : p[0];
      lo = p[2] < lo ? p[2] : lo, hi = p[2] > hi ? p[2] : hi;
      st->grey += hi - lo <= STAIN_GREY_SPREAD;
      if (sum < STAIN_DARK_OD) continue;
      /* the residual with red and blue swapped back */
      const double swapped = b * m[2] + g * m[5] + r * m[8];
      st->dark++;
      st->dark_energy += r * r + g * g + b * b;
      st->dark_residual += c[2] * c[2];
      st->dark_residual_swapped += swapped * swapped;
    }
  }
}

int wsisa__stain_sample(wsisa_slide *slide, const wsisa_grid *g, wsisa__stain *st,
                        wsisa_err *e) {
  st->dark_background = g->dark_background;
  size_t n = g->ntissue < STAIN_TILES ? g->ntissue : STAIN_TILES;
  for (size_t k = 0, seen = 0, t = 0; k < n && t < g->ntiles; t++) {
    if (!g->tiles[t].tissue) continue;
    /* the k-th of n picks is tissue tile k * ntissue / n */
    if (seen++ != k * g->ntissue / n) continue;
    wsisa_image *rgb = NULL;
    int rc = wsisa_grid_tile_read(slide, g, &g->tiles[t], &rgb, e);
    if (rc) return rc;
    wsisa__stain_add(st, rgb);
    wsisa_image_free(rgb);
    k++;
  }
  return 0;
}

double wsisa__stain_mean_od(const wsisa__stain *st) {
  return st->tissue ? st->od_sum / (double)st->tissue : 0;
}
double wsisa__stain_outside(const wsisa__stain *st) {
  return st->tissue ? (double)st->outside / (double)st->tissue : 0;
}
double wsisa__stain_residual(const wsisa__stain *st) {
  return st->od_energy > 0 ? st->residual_energy / st->od_energy : 0;
}
double wsisa__stain_haematoxylin(const wsisa__stain *st) {
  double all = st->h_sum + st->e_sum;
  return all > 0 ? st->h_sum / all : 0;
}
double wsisa__stain_colourless(const wsisa__stain *st) {
  return st->tissue ? (double)st->grey / (double)st->tissue : 0;
}
double wsisa__stain_dark_residual(const wsisa__stain *st, int swapped) {
  return st->dark_energy > 0
             ? (swapped ? st->dark_residual_swapped : st->dark_residual) / st->dark_energy
             : 0;
}

/* H&E with red and blue swapped: its nuclei fit the H-E plane far better
 * swapped back. */
static int looks_swapped(const wsisa__stain *st) {
  if (st->dark < WSISA_STAIN_MIN_DARK) return 0;
  const double as_is = wsisa__stain_dark_residual(st, 0), back = wsisa__stain_dark_residual(st, 1);
  return as_is > STAIN_SWAP_RESIDUAL && as_is > STAIN_SWAP_RATIO * back;
}

int wsisa__stain_verdict(const wsisa__stain *st, const char *name, const char *override,
                         wsisa_err *e) {
  char seen[512] = "";
  size_t at = 0;
#define SEEN(...)                                                                          \
  do {                                                                                     \
    if (at < sizeof seen)                                                                  \
      at += (size_t)snprintf(seen + at, sizeof seen - at, "%s", at ? "; " : "");           \
    if (at < sizeof seen) at += (size_t)snprintf(seen + at, sizeof seen - at, __VA_ARGS__); \
  } while (0)
  if (st->dark_background)
    SEEN("a dark background with lit tissue (fluorescence or dark field)");
  const double grey = wsisa__stain_colourless(st);
  if (st->tissue >= STAIN_MIN_TISSUE && grey > STAIN_MAX_GREY && !st->dark_background) {
    /* no colour: every colour measure fails with it, and says less (a
     * fluorescence channel is grey too: its dark background says more) */
    SEEN("looks like greyscale (R=G=B within %d levels in %.0f%% of tissue pixels), not an "
         "H&E stain: a greyscale image saved as RGB?",
         STAIN_GREY_SPREAD, 100 * grey);
  } else if (st->tissue >= STAIN_MIN_TISSUE) {
    double od = wsisa__stain_mean_od(st), out = wsisa__stain_outside(st);
    double res = wsisa__stain_residual(st);
    if (od > STAIN_MAX_MEAN_OD)
      SEEN("tissue optical density %.2f on average (H&E: below %.1f)", od, STAIN_MAX_MEAN_OD);
    if (out > STAIN_MAX_OUTSIDE)
      SEEN("%.0f%% of tissue pixels in colours no haematoxylin-eosin mix makes (H&E: below "
           "%.0f%%)",
           100 * out, 100 * STAIN_MAX_OUTSIDE);
    const int swapped = looks_swapped(st);
    const double back = 100 * wsisa__stain_dark_residual(st, 1);
    if (res > STAIN_MAX_RESIDUAL && swapped)
      SEEN("%.0f%% of the optical density off the haematoxylin-eosin plane, another stain "
           "(H&E: below %.0f%%), or the hue of H&E with red and blue swapped (BGR saved as "
           "RGB?), its nuclei %.0f%% off the plane once swapped back",
           100 * res, 100 * STAIN_MAX_RESIDUAL, back);
    else if (res > STAIN_MAX_RESIDUAL)
      SEEN("%.0f%% of the optical density off the haematoxylin-eosin plane, another stain "
           "(H&E: below %.0f%%)",
           100 * res, 100 * STAIN_MAX_RESIDUAL);
    else if (swapped)
      SEEN("hue of H&E with red and blue swapped (BGR saved as RGB?): its nuclei's optical "
           "density %.0f%% off the haematoxylin-eosin plane, %.0f%% once red and blue are "
           "swapped back",
           100 * wsisa__stain_dark_residual(st, 0), back);
  }
#undef SEEN
  if (!at) return 0;
  return wsisa_error(e, WSISA_EUSAGE,
                     "%s: not a bright-field H&E slide, which the segmentation is tuned for: %s "
                     "(measured on %zu tile%s); %s to run it anyway",
                     name, seen, st->tiles, st->tiles == 1 ? "" : "s", override);
}

int wsisa_stain_check_image(const wsisa_image *rgb, int dark_background, const char *name,
                            const char *override, wsisa_err *e) {
  wsisa__stain st = {0};
  st.dark_background = dark_background;
  wsisa__stain_add(&st, rgb);
  return wsisa__stain_verdict(&st, name, override, e);
}
