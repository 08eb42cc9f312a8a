/* What a slide says does not depend on how it is tiled: the bundled sample
 * segmented whole, in 512, 1024 and 2048 tiles (each read with the halo of
 * wsisa_workflow_halo, normalized with the slide's colour statistics, keeping
 * the nuclei whose centroid lies in its core) and a window alone agree on the
 * nuclei away from the outer edge; slide-level nucleus counts agree; a tile
 * with 5-10 % tissue is segmented.
 *
 * WSISA_TILING_READING=before measures the reading of earlier versions
 * instead (no halo, each tile's own statistics) and only logs: the
 * agreement table of docs/workflow.md, Tiles, comes from both runs. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "engine/exec/exec.h"
#include "engine/workflow/workflow.h"
#include "io/io.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"
/* pixels left out along the outer edge of what is compared */
#define EDGE 64

TestSuite(tiling, .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop);

typedef struct reading {
  int before; /* no halo, each tile's own statistics */
  int halo;
  int has_stats;
  double stats[WSISA_STATS_N];
  wsisa_scale scale;
} reading;

static reading sample_reading(void) {
  reading r;
  memset(&r, 0, sizeof r);
  const char *env = getenv("WSISA_TILING_READING");
  r.before = env && strcmp(env, "before") == 0;
  wsisa_slide *slide = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_slide_open(tu_src(SAMPLE), &slide, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_scale_choose(slide, 0, WSISA_TARGET_MPP, &r.scale, &e), 0, "%s", e.msg);
  wsisa_slide_close(slide);
  if (!r.before) {
    r.halo = wsisa_workflow_halo(wsisa_seg_defaults(), 1);
    cr_assert_eq(wsisa_slide_stats(tu_src(SAMPLE), &r.scale, r.stats, &e), 0, "%s", e.msg);
    cr_assert_gt(r.stats[WSISA_STATS_COUNT], 0);
    r.has_stats = 1;
  }
  return r;
}

/* Segment the target-pixel rectangle (x, y, w, h) as one tile; paste the
 * nuclei it owns into `canvas` (slide-sized at the target resolution) and
 * return their number. */
static uint64_t segment_tile(const reading *r, int64_t x, int64_t y, int w, int h,
                             wsisa_image *canvas, uint64_t *tissue) {
  wsisa_tile_ref ref = {.path = tu_src(SAMPLE), .kind = WSISA_INPUT_SLIDE, .scale = r->scale, .x = x,
                        .y = y, .width = w, .height = h, .has_stats = r->has_stats};
  memcpy(ref.stats, r->stats, sizeof ref.stats);
  wsisa_image *mask = NULL, *labels = NULL;
  wsisa_tile_frame frame;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_tile_segment(&ref, wsisa_seg_defaults(), r->halo, 1, &mask, &frame, tissue,
                                  &e),
               0, "%s", e.msg);
  cr_assert_eq(wsisa_image_new(mask->width, mask->height, 1, WSISA_I32, &labels, NULL), 0);
  cr_assert_eq(wsisa_cpu_label(mask, 4, labels), 0);
  uint64_t n = 0;
  cr_assert_eq(wsisa_cpu_count_labels(labels, &n), 0);
  const int64_t ox = x - frame.core_x, oy = y - frame.core_y;
  for (int py = 0; canvas && py < mask->height; py++) {
    const uint8_t *m = wsisa_image_row(mask, py);
    uint8_t *c = wsisa_image_row(canvas, (int)(oy + py));
    for (int px = 0; px < mask->width; px++)
      if (m[px]) c[ox + px] = 255;
  }
  wsisa_image_free(mask);
  wsisa_image_free(labels);
  return n;
}

typedef struct tiling {
  wsisa_image *canvas;       /* every tile's nuclei, stitched */
  uint64_t nuclei, tissue_nuclei; /* over every tile; over the tissue tiles */
} tiling;

