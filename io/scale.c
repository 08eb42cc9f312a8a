/* Slides and images read at a target resolution (microns per pixel): the
 * choice of pyramid level and resampling factor, the exact area-averaging
 * kernel, and the mapping between target pixels and level-0 pixels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "io/io_private.h"

#define ONE WSISA_SCALE_ONE
#define SIDE_MAX ((int64_t)1 << 40)

static int mpp_in_range(double v) {
  return isfinite(v) && v >= WSISA_MPP_MIN && v <= WSISA_MPP_MAX;
}

static int check_target(double target, wsisa_err *e) {
  if (!mpp_in_range(target))
    return wsisa_error(e, WSISA_EUSAGE,
                       "inputs.mpp / --target-mpp %g: the target resolution must be between "
                       "%g and %g um/pixel",
                       target, WSISA_MPP_MIN, WSISA_MPP_MAX);
  return 0;
}

static int check_user_mpp(double mpp, wsisa_err *e) {
  if (!mpp_in_range(mpp))
    return wsisa_error(e, WSISA_EUSAGE,
                       "inputs.slide_mpp / --mpp %g: must be between %g and %g um/pixel", mpp,
                       WSISA_MPP_MIN, WSISA_MPP_MAX);
  return 0;
}

/* Fill the factor and the target size once s->level and its fields are set.
 * A level within the tolerance is used as it is: resampling by a few percent
 * would blur every pixel for a size change the parameters do not feel. */
static int plan_factor(const char *name, wsisa_scale *s, wsisa_err *e) {
  double target = s->target_mpp;
  /* a side past 2^40 pixels (no scanner's) would overflow the target-pixel
   * arithmetic below and in wsisa__read_scaled: refused, not wrapped */
  if (s->level_width > SIDE_MAX || s->level_height > SIDE_MAX)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: level %d is %lldx%lld pixels, past the %lld a side wsisa reads", name,
                       s->level, (long long)s->level_width, (long long)s->level_height,
                       (long long)SIDE_MAX);
  if (fabs(s->level_mpp - target) <= WSISA_MPP_TOLERANCE * target) {
    s->factor_q = ONE;
  } else {
    double ratio = target / s->level_mpp;
    if (ratio > WSISA_SCALE_MAX_FACTOR)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: the target %g um/pixel is more than %d times level %d's %.4g "
                         "um/pixel; choose a finer inputs.mpp / --target-mpp",
                         name, target, WSISA_SCALE_MAX_FACTOR, s->level, s->level_mpp);
    s->factor_q = (int64_t)llround(ratio * (double)ONE);
  }
  s->factor = (double)s->factor_q / (double)ONE;
  s->width = s->level_width * ONE / s->factor_q;
  s->height = s->level_height * ONE / s->factor_q;
  if (s->width < 1 || s->height < 1)
    return wsisa_error(e, WSISA_EUSAGE, "%s: %lldx%lld pixels is less than one pixel at %g um/pixel",
                       name, (long long)s->level_width, (long long)s->level_height, target);
  return 0;
}

/* Why a slide has no MPP, for the refusal: TIFF tags at a screen's density are
 * the usual case worth naming. */
static void no_mpp_reason(const wsisa_slide *slide, char *buf, size_t cap) {
  const char *xres = wsisa_slide_property(slide, "tiff.XResolution");
  const char *unit = wsisa_slide_property(slide, "tiff.ResolutionUnit");
  if (xres)
    snprintf(buf, cap, "no openslide.mpp-x/-y, and its TIFF resolution %s pixels per %s is not a "
             "microscope's", xres, unit ? unit : "inch");
  else
    snprintf(buf, cap, "no openslide.mpp-x/-y, no TIFF resolution tags");
}

int wsisa_scale_choose(const wsisa_slide *slide, double slide_mpp, double target_mpp,
                       wsisa_scale *out, wsisa_err *e) {
  return wsisa_scale_choose_level(slide, slide_mpp, target_mpp, -1, out, e);
}

