/* The objects group (labelling, area filter, distance transform, watershed):
 * kernels on hand-made cases, against golden files from scikit-image and
 * OpenCV (tests/golden/make_objects.py), and CPU worker against OpenCL worker. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/io.h"
#include "tests/testutil.h"

#define STARPU_TEST .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop

/* ---- helpers ----------------------------------------------------------- */

static wsisa_image *new_image(int w, int h, int channels, wsisa_dtype type) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, channels, type, &img, NULL), 0);
  return img;
}

static wsisa_image *golden(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "tests/golden/objects/%s", name);
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_read(tu_src(path), &img, NULL), 0, "cannot read %s", path);
  return img;
}

/* A mask from rows of text: '#' on, anything else off. */
static wsisa_image *mask_of(const char *const *rows, int h) {
  int w = (int)strlen(rows[0]);
  wsisa_image *m = new_image(w, h, 1, WSISA_U8);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) ((uint8_t *)wsisa_image_row(m, y))[x] = rows[y][x] == '#' ? 255 : 0;
  return m;
}

static int32_t i32_at(const wsisa_image *img, int x, int y) {
  return ((const int32_t *)wsisa_image_row(img, y))[x];
}
static float f32_at(const wsisa_image *img, int x, int y) {
  return ((const float *)wsisa_image_row(img, y))[x];
}
static uint8_t u8_at(const wsisa_image *img, int x, int y) {
  return ((const uint8_t *)wsisa_image_row(img, y))[x];
}

static float max_abs_diff(const wsisa_image *a, const wsisa_image *b) {
  float worst = 0;
  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width; x++) worst = fmaxf(worst, fabsf(f32_at(a, x, y) - f32_at(b, x, y)));
  return worst;
}

static void expect_i32(const wsisa_image *img, const int32_t *want) {
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      cr_expect_eq(i32_at(img, x, y), want[y * img->width + x], "at (%d, %d): %d, want %d",
                   x, y, i32_at(img, x, y), want[y * img->width + x]);
}

/* The tile, its nuclei mask and the RGB image as the golden script reads them. */
static wsisa_image *tile_rgb(void) {
  wsisa_image *tile = NULL;
  cr_assert_eq(wsisa_image_read(tu_src("tests/data/tile_256.png"), &tile, NULL), 0);
  return tile;
}

/* Deterministic noise (a 32-bit LCG), so failures reproduce. */
static uint32_t noise(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

/* on with probability percent / 100. */
static wsisa_image *noise_mask(int w, int h, int percent, uint32_t seed) {
  wsisa_image *m = new_image(w, h, 1, WSISA_U8);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      ((uint8_t *)wsisa_image_row(m, y))[x] = (int)(noise(&seed) % 100) < percent ? 255 : 0;
  return m;
}

/* ---- labelling ------------------------------------------------------------ */

static const char *const SHAPES[] = {
    "##..#.",
    "#..#..",
    "..#..#",
    "#....#",
};

Test(objects_label, both_connectivities_by_hand) {
  wsisa_image *m = mask_of(SHAPES, 4);
  wsisa_image *lab = new_image(6, 4, 1, WSISA_I32);
  cr_assert_eq(wsisa_cpu_label(m, 8, lab), 0);
  /* 8-conn: the diagonal chain from (4,0) to (2,2) is one component. */
  const int32_t want8[] = {1, 1, 0, 0, 2, 0, 1, 0, 0, 2, 0, 0,
                           0, 0, 2, 0, 0, 3, 4, 0, 0, 0, 0, 3};
  expect_i32(lab, want8);
  cr_assert_eq(wsisa_cpu_label(m, 4, lab), 0);
  const int32_t want4[] = {1, 1, 0, 0, 2, 0, 1, 0, 0, 3, 0, 0,
                           0, 0, 4, 0, 0, 5, 6, 0, 0, 0, 0, 5};
  expect_i32(lab, want4);
  cr_expect_eq(wsisa_cpu_label(m, 6, lab), WSISA_EINTERNAL);
  wsisa_image_free(m);
  wsisa_image_free(lab);
}

Test(objects_label, ids_follow_first_pixels_not_merge_order) {
  /* A U shape whose arms only meet on the last row, around a lone pixel:
   * the U keeps id 1 although its right arm starts after the lone pixel. */
  const char *const rows[] = {"#.#.#", "#...#", "#####"};
  wsisa_image *m = mask_of(rows, 3);
  wsisa_image *lab = new_image(5, 3, 1, WSISA_I32);
  cr_assert_eq(wsisa_cpu_label(m, 4, lab), 0);
  const int32_t want[] = {1, 0, 2, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  expect_i32(lab, want);
  wsisa_image_free(m);
  wsisa_image_free(lab);
}

Test(objects_label, empty_and_full_masks) {
  wsisa_image *m = new_image(37, 5, 1, WSISA_U8);
  wsisa_image *lab = new_image(37, 5, 1, WSISA_I32);
  cr_assert_eq(wsisa_cpu_label(m, 8, lab), 0);
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 37; x++) cr_expect_eq(i32_at(lab, x, y), 0);
  /* Any non-zero value is on, and long runs cross the 8-byte fast path. */
  for (int y = 0; y < 5; y++) memset(wsisa_image_row(m, y), 1, 37);
  cr_assert_eq(wsisa_cpu_label(m, 4, lab), 0);
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 37; x++) cr_expect_eq(i32_at(lab, x, y), 1);
  wsisa_image_free(m);
  wsisa_image_free(lab);
}

