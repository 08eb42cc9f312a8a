/* Object reuse (codelets/cpu/separate.c, codelets/cpu/object_store.c): levels
 * 6-7 object group by object group give the tile-wide kernels' mask bit for
 * bit, with and without the store, whatever it evicted; on random masks with
 * the cases that break a per-cluster computation (a cluster inside another's
 * hole, clusters at the border, thin walls between background components),
 * and on the sample's tiles through the workflow for several parameter sets;
 * the codelets on the OpenCL worker as on the CPU. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "engine/workflow/workflow.h"
#include "io/io.h"
#include "tests/testutil.h"

static wsisa_image *new_image(int w, int h, int channels, wsisa_dtype type) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, channels, type, &img, NULL), 0);
  return img;
}

static uint8_t *u8(const wsisa_image *img, int x, int y) {
  return (uint8_t *)wsisa_image_row(img, y) + x;
}

typedef struct params {
  int watershed_conn, min_size_seg, max_size_seg, fill_holes_conn;
} params;

/* The tile-wide kernels of levels 6 (from the dilated mask on) and 7, as the
 * fine-grain codelets run them (engine/workflow/workflow.c): *sep and *final. */
static void tile_wide(const wsisa_image *rgb, const wsisa_image *mask, const params *p,
                      wsisa_image **sep_out, wsisa_image **final_out) {
  const int w = mask->width, h = mask->height;
  wsisa_image *dist = new_image(w, h, 1, WSISA_F32), *relief = new_image(w, h, 1, WSISA_F32),
              *hm = new_image(w, h, 1, WSISA_F32), *minima = new_image(w, h, 1, WSISA_U8),
              *markers = new_image(w, h, 1, WSISA_I32), *labels = new_image(w, h, 1, WSISA_I32),
              *sep = new_image(w, h, 1, WSISA_U8), *sized = new_image(w, h, 1, WSISA_U8),
              *final = new_image(w, h, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_edt(mask, dist), 0);
  cr_assert_eq(wsisa_cpu_neg_dist(dist, mask, relief), 0);
  cr_assert_eq(wsisa_cpu_hmin(relief, 1.0f, 8, hm), 0);
  cr_assert_eq(wsisa_cpu_regional_min(hm, 8, minima), 0);
  cr_assert_eq(wsisa_cpu_label(minima, p->watershed_conn, markers), 0);
  cr_assert_eq(wsisa_cpu_watershed(rgb, markers, mask, labels, sep), 0);
  cr_assert_eq(wsisa_cpu_area_filter(sep, 4, p->min_size_seg, p->max_size_seg, sized), 0);
  cr_assert_eq(wsisa_cpu_fill_object_holes(sized, p->fill_holes_conn, final), 0);
  wsisa_image *all[] = {dist, relief, hm, minima, markers, labels, sized};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) wsisa_image_free(all[i]);
  *sep_out = sep;
  *final_out = final;
}

/* Level 6, then level 7 on its result, object by object. */
static void by_objects(const wsisa_image *rgb, const wsisa_image *mask, const params *p,
                       wsisa_object_store *store, wsisa_object_tally *t6,
                       wsisa_object_tally *t7, wsisa_image **sep, wsisa_image **final) {
  *sep = new_image(mask->width, mask->height, 1, WSISA_U8);
  *final = new_image(mask->width, mask->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_separate(rgb, mask, p->watershed_conn, store, NULL, t6, *sep), 0);
  cr_assert_eq(wsisa_cpu_final_size(*sep, p->min_size_seg, p->max_size_seg, p->fill_holes_conn,
                                    store, NULL, t7, *final),
               0);
}

/* ---- random masks ------------------------------------------------------- */

static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(*s >> 33);
}

static int rnd_in(uint64_t *s, int lo, int hi) { return lo + (int)(rnd(s) % (uint32_t)(hi - lo + 1)); }

/* Discs, rings (some with a disc inside: a cluster in another's hole),
 * U shapes closed by a bar two pixels off, one-pixel lines (thin walls and
 * diagonal joints), specks; anywhere, the border included. */
