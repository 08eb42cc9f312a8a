/* Slides as pathologists have them, through the command line: `wsisa run`
 * reads each slide at the study's resolution (level and factor in run.json,
 * the bundled sample unchanged; the stain check: tests/test_cli_stain.c),
 * keeps a finished run's figures on --resume; `wsisa segment` writes
 * GeoJSON, features and labels in level-0 slide pixels, checked by reading
 * the nuclei back from the slide;
 * `segment --help` lists the parameters from their table. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/csv.h"
#include "io/io.h"
#include "sa/sa.h"
#include "tests/synthslide.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"
/* engine/run/run.h's WSISA_MIN_NUCLEI_PER_MM2, which tests do not see */
#define WSISA_MIN_NUCLEI_PER_MM2_TEST 200.0

/* ---- helpers ------------------------------------------------------------------ */

static int make_svs40(const char *p) { return tu_synth_svs40(p, 1); }

/* Column `name` of tile `tile` in a results folder's journal (-1: none). */
static long journal_value(const char *dir, size_t tile, const char *name) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/journal.csv", dir);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "tile", &c, NULL), 0);
  long col = wsisa_csv_column(c, name), tcol = wsisa_csv_column(c, "tile");
  cr_assert(col >= 0 && tcol >= 0);
  long found = -1;
  for (size_t r = 0; r < c->nrows; r++) {
    double t, v;
    cr_assert_eq(wsisa_csv_number(c, r, (size_t)tcol, &t, NULL), 0);
    cr_assert_eq(wsisa_csv_number(c, r, (size_t)col, &v, NULL), 0);
    if ((size_t)t == tile) found = (long)v;
  }
  wsisa_csv_free(c);
  return found;
}

/* The reference nucleus count of tile `tile` in a results folder's journal. */
static long journal_ref_nuclei(const char *dir, size_t tile) {
  return journal_value(dir, tile, "ref_nuclei");
}

/* "N nuclei" of `wsisa segment ARGS --labels`: its count. */
static long segment_nuclei(const char *args) {
  char cmd[8800], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "segment %s --labels '%s/l.tif' -o '%s/m.tif'", args,
           tu_tmpdir("slides_seg"), tu_tmpdir("slides_seg"));
  cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s: %s", cmd, err);
  const char *at = strstr(out, "%), ");
  cr_assert_not_null(at, "%s", out);
  long n = strtol(at + 4, NULL, 10);
  free(out);
  free(err);
  return n;
}

/* ---- wsisa run: resolution ------------------------------------------------------ */

Test(slides, run_reads_the_40x_slide_at_half_a_micron, .timeout = 300) {
  const char *svs = tu_slides_path("svs40.svs", make_svs40);
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  /* each tile with its halo and the slide's colour statistics, as `wsisa
   * segment --tile` reads it (compared below) */
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"], \"tile_size\": 512", svs);
  cr_assert_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s", err);
  free(err);
  json_t *root = tu_json_file(dir, "run.json");
  json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
  cr_assert_not_null(in, "run.json has no inputs");
  cr_expect_str_eq(json_string_value(json_object_get(in, "path")), svs);
  cr_expect_str_eq(json_string_value(json_object_get(in, "mpp_source")), "openslide");
  cr_expect_float_eq(tu_json_num(in, "mpp"), 0.25, 1e-12);
  cr_expect_float_eq(tu_json_num(in, "target_mpp"), 0.5, 0);
  cr_expect_float_eq(tu_json_num(in, "pixel_mpp"), 0.5, 1e-12);
  cr_expect_eq(tu_json_num(in, "level"), 0, "level 0 is the one at or finer than 0.5 um");
  cr_expect_float_eq(tu_json_num(in, "factor"), 2.0, 0, "0.25 um pixels averaged 2 x 2");
  cr_expect(json_is_true(json_object_get(in, "resampled")));
  cr_expect_float_eq(tu_json_num(in, "level0_per_pixel"), 2.0, 0);
  cr_expect_eq(tu_json_num(in, "tiles"), 2, "the two tissue tiles of the 2 x 2 grid at 512");
  json_t *stain = json_object_get(in, "stain");
  cr_expect(json_is_true(json_object_get(stain, "checked")));
  cr_expect(json_is_false(json_object_get(stain, "dark_background")));
  cr_expect_eq(json_array_size(json_object_get(root, "warnings")), 0);
  cr_expect_gt(tu_json_num(in, "reference_nuclei_per_mm2"), 1000, "H&E tissue is dense in nuclei");
  json_decref(root);
  /* the run's second tile is the grid's (1, 1): its reference is what
   * `wsisa segment --tile 1,1` finds there, read the same way (the halo of
   * the defaults, the slide's statistics, the nuclei the tile owns) */
  char args[TU_LINE_MAX];
  snprintf(args, sizeof args, "'%s' --tile 1,1 --tile-size 512", svs);
  long seg = segment_nuclei(args);
  cr_expect_gt(seg, 50);
  cr_expect_eq(journal_ref_nuclei(dir, 1), seg);
  unlink(svs);
}

