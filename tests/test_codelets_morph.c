/* The morphology group (erode/dilate/open/close, grey and binary
 * reconstruction, fill holes, h-minima, regional minima): kernels on tiny
 * images with hand-known answers, CPU kernels against golden files from
 * OpenCV / scikit-image / SciPy (tests/golden/make_morph.py), and each codelet
 * on the CPU worker against the OpenCL worker. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "codelets/cpu/morph_private.h"
#include "io/io.h"
#include "tests/testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

static wsisa_image *golden(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/golden/morph/%s", name);
  wsisa_image *img = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_read(tu_src(rel), &img, &e), 0, "%s", e.msg);
  return img;
}

/* Expect `got` to equal the golden file named by fmt; frees nothing. */
static void expect_golden(const wsisa_image *got, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void expect_golden(const wsisa_image *got, const char *fmt, ...) {
  char file[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(file, sizeof file, fmt, ap);
  va_end(ap);
  wsisa_image *want = golden(file);
  cr_expect_eq(tu_image_diff(got, want), 0, "%s", file);
  wsisa_image_free(want);
}

static wsisa_image *blank(const wsisa_image *like, wsisa_dtype type) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(like->width, like->height, 1, type, &img, NULL), 0);
  return img;
}

/* A small u8 image from a row-major literal. */
static wsisa_image *u8_image(int width, int height, const uint8_t *px) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(width, height, 1, WSISA_U8, &img, NULL), 0);
  for (int y = 0; y < height; y++)
    memcpy(wsisa_image_row(img, y), px + y * width, (size_t)width);
  return img;
}

static wsisa_image *f32_image(int width, int height, const float *px) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(width, height, 1, WSISA_F32, &img, NULL), 0);
  for (int y = 0; y < height; y++)
    memcpy(wsisa_image_row(img, y), px + y * width, (size_t)width * sizeof *px);
  return img;
}

static void expect_u8(const wsisa_image *img, const uint8_t *want, const char *what) {
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      cr_expect_eq(((uint8_t *)wsisa_image_row(img, y))[x], want[y * img->width + x],
                   "%s: pixel (%d,%d)", what, x, y);
}

static void expect_f32(const wsisa_image *img, const float *want, const char *what) {
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      cr_expect_eq(((float *)wsisa_image_row(img, y))[x], want[y * img->width + x],
                   "%s: pixel (%d,%d)", what, x, y);
}

static void free_all(wsisa_image **imgs, int n) {
  for (int i = 0; i < n; i++) wsisa_image_free(imgs[i]);
}

/* ---- shared helpers ---------------------------------------------------------- */

Test(morph_kernel, fifo_keeps_order_across_growth_and_wrap) {
  wsisa__fifo q;
  cr_assert_eq(wsisa__fifo_init(&q), 0);
  uint32_t next_in = 0, next_out = 0;
  /* Pop one for every three pushed: the ring wraps before each doubling. */
  for (int i = 0; i < 30000; i++) {
    cr_assert_eq(wsisa__fifo_push(&q, next_in++), 0);
    if (i % 3 == 0) cr_assert_eq(wsisa__fifo_pop(&q), next_out++);
  }
  cr_expect_gt(q.cap, 4096);
  while (q.count) cr_assert_eq(wsisa__fifo_pop(&q), next_out++);
  cr_expect_eq(next_out, next_in);
  wsisa__fifo_free(&q);
}

Test(morph_kernel, fill_holes_checkerboard_many_spans) {
  /* Background of a checkerboard only touches itself diagonally: conn 8
   * reaches all of it from the border, conn 4 only the border pixels. */
  enum { N = 301 };
  wsisa_image *m = NULL, *out = NULL;
  cr_assert_eq(wsisa_image_new(N, N, 1, WSISA_U8, &m, NULL), 0);
  out = blank(m, WSISA_U8);
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) ((uint8_t *)wsisa_image_row(m, y))[x] = (x + y) % 2 ? 255 : 0;
  cr_assert_eq(wsisa_cpu_fill_holes(m, 8, out), 0);
  cr_expect_eq(tu_image_diff(out, m), 0);
  cr_assert_eq(wsisa_cpu_fill_holes(m, 4, out), 0);
  size_t wrong = 0;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      int border = x == 0 || y == 0 || x == N - 1 || y == N - 1;
      uint8_t want = (x + y) % 2 || !border ? 255 : 0;
      wrong += ((uint8_t *)wsisa_image_row(out, y))[x] != want;
    }
  cr_expect_eq(wrong, 0);
  wsisa_image_free(m);
  wsisa_image_free(out);
}

/* ---- the structuring element -------------------------------------------------- */

Test(morph_kernel, ellipse_is_opencv_for_sizes_3_to_41) {
  wsisa_image *stack = golden("se_ellipse_3_41.png");
  int top = 0;
  for (int size = 3; size <= 41; size += 2) {
    int half[WSISA_CPU_SE_MAX];
    wsisa_cpu_ellipse_rows(size, half);
    for (int i = 0; i < size; i++) {
      const uint8_t *row = wsisa_image_row(stack, top + i);
      for (int x = 0; x < stack->width; x++) {
        int inside = x < size && abs(x - size / 2) <= half[i];
        cr_expect_eq(row[x] != 0, inside, "size %d row %d column %d", size, i, x);
      }
    }
    top += size;
  }
  cr_expect_eq(top, stack->height);
  wsisa_image_free(stack);
}

