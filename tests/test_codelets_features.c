/* The feature stage's per-tile channels: colour deconvolution, Sobel magnitude
 * and the FFT filter bank. CPU kernels against known stain mixtures, hand
 * cases, a direct convolution and tests/golden/features (make_features.py);
 * every codelet on the CPU worker against the OpenCL worker. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static wsisa_image *golden(const char *name) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "tests/golden/features/%s", name);
  return load(path);
}

static wsisa_image *new_f32(int w, int h, int channels) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, channels, WSISA_F32, &img, NULL), 0);
  return img;
}

static float *f32_at(const wsisa_image *img, int x, int y) {
  return (float *)wsisa_image_row(img, y) + (size_t)x * img->channels;
}

/* The top-left w × h of img as a view. */
static wsisa_image top_left(const wsisa_image *img, int w, int h) {
  return wsisa_image_view(img->data, w, h, img->channels, img->type, img->stride);
}

/* Largest |a - b| over every sample; a and b have the same shape. */
static double max_abs_diff(const wsisa_image *a, const wsisa_image *b) {
  cr_assert(a->width == b->width && a->height == b->height && a->channels == b->channels);
  double worst = 0;
  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width * a->channels; x++)
      worst = fmax(worst, fabs((double)f32_at(a, 0, y)[x] - f32_at(b, 0, y)[x]));
  return worst;
}

static void free_all(wsisa_image **imgs, int n) {
  for (int i = 0; i < n; i++) wsisa_image_free(imgs[i]);
}

/* ---- deconv ------------------------------------------------------------- */

static void deconv_cpu(const wsisa_image *rgb, const float *stains, wsisa_image *out[3]) {
  wsisa_deconv_consts k;
  cr_assert_eq(wsisa_cpu_deconv_setup(stains, &k), 0);
  for (int i = 0; i < 3; i++) out[i] = new_f32(rgb->width, rgb->height, 1);
  cr_assert_eq(wsisa_cpu_deconv(rgb, &k, out[0], out[1], out[2]), 0);
}

Test(deconv, default_residual_is_the_unit_normal_of_h_and_e) {
  const float *s = wsisa_stains_he;
  double dot_h = 0, dot_e = 0, norm = 0;
  for (int c = 0; c < 3; c++) {
    dot_h += (double)s[6 + c] * s[c];
    dot_e += (double)s[6 + c] * s[3 + c];
    norm += (double)s[6 + c] * s[6 + c];
  }
  cr_expect_lt(fabs(dot_h), 1e-7);
  cr_expect_lt(fabs(dot_e), 1e-7);
  cr_expect_lt(fabs(norm - 1), 1e-7);
  cr_expect_eq(s[0], 0.65f);
  cr_expect_eq(s[4], 0.99f);
}

/* Pixels made by the forward model od = cH·H + cE·E + cR·R, I = 255·10^-od,
 * rounded to u8, come back within the error rounding allows: an intensity
 * v stands for one in [v - 1/2, v + 1/2], so od_c is off by at most
 * log10(v / (v - 1/2)), and amount j by Σ_c |m[c][j]| times that. */
Test(deconv, recovers_known_stain_mixtures_within_quantisation_error) {
  const double amounts_h[] = {0, 0.05, 0.2, 0.5, 0.9, 1.4};
  const double amounts_e[] = {0, 0.1, 0.3, 0.7, 1.2};
  const double amounts_r[] = {0, 0.02, 0.08};
  enum { MAX_PIXELS = 6 * 5 * 3 };
  const float *s = wsisa_stains_he;
  wsisa_deconv_consts k;
  cr_assert_eq(wsisa_cpu_deconv_setup(s, &k), 0);
  wsisa_image *rgb = NULL;
  cr_assert_eq(wsisa_image_new(MAX_PIXELS, 1, 3, WSISA_U8, &rgb, NULL), 0);
  double truth[MAX_PIXELS][3];
  int n = 0;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 5; j++)
      for (int r = 0; r < 3; r++) {
        double c[3] = {amounts_h[i], amounts_e[j], amounts_r[r]};
        uint8_t v[3];
        int usable = 1;
        for (int ch = 0; ch < 3; ch++) {
          double od = c[0] * s[ch] + c[1] * s[3 + ch] + c[2] * s[6 + ch];
          double level = floor(255.0 * pow(10.0, -od) + 0.5);
          usable &= od >= 0 && level >= 1;
          v[ch] = (uint8_t)(level > 255 ? 255 : level);
        }
        if (!usable) continue;
        memcpy((uint8_t *)rgb->data + 3 * n, v, 3);
        memcpy(truth[n++], c, sizeof c);
      }
  cr_assert_gt(n, 60, "too few mixtures inside the u8 range");
  rgb->width = n;
  wsisa_image *out[3];
  deconv_cpu(rgb, s, out);
  for (int p = 0; p < n; p++) {
    const uint8_t *v = (uint8_t *)rgb->data + 3 * p;
    for (int j = 0; j < 3; j++) {
      double bound = 1e-5;
      for (int ch = 0; ch < 3; ch++)
        bound += fabs(k.m[3 * ch + j]) * log10(v[ch] / (v[ch] - 0.5));
      double got = f32_at(out[j], p, 0)[0];
      cr_expect_leq(fabs(got - truth[p][j]), bound, "mixture %d (%g %g %g) amount %d: %g",
                    p, truth[p][0], truth[p][1], truth[p][2], j, got);
    }
  }
  wsisa_image_free(rgb);
  free_all(out, 3);
}

