/* io: slides through OpenSlide (levels, MPP, reading at a target resolution,
 * tile grid, tissue detection), PNG and TIFF images, JSON helpers. Formats and
 * geometry only; no science. */
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
/* A property's value as OpenSlide gives it ("tiff.XResolution"), or NULL. */
const char *wsisa_slide_property(const wsisa_slide *slide, const char *name);
/* Objective power when the slide says, else 0. */
double wsisa_slide_objective(const wsisa_slide *slide);
/* Read a region of `level` (x, y in that level's pixels) as packed RGB u8:
 * OpenSlide's premultiplied ARGB is un-premultiplied, transparent is white. */
int wsisa_slide_read_rgb(wsisa_slide *slide, int level, int64_t x, int64_t y,
                         int width, int height, wsisa_image **out, wsisa_err *e);

/* ---- physical units -----------------------------------------------------------
 * The workflow's sizes and areas are tuned for about 0.5 um/pixel (20x). A slide
 * is therefore read at a target resolution, not at a level: its MPP (microns per
 * level-0 pixel) comes from the slide or the user, the level read is the
 * coarsest one at most WSISA_MPP_TOLERANCE coarser than the target, and that
 * level is area-averaged down to the target unless it is within
 * WSISA_MPP_TOLERANCE of it (then its pixels are used as they are: the bundled
 * 0.499 um/pixel sample is read bit for bit). A target other than
 * WSISA_TARGET_MPP scales the workflow's sizes (engine/workflow: areas by the
 * square, radii linearly); a slide coarser than the target is refused, never
 * segmented with sizes meant for finer pixels. Labels of sizes, areas and
 * densities use the MPP actually read, wsisa_scale_pixel_mpp. Coordinates
 * handed to users (GeoJSON, features, tile rectangles) are in level-0 pixels,
 * QuPath's convention: level-0 x = target x * wsisa_scale_step(), on pixel
 * corners (pixel i spans [i, i + 1), its centre at i + 0.5).
 *
 * Plain images (PNG/TIFF tiles) have no pyramid: without an MPP they are taken
 * as they are, as if at the target resolution (the behaviour before physical
 * units); given an MPP (--mpp, inputs.slide_mpp) they are area-averaged to the
 * target like a one-level slide. */

#define WSISA_TARGET_MPP 0.5       /* inputs.mpp's default, um per target pixel */
/* A level this close to the target is used as it is: 1 % in length keeps
 * every size within 2 % in area of what the parameters are tuned for (the
 * bundled 0.499 um/pixel sample is within it); further off, it is resampled. */
#define WSISA_MPP_TOLERANCE 0.01
#define WSISA_MPP_ANISOTROPY 0.01  /* mpp-x and mpp-y further apart: refused */
#define WSISA_MPP_MIN 0.01         /* accepted MPP values, user-given or read */
#define WSISA_MPP_MAX 100.0
/* A resampling factor is held as a whole number of 2^-18 pixels so that the
 * area weights, and so the averaged pixels, are exact integers. */
#define WSISA_SCALE_ONE ((int64_t)1 << 18)
#define WSISA_SCALE_MAX_FACTOR 256

typedef enum wsisa_mpp_source {
  WSISA_MPP_NONE = 0,   /* unknown */
  WSISA_MPP_USER,       /* given by the user: inputs.slide_mpp, --mpp */
  WSISA_MPP_OPENSLIDE,  /* the properties openslide.mpp-x and openslide.mpp-y */
  WSISA_MPP_TIFF_CM,    /* tiff.XResolution/YResolution in pixels per centimetre */
  WSISA_MPP_TIFF_INCH   /* the same per inch, at a density only a microscope has */
} wsisa_mpp_source;

/* "none", "user", "openslide", "tiff-centimeter", "tiff-inch". */
const char *wsisa_mpp_source_name(wsisa_mpp_source source);
/* A phrase for people: "the slide's openslide.mpp-x/-y properties", ... */
const char *wsisa_mpp_source_text(wsisa_mpp_source source);

/* The slide's own MPP at level 0 and where it comes from: OpenSlide's
 * openslide.mpp-x/-y, else the TIFF resolution tags when they describe a
 * microscope (centimetre units, or inches at WSISA_MPP_TIFF_MIN_DPI or more;
 * OpenSlide 3.4 does not convert them). WSISA_MPP_NONE, with 0 and 0, when the
 * slide does not say. Values are as read: no anisotropy or range check. */