Test(objects_label, matches_scikit_image) {
  wsisa_image *mask = golden("mask.png");
  wsisa_image *lab = new_image(mask->width, mask->height, 1, WSISA_I32);
  const int conns[] = {4, 8};
  for (int i = 0; i < 2; i++) {
    char name[32];
    snprintf(name, sizeof name, "labels_%d.tif", conns[i]);
    wsisa_image *want = golden(name);
    cr_assert_eq(wsisa_cpu_label(mask, conns[i], lab), 0);
    cr_expect_eq(tu_image_diff(lab, want), 0, "conn %d", conns[i]);
    wsisa_image_free(want);
  }
  wsisa_image_free(mask);
  wsisa_image_free(lab);
}

/* ---- area filter ---------------------------------------------------------- */

Test(objects_area_filter, bounds_by_hand) {
  /* Areas, 8-conn: top-left blob 3, the diagonal chain 3, (5,2)+(5,3) 2,
   * (0,3) 1; 4-conn splits the chain into three single pixels. */
  wsisa_image *m = mask_of(SHAPES, 4);
  wsisa_image *out = new_image(6, 4, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_area_filter(m, 8, 2, 3, out), 0); /* upper bound excluded */
  const char *const want[] = {"......", "......", ".....#", ".....#"};
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 6; x++)
      cr_expect_eq(u8_at(out, x, y), want[y][x] == '#' ? 255 : 0, "at (%d, %d)", x, y);
  cr_assert_eq(wsisa_cpu_area_filter(m, 8, 3, 0, out), 0); /* no upper bound */
  cr_expect_eq(u8_at(out, 0, 0), 255);
  cr_expect_eq(u8_at(out, 2, 2), 255);
  cr_expect_eq(u8_at(out, 5, 2), 0);
  cr_expect_eq(u8_at(out, 0, 3), 0);
  cr_assert_eq(wsisa_cpu_area_filter(m, 4, 2, 0, out), 0);
  cr_expect_eq(u8_at(out, 4, 0), 0);
  cr_expect_eq(u8_at(out, 1, 0), 255);
  cr_expect_eq(u8_at(out, 5, 3), 255);
  wsisa_image_free(m);
  wsisa_image_free(out);
}

Test(objects_area_filter, matches_scikit_image) {
  wsisa_image *mask = golden("mask.png");
  wsisa_image *out = new_image(mask->width, mask->height, 1, WSISA_U8);
  const int cases[][3] = {{8, 11, 1000}, {4, 21, 1000}, {8, 30, 0}};
  for (int i = 0; i < 3; i++) {
    char name[48];
    snprintf(name, sizeof name, "area_%d_%d_%d.png", cases[i][0], cases[i][1], cases[i][2]);
    wsisa_image *want = golden(name);
    cr_assert_eq(wsisa_cpu_area_filter(mask, cases[i][0], cases[i][1], cases[i][2], out), 0);
    cr_expect_eq(tu_image_diff(out, want), 0, "%s", name);
    wsisa_image_free(want);
  }
  wsisa_image_free(mask);
  wsisa_image_free(out);
}

/* ---- distance transform --------------------------------------------------- */

Test(objects_edt, edges_and_extremes_as_opencv) {
  /* One off pixel in a corner: plain Euclidean distances; the image border is
   * not an off pixel (OpenCV's precise transform treats it the same way). */
  wsisa_image *m = new_image(5, 4, 1, WSISA_U8);
  wsisa_image *d = new_image(5, 4, 1, WSISA_F32);
  for (int y = 0; y < 4; y++) memset(wsisa_image_row(m, y), 255, 5);
  ((uint8_t *)wsisa_image_row(m, 3))[4] = 0;
  cr_assert_eq(wsisa_cpu_edt(m, d), 0);
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 5; x++)
      cr_expect_eq(f32_at(d, x, y), sqrtf((float)((4 - x) * (4 - x) + (3 - y) * (3 - y))),
                   "at (%d, %d)", x, y);
  /* No off pixel at all: OpenCV's "infinity", sqrt(1e15f). */
  ((uint8_t *)wsisa_image_row(m, 3))[4] = 255;
  cr_assert_eq(wsisa_cpu_edt(m, d), 0);
  cr_expect_eq(f32_at(d, 0, 0), WSISA_EDT_NONE);
  cr_expect_eq(f32_at(d, 4, 3), WSISA_EDT_NONE);
  /* All off: zeros. */
  for (int y = 0; y < 4; y++) memset(wsisa_image_row(m, y), 0, 5);
  cr_assert_eq(wsisa_cpu_edt(m, d), 0);
  cr_expect_eq(f32_at(d, 2, 2), 0.0f);
  wsisa_image_free(m);
  wsisa_image_free(d);
}

Test(objects_edt, columns_without_off_pixels) {
  /* Only column 0 holds off pixels: other columns reach it along rows. */
  const char *const rows[] = {".####", "#####", ".####"};
  wsisa_image *m = mask_of(rows, 3);
  wsisa_image *d = new_image(5, 3, 1, WSISA_F32);
  cr_assert_eq(wsisa_cpu_edt(m, d), 0);
  cr_expect_eq(f32_at(d, 0, 1), 1.0f);
  cr_expect_eq(f32_at(d, 4, 1), sqrtf(17.0f));
  cr_expect_eq(f32_at(d, 3, 0), 3.0f);
  wsisa_image_free(m);
  wsisa_image_free(d);
}

/* Largest |ours - OpenCV| over the tile; stated tolerance 1e-4 (measured: 0,
 * the squared distances are exact integers in both and sqrt is correctly
 * rounded). */