/* The whole slide in tiles of `side` (its grid at the target resolution). */
static tiling segment_slide(const reading *r, int side) {
  tiling t = {0};
  cr_assert_eq(wsisa_image_new((int)r->scale.width, (int)r->scale.height, 1, WSISA_U8,
                               &t.canvas, NULL),
               0);
  memset(t.canvas->data, 0, (size_t)t.canvas->stride * (size_t)t.canvas->height);
  wsisa_slide *slide = NULL;
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_slide_open(tu_src(SAMPLE), &slide, NULL), 0);
  cr_assert_eq(wsisa_grid_make_scaled(slide, &r->scale, side, 0, &g, NULL), 0);
  for (size_t k = 0; k < g->ntiles; k++) {
    const wsisa_tile *tl = &g->tiles[k];
    uint64_t n = segment_tile(r, tl->x, tl->y, tl->width, tl->height, t.canvas, NULL);
    t.nuclei += n;
    if (tl->tissue) t.tissue_nuclei += n;
  }
  wsisa_grid_free(g);
  wsisa_slide_close(slide);
  return t;
}

/* Dice and F1 (IoU >= 0.5) of the nuclei of two slide canvases inside the
 * rectangle (x, y, w, h) shrunk by EDGE. */
static void agreement(const wsisa_image *a, const wsisa_image *b, int x, int y, int w, int h,
                      double *dice, double *f1) {
  x += EDGE, y += EDGE, w -= 2 * EDGE, h -= 2 * EDGE;
  wsisa_image *ca = NULL, *cb = NULL, *la = NULL, *lb = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_U8, &ca, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_U8, &cb, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_I32, &la, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_I32, &lb, NULL), 0);
  uint64_t both = 0, na = 0, nb = 0;
  for (int py = 0; py < h; py++) {
    memcpy(wsisa_image_row(ca, py), (const uint8_t *)wsisa_image_row(a, y + py) + x, (size_t)w);
    memcpy(wsisa_image_row(cb, py), (const uint8_t *)wsisa_image_row(b, y + py) + x, (size_t)w);
    const uint8_t *ra = wsisa_image_row(ca, py), *rb = wsisa_image_row(cb, py);
    for (int px = 0; px < w; px++) {
      both += ra[px] && rb[px];
      na += ra[px] != 0;
      nb += rb[px] != 0;
    }
  }
  *dice = na + nb ? 2.0 * (double)both / (double)(na + nb) : 1.0;
  cr_assert_eq(wsisa_cpu_label(ca, 4, la), 0);
  cr_assert_eq(wsisa_cpu_label(cb, 4, lb), 0);
  uint64_t sums[WSISA_MATCH_FIELDS];
  cr_assert_eq(wsisa_cpu_object_match(la, lb, sums), 0);
  wsisa_object_metrics m;
  wsisa_object_metrics_of(sums, &m);
  *f1 = m.f1;
  wsisa_image_free(ca);
  wsisa_image_free(cb);
  wsisa_image_free(la);
  wsisa_image_free(lb);
}

/* The region (0, 0, 2048, 2048), the slide, and a window (512, 512, 1024,
 * 1024) alone: every pair of readings agrees at Dice and F1 >= 0.98 away
 * from the outer edge, and the slide's nucleus counts within 1 %. */