#define WSISA_MPP_TIFF_MIN_DPI 2540.0  /* 10 um per pixel: far above a screen's 72/96 dpi */
wsisa_mpp_source wsisa_slide_mpp(const wsisa_slide *slide, double *mpp_x, double *mpp_y);

/* How a slide (or a plain image) is read at a target resolution. Plain data:
 * it can be copied, stored with a tile and sent between processes. */
typedef struct wsisa_scale {
  double mpp_x, mpp_y;        /* um per level-0 pixel; 0 for a plain image without MPP */
  double mpp;                 /* their mean, the one the factor uses */
  wsisa_mpp_source source;
  double target_mpp;          /* um per target pixel */
  int level;                  /* the pyramid level read (0 for a plain image) */
  double level_downsample;    /* level-0 pixels per level pixel */
  double level_mpp;           /* um per pixel of that level (0 when mpp is) */
  int64_t level_width, level_height;
  int64_t factor_q;           /* level pixels per target pixel, in units of 1/WSISA_SCALE_ONE;
                                 WSISA_SCALE_ONE: no resampling */
  double factor;              /* factor_q / WSISA_SCALE_ONE (exact) */
  int64_t width, height;      /* the level in target pixels: floor(level size / factor),
                                 a partial pixel at the right and bottom edges dropped */
} wsisa_scale;

/* The resolution plan for reading `slide` at target_mpp (um per pixel, e.g.
 * WSISA_TARGET_MPP). slide_mpp > 0 overrides the slide's own MPP (source
 * WSISA_MPP_USER); 0 takes the slide's. Refused, with one line naming the slide:
 * no MPP (the line says to give inputs.slide_mpp or --mpp), non-square pixels
 * (mpp-x and mpp-y more than WSISA_MPP_ANISOTROPY apart), an MPP or target
 * outside WSISA_MPP_MIN..WSISA_MPP_MAX, a slide coarser than the target (no
 * level at or finer than target * (1 + WSISA_MPP_TOLERANCE)), a factor above
 * WSISA_SCALE_MAX_FACTOR. */
int wsisa_scale_choose(const wsisa_slide *slide, double slide_mpp, double target_mpp,
                       wsisa_scale *out, wsisa_err *e);
/* The same reading from pyramid level `level` (>= 0) instead of the coarsest
 * that suits, resampled to the target; refused when that level is coarser than
 * the target or not in the slide. level < 0 chooses, as wsisa_scale_choose. */
int wsisa_scale_choose_level(const wsisa_slide *slide, double slide_mpp, double target_mpp,
                             int level, wsisa_scale *out, wsisa_err *e);
/* `level` as it is (factor 1), for callers that still work in level pixels:
 * target_mpp is that level's MPP when the slide gives one, else 0. */
int wsisa_scale_native(const wsisa_slide *slide, int level, wsisa_scale *out, wsisa_err *e);
/* The plan for a plain width x height image named `name`: image_mpp 0 takes it
 * as it is (factor 1, source WSISA_MPP_NONE); else as a one-level slide of that
 * MPP (source WSISA_MPP_USER), with the same refusals. */
int wsisa_scale_for_image(const char *name, int width, int height, double image_mpp,
                          double target_mpp, wsisa_scale *out, wsisa_err *e);

/* Level-0 pixels per target pixel: level_downsample * factor. */
double wsisa_scale_step(const wsisa_scale *scale);
/* The um per pixel actually read: the level's MPP times the factor (within
 * WSISA_MPP_TOLERANCE of target_mpp), what every label of a size, area or
 * density uses; target_mpp for an image taken as it is (source
 * WSISA_MPP_NONE: as if at the target resolution). */
double wsisa_scale_pixel_mpp(const wsisa_scale *scale);
/* Target-pixel position -> level-0 pixel position and back (positions on the
 * pixel-corner lattice: target pixel (i, j) spans [i, i+1) x [j, j+1)). For a
 * label image of the target rectangle at (x, y), level-0 GeoJSON is
 * wsisa_geojson_write_at(path, labels, X0, Y0, wsisa_scale_step(s)) with
 * (X0, Y0) = wsisa_scale_to_level0(s, x, y); a nucleus centroid (cx, cy) within
 * it is at wsisa_scale_to_level0(s, x + cx, y + cy). */
void wsisa_scale_to_level0(const wsisa_scale *scale, double x, double y, double *x0, double *y0);
void wsisa_scale_from_level0(const wsisa_scale *scale, double x0, double y0, double *x,
                             double *y);