#define EDT_TOLERANCE 1e-4f

Test(objects_edt, matches_opencv_precise) {
  wsisa_image *mask = golden("mask.png");
  wsisa_image *want = golden("edt.tif");
  wsisa_image *d = new_image(mask->width, mask->height, 1, WSISA_F32);
  cr_assert_eq(wsisa_cpu_edt(mask, d), 0);
  float worst = max_abs_diff(d, want);
  cr_expect_leq(worst, EDT_TOLERANCE, "max |diff| %g", worst);
  wsisa_image_free(mask);
  wsisa_image_free(want);
  wsisa_image_free(d);
}

/* ---- watershed ------------------------------------------------------------ */

/* Pairs of 8-neighbours of the mask in two different regions (labels > 0):
 * the watershed leaves none. */
static size_t regions_touching(const wsisa_image *labels, const wsisa_image *mask) {
  size_t n = 0;
  static const int dx[4] = {1, -1, 0, 1}, dy[4] = {0, 1, 1, 1};
  for (int y = 0; y < labels->height; y++)
    for (int x = 0; x < labels->width; x++) {
      const int32_t a = i32_at(labels, x, y);
      if (a <= 0 || !u8_at(mask, x, y)) continue;
      for (int k = 0; k < 4; k++) {
        const int qx = x + dx[k], qy = y + dy[k];
        if (qx < 0 || qx >= labels->width || qy >= labels->height) continue;
        const int32_t b = i32_at(labels, qx, qy);
        n += b > 0 && b != a && u8_at(mask, qx, qy);
      }
    }
  return n;
}

/* One row of grey pixels (r = g = b = level), all on, markers given. */
static void watershed_row(const int *grey, const int32_t *markers, int n, int32_t *labels) {
  wsisa_image *rgb = new_image(n, 1, 3, WSISA_U8);
  wsisa_image *mk = new_image(n, 1, 1, WSISA_I32);
  wsisa_image *mask = new_image(n, 1, 1, WSISA_U8);
  wsisa_image *lab = new_image(n, 1, 1, WSISA_I32);
  wsisa_image *out = new_image(n, 1, 1, WSISA_U8);
  for (int x = 0; x < n; x++) {
    memset((uint8_t *)rgb->data + 3 * x, grey[x], 3);
    ((int32_t *)mk->data)[x] = markers[x];
    ((uint8_t *)mask->data)[x] = 255;
  }
  cr_assert_eq(wsisa_cpu_watershed(rgb, mk, mask, lab, out), 0);
  for (int x = 0; x < n; x++) {
    labels[x] = ((int32_t *)lab->data)[x];
    cr_expect_eq(((uint8_t *)out->data)[x], labels[x] > 0 ? 255 : 0);
  }
  wsisa_image *all[] = {rgb, mk, mask, lab, out};
  for (int i = 0; i < 5; i++) wsisa_image_free(all[i]);
}

Test(objects_watershed, ties_in_a_row) {
  int flat[6] = {0};
  int32_t got[6];
  /* Odd gap: both fronts reach the middle pixel in the same wave. */
  const int32_t odd[5] = {1, 0, 0, 0, 2};
  watershed_row(flat, odd, 5, got);
  const int32_t odd_want[5] = {1, 1, -1, 2, 2};
  for (int x = 0; x < 5; x++) cr_expect_eq(got[x], odd_want[x], "odd gap at %d", x);
  /* Even gap: the fronts meet between two pixels in one wave; the right one
   * (later in raster order) becomes the line. */
  const int32_t even[6] = {1, 0, 0, 0, 0, 2};
  watershed_row(flat, even, 6, got);
  const int32_t even_want[6] = {1, 1, 1, -1, 2, 2};
  for (int x = 0; x < 6; x++) cr_expect_eq(got[x], even_want[x], "even gap at %d", x);
}

Test(objects_watershed, relief_orders_the_flood) {
  /* Marker 2 sits behind a step of 50: marker 1 floods the flat part at level
   * 0 and the pixel touching marker 2 becomes the line. */
  const int grey[5] = {0, 0, 0, 0, 50};
  const int32_t markers[5] = {1, 0, 0, 0, 2};
  int32_t got[5];
  watershed_row(grey, markers, 5, got);
  const int32_t want[5] = {1, 1, 1, -1, 2};
  for (int x = 0; x < 5; x++) cr_expect_eq(got[x], want[x], "at %d", x);
  /* No marker: nothing is reached, nothing is a line, and no pixel is in a
   * region to stay in the mask. */
  const int32_t none[5] = {0};
  watershed_row(grey, none, 5, got);
  for (int x = 0; x < 5; x++) cr_expect_eq(got[x], 0);
}