Test(morph_kernel, small_ellipses_by_hand) {
  int half[5];
  wsisa_cpu_ellipse_rows(3, half); /* OpenCV's 3x3 ellipse is the cross */
  cr_expect(half[0] == 0 && half[1] == 1 && half[2] == 0);
  wsisa_cpu_ellipse_rows(5, half);
  cr_expect(half[0] == 0 && half[1] == 2 && half[2] == 2 && half[3] == 2 && half[4] == 0);
}

/* ---- erosion, dilation, opening, closing -------------------------------------- */

Test(morph_kernel, dilate_point_is_the_element_clipped_at_edges) {
  uint8_t px[5 * 4] = {0};
  px[0] = 200;     /* corner */
  px[2 * 5 + 3] = 90; /* interior */
  wsisa_image *in = u8_image(5, 4, px), *out = blank(in, WSISA_U8);
  cr_assert_eq(wsisa_cpu_morph(in, 1, 3, out), 0);
  const uint8_t want[] = {200, 200, 0,  0,  0,  /* */
                          200, 0,   0,  90, 0,  /* */
                          0,   0,   90, 90, 90, /* */
                          0,   0,   0,  90, 0};
  expect_u8(out, want, "dilate 3");
  wsisa_image *imgs[] = {in, out};
  free_all(imgs, 2);
}

Test(morph_kernel, erosion_border_is_neutral_and_empty_full_are_fixed) {
  uint8_t full[6 * 5], empty[6 * 5] = {0};
  memset(full, 255, sizeof full);
  for (int op = 0; op < 4; op++)
    for (int size = 3; size <= 19; size += 16) {
      wsisa_image *f = u8_image(6, 5, full), *z = u8_image(6, 5, empty);
      wsisa_image *out = blank(f, WSISA_U8);
      cr_assert_eq(wsisa_cpu_morph(f, op, size, out), 0);
      expect_u8(out, full, "full image");
      cr_assert_eq(wsisa_cpu_morph(z, op, size, out), 0);
      expect_u8(out, empty, "empty image");
      wsisa_image *imgs[] = {f, z, out};
      free_all(imgs, 3);
    }
}

/* Erosion or dilation by definition: the min (max) over the element's pixels
 * that fall inside the image. */
static void brute_erode_dilate(const wsisa_image *in, int dilate, int size, wsisa_image *out) {
  int half[WSISA_CPU_SE_MAX], r = size / 2;
  wsisa_cpu_ellipse_rows(size, half);
  for (int y = 0; y < in->height; y++)
    for (int x = 0; x < in->width; x++) {
      int acc = dilate ? 0 : 255;
      for (int dy = -r; dy <= r; dy++)
        for (int dx = -half[dy + r]; dx <= half[dy + r]; dx++) {
          int sx = x + dx, sy = y + dy;
          if (sx < 0 || sy < 0 || sx >= in->width || sy >= in->height) continue;
          int v = ((uint8_t *)wsisa_image_row(in, sy))[sx];
          acc = dilate ? (v > acc ? v : acc) : (v < acc ? v : acc);
        }
      ((uint8_t *)wsisa_image_row(out, y))[x] = (uint8_t)acc;
    }
}

Test(morph_kernel, matches_definition_on_odd_shapes) {
  static const int shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {40, 5}, {33, 17}, {70, 23}};
  static const int sizes[] = {3, 5, 7, 19, 41};
  unsigned seed = 12345;
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    wsisa_image *in = NULL;
    cr_assert_eq(wsisa_image_new(shapes[k][0], shapes[k][1], 1, WSISA_U8, &in, NULL), 0);
    for (int y = 0; y < in->height; y++)
      for (int x = 0; x < in->width; x++) {
        seed = seed * 1103515245u + 12345u;
        ((uint8_t *)wsisa_image_row(in, y))[x] = (uint8_t)(seed >> 16);
      }
    wsisa_image *got = blank(in, WSISA_U8), *mid = blank(in, WSISA_U8), *want = blank(in, WSISA_U8);
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
      for (int op = 0; op < 4; op++) {
        const int size = sizes[z];
        if (op < 2) {
          brute_erode_dilate(in, op, size, want);
        } else { /* open: dilate(erode); close: erode(dilate) */
          brute_erode_dilate(in, op == 3, size, mid);
          brute_erode_dilate(mid, op == 2, size, want);
        }
        cr_assert_eq(wsisa_cpu_morph(in, op, size, got), 0);
        cr_expect_eq(tu_image_diff(got, want), 0, "%dx%d op %d size %d", in->width,
                     in->height, op, size);
      }
    wsisa_image *imgs[] = {in, got, mid, want};
    free_all(imgs, 4);
  }
}

Test(morph_kernel, refuses_bad_shapes) {
  uint8_t px[9] = {0};
  wsisa_image *in = u8_image(3, 3, px), *out = blank(in, WSISA_U8);
  cr_expect_eq(wsisa_cpu_morph(in, 0, 4, out), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_cpu_morph(in, 4, 3, out), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_cpu_morph(in, 0, 3, in), WSISA_EINTERNAL);
  wsisa_image *imgs[] = {in, out};
  free_all(imgs, 2);
}

