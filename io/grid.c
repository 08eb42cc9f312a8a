/* The tile grid of a slide at a target resolution, with each tile's level-0
 * rectangle, and tissue detection on a low-resolution level so that
 * background tiles can be skipped. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

/* Bright field (H&E on glass): a pixel is tissue when it is coloured (stain)
 * or dark; glass is bright and grey. H&E tissue is pink to purple, so
 * saturation separates it well; the darkness test keeps dense, dark nuclei
 * clusters and pen-free dark tissue. */
#define TISSUE_MIN_SATURATION 20
#define TISSUE_MAX_LUMA 200
/* Dark field (fluorescence): the background is black and tissue is lit, so
 * any channel clearly above the dark background counts. */
#define TISSUE_MIN_SIGNAL 40
/* A slide whose median pixel is darker than this has a dark background. */
#define DARK_BACKGROUND_LUMA 100

static int luma_of(const uint8_t *p) { return (299 * p[0] + 587 * p[1] + 114 * p[2]) / 1000; }

static int is_tissue_bright_field(const uint8_t *p, int luma) {
  int mx = p[0], mn = p[0];
  for (int c = 1; c < 3; c++) {
    if (p[c] > mx) mx = p[c];
    if (p[c] < mn) mn = p[c];
  }
  return mx - mn >= TISSUE_MIN_SATURATION || luma <= TISSUE_MAX_LUMA;
}

static int is_tissue_dark_field(const uint8_t *p) {
  return p[0] >= TISSUE_MIN_SIGNAL || p[1] >= TISSUE_MIN_SIGNAL || p[2] >= TISSUE_MIN_SIGNAL;
}

/* Per mask pixel, three counts: bright-field tissue, dark-field tissue, all.
 * Both readings are counted in one pass over the level; the slide's median
 * luma then says which one the mask takes. */
int wsisa_tissue_mask(wsisa_slide *slide, int max_side, wsisa_image **out,
                      double *downsample, int *dark_background, wsisa_err *e) {
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
  uint8_t *kept = NULL;
  uint64_t histogram[256] = {0};
  if ((rc = wsisa_image_new(mw, mh, 1, WSISA_U8, &mask, e))) goto fail;
  /* Read several mask rows' worth of slide rows per OpenSlide call. */
  const int mrows_per_band = factor >= 256 ? 1 : 256 / factor;
  counts = calloc((size_t)mw * (size_t)mrows_per_band, 3 * sizeof *counts);
  /* the dark-field votes wait in `kept` (as 255/0 per mask pixel, in the
   * mask's own layout) until the median is known */
  kept = calloc((size_t)mw * (size_t)mh, sizeof *kept);
  if (!counts || !kept) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory for the tissue mask");
    goto fail;
  }
  for (int my0 = 0; my0 < mh; my0 += mrows_per_band) {
    int64_t y0 = (int64_t)my0 * factor;
    int64_t want = (int64_t)mrows_per_band * factor;
    int rows = (int)(lv.height - y0 < want ? lv.height - y0 : want);
    if ((rc = wsisa_slide_read_rgb(slide, level, 0, y0, (int)lv.width, rows, &band, e)))
      goto fail;
    memset(counts, 0, (size_t)mw * (size_t)mrows_per_band * 3 * sizeof *counts);
    for (int y = 0; y < rows; y++) {
      const uint8_t *row = wsisa_image_row(band, y);
      uint32_t *c = counts + (size_t)(y / factor) * mw * 3;
      for (int64_t x = 0; x < lv.width; x++) {
        int mx = (int)(x / factor);
        const uint8_t *p = row + 3 * x;
        int luma = luma_of(p);
        histogram[luma]++;
        c[3 * mx] += (uint32_t)is_tissue_bright_field(p, luma);
        c[3 * mx + 1] += (uint32_t)is_tissue_dark_field(p);
        c[3 * mx + 2]++;
      }
    }
    int band_mrows = (rows + factor - 1) / factor;
    for (int k = 0; k < band_mrows; k++) {
      uint8_t *mrow = wsisa_image_row(mask, my0 + k);
      uint8_t *krow = kept + (size_t)(my0 + k) * mw;
      const uint32_t *c = counts + (size_t)k * mw * 3;
      for (int mx = 0; mx < mw; mx++) {
        mrow[mx] = 2 * c[3 * mx] >= c[3 * mx + 2] ? 255 : 0;
        krow[mx] = 2 * c[3 * mx + 1] >= c[3 * mx + 2] ? 255 : 0;
      }
    }
    wsisa_image_free(band);
    band = NULL;
  }
  uint64_t total = (uint64_t)lv.width * (uint64_t)lv.height, seen = 0;
  int median = 0;
  while (median < 255 && (seen += histogram[median]) < (total + 1) / 2) median++;
  int dark = median < DARK_BACKGROUND_LUMA;
  if (dark)
    for (int y = 0; y < mh; y++) {
      uint8_t *mrow = wsisa_image_row(mask, y);
      for (int x = 0; x < mw; x++) mrow[x] = kept[(size_t)y * mw + x];
    }
  free(counts);
  free(kept);
  *downsample = lv.downsample * factor;
  if (dark_background) *dark_background = dark;
  *out = mask;
  return 0;