Test(deconv, white_is_no_stain_and_black_is_the_floor) {
  uint8_t px[6] = {255, 255, 255, 0, 0, 0};
  wsisa_image rgb = wsisa_image_view(px, 2, 1, 3, WSISA_U8, 6);
  wsisa_image *out[3];
  deconv_cpu(&rgb, wsisa_stains_he, out);
  for (int j = 0; j < 3; j++) cr_expect_eq(f32_at(out[j], 0, 0)[0], 0.0f);
  /* od = (6, 6, 6): amounts = 6 · (column sums of stains⁻¹) */
  wsisa_deconv_consts k;
  cr_assert_eq(wsisa_cpu_deconv_setup(wsisa_stains_he, &k), 0);
  for (int j = 0; j < 3; j++) {
    double want = 6.0 * ((double)k.m[j] + k.m[3 + j] + k.m[6 + j]);
    cr_expect_lt(fabs(f32_at(out[j], 1, 0)[0] - want), 1e-5);
  }
  free_all(out, 3);
}

Test(deconv, singular_or_non_finite_stains_are_refused) {
  wsisa_deconv_consts k;
  float twice_h[9] = {0.65f, 0.70f, 0.29f, 0.65f, 0.70f, 0.29f, 0, 0, 1};
  float zero_row[9] = {0.65f, 0.70f, 0.29f, 0, 0, 0, 0, 0, 1};
  float nan_entry[9] = {0.65f, 0.70f, 0.29f, 0.07f, NAN, 0.11f, 0, 0, 1};
  cr_expect_eq(wsisa_cpu_deconv_setup(twice_h, &k), WSISA_EUSAGE);
  cr_expect_eq(wsisa_cpu_deconv_setup(zero_row, &k), WSISA_EUSAGE);
  cr_expect_eq(wsisa_cpu_deconv_setup(nan_entry, &k), WSISA_EUSAGE);
  float identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  cr_assert_eq(wsisa_cpu_deconv_setup(identity, &k), 0);
  cr_expect_eq(k.m[0], 1.0f);
  cr_expect_eq(k.m[1], 0.0f);
}

/* skimage clips amounts at 0 and scales the density by 1/6 (make_features.py
 * undoes the scale): compare max(ours, 0). */
Test(deconv, cpu_kernel_matches_skimage_separate_stains) {
  wsisa_image *tile = load("tests/data/tile_256.png"), *want = golden("hed_128.tiff");
  wsisa_image rgb = top_left(tile, want->width, want->height);
  wsisa_image *out[3];
  deconv_cpu(&rgb, wsisa_stains_he, out);
  double worst = 0;
  for (int y = 0; y < want->height; y++)
    for (int x = 0; x < want->width; x++)
      for (int j = 0; j < 3; j++)
        worst = fmax(worst, fabs(fmax(f32_at(out[j], x, y)[0], 0.0) - f32_at(want, x, y)[j]));
  cr_log_info("deconv vs skimage: max abs difference %g", worst);
  cr_expect_leq(worst, 4e-6, "max |ours - skimage| = %g", worst);
  wsisa_image_free(tile);
  wsisa_image_free(want);
  free_all(out, 3);
}

static int submit_deconv(starpu_data_handle_t *h, void *arg) {
  return wsisa_submit_deconv(h[0], arg, h[1], h[2], h[3]);
}

