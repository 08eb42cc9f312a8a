/* Synthetic pyramidal slides for the tests, written with libtiff in layouts
 * OpenSlide 3.4 reads: Aperio-style SVS (ImageDescription starting "Aperio",
 * MPP and AppMag in it) and generic tiled TIFF pyramids (resolution tags). */
#ifndef WSISA_TESTS_SYNTHSLIDE_H
#define WSISA_TESTS_SYNTHSLIDE_H

#include "core/core.h"
#include "tests/testutil.h"

typedef enum { TU_SLIDE_APERIO = 0, TU_SLIDE_GENERIC } tu_slide_kind;

typedef struct tu_slide_spec {
  tu_slide_kind kind;
  double mpp;          /* Aperio: "MPP = " in the ImageDescription; 0: none */
  double app_mag;      /* Aperio: "AppMag = "; 0: none */
  int resolution_unit; /* resolution tags on every level: RESUNIT_CENTIMETER or
                          RESUNIT_INCH; 0: no tags */
  double resolution;   /* pixels per unit at level 0, x (and y unless resolution_y) */
  double resolution_y; /* y when it differs (non-square pixels); 0: as x */
  int levels;          /* pyramid levels, level 0 included */
  int level_step;      /* downsample from one level to the next (Aperio 4, generic 2) */
  int tile;            /* TIFF tile side, a multiple of 16 */
} tu_slide_spec;

/* Write `base` (RGB u8) as level 0 of a pyramid; each further level is the
 * rounded mean of level_step x level_step blocks of the one above (edges
 * dropped). Uncompressed, so the pixels read back are the ones written.
 * Returns 0, or -1 with the reason on stderr. */
int tu_slide_write(const char *path, const wsisa_image *base, const tu_slide_spec *spec);

/* Every pixel of `img` as a k x k block (nearest-neighbour upsampling). */
wsisa_image *tu_upsample(const wsisa_image *img, int k);
/* Rounded mean of k x k blocks; width / k x height / k. */
wsisa_image *tu_block_mean(const wsisa_image *img, int k);

/* The region of the bundled 20x sample (0.499 um/pixel) the 40x slides are
 * made of: glass on the left, epidermis and dermis on the right. */
#define TU_SYNTH_X 0
#define TU_SYNTH_Y 1536
#define TU_SYNTH_SIDE 1024

/* The test slides, made from that region upsampled 2x (0.25 um/pixel, 40x,
 * 2048 x 2048 at level 0):
 * (a) tu_synth_svs40(path, 1): Aperio SVS, MPP = 0.25, AppMag = 40, levels
 *     at downsample 1, 4, 16;
 * (b) tu_synth_svs40(path, 0): the same without MPP;
 * (c) tu_synth_generic_cm: generic tiled TIFF, 40000 pixels per centimetre,
 *     levels at downsample 1, 2, 4;
 * (d) tu_synth_fluorescence: the same region as a dark-field image (black
 *     background, nuclei bright blue), generic TIFF at 101600 dpi (0.25 um),
 *     levels at downsample 1, 4, 16.
 * Return 0, or -1 with the reason on stderr. */
int tu_synth_svs40(const char *path, int with_mpp);
/* (e) tu_synth_svs40_large: the sample's region (0, 0, 2048, 2048) made the
 * same way, an Aperio SVS of 4096 x 4096 at level 0, MPP = 0.25, AppMag =
 * 40, levels at downsample 1, 4, 16 (the tilings' agreement at 40x,
 * tests/test_engine_exec_tiling.c). Read at 0.5 um/pixel (level 0 averaged 2 x 2)
 * it gives that region's pixels back. */
#define TU_SYNTH_LARGE_SIDE 2048
int tu_synth_svs40_large(const char *path);
/* (f) tu_synth_sample_od: the whole bundled sample (2220 x 2967) with its
 * optical density times `factor` (tu_od_scale: paler below 1, darker
 * above), a generic tiled TIFF at its MPP (0.499 um/pixel in pixels per
 * centimetre), levels at downsample 1, 4. */
int tu_synth_sample_od(const char *path, double factor);
int tu_synth_generic_cm(const char *path);
int tu_synth_fluorescence(const char *path);
/* The sample region itself (TU_SYNTH_* at 0.499 um/pixel), RGB u8. */
wsisa_image *tu_synth_region(void);

/* (f) tu_synth_mosaic: a whole slide in small, as wsisa-bench's mosaics are
 * made of the whole sample: the sample's region (TU_MOSAIC_X, TU_MOSAIC_Y,
 * TU_MOSAIC_SIDE), dense with nuclei, mirrored into kx x ky copies (every
 * other copy flipped, so neighbours meet edge to edge), a generic tiled TIFF
 * at 0.499 um/pixel (resolution tags), levels at downsample 1 and 2. */
#define TU_MOSAIC_X 1100
#define TU_MOSAIC_Y 300
#define TU_MOSAIC_SIDE 600
int tu_synth_mosaic(const char *path, int kx, int ky);
/* Every pixel of `img` into kx x ky copies, mirrored as tu_synth_mosaic's. */
wsisa_image *tu_mirror(const wsisa_image *img, int kx, int ky);

#endif