/* inputs.level names the level to read; it is still resampled to the target,
 * and a level coarser than the target is refused before any work. */
Test(slides, a_level_given_is_read_at_the_target, .timeout = 300) {
  const char *svs = tu_slides_path("svs40.svs", make_svs40);
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"], \"tile_size\": 512, \"level\": 0", svs);
  cr_assert_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s", err);
  free(err);
  json_t *root = tu_json_file(dir, "run.json");
  json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
  cr_expect_eq(tu_json_num(in, "level"), 0);
  cr_expect_float_eq(tu_json_num(in, "factor"), 2.0, 0, "level 0 at 0.25 um still averaged 2 x 2");
  json_decref(root);
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"], \"level\": 1", svs);
  err = NULL;
  cr_expect_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 2);
  cr_expect(strstr(err, "svs40.svs: level 1 is 1 um/pixel, coarser than the target 0.5 "
                        "um/pixel: choose a finer level, or leave the level to the target "
                        "resolution"),
            "%s", err);
  free(err);
  unlink(svs);
}

Test(slides, run_reads_the_bundled_sample_as_it_is, .timeout = 300) {
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  /* each tile alone with its own colour statistics, as `wsisa segment` reads
   * the PNG of one (compared below): an image has no neighbours */
  snprintf(inputs, sizeof inputs,
           "\"slides\": [\"%s\"], \"halo\": 0, \"normalization\": \"tile\"", tu_src(SAMPLE));
  cr_assert_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s", err);
  free(err);
  json_t *root = tu_json_file(dir, "run.json");
  json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
  cr_expect_float_eq(tu_json_num(in, "mpp"), 0.499, 1e-12);
  cr_expect_eq(tu_json_num(in, "level"), 0);
  cr_expect_float_eq(tu_json_num(in, "factor"), 1.0, 0, "0.499 is within 1%% of 0.5: no resampling");
  /* labelled with what was read, not the target: areas 0.4 %% smaller */
  cr_expect_float_eq(tu_json_num(in, "pixel_mpp"), 0.499, 1e-12);
  cr_expect(json_is_false(json_object_get(in, "resampled")));
  cr_expect_eq(tu_json_num(in, "tiles"), 6);
  cr_expect_eq(json_array_size(json_object_get(root, "warnings")), 0);
  json_decref(root);
  /* bit for bit: tile (1, 1) of the slide segments as tile_1024.png, which is
   * that region read by OpenSlide's Python binding (tests/golden/make_tiles.py) */
  char a[TU_LINE_MAX], b[TU_LINE_MAX], pa[WSISA_PATH_MAX], pb[WSISA_PATH_MAX];
  const char *tmp = tu_tmpdir("slides_bits");
  tu_path(pa, "%s/slide.tif", tmp);
  tu_path(pb, "%s/png.tif", tmp);
  snprintf(a, sizeof a, "segment '%s' --tile 1,1 --halo 0 --normalization tile -o '%s'", tu_src(SAMPLE), pa);
  snprintf(b, sizeof b, "segment '%s' -o '%s'", tu_src("tests/data/tile_1024.png"), pb);
  cr_assert_eq(tu_run(a, NULL, NULL), 0);
  cr_assert_eq(tu_run(b, NULL, NULL), 0);
  wsisa_image *ma = NULL, *mb = NULL;
  cr_assert_eq(wsisa_image_read(pa, &ma, NULL), 0);
  cr_assert_eq(wsisa_image_read(pb, &mb, NULL), 0);
  cr_expect_eq(tu_image_diff(ma, mb), 0, "the slide's tile and the PNG segment alike");
  wsisa_image_free(ma);
  wsisa_image_free(mb);
  /* the run's reference of its 4th tissue tile, (1, 1), is the same */
  snprintf(a, sizeof a, "'%s'", tu_src("tests/data/tile_1024.png"));
  cr_expect_eq(journal_ref_nuclei(dir, 3), segment_nuclei(a));
}