Test(morph_kernel, matches_opencv) {
  static const char *names[] = {"erode", "dilate", "open", "close"};
  wsisa_image *rc = golden("rc.png"), *out = blank(rc, WSISA_U8);
  for (int size = 3; size <= 19; size += 16)
    for (int op = 0; op < 4; op++) {
      cr_assert_eq(wsisa_cpu_morph(rc, op, size, out), 0);
      expect_golden(out, "%s_%d.png", names[op], size);
    }
  wsisa_image *imgs[] = {rc, out};
  free_all(imgs, 2);
}

/* ---- grey reconstruction -------------------------------------------------------- */

Test(morph_kernel, reconstruct_by_hand_both_connectivities) {
  /* A diagonal ridge: only 8-connectivity carries the marker along it. */
  const uint8_t mask[] = {9, 0, 0, 0, 7, 0, 0, 0, 8};
  const uint8_t marker[] = {9, 0, 0, 0, 0, 0, 0, 0, 0};
  const uint8_t want8[] = {9, 0, 0, 0, 7, 0, 0, 0, 7};
  wsisa_image *k = u8_image(3, 3, mask), *m = u8_image(3, 3, marker), *out = blank(k, WSISA_U8);
  cr_assert_eq(wsisa_cpu_reconstruct(m, k, 8, out), 0);
  expect_u8(out, want8, "conn 8");
  cr_assert_eq(wsisa_cpu_reconstruct(m, k, 4, out), 0);
  expect_u8(out, marker, "conn 4");
  /* The marker is clipped to the mask first. */
  cr_assert_eq(wsisa_cpu_reconstruct(k, m, 4, out), 0);
  expect_u8(out, marker, "marker above mask");
  wsisa_image *imgs[] = {k, m, out};
  free_all(imgs, 3);
}

Test(morph_kernel, reconstruct_f32_by_hand) {
  const float lo = -FLT_MAX;
  const float mask[] = {2.5f, lo, lo, lo, -1, lo, lo, lo, 0.25f};
  const float marker[] = {2.5f, lo, lo, lo, lo, lo, lo, lo, lo};
  const float want8[] = {2.5f, lo, lo, lo, -1, lo, lo, lo, -1};
  wsisa_image *k = f32_image(3, 3, mask), *m = f32_image(3, 3, marker), *out = blank(k, WSISA_F32);
  cr_assert_eq(wsisa_cpu_reconstruct(m, k, 8, out), 0);
  expect_f32(out, want8, "conn 8");
  cr_assert_eq(wsisa_cpu_reconstruct(m, k, 4, out), 0);
  expect_f32(out, marker, "conn 4");
  /* Zeros of both signs: the result holds +0.0 only, whatever the order. */
  const float zeros[] = {-0.0f, 0.0f, -0.0f};
  wsisa_image *z = f32_image(3, 1, zeros), *zo = blank(z, WSISA_F32);
  cr_assert_eq(wsisa_cpu_reconstruct(z, z, 8, zo), 0);
  for (int x = 0; x < 3; x++) cr_expect(!signbit(((float *)zo->data)[x]), "pixel %d", x);
  cr_assert_eq(wsisa_cpu_hmin(z, 0.0f, 8, zo), 0);
  for (int x = 0; x < 3; x++) cr_expect(!signbit(((float *)zo->data)[x]), "hmin pixel %d", x);
  wsisa_image *imgs[] = {k, m, out, z, zo};
  free_all(imgs, 5);
}

Test(morph_kernel, reconstruct_matches_skimage) {
  wsisa_image *rc = golden("rc.png"), *open = golden("open_19.png");
  wsisa_image *out = blank(rc, WSISA_U8);
  wsisa_image *fmask = golden("f32_mask.tif"), *fmarker = golden("f32_marker.tif");
  wsisa_image *fout = blank(fmask, WSISA_F32);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_reconstruct(open, rc, conn, out), 0);
    expect_golden(out, "recon_u8_%d.png", conn);
    cr_assert_eq(wsisa_cpu_reconstruct(fmarker, fmask, conn, fout), 0);
    expect_golden(fout, "recon_f32_%d.tif", conn);
  }
  wsisa_image *imgs[] = {rc, open, out, fmask, fmarker, fout};
  free_all(imgs, 6);
}

/* ---- binary reconstruction ---------------------------------------------------- */

Test(morph_kernel, bin_reconstruct_by_hand) {
  const uint8_t mask[] = {255, 0,   0,   255, /* */
                          0,   255, 0,   255, /* */
                          0,   0,   0,   255, /* */
                          7,   7,   0,   0};
  const uint8_t seed[] = {1, 0, 0,   0, /* */
                          0, 0, 255, 0, /* seed outside the mask: ignored */
                          0, 0, 0,   0, /* */
                          0, 9, 0,   0};
  const uint8_t want8[] = {255, 0,   0, 0, /* */
                           0,   255, 0, 0, /* */
                           0,   0,   0, 0, /* */
                           255, 255, 0, 0};
  const uint8_t want4[] = {255, 0, 0, 0, /* */
                           0,   0, 0, 0, /* */
                           0,   0, 0, 0, /* */
                           255, 255, 0, 0};
  wsisa_image *k = u8_image(4, 4, mask), *s = u8_image(4, 4, seed), *out = blank(k, WSISA_U8);
  cr_assert_eq(wsisa_cpu_bin_reconstruct(s, k, 8, out), 0);
  expect_u8(out, want8, "conn 8");
  cr_assert_eq(wsisa_cpu_bin_reconstruct(s, k, 4, out), 0);
  expect_u8(out, want4, "conn 4");
  /* No seed: nothing; the mask as its own seed: the mask as 0/255. */
  const uint8_t none[16] = {0};
  wsisa_image *z = u8_image(4, 4, none);
  cr_assert_eq(wsisa_cpu_bin_reconstruct(z, k, 8, out), 0);
  expect_u8(out, none, "no seed");
  cr_assert_eq(wsisa_cpu_bin_reconstruct(k, k, 4, out), 0);
  for (int i = 0; i < 16; i++)
    cr_expect_eq(((uint8_t *)out->data)[i], mask[i] ? 255 : 0, "self seed %d", i);
  wsisa_image *imgs[] = {k, s, z, out};
  free_all(imgs, 4);
}

