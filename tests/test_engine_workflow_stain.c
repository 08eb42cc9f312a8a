/* The stain check on pixels, over H&E of other labs (tests/data/he-variety),
 * the repository's tiles and every tissue tile of the bundled sample at 256,
 * 512 and 1024: each H&E image passes without a word, paler (optical density
 * halved) and darker (doubled) too; each saved or stained otherwise is
 * refused or warned, named for what it is: greyscale (exact, mean, noisy),
 * dark field (nuclei lit on black), a DAB-dominant chromogen, red and blue
 * swapped (a warning, where eosin is found to tell). The measures' ranges per
 * class are logged (docs/guide.md's table) and their margins asserted:
 * every class sits clear of the bounds between them. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "engine/workflow/workflow.h"
#include "io/io.h"
#include "tests/testutil.h"

typedef enum kind { K_HE, K_GREY, K_BGR, K_PALE, K_DARK, K_FLUOR, K_DAB, K_IHC, K_N } kind;
static const char *const kind_names[K_N] = {"H&E", "grey", "BGR", "pale (OD x0.5)",
                                            "dark (OD x2)", "fluorescence", "DAB version",
                                            "IHC image"};

typedef struct variant {
  const char *name;
  tu_slip slip;
  kind k;
  const char *refused; /* text of the refusal; NULL: passed */
} variant;

static const variant variants[] = {
    {"as it is", TU_SLIP_NONE, K_HE, NULL},
    {"grey (luma)", TU_SLIP_GREY_LUMA, K_GREY, "greyscale: the segmentation needs"},
    {"grey (mean)", TU_SLIP_GREY_MEAN, K_GREY, "greyscale: the segmentation needs"},
    {"grey (luma, +-3 levels of noise)", TU_SLIP_GREY_NOISY, K_GREY, "greyscale"},
    {"red and blue swapped", TU_SLIP_BGR, K_BGR, NULL},
    {"pale", TU_SLIP_PALE, K_PALE, NULL},
    {"dark", TU_SLIP_DARK, K_DARK, NULL},
    {"fluorescence", TU_SLIP_FLUORESCENCE, K_FLUOR, "dark field (fluorescence?)"},
    {"DAB", TU_SLIP_DAB, K_DAB, "a brown chromogen (DAB, immunohistochemistry?)"},
};
#define NVARIANTS (sizeof variants / sizeof *variants)

/* The ranges of the measures per class, over what was judged. */
enum { M_WHITE, M_LIGHT, M_GREY, M_BROWN, M_SWAP, M_MEAN_OD, M_DARK_OD, M_N };
static const char *const measure_names[M_N] = {"brightest grey", "brightest level",
                                               "colourless", "brown",
                                               "swap (eosin found)", "mean OD", "darkest OD"};
typedef struct ranges {
  double lo[K_N][M_N], hi[K_N][M_N];
  int n[K_N][M_N];
} ranges;

static void widen(ranges *r, kind k, int m, double v) {
  if (!r->n[k][m] || v < r->lo[k][m]) r->lo[k][m] = v;
  if (!r->n[k][m] || v > r->hi[k][m]) r->hi[k][m] = v;
  r->n[k][m]++;
}

static void show(const ranges *r, const char *set) {
  for (int k = 0; k < K_N; k++) {
    char line[1024];
    size_t at = (size_t)snprintf(line, sizeof line, "%s, %s:", set, kind_names[k]);
    for (int m = 0; m < M_N && at < sizeof line; m++)
      if (r->n[k][m])
        at += (size_t)snprintf(line + at, sizeof line - at, " %s %.2f..%.2f (%d);",
                               measure_names[m], r->lo[k][m], r->hi[k][m], r->n[k][m]);
    if (r->n[k][M_WHITE]) cr_log_info("%s\n", line);
  }
}