/* A study of the sample as a user runs it (1024 tiles, each with its halo,
 * the slide's colour statistics): the grid's tile (0, 0), 8.6 % tissue by
 * `wsisa tiles`, is segmented, and run.json's tissue_mm2 is exactly the
 * tissue of the tiles segmented, as the journal has it. */
Test(slides, run_segments_every_tissue_tile_and_counts_its_tissue, .timeout = 600) {
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"]", tu_src(SAMPLE));
  cr_assert_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s", err);
  free(err);
  cr_expect_gt(journal_ref_nuclei(dir, 0), 50, "tile (0, 0) is segmented");
  double sum = 0;
  for (size_t t = 0; t < 6; t++) {
    const long tissue = journal_value(dir, t, "ref_tissue");
    cr_expect_geq(tissue, 0.05 * 1024 * 919, "tile %zu holds tissue", t);
    sum += (double)tissue;
  }
  json_t *root = tu_json_file(dir, "run.json");
  json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
  cr_expect_eq(tu_json_num(in, "tiles"), 6);
  cr_expect_eq(tu_json_num(in, "halo"), 128);
  const double mpp = tu_json_num(in, "target_mpp");
  cr_expect_float_eq(tu_json_num(in, "tissue_mm2"), sum * mpp * mpp * 1e-6, 1e-9);
  json_t *norm = json_object_get(in, "normalization");
  cr_expect_str_eq(json_string_value(json_object_get(norm, "statistics")), "slide");
  cr_expect_gt(tu_json_num(norm, "pixels"), 1e6);
  cr_expect_eq(json_array_size(json_object_get(norm, "mean")), 3);
  json_decref(root);
}

/* ---- wsisa run --resume of a finished run -------------------------------------------- */

Test(slides, resuming_a_finished_run_keeps_its_figures, .timeout = 120) {
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  snprintf(inputs, sizeof inputs, "\"images\": [\"%s\"]", tu_src("tests/data/tile_256.png"));
  cr_assert_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s", err);
  free(err);
  json_t *before = tu_json_file(dir, "run.json");
  cr_expect_eq(json_array_size(json_object_get(before, "resumes")), 0, "a fresh run");
  char args[TU_LINE_MAX];
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  for (int k = 1; k <= 2; k++) {
    cr_assert_eq(tu_run(args, NULL, &err), 0, "%s", err);
    free(err);
    json_t *after = tu_json_file(dir, "run.json");
    json_t *resumes = json_object_get(after, "resumes");
    cr_assert_eq(json_array_size(resumes), (size_t)k, "each resume is listed");
    json_t *last = json_array_get(resumes, (size_t)k - 1);
    cr_expect_eq(tu_json_num(last, "units_run"), 0, "nothing was left to do");
    cr_expect_gt(tu_json_num(last, "units_total"), 0);
    cr_expect(json_is_string(json_object_get(last, "at")));
    /* every figure but the resumes is the finished run's */
    json_object_del(after, "resumes");
    json_t *b = json_deep_copy(before);
    json_object_del(b, "resumes");
    char *ta = json_dumps(after, JSON_SORT_KEYS), *tb = json_dumps(b, JSON_SORT_KEYS);
    cr_expect_str_eq(ta, tb);
    free(ta);
    free(tb);
    json_decref(b);
    json_decref(after);
  }
  json_decref(before);
}