static void draw(wsisa_image *m, uint64_t *s, int shapes) {
  const int w = m->width, h = m->height;
  for (int k = 0; k < shapes; k++) {
    const int kind = rnd_in(s, 0, 5), cx = rnd_in(s, -3, w + 2), cy = rnd_in(s, -3, h + 2);
    const int r = rnd_in(s, 1, 9), r_in = rnd_in(s, 0, r > 3 ? r - 2 : 0);
    for (int y = cy - r - 3; y <= cy + r + 3; y++)
      for (int x = cx - r - 3; x <= cx + r + 3; x++) {
        if (x < 0 || y < 0 || x >= w || y >= h) continue;
        const int d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
        int on = 0;
        switch (kind) {
          case 0: on = d2 <= r * r; break;
          case 1: on = d2 <= r * r && d2 > r_in * r_in; break;
          case 2: on = (d2 <= r * r && d2 > r_in * r_in) || d2 <= (r_in / 3) * (r_in / 3); break;
          case 3: /* a U, its opening closed by a bar two pixels above */
            on = (abs(x - cx) <= r && y == cy + r) || ((x == cx - r || x == cx + r) && y >= cy &&
                                                       y <= cy + r) ||
                 (abs(x - cx) <= r + 1 && y == cy - 2);
            break;
          case 4: on = (x - cx == y - cy || x - cx == cy - y) && abs(x - cx) <= r; break;
          default: on = d2 == 0; break;
        }
        if (on) *u8(m, x, y) = 255;
      }
  }
}

static wsisa_image *random_rgb(int w, int h, uint64_t *s) {
  wsisa_image *rgb = new_image(w, h, 3, WSISA_U8);
  const int levels = rnd_in(s, 2, 256); /* few levels: many ties */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) *u8(rgb, 3 * x + c, y) = (uint8_t)(rnd(s) % (uint32_t)levels);
  return rgb;
}

static void expect_same(const wsisa_image *a, const wsisa_image *b, const char *what, int k) {
  size_t diff = tu_image_diff(a, b);
  cr_expect_eq(diff, 0, "case %d, %s: %zu pixels differ from the tile-wide kernels", k, what,
               diff);
}

static void expect_both(const wsisa_image *sep, const wsisa_image *final, wsisa_image *got_sep,
                        wsisa_image *got_final, const char *what, int k) {
  expect_same(sep, got_sep, what, k);
  expect_same(final, got_final, what, k);
  wsisa_image_free(got_sep);
  wsisa_image_free(got_final);
}

/* Two stores compared unit by unit (calibration's measure of how much a
 * parameter's change moves the units): a mask's units, then the same with
 * one more nucleus apart from the others. The second store lacks none of
 * the first's; the first lacks the new nucleus's crop at each level, in
 * pixels what the tallies say the second saw more. */
