/* Object reuse (codelets/cpu/separate.c, codelets/cpu/object_store.c): levels
 * 6-7 object group by object group give the tile-wide kernels' mask bit for
 * bit, with and without the store, whatever it evicted; on random masks with
 * the cases that break a per-cluster computation (a cluster inside another's
 * hole, clusters at the border, thin walls between background components),
 * and on the sample's tiles through the workflow for several parameter sets. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "engine/engine.h"
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

/* The tile-wide kernels of levels 6 (from the dilated mask on) and 7, as the
 * fine-grain codelets run them (engine/workflow.c). */
static wsisa_image *tile_wide(const wsisa_image *rgb, const wsisa_image *mask,
                              const wsisa_separate_params *p) {
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
  wsisa_image *all[] = {dist, relief, hm, minima, markers, labels, sep, sized};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) wsisa_image_free(all[i]);
  return final;
}

static wsisa_image *by_groups(const wsisa_image *rgb, const wsisa_image *mask,
                              const wsisa_separate_params *p, wsisa_object_store *store,
                              wsisa_object_tally *t) {
  wsisa_image *out = new_image(mask->width, mask->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_separate(rgb, mask, p, store, t, out), 0);
  return out;
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

Test(separate, random_masks_match_the_tile_wide_kernels, .timeout = 300) {
  uint64_t seed = 18, groups = 0, seps = 0, evictions = 0;
  for (int k = 0; k < 400; k++) {
    const int w = rnd_in(&seed, 1, 90), h = rnd_in(&seed, 1, 90);
    wsisa_image *mask = new_image(w, h, 1, WSISA_U8);
    draw(mask, &seed, rnd_in(&seed, 0, 12));
    wsisa_image *rgb = random_rgb(w, h, &seed);
    /* a store per tile: fresh ones with each image; the tiny one keeps a
     * group or two and evicts all the time */
    wsisa_object_store *shared = NULL, *tiny = NULL;
    cr_assert_eq(wsisa_object_store_new(64 << 20, &shared), 0);
    cr_assert_eq(wsisa_object_store_new(900, &tiny), 0);
    for (int pset = 0; pset < 3; pset++) {
      wsisa_separate_params p = {rnd_in(&seed, 0, 1) ? 8 : 4, rnd_in(&seed, 0, 25),
                                 rnd_in(&seed, 0, 1) ? 1000 : rnd_in(&seed, 10, 200),
                                 rnd_in(&seed, 0, 1) ? 8 : 4};
      wsisa_image *want = tile_wide(rgb, mask, &p);
      /* twice through each store: the second time the shared one has every
       * group */
      for (int again = 0; again < 2; again++) {
        wsisa_object_tally t = {0};
        wsisa_image *got = by_groups(rgb, mask, &p, NULL, NULL);
        expect_same(want, got, "no store", k);
        wsisa_image_free(got);
        got = by_groups(rgb, mask, &p, shared, &t);
        expect_same(want, got, "store", k);
        wsisa_image_free(got);
        if (again) cr_expect_eq(t.reused, t.groups, "case %d: a group missed the second time", k);
        else seps += t.separations_reused;
        groups += t.groups;
        got = by_groups(rgb, mask, &p, tiny, NULL);
        expect_same(want, got, "store evicting", k);
        wsisa_image_free(got);
      }
      wsisa_image_free(want);
    }
    wsisa_object_tally st;
    wsisa_object_store_tally(tiny, &st);
    cr_expect_leq(st.bytes_peak, 900);
    evictions += st.evictions;
    wsisa_object_store_free(shared);
    wsisa_object_store_free(tiny);
    wsisa_image_free(mask);
    wsisa_image_free(rgb);
  }
  cr_expect_gt(groups, 2000);
  cr_expect_gt(evictions, 1000);
  /* a later parameter set with the same watershed_conn reuses separations */
  cr_expect_gt(seps, 0);
}
