/* 64-bit extents at their limits: a tile grid over a slide that says it is
 * INT64_MAX pixels wide is refused as too many tiles, never laid out from a
 * wrapped count (the region cases of the command line are in tests/cases,
 * segment_region_*). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "io/io.h"

static wsisa_scale extent(int64_t width, int64_t height) {
  wsisa_scale s;
  memset(&s, 0, sizeof s);
  s.level_width = s.width = width;
  s.level_height = s.height = height;
  s.factor_q = WSISA_SCALE_ONE;
  s.factor = 1;
  s.mpp = s.mpp_x = s.mpp_y = s.target_mpp = s.level_mpp = 0.5;
  s.level_downsample = 1;
  return s;
}

static void expect_too_many(int64_t width, int64_t height, int tile_size, int overlap) {
  wsisa_scale s = extent(width, height);
  wsisa_grid *g = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  /* refused before the slide is looked at: no slide is given */
  int rc = wsisa_grid_make_scaled(NULL, &s, tile_size, overlap, &g, &e);
  cr_expect_eq(rc, WSISA_EUSAGE, "%lldx%lld, tile %d, overlap %d: %d (%s)", (long long)width,
               (long long)height, tile_size, overlap, rc, e.msg);
  cr_expect_null(g);
  cr_expect(strstr(e.msg, "too many"), "%s", e.msg);
}

Test(extents, a_grid_over_int64_max_pixels_is_refused) {
  expect_too_many(INT64_MAX, INT64_MAX, 1024, 0);
  expect_too_many(INT64_MAX, 1, 1024, 0);
  expect_too_many(1, INT64_MAX, 1, 0);
  expect_too_many(INT64_MAX, INT64_MAX, 1024, 1023);
  expect_too_many(INT64_MAX - 1, 2, 2, 1);
}

Test(extents, a_grid_of_int_max_columns_is_refused) {
  /* 2^31 columns of one row: one past what an int counts */
  expect_too_many((int64_t)1 << 31, 1, 1, 0);
}
