/* Slides in physical units: MPP and its source, level and factor for a target
 * resolution, refusals, exact area averaging, grid rectangles in level-0
 * pixels, scaled reads against the bundled 20x sample, dark-field tissue, and
 * `wsisa tiles` on synthetic 40x slides (tests/synthslide.c). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

#include "io/io.h"
#include "tests/synthslide.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"
#define ONE WSISA_SCALE_ONE

typedef enum { SVS40, SVS40_NO_MPP, GENERIC_CM, FLUORESCENCE } synth_kind;

/* A fresh synthetic slide in a temporary folder; the caller unlinks it. */
static const char *synth(synth_kind kind) {
  static char paths[4][WSISA_PATH_MAX];
  static const char *const names[] = {"svs40.svs", "svs40-no-mpp.svs", "generic-cm.tiff",
                                      "fluorescence.tiff"};
  char *p = paths[kind];
  snprintf(p, sizeof paths[0], "%s/%s", tu_tmpdir("scale"), names[kind]);
  int rc = kind == SVS40          ? tu_synth_svs40(p, 1)
           : kind == SVS40_NO_MPP ? tu_synth_svs40(p, 0)
           : kind == GENERIC_CM   ? tu_synth_generic_cm(p)
                                  : tu_synth_fluorescence(p);
  cr_assert_eq(rc, 0, "cannot write %s", p);
  return p;
}

static wsisa_slide *open_path(const char *path) {
  wsisa_slide *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_slide_open(path, &s, &e), 0, "%s", e.msg);
  return s;
}

/* A generic tiled TIFF of 512 x 512 grey pixels with the given resolution tags. */
static const char *generic_with_resolution(int unit, double xres, double yres) {
  static char path[WSISA_PATH_MAX];
  tu_path(path, "%s/res.tiff", tu_tmpdir("scale-res"));
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(512, 512, 3, WSISA_U8, &img, NULL), 0);
  memset(img->data, 200, (size_t)512 * 512 * 3);
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = unit, .resolution = xres,
                        .resolution_y = yres, .levels = 1, .level_step = 2, .tile = 256};
  cr_assert_eq(tu_slide_write(path, img, &spec), 0);
  wsisa_image_free(img);
  return path;
}

/* ---- MPP and its source ---------------------------------------------------------- */

Test(scale, mpp_and_source_of_each_slide) {
  struct {
    int kind; /* -1: the bundled sample */
    wsisa_mpp_source source;
    double mpp;
    const char *vendor;
  } cases[] = {
      {-1, WSISA_MPP_OPENSLIDE, 0.499, "aperio"},
      {SVS40, WSISA_MPP_OPENSLIDE, 0.25, "aperio"},
      {SVS40_NO_MPP, WSISA_MPP_NONE, 0, "aperio"},
      {GENERIC_CM, WSISA_MPP_TIFF_CM, 0.25, "generic-tiff"},
      {FLUORESCENCE, WSISA_MPP_TIFF_INCH, 0.25, "generic-tiff"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *path = cases[i].kind < 0 ? tu_src(SAMPLE) : synth((synth_kind)cases[i].kind);
    wsisa_slide *s = open_path(path);
    double mx = -1, my = -1;
    cr_expect_eq(wsisa_slide_mpp(s, &mx, &my), cases[i].source, "%s: source %s", path,
                 wsisa_mpp_source_name(wsisa_slide_mpp(s, &mx, &my)));
    cr_expect_float_eq(mx, cases[i].mpp, 1e-9, "%s: mpp-x %g", path, mx);
    cr_expect_float_eq(my, cases[i].mpp, 1e-9, "%s: mpp-y %g", path, my);
    cr_expect_str_eq(wsisa_slide_vendor(s), cases[i].vendor);
    wsisa_slide_close(s);
    if (cases[i].kind >= 0) unlink(path);
  }
}

Test(scale, tiff_resolution_units) {
  struct {
    int unit;
    double xres, yres;
    wsisa_mpp_source source;
    double mpp_x, mpp_y;
  } cases[] = {
      {RESUNIT_CENTIMETER, 20000, 20000, WSISA_MPP_TIFF_CM, 0.5, 0.5},
      {RESUNIT_INCH, 50800, 50800, WSISA_MPP_TIFF_INCH, 0.5, 0.5},
      {RESUNIT_INCH, 96, 96, WSISA_MPP_NONE, 0, 0},    /* a screen's default */
      {RESUNIT_INCH, 1200, 1200, WSISA_MPP_NONE, 0, 0}, /* a document scanner's */
      {RESUNIT_NONE, 20000, 20000, WSISA_MPP_NONE, 0, 0},
      {RESUNIT_CENTIMETER, 40000, 40800, WSISA_MPP_TIFF_CM, 0.25, 10000.0 / 40800},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *path = generic_with_resolution(cases[i].unit, cases[i].xres, cases[i].yres);
    wsisa_slide *s = open_path(path);
    double mx, my;
    cr_expect_eq(wsisa_slide_mpp(s, &mx, &my), cases[i].source, "case %zu", i);
    cr_expect_float_eq(mx, cases[i].mpp_x, 1e-9, "case %zu: %g", i, mx);
    cr_expect_float_eq(my, cases[i].mpp_y, 1e-9, "case %zu: %g", i, my);
    wsisa_slide_close(s);
    unlink(path);
  }
}

/* ---- level and factor --------------------------------------------------------------- */

Test(scale, level_and_factor_for_targets) {
  struct {
    int kind;
    double target;
    int level;
    int64_t factor_q, width, height;
  } cases[] = {
      /* the 20x sample: within 1 % of 0.5, used as it is */
      {-1, 0.5, 0, ONE, 2220, 2967},
      {-1, 1.0, 0, 525339, 1107, 1480}, /* 1 / 0.499 = 2.004008 = 525338.7 / 2^18 */
      /* 40x Aperio, levels 0.25, 1, 4 um */
      {SVS40, 0.5, 0, 2 * ONE, 1024, 1024},
      {SVS40, 0.25, 0, ONE, 2048, 2048},
      {SVS40, 0.8, 0, 838861, 639, 639},   /* 3.2 = 838860.8 / 2^18, rounded */
      {SVS40, 0.9, 0, 943718, 568, 568},   /* level 1 (1.0) is coarser than 0.99 */
      {SVS40, 0.95, 0, 996147, 538, 538},  /* level 1 (1.0) is 5 % coarser: level 0 by 3.8 */
      {SVS40, 0.995, 1, ONE, 512, 512},    /* level 1 within 1 % */
      {SVS40, 2.0, 1, 2 * ONE, 256, 256},
      /* generic, levels 0.25, 0.5, 1 um */
      {GENERIC_CM, 0.5, 1, ONE, 1024, 1024},
      {GENERIC_CM, 0.25, 0, ONE, 2048, 2048},
      {GENERIC_CM, 0.6, 1, 314573, 853, 853}, /* 1.2 = 314572.8 / 2^18 */
      {FLUORESCENCE, 0.5, 0, 2 * ONE, 1024, 1024},
      {FLUORESCENCE, 0.25, 0, ONE, 2048, 2048},
  };
  const char *paths[4] = {0};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int k = cases[i].kind;
    if (k >= 0 && !paths[k]) paths[k] = synth((synth_kind)k);
    wsisa_slide *s = open_path(k < 0 ? tu_src(SAMPLE) : paths[k]);
    wsisa_scale sc;
    wsisa_err e = WSISA_ERR_INIT;
    cr_assert_eq(wsisa_scale_choose(s, 0, cases[i].target, &sc, &e), 0, "case %zu: %s", i, e.msg);
    cr_expect_eq(sc.level, cases[i].level, "case %zu: level %d", i, sc.level);
    cr_expect_eq(sc.factor_q, cases[i].factor_q, "case %zu: factor %lld", i,
                 (long long)sc.factor_q);
    cr_expect_float_eq(sc.factor, (double)cases[i].factor_q / ONE, 0, "case %zu", i);
    cr_expect_eq(sc.width, cases[i].width, "case %zu: width %lld", i, (long long)sc.width);
    cr_expect_eq(sc.height, cases[i].height, "case %zu: height %lld", i, (long long)sc.height);
    cr_expect_float_eq(sc.target_mpp, cases[i].target, 0);
    wsisa_slide_close(s);
  }
  for (int k = 0; k < 4; k++)
    if (paths[k]) unlink(paths[k]);
}

