/* PNG (libpng) and TIFF (libtiff) images in and out: tile datasets in, masks
 * and label images out. Reads say why a file cannot be read (too large,
 * truncated, an unsupported compression, corrupt data); writes go through a
 * stage (io/csv.h), so a failure never leaves a partial file behind and a
 * device is never replaced. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdio.h>

#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>

#include "io/csv.h"
#include "io/io.h"
#include "io/io_private.h"

/* ---- size guard --------------------------------------------------------------- */

/* An image file is a tile, not a whole slide (slides are read region by
 * region through OpenSlide): beyond this many pixels it is refused before
 * anything is allocated. */
#define MAX_IMAGE_PIXELS ((double)(1u << 30))

static int check_size(const char *path, uint32_t w, uint32_t h, int channels, size_t sample_bytes,
                      wsisa_err *e) {
  double px = (double)w * (double)h, bytes = px * channels * (double)sample_bytes;
  if (w > (uint32_t)INT32_MAX || h > (uint32_t)INT32_MAX || px > MAX_IMAGE_PIXELS)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: %ux%u pixels is too large for an image file (at most 2^30 pixels, "
                       "%.1f GiB decoded; open whole slides as slides)",
                       path, w, h, bytes / 1073741824.0);
  uint64_t avail = wsisa_memory_available();
  if (avail && bytes > (double)avail)
    return wsisa_error(e, WSISA_ENOMEM,
                       "%s: %ux%u pixels need %.1f GiB decoded; %.1f GiB of memory is available",
                       path, w, h, bytes / 1073741824.0, (double)avail / 1073741824.0);
  return 0;
}

/* ---- PNG ------------------------------------------------------------------ */

struct png_ctx {
  jmp_buf jump;
  char msg[256];
  int err; /* errno of a failed write */
};

static void png_on_error(png_structp png, png_const_charp msg) {
  struct png_ctx *ctx = png_get_error_ptr(png);
  ctx->err = errno;
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
  volatile int sized = 0;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory reading %s", path);
  }
  if (setjmp(ctx.jump)) {
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    wsisa_image_free(img);
    if (sized && e && e->code) return e->code;
    /* libpng's reader says "Read Error" when the file ends early */
    if (feof(f) || strstr(ctx.msg, "Read Error") || strstr(ctx.msg, "Not enough image data"))
      return wsisa_error(e, WSISA_EFORMAT, "%s: truncated PNG (the file ends before the image)",
                         path);
    return wsisa_error(e, WSISA_EFORMAT, "%s: corrupt PNG (%s)", path, ctx.msg);
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
  int rc = check_size(path, w, h, channels, depth == 16 ? 2 : 1, e);
  if (!rc) rc = wsisa_image_new((int)w, (int)h, channels, depth == 16 ? WSISA_U16 : WSISA_U8, &im, e);
  if (rc) {
    png_destroy_read_struct(&png, &info, NULL);
    return rc;
  }
  img = im;
  sized = 1;
  rows = malloc(h * sizeof *rows);
  if (!rows) {
    wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
    png_error(png, "out of memory");
  }
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
    if (ctx.err) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(ctx.err));
    return wsisa_error(e, WSISA_EIO, "%s: cannot write PNG (%s)", path, ctx.msg);
  }
  png_init_io(png, f);
  png_set_compression_level(png, 3);
  png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height,
               img->type == WSISA_U16 ? 16 : 8, color_of[img->channels],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (img->type == WSISA_U16) png_set_swap(png);
  for (int y = 0; y < img->height; y++) {
    errno = 0;
    png_write_row(png, wsisa_image_row(img, y));
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return 0;
}

/* ---- TIFF ------------------------------------------------------------------ */

static int tiff_dtype(int bits, int format, wsisa_dtype *type) {
  if (bits == 8 && format == SAMPLEFORMAT_UINT) *type = WSISA_U8;
  else if (bits == 16 && format == SAMPLEFORMAT_UINT) *type = WSISA_U16;
  else if (bits == 32 && format == SAMPLEFORMAT_INT) *type = WSISA_I32;
  /* unsigned 32-bit (label images): held as i32, refused past INT32_MAX */
  else if (bits == 32 && format == SAMPLEFORMAT_UINT) *type = WSISA_I32;
  else if (bits == 32 && format == SAMPLEFORMAT_IEEEFP) *type = WSISA_F32;
  else return -1;
  return 0;
}

