/* The tile grid of a slide level, and tissue detection on a low-resolution
 * level so that background tiles can be skipped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

/* A pixel is tissue when it is coloured (stain) or dark; glass is bright and
 * grey. H&E tissue is pink to purple, so saturation separates it well; the
 * darkness test keeps dense, dark nuclei clusters and pen-free dark tissue. */
#define TISSUE_MIN_SATURATION 20
#define TISSUE_MAX_LUMA 200

static int is_tissue(const uint8_t *p) {
  int mx = p[0], mn = p[0];
  for (int c = 1; c < 3; c++) {
    if (p[c] > mx) mx = p[c];
    if (p[c] < mn) mn = p[c];
  }
  int luma = (299 * p[0] + 587 * p[1] + 114 * p[2]) / 1000;
  return mx - mn >= TISSUE_MIN_SATURATION || luma <= TISSUE_MAX_LUMA;
}

int wsisa_tissue_mask(wsisa_slide *slide, int max_side, wsisa_image **out,
                      double *downsample, wsisa_err *e) {
  *out = NULL;
  int level = wsisa_slide_level_count(slide) - 1;
  wsisa_level lv;
  int rc = wsisa_slide_level(slide, level, &lv, e);
  if (rc) return rc;
  /* Each mask pixel is the majority vote of a factor×factor block. */
  int64_t longest = lv.width > lv.height ? lv.width : lv.height;
  int factor = (int)((longest + max_side - 1) / max_side);
  if (factor < 1) factor = 1;
  int mw = (int)((lv.width + factor - 1) / factor);
  int mh = (int)((lv.height + factor - 1) / factor);
  wsisa_image *mask = NULL, *band = NULL;
  uint32_t *counts = NULL;
  if ((rc = wsisa_image_new(mw, mh, 1, WSISA_U8, &mask, e))) goto fail;
  /* Read several mask rows' worth of slide rows per OpenSlide call. */
  const int mrows_per_band = factor >= 256 ? 1 : 256 / factor;
  counts = calloc((size_t)mw * (size_t)mrows_per_band, 2 * sizeof *counts);
  if (!counts) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory for the tissue mask");
    goto fail;
  }
  for (int my0 = 0; my0 < mh; my0 += mrows_per_band) {
    int64_t y0 = (int64_t)my0 * factor;
    int64_t want = (int64_t)mrows_per_band * factor;
    int rows = (int)(lv.height - y0 < want ? lv.height - y0 : want);
    if ((rc = wsisa_slide_read_rgb(slide, level, 0, y0, (int)lv.width, rows, &band, e)))
      goto fail;
    memset(counts, 0, (size_t)mw * (size_t)mrows_per_band * 2 * sizeof *counts);
    for (int y = 0; y < rows; y++) {
      const uint8_t *row = wsisa_image_row(band, y);
      uint32_t *c = counts + (size_t)(y / factor) * mw * 2;
      for (int64_t x = 0; x < lv.width; x++) {
        int mx = (int)(x / factor);
        c[2 * mx] += (uint32_t)is_tissue(row + 3 * x);
        c[2 * mx + 1]++;
      }
    }
    int band_mrows = (rows + factor - 1) / factor;
    for (int k = 0; k < band_mrows; k++) {
      uint8_t *mrow = wsisa_image_row(mask, my0 + k);
      const uint32_t *c = counts + (size_t)k * mw * 2;
      for (int mx = 0; mx < mw; mx++) mrow[mx] = 2 * c[2 * mx] >= c[2 * mx + 1] ? 255 : 0;
    }
    wsisa_image_free(band);
    band = NULL;
  }
  free(counts);
  *downsample = lv.downsample * factor;
  *out = mask;
  return 0;
fail:
  free(counts);
  wsisa_image_free(band);
  wsisa_image_free(mask);
  return rc;
}