Test(scale, user_mpp_overrides_the_slide) {
  const char *path = synth(SVS40_NO_MPP);
  wsisa_slide *s = open_path(path);
  wsisa_scale sc;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0.25, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(sc.source, WSISA_MPP_USER);
  cr_expect_eq(sc.level, 0);
  cr_expect_eq(sc.factor_q, 2 * ONE);
  /* and over a slide that has its own: 0.5 makes the 40x slide's level 0 the target */
  wsisa_slide_close(s);
  unlink(path);
  path = synth(SVS40);
  s = open_path(path);
  cr_assert_eq(wsisa_scale_choose(s, 0.5, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(sc.source, WSISA_MPP_USER);
  cr_expect_eq(sc.factor_q, ONE);
  cr_expect_eq(sc.width, 2048);
  wsisa_slide_close(s);
  unlink(path);
}

/* ---- refusals ------------------------------------------------------------------------- */

static void expect_refusal(wsisa_slide *s, double slide_mpp, double target, const char *want1,
                           const char *want2) {
  wsisa_scale sc;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_scale_choose(s, slide_mpp, target, &sc, &e), WSISA_EUSAGE,
               "mpp %g target %g accepted", slide_mpp, target);
  cr_expect(strstr(e.msg, want1) != NULL, "\"%s\" not in: %s", want1, e.msg);
  if (want2) cr_expect(strstr(e.msg, want2) != NULL, "\"%s\" not in: %s", want2, e.msg);
  cr_expect(strchr(e.msg, '\n') == NULL, "not one line: %s", e.msg);
  cr_expect_eq(sc.level, 0); /* cleared on failure */
}

Test(scale, refusals_say_what_to_do) {
  const char *path = synth(SVS40_NO_MPP);
  wsisa_slide *s = open_path(path);
  expect_refusal(s, 0, 0.5, "does not give its pixel size (no openslide.mpp-x/-y, no TIFF",
                 "give it in um/pixel at level 0 with inputs.slide_mpp in the study or --mpp");
  expect_refusal(s, -1, 0.5, "inputs.slide_mpp / --mpp -1: must be between 0.01 and 100", NULL);
  expect_refusal(s, NAN, 0.5, "inputs.slide_mpp / --mpp nan", NULL);
  expect_refusal(s, 0.25, 0, "inputs.mpp / --target-mpp 0: the target resolution must be", NULL);
  expect_refusal(s, 0.25, 1000, "inputs.mpp / --target-mpp 1000", NULL);
  /* 0.5 um at level 0 is coarser than 0.25 (+1 %) */
  expect_refusal(s, 0.5, 0.25, "level 0 is 0.5 um/pixel (from the user's --mpp / inputs.slide_mpp), coarser",
                 "choose inputs.mpp / --target-mpp of at least 0.495");
  wsisa_slide_close(s);
  unlink(path);

  s = open_path(tu_src(SAMPLE));
  expect_refusal(s, 0, 0.25, "CMU-1-Small-Region.svs: level 0 is 0.499 um/pixel", "coarser than the target 0.25");
  wsisa_slide_close(s);

  path = generic_with_resolution(RESUNIT_INCH, 96, 96);
  s = open_path(path);
  expect_refusal(s, 0, 0.5, "its TIFF resolution 96 pixels per inch is not a microscope's",
                 "inputs.slide_mpp");
  wsisa_slide_close(s);
  unlink(path);

  path = generic_with_resolution(RESUNIT_CENTIMETER, 40000, 40800); /* 2 % apart */
  s = open_path(path);
  expect_refusal(s, 0, 0.5, "non-square pixels (mpp-x 0.25, mpp-y 0.245098 um differ by more than 1%",
                 "give inputs.slide_mpp or --mpp");
  /* the user's word settles it */
  wsisa_scale sc;
  cr_expect_eq(wsisa_scale_choose(s, 0.25, 0.5, &sc, NULL), 0);
  wsisa_slide_close(s);
  unlink(path);

  path = generic_with_resolution(RESUNIT_CENTIMETER, 40000, 40200); /* 0.5 % apart: accepted */
  s = open_path(path);
  cr_expect_eq(wsisa_scale_choose(s, 0, 0.5, &sc, NULL), 0);
  cr_expect_float_eq(sc.mpp, 0.5 * (0.25 + 1e4 / 40200), 1e-12);
  wsisa_slide_close(s);
  unlink(path);

  path = generic_with_resolution(RESUNIT_CENTIMETER, 37.8, 37.8); /* 96 dpi written in cm */
  s = open_path(path);
  expect_refusal(s, 0, 0.5, "its pixel size 264.55", "is outside 0.01..100 um/pixel");
  wsisa_slide_close(s);
  unlink(path);
}

/* ---- area averaging ------------------------------------------------------------------ */

static wsisa_image *gray(int w, int h, const uint8_t *values) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_U8, &img, NULL), 0);
  for (int y = 0; y < h; y++) memcpy(wsisa_image_row(img, y), values + (size_t)y * w, (size_t)w);
  return img;
}