/* ---- wsisa segment: level-0 coordinates ---------------------------------------------- */

/* Mean red of the level-0 pixels in the 3 x 3 window at (x, y) of `tile`, the
 * level-0 rectangle read at (x0, y0). */
static double red_at(const wsisa_image *tile, int64_t x0, int64_t y0, double x, double y) {
  int cx = (int)floor(x) - (int)x0, cy = (int)floor(y) - (int)y0;
  double sum = 0;
  int n = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int px = cx + dx, py = cy + dy;
      if (px < 0 || py < 0 || px >= tile->width || py >= tile->height) continue;
      sum += ((const uint8_t *)wsisa_image_row(tile, py))[3 * px];
      n++;
    }
  return n ? sum / n : 255;
}

/* Area centroid of a closed polygon ring (shoelace). */
static void ring_centroid(json_t *ring, double *cx, double *cy) {
  double a = 0, sx = 0, sy = 0;
  for (size_t i = 0; i + 1 < json_array_size(ring); i++) {
    json_t *p = json_array_get(ring, i), *q = json_array_get(ring, i + 1);
    double x0 = json_number_value(json_array_get(p, 0)), y0 = json_number_value(json_array_get(p, 1));
    double x1 = json_number_value(json_array_get(q, 0)), y1 = json_number_value(json_array_get(q, 1));
    double cr = x0 * y1 - x1 * y0;
    a += cr;
    sx += (x0 + x1) * cr;
    sy += (y0 + y1) * cr;
  }
  *cx = sx / (3 * a);
  *cy = sy / (3 * a);
}