/* RGB u8 of the target-pixel rectangle (x, y, width, height) of the slide:
 * the level region under it read and area-averaged by the factor (or read as
 * it is when the factor is 1). The rectangle must lie in scale->width x
 * scale->height. */
int wsisa_slide_read_scaled(wsisa_slide *slide, const wsisa_scale *scale, int64_t x, int64_t y,
                            int width, int height, wsisa_image **out, wsisa_err *e);
/* A plain image read as RGB u8 at target_mpp: as it is when image_mpp is 0,
 * else area-averaged (see wsisa_scale_for_image). *scale (may be NULL)
 * receives the plan, for the mapping to the image's own pixels. */
int wsisa_image_read_scaled(const char *path, double image_mpp, double target_mpp,
                            wsisa_image **out, wsisa_scale *scale, wsisa_err *e);

/* Area averaging (box filter) of a u8 image by `factor` (1..WSISA_SCALE_MAX_FACTOR,
 * taken on the 1/WSISA_SCALE_ONE lattice): output pixel (i, j) is the mean of
 * the source over [i*f, (i+1)*f) x [j*f, (j+1)*f), source pixels partly inside
 * weighted by the part inside, computed in integers and rounded half up. The
 * output is floor(width / f) x floor(height / f). */
int wsisa_image_area_average(const wsisa_image *src, double factor, wsisa_image **out,
                             wsisa_err *e);

/* ---- tile grid ------------------------------------------------------------- */

/* A rectangle in level-0 slide pixels. */
typedef struct wsisa_rect {
  int64_t x, y, width, height;
} wsisa_rect;

typedef struct wsisa_tile {
  int index, col, row;
  int64_t x, y;            /* origin in target pixels (the grid's resolution) */
  int width, height;       /* in target pixels, clipped at the right and bottom edges */
  wsisa_rect level0;       /* the same rectangle in level-0 pixels, corners rounded to
                              the nearest pixel (exact: wsisa_scale_to_level0) */
  double tissue_fraction;  /* share of the tile the tissue mask covers */
  int tissue;              /* tissue_fraction >= the grid's threshold */
} wsisa_tile;

typedef struct wsisa_grid {
  wsisa_scale scale;       /* how the slide is read: level, factor, MPP */
  int level;               /* scale.level */
  int tile_size, overlap;  /* in target pixels */
  int64_t width, height;   /* the slide in target pixels (scale.width, scale.height) */
  int cols, rows;
  double tissue_threshold;
  int dark_background;     /* the tissue mask took tissue as bright on dark (fluorescence) */
  size_t ntiles, ntissue;
  wsisa_tile *tiles;
} wsisa_grid;

#define WSISA_TISSUE_THRESHOLD 0.05
/* The largest tile side a grid takes, in target pixels. */
#define WSISA_TILE_SIZE_MAX (1 << 20)

/* A grid of tile_size tiles, `overlap` pixels shared between neighbours, laid
 * out at the scale's target resolution (see wsisa_scale_choose), with each
 * tile's level-0 rectangle and tissue share. tile_size must be in
 * 1..WSISA_TILE_SIZE_MAX and 0 <= overlap < tile_size; a tile larger than the slide gives one clipped tile. */
int wsisa_grid_make_scaled(wsisa_slide *slide, const wsisa_scale *scale, int tile_size,
                           int overlap, wsisa_grid **out, wsisa_err *e);
/* The same on `level` as it is (wsisa_scale_native): tiles in level pixels. */
int wsisa_grid_make(wsisa_slide *slide, int level, int tile_size, int overlap,
                    wsisa_grid **out, wsisa_err *e);
void wsisa_grid_free(wsisa_grid *grid);
/* Level-0 position of pixel (px, py) of a tile (pixel corners; px, py in
 * target pixels from the tile's origin): origin + p * wsisa_scale_step(). */
void wsisa_grid_tile_to_level0(const wsisa_grid *grid, const wsisa_tile *tile, double px,
                               double py, double *x0, double *y0);
/* RGB u8 of one tile at the grid's target resolution. */
int wsisa_grid_tile_read(wsisa_slide *slide, const wsisa_grid *grid, const wsisa_tile *tile,
                         wsisa_image **out, wsisa_err *e);

/* Tissue mask of the slide on its lowest-resolution level, further reduced so
 * neither side exceeds max_side: u8, 255 = tissue. `downsample` receives the
 * level-0 pixels per mask pixel. Bright-field slides (a light background: the
 * median pixel is light) take coloured or dark pixels as tissue; dark-field
 * ones (fluorescence: a dark background) take lit pixels; *dark_background
 * (may be NULL) says which. */