static void expect_pixels(const wsisa_image *img, int w, int h, const uint8_t *want) {
  cr_assert_eq(img->width, w);
  cr_assert_eq(img->height, h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * img->channels; x++)
      cr_expect_eq(((const uint8_t *)wsisa_image_row(img, y))[x], want[(size_t)y * w * img->channels + x],
                   "at byte %d of row %d: %u, expected %u", x, y,
                   ((const uint8_t *)wsisa_image_row(img, y))[x],
                   want[(size_t)y * w * img->channels + x]);
}

Test(scale, area_average_exact_values) {
  wsisa_image *out = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  /* factor 2: block means 2.5 and 4.5 round half up; the odd last column goes */
  const uint8_t a[] = {0, 1, 2, 3, 9, 4, 5, 6, 7, 9};
  wsisa_image *src = gray(5, 2, a);
  cr_assert_eq(wsisa_image_area_average(src, 2, &out, &e), 0, "%s", e.msg);
  expect_pixels(out, 2, 1, (const uint8_t[]){3, 5});
  wsisa_image_free(src);
  wsisa_image_free(out);

  /* factor 1.5 on v(row, col) = 30 row + 90 col: weights 2/3, 1/3 | 1/3, 2/3,
   * so the mean row (col) is 1/3 or 5/3 and the output 30 r + 90 c exactly */
  const uint8_t b[] = {0, 90, 180, 30, 120, 210, 60, 150, 240};
  src = gray(3, 3, b);
  cr_assert_eq(wsisa_image_area_average(src, 1.5, &out, &e), 0, "%s", e.msg);
  expect_pixels(out, 2, 2, (const uint8_t[]){40, 160, 80, 200});
  wsisa_image_free(src);
  wsisa_image_free(out);

  /* factor 2.5: one lit pixel in the middle of 5 x 5 lies in all four
   * outputs with weight (0.5 / 2.5)^2 = 0.04: 255 * 0.04 = 10.2 -> 10 */
  uint8_t c[25] = {0};
  c[12] = 255;
  src = gray(5, 5, c);
  cr_assert_eq(wsisa_image_area_average(src, 2.5, &out, &e), 0, "%s", e.msg);
  expect_pixels(out, 2, 2, (const uint8_t[]){10, 10, 10, 10});
  wsisa_image_free(src);
  wsisa_image_free(out);

  /* halves round up, in every channel on its own: RGB, factor 2 */
  wsisa_image *rgb = NULL;
  cr_assert_eq(wsisa_image_new(2, 2, 3, WSISA_U8, &rgb, NULL), 0);
  const uint8_t px[4][3] = {{0, 254, 10}, {1, 255, 10}, {0, 254, 11}, {1, 255, 11}};
  for (int i = 0; i < 4; i++) memcpy((uint8_t *)wsisa_image_row(rgb, i / 2) + 3 * (i % 2), px[i], 3);
  cr_assert_eq(wsisa_image_area_average(rgb, 2, &out, &e), 0, "%s", e.msg);
  expect_pixels(out, 1, 1, (const uint8_t[]){1, 255, 11}); /* 0.5, 254.5, 10.5 */
  wsisa_image_free(out);

  /* factor 1 is the identity */
  cr_assert_eq(wsisa_image_area_average(rgb, 1, &out, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(out, rgb), 0);
  wsisa_image_free(out);

  /* downsampling only; and a factor that leaves no pixel */
  cr_expect_eq(wsisa_image_area_average(rgb, 0.5, &out, &e), WSISA_EUSAGE);
  cr_expect_eq(wsisa_image_area_average(rgb, 3, &out, &e), WSISA_EUSAGE);
  cr_expect_null(out);
  wsisa_image_free(rgb);
}

/* ---- grid in target pixels, rectangles in level-0 pixels ------------------------------ */

static void expect_rect(const wsisa_tile *t, int64_t x, int64_t y, int64_t w, int64_t h) {
  cr_expect(t->level0.x == x && t->level0.y == y && t->level0.width == w && t->level0.height == h,
            "tile %d,%d: level-0 %lld,%lld,%lld,%lld, expected %lld,%lld,%lld,%lld", t->col, t->row,
            (long long)t->level0.x, (long long)t->level0.y, (long long)t->level0.width,
            (long long)t->level0.height, (long long)x, (long long)y, (long long)w, (long long)h);
}

Test(scale, grid_rectangles_in_level0_pixels) {
  const char *path = synth(SVS40);
  wsisa_slide *s = open_path(path);
  wsisa_scale sc;
  wsisa_grid *g = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 512, 0, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->cols, 2);
  cr_expect_eq(g->rows, 2);
  cr_expect_eq(g->width, 1024);
  cr_expect_eq(g->tiles[1].x, 512);
  cr_expect_eq(g->tiles[1].width, 512);
  expect_rect(&g->tiles[1], 1024, 0, 1024, 1024);
  expect_rect(&g->tiles[2], 0, 1024, 1024, 1024);
  /* glass on the left, tissue on the right (the sample's region) */
  cr_expect_eq(g->dark_background, 0);
  for (size_t i = 0; i < g->ntiles; i++)
    cr_expect_eq(g->tiles[i].tissue, g->tiles[i].col == 1, "tile %zu: %g", i,
                 g->tiles[i].tissue_fraction);
  wsisa_grid_free(g);

  /* factor 3.2 (838861 / 2^18 = 3.2000007629), tile 100, overlap 10: starts
   * every 90 target pixels over 639; col 3 starts at 270 -> 864.0002 and
   * ends at 370 -> 1184.0003; the last (col 6, 540..639) at 1728.0004 and
   * 2044.8005 -> 2045 */
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.8, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 100, 10, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->cols, 7);
  expect_rect(&g->tiles[3], 864, 0, 320, 320);
  cr_expect_eq(g->tiles[6].width, 99);
  expect_rect(&g->tiles[6], 1728, 0, 317, 320);
  expect_rect(&g->tiles[(size_t)6 * g->cols + 6], 1728, 1728, 317, 317);
  double x0, y0;
  wsisa_grid_tile_to_level0(g, &g->tiles[3], 10, 0.5, &x0, &y0);
  cr_expect_float_eq(x0, 280 * (838861.0 / ONE), 1e-9, "%.9f", x0);
  cr_expect_float_eq(y0, 0.5 * (838861.0 / ONE), 1e-9, "%.9f", y0);
  wsisa_grid_free(g);

  /* level 1 (downsample 4) area-averaged by 2: 8 level-0 pixels a target pixel */
  cr_assert_eq(wsisa_scale_choose(s, 0, 2.0, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 100, 0, &g, &e), 0, "%s", e.msg);
  cr_expect_float_eq(wsisa_scale_step(&sc), 8.0, 0);
  cr_expect_eq(g->cols, 3); /* 256 = 100 + 100 + 56 */
  expect_rect(&g->tiles[2], 1600, 0, 448, 800);
  wsisa_grid_free(g);
  wsisa_slide_close(s);
  unlink(path);

  /* generic pyramid: level 1 as it is, 2 level-0 pixels a target pixel */
  path = synth(GENERIC_CM);
  s = open_path(path);
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 512, 0, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->level, 1);
  expect_rect(&g->tiles[3], 1024, 1024, 1024, 1024);
  wsisa_grid_free(g);
  wsisa_slide_close(s);
  unlink(path);
}