Test(objects_watershed, diagonal_meeting_and_masked_pixels) {
  wsisa_image *rgb = new_image(3, 3, 3, WSISA_U8);
  wsisa_image *mk = new_image(3, 3, 1, WSISA_I32);
  wsisa_image *mask = new_image(3, 3, 1, WSISA_U8);
  wsisa_image *lab = new_image(3, 3, 1, WSISA_I32);
  wsisa_image *out = new_image(3, 3, 1, WSISA_U8);
  /* Bright pixels everywhere, but the mask is off on the top row: it reads
   * black, so marker 1 (top-left) runs along it at level 0 while the step of
   * 200 down to the bright rows lets marker 2 take them. */
  for (int y = 0; y < 3; y++) memset(wsisa_image_row(rgb, y), 200, 9);
  for (int y = 1; y < 3; y++) memset(wsisa_image_row(mask, y), 255, 3);
  ((int32_t *)wsisa_image_row(mk, 0))[0] = 1;
  ((int32_t *)wsisa_image_row(mk, 2))[2] = 2;
  cr_assert_eq(wsisa_cpu_watershed(rgb, mk, mask, lab, out), 0);
  const int32_t want[] = {1, 1, -1, -1, -1, 2, 2, 2, 2};
  expect_i32(lab, want);
  const char *const out_want[] = {"...", "..#", "###"}; /* mask off, lines */
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      cr_expect_eq(u8_at(out, x, y), out_want[y][x] == '#' ? 255 : 0, "at (%d, %d)", x, y);
  /* Uniform and all on: the fronts of opposite corners meet on the
   * anti-diagonal in one wave, where the later pixels in raster order, (2, 1)
   * and (1, 2), become lines for their upper-left neighbours; then the centre
   * meets 2 at a corner. No two regions touch, not even at a corner. */
  for (int y = 0; y < 3; y++) memset(wsisa_image_row(mask, y), 255, 3);
  cr_assert_eq(wsisa_cpu_watershed(rgb, mk, mask, lab, out), 0);
  const int32_t diagonal[] = {1, 1, 1, 1, -1, -1, 1, -1, 2};
  expect_i32(lab, diagonal);
  wsisa_image *all[] = {rgb, mk, mask, lab, out};
  for (int i = 0; i < 5; i++) wsisa_image_free(all[i]);
}

/* cv2.watershed breaks ties by queue order, ours by the rule, and its lines
 * let regions touch at corners, ours do not: they differ on purpose. Measured
 * on the golden tile (cv2 padded by one pixel so its frame of lines falls
 * outside): equal labels 0.9894 (0.9602 inside the mask), Dice of mask_out
 * against the mask without cv2's lines 0.9767 (with 4-neighbour lines only,
 * as cv2's: 0.9963, 0.9860, 0.9946). */
#define WATERSHED_MIN_EQUAL 0.985
#define WATERSHED_MIN_DICE 0.97

Test(objects_watershed, agrees_with_opencv) {
  wsisa_image *rgb = tile_rgb();
  wsisa_image *mask = golden("mask.png");
  wsisa_image *markers = golden("markers.tif");
  wsisa_image *want = golden("watershed_labels.tif");
  wsisa_image *want_mask = golden("watershed_mask.png");
  wsisa_image *lab = new_image(rgb->width, rgb->height, 1, WSISA_I32);
  wsisa_image *out = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_watershed(rgb, markers, mask, lab, out), 0);
  size_t equal = 0, equal_on = 0, on = 0, both = 0, ours = 0, theirs = 0;
  const size_t n = (size_t)rgb->width * rgb->height;
  for (int y = 0; y < rgb->height; y++)
    for (int x = 0; x < rgb->width; x++) {
      const int same = i32_at(lab, x, y) == i32_at(want, x, y);
      equal += same;
      on += u8_at(mask, x, y) != 0;
      equal_on += same && u8_at(mask, x, y);
      ours += u8_at(out, x, y) != 0;
      theirs += u8_at(want_mask, x, y) != 0;
      both += u8_at(out, x, y) && u8_at(want_mask, x, y);
    }
  double fraction = (double)equal / (double)n, dice = 2.0 * (double)both / (double)(ours + theirs);
  cr_log_info("watershed vs cv2: equal labels %.4f (%.4f inside the mask), mask Dice %.4f",
              fraction, (double)equal_on / (double)on, dice);
  cr_expect_geq(fraction, WATERSHED_MIN_EQUAL, "equal labels %.4f", fraction);
  cr_expect_geq(dice, WATERSHED_MIN_DICE, "mask Dice %.4f", dice);
  cr_expect_eq(regions_touching(lab, mask), 0);
  cr_expect_gt(regions_touching(want, mask), 0, "cv2's regions touch at corners");
  wsisa_image *all[] = {rgb, mask, markers, want, want_mask, lab, out};
  for (int i = 0; i < 7; i++) wsisa_image_free(all[i]);
}

/* ---- codelets: CPU worker against OpenCL worker ------------------------------ */

struct op_call {
  int conn, min_area, max_area;
};

static int submit_label(starpu_data_handle_t *h, void *arg) {
  return wsisa_submit_label(h[0], h[1], ((struct op_call *)arg)->conn);
}
static int submit_area_filter(starpu_data_handle_t *h, void *arg) {
  const struct op_call *c = arg;
  return wsisa_submit_area_filter(h[0], h[1], c->conn, c->min_area, c->max_area);
}
static int submit_edt(starpu_data_handle_t *h, void *arg) {
  (void)arg;
  return wsisa_submit_edt(h[0], h[1]);
}
static int submit_watershed(starpu_data_handle_t *h, void *arg) {
  (void)arg;
  return wsisa_submit_watershed(h[0], h[1], h[2], h[3], h[4]);
}

/* Run on one worker kind; outputs (the last nout images) are allocated here
 * with the given types, like the first input's shape. */
static void run_on(uint32_t where, wsisa_image **imgs, int nin, int nout,
                   const wsisa_dtype *types, tu_submit_fn submit, void *arg) {
  for (int i = 0; i < nout; i++)
    imgs[nin + i] = new_image(imgs[0]->width, imgs[0]->height, 1, types[i]);
  cr_assert_eq(tu_run_op(where, imgs, nin + nout, submit, arg), 0);
}

