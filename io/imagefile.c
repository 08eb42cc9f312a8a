/* PNG (libpng) and TIFF (libtiff) images in and out: tile datasets in, masks
 * and label images out. Writes go to a temporary name and are renamed, so a
 * failure never leaves a partial file behind. */
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <png.h>
#include <tiffio.h>

#include "io/io.h"

/* ---- PNG ------------------------------------------------------------------ */

struct png_ctx {
  jmp_buf jump;
  char msg[256];
};

static void png_on_error(png_structp png, png_const_charp msg) {
  struct png_ctx *ctx = png_get_error_ptr(png);
  snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
  longjmp(ctx->jump, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static int read_png(const char *path, FILE *f, wsisa_image **out, wsisa_err *e) {
  struct png_ctx ctx = {.msg = ""};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error,
                                           png_on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  wsisa_image *volatile img = NULL;
  png_bytep *volatile rows = NULL;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory reading %s", path);
  }
  if (setjmp(ctx.jump)) {
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    wsisa_image_free(img);
    return wsisa_error(e, WSISA_EFORMAT, "%s: unreadable PNG (%s)", path, ctx.msg);
  }
  png_init_io(png, f);
  png_read_info(png, info);
  png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  int depth = png_get_bit_depth(png, info), color = png_get_color_type(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16) png_set_swap(png); /* host order on little-endian machines */
  png_read_update_info(png, info);
  int channels = png_get_channels(png, info);
  depth = png_get_bit_depth(png, info);
  wsisa_image *im = NULL;
  if (wsisa_image_new((int)w, (int)h, channels, depth == 16 ? WSISA_U16 : WSISA_U8, &im, e)) {
    png_destroy_read_struct(&png, &info, NULL);
    return e ? e->code : WSISA_ENOMEM;
  }
  img = im;
  rows = malloc(h * sizeof *rows);
  if (!rows) png_error(png, "out of memory");
  for (png_uint_32 y = 0; y < h; y++) rows[y] = wsisa_image_row(im, (int)y);
  png_read_image(png, rows);
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  free(rows);
  *out = im;
  return 0;
}

static int write_png(const char *path, FILE *f, const wsisa_image *img, wsisa_err *e) {
  static const int color_of[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                  PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  if (img->type != WSISA_U8 && img->type != WSISA_U16)
    return wsisa_error(e, WSISA_EUSAGE, "%s: PNG holds 8- or 16-bit images, not %s (use .tiff)",
                       path, wsisa_dtype_name(img->type));
  struct png_ctx ctx = {.msg = ""};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error,
                                            png_on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory writing %s", path);
  }
  if (setjmp(ctx.jump)) {
    png_destroy_write_struct(&png, &info);
    return wsisa_error(e, WSISA_EIO, "%s: cannot write PNG (%s)", path, ctx.msg);
  }
  png_init_io(png, f);
  png_set_compression_level(png, 3);
  png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height,
               img->type == WSISA_U16 ? 16 : 8, color_of[img->channels],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (img->type == WSISA_U16) png_set_swap(png);
  for (int y = 0; y < img->height; y++) png_write_row(png, wsisa_image_row(img, y));
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return 0;
}

/* ---- TIFF ------------------------------------------------------------------ */

static int tiff_dtype(int bits, int format, wsisa_dtype *type) {
  if (bits == 8 && format == SAMPLEFORMAT_UINT) *type = WSISA_U8;
  else if (bits == 16 && format == SAMPLEFORMAT_UINT) *type = WSISA_U16;
  else if (bits == 32 && format == SAMPLEFORMAT_INT) *type = WSISA_I32;
  else if (bits == 32 && format == SAMPLEFORMAT_IEEEFP) *type = WSISA_F32;
  else return -1;
  return 0;
}

static char tiff_msg[256];

static void tiff_on_error(const char *module, const char *fmt, va_list ap) {
  (void)module;
  vsnprintf(tiff_msg, sizeof tiff_msg, fmt, ap);
}

static int read_tiff(const char *path, wsisa_image **out, wsisa_err *e) {
  TIFFSetErrorHandler(tiff_on_error);
  TIFFSetWarningHandler(NULL);
  tiff_msg[0] = '\0';
  TIFF *tif = TIFFOpen(path, "r");
  if (!tif) return wsisa_error(e, WSISA_EFORMAT, "%s: unreadable TIFF (%s)", path, tiff_msg);
  uint32_t w = 0, h = 0;
  uint16_t spp = 1, bits = 8, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  wsisa_dtype type;
  wsisa_image *img = NULL;
  int rc = 0;
  if (w == 0 || h == 0 || spp < 1 || spp > 4 || tiff_dtype(bits, format, &type) ||
      (spp > 1 && planar != PLANARCONFIG_CONTIG)) {
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: unsupported TIFF layout (%u samples of %u bits, planar %u)", path,
                     spp, bits, planar);
    goto done;
  }
  if ((rc = wsisa_image_new((int)w, (int)h, spp, type, &img, e))) goto done;
  if (TIFFIsTiled(tif)) {
    uint32_t tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    tmsize_t tsize = TIFFTileSize(tif);
    unsigned char *buf = tsize > 0 ? _TIFFmalloc(tsize) : NULL;
    size_t px = wsisa_image_pixel_bytes(img);
    for (uint32_t ty = 0; buf && ty < h && !rc; ty += th)
      for (uint32_t tx = 0; tx < w && !rc; tx += tw) {
        if (TIFFReadTile(tif, buf, tx, ty, 0, 0) < 0) {
          rc = wsisa_error(e, WSISA_EFORMAT, "%s: truncated TIFF tile at %u,%u", path, tx, ty);
          break;
        }
        uint32_t cw = tx + tw > w ? w - tx : tw, ch = ty + th > h ? h - ty : th;
        for (uint32_t y = 0; y < ch; y++)
          memcpy((char *)wsisa_image_row(img, (int)(ty + y)) + tx * px,
                 buf + (size_t)y * tw * px, cw * px);
      }
    if (!buf && !rc) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory reading %s", path);
    if (buf) _TIFFfree(buf);
  } else {
    for (uint32_t y = 0; y < h; y++)
      if (TIFFReadScanline(tif, wsisa_image_row(img, (int)y), y, 0) < 0) {
        rc = wsisa_error(e, WSISA_EFORMAT, "%s: truncated TIFF at row %u", path, y);
        break;
      }
  }
done:
  TIFFClose(tif);
  if (rc) {
    wsisa_image_free(img);
    return rc;
  }
  *out = img;
  return 0;
}