/* The verdict on `img` for `v`, checked; the measures into `r` when decided. */
static void judge(const wsisa_image *img, const char *name, const variant *v, kind k,
                  int quiet, ranges *r) {
  wsisa__stain *st = calloc(1, sizeof *st);
  cr_assert_not_null(st);
  wsisa__stain_add(st, img);
  wsisa__stain_measures m;
  wsisa__stain_measure(st, &m);
  wsisa_err e = WSISA_ERR_INIT;
  char warning[WSISA_NOTE_MAX];
  const int rc = wsisa__stain_verdict(st, name, "--no-stain-check", warning, sizeof warning, &e);
  free(st);
  cr_log_info("%s, %s: %s%s%s | tissue %.3f white %.2f light %.0f grey %.2f brown %.2f eosin %s "
              "swap %+.2f OD %.2f darkest %.2f\n",
              name, v->name, rc ? e.msg : "passed", warning[0] ? " WARNING " : "", warning,
              m.tissue_share, m.white, m.light, m.colourless, m.brown,
              !m.vectors ? "-" : m.eosin_found ? "found" : "none", m.swap, m.mean_od, m.dark_od);
  if (m.pixels >= WSISA_STAIN_MIN_PIXELS && m.tissue_share < WSISA_STAIN_NO_TISSUE) {
    cr_expect_eq(rc, WSISA_EUSAGE, "%s, %s: no tissue let through", name, v->name);
    cr_expect(strstr(e.msg, ": no tissue:") != NULL, "%s", e.msg);
    return;
  }
  if (m.tissue < WSISA_STAIN_MIN_TISSUE) { /* too little tissue to say */
    cr_expect_eq(rc, 0, "%s, %s: undecided, yet refused: %s", name, v->name, e.msg);
    return;
  }
  widen(r, k, M_WHITE, m.white);
  widen(r, k, M_LIGHT, m.light);
  widen(r, k, M_GREY, m.colourless);
  widen(r, k, M_BROWN, m.brown);
  widen(r, k, M_MEAN_OD, m.mean_od);
  widen(r, k, M_DARK_OD, m.dark_od);
  if (m.vectors && m.eosin_found) widen(r, k, M_SWAP, m.swap);
  if (v->refused) {
    cr_expect_eq(rc, WSISA_EUSAGE, "%s, %s: let through", name, v->name);
    cr_expect(strstr(e.msg, v->refused) != NULL, "%s, %s: %s", name, v->name, e.msg);
    cr_expect(strstr(e.msg, "--no-stain-check to run it anyway") != NULL, "%s", e.msg);
    return;
  }
  cr_expect_eq(rc, 0, "%s, %s: refused: %s", name, v->name, e.msg);
  if (k == K_BGR && m.vectors && m.eosin_found)
    cr_expect(strstr(warning, "red and blue may be swapped (BGR saved as RGB?)") != NULL,
              "%s, swapped: not warned: '%s'", name, warning);
  else if (k == K_BGR)
    cr_expect(strstr(warning, "swapped") == NULL, "%s: %s", name, warning);
  else if (quiet)
    cr_expect_eq(warning[0], '\0', "%s, %s: warned: %s", name, v->name, warning);
  else /* paler or darker than the sample: at most a word on the strength */
    cr_expect(!warning[0] || strstr(warning, "swapped") == NULL, "%s, %s: %s", name, v->name,
              warning);
}

/* Every variant of `img` (not freed). `quiet`: H&E and its pale and dark
 * versions pass without a warning. */
static void judge_variants(const wsisa_image *img, const char *name, int quiet, ranges *r) {
  for (size_t i = 0; i < NVARIANTS; i++) {
    wsisa_image *copy = NULL;
    cr_assert_eq(wsisa_image_clone(img, &copy, NULL), 0);
    tu_slip_apply(copy, variants[i].slip);
    judge(copy, name, &variants[i], variants[i].k, quiet || variants[i].k == K_HE, r);
    wsisa_image_free(copy);
  }
}