/* The bundled sample at 0.5: the same grid, tissue and pixels as its level 0. */
Test(scale, sample_read_as_it_is) {
  wsisa_slide *s = open_path(tu_src(SAMPLE));
  wsisa_scale sc;
  wsisa_grid *g = NULL, *native = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0, WSISA_TARGET_MPP, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(sc.factor_q, ONE);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 1024, 0, &g, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make(s, 0, 1024, 0, &native, &e), 0, "%s", e.msg);
  cr_assert_eq(g->ntiles, native->ntiles);
  cr_expect_eq(g->ntissue, 6);
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *a = &g->tiles[i], *b = &native->tiles[i];
    cr_expect(a->x == b->x && a->y == b->y && a->width == b->width && a->height == b->height);
    expect_rect(a, a->x, a->y, a->width, a->height);
    cr_expect_eq(a->tissue_fraction, b->tissue_fraction);
  }
  wsisa_image *ours = NULL, *ref = NULL;
  const wsisa_tile *t = &g->tiles[4]; /* 1024,1024: tests/data/tile_1024.png */
  cr_assert_eq(wsisa_grid_tile_read(s, g, t, &ours, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_image_read(tu_src("tests/data/tile_1024.png"), &ref, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(ours, ref), 0);
  wsisa_image_free(ours);
  wsisa_image_free(ref);
  wsisa_grid_free(g);
  wsisa_grid_free(native);
  wsisa_slide_close(s);
}

/* A tile larger than the slide: one clipped tile. */
Test(scale, one_clipped_tile) {
  const char *path = synth(SVS40);
  wsisa_slide *s = open_path(path);
  wsisa_scale sc;
  wsisa_grid *g = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 4096, 100, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->ntiles, 1);
  cr_expect_eq(g->tiles[0].width, 1024);
  cr_expect_eq(g->tiles[0].height, 1024);
  expect_rect(&g->tiles[0], 0, 0, 2048, 2048);
  cr_expect_eq(g->ntissue, 1);
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_grid_tile_read(s, g, &g->tiles[0], &img, &e), 0, "%s", e.msg);
  cr_expect_eq(img->width, 1024);
  wsisa_image_free(img);
  wsisa_grid_free(g);
  wsisa_slide_close(s);
  unlink(path);

  s = open_path(tu_src(SAMPLE));
  cr_assert_eq(wsisa_grid_make(s, 0, 4096, 0, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->ntiles, 1);
  expect_rect(&g->tiles[0], 0, 0, 2220, 2967);
  wsisa_grid_free(g);
  /* still refused: no tile, an overlap as large as the tile */
  cr_expect_eq(wsisa_grid_make(s, 0, 0, 0, &g, &e), WSISA_EUSAGE);
  cr_expect_eq(wsisa_grid_make(s, 0, 4096, 4096, &g, &e), WSISA_EUSAGE);
  wsisa_slide_close(s);
}

