/* Slides through OpenSlide: properties, tiles against independent reads, the
 * tissue mask on the sample and on a synthetic slide with a known answer. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

#include "io/io.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"

static wsisa_slide *open_sample(void) {
  wsisa_slide *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_slide_open(tu_src(SAMPLE), &s, &e), 0, "%s", e.msg);
  return s;
}

Test(slide, properties) {
  wsisa_slide *s = open_sample();
  cr_expect_str_eq(wsisa_slide_vendor(s), "aperio");
  cr_expect_eq(wsisa_slide_level_count(s), 1);
  wsisa_level lv;
  cr_assert_eq(wsisa_slide_level(s, 0, &lv, NULL), 0);
  cr_expect_eq(lv.width, 2220);
  cr_expect_eq(lv.height, 2967);
  cr_expect_float_eq(lv.downsample, 1.0, 1e-12);
  double mx, my;
  cr_expect_eq(wsisa_slide_mpp(s, &mx, &my), WSISA_MPP_OPENSLIDE);
  cr_expect_float_eq(mx, 0.499, 1e-9);
  cr_expect_float_eq(my, 0.499, 1e-9);
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_slide_level(s, 1, &lv, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "out of range") != NULL, "%s", e.msg);
  wsisa_slide_close(s);
}

/* The same pixels whether read through the grid or as one region. */
Test(slide, grid_tiles_match_whole_level) {
  wsisa_slide *s = open_sample();
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_image *whole = NULL, *tile = NULL;
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_slide_read_rgb(s, 0, 0, 0, 2220, 2967, &whole, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_grid_make(s, 0, 700, 64, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->cols, 4); /* starts 0, 636, 1272, 1908 */
  cr_expect_eq(g->rows, 5); /* starts 0 .. 2544 */
  size_t bad = 0;
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *t = &g->tiles[i];
    cr_assert_eq(wsisa_slide_read_rgb(s, 0, t->x, t->y, t->width, t->height, &tile, &e), 0);
    cr_expect(t->x + t->width <= 2220 && t->y + t->height <= 2967);
    for (int y = 0; y < t->height; y++)
      bad += memcmp(wsisa_image_row(tile, y),
                    (uint8_t *)wsisa_image_row(whole, (int)t->y + y) + 3 * t->x,
                    (size_t)t->width * 3) != 0;
    wsisa_image_free(tile);
  }
  cr_expect_eq(bad, 0, "%zu tile rows differ from the whole-level read", bad);
  /* the last column is clipped: 2220 - 1908 */
  cr_expect_eq(g->tiles[3].width, 312);
  wsisa_grid_free(g);
  wsisa_image_free(whole);
  wsisa_slide_close(s);
}

/* Against a region read by OpenSlide's Python binding (tests/golden/make_tiles.py). */
Test(slide, region_matches_independent_read) {
  wsisa_slide *s = open_sample();
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_image *ours = NULL, *ref = NULL;
  cr_assert_eq(wsisa_slide_read_rgb(s, 0, 1024, 1024, 1024, 1024, &ours, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_image_read(tu_src("tests/data/tile_1024.png"), &ref, &e), 0, "%s", e.msg);
  cr_expect_eq(tu_image_diff(ours, ref), 0);
  wsisa_image_free(ours);
  wsisa_image_free(ref);
  wsisa_slide_close(s);
}

/* The sample's tissue runs down the left two thirds; the right strip
 * (x >= 2048, 172 px wide) is glass. */
Test(slide, tissue_tiles_of_sample) {
  wsisa_slide *s = open_sample();
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_grid_make(s, 0, 1024, 0, &g, NULL), 0);
  cr_expect_eq(g->ntiles, 9);
  cr_expect_eq(g->ntissue, 6);
  for (size_t i = 0; i < g->ntiles; i++)
    cr_expect_eq(g->tiles[i].tissue, g->tiles[i].col < 2, "tile %zu", i);
  wsisa_grid_free(g);
  wsisa_slide_close(s);
}

/* A generic tiled TIFF: white glass with one purple block in the top-left
 * quarter; no MPP property. */
static void write_level(TIFF *t, int side) {
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, side);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, side);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_TILEWIDTH, 256);
  TIFFSetField(t, TIFFTAG_TILELENGTH, 256);
  TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_DEFLATE);
  unsigned char *buf = malloc(256 * 256 * 3);
  for (int ty = 0; ty < side; ty += 256)
    for (int tx = 0; tx < side; tx += 256) {
      int purple = tx < side / 2 && ty < side / 2;
      for (int i = 0; i < 256 * 256; i++) {
        buf[3 * i] = purple ? 150 : 242;
        buf[3 * i + 1] = purple ? 60 : 242;
        buf[3 * i + 2] = purple ? 160 : 240;
      }
      TIFFWriteTile(t, buf, (uint32_t)tx, (uint32_t)ty, 0, 0);
    }
  free(buf);
}

static void write_synthetic(const char *path, int side) {
  TIFF *t = TIFFOpen(path, "w");
  cr_assert_not_null(t);
  write_level(t, side);
  TIFFClose(t);
}