Test(slides, segment_outputs_are_in_level0_slide_pixels, .timeout = 300) {
  const char *svs = tu_slides_path("svs40.svs", make_svs40);
  const char *tmp = tu_tmpdir("slides_coords");
  char args[9000], *out = NULL, *err = NULL;
  /* tile (1, 1) of the 512-pixel grid at 0.5 um: level-0 1024,1024,1024,1024 */
  snprintf(args, sizeof args,
           "segment '%s' --tile 1,1 --tile-size 512 --target-mpp 0.5 -o '%s/m.png' "
           "--labels '%s/l.tif' --geojson '%s/n.geojson' --features '%s/f.csv'",
           svs, tmp, tmp, tmp, tmp);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "level 0, factor 2; level-0 rectangle 1024,1024,1024,1024"), "%s", out);
  free(out);
  free(err);
  const int64_t X0 = 1024, Y0 = 1024, SIDE = 1024;

  /* the slide itself at level 0 under the tile, through OpenSlide */
  wsisa_slide *slide = NULL;
  wsisa_image *tile = NULL;
  cr_assert_eq(wsisa_slide_open(svs, &slide, NULL), 0);
  cr_assert_eq(wsisa_slide_read_rgb(slide, 0, X0, Y0, (int)SIDE, (int)SIDE, &tile, NULL), 0);
  double background = 0;
  for (int y = 0; y < tile->height; y++) {
    const uint8_t *p = wsisa_image_row(tile, y);
    for (int x = 0; x < tile->width; x++) background += p[3 * x];
  }
  background /= (double)tile->width * tile->height;
  /* nucleus-dark: haematoxylin takes the red out, well below the tile's mean */
  const double dark = background - 30;

  /* GeoJSON: every nucleus centred in the tile's level-0 rectangle (the
   * nuclei it owns, whole: every vertex within the halo around it), and
   * nearly every nucleus dark at its centroid on the slide */
  const int64_t HALO = 2 * 128; /* level-0 pixels: 128 at 0.5 um */
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/n.geojson", tmp);
  json_error_t je;
  json_t *gj = json_load_file(path, 0, &je);
  cr_assert_not_null(gj, "%s", je.text);
  json_t *features = json_object_get(gj, "features");
  size_t n = json_array_size(features), on_nucleus = 0, inside = 0, control = 0;
  cr_assert_gt(n, 50, "%zu nuclei", n);
  for (size_t i = 0; i < n; i++) {
    json_t *ring = json_array_get(
        json_object_get(json_object_get(json_array_get(features, i), "geometry"), "coordinates"),
        0);
    int all_in = 1;
    for (size_t v = 0; v < json_array_size(ring); v++) {
      double x = json_number_value(json_array_get(json_array_get(ring, v), 0));
      double y = json_number_value(json_array_get(json_array_get(ring, v), 1));
      all_in &= x >= X0 - HALO && x <= X0 + SIDE + HALO && y >= Y0 - HALO &&
                y <= Y0 + SIDE + HALO;
    }
    double cx, cy;
    ring_centroid(ring, &cx, &cy);
    inside += (size_t)(all_in && cx >= X0 && cx < X0 + SIDE && cy >= Y0 && cy < Y0 + SIDE);
    on_nucleus += red_at(tile, X0, Y0, cx, cy) < dark;
    /* the coordinates as they were before: tile pixels at 0.5 um from the
     * tile's origin, not scaled to level 0 */
    control += red_at(tile, X0, Y0, X0 + (cx - X0) / 2, Y0 + (cy - Y0) / 2) < dark;
  }
  cr_expect_eq(inside, n, "polygons not centred in the tile's level-0 rectangle");
  cr_expect_geq(on_nucleus, n * 9 / 10, "%zu of %zu polygons on dark pixels", on_nucleus, n);
  cr_expect_leq(control, n * 3 / 10, "the check tells places apart: %zu of %zu", control, n);
  cr_log_info("geojson: %zu nuclei, %zu on dark pixels, %zu at unscaled places\n", n, on_nucleus,
              control);
  json_decref(gj);

  /* features: the same nuclei, centroids and boxes in level-0 pixels */
  tu_path(path, "%s/f.csv", tmp);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "label", &c, NULL), 0);
  cr_expect_eq(c->nrows, n, "one feature row per outline");
  long col[6];
  const char *names[6] = {"centroid_x", "centroid_y", "bbox_x", "bbox_y", "bbox_w", "bbox_h"};
  for (int k = 0; k < 6; k++) cr_assert_geq(col[k] = wsisa_csv_column(c, names[k]), 0);
  size_t dark_rows = 0;
  for (size_t r = 0; r < c->nrows; r++) {
    double v[6];
    for (int k = 0; k < 6; k++) cr_assert_eq(wsisa_csv_number(c, r, (size_t)col[k], &v[k], NULL), 0);
    cr_expect(v[0] >= X0 && v[1] >= Y0 && v[0] < X0 + SIDE && v[1] < Y0 + SIDE,
              "row %zu: centroid %g,%g", r, v[0], v[1]);
    cr_expect(v[2] >= X0 - HALO && v[3] >= Y0 - HALO && v[2] + v[4] <= X0 + SIDE + HALO &&
                  v[3] + v[5] <= Y0 + SIDE + HALO,
              "row %zu: box %g,%g,%g,%g", r, v[2], v[3], v[4], v[5]);
    cr_expect(v[0] >= v[2] && v[0] <= v[2] + v[4] && v[1] >= v[3] && v[1] <= v[3] + v[5],
              "row %zu: centroid outside its box", r);
    dark_rows += red_at(tile, X0, Y0, v[0], v[1]) < dark;
  }
  cr_expect_geq(dark_rows, c->nrows * 9 / 10, "%zu of %zu centroids on dark pixels", dark_rows,
                c->nrows);
  wsisa_csv_free(c);

  /* the labels' ImageDescription places them; the pixel size is in the tags */
  tu_path(path, "%s/l.tif", tmp);
  TIFF *tif = TIFFOpen(path, "r");
  cr_assert_not_null(tif);
  char *desc = NULL;
  float xres = 0;
  cr_assert(TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc));
  cr_expect(TIFFGetField(tif, TIFFTAG_XRESOLUTION, &xres));
  cr_expect_float_eq(xres, 20000.0f, 1e-3, "0.5 um: 20000 pixels per centimetre");
  json_t *meta = json_loads(desc, 0, &je);
  TIFFClose(tif);
  cr_assert_not_null(meta, "%s", je.text);
  json_t *origin = json_object_get(meta, "level0_origin");
  cr_expect_float_eq(json_number_value(json_array_get(origin, 0)), 1024, 0);
  cr_expect_float_eq(json_number_value(json_array_get(origin, 1)), 1024, 0);
  cr_expect_float_eq(tu_json_num(meta, "level0_per_pixel"), 2, 0);
  cr_expect_float_eq(tu_json_num(meta, "mpp"), 0.5, 0);
  cr_expect_float_eq(tu_json_num(meta, "slide_mpp"), 0.25, 1e-12);
  json_decref(meta);
  wsisa_image_free(tile);
  wsisa_slide_close(slide);
  unlink(svs);
}

