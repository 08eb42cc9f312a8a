/* Slides through OpenSlide: properties, levels and RGB regions. OpenSlide's
 * errors stick to its handle; ours carry the path so a user knows which file. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openslide/openslide.h>

#include "io/io.h"
#include "io/io_private.h"

struct wsisa_slide {
  openslide_t *osr;
  char *path;
  char vendor[64];
  int nlevels;
};

/* OpenSlide's error, with libtiff's reason when it has one (OpenSlide's own
 * says "TIFFRGBAImageGet failed"). */
static int check_osr(wsisa_slide *slide, wsisa_err *e) {
  const char *msg = openslide_get_error(slide->osr), *tiff = wsisa__tiff_message(1, NULL);
  if (msg)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: unreadable slide data, damaged or truncated (%s%s%s)", slide->path,
                       msg, tiff[0] ? "; " : "", tiff);
  return 0;
}

/* Most slide formats are TIFF inside; a TIFF header that OpenSlide refuses is
 * most often a damaged or truncated download, which is worth saying. */
static int has_tiff_magic(const char *path) {
  unsigned char m[4] = {0};
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(m, 1, 4, f);
  fclose(f);
  return n == 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
                    (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43)));
}

int wsisa_slide_open(const char *path, wsisa_slide **out, wsisa_err *e) {
  *out = NULL;
  struct stat st;
  if (stat(path, &st) != 0)
    return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return wsisa_error(e, WSISA_EIO, "%s: is a directory, not a slide", path);
  /* OpenSlide opens the path itself: a FIFO or a device must not reach it */
  int rc = wsisa_file_check(path, e);
  if (rc) return rc;
  wsisa__tiff_messages_catch();
  const char *vendor = openslide_detect_vendor(path);
  if (!vendor) {
    if (has_tiff_magic(path))
      return wsisa_error(e, WSISA_EFORMAT,
                         "%s: a TIFF file OpenSlide cannot read (damaged or truncated?)", path);
    return wsisa_error(e, WSISA_EFORMAT, "%s: not a slide OpenSlide can read", path);
  }
  openslide_t *osr = openslide_open(path);
  if (!osr)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: looks like a %s slide but cannot be opened (damaged or truncated?)",
                       path, vendor);
  wsisa_slide *slide = calloc(1, sizeof *slide);
  if (!slide || !(slide->path = strdup(path))) {
    free(slide);
    openslide_close(osr);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory opening %s", path);
  }
  slide->osr = osr;
  snprintf(slide->vendor, sizeof slide->vendor, "%s", vendor);
  rc = check_osr(slide, e);
  if (!rc) {
    int32_t n = openslide_get_level_count(osr);
    if (n < 1) rc = wsisa_error(e, WSISA_EFORMAT, "%s: slide has no levels", path);
    slide->nlevels = n;
  }
  if (rc) {
    wsisa_slide_close(slide);
    return rc;
  }
  *out = slide;
  return 0;
}

void wsisa_slide_close(wsisa_slide *slide) {
  if (!slide) return;
  if (slide->osr) openslide_close(slide->osr);
  free(slide->path);
  free(slide);
}

const char *wsisa_slide_path(const wsisa_slide *slide) { return slide->path; }
const char *wsisa_slide_vendor(const wsisa_slide *slide) { return slide->vendor; }
int wsisa_slide_level_count(const wsisa_slide *slide) { return slide->nlevels; }

int wsisa_slide_level(const wsisa_slide *slide, int level, wsisa_level *out,
                      wsisa_err *e) {
  if (level < 0 || level >= slide->nlevels)
    return wsisa_error(e, WSISA_EUSAGE, "--level %d: out of range (%s has levels 0..%d)",
                       level, slide->path, slide->nlevels - 1);
  openslide_get_level_dimensions(slide->osr, level, &out->width, &out->height);
  out->downsample = openslide_get_level_downsample(slide->osr, level);
  if (out->width <= 0 || out->height <= 0 || !(out->downsample > 0))
    return wsisa_error(e, WSISA_EFORMAT, "%s: unreadable dimensions of level %d",
                       slide->path, level);
  return 0;
}

const char *wsisa_slide_property(const wsisa_slide *slide, const char *name) {
  return openslide_get_property_value(slide->osr, name);
}

static double property_double(const wsisa_slide *slide, const char *name) {
  const char *v = openslide_get_property_value(slide->osr, name);
  if (!v) return 0;
  char *end;
  double d = strtod(v, &end);
  return (end != v && isfinite(d) && d > 0) ? d : 0;
}

const char *wsisa_mpp_source_name(wsisa_mpp_source source) {
  static const char *const names[] = {"none", "user", "openslide", "tiff-centimeter",
                                      "tiff-inch"};
  return (unsigned)source < sizeof names / sizeof *names ? names[source] : "none";
}

const char *wsisa_mpp_source_text(wsisa_mpp_source source) {
  static const char *const texts[] = {
      "unknown", "the user's --mpp / inputs.slide_mpp", "the slide's openslide.mpp-x/-y properties",
      "the slide's TIFF resolution tags, in pixels per centimetre",
      "the slide's TIFF resolution tags, in pixels per inch"};
  return (unsigned)source < sizeof texts / sizeof *texts ? texts[source] : "unknown";
}

