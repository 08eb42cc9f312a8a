/* One input type, two backends (as OpenSlide keeps one table of vendors): a
 * slide through OpenSlide, with its pyramid, MPP and tissue detection; or a
 * plain image through libpng, libjpeg or libtiff, one level without MPP. The
 * callers ask the input for its resolution plan and its pixels and never ask
 * which backend it has. */
#include <stdlib.h>
#include <string.h>

#include <openslide/openslide.h>

#include "io/io.h"
#include "io/io_private.h"

/* Side of the coarse tissue mask whose verdict says whether a slide's
 * background is dark (as `wsisa run`'s stain check samples it). */
#define INPUT_BACKGROUND_SIDE 512

typedef struct backend {
  wsisa_input_kind kind;
  int (*open)(wsisa_input *in, wsisa_err *e);
  void (*close)(wsisa_input *in);
  void (*level0)(const wsisa_input *in, int64_t *width, int64_t *height);
  int (*level_count)(const wsisa_input *in);
  int (*scale)(const wsisa_input *in, double mpp, double target_mpp, int level, wsisa_scale *out,
               wsisa_err *e);
  wsisa__level_reader read;
  int (*dark_background)(wsisa_input *in);
  int (*grid)(wsisa_input *in, const wsisa_scale *scale, int tile_size, int overlap,
              wsisa_grid **out, wsisa_err *e);
} backend;

struct wsisa_input {
  const backend *b;
  char *path;
  wsisa_slide *slide; /* the slide backend */
  wsisa_image *rgb;   /* the image backend: its pixels, as packed RGB */
};

/* ---- slides ------------------------------------------------------------------- */

static int slide_open(wsisa_input *in, wsisa_err *e) {
  return wsisa_slide_open(in->path, &in->slide, e);
}
static void slide_close(wsisa_input *in) { wsisa_slide_close(in->slide); }
static void slide_level0(const wsisa_input *in, int64_t *width, int64_t *height) {
  wsisa_level l0 = {0, 0, 1};
  wsisa_slide_level(in->slide, 0, &l0, NULL);
  *width = l0.width, *height = l0.height;
}
static int slide_level_count(const wsisa_input *in) { return wsisa_slide_level_count(in->slide); }
static int slide_scale(const wsisa_input *in, double mpp, double target_mpp, int level,
                       wsisa_scale *out, wsisa_err *e) {
  return wsisa_scale_choose_level(in->slide, mpp, target_mpp, level, out, e);
}
static int slide_read(void *ctx, int level, int64_t x, int64_t y, int width, int height,
                      wsisa_image **out, wsisa_err *e) {
  return wsisa_slide_read_rgb(((wsisa_input *)ctx)->slide, level, x, y, width, height, out, e);
}
static int slide_dark_background(wsisa_input *in) {
  wsisa_image *tissue = NULL;
  double downsample;
  int dark = 0;
  if (wsisa_tissue_mask(in->slide, INPUT_BACKGROUND_SIDE, &tissue, &downsample, &dark, NULL) == 0)
    wsisa_image_free(tissue);
  return dark;
}
static int slide_grid(wsisa_input *in, const wsisa_scale *scale, int tile_size, int overlap,
                      wsisa_grid **out, wsisa_err *e) {
  return wsisa_grid_make_scaled(in->slide, scale, tile_size, overlap, out, e);
}

/* ---- plain images ------------------------------------------------------------- */

static int image_open(wsisa_input *in, wsisa_err *e) {
  return wsisa_image_read_rgb(in->path, &in->rgb, e);
}
static void image_close(wsisa_input *in) { wsisa_image_free(in->rgb); }
static void image_level0(const wsisa_input *in, int64_t *width, int64_t *height) {
  *width = in->rgb->width, *height = in->rgb->height;
}
static int image_level_count(const wsisa_input *in) {
  (void)in;
  return 1;
}
static int image_scale(const wsisa_input *in, double mpp, double target_mpp, int level,
                       wsisa_scale *out, wsisa_err *e) {
  if (level > 0)
    return wsisa_error(e, WSISA_EUSAGE, "%s: level %d: an image file has level 0 only", in->path,
                       level);
  return wsisa_scale_for_image(in->path, in->rgb->width, in->rgb->height, mpp, target_mpp, out,
                               e);
}
static int image_read(void *ctx, int level, int64_t x, int64_t y, int width, int height,
                      wsisa_image **out, wsisa_err *e) {
  const wsisa_input *in = ctx;
  *out = NULL;
  if (level != 0 || x < 0 || y < 0 || x + width > in->rgb->width || y + height > in->rgb->height)
    return wsisa_error(e, WSISA_EUSAGE, "region %lld,%lld,%d,%d: outside %s (%dx%d)",
                       (long long)x, (long long)y, width, height, in->path, in->rgb->width,
                       in->rgb->height);
  int rc = wsisa_image_new(width, height, 3, WSISA_U8, out, e);
  for (int r = 0; !rc && r < height; r++)
    memcpy(wsisa_image_row(*out, r), (const uint8_t *)wsisa_image_row(in->rgb, (int)y + r) + 3 * x,
           (size_t)width * 3);
  return rc;
}
static int image_dark_background(wsisa_input *in) {
  (void)in;
  return 0;
}
static int image_grid(wsisa_input *in, const wsisa_scale *scale, int tile_size, int overlap,
                      wsisa_grid **out, wsisa_err *e) {
  (void)scale, (void)tile_size, (void)overlap;
  *out = NULL;
  return wsisa_error(e, WSISA_EUSAGE, "%s: an image file has no tile grid (read it whole)",
                     in->path);
}

