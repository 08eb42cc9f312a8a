/* PNG and TIFF files: round trips for every type, refusals for the rest. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "tests/testutil.h"

static wsisa_image *pattern(int w, int h, int c, wsisa_dtype t) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, c, t, &img, NULL), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * c; x++) {
      unsigned v = (unsigned)(x * 31 + y * 17);
      switch (t) {
        case WSISA_U8: ((uint8_t *)wsisa_image_row(img, y))[x] = (uint8_t)v; break;
        case WSISA_U16: ((uint16_t *)wsisa_image_row(img, y))[x] = (uint16_t)(v * 257); break;
        case WSISA_I32: ((int32_t *)wsisa_image_row(img, y))[x] = (int32_t)v - 5000; break;
        case WSISA_F32: ((float *)wsisa_image_row(img, y))[x] = (float)v * 0.25f - 3.5f; break;
      }
    }
  return img;
}

static void round_trip(const char *ext, int c, wsisa_dtype t) {
  char path[4300];
  snprintf(path, sizeof path, "%s/img.%s", tu_tmpdir("img"), ext);
  wsisa_image *a = pattern(37, 23, c, t), *b = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_write(path, a, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_image_read(path, &b, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(a, b), 0, "%s %d-channel %s differs", ext, c, wsisa_dtype_name(t));
  wsisa_image_free(a);
  wsisa_image_free(b);
}

Test(image_file, png_round_trips) {
  for (int c = 1; c <= 4; c++) {
    round_trip("png", c, WSISA_U8);
    round_trip("png", c, WSISA_U16);
  }
}

Test(image_file, tiff_round_trips) {
  for (int c = 1; c <= 4; c++)
    for (int t = WSISA_U8; t <= WSISA_F32; t++) round_trip("tiff", c, (wsisa_dtype)t);
}

Test(image_file, refusals) {
  const char *dir = tu_tmpdir("img");
  char path[4300];
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_image *img = pattern(8, 8, 1, WSISA_F32), *in = NULL;
  snprintf(path, sizeof path, "%s/x.png", dir);
  cr_expect_eq(wsisa_image_write(path, img, &e), WSISA_EUSAGE);
  cr_expect(access(path, F_OK) != 0, "a refused write left a file behind");
  wsisa_err_clear(&e);
  snprintf(path, sizeof path, "%s/x.jpg", dir);
  cr_expect_eq(wsisa_image_write(path, img, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, ".png, .tif or .tiff") != NULL, "%s", e.msg);
  wsisa_err_clear(&e);
  snprintf(path, sizeof path, "%s/text.png", dir);
  FILE *f = fopen(path, "w");
  fputs("not an image\n", f);
  fclose(f);
  cr_expect_eq(wsisa_image_read(path, &in, &e), WSISA_EFORMAT);
  cr_expect_null(in);
  cr_expect(strstr(e.msg, "not a PNG or TIFF image") != NULL, "%s", e.msg);
  wsisa_err_clear(&e);
  snprintf(path, sizeof path, "%s/missing.png", dir);
  cr_expect_eq(wsisa_image_read(path, &in, &e), WSISA_EIO);
  wsisa_image_free(img);
}