/* This thread's last libtiff error: slides are read on several workers. */
static _Thread_local char tiff_module[64], tiff_text[256], tiff_full[330];
static _Thread_local int tiff_err;
static pthread_once_t tiff_handlers_once = PTHREAD_ONCE_INIT;

static void tiff_on_error(const char *module, const char *fmt, va_list ap) {
  tiff_err = errno;
  snprintf(tiff_module, sizeof tiff_module, "%s", module ? module : "");
  vsnprintf(tiff_text, sizeof tiff_text, fmt, ap);
  size_t n = strlen(tiff_text);
  while (n && (tiff_text[n - 1] == '.' || tiff_text[n - 1] == '\n')) tiff_text[--n] = '\0';
}

/* Why a write failed: the system's reason as libtiff met it, else errno_now's,
 * else libtiff's words. */
static const char *tiff_write_reason(int errno_now) {
  int err;
  const char *text = wsisa__tiff_message(0, &err);
  return err ? strerror(err) : errno_now ? strerror(errno_now) : text;
}

/* Warnings (unknown tags, legacy codecs) change nothing wsisa reads. */
static void tiff_on_warning(const char *module, const char *fmt, va_list ap) {
  (void)module, (void)fmt, (void)ap;
}

static void tiff_handlers_install(void) {
  TIFFSetErrorHandler(tiff_on_error);
  TIFFSetWarningHandler(tiff_on_warning);
}

void wsisa__tiff_messages_catch(void) {
  pthread_once(&tiff_handlers_once, tiff_handlers_install);
  tiff_module[0] = tiff_text[0] = '\0';
  tiff_err = 0;
}

const char *wsisa__tiff_message(int with_module, int *err) {
  if (err) *err = tiff_err;
  if (!with_module || !tiff_module[0] || !tiff_text[0]) return tiff_text;
  snprintf(tiff_full, sizeof tiff_full, "%s: %s", tiff_module, tiff_text);
  return tiff_full;
}

/* Does a strip or tile reach past the end of the file? Then the file was cut
 * short, which says more than the decoder's complaint. */
static int tiff_truncated(TIFF *tif, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  uint64_t *offsets = NULL, *counts = NULL;
  int tiled = TIFFIsTiled(tif);
  uint32_t n = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  if (!TIFFGetField(tif, tiled ? TIFFTAG_TILEOFFSETS : TIFFTAG_STRIPOFFSETS, &offsets) ||
      !TIFFGetField(tif, tiled ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS, &counts) ||
      !offsets || !counts)
    return 0;
  for (uint32_t i = 0; i < n; i++)
    if (offsets[i] + counts[i] > (uint64_t)st.st_size) return 1;
  return 0;
}

/* The reason a strip or tile did not read. */
static int tiff_read_error(TIFF *tif, const char *path, const char *where, wsisa_err *e) {
  if (tiff_truncated(tif, path))
    return wsisa_error(e, WSISA_EFORMAT, "%s: truncated TIFF (the file ends before its data, "
                       "found reading %s)", path, where);
  return wsisa_error(e, WSISA_EFORMAT, "%s: corrupt TIFF data at %s (%s)", path, where,
                     wsisa__tiff_message(0, NULL)[0] ? wsisa__tiff_message(0, NULL)
                                                     : "undecodable");
}

/* Colour spaces other than grey and RGB (YCbCr, as JPEG-compressed TIFFs
 * hold, palettes, CMYK, Lab): libtiff's RGBA reader converts them. */