static void deconv_on(uint32_t where, wsisa_image *rgb, const float *stains, wsisa_image *out[3]) {
  for (int i = 0; i < 3; i++) out[i] = new_f32(rgb->width, rgb->height, 1);
  wsisa_image *imgs[] = {rgb, out[0], out[1], out[2]};
  cr_assert_eq(tu_run_op(where, imgs, 4, submit_deconv, (void *)stains), 0);
}

/* Runs under StarPU: one start serves both checks. */
static void deconv_submit_refuses_singular_stains_and_wrong_shapes(wsisa_image *rgb) {
  wsisa_image *out[3];
  for (int i = 0; i < 3; i++) out[i] = new_f32(rgb->width, rgb->height, 1);
  wsisa_image *imgs[] = {rgb, out[0], out[1], out[2]};
  float flat[9] = {0};
  cr_expect_eq(tu_run_op(STARPU_CPU, imgs, 4, submit_deconv, flat), WSISA_EUSAGE);
  wsisa_image *small = new_f32(5, 5, 1);
  wsisa_image *bad[] = {rgb, out[0], small, out[2]};
  cr_expect_eq(tu_run_op(STARPU_CPU, bad, 4, submit_deconv, NULL), WSISA_EINTERNAL);
  wsisa_image_free(small);
  free_all(out, 3);
}

Test(deconv, cpu_and_opencl_are_bit_identical_and_bad_input_is_refused, STARPU_FIXTURE) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *rgb = load("tests/data/tile_256.png");
  /* the defaults, and a matrix of other stains (no row order assumed) */
  const float *stains[] = {NULL, (const float[9]){0.27f, 0.57f, 0.78f, 0.65f, 0.70f, 0.29f,
                                                  0.07f, 0.99f, 0.11f}};
  for (int s = 0; s < 2; s++) {
    wsisa_image *cpu[3], *cl[3];
    deconv_on(STARPU_CPU, rgb, stains[s], cpu);
    deconv_on(STARPU_OPENCL, rgb, stains[s], cl);
    for (int j = 0; j < 3; j++) cr_expect_eq(tu_image_diff(cpu[j], cl[j]), 0, "stains %d, channel %d", s, j);
    if (s == 0) {
      wsisa_image *direct[3];
      deconv_cpu(rgb, wsisa_stains_he, direct);
      for (int j = 0; j < 3; j++) cr_expect_eq(tu_image_diff(cpu[j], direct[j]), 0);
      free_all(direct, 3);
    }
    free_all(cpu, 3);
    free_all(cl, 3);
  }
  deconv_submit_refuses_singular_stains_and_wrong_shapes(rgb);
  wsisa_image_free(rgb);
}


/* ---- sobel ------------------------------------------------------------- */

static wsisa_image *sobel_cpu(const wsisa_image *in) {
  wsisa_image *mag = new_f32(in->width, in->height, 1);
  cr_assert_eq(wsisa_cpu_sobel(in, mag), 0);
  return mag;
}

Test(sobel, hand_computed_cases) {
  /* a vertical step: rows equal (gy = 0), gx = 4 on the two columns beside it */
  float step[12] = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  wsisa_image in = wsisa_image_view(step, 4, 3, 1, WSISA_F32, 4 * sizeof(float));
  wsisa_image *mag = sobel_cpu(&in);
  const float want_step[4] = {0, 4, 4, 0};
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 4; x++) cr_expect_eq(f32_at(mag, x, y)[0], want_step[x], "(%d, %d)", x, y);
  wsisa_image_free(mag);
  /* one bright pixel: edges repeat, so the corners see (1, 1) and the sides 2 */
  float dot[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
  in = wsisa_image_view(dot, 3, 3, 1, WSISA_F32, 3 * sizeof(float));
  mag = sobel_cpu(&in);
  const float r2 = sqrtf(2.0f);
  const float want_dot[9] = {r2, 2, r2, 2, 0, 2, r2, 2, r2};
  for (int i = 0; i < 9; i++) cr_expect_eq(f32_at(mag, i % 3, i / 3)[0], want_dot[i], "pixel %d", i);
  wsisa_image_free(mag);
  /* a single pixel and a single row: no gradient to see */
  float one[3] = {5, 5, 5};
  in = wsisa_image_view(one, 3, 1, 1, WSISA_F32, 3 * sizeof(float));
  mag = sobel_cpu(&in);
  for (int x = 0; x < 3; x++) cr_expect_eq(f32_at(mag, x, 0)[0], 0.0f);
  wsisa_image_free(mag);
}

