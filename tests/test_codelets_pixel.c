/* The pixel group: normalization (fisher_fg, rgb2lab, masked_stats,
 * color_transfer, lab2rgb, the whole chain) and the per-pixel segmentation
 * operations (background, ratio_mask, threshold, sub_sat, mask_logic,
 * compare). CPU kernels against tests/golden/pixel (make_pixel.py) and hand-
 * known cases; every codelet on the CPU worker against the OpenCL worker. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/io.h"
#include "tests/testutil.h"

#define STARPU_FIXTURE TU_STARPU_FIXTURE

/* ---- images ------------------------------------------------------------- */

static wsisa_image *load(const char *relative) {
  wsisa_image *img = tu_load(relative);
  cr_assert_not_null(img, "cannot read %s", relative);
  return img;
}

static wsisa_image *tile(void) { return load("tests/data/tile_256.png"); }

static wsisa_image *golden(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "tests/golden/pixel/%s", name);
  return load(path);
}

static wsisa_image *new_image(int w, int h, int channels, wsisa_dtype type) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, channels, type, &img, NULL), 0);
  return img;
}

static wsisa_image crop(const wsisa_image *img, int x, int y, int w, int h) {
  return wsisa_image_view((char *)wsisa_image_row(img, y) + (size_t)x * wsisa_image_pixel_bytes(img),
                          w, h, img->channels, img->type, img->stride);
}

/* One channel of an u8 image as its own image. */
static wsisa_image *channel(const wsisa_image *img, int c) {
  wsisa_image *out = new_image(img->width, img->height, 1, WSISA_U8);
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      ((uint8_t *)wsisa_image_row(out, y))[x] =
          ((uint8_t *)wsisa_image_row(img, y))[x * img->channels + c];
  return out;
}

static uint8_t *u8_at(const wsisa_image *img, int x, int y) {
  return (uint8_t *)wsisa_image_row(img, y) + (size_t)x * img->channels;
}

static float *f32_at(const wsisa_image *img, int x, int y) {
  return (float *)wsisa_image_row(img, y) + (size_t)x * img->channels;
}

/* A w × h u8 image filled from `values` (row-major, w·h·channels). */
static wsisa_image *from_values(int w, int h, int channels, const uint8_t *values) {
  wsisa_image *img = new_image(w, h, channels, WSISA_U8);
  for (int y = 0; y < h; y++)
    memcpy(wsisa_image_row(img, y), values + (size_t)y * w * channels, (size_t)w * channels);
  return img;
}

/* Largest |a − b| over f32 images of one shape; counts the values that are
 * not bit-identical in *unequal when it is not NULL. */
static double f32_max_diff(const wsisa_image *a, const wsisa_image *b, size_t *unequal) {
  cr_assert(wsisa__image_is(a, b, b->channels, WSISA_F32));
  double worst = 0;
  size_t n = 0;
  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width * a->channels; x++) {
      float va = ((float *)wsisa_image_row(a, y))[x], vb = ((float *)wsisa_image_row(b, y))[x];
      n += memcmp(&va, &vb, sizeof va) != 0;
      if (fabs((double)va - vb) > worst) worst = fabs((double)va - vb);
    }
  if (unequal) *unequal = n;
  return worst;
}

/* Pixels of two u8 images that differ, and the largest difference of a value. */
static size_t u8_diff(const wsisa_image *a, const wsisa_image *b, int *worst) {
  cr_assert(wsisa__image_is(a, b, b->channels, WSISA_U8));
  size_t n = 0;
  *worst = 0;
  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width; x++) {
      int differs = 0;
      for (int c = 0; c < a->channels; c++) {
        int d = abs(u8_at(a, x, y)[c] - u8_at(b, x, y)[c]);
        differs |= d != 0;
        if (d > *worst) *worst = d;
      }
      n += (size_t)differs;
    }
  return n;
}

static void free_all(wsisa_image **imgs, int n) {
  for (int i = 0; i < n; i++) wsisa_image_free(imgs[i]);
}

/* ---- running codelets on one worker kind -------------------------------- */

/* An operation under test: its inputs, then one output shaped like inputs[0]
 * with out_channels × out_type, or a vector of n_vector elements of vector_size
 * bytes (then no image output). */
typedef struct op_run {
  int (*submit)(starpu_data_handle_t *h, const struct op_run *run);
  wsisa_image *inputs[4];
  int ninputs;
  int out_channels;
  wsisa_dtype out_type;
  uint32_t n_vector;
  size_t vector_size;
  int iarg[3];
  double darg;
} op_run;

struct submit_ctx {
  const op_run *run;
  void *vector;
};

static int submit_trampoline(starpu_data_handle_t *h, void *arg) {
  struct submit_ctx *ctx = arg;
  const op_run *run = ctx->run;
  if (!run->n_vector) return run->submit(h, run);
  /* The vector lives in ctx->vector; unregistering waits for the task. */
  starpu_data_handle_t all[6];
  memcpy(all, h, (size_t)run->ninputs * sizeof *h);
  starpu_vector_data_register(&all[run->ninputs], STARPU_MAIN_RAM, (uintptr_t)ctx->vector,
                              run->n_vector, run->vector_size);
  int rc = run->submit(all, run);
  starpu_data_unregister(all[run->ninputs]);
  return rc;
}

