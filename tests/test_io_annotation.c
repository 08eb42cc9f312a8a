/* Reference annotations (io/annotation.c): GeoJSON polygons and label images
 * rasterised onto tiles at several scales against the independent NumPy
 * rasterisation of tests/golden/make_annotation.py, object metrics of a
 * hand-made run against them against make_object_metrics.py's, which tiles
 * count as annotated, and the refusals of bad files, each naming the file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"
#include "io/io.h"
#include "tests/testutil.h"

#define GOLDEN "tests/golden/annotation/"

static wsisa_annot_kind kind_of(const char *name) {
  if (strcmp(name, "geojson") == 0) return WSISA_ANNOT_GEOJSON;
  if (strcmp(name, "labels") == 0) return WSISA_ANNOT_LABELS;
  if (strcmp(name, "mask") == 0) return WSISA_ANNOT_MASK;
  cr_assert_fail("kind %s", name);
  return WSISA_ANNOT_NONE;
}

static wsisa_scale scale_of(double level_downsample, double factor) {
  wsisa_scale sc;
  memset(&sc, 0, sizeof sc);
  sc.level_downsample = level_downsample;
  sc.factor = factor;
  return sc;
}

/* The golden PNG (u16) as labels, compared pixel by pixel. */
static size_t differing(const wsisa_image *lab, const char *png) {
  wsisa_image *want = tu_load(png);
  cr_assert_not_null(want, "%s", png);
  cr_assert_eq(want->width, lab->width);
  cr_assert_eq(want->height, lab->height);
  size_t bad = 0;
  for (int y = 0; y < lab->height; y++)
    for (int x = 0; x < lab->width; x++) {
      int32_t got = ((const int32_t *)wsisa_image_row(lab, y))[x];
      int32_t exp = want->type == WSISA_U16 ? ((const uint16_t *)wsisa_image_row(want, y))[x]
                                            : ((const uint8_t *)wsisa_image_row(want, y))[x];
      bad += got != exp;
    }
  wsisa_image_free(want);
  return bad;
}

static wsisa_annotation *load(wsisa_annot_kind kind, const char *path, double w0, double h0,
                              double ox, double oy, double d, wsisa_err *e) {
  wsisa_annot_spec sp = {.kind = kind, .path = path, .input = "slide.svs",
                         .width0 = (int64_t)w0, .height0 = (int64_t)h0, .origin_x = ox,
                         .origin_y = oy, .downsample = d};
  wsisa_annotation *a = NULL;
  int rc = wsisa_annotation_load(&sp, &a, e);
  return rc ? NULL : a;
}

Test(annotation, rasterised_as_the_independent_reference) {
  FILE *f = fopen(tu_src(GOLDEN "cases.txt"), "r");
  cr_assert_not_null(f);
  char name[64], kind[16], source[256];
  double w0, h0, ox, oy, d, ld, factor;
  long long x, y;
  int w, h;
  size_t objects;
  int cases = 0;
  while (fscanf(f, "%63s %15s %255s %lf %lf %lf %lf %lf %lf %lf %lld %lld %d %d %zu", name, kind,
                source, &w0, &h0, &ox, &oy, &d, &ld, &factor, &x, &y, &w, &h, &objects) == 15) {
    char path[WSISA_PATH_MAX];
    tu_path(path, GOLDEN "%s", source);
    wsisa_err e = WSISA_ERR_INIT;
    wsisa_annotation *a = load(kind_of(kind), tu_src(path), w0, h0, ox, oy, d, &e);
    cr_assert_not_null(a, "%s: %s", name, e.msg);
    wsisa_scale sc = scale_of(ld, factor);
    cr_expect(wsisa_annotation_covers(a, &sc, x, y, w, h), "%s: not covered", name);
    wsisa_image *lab = NULL;
    size_t n = 0;
    cr_assert_eq(wsisa_annotation_rasterize(a, &sc, x, y, w, h, &lab, &n, &e), 0, "%s: %s", name,
                 e.msg);
    cr_expect_eq(n, objects, "%s: %zu objects, want %zu", name, n, objects);
    tu_path(path, GOLDEN "%s.png", name);
    size_t bad = differing(lab, path);
    cr_expect_eq(bad, 0, "%s: %zu pixels differ from %s", name, bad, path);
    wsisa_image_free(lab);
    wsisa_annotation_free(a);
    cases++;
  }
  fclose(f);
  cr_expect_eq(cases, 10);
}

/* make_object_metrics.py's fields of run.png against the shapes, here from
 * the rasterised GeoJSON and the CPU matching. */