/* The margins between the classes: each bound sits clear of both sides. */
static void expect_margins(const ranges *r, const char *set) {
  show(r, set);
  const kind bright[] = {K_HE, K_BGR, K_PALE, K_DARK, K_DAB, K_IHC}, he[] = {K_HE, K_PALE, K_DARK};
  for (size_t i = 0; i < sizeof bright / sizeof *bright; i++)
    if (r->n[bright[i]][M_WHITE])
      cr_expect(r->lo[bright[i]][M_WHITE] > 0.8 && r->lo[bright[i]][M_LIGHT] > 128,
                "%s, %s: brightest pixels %.2f grey, level %.0f", set, kind_names[bright[i]],
                r->lo[bright[i]][M_WHITE], r->lo[bright[i]][M_LIGHT]);
  cr_expect_lt(r->hi[K_FLUOR][M_WHITE], 0.2, "%s: fluorescence %.2f", set, r->hi[K_FLUOR][M_WHITE]);
  cr_expect_gt(r->lo[K_GREY][M_GREY], 0.9, "%s: greyscale %.2f", set, r->lo[K_GREY][M_GREY]);
  for (size_t i = 0; i < sizeof he / sizeof *he; i++) {
    const kind k = he[i];
    cr_expect_lt(r->hi[k][M_GREY], 0.1, "%s, %s: colourless %.2f", set, kind_names[k],
                 r->hi[k][M_GREY]);
    cr_expect_lt(r->hi[k][M_BROWN], 0.15, "%s, %s: brown %.2f", set, kind_names[k],
                 r->hi[k][M_BROWN]);
    if (r->n[k][M_SWAP])
      cr_expect_gt(r->lo[k][M_SWAP], 0.2, "%s, %s: swap %.2f", set, kind_names[k],
                   r->lo[k][M_SWAP]);
  }
  cr_expect_lt(r->hi[K_BGR][M_SWAP], -0.2, "%s: swapped, swap %.2f", set, r->hi[K_BGR][M_SWAP]);
  cr_expect_gt(r->lo[K_DAB][M_BROWN], 0.6, "%s: DAB %.2f", set, r->lo[K_DAB][M_BROWN]);
  if (r->n[K_IHC][M_BROWN])
    cr_expect_gt(r->lo[K_IHC][M_BROWN], 0.6, "%s: IHC %.2f", set, r->lo[K_IHC][M_BROWN]);
}

Test(stain, variety_set_he_passes_and_the_rest_is_named) {
  ranges r;
  memset(&r, 0, sizeof r);
  char path[512];
  for (size_t i = 0; i < TU_HE_VARIETY_N; i++) {
    snprintf(path, sizeof path, "tests/data/he-variety/%s", tu_he_variety[i]);
    wsisa_image *img = tu_load(path);
    cr_assert_not_null(img, "%s", path);
    judge_variants(img, tu_he_variety[i], 1, &r);
    wsisa_image_free(img);
  }
  /* scikit-image's immunohistochemistry (haematoxylin + DAB): refused as it
   * is, paler and darker; greyscale is named as such */
  wsisa_image *ihc = tu_load("tests/data/he-variety/skimage-ihc.png");
  cr_assert_not_null(ihc);
  const variant as_ihc[] = {
      {"as it is", TU_SLIP_NONE, K_IHC, "a brown chromogen (DAB, immunohistochemistry?)"},
      {"pale", TU_SLIP_PALE, K_IHC, "a brown chromogen"},
      {"dark", TU_SLIP_DARK, K_IHC, "a brown chromogen"},
      {"grey (luma)", TU_SLIP_GREY_LUMA, K_GREY, "greyscale"}};
  for (size_t i = 0; i < sizeof as_ihc / sizeof *as_ihc; i++) {
    wsisa_image *copy = NULL;
    cr_assert_eq(wsisa_image_clone(ihc, &copy, NULL), 0);
    tu_slip_apply(copy, as_ihc[i].slip);
    judge(copy, "skimage-ihc.png", &as_ihc[i], as_ihc[i].k, 0, &r);
    wsisa_image_free(copy);
  }
  wsisa_image_free(ihc);
  expect_margins(&r, "variety set");
}

Test(stain, repository_tiles_pass_and_the_rest_is_named) {
  ranges r;
  memset(&r, 0, sizeof r);
  const char *pngs[] = {"tests/data/tile_256.png", "tests/data/tile_256_b.png",
                        "tests/data/tile_1024.png", "tests/data/tile_256_jpeg_decoded.png"};
  for (size_t i = 0; i < sizeof pngs / sizeof *pngs; i++) {
    wsisa_image *img = tu_load(pngs[i]);
    cr_assert_not_null(img, "%s", pngs[i]);
    judge_variants(img, pngs[i], 1, &r);
    wsisa_image_free(img);
  }
  expect_margins(&r, "repository tiles");
}