/* Run on `where`; returns the output image, or NULL with the vector in `vector`. */
static wsisa_image *run_on(uint32_t where, const op_run *run, void *vector) {
  wsisa_image *imgs[5];
  memcpy(imgs, run->inputs, (size_t)run->ninputs * sizeof *imgs);
  wsisa_image *out = NULL;
  int n = run->ninputs;
  if (!run->n_vector) {
    out = new_image(run->inputs[0]->width, run->inputs[0]->height, run->out_channels,
                    run->out_type);
    imgs[n++] = out;
  }
  struct submit_ctx ctx = {run, vector};
  cr_assert_eq(tu_run_op(where, imgs, n, submit_trampoline, &ctx), 0);
  return out;
}

/* Run on both worker kinds, expect bit-identical results, return the CPU's. */
static wsisa_image *run_both_same(const op_run *run, void *vector) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  char cl_vector[64] = {0};
  cr_assert_leq(run->n_vector * run->vector_size, sizeof cl_vector);
  wsisa_image *cpu = run_on(STARPU_CPU, run, vector);
  wsisa_image *cl = run_on(STARPU_OPENCL, run, cl_vector);
  if (cpu) {
    cr_expect_eq(tu_image_diff(cpu, cl), 0, "CPU and OpenCL differ on %zu pixels",
                 tu_image_diff(cpu, cl));
    wsisa_image_free(cl);
  } else {
    cr_expect_eq(memcmp(vector, cl_vector, run->n_vector * run->vector_size), 0,
                 "CPU and OpenCL vectors differ");
  }
  return cpu;
}

static int submit_fisher_fg(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  return wsisa_submit_fisher_fg(h[0], h[1]);
}
static int submit_rgb2lab(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  return wsisa_submit_rgb2lab(h[0], h[1]);
}
static int submit_masked_stats(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  return wsisa_submit_masked_stats(h[0], h[1], h[2]);
}
static int submit_lab2rgb(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  return wsisa_submit_lab2rgb(h[0], h[1], h[2], h[3]);
}
static int submit_normalize(starpu_data_handle_t *h, const op_run *r) {
  return wsisa_normalize_submit(h[0], h[1], r->inputs[0]->width, r->inputs[0]->height);
}
static int submit_background(starpu_data_handle_t *h, const op_run *r) {
  return wsisa_submit_background(h[0], h[1], r->iarg[0], r->iarg[1], r->iarg[2]);
}
static int submit_ratio_mask(starpu_data_handle_t *h, const op_run *r) {
  return wsisa_submit_ratio_mask(h[0], h[1], r->iarg[0], r->iarg[1], r->darg);
}
static int submit_threshold(starpu_data_handle_t *h, const op_run *r) {
  return wsisa_submit_threshold(h[0], h[1], r->iarg[0]);
}
static int submit_sub_sat(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  return wsisa_submit_sub_sat(h[0], h[1], h[2]);
}
static int submit_mask_logic(starpu_data_handle_t *h, const op_run *r) {
  return wsisa_submit_mask_logic(h[0], h[1], h[2], (wsisa_mask_op)r->iarg[0]);
}
static int submit_compare(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  return wsisa_submit_compare(h[0], h[1], h[2]);
}

/* color_transfer needs statistics first: masked_stats into an intermediate
 * vector, as the chain does. */
static int submit_stats_then_transfer(starpu_data_handle_t *h, const op_run *r) {
  (void)r;
  starpu_data_handle_t stats;
  starpu_vector_data_register(&stats, -1, 0, WSISA_STATS_N, sizeof(double));
  int rc = wsisa_submit_masked_stats(h[0], h[1], stats);
  if (!rc) rc = wsisa_submit_color_transfer(h[0], h[1], stats, h[2]);
  starpu_data_unregister_submit(stats);
  return rc;
}

/* ---- fisher_fg ------------------------------------------------------------- */

Test(fisher_fg, cpu_kernel_matches_golden_and_ties_are_background) {
  wsisa_image *rgb = tile(), *want = golden("fisher_fg.png");
  wsisa_image *got = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_fisher_fg(rgb, got), 0);
  cr_expect_eq(tu_image_diff(got, want), 0);
  /* (2,50,75) is an exact tie (M1·x = M2·x), so background; one more blue is
   * foreground, one less is not; black is background. */
  const uint8_t px[] = {2, 50, 75, 2, 50, 76, 2, 50, 74, 0, 0, 0, 255, 255, 255};
  wsisa_image *small = from_values(5, 1, 3, px), *m = new_image(5, 1, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_fisher_fg(small, m), 0);
  const uint8_t expect[] = {0, 255, 0, 0, 0};
  cr_expect_arr_eq(wsisa_image_row(m, 0), expect, 5);
  cr_expect_eq(wsisa_cpu_fisher_fg(small, small), WSISA_EINTERNAL, "shape mismatch");
  free_all((wsisa_image *[]){rgb, want, got, small, m}, 5);
}

static void fisher_fg_cpu_and_opencl_agree(void) {
  wsisa_image *rgb = tile();
  wsisa_image part = crop(rgb, 13, 7, 37, 23); /* odd size, stride > width */
  op_run run = {submit_fisher_fg, {rgb}, 1, 1, WSISA_U8, 0, 0, {0}, 0};
  wsisa_image *a = run_both_same(&run, NULL);
  run.inputs[0] = &part;
  wsisa_image *b = run_both_same(&run, NULL);
  free_all((wsisa_image *[]){rgb, a, b}, 3);
}