Test(slides, segment_region_and_mpp_rules, .timeout = 300) {
  const char *tmp = tu_tmpdir("slides_rules");
  char args[9000], *out = NULL, *err = NULL;
  /* a plain image with --mpp is resampled: 0.25 um to 0.5 um halves it, and
   * its outlines stay in the image's own pixels */
  snprintf(args, sizeof args, "segment '%s' --mpp 0.25 -o '%s/m.png' --geojson '%s/n.geojson'",
           tu_src("tests/data/tile_1024.png"), tmp, tmp);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "m.png: 512x512,"), "%s", out);
  free(out);
  free(err);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/n.geojson", tmp);
  char *gj = tu_slurp(path, NULL);
  cr_assert_not_null(gj);
  double most = 0;
  for (const char *p = gj; (p = strchr(p, '[')); p++) {
    double v = strtod(p + 1, NULL);
    most = v > most ? v : most;
  }
  cr_expect_gt(most, 600, "coordinates scaled back to the image's pixels (largest %g)", most);
  cr_expect_leq(most, 1024);
  free(gj);
  /* a slide without MPP is refused unless --mpp gives it */
  const char *nompp = tu_slides_path("nompp.svs", NULL);
  cr_assert_eq(tu_synth_svs40(nompp, 0), 0);
  snprintf(args, sizeof args, "segment '%s' --region 1024,1024,512,512 -o '%s/a.png'", nompp, tmp);
  cr_expect_eq(tu_run(args, &out, &err), 2);
  cr_expect(err && strstr(err, "does not give its pixel size") && strstr(err, "--mpp"), "%s", err);
  cr_expect(!out || !*out, "%s", out);
  free(out);
  free(err);
  snprintf(args, sizeof args, "segment '%s' --region 1024,1024,512,512 --mpp 0.25 -o '%s/a.png'",
           nompp, tmp);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "a.png: 256x256,"), "512 level-0 pixels are 256 at 0.5 um: %s", out);
  cr_expect(strstr(out, "level-0 rectangle 1024,1024,512,512"), "%s", out);
  free(out);
  free(err);
  /* a region not on the target grid is widened to whole target pixels */
  snprintf(args, sizeof args, "segment '%s' --region 1025,1024,510,512 --mpp 0.25 -o '%s/b.png'",
           nompp, tmp);
  cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "b.png: 256x256,") && strstr(out, "level-0 rectangle 1024,1024,512,512"),
            "%s", out);
  free(out);
  free(err);
  unlink(nompp);
}

/* ---- wsisa segment: pixel sizes and units ------------------------------------------------ */

