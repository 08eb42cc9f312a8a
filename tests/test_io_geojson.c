/* GeoJSON outlines: each label's polygon covers exactly its pixels. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>

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
  char path[4300];
  snprintf(path, sizeof path, "%s/n.geojson", tu_tmpdir("geojson"));
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