/* Both workers, outputs compared byte for byte; returns the CPU outputs. */
static void both_workers(wsisa_image **inputs, int nin, int nout, const wsisa_dtype *types,
                         tu_submit_fn submit, void *arg, const char *what,
                         wsisa_image **cpu_out) {
  wsisa_image *cpu[8], *cl[8];
  for (int i = 0; i < nin; i++) cpu[i] = cl[i] = inputs[i];
  run_on(STARPU_CPU, cpu, nin, nout, types, submit, arg);
  run_on(STARPU_OPENCL, cl, nin, nout, types, submit, arg);
  for (int i = 0; i < nout; i++) {
    cr_expect_eq(tu_image_diff(cpu[nin + i], cl[nin + i]), 0, "%s: output %d differs", what, i);
    wsisa_image_free(cl[nin + i]);
    if (cpu_out) cpu_out[i] = cpu[nin + i];
    else wsisa_image_free(cpu[nin + i]);
  }
}

/* Lines one pixel wide along both diagonals, through many of the OpenCL
 * labelling's 32 x 32 blocks: 8-connected, they cross the blocks' borders
 * only diagonally, up-left and up-right. */
static wsisa_image *diagonals(int width, int height) {
  wsisa_image *img = new_image(width, height, 1, WSISA_U8);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      ((uint8_t *)wsisa_image_row(img, y))[x] = (x + y) % 9 == 0 || (x + 2 * height - y) % 13 == 0 ? 255 : 0;
  return img;
}

Test(objects_codelets, label_and_area_filter_agree, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *masks[] = {golden("mask.png"), mask_of(SHAPES, 4),
                          noise_mask(61, 47, 55, 7), new_image(19, 7, 1, WSISA_U8),
                          diagonals(150, 90), new_image(100, 70, 1, WSISA_U8)};
  const wsisa_dtype i32 = WSISA_I32, u8 = WSISA_U8;
  for (int m = 0; m < 5; m++) {
    for (int conn = 4; conn <= 8; conn += 4) {
      struct op_call call = {conn, 11, 1000};
      wsisa_image *got[1];
      both_workers(&masks[m], 1, 1, &i32, submit_label, &call, "label", got);
      if (m == 0) {
        char name[32];
        snprintf(name, sizeof name, "labels_%d.tif", conn);
        wsisa_image *want = golden(name);
        cr_expect_eq(tu_image_diff(got[0], want), 0, "label codelet vs golden, conn %d", conn);
        wsisa_image_free(want);
      }
      wsisa_image_free(got[0]);
      both_workers(&masks[m], 1, 1, &u8, submit_area_filter, &call, "area_filter", NULL);
      call.max_area = 0;
      call.min_area = 2;
      both_workers(&masks[m], 1, 1, &u8, submit_area_filter, &call, "area_filter", NULL);
    }
  }
  /* A full mask after the empty one; one across blocks. */
  for (int y = 0; y < 7; y++) memset(wsisa_image_row(masks[3], y), 255, 19);
  for (int y = 0; y < 70; y++) memset(wsisa_image_row(masks[5], y), 255, 100);
  struct op_call call = {8, 1, 0};
  both_workers(&masks[3], 1, 1, &i32, submit_label, &call, "label full", NULL);
  both_workers(&masks[5], 1, 1, &i32, submit_label, &call, "label full, blocks", NULL);
  for (int m = 0; m < 6; m++) wsisa_image_free(masks[m]);
}

Test(objects_codelets, edt_agrees, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  const char *const rows[] = {".####", "#####", ".####"};
  wsisa_image *masks[] = {golden("mask.png"), mask_of(rows, 3), new_image(9, 4, 1, WSISA_U8),
                          new_image(101, 23, 1, WSISA_U8)};
  for (int y = 0; y < 4; y++) memset(wsisa_image_row(masks[2], y), 255, 9);
  /* Runs touching both image borders, rows with no off pixel, long runs: the
   * CPU kernel takes each run's envelope over its reach only. */
  for (int y = 0; y < 23; y++)
    for (int x = 0; x < 101; x++)
      ((uint8_t *)wsisa_image_row(masks[3], y))[x] =
          (y % 7 == 3 && x % 37 == 5) || (y == 20 && x > 60) ? 0 : 255;
  const wsisa_dtype f32 = WSISA_F32;
  for (int m = 0; m < 4; m++) {
    wsisa_image *got[1];
    both_workers(&masks[m], 1, 1, &f32, submit_edt, NULL, "edt", got);
    if (m == 0) {
      wsisa_image *want = golden("edt.tif");
      cr_expect_leq(max_abs_diff(got[0], want), EDT_TOLERANCE);
      wsisa_image_free(want);
    }
    if (m == 2) cr_expect_eq(f32_at(got[0], 8, 3), WSISA_EDT_NONE);
    wsisa_image_free(got[0]);
    wsisa_image_free(masks[m]);
  }
}

Test(objects_codelets, watershed_agrees, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *in[] = {tile_rgb(), golden("markers.tif"), golden("mask.png")};
  const wsisa_dtype types[] = {WSISA_I32, WSISA_U8};
  wsisa_image *got[2];
  both_workers(in, 3, 2, types, submit_watershed, NULL, "watershed", got);
  /* The same result as the kernel alone. */
  wsisa_image *lab = new_image(in[0]->width, in[0]->height, 1, WSISA_I32);
  wsisa_image *out = new_image(in[0]->width, in[0]->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_watershed(in[0], in[1], in[2], lab, out), 0);
  cr_expect_eq(tu_image_diff(got[0], lab), 0);
  cr_expect_eq(tu_image_diff(got[1], out), 0);
  cr_expect_eq(regions_touching(got[0], in[2]), 0);
  wsisa_image *all[] = {in[0], in[1], in[2], got[0], got[1], lab, out};
  for (int i = 0; i < 7; i++) wsisa_image_free(all[i]);
}