int wsisa_scale_choose_level(const wsisa_slide *slide, double slide_mpp, double target_mpp,
                             int level, wsisa_scale *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  const char *name = wsisa_slide_path(slide);
  int rc = check_target(target_mpp, e);
  if (rc) return rc;
  wsisa_scale s = {0};
  s.target_mpp = target_mpp;
  if (slide_mpp != 0) {
    if ((rc = check_user_mpp(slide_mpp, e))) return rc;
    s.mpp_x = s.mpp_y = slide_mpp;
    s.source = WSISA_MPP_USER;
  } else {
    s.source = wsisa_slide_mpp(slide, &s.mpp_x, &s.mpp_y);
  }
  if (s.source == WSISA_MPP_NONE) {
    char why[256];
    no_mpp_reason(slide, why, sizeof why);
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: the slide does not give its pixel size (%s); give it in um/pixel "
                       "at level 0 with inputs.slide_mpp in the study or --mpp on segment/tiles",
                       name, why);
  }
  if (!mpp_in_range(s.mpp_x) || !mpp_in_range(s.mpp_y))
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: its pixel size %g x %g um (from %s) is outside %g..%g um/pixel; "
                       "give the right one with inputs.slide_mpp or --mpp",
                       name, s.mpp_x, s.mpp_y, wsisa_mpp_source_text(s.source), WSISA_MPP_MIN,
                       WSISA_MPP_MAX);
  double lo = s.mpp_x < s.mpp_y ? s.mpp_x : s.mpp_y;
  if (fabs(s.mpp_x - s.mpp_y) > WSISA_MPP_ANISOTROPY * lo)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: non-square pixels (mpp-x %g, mpp-y %g um differ by more than %g%%, "
                       "from %s): not supported; if the metadata is wrong, give "
                       "inputs.slide_mpp or --mpp",
                       name, s.mpp_x, s.mpp_y, 100 * WSISA_MPP_ANISOTROPY,
                       wsisa_mpp_source_text(s.source));
  s.mpp = 0.5 * (s.mpp_x + s.mpp_y);
  /* The coarsest level not coarser than the target (within the tolerance):
   * the least to read, and resampling only ever shrinks. */
  const double limit = target_mpp * (1 + WSISA_MPP_TOLERANCE);
  int nlevels = wsisa_slide_level_count(slide);
  if (level >= nlevels)
    return wsisa_error(e, WSISA_EUSAGE, "%s: level %d: the slide has levels 0..%d", name, level,
                       nlevels - 1);
  s.level = -1;
  for (int l = nlevels - 1; l >= 0 && s.level < 0; l--) {
    wsisa_level lv;
    if (level >= 0 && l != level) continue;
    if ((rc = wsisa_slide_level(slide, l, &lv, e))) return rc;
    if (level >= 0 && s.mpp * lv.downsample > limit)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: level %d is %.4g um/pixel, coarser than the target %g um/pixel: "
                         "choose a finer level, or leave the level to the target resolution",
                         name, level, s.mpp * lv.downsample, target_mpp);
    if (s.mpp * lv.downsample <= limit) {
      s.level = l;
      s.level_downsample = lv.downsample;
      s.level_mpp = s.mpp * lv.downsample;
      s.level_width = lv.width;
      s.level_height = lv.height;
    }
  }
  if (s.level < 0)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: level 0 is %.4g um/pixel (from %s), coarser than the target %g "
                       "um/pixel; choose inputs.mpp / --target-mpp of at least %.4g",
                       name, s.mpp, wsisa_mpp_source_text(s.source), target_mpp,
                       s.mpp / (1 + WSISA_MPP_TOLERANCE));
  if ((rc = plan_factor(name, &s, e))) return rc;
  *out = s;
  return 0;
}

int wsisa_scale_native(const wsisa_slide *slide, int level, wsisa_scale *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  wsisa_level lv;
  int rc = wsisa_slide_level(slide, level, &lv, e);
  if (rc) return rc;
  wsisa_scale s = {0};
  s.source = wsisa_slide_mpp(slide, &s.mpp_x, &s.mpp_y);
  s.mpp = 0.5 * (s.mpp_x + s.mpp_y);
  s.level = level;
  s.level_downsample = lv.downsample;
  s.level_mpp = s.mpp * lv.downsample;
  s.target_mpp = s.level_mpp;
  s.level_width = s.width = lv.width;
  s.level_height = s.height = lv.height;
  s.factor_q = ONE;
  s.factor = 1;
  *out = s;
  return 0;
}

