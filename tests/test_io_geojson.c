/* GeoJSON outlines: each label's polygon covers exactly its pixels. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>

#include "io/csv.h"
#include "io/io.h"
#include "tests/testutil.h"

static double shoelace(json_t *ring) {
  double a = 0;
  size_t n = json_array_size(ring);
  for (size_t i = 0; i + 1 < n; i++) {
    json_t *p = json_array_get(ring, i), *q = json_array_get(ring, i + 1);
    a += json_real_value(json_array_get(p, 0)) * json_real_value(json_array_get(q, 1)) -
         json_real_value(json_array_get(q, 0)) * json_real_value(json_array_get(p, 1));
  }
  return fabs(a) / 2;
}

Test(geojson, polygons_cover_their_pixels) {
  /* label 1: an L shape; label 2: a plus; label 3: a single pixel at the edge */
  static const char *art[] = {
      "11....2...",
      "1....222..",
      "111...2...",
      "..........",
      "........33",
  };
  wsisa_image *lab = NULL;
  cr_assert_eq(wsisa_image_new(10, 5, 1, WSISA_I32, &lab, NULL), 0);
  size_t area[4] = {0};
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 10; x++) {
      int v = art[y][x] == '.' ? 0 : art[y][x] - '0';
      ((int32_t *)wsisa_image_row(lab, y))[x] = v;
      area[v]++;
    }
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/n.geojson", tu_tmpdir("geojson"));
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_geojson_write_at(path, lab, 100, 200, 1, &e), 0, "%s", e.msg);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  cr_expect_str_eq(json_string_value(json_object_get(root, "type")), "FeatureCollection");
  json_t *features = json_object_get(root, "features");
  cr_assert_eq(json_array_size(features), 3);
  for (size_t i = 0; i < 3; i++) {
    json_t *f = json_array_get(features, i);
    json_t *ring = json_array_get(json_object_get(json_object_get(f, "geometry"), "coordinates"), 0);
    int label = (int)json_integer_value(json_object_get(json_object_get(f, "properties"), "label"));
    cr_expect_float_eq(shoelace(ring), (double)area[label], 1e-9, "label %d", label);
    json_t *first = json_array_get(ring, 0), *last = json_array_get(ring, json_array_size(ring) - 1);
    cr_expect(json_equal(first, last), "ring of label %d is not closed", label);
    cr_expect_geq(json_real_value(json_array_get(first, 0)), 100.0);
  }
  json_decref(root);
  wsisa_image_free(lab);
}

/* A label at the slide's edge read at a resampled level: its last pixel
 * reaches past the slide's last level-0 pixel; every vertex stays on it. */
Test(geojson, vertices_stay_on_the_slide) {
  wsisa_image *lab = NULL;
  cr_assert_eq(wsisa_image_new(4, 3, 1, WSISA_I32, &lab, NULL), 0);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 4; x++) ((int32_t *)wsisa_image_row(lab, y))[x] = x >= 2 ? 1 : 0;
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/edge.geojson", tu_tmpdir("geojson-edge"));
  /* 4 target pixels of 1.1 level-0 pixels from x0 = 0: 4.4 > 4.3, the edge */
  const wsisa_outline_place p = {.x0 = 0, .y0 = 0, .scale = 1.1, .width0 = 4.3, .height0 = 3.2};
  wsisa_stage s = WSISA_STAGE_INIT;
  wsisa_geojson_writer *w = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  const wsisa_geojson_ids ids = {.first = 7, .tile = 3, .salt = 0xabcdef01u};
  cr_assert_eq(wsisa_geojson_open(&s, path, &w, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_geojson_add(w, lab, &p, &ids, &e), 0, "%s", e.msg);
  cr_expect_eq(wsisa_geojson_count(w), 1);
  cr_assert_eq(wsisa_geojson_close(w, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_stage_commit(&s, &e), 0, "%s", e.msg);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  json_t *f = json_array_get(json_object_get(root, "features"), 0);
  cr_expect_str_eq(json_string_value(json_object_get(f, "id")),
                   "abcdef01-0000-4000-8000-000000000007");
  json_t *props = json_object_get(f, "properties");
  cr_expect_eq(json_integer_value(json_object_get(props, "nucleus_id")), 7);
  cr_expect_eq(json_integer_value(json_object_get(props, "tile")), 3);
  json_t *ring = json_array_get(json_object_get(json_object_get(f, "geometry"), "coordinates"), 0);
  double most_x = 0, most_y = 0;
  for (size_t i = 0; i < json_array_size(ring); i++) {
    json_t *v = json_array_get(ring, i);
    most_x = fmax(most_x, json_real_value(json_array_get(v, 0)));
    most_y = fmax(most_y, json_real_value(json_array_get(v, 1)));
  }
  cr_expect_float_eq(most_x, 4.3, 1e-12, "the right edge: %g", most_x);
  cr_expect_float_eq(most_y, 3.2, 1e-12, "the bottom edge: %g", most_y);
  json_decref(root);
  wsisa_image_free(lab);
}
