/* What a slide says does not depend on how it is tiled: the bundled sample
 * segmented whole, in 512, 1024 and 2048 tiles (each read with the halo of
 * wsisa_workflow_halo, normalized with the slide's colour statistics, keeping
 * the nuclei whose centroid lies in its core) and a window alone agree on the
 * nuclei away from the outer edge; slide-level nucleus counts agree; so do
 * those of a synthetic 40x slide read at 0.5 um/pixel; `wsisa segment` reads
 * a window as the study reads its tiles; a tile with 5-10 % tissue is
 * segmented.
 *
 * WSISA_TILING_READING=before measures the reading of earlier versions
 * instead (no halo, each tile's own statistics) and only logs: the
 * agreement tables of docs/workflow.md, Tiles, come from both runs. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "engine/exec/exec.h"
#include "engine/workflow/workflow.h"
#include "io/io.h"
#include "tests/synthslide.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"
/* pixels left out along the outer edge of what is compared */
#define EDGE 64

TestSuite(tiling, .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop);

typedef struct reading {
  const char *path;
  int before; /* no halo, each tile's own statistics */
  int halo;
  int has_stats;
  double stats[WSISA_STATS_N];
  wsisa_scale scale;
} reading;

/* WSISA_TILING_READING=before: earlier versions' reading. */
static int reading_before(void) {
  const char *env = getenv("WSISA_TILING_READING");
  return env && strcmp(env, "before") == 0;
}

/* How the study reads the slide at `path` (at WSISA_TARGET_MPP), or with
 * `before` as earlier versions did. */