Test(annotation, metrics_of_a_run_against_the_annotation) {
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_annotation *a =
      load(WSISA_ANNOT_GEOJSON, tu_src(GOLDEN "shapes.geojson"), 200, 150, 0, 0, 1, &e);
  cr_assert_not_null(a, "%s", e.msg);
  wsisa_scale sc = scale_of(1, 1);
  wsisa_image *ref = NULL, *run = NULL;
  size_t n;
  cr_assert_eq(wsisa_annotation_rasterize(a, &sc, 0, 0, 200, 150, &ref, &n, &e), 0, "%s", e.msg);
  wsisa_image *png = tu_load(GOLDEN "run.png");
  cr_assert_not_null(png);
  cr_assert_eq(wsisa_image_new(png->width, png->height, 1, WSISA_I32, &run, NULL), 0);
  for (int y = 0; y < png->height; y++)
    for (int x = 0; x < png->width; x++)
      ((int32_t *)wsisa_image_row(run, y))[x] = ((const uint16_t *)wsisa_image_row(png, y))[x];
  uint64_t sums[WSISA_MATCH_FIELDS];
  cr_assert_eq(wsisa_cpu_object_match(ref, run, sums), 0);
  FILE *f = fopen(tu_src(GOLDEN "metrics.txt"), "r");
  cr_assert_not_null(f);
  char c1[64], c2[64];
  unsigned long long want[WSISA_MATCH_FIELDS];
  double dice, f1, aji;
  cr_assert_eq(fscanf(f, "%63s %63s", c1, c2), 2);
  for (int k = 0; k < WSISA_MATCH_FIELDS; k++) cr_assert_eq(fscanf(f, "%llu", &want[k]), 1);
  cr_assert_eq(fscanf(f, "%lf %lf %lf", &dice, &f1, &aji), 3);
  fclose(f);
  for (int k = 0; k < WSISA_MATCH_FIELDS; k++)
    cr_expect_eq(sums[k], want[k], "field %d: %llu, want %llu", k, (unsigned long long)sums[k],
                 want[k]);
  wsisa_object_metrics m;
  wsisa_object_metrics_of(sums, &m);
  cr_expect_float_eq(m.object_dice, dice, 1e-9);
  cr_expect_float_eq(m.f1, f1, 1e-9);
  cr_expect_float_eq(m.aji, aji, 1e-9);
  cr_log_info("run vs shapes: object Dice %.4f, F1 %.4f (P %.4f, R %.4f), AJI %.4f\n",
              m.object_dice, m.f1, m.precision, m.recall, m.aji);
  wsisa_image_free(png);
  wsisa_image_free(ref);
  wsisa_image_free(run);
  wsisa_annotation_free(a);
}

Test(annotation, which_tiles_are_annotated) {
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_scale one = scale_of(1, 1), two = scale_of(1, 2);
  /* a region: every pixel centre inside it */
  wsisa_annot_spec sp = {.kind = WSISA_ANNOT_GEOJSON, .path = tu_src(GOLDEN "shapes.geojson"),
                         .input = "slide.svs", .width0 = 200, .height0 = 150,
                         .has_region = 1, .region = {20, 10, 100, 60}};
  wsisa_annotation *a = NULL;
  cr_assert_eq(wsisa_annotation_load(&sp, &a, &e), 0, "%s", e.msg);
  cr_expect(wsisa_annotation_covers(a, &one, 20, 10, 100, 60));
  cr_expect(!wsisa_annotation_covers(a, &one, 19, 10, 100, 60));
  cr_expect(!wsisa_annotation_covers(a, &one, 20, 10, 101, 60));
  cr_expect(wsisa_annotation_covers(a, &two, 10, 5, 50, 30)); /* centres 21..119 */
  cr_expect(!wsisa_annotation_covers(a, &two, 9, 5, 50, 30));
  /* even a tile with no nucleus in it: the region says it was looked at */
  cr_expect(wsisa_annotation_covers(a, &one, 100, 50, 20, 20));
  wsisa_annotation_free(a);
  /* no region: a tile where some polygon covers a pixel centre */
  a = load(WSISA_ANNOT_GEOJSON, tu_src(GOLDEN "shapes.geojson"), 200, 150, 0, 0, 1, &e);
  cr_assert_not_null(a, "%s", e.msg);
  cr_expect(wsisa_annotation_covers(a, &one, 0, 0, 20, 20));
  cr_expect(!wsisa_annotation_covers(a, &one, 0, 100, 50, 50));
  /* the tiny triangle holds no pixel centre */
  cr_expect(!wsisa_annotation_covers(a, &one, 98, 98, 5, 5));
  wsisa_image *lab = NULL;
  size_t n;
  cr_expect_eq(wsisa_annotation_rasterize(a, &one, 0, 100, 50, 50, &lab, &n, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "not annotated"), "%s", e.msg);
  wsisa_annotation_free(a);
  /* a label image: every pixel centre on it (it spans 10.5..100.5 x 3..63) */
  wsisa_err_clear(&e);
  a = load(WSISA_ANNOT_LABELS, tu_src(GOLDEN "labels.png"), 200, 150, 10.5, 3, 1.5, &e);
  cr_assert_not_null(a, "%s", e.msg);
  cr_expect(wsisa_annotation_covers(a, &one, 10, 3, 90, 60));   /* centres 10.5 .. 99.5 */
  cr_expect(!wsisa_annotation_covers(a, &one, 9, 3, 90, 60));   /* 9.5 is off it */
  cr_expect(!wsisa_annotation_covers(a, &one, 10, 3, 91, 60));  /* 100.5 is off it */
  cr_expect(!wsisa_annotation_covers(a, &one, 10, 3, 90, 61));
  cr_expect_eq(wsisa_annotation_objects(a), 65535); /* its largest label */
  wsisa_annotation_free(a);
}