Test(separate, stores_compared_unit_by_unit) {
  const int w = 96, h = 64;
  uint64_t seed = 7;
  wsisa_image *rgb = random_rgb(w, h, &seed), *mask[2];
  for (int k = 0; k < 2; k++) {
    mask[k] = new_image(w, h, 1, WSISA_U8);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int in = (x - 12) * (x - 12) + (y - 12) * (y - 12) <= 16 ||
                 (x - 40) * (x - 40) + (y - 40) * (y - 40) <= 25 ||
                 (x - 46) * (x - 46) + (y - 40) * (y - 40) <= 25 ||
                 (k && (x - 78) * (x - 78) + (y - 20) * (y - 20) <= 9);
        *u8(mask[k], x, y) = in ? 255 : 0;
      }
  }
  const params p = {8, 2, 1000, 4};
  wsisa_object_store *store[2];
  wsisa_object_tally t[2][2];
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(wsisa_object_store_new(64 << 20, &store[k]), 0);
    wsisa_image *sep, *final;
    by_objects(rgb, mask[k], &p, store[k], &t[k][0], &t[k][1], &sep, &final);
    wsisa_image_free(sep);
    wsisa_image_free(final);
  }
  uint64_t area[2], missing[2];
  wsisa_object_store_missing(store[0], store[1], area, missing);
  for (int l = 0; l < 2; l++) {
    cr_expect_eq(area[l], t[0][l].area[l], "level %d: %llu pixels held, %llu seen", l + 6,
                 (unsigned long long)area[l], (unsigned long long)t[0][l].area[l]);
    cr_expect_eq(missing[l], 0, "level %d: the second store lacks %llu pixels", l + 6,
                 (unsigned long long)missing[l]);
  }
  wsisa_object_store_missing(store[1], store[0], area, missing);
  for (int l = 0; l < 2; l++) {
    uint64_t more = t[1][l].area[l] - t[0][l].area[l];
    cr_expect(more > 0 && missing[l] == more, "level %d: %llu pixels missing, %llu more seen",
              l + 6, (unsigned long long)missing[l], (unsigned long long)more);
  }
  wsisa_object_store_missing(store[1], store[1], area, missing);
  cr_expect(missing[0] == 0 && missing[1] == 0);
  for (int k = 0; k < 2; k++) {
    wsisa_object_store_free(store[k]);
    wsisa_image_free(mask[k]);
  }
  wsisa_image_free(rgb);
}

/* mask shifted by (dx, dy) >= 0, what leaves the image dropped */
static wsisa_image *shifted(const wsisa_image *m, int dx, int dy) {
  wsisa_image *out = new_image(m->width, m->height, 1, WSISA_U8);
  for (int y = dy; y < m->height; y++)
    for (int x = dx; x < m->width; x++) *u8(out, x, y) = *u8(m, x - dx, y - dy);
  return out;
}

/* Per image: a mask, the same with a few more shapes, and the same shifted
 * (one store for all three, as the runs of a tile share one: the same
 * cluster must be found again, and a cluster elsewhere must not be taken for
 * it), each with three parameter sets, each twice. */
Test(separate, random_masks_match_the_tile_wide_kernels, .timeout = 300) {
  uint64_t seed = 18, seen[2] = {0, 0}, reused[2] = {0, 0}, evictions = 0;
  for (int k = 0; k < 300; k++) {
    const int w = rnd_in(&seed, 1, 90), h = rnd_in(&seed, 1, 90);
    wsisa_image *masks[3];
    masks[0] = new_image(w, h, 1, WSISA_U8);
    draw(masks[0], &seed, rnd_in(&seed, 0, 12));
    masks[1] = shifted(masks[0], 0, 0);
    draw(masks[1], &seed, rnd_in(&seed, 1, 3));
    masks[2] = shifted(masks[0], rnd_in(&seed, 0, 2), rnd_in(&seed, 1, 2));
    wsisa_image *rgb = random_rgb(w, h, &seed);
    /* a store per tile; the tiny one keeps an entry or two and evicts all
     * the time */
    wsisa_object_store *shared = NULL, *tiny = NULL;
    cr_assert_eq(wsisa_object_store_new(64 << 20, &shared), 0);
    cr_assert_eq(wsisa_object_store_new(600, &tiny), 0);
    for (int v = 0; v < 3; v++)
      for (int pset = 0; pset < 3; pset++) {
        params p = {rnd_in(&seed, 0, 1) ? 8 : 4, rnd_in(&seed, 0, 25),
                    rnd_in(&seed, 0, 1) ? 1000 : rnd_in(&seed, 10, 200),
                    rnd_in(&seed, 0, 1) ? 8 : 4};
        wsisa_image *sep, *final, *got_sep, *got_final;
        tile_wide(rgb, masks[v], &p, &sep, &final);
        for (int again = 0; again < 2; again++) {
          wsisa_object_tally t6 = {0}, t7 = {0};
          by_objects(rgb, masks[v], &p, NULL, NULL, NULL, &got_sep, &got_final);
          expect_both(sep, final, got_sep, got_final, "no store", k);
          by_objects(rgb, masks[v], &p, shared, &t6, &t7, &got_sep, &got_final);
          expect_both(sep, final, got_sep, got_final, "store", k);
          if (again) {
            cr_expect_eq(t6.reused[0], t6.seen[0], "case %d: a cluster missed the second time", k);
            cr_expect_eq(t7.reused[1], t7.seen[1], "case %d: a group missed the second time", k);
          }
          for (int l = 0; l < 2; l++) {
            seen[l] += l ? t7.seen[1] : t6.seen[0];
            reused[l] += l ? t7.reused[1] : t6.reused[0];
          }
          by_objects(rgb, masks[v], &p, tiny, NULL, NULL, &got_sep, &got_final);
          expect_both(sep, final, got_sep, got_final, "store evicting", k);
        }
        wsisa_image_free(sep);
        wsisa_image_free(final);
      }
    wsisa_object_tally st;
    wsisa_object_store_tally(tiny, &st);
    cr_expect_leq(st.bytes_peak, 600);
    evictions += st.evictions;
    wsisa_object_store_free(shared);
    wsisa_object_store_free(tiny);
    for (int v = 0; v < 3; v++) wsisa_image_free(masks[v]);
    wsisa_image_free(rgb);
  }
  cr_expect_gt(seen[0], 5000);
  cr_expect_gt(seen[1], 5000);
  /* beyond the second passes: later masks and parameter sets reuse units */
  cr_expect_gt(reused[0], seen[0] / 2);
  cr_expect_gt(reused[1], seen[1] / 2);
  cr_expect_gt(evictions, 1000);
}