/* Share of the tile's footprint (in mask pixels) covered by tissue. */
static double tissue_fraction(const wsisa_image *mask, double scale, const wsisa_tile *t) {
  int x0 = (int)floor((double)t->x * scale), y0 = (int)floor((double)t->y * scale);
  int x1 = (int)ceil((double)(t->x + t->width) * scale);
  int y1 = (int)ceil((double)(t->y + t->height) * scale);
  if (x1 > mask->width) x1 = mask->width;
  if (y1 > mask->height) y1 = mask->height;
  if (x1 <= x0) x1 = x0 + 1 <= mask->width ? x0 + 1 : x0;
  if (y1 <= y0) y1 = y0 + 1 <= mask->height ? y0 + 1 : y0;
  size_t on = 0, all = 0;
  for (int y = y0; y < y1; y++) {
    const uint8_t *row = wsisa_image_row(mask, y);
    for (int x = x0; x < x1; x++) {
      on += row[x] != 0;
      all++;
    }
  }
  return all ? (double)on / (double)all : 0.0;
}

int wsisa_grid_make(wsisa_slide *slide, int level, int tile_size, int overlap,
                    wsisa_grid **out, wsisa_err *e) {
  *out = NULL;
  wsisa_level lv;
  int rc = wsisa_slide_level(slide, level, &lv, e);
  if (rc) return rc;
  if (tile_size <= 0)
    return wsisa_error(e, WSISA_EUSAGE, "--tile %d: tile size must be positive", tile_size);
  if (tile_size > lv.width || tile_size > lv.height)
    return wsisa_error(e, WSISA_EUSAGE, "--tile %d: larger than level %d (%lldx%lld)",
                       tile_size, level, (long long)lv.width, (long long)lv.height);
  if (overlap < 0 || overlap >= tile_size)
    return wsisa_error(e, WSISA_EUSAGE, "--overlap %d: must be in 0..%d (below the tile size)",
                       overlap, tile_size - 1);
  wsisa_grid *g = calloc(1, sizeof *g);
  if (!g) return wsisa_error(e, WSISA_ENOMEM, "out of memory for the tile grid");
  int step = tile_size - overlap;
  g->level = level;
  g->tile_size = tile_size;
  g->overlap = overlap;
  g->level_width = lv.width;
  g->level_height = lv.height;
  g->tissue_threshold = WSISA_TISSUE_THRESHOLD;
  /* Tiles start every `step` pixels until one reaches the far edge. */
  g->cols = (int)((lv.width - overlap + step - 1) / step);
  g->rows = (int)((lv.height - overlap + step - 1) / step);
  g->ntiles = (size_t)g->cols * (size_t)g->rows;
  g->tiles = calloc(g->ntiles, sizeof *g->tiles);
  wsisa_image *mask = NULL;
  double mask_downsample = 1;
  if (!g->tiles) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory for %zu tiles", g->ntiles);
    goto fail;
  }
  if ((rc = wsisa_tissue_mask(slide, 2048, &mask, &mask_downsample, e))) goto fail;
  double scale = lv.downsample / mask_downsample; /* level pixels -> mask pixels */
  for (int r = 0; r < g->rows; r++)
    for (int c = 0; c < g->cols; c++) {
      wsisa_tile *t = &g->tiles[(size_t)r * g->cols + c];
      t->index = r * g->cols + c;
      t->col = c;
      t->row = r;
      t->x = (int64_t)c * step;
      t->y = (int64_t)r * step;
      t->width = (int)(lv.width - t->x < tile_size ? lv.width - t->x : tile_size);
      t->height = (int)(lv.height - t->y < tile_size ? lv.height - t->y : tile_size);
      t->tissue_fraction = tissue_fraction(mask, scale, t);
      t->tissue = t->tissue_fraction >= g->tissue_threshold;
      g->ntissue += (size_t)t->tissue;
    }
  wsisa_image_free(mask);
  *out = g;
  return 0;
fail:
  wsisa_image_free(mask);
  wsisa_grid_free(g);
  return rc;
}

void wsisa_grid_free(wsisa_grid *grid) {
  if (!grid) return;
  free(grid->tiles);
  free(grid);
}