static int read_tiff_rgba(TIFF *tif, const char *path, uint32_t w, uint32_t h, int alpha,
                          wsisa_image **out, wsisa_err *e) {
  char why[1024];
  if (!TIFFRGBAImageOK(tif, why))
    return wsisa_error(e, WSISA_EFORMAT, "%s: unsupported TIFF (%s)", path, why);
  int channels = alpha ? 4 : 3;
  int rc = check_size(path, w, h, 4, 1, e);
  wsisa_image *img = NULL;
  if (!rc) rc = wsisa_image_new((int)w, (int)h, channels, WSISA_U8, &img, e);
  uint32_t *raster = rc ? NULL : _TIFFmalloc((tmsize_t)w * h * sizeof *raster);
  if (!rc && !raster) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory reading %s", path);
  if (!rc && !TIFFReadRGBAImageOriented(tif, w, h, raster, ORIENTATION_TOPLEFT, 0))
    rc = tiff_read_error(tif, path, "its pixels", e);
  for (uint32_t y = 0; !rc && y < h; y++) {
    uint8_t *row = wsisa_image_row(img, (int)y);
    for (uint32_t x = 0; x < w; x++) {
      uint32_t p = raster[(size_t)y * w + x];
      row[x * channels] = (uint8_t)TIFFGetR(p);
      row[x * channels + 1] = (uint8_t)TIFFGetG(p);
      row[x * channels + 2] = (uint8_t)TIFFGetB(p);
      if (alpha) row[x * channels + 3] = (uint8_t)TIFFGetA(p);
    }
  }
  if (raster) _TIFFfree(raster);
  if (rc) {
    wsisa_image_free(img);
    return rc;
  }
  *out = img;
  return 0;
}

static int read_tiff(const char *path, wsisa_image **out, wsisa_err *e) {
  wsisa__tiff_messages_catch();
  TIFF *tif = TIFFOpen(path, "r");
  if (!tif)
    return wsisa_error(e, WSISA_EFORMAT, "%s: unreadable TIFF (%s)", path,
                       wsisa__tiff_message(0, NULL));
  uint32_t w = 0, h = 0;
  uint16_t spp = 1, bits = 8, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
  uint16_t compression = COMPRESSION_NONE, photometric = PHOTOMETRIC_MINISBLACK;
  uint16_t nextra = 0, *extra = NULL;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &nextra, &extra);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric))
    photometric = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
  wsisa_dtype type;
  wsisa_image *img = NULL;
  int rc = 0;
  if (!TIFFIsCODECConfigured(compression)) {
    /* JPEG 2000, which slide scanners use, has no libtiff codec */
    const TIFFCodec *codec = TIFFFindCODEC(compression);
    const char *name = codec                  ? codec->name
                       : compression == 34712 ? "JPEG 2000"
                       : compression == 33003 || compression == 33005 ? "JPEG 2000 (Aperio)"
                                                                       : "unknown";
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: unsupported TIFF compression %s (%u)", path, name,
                     compression);
    goto done;
  }
  if (w == 0 || h == 0) {
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: TIFF without a width or height", path);
    goto done;
  }
  if (photometric != PHOTOMETRIC_MINISBLACK && photometric != PHOTOMETRIC_RGB) {
    rc = read_tiff_rgba(tif, path, w, h, nextra > 0, &img, e);
    goto done;
  }
  if (spp < 1 || spp > 4 || tiff_dtype(bits, format, &type) ||
      (spp > 1 && planar != PLANARCONFIG_CONTIG)) {
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: unsupported TIFF layout (%u samples of %u bits, planar %u)", path,
                     spp, bits, planar);
    goto done;
  }
  if ((rc = check_size(path, w, h, spp, wsisa_dtype_size(type), e))) goto done;
  if ((rc = wsisa_image_new((int)w, (int)h, spp, type, &img, e))) goto done;
  if (TIFFIsTiled(tif)) {
    uint32_t tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    tmsize_t tsize = TIFFTileSize(tif);
    unsigned char *buf = tsize > 0 && tw && th ? _TIFFmalloc(tsize) : NULL;
    size_t px = wsisa_image_pixel_bytes(img);
    for (uint32_t ty = 0; buf && ty < h && !rc; ty += th)
      for (uint32_t tx = 0; tx < w && !rc; tx += tw) {
        if (TIFFReadTile(tif, buf, tx, ty, 0, 0) < 0) {
          char where[64];
          snprintf(where, sizeof where, "the tile at %u,%u", tx, ty);
          rc = tiff_read_error(tif, path, where, e);
          break;
        }
        uint32_t cw = tx + tw > w ? w - tx : tw, ch = ty + th > h ? h - ty : th;
        for (uint32_t y = 0; y < ch; y++)
          memcpy((char *)wsisa_image_row(img, (int)(ty + y)) + tx * px,
                 buf + (size_t)y * tw * px, cw * px);
      }
    if (!buf && !rc) rc = wsisa_error(e, WSISA_EFORMAT, "%s: unreadable TIFF tiles", path);
    if (buf) _TIFFfree(buf);
  } else {
    for (uint32_t y = 0; y < h; y++)
      if (TIFFReadScanline(tif, wsisa_image_row(img, (int)y), y, 0) < 0) {
        char where[32];
        snprintf(where, sizeof where, "row %u", y);
        rc = tiff_read_error(tif, path, where, e);
        break;
      }
  }
  for (uint32_t y = 0; !rc && bits == 32 && format == SAMPLEFORMAT_UINT && y < h; y++) {
    const int32_t *row = wsisa_image_row(img, (int)y);
    for (uint32_t x = 0; x < w * spp; x++)
      if (row[x] < 0) {
        rc = wsisa_error(e, WSISA_EFORMAT,
                         "%s: unsigned 32-bit value %u at (%u, %u) is above 2147483647, the "
                         "largest wsisa reads",
                         path, (unsigned)row[x], x / spp, y);
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
  wsisa__tiff_messages_catch();
  /* libtiff seeks back to write its directory: a pipe or a terminal cannot
   * take a TIFF */
  struct stat st;
  if (stat(tmp, &st) == 0 && !S_ISREG(st.st_mode)) {
    int fd = open(tmp, O_WRONLY);
    int seekable = fd >= 0 && lseek(fd, 0, SEEK_SET) == 0;
    if (fd >= 0) close(fd);
    if (!seekable)
      return wsisa_error(e, WSISA_EUSAGE, "%s: a TIFF needs a seekable file, not a pipe", path);
  }
  TIFF *tif = TIFFOpen(tmp, "w");
  if (!tif)
    return wsisa_error(e, WSISA_EIO, "%s: %s", path,
                       tiff_write_reason(0));
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
  for (int y = 0; y < img->height && !rc; y++) {
    errno = 0;
    if (TIFFWriteScanline(tif, wsisa_image_row(img, y), (uint32_t)y, 0) < 0)
      rc = wsisa_error(e, WSISA_EIO, "%s: %s", path,
                       tiff_write_reason(0));
  }
  /* the directory and the last strip are written here */
  errno = 0;
  if (!rc && !TIFFFlush(tif))
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path,
                     tiff_write_reason(errno));
  int fd = TIFFFileno(tif);
  if (!rc && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(fd) != 0)
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  TIFFClose(tif);
  return rc;
}