static reading slide_reading(const char *path, int before) {
  reading r;
  memset(&r, 0, sizeof r);
  r.path = path;
  r.before = before;
  wsisa_slide *slide = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_slide_open(path, &slide, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_scale_choose(slide, 0, WSISA_TARGET_MPP, &r.scale, &e), 0, "%s", e.msg);
  wsisa_slide_close(slide);
  if (!r.before) {
    r.halo = wsisa_workflow_halo_at(NULL, 0, r.scale.target_mpp);
    cr_assert_eq(wsisa_slide_stats(path, &r.scale, r.stats, &e), 0, "%s", e.msg);
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
  wsisa_tile_ref ref = {.path = r->path, .kind = WSISA_INPUT_SLIDE, .scale = r->scale, .x = x,
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

/* The slide in tiles of `side` (its grid at the target resolution): every
 * tile, or (`within` not NULL) those that meet the rectangle x, y, w, h. */
static tiling segment_slide_within(const reading *r, int side, const int64_t *within) {
  tiling t = {0};
  cr_assert_eq(wsisa_image_new((int)r->scale.width, (int)r->scale.height, 1, WSISA_U8,
                               &t.canvas, NULL),
               0);
  memset(t.canvas->data, 0, (size_t)t.canvas->stride * (size_t)t.canvas->height);
  wsisa_slide *slide = NULL;
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_slide_open(r->path, &slide, NULL), 0);
  cr_assert_eq(wsisa_grid_make_scaled(slide, &r->scale, side, 0, &g, NULL), 0);
  for (size_t k = 0; k < g->ntiles; k++) {
    const wsisa_tile *tl = &g->tiles[k];
    if (within && (tl->x >= within[0] + within[2] || tl->x + tl->width <= within[0] ||
                   tl->y >= within[1] + within[3] || tl->y + tl->height <= within[1]))
      continue;
    uint64_t n = segment_tile(r, tl->x, tl->y, tl->width, tl->height, t.canvas, NULL);
    t.nuclei += n;
    if (tl->tissue) t.tissue_nuclei += n;
  }
  wsisa_grid_free(g);
  wsisa_slide_close(slide);
  return t;
}

static tiling segment_slide(const reading *r, int side) { return segment_slide_within(r, side, NULL); }

/* An empty canvas the size of the slide at the target resolution. */
static wsisa_image *slide_canvas(const reading *r) {
  wsisa_image *c = NULL;
  cr_assert_eq(wsisa_image_new((int)r->scale.width, (int)r->scale.height, 1, WSISA_U8, &c, NULL),
               0);
  memset(c->data, 0, (size_t)c->stride * (size_t)c->height);
  return c;
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

/* The region (0, 0, 2048, 2048) in 512, 1024 and 2048 tiles, the slide
 * whole, and a window (512, 512, 1024, 1024) alone: every pair of readings
 * agrees at Dice and F1 >= 0.98 away from the outer edge, and the slide's
 * nucleus counts within 1 %. */
static void expect_tilings_agree(const reading r) {
  const int sides[] = {512, 1024, 2048};
  tiling t[4];
  for (int i = 0; i < 3; i++) t[i] = segment_slide(&r, sides[i]);
  /* the slide whole, as one tile */
  t[3] = (tiling){.canvas = slide_canvas(&r)};
  t[3].nuclei = segment_tile(&r, 0, 0, (int)r.scale.width, (int)r.scale.height, t[3].canvas,
                             NULL);
  /* the window alone */
  wsisa_image *window = slide_canvas(&r);
  segment_tile(&r, 512, 512, 1024, 1024, window, NULL);

  const char *names[] = {"512", "1024", "2048", "whole"};
  const double goal = 0.98;
  cr_log_info("%s: reading %s (halo %d, %s statistics)\n", r.path,
              r.before ? "before" : "after", r.halo, r.has_stats ? "slide" : "tile");
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

Test(tiling, results_do_not_depend_on_the_tiling, .timeout = 1200) {
  expect_tilings_agree(slide_reading(tu_src(SAMPLE), reading_before()));
}

/* The same on a 40x slide: the sample's region (0, 0, 2048, 2048) upsampled
 * 2x (MPP 0.25), read at 0.5 um/pixel from level 0 averaged 2 x 2; the
 * region is the whole slide there, so its tiles at the right and bottom edges
 * have no neighbours. */
Test(tiling, a_40x_slide_read_at_half_a_micron_agrees_too, .timeout = 600) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/svs40-large.svs", tu_tmpdir("tiling40"));
  cr_assert_eq(tu_synth_svs40_large(path), 0);
  const reading r = slide_reading(path, reading_before());
  cr_assert_eq(r.scale.level, 0);
  cr_assert_float_eq(r.scale.factor, 2.0, 0, "0.25 um pixels averaged 2 x 2");
  cr_assert_eq(r.scale.width, TU_SYNTH_LARGE_SIDE);
  expect_tilings_agree(r);
  unlink(path);
}

/* `wsisa segment SAMPLE ARGS -o MASK` (a .tif under the suite's folder),
 * read back. */
static wsisa_image *segment_cli(const char *args, const char *name) {
  char mask[WSISA_PATH_MAX], cmd[9000], *err = NULL;
  tu_path(mask, "%s/%s.tif", tu_tmpdir("tiling_segment"), name);
  snprintf(cmd, sizeof cmd, "segment '%s' %s -o '%s'", tu_src(SAMPLE), args, mask);
  cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s: %s", cmd, err ? err : "");
  free(err);
  wsisa_image *m = NULL;
  cr_assert_eq(wsisa_image_read(mask, &m, NULL), 0, "%s", mask);
  return m;
}

/* The rectangle (x, y, w, h) of a slide canvas, as a view. */
static wsisa_image canvas_part(const wsisa_image *c, int x, int y, int w, int h) {
  return wsisa_image_view((uint8_t *)wsisa_image_row(c, y) + x, w, h, 1, WSISA_U8, c->stride);
}

/* `wsisa segment` of a region of the sample reads it as the study reads its
 * tiles, by default: the grid's tile (1, 1) gives the study's tile (1, 1),
 * and a window off the grid the window read alone, bit for bit, within the
 * region (the nuclei whose centroid lies in it); the window agrees with the
 * study's 1024 tiles, stitched, at Dice and F1 >= 0.98 away from its edge.
 * (The sample is read as it is: level-0 and target pixels are one.) */
Test(tiling, segment_reads_a_region_as_the_study_reads_its_tiles, .timeout = 600) {
  const reading r = slide_reading(tu_src(SAMPLE), 0);
  cr_assert_float_eq(r.scale.factor, 1.0, 0);
  wsisa_image *tile = segment_cli("--tile 1,1", "tile11");
  wsisa_image *study = slide_canvas(&r);
  segment_tile(&r, 1024, 1024, 1024, 1024, study, NULL);
  wsisa_image core = canvas_part(study, 1024, 1024, 1024, 1024);
  cr_expect_eq(tu_image_diff(tile, &core), 0, "segment --tile 1,1 and the study's tile (1, 1)");
  wsisa_image_free(study);
  wsisa_image_free(tile);

  const int64_t win[4] = {512, 512, 1024, 1024};
  wsisa_image *window = segment_cli("--region 512,512,1024,1024", "window");
  wsisa_image *alone = slide_canvas(&r);
  segment_tile(&r, win[0], win[1], (int)win[2], (int)win[3], alone, NULL);
  core = canvas_part(alone, 512, 512, 1024, 1024);
  cr_expect_eq(tu_image_diff(window, &core), 0, "segment --region and the window read alone");
  /* the window's mask on the slide against the study's tiles of 1024 */
  wsisa_image *placed = slide_canvas(&r);
  for (int y = 0; y < window->height; y++)
    memcpy((uint8_t *)wsisa_image_row(placed, 512 + y) + 512, wsisa_image_row(window, y),
           (size_t)window->width);
  tiling t = segment_slide_within(&r, 1024, win);
  double d, f;
  agreement(placed, t.canvas, 512, 512, 1024, 1024, &d, &f);
  cr_log_info("segment --region 512,512,1024,1024 vs the study's 1024 tiles: Dice %.4f, F1 "
              "%.4f\n", d, f);
  cr_expect_geq(d, 0.98, "Dice %.4f", d);
  cr_expect_geq(f, 0.98, "F1 %.4f", f);
  wsisa_image_free(t.canvas);
  wsisa_image_free(placed);
  wsisa_image_free(alone);
  wsisa_image_free(window);
}

/* The sample's tile (0, 0) at 1024: 8.6 % tissue by `wsisa tiles`, so it is
 * segmented (the 2048 region finds about 95 nuclei there), and the tissue it
 * reports is what was segmented. */
Test(tiling, a_tile_with_tissue_is_segmented) {
  const reading r = slide_reading(tu_src(SAMPLE), reading_before());
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