static int write_tiff(const char *path, const char *tmp, const wsisa_image *img,
                      const char *description, double mpp, wsisa_err *e) {
  static const uint16_t bits_of[] = {8, 16, 32, 32};
  static const uint16_t format_of[] = {SAMPLEFORMAT_UINT, SAMPLEFORMAT_UINT,
                                       SAMPLEFORMAT_INT, SAMPLEFORMAT_IEEEFP};
  TIFFSetErrorHandler(tiff_on_error);
  tiff_msg[0] = '\0';
  TIFF *tif = TIFFOpen(tmp, "w");
  if (!tif) return wsisa_error(e, WSISA_EIO, "%s: cannot write (%s)", path, tiff_msg);
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)img->width);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)img->height);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)img->channels);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits_of[img->type]);
  TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, format_of[img->type]);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
               img->channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  if (img->channels == 2 || img->channels == 4) {
    uint16_t extra = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
  }
  if (description) TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description);
  if (mpp > 0) {
    /* pixels per centimetre: what slide readers take for a microscope's */
    TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_CENTIMETER);
    TIFFSetField(tif, TIFFTAG_XRESOLUTION, (float)(1e4 / mpp));
    TIFFSetField(tif, TIFFTAG_YRESOLUTION, (float)(1e4 / mpp));
  }
  TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
  int rc = 0;
  for (int y = 0; y < img->height && !rc; y++)
    if (TIFFWriteScanline(tif, wsisa_image_row(img, y), (uint32_t)y, 0) < 0)
      rc = wsisa_error(e, WSISA_EIO, "%s: cannot write (%s)", path, tiff_msg);
  TIFFClose(tif);
  return rc;
}

/* ---- dispatch --------------------------------------------------------------- */

int wsisa_image_read(const char *path, wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  unsigned char magic[8] = {0};
  size_t n = fread(magic, 1, sizeof magic, f);
  int rc;
  if (n == 8 && png_sig_cmp(magic, 0, 8) == 0) {
    rewind(f);
    rc = read_png(path, f, out, e);
    fclose(f);
    return rc;
  }
  fclose(f);
  if (n >= 4 && ((magic[0] == 'I' && magic[1] == 'I') || (magic[0] == 'M' && magic[1] == 'M')))
    return read_tiff(path, out, e);
  return wsisa_error(e, WSISA_EFORMAT, "%s: not a PNG or TIFF image", path);
}

int wsisa_image_read_rgb(const char *path, wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  wsisa_image *img = NULL, *packed = NULL;
  int rc = wsisa_image_read(path, &img, e);
  if (rc) return rc;
  if (img->type != WSISA_U8 || img->channels < 3) {
    wsisa_image_free(img);
    return wsisa_error(e, WSISA_EFORMAT, "%s: expected an 8-bit RGB image", path);
  }
  if (img->channels == 3) {
    *out = img;
    return 0;
  }
  rc = wsisa_image_new(img->width, img->height, 3, WSISA_U8, &packed, e);
  for (int y = 0; !rc && y < img->height; y++) {
    const uint8_t *src = wsisa_image_row(img, y);
    uint8_t *dst = wsisa_image_row(packed, y);
    for (int x = 0; x < img->width; x++) memcpy(dst + 3 * x, src + 4 * x, 3);
  }
  wsisa_image_free(img);
  *out = packed;
  return rc;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

int wsisa_image_write(const char *path, const wsisa_image *img, wsisa_err *e) {
  return wsisa_image_write_meta(path, img, NULL, 0, e);
}

int wsisa_image_write_meta(const char *path, const wsisa_image *img, const char *description,
                           double mpp, wsisa_err *e) {
  int png = has_suffix(path, ".png");
  int tiff = has_suffix(path, ".tif") || has_suffix(path, ".tiff");
  if (!png && !tiff)
    return wsisa_error(e, WSISA_EUSAGE, "%s: output must end in .png, .tif or .tiff", path);
  size_t len = strlen(path) + 16;
  char *tmp = malloc(len);
  if (!tmp) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  snprintf(tmp, len, "%s.part%d", path, (int)getpid());
  int rc;
  if (png) {
    FILE *f = fopen(tmp, "wb");
    if (!f) {
      rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
      free(tmp);
      return rc;
    }
    rc = write_png(path, f, img, e);
    if (fclose(f) && !rc) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  } else {
    rc = write_tiff(path, tmp, img, description, mpp, e);
  }
  if (!rc && rename(tmp, path))
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (rc) unlink(tmp);
  free(tmp);
  return rc;
}
