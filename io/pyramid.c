/* A tiled pyramidal RGB TIFF written tile by tile (libtiff), in the layout
 * OpenSlide's generic TIFF reader and QuPath open: one tiled directory per
 * level, every level after the first marked reduced-resolution, each half
 * the one before, deflate- or JPEG-compressed. The caller paints each tile,
 * so no level is ever held whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tiffio.h>

#include "io/csv.h"
#include "io/io_private.h"

/* Why libtiff failed to write: the system's reason when it met one. */
static int write_failed(const char *name, wsisa_err *e) {
  int err = 0;
  const char *text = wsisa__tiff_message(0, &err);
  return wsisa_error(e, WSISA_EIO, "%s: %s", name,
                     err ? strerror(err) : errno ? strerror(errno) : text[0] ? text : "write error");
}

int wsisa_pyramid_levels(int64_t width, int64_t height, int tile) {
  int levels = 1;
  while ((width > tile || height > tile) && levels < 32) {
    width = (width + 1) / 2, height = (height + 1) / 2;
    levels++;
  }
  return levels;
}

static int write_level(TIFF *tif, const char *name, int level, int64_t width, int64_t height,
                       const wsisa_pyramid_opts *o, wsisa_pyramid_paint paint, void *ctx,
                       uint8_t *buf, wsisa_err *e) {
  const int tile = o->tile;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)width);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)height);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  if (o->jpeg_quality > 0) {
    /* YCbCr as slide scanners store it; libtiff converts the RGB given */
    TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_JPEG);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR);
    TIFFSetField(tif, TIFFTAG_JPEGQUALITY, o->jpeg_quality);
    TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
  } else {
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
  }
  TIFFSetField(tif, TIFFTAG_TILEWIDTH, (uint32_t)tile);
  TIFFSetField(tif, TIFFTAG_TILELENGTH, (uint32_t)tile);
  /* OpenSlide takes a directory after the first as a level only when it is
   * marked as a reduced-resolution image */
  if (level > 0) TIFFSetField(tif, TIFFTAG_SUBFILETYPE, (uint32_t)FILETYPE_REDUCEDIMAGE);
  if (o->description && level == 0) TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, o->description);
  if (o->mpp > 0) {
    const double ppcm = 1e4 / (o->mpp * (double)(1 << level));
    TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_CENTIMETER);
    TIFFSetField(tif, TIFFTAG_XRESOLUTION, (float)ppcm);
    TIFFSetField(tif, TIFFTAG_YRESOLUTION, (float)ppcm);
  }
  TIFFSetField(tif, TIFFTAG_SOFTWARE, "wsisa " WSISA_VERSION);
  const size_t stride = (size_t)tile * 3;
  for (int64_t y = 0; y < height; y += tile)
    for (int64_t x = 0; x < width; x += tile) {
      const int w = (int)(width - x < tile ? width - x : tile);
      const int h = (int)(height - y < tile ? height - y : tile);
      memset(buf, 0, stride * (size_t)tile);
      int rc = paint(ctx, level, x, y, w, h, buf, stride, e);
      if (rc) return rc;
      errno = 0;
      if (TIFFWriteTile(tif, buf, (uint32_t)x, (uint32_t)y, 0, 0) < 0)
        return write_failed(name, e);
    }
  errno = 0;
  return TIFFWriteDirectory(tif) ? 0 : write_failed(name, e);
}

int wsisa_pyramid_write_staged(struct wsisa_stage *s, const char *path, int64_t width,
                               int64_t height, const wsisa_pyramid_opts *o,
                               wsisa_pyramid_paint paint, void *ctx, wsisa_err *e) {
  const int tile = o->tile;
  if (width <= 0 || height <= 0 || width > UINT32_MAX || height > UINT32_MAX || tile < 16 ||
      tile % 16)
    return wsisa_error(e, WSISA_EINTERNAL, "%s: a pyramid of %lldx%lld in tiles of %d", path,
                       (long long)width, (long long)height, tile);
  const char *temp = wsisa_stage_add(s, path, e);
  if (!temp) return e && e->code ? e->code : WSISA_EIO;
  struct stat st;
  if (stat(temp, &st) == 0 && !S_ISREG(st.st_mode))
    return wsisa_error(e, WSISA_EUSAGE, "%s: a TIFF needs a regular file", path);
  wsisa__tiff_messages_catch();
  /* BigTIFF once the pixels could pass classic TIFF's 4 GiB of offsets */
  const int big = (double)width * (double)height * 3.0 * 4.0 / 3.0 > 3.5e9;
  TIFF *tif = TIFFOpen(temp, big ? "w8" : "w");
  if (!tif) return write_failed(path, e);
  uint8_t *buf = malloc((size_t)tile * (size_t)tile * 3);
  int rc = buf ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  const int levels = wsisa_pyramid_levels(width, height, tile);
  int64_t w = width, h = height;
  for (int l = 0; l < levels && !rc; l++) {
    rc = write_level(tif, path, l, w, h, o, paint, ctx, buf, e);
    w = (w + 1) / 2, h = (h + 1) / 2;
  }
  free(buf);
  int fd = TIFFFileno(tif);
  if (!rc && fsync(fd) != 0 && errno != EINVAL)
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  TIFFClose(tif);
  return rc;
}