/* OpenSlide 3.4 turns only vendor metadata into openslide.mpp-*; a generic
 * TIFF's resolution tags are passed on as tiff.* properties. They are a
 * microscope's when in centimetres (image software writes inches), or in
 * inches at a density no screen or document scanner has (72/96 dpi is the
 * usual meaningless default). TIFF's unit defaults to inches when absent. */
static wsisa_mpp_source tiff_mpp(const wsisa_slide *slide, double *mx, double *my) {
  double xres = property_double(slide, "tiff.XResolution");
  double yres = property_double(slide, "tiff.YResolution");
  const char *unit = openslide_get_property_value(slide->osr, "tiff.ResolutionUnit");
  if (!(xres > 0 && yres > 0)) return WSISA_MPP_NONE;
  if (unit && strcmp(unit, "centimeter") == 0) {
    *mx = 1e4 / xres;
    *my = 1e4 / yres;
    return WSISA_MPP_TIFF_CM;
  }
  if ((!unit || strcmp(unit, "inch") == 0) && xres >= WSISA_MPP_TIFF_MIN_DPI &&
      yres >= WSISA_MPP_TIFF_MIN_DPI) {
    *mx = 25400.0 / xres;
    *my = 25400.0 / yres;
    return WSISA_MPP_TIFF_INCH;
  }
  return WSISA_MPP_NONE;
}

wsisa_mpp_source wsisa_slide_mpp(const wsisa_slide *slide, double *mpp_x, double *mpp_y) {
  double x = property_double(slide, OPENSLIDE_PROPERTY_NAME_MPP_X);
  double y = property_double(slide, OPENSLIDE_PROPERTY_NAME_MPP_Y);
  wsisa_mpp_source source = WSISA_MPP_OPENSLIDE;
  if (!(x > 0 && y > 0)) source = tiff_mpp(slide, &x, &y);
  if (source == WSISA_MPP_NONE) x = y = 0;
  *mpp_x = x;
  *mpp_y = y;
  return source;
}

double wsisa_slide_objective(const wsisa_slide *slide) {
  return property_double(slide, OPENSLIDE_PROPERTY_NAME_OBJECTIVE_POWER);
}

/* OpenSlide hands out premultiplied ARGB; un-premultiply and composite onto
 * white, so a transparent (no data) area reads as background. */
static void argb_to_rgb(const uint32_t *argb, uint8_t *rgb, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t p = argb[i];
    unsigned a = p >> 24, r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
    if (a == 255) {
      rgb[3 * i] = (uint8_t)r;
      rgb[3 * i + 1] = (uint8_t)g;
      rgb[3 * i + 2] = (uint8_t)b;
    } else if (a == 0) {
      rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = 255;
    } else {
      /* straight colour c = c' * 255 / a, then over white: c*a/255 + 255 - a,
       * which is c' + 255 - a in premultiplied terms. */
      unsigned w = 255 - a;
      rgb[3 * i] = (uint8_t)(r + w > 255 ? 255 : r + w);
      rgb[3 * i + 1] = (uint8_t)(g + w > 255 ? 255 : g + w);
      rgb[3 * i + 2] = (uint8_t)(b + w > 255 ? 255 : b + w);
    }
  }
}

int wsisa_slide_read_rgb(wsisa_slide *slide, int level, int64_t x, int64_t y,
                         int width, int height, wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  wsisa_level lv;
  int rc = wsisa_slide_level(slide, level, &lv, e);
  if (rc) return rc;
  if (width <= 0 || height <= 0 || x < 0 || y < 0 || x + width > lv.width ||
      y + height > lv.height)
    return wsisa_error(e, WSISA_EUSAGE,
                       "region %lld,%lld,%d,%d: outside level %d of %s (%lldx%lld)",
                       (long long)x, (long long)y, width, height, level, slide->path,
                       (long long)lv.width, (long long)lv.height);
  wsisa_image *img = NULL;
  uint32_t *argb = NULL;
  /* Read in bands so the ARGB scratch stays small for big regions. */
  const int band = height < 512 ? height : 512;
  argb = malloc((size_t)width * (size_t)band * sizeof *argb);
  if (!argb) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory reading %dx%d from %s", width,
                     height, slide->path);
    goto fail;
  }
  if ((rc = wsisa_image_new(width, height, 3, WSISA_U8, &img, e))) goto fail;
  int64_t x0 = (int64_t)llround((double)x * lv.downsample);
  for (int row = 0; row < height; row += band) {
    int rows = height - row < band ? height - row : band;
    int64_t y0 = (int64_t)llround((double)(y + row) * lv.downsample);
    wsisa__tiff_messages_catch();
    openslide_read_region(slide->osr, argb, x0, y0, level, width, rows);
    if ((rc = check_osr(slide, e))) goto fail;
    argb_to_rgb(argb, wsisa_image_row(img, row), (size_t)width * (size_t)rows);
  }
  free(argb);
  *out = img;
  return 0;
fail:
  free(argb);
  wsisa_image_free(img);
  return rc;
}