/* A line drawn by a same-wave meeting at the end of one level must read as a
 * line when the pixel below it is decided at a later level. Rows of grey 0,
 * 100, 150; markers 1 and 2 on the top row, 3 on the bottom row. The mask is
 * off on the top row's pixels at (1, 0) and (3, 0) (black reads as their grey
 * 0), so their regions do not meet the pixel below the line at a corner. */
static void watershed_level_change(wsisa_image **in) {
  const int grey[3] = {0, 100, 150};
  const int32_t markers[3][4] = {{1, 0, 0, 2}, {0, 0, 0, 0}, {3, 3, 3, 3}};
  for (int y = 0; y < 3; y++) {
    memset(wsisa_image_row(in[0], y), grey[y], 12);
    memcpy(wsisa_image_row(in[1], y), markers[y], sizeof markers[y]);
    memset(wsisa_image_row(in[2], y), 255, 4);
  }
  ((uint8_t *)wsisa_image_row(in[2], 0))[1] = ((uint8_t *)wsisa_image_row(in[2], 0))[3] = 0;
}

Test(objects_codelets, watershed_agrees_on_ties, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *small[] = {new_image(4, 3, 3, WSISA_U8), new_image(4, 3, 1, WSISA_I32),
                          new_image(4, 3, 1, WSISA_U8)};
  watershed_level_change(small);
  const wsisa_dtype small_types[] = {WSISA_I32, WSISA_U8};
  wsisa_image *small_got[2];
  both_workers(small, 3, 2, small_types, submit_watershed, NULL, "watershed levels", small_got);
  const int32_t want[] = {1, 1, -1, 2, -1, -1, 3, -1, 3, 3, 3, 3};
  expect_i32(small_got[0], want);
  wsisa_image *small_all[] = {small[0], small[1], small[2], small_got[0], small_got[1]};
  for (int i = 0; i < 5; i++) wsisa_image_free(small_all[i]);
  /* Few grey levels or many, scattered markers, a noisy mask: ties
   * everywhere (where processing order would show), lines met at level
   * changes. */
  const int w = 67, h = 53, greys[] = {3, 9, 40};
  for (int run = 0; run < 3; run++) {
    uint32_t seed = 11 + (uint32_t)run;
    wsisa_image *in[] = {new_image(w, h, 3, WSISA_U8), new_image(w, h, 1, WSISA_I32),
                         noise_mask(w, h, 80, 5 + (uint32_t)run)};
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        uint8_t *px = (uint8_t *)wsisa_image_row(in[0], y) + 3 * x;
        for (int c = 0; c < 3; c++) px[c] = (uint8_t)(noise(&seed) % (uint32_t)greys[run] * 250 / greys[run]);
        if (noise(&seed) % 40 == 0)
          ((int32_t *)wsisa_image_row(in[1], y))[x] = 1 + (int32_t)(noise(&seed) % 9);
      }
    const wsisa_dtype types[] = {WSISA_I32, WSISA_U8};
    wsisa_image *got[2];
    both_workers(in, 3, 2, types, submit_watershed, NULL, "watershed ties", got);
    size_t lines = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) lines += i32_at(got[0], x, y) == -1;
    cr_expect_gt(lines, 0, "regions met somewhere");
    cr_expect_eq(regions_touching(got[0], in[2]), 0, "run %d: regions touch", run);
    wsisa_image *all[] = {in[0], in[1], in[2], got[0], got[1]};
    for (int i = 0; i < 5; i++) wsisa_image_free(all[i]);
  }
}

/* The CPU kernel floods the unknown pixels part by part, a part being the
 * unknown pixels 8-connected to one another; one past 2^20 pixels ends the
 * search for parts and everything left floods as one. Here the mask is full
 * and a wall of markers cuts the tile in two parts: the first one is that
 * large, the second one is left for the flood of the rest. */
Test(objects_codelets, watershed_agrees_on_a_part_spanning_the_tile, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  const int w = 1100, h = 1041, wall = 1000;
  wsisa_image *in[] = {new_image(w, h, 3, WSISA_U8), new_image(w, h, 1, WSISA_I32),
                       new_image(w, h, 1, WSISA_U8)};
  uint32_t seed = 29;
  for (int y = 0; y < h; y++) {
    memset(wsisa_image_row(in[2], y), 255, (size_t)w);
    for (int x = 0; x < w; x++) {
      uint8_t *px = (uint8_t *)wsisa_image_row(in[0], y) + 3 * x;
      for (int c = 0; c < 3; c++) px[c] = (uint8_t)((x / 7 + y / 5 + noise(&seed) % 3) % 12 * 20);
      int32_t *m = (int32_t *)wsisa_image_row(in[1], y) + x;
      if (y == wall) *m = 40;
      else if (noise(&seed) % 20000 == 0) *m = 1 + (int32_t)(noise(&seed) % 39);
    }
  }
  const wsisa_dtype types[] = {WSISA_I32, WSISA_U8};
  wsisa_image *got[2];
  both_workers(in, 3, 2, types, submit_watershed, NULL, "watershed, one large part", got);
  int64_t lines = 0, below = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      lines += i32_at(got[0], x, y) == -1;
      below += y > wall && i32_at(got[0], x, y) > 0;
    }
  cr_expect_gt(lines, 0, "regions met somewhere");
  cr_expect_gt(below, 0, "the part below the wall was flooded");
  cr_expect_eq(regions_touching(got[0], in[2]), 0, "regions touch");
  wsisa_image *all[] = {in[0], in[1], in[2], got[0], got[1]};
  for (int i = 0; i < 5; i++) wsisa_image_free(all[i]);
}