Test(morph_kernel, bin_reconstruct_matches_scipy) {
  wsisa_image *g1 = golden("bw_g1.png"), *g2 = golden("bw_g2.png"), *out = blank(g1, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_bin_reconstruct(g1, g2, conn, out), 0);
    expect_golden(out, "bin_recon_%d.png", conn);
  }
  wsisa_image *imgs[] = {g1, g2, out};
  free_all(imgs, 3);
}

/* ---- fill holes ---------------------------------------------------------------- */

Test(morph_kernel, fill_holes_by_hand) {
  /* A diamond: its centre is a hole for 4-connected background only; the
   * notch touching the border is never a hole. */
  const uint8_t F = 255;
  const uint8_t mask[] = {0, 0, 0, 0, 0, F, /* */
                          0, 0, F, 0, 0, 0, /* */
                          0, F, 0, F, 0, F, /* */
                          0, 0, F, 0, 0, F};
  const uint8_t want4[] = {0, 0, 0, 0, 0, F, /* */
                           0, 0, F, 0, 0, 0, /* */
                           0, F, F, F, 0, F, /* */
                           0, 0, F, 0, 0, F};
  wsisa_image *m = u8_image(6, 4, mask), *out = blank(m, WSISA_U8);
  cr_assert_eq(wsisa_cpu_fill_holes(m, 4, out), 0);
  expect_u8(out, want4, "conn 4");
  cr_assert_eq(wsisa_cpu_fill_holes(m, 8, out), 0);
  expect_u8(out, mask, "conn 8");
  /* Empty stays empty, full stays full, a closed ring fills either way. */
  const uint8_t empty[9] = {0}, ring[] = {F, F, F, F, 0, F, F, F, F};
  uint8_t full[9];
  memset(full, F, sizeof full);
  wsisa_image *z = u8_image(3, 3, empty), *r = u8_image(3, 3, ring), *o3 = blank(z, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_fill_holes(z, conn, o3), 0);
    expect_u8(o3, empty, "empty");
    cr_assert_eq(wsisa_cpu_fill_holes(r, conn, o3), 0);
    expect_u8(o3, full, "ring");
  }
  wsisa_image *imgs[] = {m, out, z, r, o3};
  free_all(imgs, 5);
}

Test(morph_kernel, fill_holes_matches_scipy) {
  wsisa_image *g1 = golden("bw_g1.png"), *out = blank(g1, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_fill_holes(g1, conn, out), 0);
    expect_golden(out, "fill_holes_%d.png", conn);
  }
  wsisa_image *imgs[] = {g1, out};
  free_all(imgs, 2);
}

Test(morph_kernel, fill_object_holes_by_hand) {
  const uint8_t F = 255;
  /* A ring around a hole, and a ring around an island: the first hole is
   * filled, the second holds two objects and stays open. */
  const uint8_t mask[] = {F, F, F, F, 0, F, F, F, F, F, /* */
                          F, 0, 0, F, 0, F, 0, 0, 0, F, /* */
                          F, 0, 0, F, 0, F, 0, F, 0, F, /* */
                          F, F, F, F, 0, F, 0, 0, 0, F, /* */
                          0, 0, 0, 0, 0, F, F, F, F, F};
  const uint8_t want[] = {F, F, F, F, 0, F, F, F, F, F, /* */
                          F, F, F, F, 0, F, 0, 0, 0, F, /* */
                          F, F, F, F, 0, F, 0, F, 0, F, /* */
                          F, F, F, F, 0, F, 0, 0, 0, F, /* */
                          0, 0, 0, 0, 0, F, F, F, F, F};
  wsisa_image *m = u8_image(10, 5, mask), *out = blank(m, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_fill_object_holes(m, conn, out), 0);
    expect_u8(out, want, conn == 4 ? "rings, conn 4" : "rings, conn 8");
  }
  /* An island touching the ring at a corner: one 8-connected object, so the
   * 4-connected hole is filled; two 4-connected objects around the
   * 8-connected hole, which stays. */
  const uint8_t corner[] = {F, F, F, F, F, /* */
                            F, F, 0, 0, F, /* */
                            F, 0, F, 0, F, /* */
                            F, 0, 0, 0, F, /* */
                            F, F, F, F, F};
  const uint8_t corner_filled[] = {F, F, F, F, F, F, F, F, F, F, F, F, F,
                                   F, F, F, F, F, F, F, F, F, F, F, F};
  wsisa_image *c = u8_image(5, 5, corner), *co = blank(c, WSISA_U8);
  cr_assert_eq(wsisa_cpu_fill_object_holes(c, 4, co), 0);
  expect_u8(co, corner_filled, "corner island, conn 4");
  cr_assert_eq(wsisa_cpu_fill_object_holes(c, 8, co), 0);
  expect_u8(co, corner, "corner island, conn 8");
  /* Without islands it is fill holes (fill_holes_by_hand's diamond). */
  const uint8_t diamond[] = {0, 0, 0, 0, 0, F, 0, 0, F, 0, 0, 0,
                             0, F, 0, F, 0, F, 0, 0, F, 0, 0, F};
  wsisa_image *d = u8_image(6, 4, diamond), *plain = blank(d, WSISA_U8), *objs = blank(d, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_fill_holes(d, conn, plain), 0);
    cr_assert_eq(wsisa_cpu_fill_object_holes(d, conn, objs), 0);
    cr_expect_eq(tu_image_diff(plain, objs), 0, "diamond, conn %d", conn);
  }
  wsisa_image *imgs[] = {m, out, c, co, d, plain, objs};
  free_all(imgs, 7);
}