/* ---- scaled reads ------------------------------------------------------------------------- */

static int max_abs_diff(const wsisa_image *a, const wsisa_image *b) {
  cr_assert(a->width == b->width && a->height == b->height && a->channels == b->channels);
  int worst = 0;
  for (int y = 0; y < a->height; y++) {
    const uint8_t *p = wsisa_image_row(a, y), *q = wsisa_image_row(b, y);
    for (int x = 0; x < a->width * a->channels; x++) {
      int d = abs((int)p[x] - (int)q[x]);
      if (d > worst) worst = d;
    }
  }
  return worst;
}

/* The 40x slide is the sample's region with every pixel doubled, so reading
 * it at 0.5 um/pixel averages 2 x 2 equal pixels: the sample's own pixels
 * come back exactly, wherever the rectangle starts. */
Test(scale, read_at_target_matches_the_20x_sample) {
  const char *path = synth(SVS40);
  wsisa_slide *s = open_path(path), *sample = open_path(tu_src(SAMPLE));
  wsisa_scale sc;
  wsisa_grid *g = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(sc.factor_q, 2 * ONE);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 400, 50, &g, &e), 0, "%s", e.msg);
  wsisa_image *ours = NULL, *ref = NULL;
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *t = &g->tiles[i];
    cr_assert_eq(wsisa_grid_tile_read(s, g, t, &ours, &e), 0, "%s", e.msg);
    cr_assert_eq(wsisa_slide_read_rgb(sample, 0, TU_SYNTH_X + t->x, TU_SYNTH_Y + t->y, t->width,
                                      t->height, &ref, &e),
                 0, "%s", e.msg);
    cr_expect_eq(tu_image_diff(ours, ref), 0, "tile %zu differs from the sample", i);
    wsisa_image_free(ours);
    wsisa_image_free(ref);
  }
  cr_assert_eq(wsisa_slide_read_scaled(s, &sc, 333, 77, 101, 59, &ours, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_slide_read_rgb(sample, 0, TU_SYNTH_X + 333, TU_SYNTH_Y + 77, 101, 59, &ref, &e), 0);
  cr_expect_eq(tu_image_diff(ours, ref), 0);
  wsisa_image_free(ours);
  wsisa_image_free(ref);
  /* outside the slide at the target resolution */
  cr_expect_eq(wsisa_slide_read_scaled(s, &sc, 1000, 0, 25, 10, &ours, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "outside") && strstr(e.msg, "at 0.5 um/pixel (1024x1024)"), "%s", e.msg);

  /* at 2 um/pixel: level 1 (4x4 means of the 40x pixels, i.e. 2x2 means of
   * the sample's, rounded) averaged by 2 again: the sample's 4x4 means, give
   * or take the intermediate rounding */
  wsisa_image *region = tu_synth_region(), *coarse = tu_block_mean(region, 4);
  cr_assert_eq(wsisa_scale_choose(s, 0, 2.0, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(sc.level, 1);
  cr_assert_eq(wsisa_slide_read_scaled(s, &sc, 0, 0, 256, 256, &ours, &e), 0, "%s", e.msg);
  cr_expect_leq(max_abs_diff(ours, coarse), 1);
  wsisa_image_free(ours);
  wsisa_image_free(coarse);
  wsisa_image_free(region);
  wsisa_grid_free(g);
  wsisa_slide_close(sample);
  wsisa_slide_close(s);
  unlink(path);
}

/* A rectangle read on its own equals the same pixels of the whole level
 * averaged at once: the fractional start of the rectangle in level pixels
 * (factor 1.2 here) is carried into the weights. */
Test(scale, rectangle_read_agrees_with_whole_level) {
  const char *path = synth(GENERIC_CM);
  wsisa_slide *s = open_path(path);
  wsisa_scale sc;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.6, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(sc.level, 1);
  wsisa_image *level = NULL, *whole = NULL, *part = NULL;
  cr_assert_eq(wsisa_slide_read_rgb(s, 1, 0, 0, 1024, 1024, &level, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_image_area_average(level, sc.factor, &whole, &e), 0, "%s", e.msg);
  cr_assert_eq(whole->width, sc.width);
  const int rects[][4] = {{7, 11, 50, 40}, {0, 0, 853, 853}, {801, 3, 52, 17}, {400, 600, 1, 1}};
  for (size_t r = 0; r < sizeof rects / sizeof *rects; r++) {
    const int *q = rects[r];
    cr_assert_eq(wsisa_slide_read_scaled(s, &sc, q[0], q[1], q[2], q[3], &part, &e), 0, "%s", e.msg);
    size_t bad = 0;
    for (int y = 0; y < q[3]; y++)
      bad += memcmp(wsisa_image_row(part, y), (uint8_t *)wsisa_image_row(whole, q[1] + y) + 3 * q[0],
                    (size_t)q[2] * 3) != 0;
    cr_expect_eq(bad, 0, "rectangle %zu: %zu rows differ", r, bad);
    wsisa_image_free(part);
  }
  wsisa_image_free(level);
  wsisa_image_free(whole);
  wsisa_slide_close(s);
  unlink(path);
}

Test(scale, mapping_to_level0_and_back) {
  const char *path = synth(SVS40);
  wsisa_slide *s = open_path(path);
  wsisa_scale sc;
  double x0, y0, x, y;
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, NULL), 0);
  wsisa_scale_to_level0(&sc, 10.5, 20, &x0, &y0);
  cr_expect_float_eq(x0, 21, 0);
  cr_expect_float_eq(y0, 40, 0);
  wsisa_scale_from_level0(&sc, 21, 40, &x, &y);
  cr_expect_float_eq(x, 10.5, 0);
  cr_expect_float_eq(y, 20, 0);
  cr_assert_eq(wsisa_scale_choose(s, 0, 2.0, &sc, NULL), 0); /* level 1 (x4) by 2 */
  wsisa_scale_to_level0(&sc, 3, 4, &x0, &y0);
  cr_expect_float_eq(x0, 24, 0);
  cr_expect_float_eq(y0, 32, 0);
  wsisa_slide_close(s);
  unlink(path);
  s = open_path(tu_src(SAMPLE));
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, NULL), 0);
  wsisa_scale_to_level0(&sc, 1234, 567, &x0, &y0);
  cr_expect_float_eq(x0, 1234, 0);
  cr_expect_float_eq(y0, 567, 0);
  wsisa_slide_close(s);
}