int wsisa_tissue_mask(wsisa_slide *slide, int max_side, wsisa_image **out,
                      double *downsample, int *dark_background, wsisa_err *e);

/* ---- inputs: a slide or an image ------------------------------------------------
 * What a study or `wsisa segment` reads, with two backends (io/input.c): a
 * slide through OpenSlide (pyramid, MPP, tissue detection), or a plain
 * PNG/JPEG/TIFF image (one level; its MPP only when the user gives it).
 * Callers ask the input for its resolution plan and pixels, never which
 * backend reads it. */

typedef enum wsisa_input_kind {
  WSISA_INPUT_AUTO = 0, /* by content: vendor formats, and generic TIFFs with a
                           pyramid or a pixel size, are slides; the rest images */
  WSISA_INPUT_SLIDE,
  WSISA_INPUT_IMAGE
} wsisa_input_kind;

typedef struct wsisa_input wsisa_input;

/* "slide", "image" ("auto"). */
const char *wsisa_input_kind_name(wsisa_input_kind kind);
/* Open `path` with the backend `kind` names (WSISA_INPUT_AUTO: detected).
 * Errors are the backend's: wsisa_slide_open's, wsisa_image_read_rgb's. */
int wsisa_input_open(const char *path, wsisa_input_kind kind, wsisa_input **out, wsisa_err *e);
void wsisa_input_close(wsisa_input *in);
wsisa_input_kind wsisa_input_kind_of(const wsisa_input *in);
/* Level 0's size in pixels. */
void wsisa_input_level0(const wsisa_input *in, int64_t *width, int64_t *height);
/* Its pyramid levels: a slide's, 1 for an image. */
int wsisa_input_level_count(const wsisa_input *in);
/* The plan for reading it at target_mpp: wsisa_scale_choose_level for a
 * slide, wsisa_scale_for_image for an image (mpp 0: the slide's own, the
 * image as it is). level < 0 chooses the coarsest level that suits; an image
 * has level 0 only. */
int wsisa_input_scale(const wsisa_input *in, double mpp, double target_mpp, int level,
                      wsisa_scale *out, wsisa_err *e);
/* RGB u8 of the target-pixel rectangle of the plan `scale` (made on this
 * input: one made on the file before it changed size is refused). */
int wsisa_input_read_scaled(wsisa_input *in, const wsisa_scale *scale, int64_t x, int64_t y,
                            int width, int height, wsisa_image **out, wsisa_err *e);
/* The same, and when the rectangle is all of an image's pixels at their own
 * resolution, those very pixels handed over instead of a copy: the input
 * then has none left to read, and only closing it remains. */
int wsisa_input_take_scaled(wsisa_input *in, const wsisa_scale *scale, int64_t x, int64_t y,
                            int width, int height, wsisa_image **out, wsisa_err *e);
/* Whether its background is dark (fluorescence), as io's tissue detection
 * of a slide finds; 0 for an image. */
int wsisa_input_dark_background(wsisa_input *in);
/* Its tile grid at `scale` (wsisa_grid_make_scaled); an image has none. */
int wsisa_input_grid(wsisa_input *in, const wsisa_scale *scale, int tile_size, int overlap,
                     wsisa_grid **out, wsisa_err *e);

/* ---- reference annotations ---------------------------------------------------
 * Nuclei someone drew, as a study's reference instead of the default-parameter
 * run: GeoJSON polygons (QuPath's export, level-0 coordinates) or a label
 * image (instance labels, or a binary mask whose 8-connected components are
 * the nuclei). io/annotation.c states the rasterisation and coverage rules. */

typedef enum wsisa_annot_kind {
  WSISA_ANNOT_NONE = 0,
  WSISA_ANNOT_GEOJSON,
  WSISA_ANNOT_LABELS,
  WSISA_ANNOT_MASK
} wsisa_annot_kind;

/* "none", "geojson", "labels", "mask": the study keys. */
const char *wsisa_annot_kind_name(wsisa_annot_kind kind);

/* An annotation file and where it lies. Plain data but for the strings, which
 * the holder keeps (sent to MPI ranks field by field). */
