/* Synthetic pyramidal slides for the tests (see synthslide.h): libtiff writes
 * one tiled directory per level; OpenSlide finds the levels by walking them. */
#include "tests/synthslide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#include "io/io.h"
#include "tests/testutil.h"

wsisa_image *tu_upsample(const wsisa_image *img, int k) {
  wsisa_image *out = NULL;
  if (wsisa_image_new(img->width * k, img->height * k, img->channels, WSISA_U8, &out, NULL))
    return NULL;
  const int c = img->channels;
  for (int y = 0; y < out->height; y++) {
    const uint8_t *src = wsisa_image_row(img, y / k);
    uint8_t *dst = wsisa_image_row(out, y);
    for (int x = 0; x < out->width; x++) memcpy(dst + (size_t)x * c, src + (size_t)(x / k) * c, c);
  }
  return out;
}

wsisa_image *tu_block_mean(const wsisa_image *img, int k) {
  wsisa_image *out = NULL;
  int w = img->width / k, h = img->height / k;
  if (w < 1 || h < 1 || wsisa_image_new(w, h, img->channels, WSISA_U8, &out, NULL)) return NULL;
  const int c = img->channels;
  const unsigned n = (unsigned)(k * k);
  for (int y = 0; y < h; y++) {
    uint8_t *dst = wsisa_image_row(out, y);
    for (int x = 0; x < w; x++)
      for (int ch = 0; ch < c; ch++) {
        unsigned sum = 0;
        for (int dy = 0; dy < k; dy++) {
          const uint8_t *src = wsisa_image_row(img, y * k + dy);
          for (int dx = 0; dx < k; dx++) sum += src[(size_t)(x * k + dx) * c + ch];
        }
        dst[(size_t)x * c + ch] = (uint8_t)((2 * sum + n) / (2 * n));
      }
  }
  return out;
}

/* One tiled directory; the resolution tags are level 0's over `downsample`. */
static int write_level(TIFF *t, int level, const wsisa_image *img, const tu_slide_spec *spec,
                       const char *description, double downsample) {
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)img->width);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)img->height);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  /* OpenSlide 3.4's generic TIFF takes a directory after the first as a level
   * only when it is marked as a reduced-resolution image. */
  if (spec->kind == TU_SLIDE_GENERIC && level > 0)
    TIFFSetField(t, TIFFTAG_SUBFILETYPE, (uint32_t)FILETYPE_REDUCEDIMAGE);
  /* A tile larger than the level makes OpenSlide read it blank: shrink it to
   * the level (in multiples of 16, as TIFF wants). */
  int tile = spec->tile;
  int longest = img->width > img->height ? img->width : img->height;
  while (tile > 16 && tile / 2 >= longest) tile /= 2;
  TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)tile);
  TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)tile);
  if (description) TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, description);
  if (spec->resolution_unit) {
    TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, (uint16_t)spec->resolution_unit);
    double yres = spec->resolution_y > 0 ? spec->resolution_y : spec->resolution;
    TIFFSetField(t, TIFFTAG_XRESOLUTION, (float)(spec->resolution / downsample));
    TIFFSetField(t, TIFFTAG_YRESOLUTION, (float)(yres / downsample));
  }
  uint8_t *buf = calloc((size_t)tile * tile, 3);
  if (!buf) return -1;
  int rc = 0;
  for (int ty = 0; ty < img->height && !rc; ty += tile)
    for (int tx = 0; tx < img->width && !rc; tx += tile) {
      memset(buf, 0, (size_t)tile * tile * 3);
      for (int y = 0; y < tile && ty + y < img->height; y++) {
        int n = img->width - tx < tile ? img->width - tx : tile;
        memcpy(buf + (size_t)y * tile * 3, (uint8_t *)wsisa_image_row(img, ty + y) + (size_t)tx * 3,
               (size_t)n * 3);
      }
      if (TIFFWriteTile(t, buf, (uint32_t)tx, (uint32_t)ty, 0, 0) < 0) rc = -1;
    }
  free(buf);
  if (!rc && !TIFFWriteDirectory(t)) rc = -1;
  return rc;
}

int tu_slide_write(const char *path, const wsisa_image *base, const tu_slide_spec *spec) {
  TIFF *t = TIFFOpen(path, "w");
  if (!t) {
    fprintf(stderr, "%s: cannot create\n", path);
    return -1;
  }
  char description[512];
  int rc = 0;
  const wsisa_image *level = base;
  wsisa_image *owned = NULL;
  for (int l = 0; l < spec->levels && !rc; l++) {
    if (l > 0) {
      wsisa_image *next = tu_block_mean(level, spec->level_step);
      wsisa_image_free(owned);
      owned = next;
      level = next;
      if (!next) {
        rc = -1;
        break;
      }
    }
    const char *desc = NULL;
    if (spec->kind == TU_SLIDE_APERIO) {
      /* Aperio writes the scan's metadata as "|key = value" pairs after a
       * header line; OpenSlide reads MPP and AppMag from level 0's. */
      int n = snprintf(description, sizeof description,
                       "Aperio Image Library v10.0.51 (wsisa test slide)\r\n%dx%d [0,0 %dx%d] "
                       "(%dx%d) RAW/RGB",
                       base->width, base->height, base->width, base->height, spec->tile,
                       spec->tile);
      if (l == 0 && spec->app_mag > 0)
        n += snprintf(description + n, sizeof description - (size_t)n, "|AppMag = %g",
                      spec->app_mag);
      if (l == 0 && spec->mpp > 0)
        n += snprintf(description + n, sizeof description - (size_t)n, "|MPP = %.4f", spec->mpp);
      if (l > 0)
        snprintf(description + n, sizeof description - (size_t)n, " -> %dx%d", level->width,
                 level->height);
      desc = description;
    }
    rc = write_level(t, l, level, spec, desc, (double)base->width / level->width);
  }
  wsisa_image_free(owned);
  TIFFClose(t);
  if (rc) fprintf(stderr, "%s: cannot write the pyramid\n", path);
  return rc;
}

