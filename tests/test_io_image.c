/* PNG and TIFF files: round trips for every type, refusals for the rest. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
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
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/img.%s", tu_tmpdir("img"), ext);
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
  char path[WSISA_PATH_MAX];
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_image *img = pattern(8, 8, 1, WSISA_F32), *in = NULL;
  tu_path(path, "%s/x.png", dir);
  cr_expect_eq(wsisa_image_write(path, img, &e), WSISA_EUSAGE);
  cr_expect(access(path, F_OK) != 0, "a refused write left a file behind");
  wsisa_err_clear(&e);
  tu_path(path, "%s/x.jpg", dir);
  cr_expect_eq(wsisa_image_write(path, img, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, ".png, .tif or .tiff") != NULL, "%s", e.msg);
  wsisa_err_clear(&e);
  tu_path(path, "%s/text.png", dir);
  FILE *f = fopen(path, "w");
  fputs("not an image\n", f);
  fclose(f);
  cr_expect_eq(wsisa_image_read(path, &in, &e), WSISA_EFORMAT);
  cr_expect_null(in);
  cr_expect(strstr(e.msg, "not a PNG, JPEG or TIFF image") != NULL, "%s", e.msg);
  wsisa_err_clear(&e);
  tu_path(path, "%s/missing.png", dir);
  cr_expect_eq(wsisa_image_read(path, &in, &e), WSISA_EIO);
  wsisa_image_free(img);
}

/* A JPEG-compressed TIFF in YCbCr with 2x2 chroma subsampling, as scanners
 * write them (tests/golden/make_image_files.py), reads as the RGB an
 * independent JPEG decoder (Pillow, on the same stream) gives. */
Test(image_file, jpeg_ycbcr_tiff_reads_as_rgb) {
  wsisa_image *img = NULL, *want = tu_load("tests/data/tile_256_jpeg_decoded.png"), *orig = tu_load("tests/data/tile_256.png");
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_read_rgb(tu_src("tests/data/tile_256_jpeg.tif"), &img, &e), 0, "%s", e.msg);
  cr_assert_not_null(want);
  cr_assert_eq(img->width, 256);
  cr_assert_eq(img->height, 256);
  cr_assert_eq(img->channels, 3);
  int worst = 0;
  double off_orig = 0;
  for (int y = 0; y < 256; y++) {
    const uint8_t *a = wsisa_image_row(img, y), *b = wsisa_image_row(want, y), *o = wsisa_image_row(orig, y);
    for (int x = 0; x < 256 * 3; x++) {
      int d = abs((int)a[x] - (int)b[x]);
      worst = d > worst ? d : worst;
      off_orig += abs((int)a[x] - (int)o[x]);
    }
  }
  cr_log_info("JPEG TIFF: largest difference to Pillow's decoding %d, mean to the original %.2f\n",
              worst, off_orig / (256.0 * 256 * 3));
  /* the same libjpeg decodes both: rounding of the colour conversion at most */
  cr_expect_leq(worst, 1, "JPEG TIFF pixels differ from the JPEG decoding by %d", worst);
  /* and it is the tile, not a colour-swapped or shifted one: quality 90 with
   * 4:2:0 chroma leaves 5.7 on average (Pillow's decoding agrees) */
  cr_expect_lt(off_orig / (256.0 * 256 * 3), 8.0);
  wsisa_image_free(img);
  wsisa_image_free(want);
  wsisa_image_free(orig);
}

/* A JPEG tile (tile_256.png saved at quality 95 by libjpeg) reads as the
 * same 8-bit RGB tile, off by JPEG's loss only. */
Test(image_file, jpeg_reads_as_rgb) {
  wsisa_image *img = NULL, *orig = tu_load("tests/data/tile_256.png");
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_read_rgb(tu_src("tests/data/tile_256.jpg"), &img, &e), 0, "%s", e.msg);
  cr_assert_eq(img->width, 256);
  cr_assert_eq(img->height, 256);
  cr_assert_eq(img->channels, 3);
  cr_assert_eq(img->type, WSISA_U8);
  double off = 0;
  for (int y = 0; y < 256; y++) {
    const uint8_t *a = wsisa_image_row(img, y), *o = wsisa_image_row(orig, y);
    for (int x = 0; x < 256 * 3; x++) off += abs((int)a[x] - (int)o[x]);
  }
  /* 4:2:0 chroma leaves 4.7 on average; a colour swap or a shift far more */
  cr_expect_lt(off / (256.0 * 256 * 3), 8.0, "mean difference %.2f", off / (256.0 * 256 * 3));
  cr_expect_str_eq(wsisa_image_file_kind(tu_src("tests/data/tile_256.jpg")), "JPEG");
  wsisa_image_free(img);
  wsisa_image_free(orig);
}

/* Why a file cannot be read: the header's size before any allocation, a file
 * cut short, a compression libtiff lacks (the CLI cases hold the files). */
Test(image_file, unreadable_files_say_why) {
  static const char *const cases[][2] = {
      {"tests/cases/segment_png_too_large/huge.png", "100000x100000 pixels is too large"},
      {"tests/cases/segment_png_truncated/cut.png", "truncated PNG"},
      {"tests/cases/segment_tiff_truncated/cut.tif", "truncated TIFF"},
      {"tests/cases/segment_tiff_unsupported_compression/jp2k.tif",
       "unsupported TIFF compression JPEG 2000 (34712)"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wsisa_image *img = NULL;
    wsisa_err e = WSISA_ERR_INIT;
    cr_expect_neq(wsisa_image_read(tu_src(cases[i][0]), &img, &e), 0, "%s was read", cases[i][0]);
    cr_expect(strstr(e.msg, cases[i][1]) && strstr(e.msg, strrchr(cases[i][0], '/') + 1),
              "%s: \"%s\" lacks \"%s\"", cases[i][0], e.msg, cases[i][1]);
    cr_expect_null(img);
  }
}