typedef struct wsisa_annot_spec {
  wsisa_annot_kind kind;
  const char *path;           /* the annotation file */
  const char *input;          /* the slide or image it annotates, for messages */
  int64_t width0, height0;    /* that input's level 0, in pixels */
  double origin_x, origin_y;  /* labels, mask: level-0 position of the image's top-left corner */
  double downsample;          /* labels, mask: level-0 pixels per image pixel (> 0) */
  int has_region;             /* geojson: nuclei are drawn exhaustively in `region` only */
  wsisa_rect region;          /* level-0 pixels */
} wsisa_annot_spec;

typedef struct wsisa_annotation wsisa_annotation;

/* Level-0 pixels a GeoJSON vertex may lie past the slide's edge: it is then
 * taken on the edge (programs round outlines outwards); further out is refused. */
#define WSISA_ANNOT_EDGE_SLACK 1.0

/* Read and check an annotation against its input's level 0. Refused, naming
 * the file: unreadable, not JSON, not GeoJSON features, a geometry that is not
 * a Polygon or MultiPolygon, a ring that is not closed or has fewer than four
 * positions, a vertex more than WSISA_ANNOT_EDGE_SLACK past the slide's edge
 * (one within it is clamped onto the edge), no polygon at all, a region outside
 * the slide; a label image with more than one channel or floating-point or
 * negative values, an origin off the slide, or more pixels than fit on the
 * slide from its origin at its downsample (wrong size). */
int wsisa_annotation_load(const wsisa_annot_spec *spec, wsisa_annotation **out, wsisa_err *e);
void wsisa_annotation_free(wsisa_annotation *a);
/* What it was loaded from (its strings belong to the annotation). */
const wsisa_annot_spec *wsisa_annotation_spec(const wsisa_annotation *a);
/* Nuclei in the file: features with a polygon; a label image's largest label;
 * a mask's components. */
size_t wsisa_annotation_objects(const wsisa_annotation *a);
/* Is the target-pixel rectangle (x, y, w, h) read through `scale` annotated
 * (a label image under every pixel centre; every centre in the GeoJSON's
 * region; without a region, some polygon over a pixel centre)? */
int wsisa_annotation_covers(const wsisa_annotation *a, const wsisa_scale *scale, int64_t x,
                            int64_t y, int w, int h);
/* The reference of that rectangle: *labels (i32 w x h, new) numbered 1..*n in
 * raster order of each nucleus's first pixel. WSISA_EUSAGE when it is not
 * annotated. */
int wsisa_annotation_rasterize(const wsisa_annotation *a, const wsisa_scale *scale, int64_t x,
                               int64_t y, int w, int h, wsisa_image **labels, size_t *n,
                               wsisa_err *e);

/* ---- image files ----------------------------------------------------------- */

/* "PNG", "JPEG" or "TIFF" by the file's first bytes; NULL: none of them. */
const char *wsisa_image_file_kind(const char *path);
/* Read PNG, JPEG or TIFF (detected by content, not name). JPEG: 8-bit grey or
 * RGB (baseline and progressive; CMYK refused); PNG: u8/u16, 1-4 channels;
 * TIFF: u8/u16/i32/f32 (u32 as i32, refused past INT32_MAX), 1-4 channels,
 * strips or tiles; YCbCr (JPEG-compressed TIFFs), palette and other colour
 * spaces as 8-bit RGB(A). Errors say why:
 * too large (over 2^30 pixels or the memory available, refused before
 * allocating), truncated, an unsupported compression, corrupt data. */
int wsisa_image_read(const char *path, wsisa_image **out, wsisa_err *e);
/* Read an 8-bit colour image as packed RGB (an alpha channel is dropped);
 * anything else is refused naming the file. */
int wsisa_image_read_rgb(const char *path, wsisa_image **out, wsisa_err *e);
/* Write by extension: .png (u8/u16) or .tif/.tiff (any type), all or nothing
 * (a device is written in place, never replaced). */
int wsisa_image_write(const char *path, const wsisa_image *img, wsisa_err *e);
/* The same; a TIFF also carries `description` (ImageDescription, NULL: none)
 * and its pixel size `mpp` in um (resolution tags in pixels per centimetre; 0:
 * none). A PNG is written without them. */
int wsisa_image_write_meta(const char *path, const wsisa_image *img, const char *description,
                           double mpp, wsisa_err *e);
/* wsisa_image_write_meta into a stage of several outputs (io/csv.h), renamed
 * into place by wsisa_stage_commit: a command's outputs appear together or
 * not at all. */
struct wsisa_stage;
int wsisa_image_write_staged(struct wsisa_stage *s, const char *path, const wsisa_image *img,
                             const char *description, double mpp, wsisa_err *e);