Test(tiling, results_do_not_depend_on_the_tiling, .timeout = 1200) {
  const reading r = sample_reading();
  const int sides[] = {512, 1024, 2048};
  tiling t[4];
  for (int i = 0; i < 3; i++) t[i] = segment_slide(&r, sides[i]);
  /* the slide whole, as one tile */
  t[3] = (tiling){0};
  cr_assert_eq(wsisa_image_new((int)r.scale.width, (int)r.scale.height, 1, WSISA_U8,
                               &t[3].canvas, NULL),
               0);
  memset(t[3].canvas->data, 0, (size_t)t[3].canvas->stride * (size_t)t[3].canvas->height);
  t[3].nuclei = segment_tile(&r, 0, 0, (int)r.scale.width, (int)r.scale.height, t[3].canvas,
                             NULL);
  /* the window alone */
  wsisa_image *window = NULL;
  cr_assert_eq(wsisa_image_new((int)r.scale.width, (int)r.scale.height, 1, WSISA_U8, &window,
                               NULL),
               0);
  memset(window->data, 0, (size_t)window->stride * (size_t)window->height);
  segment_tile(&r, 512, 512, 1024, 1024, window, NULL);

  const char *names[] = {"512", "1024", "2048", "whole"};
  const double goal = 0.98;
  cr_log_info("reading: %s (halo %d, %s statistics)\n", r.before ? "before" : "after", r.halo,
              r.has_stats ? "slide" : "tile");
  for (int i = 0; i < 4; i++)
    for (int j = i + 1; j < 4; j++) {
      double d, f;
      agreement(t[i].canvas, t[j].canvas, 0, 0, 2048, 2048, &d, &f);
      cr_log_info("region 0,0,2048,2048: %s vs %s: Dice %.4f, F1 %.4f\n", names[i], names[j], d,
                  f);
      if (!r.before) {
        cr_expect_geq(d, goal, "%s vs %s: Dice %.4f", names[i], names[j], d);
        cr_expect_geq(f, goal, "%s vs %s: F1 %.4f", names[i], names[j], f);
      }
    }
  for (int i = 0; i < 4; i++) {
    double d, f;
    agreement(window, t[i].canvas, 512, 512, 1024, 1024, &d, &f);
    cr_log_info("window 512,512,1024,1024 alone vs %s: Dice %.4f, F1 %.4f\n", names[i], d, f);
    if (!r.before) {
      cr_expect_geq(d, goal, "window vs %s: Dice %.4f", names[i], d);
      cr_expect_geq(f, goal, "window vs %s: F1 %.4f", names[i], f);
    }
  }
  for (int i = 0; i < 3; i++)
    cr_log_info("slide: %s tiles: %llu nuclei (%llu in tissue tiles)\n", names[i],
                (unsigned long long)t[i].nuclei, (unsigned long long)t[i].tissue_nuclei);
  cr_log_info("slide: whole: %llu nuclei\n", (unsigned long long)t[3].nuclei);
  for (int i = 0; i < 3 && !r.before; i++) {
    const double rel = ((double)t[i].nuclei - (double)t[3].nuclei) / (double)t[3].nuclei;
    cr_expect_leq(rel < 0 ? -rel : rel, 0.01, "%s tiles: %llu nuclei, whole %llu", names[i],
                  (unsigned long long)t[i].nuclei, (unsigned long long)t[3].nuclei);
  }
  for (int i = 0; i < 4; i++) wsisa_image_free(t[i].canvas);
  wsisa_image_free(window);
}

/* The sample's tile (0, 0) at 1024: 8.6 % tissue by `wsisa tiles`, so it is
 * segmented (the 2048 region finds about 95 nuclei there), and the tissue it
 * reports is what was segmented. */
Test(tiling, a_tile_with_tissue_is_segmented) {
  const reading r = sample_reading();
  uint64_t tissue = 0;
  uint64_t n = segment_tile(&r, 0, 0, 1024, 1024, NULL, &tissue);
  cr_log_info("tile (0, 0) at 1024: %llu nuclei, %llu tissue pixels (%.1f %%)\n",
              (unsigned long long)n, (unsigned long long)tissue, 100.0 * (double)tissue / 1048576.0);
  cr_expect_gt(n, 50, "tile (0, 0): %llu nuclei", (unsigned long long)n);
  cr_expect_geq((double)tissue, WSISA_TISSUE_THRESHOLD * 1024 * 1024);
  /* glass alone is background by the same rule: its tile is empty */
  wsisa_slide *slide = NULL;
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_slide_open(tu_src(SAMPLE), &slide, NULL), 0);
  cr_assert_eq(wsisa_grid_make_scaled(slide, &r.scale, 1024, 0, &g, NULL), 0);
  const wsisa_tile *glass = &g->tiles[2 * g->cols + 2]; /* 0.002 tissue */
  cr_expect_eq(glass->tissue, 0);
  uint64_t glass_tissue = 1;
  uint64_t gn = segment_tile(&r, glass->x, glass->y, glass->width, glass->height, NULL,
                             &glass_tissue);
  cr_expect_eq(gn, 0);
  cr_expect_eq(glass_tissue, 0);
  wsisa_grid_free(g);
  wsisa_slide_close(slide);
}