/* ---- the codelets on either worker -------------------------------------- */

typedef struct codelet_arg {
  params p;
  wsisa_object_store *store;
} codelet_arg;

/* h: rgb, the dilated mask, level 6's and level 7's outputs. */
static int submit_levels(starpu_data_handle_t *h, void *arg) {
  const codelet_arg *a = arg;
  int rc = wsisa_submit_separate(h[0], h[1], h[2], a->p.watershed_conn, a->store);
  if (!rc)
    rc = wsisa_submit_final_size(h[2], h[3], a->p.min_size_seg, a->p.max_size_seg,
                                 a->p.fill_holes_conn, a->store);
  return rc;
}

/* Levels 6 and 7 by the codelets on the workers `where`; the store's seen
 * and reused counts of the call added to t. */
static void by_codelets(uint32_t where, wsisa_image *rgb, wsisa_image *mask, const params *p,
                        wsisa_object_store *store, wsisa_object_tally *t, wsisa_image **sep,
                        wsisa_image **final) {
  *sep = new_image(mask->width, mask->height, 1, WSISA_U8);
  *final = new_image(mask->width, mask->height, 1, WSISA_U8);
  memset(wsisa_image_row(*sep, 0), 7, (size_t)mask->width); /* written, not kept */
  wsisa_object_tally before = {0}, after = {0};
  if (store) wsisa_object_store_tally(store, &before);
  codelet_arg a = {*p, store};
  wsisa_image *imgs[] = {rgb, mask, *sep, *final};
  cr_assert_eq(tu_run_op(where, imgs, 4, submit_levels, &a), 0);
  if (store) wsisa_object_store_tally(store, &after);
  for (int l = 0; t && l < 2; l++) {
    t->seen[l] += after.seen[l] - before.seen[l];
    t->reused[l] += after.reused[l] - before.reused[l];
  }
}

/* The OpenCL implementations of `separate` and `final_size` give the CPU's
 * masks and fill the store with the entries the CPU takes, and take the
 * CPU's: each random mask on the OpenCL worker without a store, with a new
 * store (every unit missed), on the CPU with that store (every unit
 * found), on the OpenCL worker again (every unit found: the stored masks
 * written to the device), the mask with more shapes on the OpenCL worker
 * (some found, some not) and on the CPU after it, and with a store that
 * evicts all the time. */