/* ---- rgb2lab ----------------------------------------------------------------- */

Test(rgb2lab, cpu_kernel_matches_golden) {
  wsisa_image *rgb = tile(), *want = golden("lab_128.tiff");
  wsisa_image part = crop(rgb, 0, 0, want->width, want->height);
  wsisa_image *got = new_image(want->width, want->height, 3, WSISA_F32);
  cr_assert_eq(wsisa_cpu_rgb2lab(&part, got), 0);
  double worst = f32_max_diff(got, want, NULL);
  cr_expect_leq(worst, 1e-6, "largest difference %g", worst);
  free_all((wsisa_image *[]){rgb, want, got}, 3);
}

Test(rgb2lab, black_is_finite_and_white_is_zero) {
  const uint8_t px[] = {0, 0, 0, 255, 255, 255};
  wsisa_image *rgb = from_values(2, 1, 3, px), *lab = new_image(2, 1, 3, WSISA_F32);
  cr_assert_eq(wsisa_cpu_rgb2lab(rgb, lab), 0);
  /* Black sits on the LMS floor 1e-6: l = 3·log10(1e-6)/√3 = −6√3, α = β = 0. */
  cr_expect_float_eq(f32_at(lab, 0, 0)[0], (float)(-6.0 * sqrt(3.0)), 1e-5);
  cr_expect_float_eq(f32_at(lab, 0, 0)[1], 0.0f, 1e-6);
  cr_expect_float_eq(f32_at(lab, 0, 0)[2], 0.0f, 1e-6);
  /* White: LMS rows sum to 0.9996, 0.9993 and 0.9973, so lαβ is near 0. */
  for (int c = 0; c < 3; c++) cr_expect(fabsf(f32_at(lab, 1, 0)[c]) < 2e-3);
  free_all((wsisa_image *[]){rgb, lab}, 2);
}

static void rgb2lab_cpu_and_opencl_agree(void) {
  wsisa_image *rgb = tile();
  op_run run = {submit_rgb2lab, {rgb}, 1, 3, WSISA_F32, 0, 0, {0}, 0};
  wsisa_image *cpu = run_on(STARPU_CPU, &run, NULL), *cl = run_on(STARPU_OPENCL, &run, NULL);
  size_t unequal;
  double worst = f32_max_diff(cpu, cl, &unequal);
  cr_log_info("rgb2lab: CPU vs OpenCL: %zu of %d values differ, largest %g", unequal,
              3 * rgb->width * rgb->height, worst);
  cr_expect_leq(worst, 1e-6);
  free_all((wsisa_image *[]){rgb, cpu, cl}, 3);
}

/* ---- masked_stats ------------------------------------------------------------ */

static void golden_stats(double stats[WSISA_STATS_N]) {
  FILE *f = fopen(tu_src("tests/golden/pixel/stats.txt"), "r");
  cr_assert(f);
  for (int i = 0; i < WSISA_STATS_N; i++) cr_assert_eq(fscanf(f, "%lf", &stats[i]), 1);
  fclose(f);
}

/* lαβ of the tile and its Fisher mask, from the CPU kernels. */
static void tile_lab(wsisa_image **rgb, wsisa_image **lab, wsisa_image **fg) {
  *rgb = tile();
  *lab = new_image((*rgb)->width, (*rgb)->height, 3, WSISA_F32);
  *fg = new_image((*rgb)->width, (*rgb)->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_rgb2lab(*rgb, *lab), 0);
  cr_assert_eq(wsisa_cpu_fisher_fg(*rgb, *fg), 0);
}

Test(masked_stats, cpu_kernel_matches_golden) {
  wsisa_image *rgb, *lab, *fg;
  tile_lab(&rgb, &lab, &fg);
  double got[WSISA_STATS_N], want[WSISA_STATS_N];
  golden_stats(want);
  cr_assert_eq(wsisa_cpu_masked_stats(lab, fg, got), 0);
  cr_expect_eq(got[WSISA_STATS_COUNT], want[WSISA_STATS_COUNT]);
  for (int c = 0; c < 3; c++) {
    cr_expect_float_eq(got[WSISA_STATS_MEAN + c], want[WSISA_STATS_MEAN + c], 1e-6);
    cr_expect_float_eq(got[WSISA_STATS_STD + c], want[WSISA_STATS_STD + c],
                       1e-5 * want[WSISA_STATS_STD + c]);
  }
  free_all((wsisa_image *[]){rgb, lab, fg}, 3);
}