int wsisa_scale_for_image(const char *name, int width, int height, double image_mpp,
                          double target_mpp, wsisa_scale *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  int rc = check_target(target_mpp, e);
  if (rc) return rc;
  if (image_mpp != 0 && (rc = check_user_mpp(image_mpp, e))) return rc;
  wsisa_scale s = {0};
  s.target_mpp = target_mpp;
  s.level_downsample = 1;
  s.level_width = width;
  s.level_height = height;
  if (image_mpp == 0) {
    /* Taken as it is: as if already at the target resolution. */
    s.source = WSISA_MPP_NONE;
    s.factor_q = ONE;
    s.factor = 1;
    s.width = width;
    s.height = height;
    *out = s;
    return 0;
  }
  s.source = WSISA_MPP_USER;
  s.mpp_x = s.mpp_y = s.mpp = s.level_mpp = image_mpp;
  if (image_mpp > target_mpp * (1 + WSISA_MPP_TOLERANCE))
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: the image is %g um/pixel, coarser than the target %g um/pixel; "
                       "choose inputs.mpp / --target-mpp of at least %.4g",
                       name, image_mpp, target_mpp, image_mpp / (1 + WSISA_MPP_TOLERANCE));
  if ((rc = plan_factor(name, &s, e))) return rc;
  *out = s;
  return 0;
}

double wsisa_scale_step(const wsisa_scale *scale) {
  return scale->level_downsample * scale->factor;
}

double wsisa_scale_pixel_mpp(const wsisa_scale *scale) {
  return scale->source == WSISA_MPP_NONE ? scale->target_mpp
                                         : scale->mpp * wsisa_scale_step(scale);
}

void wsisa_scale_to_level0(const wsisa_scale *scale, double x, double y, double *x0,
                           double *y0) {
  double step = wsisa_scale_step(scale);
  *x0 = x * step;
  *y0 = y * step;
}

void wsisa_scale_from_level0(const wsisa_scale *scale, double x0, double y0, double *x,
                             double *y) {
  double step = wsisa_scale_step(scale);
  *x = x0 / step;
  *y = y0 / step;
}

/* ---- area averaging ------------------------------------------------------------ */

/* One axis of the box filter: output pixel i covers [off + i*n, off + (i+1)*n)
 * in units of 1/ONE source pixels, and its weight on source pixel k is the
 * length of the overlap with [k*ONE, (k+1)*ONE). A pixel's weights add up to
 * n, so the 2-D weights add up to n*n and the mean is a ratio of integers. */
typedef struct axis {
  int *first;       /* first source pixel of output pixel i */
  int *count;       /* how many source pixels it touches */
  size_t *at;       /* where its weights start in `weight` */
  int64_t *weight;
} axis;

static void axis_free(axis *a) {
  free(a->first);
  free(a->count);
  free(a->at);
  free(a->weight);
}

static int axis_make(int64_t off, int64_t n, int outputs, int sources, axis *a, wsisa_err *e) {
  size_t per = (size_t)(n / ONE) + 2;
  a->first = malloc((size_t)outputs * sizeof *a->first);
  a->count = malloc((size_t)outputs * sizeof *a->count);
  a->at = malloc((size_t)outputs * sizeof *a->at);
  a->weight = malloc((size_t)outputs * per * sizeof *a->weight);
  if (!a->first || !a->count || !a->at || !a->weight) {
    axis_free(a);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory for resampling");
  }
  size_t w = 0;
  for (int i = 0; i < outputs; i++) {
    int64_t start = off + (int64_t)i * n, end = start + n;
    int64_t k0 = start / ONE, k1 = (end - 1) / ONE;
    if (k1 >= sources) {
      axis_free(a);
      return wsisa_error(e, WSISA_EINTERNAL, "resampling reaches past the source (%lld >= %d)",
                         (long long)k1, sources);
    }
    a->first[i] = (int)k0;
    a->count[i] = (int)(k1 - k0 + 1);
    a->at[i] = w;
    for (int64_t k = k0; k <= k1; k++) {
      int64_t lo = start > k * ONE ? start : k * ONE;
      int64_t hi = end < (k + 1) * ONE ? end : (k + 1) * ONE;
      a->weight[w++] = hi - lo;
    }
  }
  return 0;
}