Test(morph_kernel, fill_object_holes_matches_scipy) {
  wsisa_image *rings = golden("bw_rings.png"), *out = blank(rings, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_fill_object_holes(rings, conn, out), 0);
    expect_golden(out, "fill_object_holes_%d.png", conn);
  }
  wsisa_image *imgs[] = {rings, out};
  free_all(imgs, 2);
}

/* ---- h-minima and regional minima ------------------------------------------------ */

Test(morph_kernel, hmin_by_hand) {
  /* Minima of depth 2 and 4 in a row: h = 1 raises both by 1, h = 3 fills
   * the shallow one. */
  const float row[] = {5, 5, 3, 5, 5, 1, 5};
  const float want1[] = {5, 5, 4, 5, 5, 2, 5}, want3[] = {5, 5, 5, 5, 5, 4, 5};
  wsisa_image *in = f32_image(7, 1, row), *out = blank(in, WSISA_F32);
  cr_assert_eq(wsisa_cpu_hmin(in, 1.0f, 4, out), 0);
  expect_f32(out, want1, "h 1");
  cr_assert_eq(wsisa_cpu_hmin(in, 3.0f, 8, out), 0);
  expect_f32(out, want3, "h 3");
  /* Diagonal neighbours merge two minima for conn 8 only. */
  const float sq[] = {0, 5, 5, 5, 1, 5, 5, 5, 5};
  const float sq4[] = {2, 5, 5, 5, 3, 5, 5, 5, 5}, sq8[] = {2, 5, 5, 5, 2, 5, 5, 5, 5};
  wsisa_image *s = f32_image(3, 3, sq), *so = blank(s, WSISA_F32);
  cr_assert_eq(wsisa_cpu_hmin(s, 2.0f, 4, so), 0);
  expect_f32(so, sq4, "conn 4");
  cr_assert_eq(wsisa_cpu_hmin(s, 2.0f, 8, so), 0);
  expect_f32(so, sq8, "conn 8");
  /* -FLT_MAX + 1 is -FLT_MAX: the background stays, and a minimum next to it
   * is not a minimum and stays too. */
  const float bg[] = {-FLT_MAX, -1, -FLT_MAX};
  wsisa_image *b = f32_image(3, 1, bg), *bo = blank(b, WSISA_F32);
  cr_assert_eq(wsisa_cpu_hmin(b, 1.0f, 8, bo), 0);
  expect_f32(bo, bg, "background");
  cr_expect_eq(wsisa_cpu_hmin(b, -1.0f, 8, bo), WSISA_EINTERNAL);
  wsisa_image *imgs[] = {in, out, s, so, b, bo};
  free_all(imgs, 6);
}

Test(morph_kernel, regional_min_by_hand) {
  const float sq[] = {0, 5, 5, 5, 1, 5, 5, 5, 5};
  const uint8_t want4[] = {255, 0, 0, 0, 255, 0, 0, 0, 0};
  const uint8_t want8[] = {255, 0, 0, 0, 0, 0, 0, 0, 0};
  wsisa_image *s = f32_image(3, 3, sq), *out = blank(s, WSISA_U8);
  cr_assert_eq(wsisa_cpu_regional_min(s, 4, out), 0);
  expect_u8(out, want4, "conn 4");
  cr_assert_eq(wsisa_cpu_regional_min(s, 8, out), 0);
  expect_u8(out, want8, "conn 8");
  /* Plateaus: one at the border with no lower neighbour is a minimum, one
   * with a lower neighbour somewhere is not; a constant image is one minimum. */
  const float row[] = {3, 3, 4, 2, 2, 2, 1, 1};
  const uint8_t want_row[] = {255, 255, 0, 0, 0, 0, 255, 255};
  wsisa_image *r = f32_image(8, 1, row), *ro = blank(r, WSISA_U8);
  cr_assert_eq(wsisa_cpu_regional_min(r, 8, ro), 0);
  expect_u8(ro, want_row, "plateaus");
  const float flat[] = {7, 7, 7, 7, 7, 7};
  const uint8_t all[] = {255, 255, 255, 255, 255, 255};
  wsisa_image *f = f32_image(3, 2, flat), *fo = blank(f, WSISA_U8);
  cr_assert_eq(wsisa_cpu_regional_min(f, 4, fo), 0);
  expect_u8(fo, all, "flat");
  wsisa_image *imgs[] = {s, out, r, ro, f, fo};
  free_all(imgs, 6);
}