/* The rectangle (x, y, width, height) of the bundled sample's level 0; its
 * whole with width 0. */
static wsisa_image *sample_rect(int64_t x, int64_t y, int width, int height) {
  wsisa_slide *s = NULL;
  wsisa_image *img = NULL;
  wsisa_level l0;
  wsisa_err e = WSISA_ERR_INIT;
  if (wsisa_slide_open(tu_src("tests/data/CMU-1-Small-Region.svs"), &s, &e) ||
      (!width && wsisa_slide_level(s, 0, &l0, &e)) ||
      wsisa_slide_read_rgb(s, 0, x, y, width ? width : (int)l0.width,
                           width ? height : (int)l0.height, &img, &e))
    fprintf(stderr, "%s\n", e.msg);
  wsisa_slide_close(s);
  return img;
}

/* The square (x, y, side) of the bundled sample's level 0. */
static wsisa_image *sample_region(int64_t x, int64_t y, int side) {
  return sample_rect(x, y, side, side);
}

wsisa_image *tu_synth_region(void) { return sample_region(TU_SYNTH_X, TU_SYNTH_Y, TU_SYNTH_SIDE); }

/* `region` (taken) upsampled 2x, written as `spec` says. */
static int write_upsampled(const char *path, const tu_slide_spec *spec, wsisa_image *region) {
  wsisa_image *base = region ? tu_upsample(region, 2) : NULL;
  int rc = base ? tu_slide_write(path, base, spec) : -1;
  wsisa_image_free(region);
  wsisa_image_free(base);
  return rc;
}

static int write_from_region(const char *path, const tu_slide_spec *spec, int fluorescence) {
  wsisa_image *region = tu_synth_region();
  if (region && fluorescence) tu_slip_apply(region, TU_SLIP_FLUORESCENCE);
  return write_upsampled(path, spec, region);
}

int tu_synth_sample_od(const char *path, double factor) {
  wsisa_image *img = sample_rect(0, 0, 0, 0);
  if (!img) return -1;
  tu_od_scale(img, factor);
  /* 0.499 um/pixel, the sample's */
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = RESUNIT_CENTIMETER,
                        .resolution = 1e4 / 0.499, .levels = 2, .level_step = 4, .tile = 256};
  int rc = tu_slide_write(path, img, &spec);
  wsisa_image_free(img);
  return rc;
}

/* Aperio at 40x: AppMag = 40, MPP = mpp (0: none), levels at 1, 4, 16. */
static tu_slide_spec svs40(double mpp) {
  return (tu_slide_spec){.kind = TU_SLIDE_APERIO, .mpp = mpp, .app_mag = 40, .levels = 3,
                         .level_step = 4, .tile = 256};
}

int tu_synth_svs40(const char *path, int with_mpp) {
  tu_slide_spec spec = svs40(with_mpp ? 0.25 : 0);
  return write_from_region(path, &spec, 0);
}

int tu_synth_svs40_large(const char *path) {
  tu_slide_spec spec = svs40(0.25);
  return write_upsampled(path, &spec, sample_region(0, 0, TU_SYNTH_LARGE_SIDE));
}

int tu_synth_generic_cm(const char *path) {
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = RESUNIT_CENTIMETER,
                        .resolution = 40000, .levels = 3, .level_step = 2, .tile = 256};
  return write_from_region(path, &spec, 0);
}

int tu_synth_fluorescence(const char *path) {
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = RESUNIT_INCH,
                        .resolution = 101600, .levels = 3, .level_step = 4, .tile = 256};
  return write_from_region(path, &spec, 1);
}

wsisa_image *tu_mirror(const wsisa_image *img, int kx, int ky) {
  wsisa_image *out = NULL;
  const int w = img->width, h = img->height, c = img->channels;
  if (wsisa_image_new(w * kx, h * ky, c, WSISA_U8, &out, NULL)) return NULL;
  for (int y = 0; y < out->height; y++) {
    const int sy = (y / h) % 2 ? h - 1 - y % h : y % h;
    const uint8_t *src = wsisa_image_row(img, sy);
    uint8_t *dst = wsisa_image_row(out, y);
    for (int x = 0; x < out->width; x++) {
      const int sx = (x / w) % 2 ? w - 1 - x % w : x % w;
      memcpy(dst + (size_t)x * c, src + (size_t)sx * c, (size_t)c);
    }
  }
  return out;
}

int tu_synth_mosaic(const char *path, int kx, int ky) {
  wsisa_image *region = sample_region(TU_MOSAIC_X, TU_MOSAIC_Y, TU_MOSAIC_SIDE);
  wsisa_image *base = region ? tu_mirror(region, kx, ky) : NULL;
  /* 0.499 um/pixel, the sample's: 1e4 / 0.499 pixels per centimetre */
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = RESUNIT_CENTIMETER,
                        .resolution = 1e4 / 0.499, .levels = 2, .level_step = 2, .tile = 256};
  int rc = base ? tu_slide_write(path, base, &spec) : -1;
  wsisa_image_free(region);
  wsisa_image_free(base);
  return rc;
}