Test(separate, codelets_agree_on_cpu_and_opencl, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop, .timeout = 600) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  uint64_t seed = 25;
  wsisa_object_tally all = {0};
  for (int k = 0; k < 16; k++) {
    const int w = rnd_in(&seed, 1, 90), h = rnd_in(&seed, 1, 90);
    wsisa_image *mask = new_image(w, h, 1, WSISA_U8);
    draw(mask, &seed, rnd_in(&seed, 0, 12));
    wsisa_image *more = shifted(mask, 0, 0);
    draw(more, &seed, rnd_in(&seed, 1, 3));
    wsisa_image *rgb = random_rgb(w, h, &seed);
    const params p = {rnd_in(&seed, 0, 1) ? 8 : 4, rnd_in(&seed, 0, 25),
                      rnd_in(&seed, 0, 1) ? 1000 : rnd_in(&seed, 10, 200),
                      rnd_in(&seed, 0, 1) ? 8 : 4};
    wsisa_image *sep, *final, *more_sep, *more_final, *got_sep, *got_final;
    tile_wide(rgb, mask, &p, &sep, &final);
    tile_wide(rgb, more, &p, &more_sep, &more_final);
    wsisa_object_store *store = NULL, *tiny = NULL;
    cr_assert_eq(wsisa_object_store_new(64 << 20, &store), 0);
    cr_assert_eq(wsisa_object_store_new(600, &tiny), 0);
    by_codelets(STARPU_OPENCL, rgb, mask, &p, NULL, NULL, &got_sep, &got_final);
    expect_both(sep, final, got_sep, got_final, "OpenCL, no store", k);
    wsisa_object_tally t = {0};
    by_codelets(STARPU_OPENCL, rgb, mask, &p, store, &t, &got_sep, &got_final);
    expect_both(sep, final, got_sep, got_final, "OpenCL, new store", k);
    cr_expect_eq(t.reused[0] + t.reused[1], 0, "case %d: a new store held a unit", k);
    t = (wsisa_object_tally){0};
    by_codelets(STARPU_CPU, rgb, mask, &p, store, &t, &got_sep, &got_final);
    expect_both(sep, final, got_sep, got_final, "CPU, OpenCL's store", k);
    for (int l = 0; l < 2; l++)
      cr_expect_eq(t.reused[l], t.seen[l], "case %d, level %d: the CPU missed OpenCL's units", k,
                   6 + l);
    t = (wsisa_object_tally){0};
    by_codelets(STARPU_OPENCL, rgb, mask, &p, store, &t, &got_sep, &got_final);
    expect_both(sep, final, got_sep, got_final, "OpenCL, every unit stored", k);
    for (int l = 0; l < 2; l++)
      cr_expect_eq(t.reused[l], t.seen[l], "case %d, level %d: OpenCL missed a unit", k, 6 + l);
    for (int l = 0; l < 2; l++) all.seen[l] += t.seen[l];
    by_codelets(STARPU_OPENCL, rgb, more, &p, store, &t, &got_sep, &got_final);
    expect_both(more_sep, more_final, got_sep, got_final, "OpenCL, more shapes", k);
    by_codelets(STARPU_CPU, rgb, more, &p, store, &t, &got_sep, &got_final);
    expect_both(more_sep, more_final, got_sep, got_final, "CPU after OpenCL, more shapes", k);
    by_codelets(STARPU_OPENCL, rgb, more, &p, tiny, NULL, &got_sep, &got_final);
    expect_both(more_sep, more_final, got_sep, got_final, "OpenCL, store evicting", k);
    wsisa_object_store_free(store);
    wsisa_object_store_free(tiny);
    wsisa_image *free_all[] = {mask, more, rgb, sep, final, more_sep, more_final};
    for (size_t i = 0; i < sizeof free_all / sizeof *free_all; i++) wsisa_image_free(free_all[i]);
  }
  cr_log_info("OpenCL: %llu clusters, %llu groups", (unsigned long long)all.seen[0],
              (unsigned long long)all.seen[1]);
  cr_expect_gt(all.seen[0], 40);
  cr_expect_gt(all.seen[1], 40);
}

/* ---- the sample's tiles through the workflow ------------------------------ */