Test(morph_kernel, hmin_and_regional_min_match_skimage) {
  wsisa_image *negdist = golden("negdist.tif"), *smooth = golden("f32_mask.tif");
  wsisa_image *h = blank(negdist, WSISA_F32), *m = blank(negdist, WSISA_U8);
  for (int conn = 4; conn <= 8; conn += 4) {
    cr_assert_eq(wsisa_cpu_hmin(negdist, 1.0f, conn, h), 0);
    expect_golden(h, "hmin_%d.tif", conn);
    cr_assert_eq(wsisa_cpu_regional_min(h, conn, m), 0);
    expect_golden(m, "regional_min_%d.png", conn);
    cr_assert_eq(wsisa_cpu_regional_min(smooth, conn, m), 0);
    expect_golden(m, "regional_min_smooth_%d.png", conn);
  }
  wsisa_image *imgs[] = {negdist, smooth, h, m};
  free_all(imgs, 4);
}

/* ---- codelets: CPU worker against OpenCL worker ------------------------------------ */

typedef enum {
  CALL_MORPH, CALL_RECON, CALL_BIN_RECON, CALL_FILL, CALL_FILL_OBJECTS, CALL_HMIN, CALL_RMIN
} call_kind;

typedef struct call {
  call_kind kind;
  int op, se_size, conn;
  float h;
} call;

static int submit_call(starpu_data_handle_t *h, void *arg) {
  const call *c = arg;
  switch (c->kind) {
    case CALL_MORPH: return wsisa_submit_morph(h[0], h[1], (wsisa_morph_op)c->op, c->se_size);
    case CALL_RECON: return wsisa_submit_reconstruct(h[0], h[1], h[2], c->conn);
    case CALL_BIN_RECON: return wsisa_submit_bin_reconstruct(h[0], h[1], h[2], c->conn);
    case CALL_FILL: return wsisa_submit_fill_holes(h[0], h[1], c->conn);
    case CALL_FILL_OBJECTS: return wsisa_submit_fill_object_holes(h[0], h[1], c->conn);
    case CALL_HMIN: return wsisa_submit_hmin(h[0], h[1], c->h, c->conn);
    case CALL_RMIN: return wsisa_submit_regional_min(h[0], h[1], c->conn);
  }
  return WSISA_EINTERNAL;
}

/* Run `c` on `nin` inputs forced on the CPU worker, then on the OpenCL worker;
 * expect bit-identical outputs; return the CPU one (the caller frees it). */
static wsisa_image *both_workers(call c, wsisa_image **in, int nin, wsisa_dtype out_type) {
  wsisa_image *out[2];
  const uint32_t where[2] = {STARPU_CPU, STARPU_OPENCL};
  for (int w = 0; w < 2; w++) {
    out[w] = blank(in[0], out_type);
    wsisa_image *imgs[4] = {NULL};
    for (int i = 0; i < nin; i++) imgs[i] = in[i];
    imgs[nin] = out[w];
    cr_assert_eq(tu_run_op(where[w], imgs, nin + 1, submit_call, &c), 0);
  }
  cr_expect_eq(tu_image_diff(out[0], out[1]), 0,
               "call %d (op %d, size %d, conn %d): CPU and OpenCL differ", c.kind, c.op,
               c.se_size, c.conn);
  wsisa_image_free(out[1]);
  return out[0];
}

/* both_workers, then the CPU output against the golden file conn selects. */
static void both_workers_golden(call c, wsisa_image **in, int nin, wsisa_dtype out_type,
                                const char *fmt) {
  wsisa_image *got = both_workers(c, in, nin, out_type);
  expect_golden(got, fmt, c.conn);
  wsisa_image_free(got);
}

static void check_morph(void) {
  static const char *names[] = {"erode", "dilate", "open", "close"};
  wsisa_image *rc = golden("rc.png"), *bw = golden("bw_g2.png");
  for (int size = 3; size <= 19; size += 16)
    for (int op = 0; op < 4; op++) {
      wsisa_image *got = both_workers((call){CALL_MORPH, op, size, 0, 0}, &rc, 1, WSISA_U8);
      expect_golden(got, "%s_%d.png", names[op], size);
      wsisa_image_free(got);
    }
  /* A binary mask and a large element on a non-square image edge. */
  wsisa_image_free(both_workers((call){CALL_MORPH, WSISA_MORPH_OPEN, 3, 0, 0}, &bw, 1, WSISA_U8));
  wsisa_image_free(both_workers((call){CALL_MORPH, WSISA_MORPH_CLOSE, 41, 0, 0}, &bw, 1, WSISA_U8));
  wsisa_image_free(rc);
  wsisa_image_free(bw);
}

static void check_reconstruct(void) {
  wsisa_image *u8[] = {golden("open_19.png"), golden("rc.png")};
  wsisa_image *f32[] = {golden("f32_marker.tif"), golden("f32_mask.tif")};
  for (int conn = 4; conn <= 8; conn += 4) {
    both_workers_golden((call){CALL_RECON, 0, 0, conn, 0}, u8, 2, WSISA_U8, "recon_u8_%d.png");
    both_workers_golden((call){CALL_RECON, 0, 0, conn, 0}, f32, 2, WSISA_F32,
                        "recon_f32_%d.tif");
  }
  free_all(u8, 2);
  free_all(f32, 2);
}