/* dst (allocated, u8, src's channels) from src: exact integer sums, rounded
 * half up. With n <= WSISA_SCALE_MAX_FACTOR * ONE = 2^26, a row sum is at most
 * 255 * 2^26 and a pixel's sum 255 * 2^52: both fit in 64 bits. */
static void row_sums(const uint8_t *row, const axis *ax, int w, int c, uint64_t *sums) {
  for (int i = 0; i < w; i++) {
    const uint8_t *p = row + (size_t)ax->first[i] * (size_t)c;
    const int64_t *wx = ax->weight + ax->at[i];
    for (int ch = 0; ch < c; ch++) {
      uint64_t sum = 0;
      for (int kx = 0; kx < ax->count[i]; kx++)
        sum += (uint64_t)wx[kx] * p[(size_t)kx * (size_t)c + (size_t)ch];
      sums[(size_t)i * c + ch] = sum;
    }
  }
}

static int area_average(const wsisa_image *src, int64_t off_x, int64_t off_y, int64_t n,
                        wsisa_image *dst, wsisa_err *e) {
  const int c = src->channels, w = dst->width;
  const size_t len = (size_t)w * (size_t)c;
  axis ax = {0}, ay = {0};
  uint64_t *acc = NULL, *sums = NULL, *shared = NULL;
  int rc = axis_make(off_x, n, w, src->width, &ax, e);
  if (rc) return rc;
  if ((rc = axis_make(off_y, n, dst->height, src->height, &ay, e))) goto fail;
  acc = malloc(len * sizeof *acc);
  sums = malloc(len * sizeof *sums);
  shared = malloc(len * sizeof *shared);
  if (!acc || !sums || !shared) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory for resampling");
    goto fail;
  }
  const uint64_t nn = (uint64_t)n * (uint64_t)n;
  /* A source row cut by an output row boundary belongs to two output rows:
   * its horizontal sums are kept (`shared`) rather than made twice. */
  int shared_row = -1;
  for (int j = 0; j < dst->height; j++) {
    memset(acc, 0, len * sizeof *acc);
    for (int ky = 0; ky < ay.count[j]; ky++) {
      const int k = ay.first[j] + ky;
      const uint64_t wy = (uint64_t)ay.weight[ay.at[j] + (size_t)ky];
      uint64_t *h = sums;
      if (k == shared_row) {
        h = shared;
      } else if (ky == ay.count[j] - 1) {
        h = shared;
        shared_row = k;
        row_sums(wsisa_image_row(src, k), &ax, w, c, h);
      } else {
        row_sums(wsisa_image_row(src, k), &ax, w, c, h);
      }
      for (size_t q = 0; q < len; q++) acc[q] += wy * h[q];
    }
    uint8_t *out = wsisa_image_row(dst, j);
    for (size_t q = 0; q < len; q++) out[q] = (uint8_t)((2 * acc[q] + nn) / (2 * nn));
  }
fail:
  free(acc);
  free(sums);
  free(shared);
  axis_free(&ax);
  axis_free(&ay);
  return rc;
}

int wsisa_image_area_average(const wsisa_image *src, double factor, wsisa_image **out,
                             wsisa_err *e) {
  *out = NULL;
  if (src->type != WSISA_U8 || src->channels < 1 || src->channels > 4)
    return wsisa_error(e, WSISA_EUSAGE, "area averaging takes 8-bit images of 1 to 4 channels");
  if (!isfinite(factor) || factor < 1 || factor > WSISA_SCALE_MAX_FACTOR)
    return wsisa_error(e, WSISA_EUSAGE, "area averaging factor %g: must be in 1..%d", factor,
                       WSISA_SCALE_MAX_FACTOR);
  int64_t n = (int64_t)llround(factor * (double)ONE);
  int64_t w = (int64_t)src->width * ONE / n, h = (int64_t)src->height * ONE / n;
  if (w < 1 || h < 1)
    return wsisa_error(e, WSISA_EUSAGE, "area averaging a %dx%d image by %g leaves no pixel",
                       src->width, src->height, factor);
  wsisa_image *dst = NULL;
  int rc = wsisa_image_new((int)w, (int)h, src->channels, WSISA_U8, &dst, e);
  if (!rc) rc = area_average(src, 0, 0, n, dst, e);
  if (rc) {
    wsisa_image_free(dst);
    return rc;
  }
  *out = dst;
  return 0;
}