/* Parameter sets that change one value each, as MOAT steps do (docs/workflow.md:
 * G1 80 -> 75 leaves most objects as they were, min_size_pl and min_size_seg
 * only some, watershed_conn and fill_holes_conn the rule itself). */
static const char *const changes[] = {
    "", "G1=75", "T1=5.5", "min_size_pl=35", "min_size_seg=25,max_size_seg=900",
    "watershed_conn=4", "fill_holes_conn=8,min_size=13"};
#define NSETS ((int)(sizeof changes / sizeof *changes))

typedef struct sample_arg {
  double params[NSETS][WSISA_SEG_NPARAMS];
  wsisa_object_store *store;
} sample_arg;

static int submit_sets(starpu_data_handle_t *h, void *arg) {
  const sample_arg *a = arg;
  wsisa_tile_data tile;
  wsisa_err e = WSISA_ERR_INIT;
  int w = (int)starpu_matrix_get_nx(h[0]), hh = (int)starpu_matrix_get_ny(h[0]);
  int rc = wsisa_workflow_tile_submit(h[0], w, hh, 1, &tile, &e);
  tile.objects = a->store;
  for (int k = 0; k < NSETS && !rc; k++)
    rc = wsisa_workflow_segment_submit(&tile, a->params[k], h[1 + k], &e);
  wsisa_workflow_tile_release(&tile, 1);
  if (rc) fprintf(stderr, "segment: %s\n", e.msg);
  return rc;
}

/* The final masks of every parameter set on the workers `where`, with
 * `store` (NULL: the fine-grain codelets). */
static void masks_on(uint32_t where, wsisa_image *rgb, sample_arg *a, wsisa_object_store *store,
                     wsisa_image **masks) {
  wsisa_image *imgs[1 + NSETS] = {rgb};
  for (int k = 0; k < NSETS; k++) imgs[1 + k] = masks[k] = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  a->store = store;
  cr_assert_eq(tu_run_op(where, imgs, 1 + NSETS, submit_sets, a), 0);
}

static void masks_of(wsisa_image *rgb, sample_arg *a, wsisa_object_store *store,
                     wsisa_image **masks) {
  masks_on(STARPU_CPU | STARPU_OPENCL, rgb, a, store, masks);
}