Test(masked_stats, empty_mask_and_flat_channel) {
  wsisa_image *lab = new_image(4, 3, 3, WSISA_F32), *mask = new_image(4, 3, 1, WSISA_U8);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 4; x++) {
      float *p = f32_at(lab, x, y);
      p[0] = 0.1f;             /* flat */
      p[1] = (float)x;         /* 0 1 2 3 on every row */
      p[2] = -0.3f * (float)y; /* 0, −0.3, −0.6 */
    }
  double s[WSISA_STATS_N];
  cr_assert_eq(wsisa_cpu_masked_stats(lab, mask, s), 0);
  for (int i = 0; i < WSISA_STATS_N; i++) cr_expect_eq(s[i], 0.0, "empty mask: stats[%d]", i);
  for (int y = 0; y < 3; y++) memset(wsisa_image_row(mask, y), 7, 4); /* any non-zero is on */
  cr_assert_eq(wsisa_cpu_masked_stats(lab, mask, s), 0);
  cr_expect_eq(s[WSISA_STATS_COUNT], 12.0);
  cr_expect_eq(s[WSISA_STATS_MEAN], (double)0.1f);
  cr_expect_eq(s[WSISA_STATS_STD], 0.0, "a flat channel has std exactly 0");
  cr_expect_float_eq(s[WSISA_STATS_MEAN + 1], 1.5, 1e-12);
  cr_expect_float_eq(s[WSISA_STATS_STD + 1], sqrt(1.25), 1e-12);
  cr_expect_float_eq(s[WSISA_STATS_STD + 2], sqrt(0.06), 1e-7);
  free_all((wsisa_image *[]){lab, mask}, 2);
}

static void masked_stats_cpu_and_opencl_agree(void) {
  wsisa_image *rgb, *lab, *fg;
  tile_lab(&rgb, &lab, &fg);
  double stats[WSISA_STATS_N];
  op_run run = {submit_masked_stats, {lab, fg}, 2, 0, WSISA_U8, WSISA_STATS_N,
                sizeof(double), {0}, 0};
  run_both_same(&run, stats);
  cr_expect_gt(stats[WSISA_STATS_COUNT], 0);
  free_all((wsisa_image *[]){rgb, lab, fg}, 3);
}

/* ---- color_transfer ---------------------------------------------------------- */

Test(color_transfer, cpu_kernel_matches_golden) {
  wsisa_image *lab = golden("lab_128.tiff"), *want = golden("transfer_128.tiff");
  wsisa_image *fg_full = golden("fisher_fg.png");
  wsisa_image fg = crop(fg_full, 0, 0, lab->width, lab->height);
  double stats[WSISA_STATS_N];
  golden_stats(stats);
  wsisa_image *got = new_image(lab->width, lab->height, 3, WSISA_F32);
  cr_assert_eq(wsisa_cpu_color_transfer(lab, &fg, stats, got), 0);
  double worst = f32_max_diff(got, want, NULL);
  cr_expect_leq(worst, 1e-6, "largest difference %g", worst);
  free_all((wsisa_image *[]){lab, want, fg_full, got}, 4);
}

Test(color_transfer, zero_count_and_zero_std_copy_unchanged) {
  wsisa_image *lab = new_image(3, 2, 3, WSISA_F32), *mask = new_image(3, 2, 1, WSISA_U8);
  wsisa_image *out = new_image(3, 2, 3, WSISA_F32);
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 3; x++)
      for (int c = 0; c < 3; c++) f32_at(lab, x, y)[c] = 0.25f * (float)(x + y + c) - 1;
  memset(wsisa_image_row(mask, 0), 255, 3); /* row 0 on, row 1 off */
  double none[WSISA_STATS_N] = {0};
  cr_assert_eq(wsisa_cpu_color_transfer(lab, mask, none, out), 0);
  cr_expect_eq(f32_max_diff(out, lab, NULL), 0.0, "no foreground: copy");
  /* Channel 1 has std 0: copied; channels 0 and 2 are transferred. */
  double stats[WSISA_STATS_N] = {3, -0.5, 0.0, 0.1, 0.2, 0.0, 0.4};
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  cr_assert_eq(wsisa_cpu_color_transfer(lab, mask, stats, out), 0);
  for (int x = 0; x < 3; x++) {
    const float *in = f32_at(lab, x, 0), *o = f32_at(out, x, 0);
    cr_expect_float_eq(o[0], (in[0] + 0.5) * k.std_target[0] / 0.2 + k.mean_target[0], 1e-6);
    cr_expect_eq(o[1], in[1]);
    cr_expect_float_eq(o[2], (in[2] - 0.1) * k.std_target[2] / 0.4 + k.mean_target[2], 1e-6);
    cr_expect_arr_eq(f32_at(out, x, 1), f32_at(lab, x, 1), 3 * sizeof(float), "mask off");
  }
  free_all((wsisa_image *[]){lab, mask, out}, 3);
}

static void color_transfer_cpu_and_opencl_agree(void) {
  wsisa_image *rgb, *lab, *fg;
  tile_lab(&rgb, &lab, &fg);
  op_run run = {submit_stats_then_transfer, {lab, fg}, 2, 3, WSISA_F32, 0, 0, {0}, 0};
  wsisa_image *out = run_both_same(&run, NULL);
  cr_expect_gt(f32_max_diff(out, lab, NULL), 0.1, "the foreground moved");
  free_all((wsisa_image *[]){rgb, lab, fg, out}, 4);
}

/* ---- lab2rgb ------------------------------------------------------------------- */

Test(lab2rgb, cpu_kernel_matches_golden) {
  wsisa_image *lab = golden("transfer_128.tiff"), *fg_full = golden("fisher_fg.png");
  wsisa_image *rgb_full = tile(), *want_full = golden("normalized.png");
  wsisa_image fg = crop(fg_full, 0, 0, lab->width, lab->height);
  wsisa_image rgb = crop(rgb_full, 0, 0, lab->width, lab->height);
  wsisa_image want = crop(want_full, 0, 0, lab->width, lab->height);
  wsisa_image *got = new_image(lab->width, lab->height, 3, WSISA_U8);
  cr_assert_eq(wsisa_cpu_lab2rgb(lab, &fg, &rgb, got), 0);
  int worst;
  size_t n = u8_diff(got, &want, &worst);
  cr_expect_leq(n * 1000, (size_t)(lab->width * lab->height), "%zu pixels differ", n);
  cr_expect_leq(worst, 1);
  free_all((wsisa_image *[]){lab, fg_full, rgb_full, want_full, got}, 4);
}