/* ---- refusals ------------------------------------------------------------------ */

static const char *write_file(const char *name, const char *text) {
  static char path[WSISA_PATH_MAX];
  tu_path(path, "%s/%s", tu_tmpdir("annotation"), name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static void expect_refused(wsisa_annot_kind kind, const char *path, const char *want) {
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_annotation *a = load(kind, path, 200, 150, 0, 0, 1, &e);
  cr_expect_null(a, "%s was accepted", path);
  wsisa_annotation_free(a);
  cr_expect(strncmp(e.msg, path, strlen(path)) == 0, "the message names another file: %s",
            e.msg);
  cr_expect(strstr(e.msg, want), "%s: '%s' lacks '%s'", path, e.msg, want);
}

#define POLY(c) "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":" c "}}"

Test(annotation, bad_geojson_refused_naming_the_file) {
  expect_refused(WSISA_ANNOT_GEOJSON, "/no/such/annotation.geojson", "No such file");
  expect_refused(WSISA_ANNOT_GEOJSON, write_file("broken.geojson", "{\"type\": \"Feat"),
                 "not JSON");
  expect_refused(WSISA_ANNOT_GEOJSON, write_file("obj.geojson", "{\"a\": 1}"),
                 "not GeoJSON features");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("point.geojson",
                            "[{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\","
                            "\"coordinates\":[1,2]}}]"),
                 "features[0]: a Point, not a polygon");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("outside.geojson",
                            "{\"type\":\"FeatureCollection\",\"features\":[" POLY(
                                "[[[1,1],[5,1],[5,5],[1,1]]]") "," POLY("[[[190,140],[201.5,"
                                                                        "140],[195,149],[190,"
                                                                        "140]]]") "]}"),
                 "features[1]: vertex (201.5, 140) outside slide.svs");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("negative.geojson", "[" POLY("[[[-1.25,1],[5,1],[5,5],[-1.25,1]]]") "]"),
                 "outside slide.svs");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("open.geojson", "[" POLY("[[[1,1],[5,1],[5,5],[1,2]]]") "]"),
                 "ring 0 is not closed");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("short.geojson", "[" POLY("[[[1,1],[5,1],[1,1]]]") "]"),
                 "ring 0 is not an array of at least 4 positions");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("text.geojson", "[" POLY("[[[1,1],[5,\"a\"],[5,5],[1,1]]]") "]"),
                 "position 1 is not [x, y]");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("empty.geojson", "{\"type\":\"FeatureCollection\",\"features\":[]}"),
                 "no polygon");
  expect_refused(WSISA_ANNOT_GEOJSON,
                 write_file("nogeom.geojson", "[{\"type\":\"Feature\",\"geometry\":null}]"),
                 "features[0]: no geometry");
}

/* A vertex at most a pixel past the slide's edge, as programs that round their
 * outlines outwards write them, is taken on the edge: the nucleus keeps the
 * pixels it covers on the slide. */