fail:
  free(counts);
  free(kept);
  wsisa_image_free(band);
  wsisa_image_free(mask);
  return rc;
}

/* Share of the tile's footprint (in mask pixels) covered by tissue; `scale`
 * is mask pixels per target pixel. */
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

/* Tiles start every `step` pixels until one reaches the far edge; a slide
 * smaller than one tile is one clipped tile. */
static int64_t tiles_along(int64_t length, int tile_size, int overlap) {
  int step = tile_size - overlap;
  /* (length - tile_size) / step + 1 rounded up: no sum past INT64_MAX on a
   * slide that says it is that wide */
  if (length <= tile_size) return 1;
  return (length - tile_size) / step + ((length - tile_size) % step != 0) + 1;
}

int wsisa_grid_make_scaled(wsisa_slide *slide, const wsisa_scale *scale, int tile_size,
                           int overlap, wsisa_grid **out, wsisa_err *e) {
  *out = NULL;
  if (tile_size <= 0 || tile_size > WSISA_TILE_SIZE_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "--tile-size %d: must be from 1 to %d target pixels",
                       tile_size, WSISA_TILE_SIZE_MAX);
  if (overlap < 0 || overlap >= tile_size)
    return wsisa_error(e, WSISA_EUSAGE, "--overlap %d: must be in 0..%d (below the tile size)",
                       overlap, tile_size - 1);
  if (scale->width < 1 || scale->height < 1 || scale->factor_q < WSISA_SCALE_ONE)
    return wsisa_error(e, WSISA_EINTERNAL, "tile grid: resolution plan not made");
  int64_t cols = tiles_along(scale->width, tile_size, overlap);
  int64_t rows = tiles_along(scale->height, tile_size, overlap);
  if (cols > INT_MAX / rows)
    return wsisa_error(e, WSISA_EUSAGE, "--tile-size %d: %lld x %lld tiles are too many", tile_size,
                       (long long)cols, (long long)rows);
  wsisa_grid *g = calloc(1, sizeof *g);
  if (!g) return wsisa_error(e, WSISA_ENOMEM, "out of memory for the tile grid");
  int step = tile_size - overlap;
  g->scale = *scale;
  g->level = scale->level;
  g->tile_size = tile_size;
  g->overlap = overlap;
  g->width = scale->width;
  g->height = scale->height;
  g->tissue_threshold = WSISA_TISSUE_THRESHOLD;
  g->cols = (int)cols;
  g->rows = (int)rows;
  g->ntiles = (size_t)g->cols * (size_t)g->rows;
  g->tiles = calloc(g->ntiles, sizeof *g->tiles);
  wsisa_image *mask = NULL;
  double mask_downsample = 1;
  int rc;
  if (!g->tiles) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory for %zu tiles", g->ntiles);
    goto fail;
  }
  if ((rc = wsisa_tissue_mask(slide, 2048, &mask, &mask_downsample, &g->dark_background, e)))
    goto fail;
  const double level0_step = wsisa_scale_step(scale);
  const double mask_scale = level0_step / mask_downsample; /* target pixels -> mask pixels */
  for (int r = 0; r < g->rows; r++)
    for (int c = 0; c < g->cols; c++) {
      wsisa_tile *t = &g->tiles[(size_t)r * g->cols + c];
      t->index = r * g->cols + c;
      t->col = c;
      t->row = r;
      t->x = (int64_t)c * step;
      t->y = (int64_t)r * step;
      t->width = (int)(g->width - t->x < tile_size ? g->width - t->x : tile_size);
      t->height = (int)(g->height - t->y < tile_size ? g->height - t->y : tile_size);
      int64_t x0 = llround((double)t->x * level0_step);
      int64_t y0 = llround((double)t->y * level0_step);
      t->level0.x = x0;
      t->level0.y = y0;
      t->level0.width = llround((double)(t->x + t->width) * level0_step) - x0;
      t->level0.height = llround((double)(t->y + t->height) * level0_step) - y0;
      t->tissue_fraction = tissue_fraction(mask, mask_scale, t);
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

int wsisa_grid_make(wsisa_slide *slide, int level, int tile_size, int overlap,
                    wsisa_grid **out, wsisa_err *e) {
  *out = NULL;
  wsisa_scale scale;
  int rc = wsisa_scale_native(slide, level, &scale, e);
  if (rc) return rc;
  return wsisa_grid_make_scaled(slide, &scale, tile_size, overlap, out, e);
}

void wsisa_grid_free(wsisa_grid *grid) {
  if (!grid) return;
  free(grid->tiles);
  free(grid);
}

void wsisa_grid_tile_to_level0(const wsisa_grid *grid, const wsisa_tile *tile, double px,
                               double py, double *x0, double *y0) {
  wsisa_scale_to_level0(&grid->scale, (double)tile->x + px, (double)tile->y + py, x0, y0);
}

int wsisa_grid_tile_read(wsisa_slide *slide, const wsisa_grid *grid, const wsisa_tile *tile,
                         wsisa_image **out, wsisa_err *e) {
  return wsisa_slide_read_scaled(slide, &grid->scale, tile->x, tile->y, tile->width,
                                 tile->height, out, e);
}