Test(lab2rgb, round_trip_background_copy_and_clamp) {
  /* Pixel 0: on, its own lαβ comes back as itself. Pixel 1: off, copied from
   * rgb_in. Pixel 2: on, l far above white, clamps to 255. */
  const uint8_t px[] = {200, 120, 90, 7, 8, 9, 10, 20, 30};
  wsisa_image *rgb = from_values(3, 1, 3, px), *lab = new_image(3, 1, 3, WSISA_F32);
  cr_assert_eq(wsisa_cpu_rgb2lab(rgb, lab), 0);
  f32_at(lab, 2, 0)[0] = 5.0f;
  f32_at(lab, 2, 0)[1] = f32_at(lab, 2, 0)[2] = 0.0f;
  const uint8_t m[] = {255, 0, 1};
  wsisa_image *mask = from_values(3, 1, 1, m), *out = new_image(3, 1, 3, WSISA_U8);
  cr_assert_eq(wsisa_cpu_lab2rgb(lab, mask, rgb, out), 0);
  const uint8_t expect[] = {200, 120, 90, 7, 8, 9, 255, 255, 255};
  cr_expect_arr_eq(wsisa_image_row(out, 0), expect, sizeof expect);
  free_all((wsisa_image *[]){rgb, lab, mask, out}, 4);
}

static void lab2rgb_cpu_and_opencl_agree(void) {
  wsisa_image *lab = golden("transfer_128.tiff"), *fg_full = golden("fisher_fg.png");
  wsisa_image *rgb_full = tile();
  wsisa_image fg = crop(fg_full, 0, 0, lab->width, lab->height);
  wsisa_image rgb = crop(rgb_full, 0, 0, lab->width, lab->height);
  op_run run = {submit_lab2rgb, {lab, &fg, &rgb}, 3, 3, WSISA_U8, 0, 0, {0}, 0};
  wsisa_image *cpu = run_on(STARPU_CPU, &run, NULL), *cl = run_on(STARPU_OPENCL, &run, NULL);
  int worst;
  size_t n = u8_diff(cpu, cl, &worst);
  cr_log_info("lab2rgb: CPU vs OpenCL: %zu of %d pixels differ (largest %d)", n,
              lab->width * lab->height, worst);
  cr_expect_leq(n * 1000, (size_t)(lab->width * lab->height));
  cr_expect_leq(worst, 1);
  free_all((wsisa_image *[]){lab, fg_full, rgb_full, cpu, cl}, 5);
}

/* ---- the normalization chain ---------------------------------------------------- */

static void normalize_chain_matches_golden_and_opencl(void) {
  wsisa_image *rgb = tile(), *want = golden("normalized.png");
  op_run run = {submit_normalize, {rgb}, 1, 3, WSISA_U8, 0, 0, {0}, 0};
  wsisa_image *cpu = run_on(STARPU_CPU, &run, NULL), *cl = run_on(STARPU_OPENCL, &run, NULL);
  const size_t npx = (size_t)rgb->width * rgb->height;
  int worst;
  size_t n = u8_diff(cpu, want, &worst);
  cr_log_info("normalize: CPU vs golden: %zu of %zu pixels differ (largest %d)", n, npx, worst);
  cr_expect_leq(n * 1000, npx, "%zu pixels differ from golden", n);
  cr_expect_leq(worst, 1);
  n = u8_diff(cpu, cl, &worst);
  cr_log_info("normalize: CPU vs OpenCL: %zu of %zu pixels differ (largest %d)", n, npx, worst);
  cr_expect_leq(n * 1000, npx);
  cr_expect_leq(worst, 1);
  cr_expect_gt(u8_diff(cpu, rgb, &worst), npx / 2, "the foreground changed colour");
  free_all((wsisa_image *[]){rgb, want, cpu, cl}, 4);
}

static void normalize_flat_tile_is_unchanged(void) {
  /* A single colour: every channel has std 0, so nothing is transferred and
   * the lαβ round trip gives the colour back. */
  wsisa_image *rgb = new_image(19, 11, 3, WSISA_U8);
  for (int y = 0; y < rgb->height; y++)
    for (int x = 0; x < rgb->width; x++) memcpy(u8_at(rgb, x, y), (uint8_t[]){180, 60, 150}, 3);
  op_run run = {submit_normalize, {rgb}, 1, 3, WSISA_U8, 0, 0, {0}, 0};
  wsisa_image *fg = new_image(19, 11, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_fisher_fg(rgb, fg), 0);
  cr_assert_eq(*u8_at(fg, 0, 0), 255, "the colour is foreground");
  wsisa_image *out = run_both_same(&run, NULL);
  cr_expect_eq(tu_image_diff(out, rgb), 0);
  free_all((wsisa_image *[]){rgb, fg, out}, 3);
}