/* ---- JPEG ----------------------------------------------------------------- */

/* libjpeg reports errors by a handler that must not return: it jumps back. */
typedef struct jpeg_ctx {
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
} jpeg_ctx;

static void jpeg_on_error(j_common_ptr cinfo) {
  jpeg_ctx *ctx = (jpeg_ctx *)cinfo->err;
  cinfo->err->format_message(cinfo, ctx->msg);
  longjmp(ctx->jump, 1);
}

/* Quiet, but warnings (a premature end of data) still counted. */
static void jpeg_on_message(j_common_ptr cinfo, int level) {
  if (level < 0) cinfo->err->num_warnings++;
}

/* 8-bit grey or RGB (libjpeg converts YCbCr and CMYK is refused). */
static int read_jpeg(const char *path, FILE *f, wsisa_image **out, wsisa_err *e) {
  struct jpeg_decompress_struct cinfo;
  jpeg_ctx ctx;
  wsisa_image *volatile img = NULL;
  cinfo.err = jpeg_std_error(&ctx.mgr);
  ctx.mgr.error_exit = jpeg_on_error;
  ctx.mgr.emit_message = jpeg_on_message;
  ctx.msg[0] = '\0';
  if (setjmp(ctx.jump)) {
    jpeg_destroy_decompress(&cinfo);
    wsisa_image_free(img);
    if (e && e->code) return e->code;
    return wsisa_error(e, WSISA_EFORMAT, "%s: unreadable JPEG (%s)", path, ctx.msg);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  int rc = 0;
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: a CMYK JPEG (grey or RGB ones are read)", path);
  if (!rc) {
    cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_calc_output_dimensions(&cinfo);
    rc = check_size(path, cinfo.output_width, cinfo.output_height, cinfo.output_components, 1, e);
  }
  if (!rc)
    rc = wsisa_image_new((int)cinfo.output_width, (int)cinfo.output_height,
                         cinfo.output_components, WSISA_U8, (wsisa_image **)&img, e);
  if (!rc) {
    jpeg_start_decompress(&cinfo);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = wsisa_image_row(img, (int)cinfo.output_scanline);
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    /* a truncated file ends in grey padding and a warning, not an error */
    if (cinfo.err->num_warnings)
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: a damaged or truncated JPEG", path);
    else jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  if (rc) {
    wsisa_image_free(img);
    return rc;
  }
  *out = img;
  return 0;
}

/* ---- dispatch --------------------------------------------------------------- */

const char *wsisa_image_file_kind(const char *path) {
  FILE *f = NULL;
  wsisa_file_fopen(path, &f, NULL);
  unsigned char magic[8] = {0};
  size_t n = f ? fread(magic, 1, sizeof magic, f) : 0;
  if (f) fclose(f);
  if (n == 8 && png_sig_cmp(magic, 0, 8) == 0) return "PNG";
  if (n >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) return "JPEG";
  if (n >= 4 && ((magic[0] == 'I' && magic[1] == 'I') || (magic[0] == 'M' && magic[1] == 'M')))
    return "TIFF";
  return NULL;
}

int wsisa_image_read(const char *path, wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  FILE *f;
  int rc = wsisa_file_fopen(path, &f, e);
  if (rc) return rc;
  unsigned char magic[8] = {0};
  size_t n = fread(magic, 1, sizeof magic, f);
  if (n == 8 && png_sig_cmp(magic, 0, 8) == 0) {
    rewind(f);
    rc = read_png(path, f, out, e);
    fclose(f);
    return rc;
  }
  if (n >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) {
    rewind(f);
    rc = read_jpeg(path, f, out, e);
    fclose(f);
    return rc;
  }
  fclose(f);
  if (n >= 4 && ((magic[0] == 'I' && magic[1] == 'I') || (magic[0] == 'M' && magic[1] == 'M')))
    return read_tiff(path, out, e);
  return wsisa_error(e, WSISA_EFORMAT, "%s: not a PNG, JPEG or TIFF image", path);
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

int wsisa_image_write_staged(struct wsisa_stage *s, const char *path, const wsisa_image *img,
                             const char *description, double mpp, wsisa_err *e) {
  int png = has_suffix(path, ".png");
  int tiff = has_suffix(path, ".tif") || has_suffix(path, ".tiff");
  /* a device (-o /dev/null) of another name: PNG when it holds the pixels */
  if (!png && !tiff && wsisa_output_in_place(path)) {
    png = img->type == WSISA_U8 || img->type == WSISA_U16;
    tiff = !png;
  }
  if (!png && !tiff)
    return wsisa_error(e, WSISA_EUSAGE, "%s: output must end in .png, .tif or .tiff", path);
  if (png && img->type != WSISA_U8 && img->type != WSISA_U16)
    return wsisa_error(e, WSISA_EUSAGE, "%s: PNG holds 8- or 16-bit images, not %s (use .tiff)",
                       path, wsisa_dtype_name(img->type));
  if (tiff && wsisa_output_in_place(path))
    return wsisa_error(e, WSISA_EUSAGE, "%s: a TIFF needs a regular file, not a device", path);
  const char *tmp = wsisa_stage_add(s, path, e);
  if (!tmp) return e && e->code ? e->code : WSISA_EIO;
  if (tiff) return write_tiff(path, tmp, img, description, mpp, e);
  FILE *f = fopen(tmp, "wb");
  if (!f) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  int rc = write_png(path, f, img, e);
  int crc = wsisa_output_close(f, path, e);
  return rc ? rc : crc;
}

int wsisa_image_write(const char *path, const wsisa_image *img, wsisa_err *e) {
  return wsisa_image_write_meta(path, img, NULL, 0, e);
}

int wsisa_image_write_meta(const char *path, const wsisa_image *img, const char *description,
                           double mpp, wsisa_err *e) {
  wsisa_stage s = WSISA_STAGE_INIT;
  int rc = wsisa_image_write_staged(&s, path, img, description, mpp, e);
  if (!rc) rc = wsisa_stage_commit(&s, e);
  if (rc) wsisa_stage_abort(&s);
  return rc;
}