/* The green channel as g / 255, the input make_features.py uses. */
static wsisa_image *green_f32(int w, int h) {
  wsisa_image *tile = load("tests/data/tile_256.png");
  wsisa_image *g = new_f32(w, h, 1);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      f32_at(g, x, y)[0] = (float)((uint8_t *)wsisa_image_row(tile, y))[3 * x + 1] / 255.0f;
  wsisa_image_free(tile);
  return g;
}

Test(sobel, cpu_kernel_matches_scipy) {
  wsisa_image *want = golden("sobel_g.tiff");
  wsisa_image *g = green_f32(want->width, want->height), *mag = sobel_cpu(g);
  double worst = max_abs_diff(mag, want);
  cr_log_info("sobel vs scipy: max abs difference %g", worst);
  cr_expect_leq(worst, 2e-6, "max |ours - scipy| = %g", worst);
  wsisa_image_free(want);
  wsisa_image_free(g);
  wsisa_image_free(mag);
}

static int submit_sobel(starpu_data_handle_t *h, void *arg) {
  (void)arg;
  return wsisa_submit_sobel(h[0], h[1]);
}

static wsisa_image *sobel_on(uint32_t where, wsisa_image *in) {
  wsisa_image *mag = new_f32(in->width, in->height, 1);
  wsisa_image *imgs[] = {in, mag};
  cr_assert_eq(tu_run_op(where, imgs, 2, submit_sobel, NULL), 0);
  return mag;
}

Test(sobel, cpu_and_opencl_are_bit_identical, STARPU_FIXTURE) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *rgb = load("tests/data/tile_256.png"), *hed[3];
  deconv_cpu(rgb, wsisa_stains_he, hed);
  wsisa_image *g = green_f32(1, 7); /* one column: both sides are edges */
  wsisa_image *inputs[] = {hed[0], g};
  for (int i = 0; i < 2; i++) {
    wsisa_image *cpu = sobel_on(STARPU_CPU, inputs[i]), *cl = sobel_on(STARPU_OPENCL, inputs[i]);
    wsisa_image *direct = sobel_cpu(inputs[i]);
    cr_expect_eq(tu_image_diff(cpu, cl), 0, "input %d", i);
    cr_expect_eq(tu_image_diff(cpu, direct), 0, "input %d", i);
    wsisa_image_free(cpu);
    wsisa_image_free(cl);
    wsisa_image_free(direct);
  }
  wsisa_image_free(rgb);
  wsisa_image_free(g);
  free_all(hed, 3);
}

/* ---- filter_bank ---------------------------------------------------------- */

static const float default_scales[] = WSISA_FILTER_BANK_DEFAULT_SCALES;
#define NDEFAULT ((int)(sizeof default_scales / sizeof *default_scales))

/* Deterministic texture with edges and blobs, values in [0, 3). */
static wsisa_image *pattern(int w, int h) {
  wsisa_image *img = new_f32(w, h, 1);
  uint32_t state = 12345u;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      state = state * 1664525u + 1013904223u;
      float noise = (float)(state >> 8) / (float)(1u << 24);
      f32_at(img, x, y)[0] = (x * 7 / w + y * 5 / h) % 2 + noise + (x == w / 2 ? 1.0f : 0.0f);
    }
  return img;
}

/* Mirror i into 0..n-1 by repeated folding (d c b a | a b c d | d c b a). */
static int fold(int i, int n) {
  while (i < 0 || i >= n) i = i < 0 ? -1 - i : 2 * n - 1 - i;
  return i;
}

/* The definition: a 2-D convolution in double with the sampled kernel. */
static void log_direct(const wsisa_image *in, float sigma, double *out) {
  const int r = wsisa_cpu_log_radius(sigma), n = 2 * r + 1;
  float *g = malloc(sizeof(float) * 2 * n), *g2 = g + n;
  cr_assert(g);
  wsisa_cpu_log_taps(sigma, g, g2);
  for (int y = 0; y < in->height; y++)
    for (int x = 0; x < in->width; x++) {
      double sum = 0;
      for (int j = -r; j <= r; j++)
        for (int i = -r; i <= r; i++)
          sum += ((double)g2[i + r] * g[j + r] + (double)g[i + r] * g2[j + r]) *
                 f32_at(in, fold(x + i, in->width), fold(y + j, in->height))[0];
      out[(size_t)y * in->width + x] = sum;
    }
  free(g);
}