/* ---- pyramids ---------------------------------------------------------------- */

/* Fill tile (x, y, w, h) of pyramid level `level` (level pixels; pixel (i, j)
 * of level k stands for level 0's (i 2^k, j 2^k), nearest, never averaged)
 * as packed RGB u8 rows `stride` bytes apart (it comes zeroed). */
typedef int (*wsisa_pyramid_paint)(void *ctx, int level, int64_t x, int64_t y, int w, int h,
                                   uint8_t *rgb, size_t stride, wsisa_err *e);
/* The levels of a width x height pyramid in tiles of `tile`: halved until
 * the longest side fits one tile. */
int wsisa_pyramid_levels(int64_t width, int64_t height, int tile);
/* How a pyramid is written: tiles of `tile` pixels (a multiple of 16);
 * jpeg_quality 0: deflate (lossless), 1..100: JPEG (YCbCr, as scanners
 * store slides) at that quality; level 0's ImageDescription (NULL: none);
 * um per level-0 pixel as resolution tags on every level, in pixels per
 * centimetre (0: none). */
typedef struct wsisa_pyramid_opts {
  int tile;
  int jpeg_quality;
  const char *description;
  double mpp;
} wsisa_pyramid_opts;
/* A tiled pyramidal RGB TIFF (BigTIFF when large) that OpenSlide and QuPath
 * open, into a stage of outputs (io/csv.h): level 0 width x height, its
 * tiles painted in raster order, level after level. */
struct wsisa_stage;
int wsisa_pyramid_write_staged(struct wsisa_stage *s, const char *path, int64_t width,
                               int64_t height, const wsisa_pyramid_opts *o,
                               wsisa_pyramid_paint paint, void *ctx, wsisa_err *e);

/* ---- outlines --------------------------------------------------------------- */

/* Where a label image's outlines lie: pixel corner (x, y) is at level-0
 * (x0 + x * scale, y0 + y * scale), taken onto [0, width0] x [0, height0]
 * (the slide's level 0; 0: not bounded) so that no vertex lies past the
 * slide's edge; mpp: um per level-0 pixel (0: unknown). */
typedef struct wsisa_outline_place {
  double x0, y0, scale;
  double width0, height0;
  double mpp;
} wsisa_outline_place;

/* Nuclei numbered across a slide: label l of a tile is nucleus first + l - 1
 * (properties "nucleus_id", "tile" when >= 0; the Feature's "id" a UUID of
 * salt and that number, as QuPath names its objects). */
typedef struct wsisa_geojson_ids {
  uint64_t first;
  long tile;
  uint32_t salt;
} wsisa_geojson_ids;

/* A FeatureCollection of nucleus outlines written feature by feature under
 * a staged name (io/csv.h): open, add label images, close. */
typedef struct wsisa_geojson_writer wsisa_geojson_writer;
struct wsisa_stage;
int wsisa_geojson_open(struct wsisa_stage *s, const char *path, wsisa_geojson_writer **out,
                       wsisa_err *e);
/* The outer boundaries of the labels of an i32 label image (4-connected
 * components), one Polygon Feature each in label order, on pixel corners
 * placed by `p`. Each nucleus's properties carry its area in level-0 pixels
 * ("area_level0_pixels": its pixels times scale^2) and in um^2 ("area_um2",
 * null when mpp is unknown), and its label ("label") or, with `ids`, its
 * number across the slide. */
int wsisa_geojson_add(wsisa_geojson_writer *w, const wsisa_image *labels,
                      const wsisa_outline_place *p, const wsisa_geojson_ids *ids,
                      wsisa_err *e);
/* Features written so far. */
size_t wsisa_geojson_count(const wsisa_geojson_writer *w);
/* End the collection, flush, sync and close (the stage still commits it);
 * frees the writer either way. */
int wsisa_geojson_close(wsisa_geojson_writer *w, wsisa_err *e);

/* One label image's outlines as a whole file (positions (x0 + x*scale,
 * y0 + y*scale), unbounded). */
int wsisa_geojson_write_at(const char *path, const wsisa_image *labels, double x0, double y0,
                           double scale, wsisa_err *e);
/* One label image's outlines into a stage of several outputs (io/csv.h). */
int wsisa_geojson_write_staged(struct wsisa_stage *s, const char *path, const wsisa_image *labels,
                               const wsisa_outline_place *p, wsisa_err *e);

#endif