static void check_binary_ops(void) {
  wsisa_image *g[] = {golden("bw_g1.png"), golden("bw_g2.png")}, *rings = golden("bw_rings.png");
  for (int conn = 4; conn <= 8; conn += 4) {
    both_workers_golden((call){CALL_BIN_RECON, 0, 0, conn, 0}, g, 2, WSISA_U8,
                        "bin_recon_%d.png");
    both_workers_golden((call){CALL_FILL, 0, 0, conn, 0}, g, 1, WSISA_U8, "fill_holes_%d.png");
    both_workers_golden((call){CALL_FILL_OBJECTS, 0, 0, conn, 0}, &rings, 1, WSISA_U8,
                        "fill_object_holes_%d.png");
  }
  free_all(g, 2);
  wsisa_image_free(rings);
}

/* The workflow's relief with what the fast CPU kernels treat apart: a
 * -FLT_MAX background, plateaus (distances rounded to thirds, a flat band
 * across the whole width), bumps cut by every image border, a width that is
 * not a multiple of 32. */
static wsisa_image *plateau_relief(void) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(133, 41, 1, WSISA_F32, &img, NULL), 0);
  for (int y = 0; y < 41; y++)
    for (int x = 0; x < 133; x++) {
      const float d = 10.0f - hypotf((float)((x + 7) % 26) - 12.5f, (float)((y + 5) % 21) - 10.0f);
      float v = d > 0 ? -roundf(d * 3) / 3 : -FLT_MAX;
      if (y == 20) v = -2.0f;
      ((float *)wsisa_image_row(img, y))[x] = v;
    }
  return img;
}

static void check_hmin_and_regional_min(void) {
  wsisa_image *relief = plateau_relief();
  for (int conn = 4; conn <= 8; conn += 4) {
    wsisa_image *h = both_workers((call){CALL_HMIN, 0, 0, conn, 1.0f}, &relief, 1, WSISA_F32);
    wsisa_image_free(both_workers((call){CALL_RMIN, 0, 0, conn, 0}, &h, 1, WSISA_U8));
    wsisa_image_free(both_workers((call){CALL_RMIN, 0, 0, conn, 0}, &relief, 1, WSISA_U8));
    wsisa_image_free(h);
  }
  wsisa_image_free(relief);
  wsisa_image *negdist = golden("negdist.tif"), *smooth = golden("f32_mask.tif");
  for (int conn = 4; conn <= 8; conn += 4) {
    wsisa_image *h = both_workers((call){CALL_HMIN, 0, 0, conn, 1.0f}, &negdist, 1, WSISA_F32);
    expect_golden(h, "hmin_%d.tif", conn);
    both_workers_golden((call){CALL_RMIN, 0, 0, conn, 0}, &h, 1, WSISA_U8,
                        "regional_min_%d.png");
    wsisa_image_free(h);
    both_workers_golden((call){CALL_RMIN, 0, 0, conn, 0}, &smooth, 1, WSISA_U8,
                        "regional_min_smooth_%d.png");
    /* A deeper h on a smooth relief exercises longer propagation. */
    wsisa_image_free(both_workers((call){CALL_HMIN, 0, 0, conn, 6.5f}, &smooth, 1, WSISA_F32));
  }
  wsisa_image_free(negdist);
  wsisa_image_free(smooth);
}

/* A serpentine corridor through a width x height image: the even rows, joined
 * by one pixel at alternate ends of the odd rows; 0 on the walls, elsewhere a
 * grey that varies along the way (u8: 1..250 on the corridor). */
static wsisa_image *serpentine(int width, int height, wsisa_dtype type) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(width, height, 1, type, &img, NULL), 0);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      const int open = y % 2 == 0 || x == (y % 4 == 1 ? width - 1 : 0);
      const int v = open ? 1 + (x * 7 + y * 13) % 250 : 0;
      if (type == WSISA_U8) ((uint8_t *)wsisa_image_row(img, y))[x] = (uint8_t)v;
      else ((float *)wsisa_image_row(img, y))[x] = (float)v - 0.5f * (float)(v == 0);
    }
  return img;
}

/* The wavefront operations where their OpenCL kernels work hardest or meet
 * the edges: a long winding corridor (many rounds in a block, long queues), the
 * reconstruction of a mask under itself, images one pixel wide or high, a
 * flat image (one plateau), zeros of both signs. */
