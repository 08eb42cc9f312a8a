/* io: slides through OpenSlide (levels, tile grid, tissue detection), PNG and
 * TIFF images, JSON helpers. Formats only; no science. */
#ifndef WSISA_IO_H
#define WSISA_IO_H

#include <stdint.h>

#include "core/core.h"

/* ---- slides --------------------------------------------------------------- */

typedef struct wsisa_slide wsisa_slide;

typedef struct wsisa_level {
  int64_t width, height;
  double downsample;
} wsisa_level;

/* Open any slide OpenSlide reads. Errors name the path and what is wrong. */
int wsisa_slide_open(const char *path, wsisa_slide **out, wsisa_err *e);
void wsisa_slide_close(wsisa_slide *slide);
const char *wsisa_slide_path(const wsisa_slide *slide);
const char *wsisa_slide_vendor(const wsisa_slide *slide);
int wsisa_slide_level_count(const wsisa_slide *slide);
/* Fails with WSISA_EUSAGE for a level out of range. */
int wsisa_slide_level(const wsisa_slide *slide, int level, wsisa_level *out,
                      wsisa_err *e);
/* Microns per pixel at level 0; returns 1 (and leaves the outputs at 0) when the
 * slide does not say. */
int wsisa_slide_mpp(const wsisa_slide *slide, double *mpp_x, double *mpp_y);
/* Objective power when the slide says, else 0. */
double wsisa_slide_objective(const wsisa_slide *slide);
/* Read a region of `level` (x, y in that level's pixels) as packed RGB u8:
 * OpenSlide's premultiplied ARGB is un-premultiplied, transparent is white. */
int wsisa_slide_read_rgb(wsisa_slide *slide, int level, int64_t x, int64_t y,
                         int width, int height, wsisa_image **out, wsisa_err *e);

/* ---- tile grid ------------------------------------------------------------- */

typedef struct wsisa_tile {
  int index, col, row;
  int64_t x, y;            /* origin in level pixels */
  int width, height;       /* clipped at the right and bottom edges */
  double tissue_fraction;  /* share of the tile the tissue mask covers */
  int tissue;              /* tissue_fraction >= the grid's threshold */
} wsisa_tile;

typedef struct wsisa_grid {
  int level, tile_size, overlap;
  int64_t level_width, level_height;
  int cols, rows;
  double tissue_threshold;
  size_t ntiles, ntissue;
  wsisa_tile *tiles;
} wsisa_grid;

#define WSISA_TISSUE_THRESHOLD 0.05

/* A grid of tile_size tiles with `overlap` pixels shared between neighbours.
 * tile_size must be positive and fit in the level; 0 <= overlap < tile_size. */
int wsisa_grid_make(wsisa_slide *slide, int level, int tile_size, int overlap,
                    wsisa_grid **out, wsisa_err *e);
void wsisa_grid_free(wsisa_grid *grid);

/* Tissue mask of the slide on its lowest-resolution level, further reduced so
 * neither side exceeds max_side: u8, 255 = tissue. `downsample` receives the
 * level-0 pixels per mask pixel. */
int wsisa_tissue_mask(wsisa_slide *slide, int max_side, wsisa_image **out,
                      double *downsample, wsisa_err *e);

/* ---- image files ----------------------------------------------------------- */

/* Read PNG or TIFF (detected by content, not name). PNG: u8/u16, 1-4 channels;
 * TIFF: u8/u16/i32/f32, 1-4 channels, strips or tiles. */
int wsisa_image_read(const char *path, wsisa_image **out, wsisa_err *e);
/* Read an 8-bit colour image as packed RGB (an alpha channel is dropped);
 * anything else is refused naming the file. */
int wsisa_image_read_rgb(const char *path, wsisa_image **out, wsisa_err *e);
/* Write by extension: .png (u8/u16) or .tif/.tiff (any type). */
int wsisa_image_write(const char *path, const wsisa_image *img, wsisa_err *e);

/* ---- outlines --------------------------------------------------------------- */

/* Outer boundaries of the labels of an i32 label image (4-connected
 * components) as a GeoJSON FeatureCollection of polygons in pixel-corner
 * coordinates: (x0 + x*scale, y0 + y*scale). */
int wsisa_geojson_write_at(const char *path, const wsisa_image *labels, double x0, double y0,
                           double scale, wsisa_err *e);
int wsisa_geojson_write(const char *path, const wsisa_image *labels, wsisa_err *e);

#endif