static void normalize_refuses_mismatched_handles(void) {
  wsisa_image *rgb = tile(), *grey = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  starpu_data_handle_t a, b;
  cr_assert_eq(wsisa_image_register(rgb, &a, NULL), 0);
  cr_assert_eq(wsisa_image_register(grey, &b, NULL), 0);
  cr_expect_eq(wsisa_normalize_submit(a, b, rgb->width, rgb->height), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_normalize_submit(a, a, rgb->width + 1, rgb->height), WSISA_EINTERNAL);
  cr_expect_eq(wsisa_submit_rgb2lab(a, b), WSISA_EINTERNAL);
  starpu_data_unregister(a);
  starpu_data_unregister(b);
  free_all((wsisa_image *[]){rgb, grey}, 2);
}

/* ---- background ---------------------------------------------------------------- */

Test(background, cpu_kernel_matches_golden_and_is_strict) {
  wsisa_image *rgb = tile(), *m = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  wsisa_image *want = golden("background_220.png");
  cr_assert_eq(wsisa_cpu_background(rgb, 220, 220, 220, m), 0);
  cr_expect_eq(tu_image_diff(m, want), 0);
  wsisa_image_free(want);
  want = golden("background_210_220_230.png");
  cr_assert_eq(wsisa_cpu_background(rgb, 210, 220, 230, m), 0);
  cr_expect_eq(tu_image_diff(m, want), 0, "B, G, R reach the right channels");
  const uint8_t px[] = {221, 221, 221, 220, 221, 221, 221, 220, 221, 221, 221, 220};
  wsisa_image *small = from_values(4, 1, 3, px), *sm = new_image(4, 1, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_background(small, 220, 220, 220, sm), 0);
  cr_expect_arr_eq(wsisa_image_row(sm, 0), ((uint8_t[]){255, 0, 0, 0}), 4);
  free_all((wsisa_image *[]){rgb, m, want, small, sm}, 5);
}

static void background_cpu_and_opencl_agree(void) {
  wsisa_image *rgb = tile();
  op_run run = {submit_background, {rgb}, 1, 1, WSISA_U8, 0, 0, {210, 220, 230}, 0};
  wsisa_image *m = run_both_same(&run, NULL);
  wsisa_image *want = golden("background_210_220_230.png");
  cr_expect_eq(tu_image_diff(m, want), 0);
  free_all((wsisa_image *[]){rgb, m, want}, 3);
}

/* ---- ratio_mask ------------------------------------------------------------------ */

static const struct {
  const char *golden;
  int num, den;
  double threshold;
} ratio_cases[] = {
    {"ratio_rg_5.png", 0, 1, 5.0},
    {"ratio_rg_4.png", 0, 1, 4.0},
    {"ratio_rb_1.png", 0, 2, 1.0},
    {"ratio_bg_2.png", 2, 1, 2.0},
};

Test(ratio_mask, cpu_kernel_matches_golden) {
  wsisa_image *rgb = tile(), *m = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  for (size_t i = 0; i < sizeof ratio_cases / sizeof *ratio_cases; i++) {
    wsisa_image *want = golden(ratio_cases[i].golden);
    cr_assert_eq(wsisa_cpu_ratio_mask(rgb, ratio_cases[i].num, ratio_cases[i].den,
                                      ratio_cases[i].threshold, m),
                 0);
    cr_expect_eq(tu_image_diff(m, want), 0, "%s", ratio_cases[i].golden);
    wsisa_image_free(want);
  }
  free_all((wsisa_image *[]){rgb, m}, 2);
}

Test(ratio_mask, ties_zero_denominators_and_channels) {
  /* (r, g): 10/2 = 5 is not > 5; 11/2 is; r/0 is huge; 0/0 is 0. */
  const uint8_t px[] = {10, 2, 11, 2, 1, 0, 0, 0};
  wsisa_image *img = from_values(4, 1, 2, px), *m = new_image(4, 1, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_ratio_mask(img, 0, 1, 5.0, m), 0);
  cr_expect_arr_eq(wsisa_image_row(m, 0), ((uint8_t[]){0, 255, 255, 0}), 4);
  cr_assert_eq(wsisa_cpu_ratio_mask(img, 1, 0, -1.0, m), 0);
  cr_expect_arr_eq(wsisa_image_row(m, 0), ((uint8_t[]){255, 255, 255, 255}), 4,
                   "0 > −1 everywhere");
  cr_expect_eq(wsisa_cpu_ratio_mask(img, 2, 0, 1.0, m), WSISA_EINTERNAL);
  free_all((wsisa_image *[]){img, m}, 2);
}

Test(ratio_mask, table_is_the_per_pixel_division) {
  uint16_t first[256];
  const double thresholds[] = {0.0, 1.0, 2.5, 4.0, 5.0, 7.5, 100.0, 300.0};
  for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++) {
    wsisa_cpu_ratio_table(thresholds[t], first);
    for (int den = 0; den < 256; den++)
      for (int num = 0; num < 256; num++)
        cr_assert_eq(num >= first[den], (double)num / (den + (double)FLT_EPSILON) > thresholds[t],
                     "T %g: %d / %d", thresholds[t], num, den);
  }
}

