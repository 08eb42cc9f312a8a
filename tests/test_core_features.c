/* The feature stage end to end: `wsisa segment --features` (one row per
 * nucleus, slide coordinates for a region) and `wsisa run` with feature
 * metrics (values against a direct computation, the same with and without the
 * OpenCL worker). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "io/io.h"
#include "tests/testutil.h"

static wsisa_csv *segment_features(const char *input_and_flags, const char *dir) {
  char args[8192], path[4200];
  snprintf(path, sizeof path, "%s/features.csv", dir);
  snprintf(args, sizeof args, "segment %s -o '%s/mask.png' --labels '%s/labels.tif' --features '%s'",
           input_and_flags, dir, dir, path);
  char *err = NULL;
  int status = tu_run(args, NULL, &err);
  cr_assert_eq(status, 0, "wsisa %s: %s", args, err ? err : "");
  free(err);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "label", &c, NULL), 0);
  return c;
}

static double cell(const wsisa_csv *c, size_t row, const char *name) {
  long col = wsisa_csv_column(c, name);
  cr_assert_geq(col, 0, "no column %s", name);
  double v;
  cr_assert_eq(wsisa_csv_number(c, row, (size_t)col, &v, NULL), 0);
  return v;
}

Test(features, segment_writes_one_row_per_nucleus) {
  const char *dir = tu_tmpdir("features");
  char input[4200];
  snprintf(input, sizeof input, "'%s'", tu_src("tests/data/tile_256.png"));
  wsisa_csv *c = segment_features(input, dir);
  cr_expect_eq(c->nrows, 85); /* the reference nucleus count of this tile */
  static const char *const cols[] = {"centroid_x", "bbox_w", "perimeter", "solidity",
                                     "h_mean", "h_median", "e_std", "grad_energy", "fb_s1_energy",
                                     "fb_s4_mean"};
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
    cr_expect_geq(wsisa_csv_column(c, cols[i]), 0, "no column %s", cols[i]);
  /* areas add up to the mask's pixels, labels are 1..n, H is positive */
  char path[4200];
  snprintf(path, sizeof path, "%s/mask.png", dir);
  wsisa_image *mask = NULL;
  cr_assert_eq(wsisa_image_read(path, &mask, NULL), 0);
  double on = 0, area = 0;
  for (int y = 0; y < mask->height; y++)
    for (int x = 0; x < mask->width; x++) on += ((uint8_t *)wsisa_image_row(mask, y))[x] != 0;
  for (size_t r = 0; r < c->nrows; r++) {
    area += cell(c, r, "area");
    cr_expect_eq(cell(c, r, "label"), (double)(r + 1));
    cr_expect_gt(cell(c, r, "h_mean"), 0);
    cr_expect_leq(cell(c, r, "solidity"), 1);
  }
  cr_expect_eq(area, on);
  wsisa_image_free(mask);
  wsisa_csv_free(c);
}

Test(features, slide_region_positions_are_in_level_pixels) {
  const char *dir = tu_tmpdir("features_region");
  char input[4200];
  snprintf(input, sizeof input, "'%s' --region 1000,500,256,256",
           tu_src("tests/data/CMU-1-Small-Region.svs"));
  wsisa_csv *c = segment_features(input, dir);
  cr_assert_gt(c->nrows, 0);
  for (size_t r = 0; r < c->nrows; r++) {
    cr_expect_geq(cell(c, r, "bbox_x"), 1000);
    cr_expect_geq(cell(c, r, "bbox_y"), 500);
    cr_expect_leq(cell(c, r, "bbox_x") + cell(c, r, "bbox_w"), 1256);
    cr_expect_leq(cell(c, r, "bbox_y") + cell(c, r, "bbox_h"), 756);
    cr_expect_geq(cell(c, r, "centroid_x"), cell(c, r, "bbox_x"));
  }
  wsisa_csv_free(c);
}