/* Plateaus: flat colour everywhere, so every front reaches its neighbours at
 * level 0 and ties decide everything. A grid of marker walls cuts the tile
 * into more parts than the OpenCL flood has work-groups (each takes several),
 * cells of odd and even sides (fronts meet on a pixel, or between two taken
 * in the same wave), the walls' labels changing from cell to cell; a tile with no marker (one
 * part no wave reaches); one with markers only (no part); one with two
 * markers in opposite corners and a noisy mask. */
Test(objects_codelets, watershed_agrees_on_plateaus, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  const int w = 307, h = 211;
  for (int kind = 0; kind < 4; kind++) {
    wsisa_image *in[] = {new_image(w, h, 3, WSISA_U8), new_image(w, h, 1, WSISA_I32),
                         kind == 3 ? noise_mask(w, h, 70, 41) : new_image(w, h, 1, WSISA_U8)};
    for (int y = 0; y < h; y++) {
      memset(wsisa_image_row(in[0], y), 128, 3 * (size_t)w);
      if (kind != 3) memset(wsisa_image_row(in[2], y), 255, (size_t)w);
      int32_t *m = wsisa_image_row(in[1], y);
      for (int x = 0; x < w; x++) {
        if (kind == 0 && (x % 7 == 0 || x % 9 == 0 || y % 6 == 0 || y % 8 == 0))
          m[x] = 1 + (x / 7 + y / 6 * 7) % 5;
        if (kind == 2) m[x] = 1 + (x + y) % 3;
      }
    }
    if (kind == 3) {
      ((int32_t *)wsisa_image_row(in[1], 0))[0] = 1;
      ((int32_t *)wsisa_image_row(in[1], h - 1))[w - 1] = 2;
    }
    const wsisa_dtype types[] = {WSISA_I32, WSISA_U8};
    wsisa_image *got[2];
    both_workers(in, 3, 2, types, submit_watershed, NULL, "watershed plateau", got);
    size_t lines = 0, unreached = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        lines += i32_at(got[0], x, y) == -1;
        unreached += i32_at(got[0], x, y) == 0;
      }
    if (kind == 0 || kind == 3) cr_expect_gt(lines, 0, "kind %d: regions met somewhere", kind);
    if (kind == 1) cr_expect_eq(unreached, (size_t)w * h, "no marker, nothing reached");
    cr_expect_eq(regions_touching(got[0], in[2]), 0, "kind %d: regions touch", kind);
    wsisa_image *all[] = {in[0], in[1], in[2], got[0], got[1]};
    for (int i = 0; i < 5; i++) wsisa_image_free(all[i]);
  }
}

/* Two nuclei of one colour on black, each with its marker at its centre and
 * the background one more marker: discs of radius r centred (cx0, cy0) and
 * (cx1, cy1) in a w x h image. */
static void two_discs(wsisa_image **in, int cx0, int cy0, int cx1, int cy1, int r) {
  const int centre[2][2] = {{cx0, cy0}, {cx1, cy1}};
  for (int y = 0; y < in[0]->height; y++)
    for (int x = 0; x < in[0]->width; x++) {
      int disc = 0;
      for (int k = 0; k < 2; k++) {
        const int ddx = x - centre[k][0], ddy = y - centre[k][1];
        if (ddx * ddx + ddy * ddy <= r * r) disc = k + 1;
      }
      memset((uint8_t *)wsisa_image_row(in[0], y) + 3 * x, disc ? 120 : 0, 3);
      ((uint8_t *)wsisa_image_row(in[2], y))[x] = disc ? 255 : 0;
      ((int32_t *)wsisa_image_row(in[1], y))[x] = disc ? 0 : 3;
    }
  for (int k = 0; k < 2; k++)
    ((int32_t *)wsisa_image_row(in[1], centre[k][1]))[centre[k][0]] = k + 1;
}

static uint64_t object_count(const wsisa_image *mask, int conn) {
  wsisa_image *labels = new_image(mask->width, mask->height, 1, WSISA_I32);
  uint64_t n = 0;
  cr_assert_eq(wsisa_cpu_label(mask, conn, labels), 0);
  cr_assert_eq(wsisa_cpu_count_labels(labels, &n), 0);
  wsisa_image_free(labels);
  return n;
}

/* Touching discs stay two objects under either connectivity, on both
 * workers: overlapping ones, and ones whose masks meet only at a corner
 * (radius 5, centres (8, 8) apart, or (10, 4): one pixel of each disc touches
 * one of the other diagonally, nothing else), down to the right and down to
 * the left. */