Test(separate, sample_tiles_with_and_without_the_store, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop, .timeout = 600) {
  sample_arg a;
  for (int k = 0; k < NSETS; k++) {
    memcpy(a.params[k], wsisa_seg_defaults(), sizeof a.params[k]);
    cr_assert_eq(wsisa_seg_params_parse(changes[k], a.params[k], NULL), 0);
  }
  /* the sample's tissue tiles at 1024, as the default study lays them */
  wsisa_slide *slide = NULL;
  wsisa_scale scale;
  wsisa_grid *g = NULL;
  cr_assert_eq(wsisa_slide_open(tu_src("tests/data/CMU-1-Small-Region.svs"), &slide, NULL), 0);
  cr_assert_eq(wsisa_scale_choose_level(slide, 0, WSISA_TARGET_MPP, -1, &scale, NULL), 0);
  cr_assert_eq(wsisa_grid_make_scaled(slide, &scale, 1024, 0, &g, NULL), 0);
  int tiles = 0, on_opencl = 0;
  uint64_t on = 0, evictions = 0;
  wsisa_object_tally all = {0};
  for (size_t t = 0; t < g->ntiles; t++) {
    const wsisa_tile *tl = &g->tiles[t];
    if (!tl->tissue) continue;
    tiles++;
    wsisa_image *rgb = NULL;
    cr_assert_eq(wsisa_slide_read_scaled(slide, &scale, tl->x, tl->y, tl->width, tl->height, &rgb,
                                         NULL),
                 0);
    wsisa_image *fine[NSETS], *stored[NSETS], *evicting[NSETS];
    wsisa_object_store *store = NULL, *small = NULL;
    cr_assert_eq(wsisa_object_store_new(256 << 20, &store), 0);
    cr_assert_eq(wsisa_object_store_new(64 << 10, &small), 0);
    masks_of(rgb, &a, NULL, fine);
    /* on the one CPU worker: the sets run in their order, so what the store
     * gives back (counted below) does not depend on which worker was free */
    masks_on(STARPU_CPU, rgb, &a, store, stored);
    masks_of(rgb, &a, small, evicting);
    /* the first tile with many nuclei on the OpenCL worker alone too (PoCL
     * is slow) */
    wsisa_image *on_cl[NSETS] = {NULL};
    wsisa_object_store *cl_store = NULL;
    uint64_t nuclei_pixels = 0;
    for (int y = 0; y < rgb->height; y++)
      for (int x = 0; x < rgb->width; x++) nuclei_pixels += *u8(fine[0], x, y) != 0;
    if (!on_opencl && nuclei_pixels > 50000) {
      on_opencl = 1;
      cr_assert_eq(wsisa_object_store_new(256 << 20, &cl_store), 0);
      masks_on(STARPU_OPENCL, rgb, &a, cl_store, on_cl);
      wsisa_object_tally tc;
      wsisa_object_store_tally(cl_store, &tc);
      cr_expect_gt(tc.reused[0], 0, "tile %zu: no cluster reused on the OpenCL worker (%llu seen)",
                   t, (unsigned long long)tc.seen[0]);
      cr_expect_gt(tc.reused[1], 0, "tile %zu: no group reused on the OpenCL worker (%llu seen)",
                   t, (unsigned long long)tc.seen[1]);
      wsisa_object_store_free(cl_store);
    }
    for (int k = 0; k < NSETS; k++) {
      if (on_cl[k]) {
        cr_expect_eq(tu_image_diff(fine[k], on_cl[k]), 0,
                     "tile %zu, '%s': the OpenCL worker's differs", t, changes[k]);
        wsisa_image_free(on_cl[k]);
      }
      for (int y = 0; y < rgb->height; y++)
        for (int x = 0; x < rgb->width; x++) on += *u8(fine[k], x, y) != 0;
      cr_expect_eq(tu_image_diff(fine[k], stored[k]), 0, "tile %zu, '%s': store differs", t,
                   changes[k]);
      cr_expect_eq(tu_image_diff(fine[k], evicting[k]), 0, "tile %zu, '%s': small store differs",
                   t, changes[k]);
      wsisa_image_free(fine[k]);
      wsisa_image_free(stored[k]);
      wsisa_image_free(evicting[k]);
    }
    wsisa_object_tally t1, t2;
    wsisa_object_store_tally(store, &t1);
    wsisa_object_store_tally(small, &t2);
    cr_expect_eq(t1.evictions, 0);
    cr_expect_leq(t2.bytes_peak, 64 << 10);
    evictions += t2.evictions;
    for (int l = 0; l < 2; l++) {
      all.seen[l] += t1.seen[l];
      all.reused[l] += t1.reused[l];
    }
    wsisa_object_store_free(store);
    wsisa_object_store_free(small);
    wsisa_image_free(rgb);
  }
  cr_expect_eq(tiles, 6, "the sample has 6 tissue tiles at 1024");
  cr_expect(on_opencl, "no tile on the OpenCL worker");
  /* masks with nuclei in them (one tile has almost none), and a small store
   * that had to evict */
  cr_expect_gt(on, 500000, "%llu mask pixels in all", (unsigned long long)on);
  cr_expect_gt(evictions, 100);
  /* most units come back: a change above level 6 leaves most nuclei as they
   * were, one at level 7 leaves their separations */
  for (int l = 0; l < 2; l++)
    cr_expect_gt(all.reused[l], all.seen[l] / 2, "level %d: %llu of %llu reused", 6 + l,
                 (unsigned long long)all.reused[l], (unsigned long long)all.seen[l]);
  cr_log_info("sample tiles: level 6 %llu of %llu clusters reused, level 7 %llu of %llu groups\n",
              (unsigned long long)all.reused[0], (unsigned long long)all.seen[0],
              (unsigned long long)all.reused[1], (unsigned long long)all.seen[1]);
  wsisa_grid_free(g);
  wsisa_slide_close(slide);
}