static void ratio_mask_cpu_and_opencl_agree_and_refuse_bad_arguments(void) {
  wsisa_image *rgb = tile();
  for (size_t i = 0; i < sizeof ratio_cases / sizeof *ratio_cases; i++) {
    op_run run = {submit_ratio_mask, {rgb}, 1, 1, WSISA_U8, 0, 0,
                  {ratio_cases[i].num, ratio_cases[i].den, 0}, ratio_cases[i].threshold};
    wsisa_image *m = run_both_same(&run, NULL), *want = golden(ratio_cases[i].golden);
    cr_expect_eq(tu_image_diff(m, want), 0, "%s", ratio_cases[i].golden);
    free_all((wsisa_image *[]){m, want}, 2);
  }
  wsisa_image *m = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  starpu_data_handle_t h[2];
  cr_assert_eq(wsisa_image_register(rgb, &h[0], NULL), 0);
  cr_assert_eq(wsisa_image_register(m, &h[1], NULL), 0);
  cr_expect_eq(wsisa_submit_ratio_mask(h[0], h[1], 3, 1, 5.0), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_ratio_mask(h[0], h[1], 0, -1, 5.0), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_ratio_mask(h[0], h[1], 0, 1, NAN), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_ratio_mask(h[1], h[0], 0, 0, 5.0), WSISA_EINTERNAL);
  starpu_data_unregister(h[0]);
  starpu_data_unregister(h[1]);
  free_all((wsisa_image *[]){rgb, m}, 2);
}

/* ---- threshold, sub_sat ------------------------------------------------------------ */

Test(threshold, cpu_kernel_matches_golden_and_bounds) {
  wsisa_image *rgb = tile(), *g = channel(rgb, 1), *want = golden("threshold_g150.png");
  wsisa_image *m = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_threshold(g, 150, m), 0);
  cr_expect_eq(tu_image_diff(m, want), 0);
  wsisa_image *small = from_values(4, 1, 1, (uint8_t[]){0, 79, 80, 255});
  wsisa_image *sm = new_image(4, 1, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_threshold(small, 79, sm), 0);
  cr_expect_arr_eq(wsisa_image_row(sm, 0), ((uint8_t[]){0, 0, 255, 255}), 4);
  cr_assert_eq(wsisa_cpu_threshold(small, -1, sm), 0);
  cr_expect_arr_eq(wsisa_image_row(sm, 0), ((uint8_t[]){255, 255, 255, 255}), 4);
  cr_assert_eq(wsisa_cpu_threshold(small, 255, sm), 0);
  cr_expect_arr_eq(wsisa_image_row(sm, 0), ((uint8_t[]){0, 0, 0, 0}), 4);
  free_all((wsisa_image *[]){rgb, g, want, m, small, sm}, 6);
}

static void threshold_cpu_and_opencl_agree(void) {
  wsisa_image *rgb = tile(), *g = channel(rgb, 1);
  op_run run = {submit_threshold, {g}, 1, 1, WSISA_U8, 0, 0, {150, 0, 0}, 0};
  wsisa_image *m = run_both_same(&run, NULL), *want = golden("threshold_g150.png");
  cr_expect_eq(tu_image_diff(m, want), 0);
  free_all((wsisa_image *[]){rgb, g, m, want}, 4);
}

Test(sub_sat, cpu_kernel_matches_golden_and_saturates) {
  wsisa_image *rgb = tile(), *g = channel(rgb, 1), *r = channel(rgb, 0);
  wsisa_image *want = golden("sub_sat_g_r.png"), *out = new_image(rgb->width, rgb->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_sub_sat(g, r, out), 0);
  cr_expect_eq(tu_image_diff(out, want), 0);
  wsisa_image *a = from_values(3, 1, 1, (uint8_t[]){10, 10, 255});
  wsisa_image *b = from_values(3, 1, 1, (uint8_t[]){3, 200, 0});
  wsisa_image *d = new_image(3, 1, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_sub_sat(a, b, d), 0);
  cr_expect_arr_eq(wsisa_image_row(d, 0), ((uint8_t[]){7, 0, 255}), 3);
  free_all((wsisa_image *[]){rgb, g, r, want, out, a, b, d}, 8);
}

static void sub_sat_cpu_and_opencl_agree(void) {
  wsisa_image *rgb = tile(), *g = channel(rgb, 1), *r = channel(rgb, 0);
  op_run run = {submit_sub_sat, {g, r}, 2, 1, WSISA_U8, 0, 0, {0}, 0};
  wsisa_image *out = run_both_same(&run, NULL), *want = golden("sub_sat_g_r.png");
  cr_expect_eq(tu_image_diff(out, want), 0);
  free_all((wsisa_image *[]){rgb, g, r, out, want}, 5);
}

/* ---- mask_logic, compare ------------------------------------------------------------- */

static const char *const logic_golden[] = {"logic_and.png", "logic_or.png", "logic_andnot.png"};