static void check_edges(void) {
  /* Then across the reconstruction's 64 x 64 blocks: edges cut by the image,
   * a corridor crossing blocks too often for the blocks' launches alone (the
   * queues finish it), lines through several blocks. */
  const int sizes[][2] = {{61, 47}, {1, 37}, {37, 1}, {1, 1}, {130, 70},
                          {260, 260}, {1, 300}, {300, 1}};
  for (int s = 0; s < 8; s++)
    for (int conn = 4; conn <= 8; conn += 4) {
      const int w = sizes[s][0], h = sizes[s][1];
      wsisa_image *mask = serpentine(w, h, WSISA_U8), *marker = blank(mask, WSISA_U8);
      ((uint8_t *)wsisa_image_row(marker, 0))[0] = 255;
      wsisa_image *in[] = {marker, mask};
      wsisa_image_free(both_workers((call){CALL_RECON, 0, 0, conn, 0}, in, 2, WSISA_U8));
      wsisa_image_free(both_workers((call){CALL_BIN_RECON, 0, 0, conn, 0}, in, 2, WSISA_U8));
      wsisa_image_free(both_workers((call){CALL_FILL, 0, 0, conn, 0}, &mask, 1, WSISA_U8));
      wsisa_image_free(both_workers((call){CALL_FILL, 0, 0, conn, 0}, &marker, 1, WSISA_U8));
      wsisa_image_free(
          both_workers((call){CALL_FILL_OBJECTS, 0, 0, conn, 0}, &mask, 1, WSISA_U8));
      /* A mask under itself is itself. */
      wsisa_image *self[] = {mask, mask};
      wsisa_image *same = both_workers((call){CALL_RECON, 0, 0, conn, 0}, self, 2, WSISA_U8);
      cr_expect_eq(tu_image_diff(same, mask), 0, "reconstruction of a mask under itself");
      wsisa_image_free(same);
      /* f32: the walls -0.5 in the mask, the marker -0.0 but at the start,
       * where the mask is +0.0. */
      wsisa_image *fmask = serpentine(w, h, WSISA_F32), *fmarker = blank(fmask, WSISA_F32);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) ((float *)wsisa_image_row(fmarker, y))[x] = -0.0f;
      ((float *)wsisa_image_row(fmarker, 0))[0] = 300.0f;
      ((float *)wsisa_image_row(fmask, h - 1))[w - 1] = 0.0f;
      wsisa_image *fin[] = {fmarker, fmask};
      wsisa_image_free(both_workers((call){CALL_RECON, 0, 0, conn, 0}, fin, 2, WSISA_F32));
      wsisa_image_free(both_workers((call){CALL_HMIN, 0, 0, conn, 3.0f}, &fmask, 1, WSISA_F32));
      wsisa_image_free(both_workers((call){CALL_RMIN, 0, 0, conn, 0}, &fmask, 1, WSISA_U8));
      /* Flat: one plateau, every pixel a minimum. */
      wsisa_image *flat = both_workers((call){CALL_RMIN, 0, 0, conn, 0}, &fmarker, 1, WSISA_U8);
      for (int y = 0; y < h; y++)
        for (int x = (y == 0); x < w; x++)
          cr_expect_eq(((const uint8_t *)wsisa_image_row(flat, y))[x], 255, "flat minimum");
      wsisa_image_free(flat);
      free_all(in, 2);
      free_all(fin, 2);
    }
}

TestSuite(morph_codelets, .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop);

/* One test for all operations: each test process starts StarPU and builds
 * every OpenCL program of the registry, which costs far more than the runs. */
Test(morph_codelets, cpu_and_opencl_agree) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  check_morph();
  check_reconstruct();
  check_binary_ops();
  check_hmin_and_regional_min();
  check_edges();
}

Test(morph_codelets, submit_refuses_bad_arguments) {
  wsisa_image *a = NULL, *b = NULL, *small = NULL, *f = NULL;
  cr_assert_eq(wsisa_image_new(8, 8, 1, WSISA_U8, &a, NULL), 0);
  cr_assert_eq(wsisa_image_new(8, 8, 1, WSISA_U8, &b, NULL), 0);
  cr_assert_eq(wsisa_image_new(8, 7, 1, WSISA_U8, &small, NULL), 0);
  cr_assert_eq(wsisa_image_new(8, 8, 1, WSISA_F32, &f, NULL), 0);
  starpu_data_handle_t ha, hb, hs, hf;
  cr_assert_eq(wsisa_image_register(a, &ha, NULL), 0);
  cr_assert_eq(wsisa_image_register(b, &hb, NULL), 0);
  cr_assert_eq(wsisa_image_register(small, &hs, NULL), 0);
  cr_assert_eq(wsisa_image_register(f, &hf, NULL), 0);
  cr_expect_eq(wsisa_submit_morph(ha, hb, WSISA_MORPH_OPEN, 4), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_morph(ha, hb, WSISA_MORPH_OPEN, 1), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_morph(ha, hb, (wsisa_morph_op)7, 3), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_morph(ha, hs, WSISA_MORPH_OPEN, 3), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_morph(hf, hf, WSISA_MORPH_OPEN, 3), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_reconstruct(ha, hb, ha, 6), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_reconstruct(hf, hb, ha, 8), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_bin_reconstruct(ha, hs, hb, 8), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_bin_reconstruct(ha, hb, ha, 0), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_fill_holes(ha, hb, 5), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_fill_object_holes(ha, hb, 0), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_fill_object_holes(ha, hs, 4), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_hmin(hf, hf, -1.0f, 8), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_hmin(ha, hb, 1.0f, 8), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_regional_min(hf, ha, 6), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_regional_min(ha, hb, 4), WSISA_EINTERNAL);
  starpu_task_wait_for_all();
  starpu_data_handle_t all[] = {ha, hb, hs, hf};
  for (int i = 0; i < 4; i++) starpu_data_unregister(all[i]);
  wsisa_image *imgs[] = {a, b, small, f};
  free_all(imgs, 4);
}