/* Every tissue tile of the sample at each tile size the tests use, and the
 * few a run samples from the slide: H&E, its paler and darker versions pass
 * without a word. */
Test(stain, sample_tissue_tiles_pass_and_the_rest_is_named, .timeout = 300) {
  const int sizes[] = {256, 512, 1024};
  ranges r;
  memset(&r, 0, sizeof r);
  for (int s = 0; s < 3; s++) {
    wsisa_slide *slide = NULL;
    wsisa_grid *g = NULL;
    wsisa_err e = WSISA_ERR_INIT;
    wsisa_input *in = NULL;
    cr_assert_eq(wsisa_slide_open(tu_src("tests/data/CMU-1-Small-Region.svs"), &slide, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(wsisa_input_open(tu_src("tests/data/CMU-1-Small-Region.svs"), WSISA_INPUT_SLIDE,
                                  &in, &e),
                 0, "%s", e.msg);
    cr_assert_eq(wsisa_grid_make(slide, 0, sizes[s], 0, &g, &e), 0, "%s", e.msg);
    size_t seen = 0;
    for (size_t t = 0; t < g->ntiles; t++) {
      if (!g->tiles[t].tissue) continue;
      wsisa_image *img = NULL;
      cr_assert_eq(wsisa_grid_tile_read(slide, g, &g->tiles[t], &img, &e), 0, "%s", e.msg);
      char name[64];
      snprintf(name, sizeof name, "tile %zu at %d", t, sizes[s]);
      judge_variants(img, name, 1, &r);
      wsisa_image_free(img);
      seen++;
    }
    cr_log_info("%zu tissue tiles at %d\n", seen, sizes[s]);
    cr_expect_gt(seen, 4);
    /* what `wsisa run` samples */
    wsisa__stain *st = calloc(1, sizeof *st);
    cr_assert_not_null(st);
    cr_assert_eq(wsisa__stain_sample(in, g, st, &e), 0, "%s", e.msg);
    char warning[WSISA_NOTE_MAX];
    cr_expect_eq(wsisa__stain_verdict(st, "sample", "x", warning, sizeof warning, &e), 0, "%s",
                 e.msg);
    cr_expect_eq(warning[0], '\0', "at %d: %s", sizes[s], warning);
    cr_expect_eq(st->tiles, 4);
    free(st);
    wsisa_grid_free(g);
    wsisa_input_close(in);
    wsisa_slide_close(slide);
  }
  expect_margins(&r, "sample tiles");
}

/* A white image has no tissue; a small one too little to say. */
Test(stain, no_tissue_is_refused_and_a_small_region_undecided) {
  wsisa_image *white = NULL;
  cr_assert_eq(wsisa_image_new(512, 512, 3, WSISA_U8, &white, NULL), 0);
  for (int y = 0; y < 512; y++) memset(wsisa_image_row(white, y), 242, 512 * 3);
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_stain_check_image(white, 0, "white.png", "--no-stain-check", NULL, 0, &e),
               WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "white.png: no tissue: 0.00% of the pixels stained") != NULL, "%s",
            e.msg);
  wsisa_image_free(white);
  /* 60 x 60 pixels of the greyscale tile: fewer than the check needs */
  wsisa_image *tile = tu_load("tests/data/tile_256.png"), *small = NULL;
  cr_assert_not_null(tile);
  tu_slip_apply(tile, TU_SLIP_GREY_LUMA);
  cr_assert_eq(wsisa_image_new(60, 60, 3, WSISA_U8, &small, NULL), 0);
  for (int y = 0; y < 60; y++) memcpy(wsisa_image_row(small, y), wsisa_image_row(tile, y), 180);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_stain_check_image(small, 0, "small.png", "x", NULL, 0, &e), 0, "%s", e.msg);
  wsisa_image_free(small);
  wsisa_image_free(tile);
}