static void filter_bank_cpu(const wsisa_image *in, const float *sigmas, int n, wsisa_image **out) {
  for (int s = 0; s < n; s++) out[s] = new_f32(in->width, in->height, 1);
  cr_assert_eq(wsisa_cpu_filter_bank(in, sigmas, n, out), 0);
}

/* Worst |got - direct| over the image, in units of the direct response's
 * largest magnitude. */
static double worst_vs_direct(const wsisa_image *in, float sigma, const wsisa_image *got) {
  double *want = malloc(sizeof(double) * in->width * in->height), top = 0, worst = 0;
  cr_assert(want);
  log_direct(in, sigma, want);
  for (int y = 0; y < in->height; y++)
    for (int x = 0; x < in->width; x++) {
      double w = want[(size_t)y * in->width + x];
      top = fmax(top, fabs(w));
      worst = fmax(worst, fabs(f32_at(got, x, y)[0] - w));
    }
  free(want);
  return worst / top;
}

Test(filter_bank, taps_are_scipys_sampled_gaussian_and_its_second_derivative) {
  cr_expect_eq(wsisa_cpu_log_radius(1.0f), 4);
  cr_expect_eq(wsisa_cpu_log_radius(2.0f), 8);
  cr_expect_eq(wsisa_cpu_log_radius(4.0f), 16);
  float g[9], g2[9];
  wsisa_cpu_log_taps(1.0f, g, g2);
  double sum = 0;
  for (int i = 0; i < 9; i++) sum += g[i];
  cr_expect_lt(fabs(sum - 1), 1e-6);
  cr_expect_eq(g[0], g[8]);
  cr_expect_lt(fabs(g2[4] + g[4]), 1e-7, "g2(0) = -g(0) at sigma 1");
  cr_expect_lt(fabs(g2[5]), 1e-7, "g2(1) = 0 at sigma 1");
  for (int i = -7; i <= 7; i++) cr_expect_eq(fold(i, 3), wsisa_cpu_reflect(i, 3), "i = %d", i);
}

Test(filter_bank, fft_equals_direct_convolution) {
  /* odd sizes, a kernel wider than the image, and a tile of no power of two */
  const int sizes[][2] = {{37, 29}, {5, 3}, {150, 100}};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    wsisa_image *in = pattern(sizes[k][0], sizes[k][1]), *out[NDEFAULT];
    filter_bank_cpu(in, default_scales, NDEFAULT, out);
    for (int s = 0; s < NDEFAULT; s++) {
      double worst = worst_vs_direct(in, default_scales[s], out[s]);
      cr_log_info("filter_bank %dx%d sigma %g: FFT vs direct, max error %g of the peak",
                  in->width, in->height, default_scales[s], worst);
      cr_expect_leq(worst, 1e-5, "%dx%d sigma %g: %g", in->width, in->height,
                    default_scales[s], worst);
    }
    wsisa_image_free(in);
    free_all(out, NDEFAULT);
  }
}

Test(filter_bank, cpu_kernel_matches_scipy_gaussian_laplace) {
  wsisa_image *h = golden("h_128.tiff"), *out[NDEFAULT];
  filter_bank_cpu(h, default_scales, NDEFAULT, out);
  for (int s = 0; s < NDEFAULT; s++) {
    char name[32];
    snprintf(name, sizeof name, "log_%d.tiff", (int)default_scales[s]);
    wsisa_image *want = golden(name);
    double worst = max_abs_diff(out[s], want);
    cr_log_info("filter_bank vs scipy, sigma %g: max abs difference %g", default_scales[s], worst);
    cr_expect_leq(worst, 1e-5, "sigma %g: %g", default_scales[s], worst);
    wsisa_image_free(want);
  }
  wsisa_image_free(h);
  free_all(out, NDEFAULT);
}