Test(annotation, a_hair_past_the_edge_taken_on_it) {
  const char *path = write_file(
      "hair.geojson", "[" POLY("[[[196,146],[200.75,146],[200.75,150.5],[196,150.5],[196,146]]]") "]");
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_annotation *a = load(WSISA_ANNOT_GEOJSON, path, 200, 150, 0, 0, 1, &e);
  cr_assert_not_null(a, "%s", e.msg);
  wsisa_scale sc = scale_of(1, 1);
  wsisa_image *lab = NULL;
  size_t n = 0;
  cr_assert_eq(wsisa_annotation_rasterize(a, &sc, 192, 142, 8, 8, &lab, &n, &e), 0, "%s", e.msg);
  cr_expect_eq(n, 1);
  size_t on = 0;
  for (int y = 0; y < 8; y++)
    for (int x = 0; x < 8; x++) on += ((const int32_t *)wsisa_image_row(lab, y))[x] != 0;
  cr_expect_eq(on, 16, "the 4x4 pixels (196..199, 146..149): %zu", on);
  wsisa_image_free(lab);
  wsisa_annotation_free(a);
}

Test(annotation, bad_label_images_refused_naming_the_file) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/rgb.png", tu_tmpdir("annotation-rgb"));
  wsisa_image *rgb = NULL;
  cr_assert_eq(wsisa_image_new(10, 10, 3, WSISA_U8, &rgb, NULL), 0);
  cr_assert_eq(wsisa_image_write(path, rgb, NULL), 0);
  wsisa_image_free(rgb);
  expect_refused(WSISA_ANNOT_LABELS, path, "3 channels; a label image has one");
  tu_path(path, "%s/f.tif", tu_tmpdir("annotation-f32"));
  wsisa_image *fl = NULL;
  cr_assert_eq(wsisa_image_new(10, 10, 1, WSISA_F32, &fl, NULL), 0);
  cr_assert_eq(wsisa_image_write(path, fl, NULL), 0);
  wsisa_image_free(fl);
  expect_refused(WSISA_ANNOT_LABELS, path, "floating-point");
  tu_path(path, "%s/neg.tif", tu_tmpdir("annotation-neg"));
  wsisa_image *neg = NULL;
  cr_assert_eq(wsisa_image_new(10, 10, 1, WSISA_I32, &neg, NULL), 0);
  ((int32_t *)wsisa_image_row(neg, 3))[4] = -2;
  cr_assert_eq(wsisa_image_write(path, neg, NULL), 0);
  wsisa_image_free(neg);
  expect_refused(WSISA_ANNOT_LABELS, path, "negative label -2 at (4, 3)");
  /* 60x40 label pixels of 1.5 from (10.5, 3) fit on 200x150; of 4 they do not */
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_annotation *a = load(WSISA_ANNOT_LABELS, tu_src(GOLDEN "labels.png"), 200, 150, 10.5, 3,
                             4, &e);
  cr_expect_null(a);
  cr_expect(strstr(e.msg, "60x40 pixels of 4 level-0 pixels from (10.5, 3) reach past slide.svs "
                          "(level 0 is 200x150 pixels, so at most 48x37): wrong size for it"),
            "%s", e.msg);
  wsisa_err_clear(&e);
  a = load(WSISA_ANNOT_MASK, tu_src(GOLDEN "mask.png"), 200, 150, 200, 0, 1, &e);
  cr_expect_null(a);
  cr_expect(strstr(e.msg, "origin (200, 0) outside slide.svs"), "%s", e.msg);
  /* the largest size that fits: a whole-slide label image at downsample 1.5 */
  wsisa_err_clear(&e);
  wsisa_annot_spec sp = {.kind = WSISA_ANNOT_GEOJSON, .path = tu_src(GOLDEN "shapes.geojson"),
                         .input = "slide.svs", .width0 = 200, .height0 = 150,
                         .has_region = 1, .region = {150, 10, 60, 10}};
  cr_expect_eq(wsisa_annotation_load(&sp, &a, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "region 150,10,60,10 outside slide.svs"), "%s", e.msg);
}

/* A 32-bit unsigned TIFF past INT32_MAX is refused, not read as negative. */
Test(annotation, u32_labels_past_int32_refused) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/big.tif", tu_tmpdir("annotation-u32"));
  char cmd[9000];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c \"import numpy, tifffile; a = numpy.zeros((4, 5), numpy.uint32); "
           "a[1, 2] = 3000000000; tifffile.imwrite('%s', a)\"",
           path);
  cr_assert_eq(system(cmd), 0);
  wsisa_image *img = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_image_read(path, &img, &e), WSISA_EFORMAT);
  cr_expect(strstr(e.msg, "unsigned 32-bit value 3000000000 at (2, 1) is above 2147483647"),
            "%s", e.msg);
}