/* ---- plain images -------------------------------------------------------------------------- */

Test(scale, plain_images) {
  const char *png = tu_src("tests/data/tile_256.png");
  wsisa_image *plain = NULL, *img = NULL, *halved = NULL;
  wsisa_scale sc;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_read_rgb(png, &plain, &e), 0, "%s", e.msg);
  /* no MPP: as it is, whatever the target */
  cr_assert_eq(wsisa_image_read_scaled(png, 0, 0.5, &img, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(img, plain), 0);
  cr_expect_eq(sc.source, WSISA_MPP_NONE);
  cr_expect_eq(sc.factor_q, ONE);
  wsisa_image_free(img);
  cr_assert_eq(wsisa_image_read_scaled(png, 0, 2.0, &img, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(img, plain), 0);
  wsisa_image_free(img);
  /* 0.504 um: within 1 % of 0.5 */
  cr_assert_eq(wsisa_image_read_scaled(png, 0.504, 0.5, &img, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(img, plain), 0);
  wsisa_image_free(img);
  /* 0.25 um: averaged by 2 like a slide level */
  cr_assert_eq(wsisa_image_read_scaled(png, 0.25, 0.5, &img, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_image_area_average(plain, 2, &halved, &e), 0, "%s", e.msg);
  cr_expect_eq(img->width, 128);
  cr_expect_eq(tu_image_diff(img, halved), 0);
  cr_expect_eq(sc.source, WSISA_MPP_USER);
  cr_expect_float_eq(wsisa_scale_step(&sc), 2, 0);
  wsisa_image_free(img);
  /* coarser than the target: refused */
  cr_expect_eq(wsisa_image_read_scaled(png, 1.0, 0.5, &img, &sc, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "tile_256.png: the image is 1 um/pixel, coarser than the target 0.5"),
            "%s", e.msg);
  cr_expect_null(img);
  wsisa_image_free(halved);
  wsisa_image_free(plain);
}

/* Sizes are labelled with the pixel size read: as it is only within 1 % of
 * the target (2 % in area), a 0.4564 um level (a 40x NDPI's level 1) is
 * averaged to 0.5, and the sample is 0.499 um, not the target's 0.5. */
Test(scale, pixel_size_read_is_the_label) {
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_scale sc;
  wsisa_slide *s = open_path(tu_src(SAMPLE));
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(sc.factor_q, ONE);
  cr_expect_float_eq(wsisa_scale_pixel_mpp(&sc), 0.499, 1e-12);
  wsisa_slide_close(s);
  /* levels 0.2282 and 0.4564 um */
  wsisa_image *base = tu_synth_region();
  cr_assert_not_null(base);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/ndpi-like.tiff", tu_tmpdir("scale"));
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = RESUNIT_CENTIMETER,
                        .resolution = 1e4 / 0.2282, .levels = 2, .level_step = 2, .tile = 256};
  cr_assert_eq(tu_slide_write(path, base, &spec), 0);
  wsisa_image_free(base);
  s = open_path(path);
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_expect_eq(sc.level, 1);
  cr_expect_neq(sc.factor_q, ONE, "0.4564 um is 9 %% finer than 0.5: averaged, not as it is");
  const double read = wsisa_scale_pixel_mpp(&sc);
  cr_expect(fabs(read * read / 0.25 - 1) < 0.02, "%g um/pixel read: area within 2 %%", read);
  wsisa_slide_close(s);
  unlink(path);
  /* an image taken as it is stands for the target */
  cr_assert_eq(wsisa_scale_for_image("x.png", 64, 64, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_expect_float_eq(wsisa_scale_pixel_mpp(&sc), 0.5, 0);
}

/* Slide or image is one input type: the backend follows the content, and an
 * image's rectangle reads as the crop of the image read whole, at any MPP. */
Test(scale, one_input_type_two_backends) {
  const char *png = tu_src("tests/data/tile_256.png");
  wsisa_input *in = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_input_open(tu_src(SAMPLE), WSISA_INPUT_AUTO, &in, &e), 0, "%s", e.msg);
  cr_expect_eq(wsisa_input_kind_of(in), WSISA_INPUT_SLIDE);
  wsisa_scale sc;
  cr_assert_eq(wsisa_input_scale(in, 0, 0.5, -1, &sc, &e), 0, "%s", e.msg);
  wsisa_image *a = NULL, *b = NULL;
  wsisa_slide *slide = NULL;
  cr_assert_eq(wsisa_slide_open(tu_src(SAMPLE), &slide, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_input_read_scaled(in, &sc, 300, 200, 64, 48, &a, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_slide_read_scaled(slide, &sc, 300, 200, 64, 48, &b, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(a, b), 0);
  wsisa_image_free(a);
  wsisa_image_free(b);
  wsisa_slide_close(slide);
  wsisa_input_close(in);

  cr_assert_eq(wsisa_input_open(png, WSISA_INPUT_AUTO, &in, &e), 0, "%s", e.msg);
  cr_expect_eq(wsisa_input_kind_of(in), WSISA_INPUT_IMAGE);
  cr_expect_eq(wsisa_input_dark_background(in), 0);
  int64_t w0, h0;
  wsisa_input_level0(in, &w0, &h0);
  cr_expect(w0 == 256 && h0 == 256);
  wsisa_grid *g = NULL;
  cr_expect_eq(wsisa_input_grid(in, &sc, 64, 0, &g, &e), WSISA_EUSAGE);
  cr_expect_null(g);
  const double mpps[] = {0, 0.3, 0.25};
  for (size_t i = 0; i < sizeof mpps / sizeof *mpps; i++) {
    wsisa_image *whole = NULL, *crop = NULL;
    cr_assert_eq(wsisa_input_scale(in, mpps[i], 0.5, -1, &sc, &e), 0, "%s", e.msg);
    cr_assert_eq(wsisa_image_read_scaled(png, mpps[i], 0.5, &whole, NULL, &e), 0, "%s", e.msg);
    cr_assert_eq(wsisa_input_read_scaled(in, &sc, 17, 9, 40, 33, &crop, &e), 0, "%s", e.msg);
    for (int y = 0; y < 33; y++)
      cr_expect_eq(memcmp(wsisa_image_row(crop, y), (uint8_t *)wsisa_image_row(whole, 9 + y) + 3 * 17,
                          40 * 3),
                   0, "mpp %g, row %d", mpps[i], y);
    wsisa_image_free(whole);
    wsisa_image_free(crop);
  }
  /* a plan made on another size (the file changed since) is refused */
  sc.level_width = 300;
  wsisa_image *none = NULL;
  wsisa_err changed = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_input_read_scaled(in, &sc, 0, 0, 8, 8, &none, &changed), WSISA_EFORMAT);
  cr_expect(strstr(changed.msg, "now 256x256 pixels, was 300x256"), "%s", changed.msg);
  wsisa_input_close(in);
  /* asked for a slide, a PNG is not one */
  cr_expect_eq(wsisa_input_open(png, WSISA_INPUT_SLIDE, &in, &e), WSISA_EFORMAT);
  cr_expect_null(in);
}

/* An image taken whole at its own resolution: its pixels handed over, the
 * same as a read; a crop or a resampling is read as before. */
Test(scale, image_taken_whole) {
  const char *png = tu_src("tests/data/tile_256.png");
  const double mpps[] = {0, 0.25};
  const int64_t rect[][4] = {{0, 0, 256, 256}, {0, 0, 255, 256}, {1, 0, 255, 256}};
  for (size_t m = 0; m < sizeof mpps / sizeof *mpps; m++)
    for (size_t r = 0; r < sizeof rect / sizeof *rect; r++) {
      wsisa_input *in = NULL;
      wsisa_err e = WSISA_ERR_INIT;
      wsisa_scale sc;
      wsisa_image *read = NULL, *taken = NULL;
      const int64_t *q = rect[r];
      cr_assert_eq(wsisa_input_open(png, WSISA_INPUT_AUTO, &in, &e), 0, "%s", e.msg);
      cr_assert_eq(wsisa_input_scale(in, mpps[m], 0.5, -1, &sc, &e), 0, "%s", e.msg);
      if (q[0] + q[2] > sc.width || q[1] + q[3] > sc.height) {
        wsisa_input_close(in);
        continue;
      }
      cr_assert_eq(wsisa_input_read_scaled(in, &sc, q[0], q[1], (int)q[2], (int)q[3], &read, &e),
                   0, "%s", e.msg);
      cr_assert_eq(wsisa_input_take_scaled(in, &sc, q[0], q[1], (int)q[2], (int)q[3], &taken, &e),
                   0, "%s", e.msg);
      cr_expect_eq(tu_image_diff(read, taken), 0, "mpp %g, rectangle %zu", mpps[m], r);
      /* only the whole image at its own size is handed over (the input
       * keeps nothing to read); after a copy it still reads */
      wsisa_image *again = NULL;
      const int whole = mpps[m] == 0 && r == 0;
      if (!whole) {
        cr_expect_eq(wsisa_input_read_scaled(in, &sc, q[0], q[1], (int)q[2], (int)q[3], &again,
                                             &e),
                     0, "%s", e.msg);
        cr_expect_eq(tu_image_diff(read, again), 0);
      }
      wsisa_image_free(again);
      wsisa_image_free(read);
      wsisa_image_free(taken);
      wsisa_input_close(in);
    }
}

/* ---- tissue on a dark background ------------------------------------------------------------ */

Test(scale, fluorescence_tissue) {
  const char *path = synth(FLUORESCENCE);
  wsisa_slide *s = open_path(path);
  wsisa_scale sc;
  wsisa_grid *g = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_scale_choose(s, 0, 0.5, &sc, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make_scaled(s, &sc, 512, 0, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->dark_background, 1);
  cr_expect_eq(g->ntissue, 2);
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *t = &g->tiles[i];
    cr_expect_eq(t->tissue, t->col == 1, "tile %zu: %g", i, t->tissue_fraction);
    if (t->col == 0) cr_expect_float_eq(t->tissue_fraction, 0, 0, "glass tile %zu", i);
  }
  /* the nuclei are lit: a tissue tile read at the target has bright blue pixels */
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_grid_tile_read(s, g, &g->tiles[3], &img, &e), 0, "%s", e.msg);
  size_t lit = 0;
  for (int y = 0; y < img->height; y++) {
    const uint8_t *p = wsisa_image_row(img, y);
    for (int x = 0; x < img->width; x++, p += 3) lit += p[2] > 150 && p[2] > 2 * p[0];
  }
  cr_expect_gt(lit, (size_t)img->width * img->height / 50, "%zu lit pixels", lit);
  wsisa_image_free(img);
  wsisa_grid_free(g);
  wsisa_slide_close(s);
  unlink(path);
}

/* ---- wsisa tiles -------------------------------------------------------------------------- */

Test(scale, tiles_command_on_40x_slide) {
  const char *path = synth(SVS40);
  char args[8192], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "tiles '%s' --tile-size 512", path);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  const char *want[] = {
      "mpp       0.2500 x 0.2500 um/pixel at level 0, from the slide's openslide.mpp-x/-y properties\n",
      "objective 40x\n",
      "  level 1  512 x 512  downsample 4  1.0000 um/pixel\n",
      "target    0.5 um/pixel: level 0 (0.2500 um/pixel) area-averaged by factor 2\n",
      "grid      1024 x 1024 target pixels, tile 512, overlap 0: 2 x 2 = 4 tiles; 1 target pixel = 2 level-0 pixels\n",
      "tissue    2 of 4 tiles",
      "  1,0  512,0,512,512  1024,0,1024,1024  ",
      "  1,1  512,512,512,512  1024,1024,1024,1024  ",
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_expect(strstr(out, want[i]) != NULL, "\"%s\" not in:\n%s", want[i], out);
  free(out);
  free(err);

  snprintf(args, sizeof args, "tiles '%s' --tile-size 100 --target-mpp 2 --json", path);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  json_error_t je;
  json_t *root = json_loads(out, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  cr_expect_str_eq(json_string_value(json_object_get(root, "mpp_source")), "openslide");
  json_t *scale = json_object_get(root, "scale");
  cr_expect_eq(json_integer_value(json_object_get(scale, "level")), 1);
  cr_expect_float_eq(json_real_value(json_object_get(scale, "factor")), 2.0, 0);
  cr_expect_float_eq(json_real_value(json_object_get(scale, "level0_per_pixel")), 8.0, 0);
  json_t *tiles = json_object_get(json_object_get(root, "grid"), "tile_list");
  cr_assert_eq(json_array_size(tiles), 9);
  json_t *level0 = json_object_get(json_array_get(tiles, 2), "level0");
  cr_expect_eq(json_integer_value(json_object_get(level0, "x")), 1600);
  cr_expect_eq(json_integer_value(json_object_get(level0, "width")), 448);
  cr_expect_eq(json_integer_value(json_object_get(json_array_get(tiles, 2), "width")), 56);
  json_decref(root);
  free(out);
  free(err);
  unlink(path);

  path = synth(SVS40_NO_MPP);
  snprintf(args, sizeof args, "tiles '%s'", path);
  cr_expect_eq(tu_run(args, &out, &err), 2);
  cr_expect(out == NULL || out[0] == '\0', "%s", out);
  cr_expect(strstr(err, "does not give its pixel size") && strstr(err, "--mpp"), "%s", err);
  free(out);
  free(err);
  snprintf(args, sizeof args, "tiles '%s' --mpp 0.25", path);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "mpp       0.2500 x 0.2500 um/pixel at level 0, from the user's --mpp / inputs.slide_mpp\n"),
            "%s", out);
  cr_expect(strstr(out, "area-averaged by factor 2"), "%s", out);
  free(out);
  free(err);
  unlink(path);
}