Test(slide, synthetic_tissue_and_no_mpp) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/synthetic.tiff", tu_tmpdir("slide"));
  write_synthetic(path, 2048);
  wsisa_slide *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_slide_open(path, &s, &e), 0, "%s", e.msg);
  cr_expect_str_eq(wsisa_slide_vendor(s), "generic-tiff");
  double mx, my;
  cr_expect_eq(wsisa_slide_mpp(s, &mx, &my), WSISA_MPP_NONE);
  cr_expect_eq(mx, 0.0);
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_grid_make(s, 0, 512, 0, &g, &e), 0, "%s", e.msg);
  cr_expect_eq(g->ntiles, 16);
  cr_expect_eq(g->ntissue, 4);
  for (size_t i = 0; i < g->ntiles; i++) {
    int expect = g->tiles[i].col < 2 && g->tiles[i].row < 2;
    cr_expect_eq(g->tiles[i].tissue, expect, "tile %zu", i);
    cr_expect_float_eq(g->tiles[i].tissue_fraction, expect ? 1.0 : 0.0, 1e-9);
  }
  wsisa_image *px = NULL;
  cr_assert_eq(wsisa_slide_read_rgb(s, 0, 1020, 1020, 8, 8, &px, &e), 0);
  const uint8_t *r0 = wsisa_image_row(px, 0), *r7 = wsisa_image_row(px, 7);
  cr_expect_eq(r0[0], 150); /* inside the block */
  cr_expect_eq(r7[3 * 7], 242); /* glass */
  wsisa_image_free(px);
  wsisa_grid_free(g);
  wsisa_slide_close(s);
}

Test(slide, bad_region_is_refused) {
  wsisa_slide *s = open_sample();
  wsisa_image *img = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_slide_read_rgb(s, 0, 2000, 0, 512, 512, &img, &e), WSISA_EUSAGE);
  cr_expect_null(img);
  cr_expect(strstr(e.msg, "outside level 0") != NULL, "%s", e.msg);
  wsisa_slide_close(s);
}

/* Runs read(path) with stderr sent to a file; returns what it printed. */
static char *stderr_of(int (*read)(const char *, wsisa_err *), const char *path, int *rc,
                       wsisa_err *e) {
  char log[WSISA_PATH_MAX];
  tu_path(log, "%s/stderr", tu_tmpdir("stderr"));
  fflush(stderr);
  int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  cr_assert(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  *rc = read(path, e);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char *text = tu_slurp(log, NULL);
  cr_assert_not_null(text);
  return text;
}

static int read_slide_whole(const char *path, wsisa_err *e) {
  wsisa_slide *s = NULL;
  int rc = wsisa_slide_open(path, &s, e);
  wsisa_image *img = NULL;
  if (!rc) rc = wsisa_slide_read_rgb(s, 0, 0, 0, 1024, 1024, &img, e);
  wsisa_image_free(img);
  wsisa_slide_close(s);
  return rc;
}

static int read_image_whole(const char *path, wsisa_err *e) {
  wsisa_image *img = NULL;
  int rc = wsisa_image_read(path, &img, e);
  wsisa_image_free(img);
  return rc;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Damages the tiles of a little-endian TIFF's first directory from the middle
 * on: cut (they point past the end of the file, as when a download stops
 * before its data ends but the directory was written first) or garbled (their
 * bytes overwritten, so they no longer inflate). */
static void damage_tiles(const char *path, int garble) {
  size_t len = 0;
  unsigned char *b = (unsigned char *)tu_slurp(path, &len);
  cr_assert(b && len > 8 && b[0] == 'I' && b[1] == 'I');
  uint32_t ifd = le32(b + 4);
  cr_assert_lt(ifd + 2, len);
  unsigned entries = b[ifd] | (unsigned)b[ifd + 1] << 8;
  int damaged = 0;
  for (unsigned i = 0; i < entries; i++) {
    const unsigned char *en = b + ifd + 2 + 12 * i;
    if ((en[0] | en[1] << 8) != TIFFTAG_TILEOFFSETS) continue;
    uint32_t count = le32(en + 4), at = le32(en + 8);
    cr_assert(count > 2 && (en[2] | en[3] << 8) == TIFF_LONG && at + 4 * count <= len);
    for (uint32_t t = count / 2; t < count; t++) {
      uint32_t start = le32(b + at + 4 * t), past = start + (uint32_t)len;
      if (garble)
        for (uint32_t k = start; k < start + 64 && k < len; k++) b[k] = (unsigned char)(k * 37);
      else
        for (int k = 0; k < 4; k++) b[at + 4 * t + k] = (unsigned char)(past >> (8 * k));
    }
    damaged = 1;
  }
  cr_assert(damaged);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fwrite(b, 1, len, f);
  fclose(f);
  free(b);
}

/* A damaged tiled TIFF, cut short or garbled: libtiff's complaint goes into
 * wsisa's one error line (which names the file), not onto stderr, whether
 * wsisa reads it or OpenSlide does (OpenSlide refuses a cut one when it opens
 * it, a garbled one when it decodes the tile). */
Test(slide, damaged_tiff_says_it_once) {
  int (*readers[])(const char *, wsisa_err *) = {read_slide_whole, read_image_whole};
  const char *name[] = {"slide", "image"};
  for (int garble = 1; garble >= 0; garble--) {
    char path[WSISA_PATH_MAX];
    tu_path(path, "%s/damaged.tiff", tu_tmpdir("slide"));
    /* Two levels: OpenSlide opens it by the small one, and reads the big one. */
    TIFF *t = TIFFOpen(path, "w");
    cr_assert_not_null(t);
    write_level(t, 1024);
    TIFFWriteDirectory(t);
    write_level(t, 256);
    TIFFClose(t);
    damage_tiles(path, garble);
    for (int r = 0; r < 2; r++) {
      wsisa_err e = WSISA_ERR_INIT;
      int rc;
      char *printed = stderr_of(readers[r], path, &rc, &e);
      const char *how = garble ? "garbled" : "cut";
      cr_expect_lt(rc, 0, "%s reader: a %s TIFF is refused", name[r], how);
      cr_expect(strstr(e.msg, path) != NULL, "%s reader, %s: %s", name[r], how, e.msg);
      cr_expect(printed[0] == 0, "%s reader, %s, printed: %s", name[r], how,
                printed);
      free(printed);
    }
  }
}