Test(objects_codelets, touching_discs_stay_apart, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  const int cases[4][5] = {
      {9, 9, 17, 10, 6}, {7, 7, 15, 15, 5}, {15, 7, 7, 15, 5}, {6, 12, 16, 8, 5}};
  for (int c = 0; c < 4; c++) {
    wsisa_image *in[] = {new_image(26, 24, 3, WSISA_U8), new_image(26, 24, 1, WSISA_I32),
                         new_image(26, 24, 1, WSISA_U8)};
    two_discs(in, cases[c][0], cases[c][1], cases[c][2], cases[c][3], cases[c][4]);
    cr_assert_eq(object_count(in[2], 8), 1, "case %d: the discs' masks touch", c);
    if (c > 0) cr_assert_eq(object_count(in[2], 4), 2, "case %d: at a corner only", c);
    const wsisa_dtype types[] = {WSISA_I32, WSISA_U8};
    wsisa_image *got[2];
    both_workers(in, 3, 2, types, submit_watershed, NULL, "touching discs", got);
    cr_expect_eq(regions_touching(got[0], in[2]), 0, "case %d", c);
    cr_expect_eq(object_count(got[1], 4), 2, "case %d: 4-connected objects", c);
    cr_expect_eq(object_count(got[1], 8), 2, "case %d: 8-connected objects", c);
    wsisa_image *all[] = {in[0], in[1], in[2], got[0], got[1]};
    for (int i = 0; i < 5; i++) wsisa_image_free(all[i]);
  }
}

Test(objects_codelets, connectivity_must_be_4_or_8) {
  cr_expect_eq(wsisa_submit_label(NULL, NULL, 6), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_area_filter(NULL, NULL, 0, 1, 0), WSISA_EUSAGE);
}

/* ---- ownership: the objects whose centroid lies in a tile's core --------------- */

struct own_call {
  int x0, y0, x1, y1;
};

static int submit_own(starpu_data_handle_t *h, void *arg) {
  const struct own_call *c = arg;
  return wsisa_submit_own_objects(h[0], h[1], c->x0, c->y0, c->x1, c->y1);
}

/* Cores that tile the image share out every object once: the centroid of
 * "##" at x = 2, 3 is 2.5, the left core [0, 3) keeps it; the centroid of
 * "###" at x = 5..7 is exactly 6, the right core [6, 9) keeps it. */
Test(objects_own, every_object_to_exactly_one_core) {
  static const char *const rows[] = {
      "..##.###.",
      "#........",
      "#...####.",
      "....####.",
  };
  wsisa_image *mask = mask_of(rows, 4), *labels = new_image(9, 4, 1, WSISA_I32);
  wsisa_image *left = new_image(9, 4, 1, WSISA_U8), *right = new_image(9, 4, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_label(mask, 4, labels), 0);
  cr_assert_eq(wsisa_cpu_own_objects(labels, 0, 0, 3, 4, left), 0);
  cr_assert_eq(wsisa_cpu_own_objects(labels, 3, 0, 9, 4, right), 0);
  static const char *const want_left[] = {
      "..##.....",
      "#........",
      "#........",
      ".........",
  };
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 9; x++) {
      int on = rows[y][x] == '#', l = u8_at(left, x, y) != 0, r = u8_at(right, x, y) != 0;
      cr_expect_eq(l + r, on, "pixel (%d, %d): kept %d times", x, y, l + r);
      cr_expect_eq(l, want_left[y][x] == '#', "pixel (%d, %d) left", x, y);
    }
  /* the split at x = 6 */
  cr_assert_eq(wsisa_cpu_own_objects(labels, 0, 0, 6, 4, left), 0);
  cr_expect_eq(u8_at(left, 5, 0), 0, "centroid 6 is not left of 6");
  cr_expect_neq(u8_at(left, 4, 2), 0, "the 4x2 block's centroid is 5.5");
  wsisa_image_free(mask);
  wsisa_image_free(labels);
  wsisa_image_free(left);
  wsisa_image_free(right);
}

Test(objects_own, workers_agree, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *mask = noise_mask(97, 83, 45, 11), *labels = new_image(97, 83, 1, WSISA_I32);
  cr_assert_eq(wsisa_cpu_label(mask, 4, labels), 0);
  const wsisa_dtype u8 = WSISA_U8;
  struct own_call cores[] = {{10, 7, 60, 50}, {0, 0, 97, 83}, {40, 40, 40, 40}};
  for (size_t i = 0; i < sizeof cores / sizeof *cores; i++)
    both_workers(&labels, 1, 1, &u8, submit_own, &cores[i], "own_objects", NULL);
  wsisa_image_free(mask);
  wsisa_image_free(labels);
}

/* One object over a 3000 x 1500 image, a second in its top-left corner: the
 * first one's sum of x is 1500 x (0 + ... + 2999) = 6,747,750,000, beyond 32
 * bits (the OpenCL kernel carries it into an upper word). Its centroid,
 * x = 1499.5, lies in [1499, 1500) alone; the second one's, (3, 2), in [0, 1499) and
 * [0, 7) x [0, 5). */
Test(objects_own, wide_sums_agree, STARPU_TEST) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  const int w = 3000, h = 1500;
  wsisa_image *labels = new_image(w, h, 1, WSISA_I32), *kept = NULL;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) ((int32_t *)wsisa_image_row(labels, y))[x] = 1 + (x < 7 && y < 5);
  const wsisa_dtype u8 = WSISA_U8;
  struct own_call cores[] = {{1499, 0, 1500, h}, {0, 0, 1499, h}, {1500, 0, w, h}, {0, 0, 7, 5}};
  for (size_t i = 0; i < sizeof cores / sizeof *cores; i++) {
    both_workers(&labels, 1, 1, &u8, submit_own, &cores[i], "own_objects", &kept);
    cr_expect_eq(u8_at(kept, 2000, 100) != 0, i == 0, "core %zu: the large object", i);
    cr_expect_eq(u8_at(kept, 3, 2) != 0, i == 1 || i == 3, "core %zu: the small object", i);
    wsisa_image_free(kept);
  }
  wsisa_image_free(labels);
}