Test(mask_logic, cpu_kernel_matches_golden_and_truth_table) {
  wsisa_image *a = golden("background_220.png"), *b = golden("ratio_rb_1.png");
  wsisa_image *out = new_image(a->width, a->height, 1, WSISA_U8);
  for (int op = 0; op < 3; op++) {
    wsisa_image *want = golden(logic_golden[op]);
    cr_assert_eq(wsisa_cpu_mask_logic(a, b, op, out), 0);
    cr_expect_eq(tu_image_diff(out, want), 0, "%s", logic_golden[op]);
    wsisa_image_free(want);
  }
  /* a = 0 0 1 255, b = 0 3 0 255 (any non-zero is on). */
  wsisa_image *sa = from_values(4, 1, 1, (uint8_t[]){0, 0, 1, 255});
  wsisa_image *sb = from_values(4, 1, 1, (uint8_t[]){0, 3, 0, 255});
  wsisa_image *so = new_image(4, 1, 1, WSISA_U8);
  const uint8_t expect[3][4] = {{0, 0, 0, 255}, {0, 255, 255, 255}, {0, 0, 255, 0}};
  for (int op = 0; op < 3; op++) {
    cr_assert_eq(wsisa_cpu_mask_logic(sa, sb, op, so), 0);
    cr_expect_arr_eq(wsisa_image_row(so, 0), expect[op], 4, "op %d", op);
  }
  cr_expect_eq(wsisa_cpu_mask_logic(sa, sb, 3, so), WSISA_EINTERNAL);
  free_all((wsisa_image *[]){a, b, out, sa, sb, so}, 6);
}

static void mask_logic_cpu_and_opencl_agree_and_refuse_unknown_op(void) {
  wsisa_image *a = golden("background_220.png"), *b = golden("ratio_rb_1.png");
  for (int op = 0; op < 3; op++) {
    op_run run = {submit_mask_logic, {a, b}, 2, 1, WSISA_U8, 0, 0, {op, 0, 0}, 0};
    wsisa_image *out = run_both_same(&run, NULL), *want = golden(logic_golden[op]);
    cr_expect_eq(tu_image_diff(out, want), 0, "%s", logic_golden[op]);
    free_all((wsisa_image *[]){out, want}, 2);
  }
  starpu_data_handle_t h[2];
  cr_assert_eq(wsisa_image_register(a, &h[0], NULL), 0);
  cr_assert_eq(wsisa_image_register(b, &h[1], NULL), 0);
  cr_expect_eq(wsisa_submit_mask_logic(h[0], h[1], h[1], (wsisa_mask_op)7), WSISA_EUSAGE);
  starpu_data_unregister(h[0]);
  starpu_data_unregister(h[1]);
  free_all((wsisa_image *[]){a, b}, 2);
}

static void golden_counts(uint64_t counts[3]) {
  FILE *f = fopen(tu_src("tests/golden/pixel/compare.txt"), "r");
  cr_assert(f);
  for (int i = 0; i < 3; i++) {
    unsigned long long v;
    cr_assert_eq(fscanf(f, "%llu", &v), 1);
    counts[i] = v;
  }
  fclose(f);
}

Test(compare, cpu_kernel_matches_golden_and_empty_masks) {
  wsisa_image *a = golden("background_220.png"), *b = golden("ratio_rb_1.png");
  uint64_t got[3], want[3];
  golden_counts(want);
  cr_assert_eq(wsisa_cpu_compare(a, b, got), 0);
  cr_expect_arr_eq(got, want, sizeof got);
  wsisa_image *empty = new_image(a->width, a->height, 1, WSISA_U8);
  cr_assert_eq(wsisa_cpu_compare(empty, b, got), 0);
  cr_expect_arr_eq(got, ((uint64_t[]){0, 0, want[2]}), sizeof got);
  cr_assert_eq(wsisa_cpu_compare(empty, empty, got), 0);
  cr_expect_arr_eq(got, ((uint64_t[]){0, 0, 0}), sizeof got);
  free_all((wsisa_image *[]){a, b, empty}, 3);
}

static void compare_cpu_and_opencl_agree(void) {
  wsisa_image *a = golden("background_220.png"), *b = golden("ratio_rb_1.png");
  uint64_t got[3], want[3];
  golden_counts(want);
  op_run run = {submit_compare, {a, b}, 2, 0, WSISA_U8, 3, sizeof(uint64_t), {0}, 0};
  run_both_same(&run, got);
  cr_expect_arr_eq(got, want, sizeof got);
  free_all((wsisa_image *[]){a, b}, 2);
}

/* ---- the codelets on both workers: one StarPU start per group of checks ---- */

/* Each normalization step, CPU worker against OpenCL worker. */
Test(pixel_workers, normalization_steps, STARPU_FIXTURE) {
  cr_assert(wsisa_runtime_active());
  fisher_fg_cpu_and_opencl_agree();
  rgb2lab_cpu_and_opencl_agree();
  masked_stats_cpu_and_opencl_agree();
  color_transfer_cpu_and_opencl_agree();
  lab2rgb_cpu_and_opencl_agree();
}

/* The whole chain: golden, OpenCL, a flat tile, refusals. */
Test(pixel_workers, normalization_chain, STARPU_FIXTURE) {
  cr_assert(wsisa_runtime_active());
  normalize_chain_matches_golden_and_opencl();
  normalize_flat_tile_is_unchanged();
  normalize_refuses_mismatched_handles();
}

/* The per-pixel segmentation operations on both workers, and refusals. */
Test(pixel_workers, segmentation_ops, STARPU_FIXTURE) {
  cr_assert(wsisa_runtime_active());
  background_cpu_and_opencl_agree();
  ratio_mask_cpu_and_opencl_agree_and_refuse_bad_arguments();
  threshold_cpu_and_opencl_agree();
  sub_sat_cpu_and_opencl_agree();
  mask_logic_cpu_and_opencl_agree_and_refuse_unknown_op();
  compare_cpu_and_opencl_agree();
}