/* ---- reads ------------------------------------------------------------------------ */

int wsisa__read_scaled(wsisa__level_reader read, void *ctx, const char *name,
                       const wsisa_scale *s, int64_t x, int64_t y, int width, int height,
                       wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  if (width <= 0 || height <= 0 || x < 0 || y < 0 || x + width > s->width ||
      y + height > s->height)
    return wsisa_error(e, WSISA_EUSAGE,
                       "region %lld,%lld,%d,%d: outside %s at %g um/pixel (%lldx%lld)",
                       (long long)x, (long long)y, width, height, name, s->target_mpp,
                       (long long)s->width, (long long)s->height);
  if (s->factor_q == ONE) return read(ctx, s->level, x, y, width, height, out, e);
  /* The level pixels under the rectangle, fractional ones at the edges
   * included; (x + width) * factor stays within the level by construction of
   * s->width. */
  const int64_t n = s->factor_q;
  int64_t sx0 = x * n, sy0 = y * n, sx1 = (x + width) * n, sy1 = (y + height) * n;
  int64_t kx0 = sx0 / ONE, ky0 = sy0 / ONE;
  int64_t kx1 = (sx1 + ONE - 1) / ONE, ky1 = (sy1 + ONE - 1) / ONE;
  if (kx1 > s->level_width) kx1 = s->level_width;
  if (ky1 > s->level_height) ky1 = s->level_height;
  if (kx1 - kx0 > INT32_MAX || ky1 - ky0 > INT32_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "region %lld,%lld,%d,%d: too large to read at once",
                       (long long)x, (long long)y, width, height);
  wsisa_image *src = NULL, *dst = NULL;
  int rc = read(ctx, s->level, kx0, ky0, (int)(kx1 - kx0), (int)(ky1 - ky0), &src, e);
  if (!rc) rc = wsisa_image_new(width, height, 3, WSISA_U8, &dst, e);
  if (!rc) rc = area_average(src, sx0 - kx0 * ONE, sy0 - ky0 * ONE, n, dst, e);
  wsisa_image_free(src);
  if (rc) {
    wsisa_image_free(dst);
    return rc;
  }
  *out = dst;
  return 0;
}

static int slide_level_read(void *slide, int level, int64_t x, int64_t y, int width, int height,
                            wsisa_image **out, wsisa_err *e) {
  return wsisa_slide_read_rgb(slide, level, x, y, width, height, out, e);
}

int wsisa_slide_read_scaled(wsisa_slide *slide, const wsisa_scale *s, int64_t x, int64_t y,
                            int width, int height, wsisa_image **out, wsisa_err *e) {
  return wsisa__read_scaled(slide_level_read, slide, wsisa_slide_path(slide), s, x, y, width,
                            height, out, e);
}

int wsisa_image_read_scaled(const char *path, double image_mpp, double target_mpp,
                            wsisa_image **out, wsisa_scale *scale, wsisa_err *e) {
  *out = NULL;
  wsisa_image *img = NULL, *dst = NULL;
  wsisa_scale s;
  int rc = wsisa_image_read_rgb(path, &img, e);
  if (!rc) rc = wsisa_scale_for_image(path, img->width, img->height, image_mpp, target_mpp, &s, e);
  if (!rc && s.factor_q != ONE) {
    rc = wsisa_image_new((int)s.width, (int)s.height, 3, WSISA_U8, &dst, e);
    if (!rc) rc = area_average(img, 0, 0, s.factor_q, dst, e);
    wsisa_image_free(img);
    img = dst;
  }
  if (rc) {
    wsisa_image_free(img);
    return rc;
  }
  if (scale) *scale = s;
  *out = img;
  return 0;
}