/* `wsisa segment ARGS -o ...` on the sample: its stdout and stderr (the
 * caller frees them). */
static void segment_sample(const char *args, char **out, char **err) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "segment '%s' --region 1000,900,1024,1024 %s -o '%s/m.png'",
           tu_src("tests/data/CMU-1-Small-Region.svs"), args, tu_tmpdir("slides_units"));
  cr_assert_eq(tu_run(cmd, out, err), 0, "%s: %s", cmd, *err);
}

static double after(const char *text, const char *key) {
  const char *at = strstr(text, key);
  cr_assert_not_null(at, "no \"%s\" in %s", key, text);
  return strtod(at + strlen(key), NULL);
}

/* Labels use the pixel size read; a target other than 0.5 scales the sizes
 * (the same tissue gives comparable nuclei and areas); a median area outside
 * 10-150 um2 warns. */
Test(slides, segment_pixel_sizes_follow_what_is_read, .timeout = 300) {
  char *out = NULL, *err = NULL;
  segment_sample("", &out, &err);
  cr_expect(strstr(out, "read at 0.499 um/pixel (target 0.5)"), "%s", out);
  const double n05 = after(out, "%), "), median05 = after(out, "median area ");
  const double density05 = strtod(strstr(out, "\n") + 1, NULL);
  cr_expect(median05 >= 10 && median05 <= 150, "%s", out);
  cr_expect_gt(density05, 1000, "%s", out);
  cr_expect(!strstr(err, "looks wrong"), "%s", err);
  free(out);
  free(err);
  /* at 1 um/pixel the sizes are a quarter in pixels: about the same nuclei
   * (unscaled, 130 of the 580 were left) */
  segment_sample("--target-mpp 1.0", &out, &err);
  cr_expect(strstr(out, "read at 1 um/pixel (target 1)"), "%s", out);
  const double n1 = after(out, "%), "), median1 = after(out, "median area ");
  cr_expect_gt(n1, 0.6 * n05, "%g nuclei at 1 um/pixel, %g at 0.5", n1, n05);
  cr_expect(fabs(median1 / median05 - 1) < 0.3, "median %g um2 at 1, %g at 0.5", median1, median05);
  free(out);
  free(err);
  /* a slide coarser than the target is refused, naming the target to choose */
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "segment '%s' --region 1000,900,512,512 --mpp 1.0 -o '%s/c.png'",
           tu_src("tests/data/CMU-1-Small-Region.svs"), tu_tmpdir("slides_units"));
  cr_expect_eq(tu_run(cmd, &out, &err), 2);
  cr_expect(err && strstr(err, "coarser than the target 0.5") && strstr(err, "at least 0.9901"),
            "%s", err);
  free(out);
  free(err);
  /* a wrong pixel size with small size parameters: fragments of 5 um2 */
  segment_sample("--mpp 0.25 --params min_size_seg=2,min_size=2,min_size_pl=5", &out, &err);
  cr_expect(strstr(err, "the pixel size looks wrong"), "%s", err);
  cr_expect_lt(after(out, "median area "), 10, "%s", out);
  free(out);
  free(err);
}

/* Areas in um2 and in level-0 pixels, named so, in the features and the
 * GeoJSON; feature centroids on the outlines' pixel corners. */