Test(filter_bank, plans_are_made_once_per_size_and_wisdom_is_kept) {
  wsisa_image *in = pattern(61, 43), *out[NDEFAULT];
  unsigned long before = wsisa__cpu_filter_bank_plans_made();
  filter_bank_cpu(in, default_scales, NDEFAULT, out);
  cr_expect_eq(wsisa__cpu_filter_bank_plans_made(), before + 2, "one r2c and one c2r plan");
  float first = f32_at(out[2], 30, 20)[0];
  free_all(out, NDEFAULT);
  filter_bank_cpu(in, default_scales, NDEFAULT, out);
  cr_expect_eq(wsisa__cpu_filter_bank_plans_made(), before + 2, "the same size planned again");
  cr_expect_eq(f32_at(out[2], 30, 20)[0], first);
  free_all(out, NDEFAULT);
  wsisa_image_free(in);
  const char *home = getenv("STARPU_HOME");
  char host[256], path[WSISA_PATH_MAX];
  if (home && *home && gethostname(host, sizeof host) == 0) {
    tu_path(path, "%s/wsisa/fftw-wisdom-%s", home, host);
    cr_expect_eq(access(path, R_OK), 0, "%s: no wisdom saved", path);
  }
}

static int submit_filter_bank(starpu_data_handle_t *h, void *arg) {
  const int *n = arg;
  return wsisa_submit_filter_bank(h[0], default_scales, *n, h + 1);
}

static void filter_bank_on(uint32_t where, wsisa_image *in, wsisa_image **out) {
  int n = NDEFAULT;
  wsisa_image *imgs[1 + NDEFAULT] = {in};
  for (int s = 0; s < n; s++) imgs[1 + s] = out[s] = new_f32(in->width, in->height, 1);
  cr_assert_eq(tu_run_op(where, imgs, 1 + n, submit_filter_bank, &n), 0);
}

/* Runs under StarPU: one start serves both checks. */
static void filter_bank_submit_refuses_bad_scales(void) {
  wsisa_image *in = pattern(8, 8), *out = new_f32(8, 8, 1);
  starpu_data_handle_t h[2];
  cr_assert_eq(wsisa_image_register(in, &h[0], NULL), 0);
  cr_assert_eq(wsisa_image_register(out, &h[1], NULL), 0);
  const float zero = 0, huge = 40, nan = NAN, one = 1;
  cr_expect_eq(wsisa_submit_filter_bank(h[0], &zero, 1, h + 1), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_filter_bank(h[0], &huge, 1, h + 1), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_filter_bank(h[0], &nan, 1, h + 1), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_filter_bank(h[0], &one, 0, h + 1), WSISA_EUSAGE);
  cr_expect_eq(wsisa_submit_filter_bank(h[0], default_scales, 8, h + 1), WSISA_EUSAGE);
  starpu_data_unregister(h[0]);
  starpu_data_unregister(h[1]);
  wsisa_image_free(in);
  wsisa_image_free(out);
}

Test(filter_bank, cpu_and_opencl_agree_to_rounding_and_bad_scales_are_refused, STARPU_FIXTURE) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *rgb = load("tests/data/tile_256.png"), *hed[3];
  deconv_cpu(rgb, wsisa_stains_he, hed);
  wsisa_image *small = pattern(37, 29), *inputs[] = {hed[0], small};
  for (int i = 0; i < 2; i++) {
    wsisa_image *cpu[NDEFAULT], *cl[NDEFAULT];
    filter_bank_on(STARPU_CPU, inputs[i], cpu);
    filter_bank_on(STARPU_OPENCL, inputs[i], cl);
    for (int s = 0; s < NDEFAULT; s++) {
      double worst = max_abs_diff(cpu[s], cl[s]), top = 0, rel = 0;
      for (int y = 0; y < cpu[s]->height; y++)
        for (int x = 0; x < cpu[s]->width; x++) {
          double c = f32_at(cpu[s], x, y)[0], d = fabs(c - f32_at(cl[s], x, y)[0]);
          top = fmax(top, fabs(c));
          if (fabs(c) > 1e-2) rel = fmax(rel, d / fabs(c));
        }
      cr_log_info("filter_bank %dx%d sigma %g: CPU vs OpenCL max abs %g (peak %g), max rel "
                  "%g where |response| > 0.01",
                  inputs[i]->width, inputs[i]->height, default_scales[s], worst, top, rel);
      cr_expect_leq(worst, 1e-5 * top, "input %d sigma %g", i, default_scales[s]);
    }
    free_all(cpu, NDEFAULT);
    free_all(cl, NDEFAULT);
  }
  filter_bank_submit_refuses_bad_scales();
  wsisa_image_free(rgb);
  wsisa_image_free(small);
  free_all(hed, 3);
}