static const backend backends[] = {
    {WSISA_INPUT_SLIDE, slide_open, slide_close, slide_level0, slide_level_count, slide_scale,
     slide_read, slide_dark_background, slide_grid},
    {WSISA_INPUT_IMAGE, image_open, image_close, image_level0, image_level_count, image_scale,
     image_read, image_dark_background, image_grid},
};

/* ---- the input ------------------------------------------------------------------ */

const char *wsisa_input_kind_name(wsisa_input_kind kind) {
  return kind == WSISA_INPUT_SLIDE ? "slide" : kind == WSISA_INPUT_IMAGE ? "image" : "auto";
}

/* Which backend reads `path`: vendor formats are slides; a generic TIFF is
 * one when it has a pyramid or says its pixel size, else it is an image like
 * a PNG, as is whatever OpenSlide does not read. */
static wsisa_input_kind detect(const char *path) {
  const char *vendor = openslide_detect_vendor(path);
  if (!vendor) return WSISA_INPUT_IMAGE;
  if (strcmp(vendor, "generic-tiff") != 0) return WSISA_INPUT_SLIDE;
  wsisa_slide *slide = NULL;
  if (wsisa_slide_open(path, &slide, NULL)) return WSISA_INPUT_IMAGE;
  double mx, my;
  int yes = wsisa_slide_level_count(slide) > 1 || wsisa_slide_mpp(slide, &mx, &my) != WSISA_MPP_NONE;
  wsisa_slide_close(slide);
  return yes ? WSISA_INPUT_SLIDE : WSISA_INPUT_IMAGE;
}

int wsisa_input_open(const char *path, wsisa_input_kind kind, wsisa_input **out, wsisa_err *e) {
  *out = NULL;
  /* OpenSlide's detection opens the path: a FIFO or a device is refused first */
  int rc = wsisa_file_check(path, e);
  if (rc) return rc;
  if (kind == WSISA_INPUT_AUTO) kind = detect(path);
  wsisa_input *in = calloc(1, sizeof *in);
  if (!in || !(in->path = strdup(path))) {
    free(in);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory opening %s", path);
  }
  in->b = &backends[kind == WSISA_INPUT_SLIDE ? 0 : 1];
  rc = in->b->open(in, e);
  if (rc) {
    free(in->path);
    free(in);
    return rc;
  }
  *out = in;
  return 0;
}

void wsisa_input_close(wsisa_input *in) {
  if (!in) return;
  in->b->close(in);
  free(in->path);
  free(in);
}

wsisa_input_kind wsisa_input_kind_of(const wsisa_input *in) { return in->b->kind; }

void wsisa_input_level0(const wsisa_input *in, int64_t *width, int64_t *height) {
  in->b->level0(in, width, height);
}

int wsisa_input_level_count(const wsisa_input *in) { return in->b->level_count(in); }

int wsisa_input_scale(const wsisa_input *in, double mpp, double target_mpp, int level,
                      wsisa_scale *out, wsisa_err *e) {
  return in->b->scale(in, mpp, target_mpp, level, out, e);
}

int wsisa_input_read_scaled(wsisa_input *in, const wsisa_scale *scale, int64_t x, int64_t y,
                            int width, int height, wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  /* the plan was made on this input: a file that changed since is refused
   * rather than read at another geometry */
  int64_t w0, h0;
  in->b->level0(in, &w0, &h0);
  if (scale->level == 0 && (scale->level_width != w0 || scale->level_height != h0))
    return wsisa_error(e, WSISA_EFORMAT, "%s: now %lldx%lld pixels, was %lldx%lld", in->path,
                       (long long)w0, (long long)h0, (long long)scale->level_width,
                       (long long)scale->level_height);
  return wsisa__read_scaled(in->b->read, in, in->path, scale, x, y, width, height, out, e);
}

int wsisa_input_take_scaled(wsisa_input *in, const wsisa_scale *scale, int64_t x, int64_t y,
                            int width, int height, wsisa_image **out, wsisa_err *e) {
  const wsisa_image *img = in->rgb;
  if (!img || scale->level != 0 || scale->factor_q != WSISA_SCALE_ONE ||
      scale->level_width != img->width || scale->level_height != img->height || x != 0 ||
      y != 0 || width != img->width || height != img->height)
    return wsisa_input_read_scaled(in, scale, x, y, width, height, out, e);
  *out = in->rgb;
  in->rgb = NULL;
  return 0;
}

int wsisa_input_dark_background(wsisa_input *in) { return in->b->dark_background(in); }

int wsisa_input_grid(wsisa_input *in, const wsisa_scale *scale, int tile_size, int overlap,
                     wsisa_grid **out, wsisa_err *e) {
  return in->b->grid(in, scale, tile_size, overlap, out, e);
}