Test(slides, segment_units_are_named_and_centroids_meet_outlines, .timeout = 300) {
  const char *tmp = tu_tmpdir("slides_units");
  char args[9000], path[WSISA_PATH_MAX], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "--geojson '%s/n.geojson' --features '%s/f.csv'", tmp, tmp);
  segment_sample(args, &out, &err);
  free(out);
  free(err);
  tu_path(path, "%s/f.csv", tmp);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "label", &c, NULL), 0);
  long lab = wsisa_csv_column(c, "label"), cx = wsisa_csv_column(c, "centroid_x"),
       cy = wsisa_csv_column(c, "centroid_y"), area = wsisa_csv_column(c, "area"),
       a0 = wsisa_csv_column(c, "area_level0_pixels"), um = wsisa_csv_column(c, "area_um2");
  cr_assert(lab >= 0 && cx >= 0 && cy >= 0 && area >= 0 && a0 >= 0 && um >= 0);
  cr_assert_gt(c->nrows, 100);
  double *x = calloc(c->nrows + 1, sizeof *x), *y = calloc(c->nrows + 1, sizeof *y);
  for (size_t r = 0; r < c->nrows; r++) {
    double v[6];
    const long cols[6] = {lab, cx, cy, area, a0, um};
    for (int k = 0; k < 6; k++) cr_assert_eq(wsisa_csv_number(c, r, (size_t)cols[k], &v[k], NULL), 0);
    cr_expect_float_eq(v[4], v[3], 1e-9, "the sample's level 0 is what was segmented");
    cr_expect_float_eq(v[5], v[3] * 0.499 * 0.499, 1e-9, "um2 at 0.499 um/pixel");
    if (v[0] >= 1 && v[0] <= (double)c->nrows) x[(size_t)v[0]] = v[1], y[(size_t)v[0]] = v[2];
  }
  tu_path(path, "%s/n.geojson", tmp);
  json_error_t je;
  json_t *gj = json_load_file(path, 0, &je);
  cr_assert_not_null(gj, "%s", je.text);
  json_t *features = json_object_get(gj, "features");
  size_t met = 0, n = json_array_size(features);
  for (size_t i = 0; i < n; i++) {
    json_t *f = json_array_get(features, i), *pr = json_object_get(f, "properties");
    const double pixels = tu_json_num(pr, "area_level0_pixels");
    cr_expect_float_eq(tu_json_num(pr, "area_um2"), pixels * 0.499 * 0.499, 1e-9);
    cr_expect_null(json_object_get(pr, "area_pixels"), "the old, unnamed level");
    const size_t l = (size_t)json_integer_value(json_object_get(pr, "label"));
    double gx, gy;
    ring_centroid(json_array_get(json_object_get(json_object_get(f, "geometry"), "coordinates"), 0),
                  &gx, &gy);
    /* a nucleus without a hole: its outline's centroid is its pixels' */
    met += l <= c->nrows && fabs(gx - x[l]) < 1e-6 && fabs(gy - y[l]) < 1e-6;
  }
  cr_expect_geq(met, n * 95 / 100, "%zu of %zu centroids on their outline's", met, n);
  json_decref(gj);
  free(x);
  free(y);
  wsisa_csv_free(c);
}

/* ---- wsisa segment --help ------------------------------------------------------------- */

Test(slides, segment_help_lists_the_parameters_from_their_table) {
  char *out = NULL, *err = NULL;
  cr_assert_eq(tu_run("segment --help", &out, &err), 0, "%s", err);
  for (size_t i = 0; i < WSISA_SA_NSEG; i++) {
    const wsisa_sa_seg_param *p = &wsisa_sa_seg_params[i];
    char line[256];
    if (p->kind == WSISA_SA_CATEGORICAL)
      snprintf(line, sizeof line, "  %-16s %-6s %-8g {%g, %g}", p->name, p->abbrev, p->def, p->lo,
               p->hi);
    else if (p->kind == WSISA_SA_DISCRETE)
      snprintf(line, sizeof line, "  %-16s %-6s %-8g %g..%g step %g", p->name, p->abbrev, p->def,
               p->lo, p->hi, p->step);
    else
      snprintf(line, sizeof line, "  %-16s %-6s %-8g %g..%g ", p->name, p->abbrev, p->def, p->lo,
               p->hi);
    cr_expect(strstr(out, line), "\"%s\" not in:\n%s", line, out);
  }
  cr_expect(strstr(out, "--target-mpp") && strstr(out, "--mpp") && strstr(out, "level-0"), "%s",
            out);
  cr_expect_null(strstr(out, "--level"), "no --level any more");
  free(out);
  free(err);
}
