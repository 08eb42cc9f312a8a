/* The per-nucleus reduction: synthetic shapes and channels with known answers,
 * the codelet forced on the CPU and on the OpenCL worker against the kernel
 * (same bytes), and scikit-image regionprops on the labels of
 * tests/data/tile_256.png (tests/golden/make_nucleus.py). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/csv.h"
#include "io/io.h"
#include "tests/testutil.h"

#define PI 3.14159265358979323846

static wsisa_image *labels_new(int w, int h) {
  wsisa_image *img = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_I32, &img, NULL), 0);
  return img;
}

static void put(wsisa_image *l, int x, int y, int32_t id) {
  ((int32_t *)wsisa_image_row(l, y))[x] = id;
}

static void rect(wsisa_image *l, int x0, int y0, int w, int h, int32_t id) {
  for (int y = y0; y < y0 + h; y++)
    for (int x = x0; x < x0 + w; x++) put(l, x, y, id);
}

/* Pixels whose centre is in the ellipse of semi-axes a (along angle theta from
 * the x axis, y pointing down) and b around (cx, cy). */
static void ellipse(wsisa_image *l, double cx, double cy, double a, double b, double theta,
                    int32_t id) {
  for (int y = 0; y < l->height; y++)
    for (int x = 0; x < l->width; x++) {
      double dx = x - cx, dy = y - cy;
      double u = dx * cos(theta) + dy * sin(theta), v = -dx * sin(theta) + dy * cos(theta);
      if (u * u / (a * a) + v * v / (b * b) <= 1) put(l, x, y, id);
    }
}

static double *features(const wsisa_image *labels, int32_t n, const wsisa_image *const *ch,
                        int nch) {
  double *rows = calloc((size_t)n * WSISA_NF_ROW(nch), sizeof *rows);
  cr_assert(rows);
  cr_assert_eq(wsisa_cpu_nucleus_features(labels, n, ch, nch, rows), 0);
  return rows;
}

Test(nucleus, rectangle_is_exact) {
  wsisa_image *l = labels_new(16, 12);
  rect(l, 3, 2, 7, 5, 1);
  double *r = features(l, 1, NULL, 0);
  cr_expect_eq(r[WSISA_NF_LABEL], 1);
  cr_expect_eq(r[WSISA_NF_AREA], 35);
  cr_expect_eq(r[WSISA_NF_CENTROID_X], 6);
  cr_expect_eq(r[WSISA_NF_CENTROID_Y], 4);
  cr_expect_eq(r[WSISA_NF_BBOX_X], 3);
  cr_expect_eq(r[WSISA_NF_BBOX_Y], 2);
  cr_expect_eq(r[WSISA_NF_BBOX_W], 7);
  cr_expect_eq(r[WSISA_NF_BBOX_H], 5);
  /* every border pixel weighs 1 on a rectangle: 2 (w + h) - 4 of them */
  cr_expect_float_eq(r[WSISA_NF_PERIMETER], 20, 1e-12);
  cr_expect_eq(r[WSISA_NF_CONVEX_AREA], 35);
  cr_expect_eq(r[WSISA_NF_SOLIDITY], 1);
  /* variances (w² - 1)/12 = 4 along x, 2 along y */
  cr_expect_float_eq(r[WSISA_NF_MAJOR_AXIS], 8, 1e-12);
  cr_expect_float_eq(r[WSISA_NF_MINOR_AXIS], 4 * sqrt(2), 1e-12);
  cr_expect_float_eq(r[WSISA_NF_ECCENTRICITY], sqrt(0.5), 1e-12);
  cr_expect_float_eq(fabs(r[WSISA_NF_ORIENTATION]), PI / 2, 1e-12);
  cr_expect_float_eq(r[WSISA_NF_EQUIV_DIAMETER], sqrt(4 * 35 / PI), 1e-12);
  free(r);
  wsisa_image_free(l);
}

Test(nucleus, single_pixel_and_touching_the_edge) {
  wsisa_image *l = labels_new(5, 4);
  put(l, 2, 2, 1);
  rect(l, 0, 0, 5, 1, 2); /* along the top edge: outside pixels do not exist */
  double *r = features(l, 2, NULL, 0);
  cr_expect_eq(r[WSISA_NF_AREA], 1);
  cr_expect_eq(r[WSISA_NF_CONVEX_AREA], 1);
  cr_expect_eq(r[WSISA_NF_ECCENTRICITY], 0);
  cr_expect_eq(r[WSISA_NF_PERIMETER], 0); /* regionprops: a lone pixel has no chain */
  const double *s = r + WSISA_NF_ROW(0);
  cr_expect_eq(s[WSISA_NF_AREA], 5);
  cr_expect_eq(s[WSISA_NF_SOLIDITY], 1);
  cr_expect_eq(s[WSISA_NF_ECCENTRICITY], 1);
  free(r);
  wsisa_image_free(l);
}

Test(nucleus, disc) {
  wsisa_image *l = labels_new(64, 64);
  ellipse(l, 31.5, 32.25, 20, 20, 0, 1);
  double *r = features(l, 1, NULL, 0);
  cr_expect(fabs(r[WSISA_NF_AREA] - PI * 400) < 0.01 * PI * 400, "area %g", r[WSISA_NF_AREA]);
  cr_expect_lt(r[WSISA_NF_ECCENTRICITY], 0.1);
  /* the hull runs through pixel edge midpoints, half a pixel outside the
   * centres: regionprops gives this digital disc 1258 / 1288 = 0.977 */
  cr_expect_eq(r[WSISA_NF_AREA], 1258);
  cr_expect_eq(r[WSISA_NF_CONVEX_AREA], 1288);
  cr_expect_gt(r[WSISA_NF_SOLIDITY], 0.97);
  cr_expect_leq(r[WSISA_NF_SOLIDITY], 1);
  cr_expect(fabs(r[WSISA_NF_PERIMETER] - 2 * PI * 20) < 0.05 * 2 * PI * 20, "perimeter %g",
            r[WSISA_NF_PERIMETER]);
  cr_expect_float_eq(r[WSISA_NF_CENTROID_X], 31.5, 1e-9);
  cr_expect_float_eq(r[WSISA_NF_EQUIV_DIAMETER], 40, 0.2);
  free(r);
  wsisa_image_free(l);
}

Test(nucleus, ellipses_axes_and_orientation) {
  const double thetas[] = {0, PI / 6, -PI / 4, PI / 3};
  for (size_t i = 0; i < sizeof thetas / sizeof *thetas; i++) {
    wsisa_image *l = labels_new(96, 96);
    ellipse(l, 48, 47.5, 30, 12, thetas[i], 1);
    double *r = features(l, 1, NULL, 0);
    cr_expect_float_eq(r[WSISA_NF_MAJOR_AXIS], 60, 0.6, "theta %g: major %g", thetas[i],
                       r[WSISA_NF_MAJOR_AXIS]);
    cr_expect_float_eq(r[WSISA_NF_MINOR_AXIS], 24, 0.6, "minor %g", r[WSISA_NF_MINOR_AXIS]);
    cr_expect_float_eq(r[WSISA_NF_ECCENTRICITY], sqrt(1 - 144.0 / 900), 0.01);
    cr_expect_float_eq(r[WSISA_NF_AREA], PI * 30 * 12, 0.01 * PI * 30 * 12);
    cr_expect_gt(r[WSISA_NF_SOLIDITY], 0.96);
    /* the angle from the row axis to the major axis: π/2 - theta, in -π/2..π/2 */
    double want = PI / 2 - thetas[i];
    if (want > PI / 2 - 1e-9) want -= PI;
    double got = r[WSISA_NF_ORIENTATION];
    double d = fmin(fabs(got - want), fabs(fabs(got - want) - PI));
    cr_expect_lt(d, 0.02, "theta %g: orientation %g, want %g", thetas[i], got, want);
    free(r);
    wsisa_image_free(l);
  }
}

Test(nucleus, l_shape_solidity) {
  /* a 2x6 bar on a 6x2 foot: 20 pixels. The hull's slanted side joins the
   * right edge midpoint of the bar's top-right pixel to the top edge midpoint
   * of the foot's last pixel (x - y = 1.5 relative to the top-left pixel), so
   * rows hold 2, 3, 4, 5, 6, 6 centres: 26. */
  wsisa_image *l = labels_new(12, 12);
  rect(l, 2, 2, 2, 6, 1);
  rect(l, 2, 6, 6, 2, 1);
  double *r = features(l, 1, NULL, 0);
  cr_expect_eq(r[WSISA_NF_AREA], 20);
  cr_expect_eq(r[WSISA_NF_CONVEX_AREA], 26);
  cr_expect_float_eq(r[WSISA_NF_SOLIDITY], 20.0 / 26, 1e-15);
  cr_expect_float_eq(r[WSISA_NF_PERIMETER], 17, 1e-12); /* regionprops says 17 too */
  free(r);
  wsisa_image_free(l);
}

Test(nucleus, constant_and_ramp_channels) {
  wsisa_image *l = labels_new(20, 10), *c = NULL, *ramp = NULL;
  cr_assert_eq(wsisa_image_new(20, 10, 1, WSISA_F32, &c, NULL), 0);
  cr_assert_eq(wsisa_image_new(20, 10, 1, WSISA_F32, &ramp, NULL), 0);
  rect(l, 1, 1, 10, 3, 1); /* x 1..10: ramp value x */
  rect(l, 12, 5, 5, 4, 2); /* x 12..16 */
  for (int y = 0; y < 10; y++)
    for (int x = 0; x < 20; x++) {
      ((float *)wsisa_image_row(c, y))[x] = 0.25f;
      ((float *)wsisa_image_row(ramp, y))[x] = (float)x;
    }
  const wsisa_image *ch[] = {c, ramp};
  double *r = features(l, 2, ch, 2);
  const double *a = r + WSISA_NF_SHAPE, *b = r + WSISA_NF_ROW(2) + WSISA_NF_SHAPE;
  cr_expect_eq(a[WSISA_NF_MEAN], 0.25);
  cr_expect_eq(a[WSISA_NF_STD], 0);
  cr_expect_eq(a[WSISA_NF_MEDIAN], 0.25);
  cr_expect_eq(a[WSISA_NF_ENERGY], 0.0625);
  const double *ar = a + WSISA_NF_STATS, *br = b + WSISA_NF_STATS;
  /* object 1: 1..10 three times: mean 5.5, variance (10² - 1)/12, even count */
  cr_expect_float_eq(ar[WSISA_NF_MEAN], 5.5, 1e-12);
  cr_expect_float_eq(ar[WSISA_NF_STD], sqrt(99.0 / 12), 1e-12);
  cr_expect_eq(ar[WSISA_NF_MEDIAN], 5.5);
  cr_expect_float_eq(ar[WSISA_NF_ENERGY], 5.5 * 5.5 + 99.0 / 12, 1e-12);
  /* object 2: 12..16: mean = median = 14, variance 2 */
  cr_expect_float_eq(br[WSISA_NF_MEAN], 14, 1e-12);
  cr_expect_eq(br[WSISA_NF_MEDIAN], 14);
  cr_expect_float_eq(br[WSISA_NF_STD], sqrt(2), 1e-12);
  cr_expect_float_eq(br[WSISA_NF_ENERGY], 196 + 2, 1e-12);
  free(r);
  wsisa_image_free(l);
  wsisa_image_free(c);
  wsisa_image_free(ramp);
}

Test(nucleus, bad_input_refused) {
  wsisa_image *l = labels_new(4, 4), *g = NULL;
  put(l, 1, 1, 3);
  double rows[3 * WSISA_NF_ROW(0)];
  cr_expect_eq(wsisa_cpu_nucleus_features(l, 2, NULL, 0, rows), WSISA_EINTERNAL);
  cr_assert_eq(wsisa_image_new(4, 4, 1, WSISA_U8, &g, NULL), 0);
  const wsisa_image *ch[] = {g};
  cr_expect_eq(wsisa_cpu_nucleus_features(l, 3, ch, 1, rows), WSISA_EINTERNAL);
  wsisa_image_free(l);
  wsisa_image_free(g);
}

/* The labels and channels of the golden comparison. */
static void golden_inputs(wsisa_image **labels, wsisa_image *ch[2]) {
  wsisa_image *rgb = NULL;
  cr_assert_eq(wsisa_image_read(tu_src("tests/golden/nucleus/tile_256_labels.tif"), labels, NULL), 0);
  cr_assert_eq(wsisa_image_read_rgb(tu_src("tests/data/tile_256.png"), &rgb, NULL), 0);
  for (int c = 0; c < 2; c++) {
    cr_assert_eq(wsisa_image_new(rgb->width, rgb->height, 1, WSISA_F32, &ch[c], NULL), 0);
    for (int y = 0; y < rgb->height; y++)
      for (int x = 0; x < rgb->width; x++)
        ((float *)wsisa_image_row(ch[c], y))[x] =
            (float)((uint8_t *)wsisa_image_row(rgb, y))[3 * x + c] / 255.0f;
  }
  wsisa_image_free(rgb);
}

static int32_t max_label(const wsisa_image *l) {
  uint64_t n = 0;
  cr_assert_eq(wsisa_cpu_count_labels(l, &n), 0);
  return (int32_t)n;
}

Test(nucleus, golden_regionprops) {
  wsisa_image *labels = NULL, *ch[2];
  golden_inputs(&labels, ch);
  int32_t n = max_label(labels);
  double *r = features(labels, n, (const wsisa_image *const *)ch, 2);
  wsisa_csv *g = NULL;
  cr_assert_eq(wsisa_csv_read_table(tu_src("tests/golden/nucleus/tile_256_features.csv"), "label", &g, NULL), 0);
  cr_assert_eq(g->nrows, (size_t)n);
  cr_assert_eq(g->ncols, (size_t)WSISA_NF_ROW(2));
  size_t orientation_off = 0, convex_off = 0;
  for (size_t i = 0; i < g->nrows; i++) {
    const double *row = r + i * WSISA_NF_ROW(2);
    for (size_t j = 0; j < g->ncols; j++) {
      double want;
      cr_assert_eq(wsisa_csv_number(g, i, j, &want, NULL), 0);
      double got = row[j], tol = 1e-9 * fmax(1, fabs(want));
      if (j == WSISA_NF_ORIENTATION && fabs(got - want) > tol) {
        /* regionprops' ±π/4 special case: only where the two variances match */
        orientation_off++;
        continue;
      }
      if ((j == WSISA_NF_CONVEX_AREA || j == WSISA_NF_SOLIDITY) && fabs(got - want) > tol) {
        convex_off += j == WSISA_NF_CONVEX_AREA;
        continue;
      }
      cr_expect_float_eq(got, want, tol, "nucleus %zu column %s: %.17g, regionprops %.17g",
                         i + 1, g->header[j], got, want);
    }
  }
  /* measured: every nucleus agrees on orientation and convex area */
  cr_expect_eq(orientation_off, 0);
  cr_expect_eq(convex_off, 0);
  wsisa_csv_free(g);
  free(r);
  wsisa_image_free(labels);
  wsisa_image_free(ch[0]);
  wsisa_image_free(ch[1]);
}

/* The codelet's rows with the task forced on `where` (asserts it ran there:
 * submission fails when no worker of that kind can take it). */
static double *codelet_rows(uint32_t where, const wsisa_image *labels, int32_t n,
                            wsisa_image *const *ch, int nch) {
  size_t count = (size_t)n * WSISA_NF_ROW(nch);
  double *rows = malloc((count ? count : 1) * sizeof *rows);
  cr_assert(rows);
  memset(rows, 0xa5, (count ? count : 1) * sizeof *rows); /* no stale zeros */
  starpu_data_handle_t hl, hc[WSISA_NF_MAX_CHANNELS], hr;
  cr_assert_eq(wsisa_image_register((wsisa_image *)labels, &hl, NULL), 0);
  for (int c = 0; c < nch; c++) cr_assert_eq(wsisa_image_register(ch[c], &hc[c], NULL), 0);
  starpu_vector_data_register(&hr, STARPU_MAIN_RAM, (uintptr_t)rows, (uint32_t)count,
                              sizeof *rows);
  wsisa_codelets_set_where(where);
  int rc = wsisa_submit_nucleus_features(hl, hc, nch, hr);
  starpu_task_wait_for_all();
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  starpu_data_unregister(hr);
  starpu_data_unregister(hl);
  for (int c = 0; c < nch; c++) starpu_data_unregister(hc[c]);
  cr_assert_eq(rc, 0, "submission forced on %s", where == STARPU_CPU ? "CPU" : "OpenCL");
  return rows;
}

/* The kernel, the CPU-forced and the OpenCL-forced codelet give the same
 * bytes. */
static void same_everywhere(const char *what, const wsisa_image *labels, int32_t n,
                            wsisa_image *const *ch, int nch) {
  cr_assert_gt(starpu_opencl_worker_get_count(), 0, "an OpenCL worker (PoCL)");
  size_t bytes = (size_t)n * WSISA_NF_ROW(nch) * sizeof(double);
  double *want = features(labels, n, (const wsisa_image *const *)ch, nch);
  double *cpu = codelet_rows(STARPU_CPU, labels, n, ch, nch);
  double *cl = codelet_rows(STARPU_OPENCL, labels, n, ch, nch);
  cr_expect_eq(memcmp(want, cpu, bytes), 0, "%s: CPU codelet against the kernel", what);
  size_t off = 0;
  for (size_t i = 0; i < bytes / sizeof(double); i++)
    if (memcmp(&want[i], &cl[i], sizeof(double))) {
      if (!off++)
        cr_expect(0, "%s: OpenCL differs first at object %zu column %zu: %.17g, CPU %.17g",
                  what, i / WSISA_NF_ROW(nch) + 1, i % WSISA_NF_ROW(nch), cl[i], want[i]);
    }
  cr_expect_eq(off, 0, "%s: %zu of %zu values differ", what, off, bytes / sizeof(double));
  free(want);
  free(cpu);
  free(cl);
}

static wsisa_image *channel_new(int w, int h, unsigned seed) {
  wsisa_image *c = NULL;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_F32, &c, NULL), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      seed = seed * 1103515245u + 12345u;
      /* repeated values (ties for the median) and negative zeros */
      float v = (float)((seed >> 16) % 7) * 0.125f - 0.375f;
      ((float *)wsisa_image_row(c, y))[x] = v == 0 && (seed & 1) ? -0.0f : v;
    }
  return c;
}

Test(nucleus, cpu_and_opencl_agree_on_shapes, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop) {
  wsisa_image *l = labels_new(96, 96);
  wsisa_image *ch[2] = {channel_new(96, 96, 1), channel_new(96, 96, 2)};
  same_everywhere("empty labels, two absent objects", l, 2, ch, 2);
  same_everywhere("empty labels, no object", l, 0, ch, 2);
  put(l, 95, 95, 1); /* a single pixel in the corner */
  same_everywhere("single pixel", l, 1, ch, 2);
  rect(l, 3, 2, 7, 5, 2);
  rect(l, 0, 0, 96, 1, 3);
  ellipse(l, 48, 47.5, 30, 12, PI / 6, 4);
  ellipse(l, 20, 70, 9, 9, 0, 5);
  rect(l, 70, 10, 2, 6, 6);
  rect(l, 70, 14, 6, 2, 6);
  rect(l, 80, 30, 3, 2, 7); /* object 7 in two pieces, rows apart */
  rect(l, 84, 36, 2, 3, 7);
  for (int x = 0; x < 96; x += 2) put(l, x, 90, 8); /* a dotted line */
  same_everywhere("shapes", l, 9, ch, 2); /* object 9 absent */
  same_everywhere("shapes, no channel", l, 9, NULL, 0);
  wsisa_image_free(l);
  wsisa_image_free(ch[0]);
  wsisa_image_free(ch[1]);
}

Test(nucleus, codelet_matches_kernel, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop) {
  wsisa_image *labels = NULL, *ch[2];
  golden_inputs(&labels, ch);
  int32_t n = max_label(labels);
  cr_assert_gt(n, 10);
  same_everywhere("tile_256", labels, n, ch, 2);
  starpu_data_handle_t hl, hc[3], hr;
  double row[WSISA_NF_ROW(2)];
  cr_assert_eq(wsisa_image_register(labels, &hl, NULL), 0);
  for (int c = 0; c < 2; c++) cr_assert_eq(wsisa_image_register(ch[c], &hc[c], NULL), 0);
  hc[2] = hc[0];
  starpu_vector_data_register(&hr, STARPU_MAIN_RAM, (uintptr_t)row, WSISA_NF_ROW(2),
                              sizeof *row);
  cr_expect_eq(wsisa_submit_nucleus_features(hl, hc, 3, hr), WSISA_EINTERNAL,
               "a row length that does not divide the vector");
  starpu_data_unregister(hr);
  starpu_data_unregister(hl);
  for (int c = 0; c < 2; c++) starpu_data_unregister(hc[c]);
  wsisa_image_free(labels);
  wsisa_image_free(ch[0]);
  wsisa_image_free(ch[1]);
}

/* Nuclei of a 1024 tile: the dark pixels of the red channel, 8-connected. */
Test(nucleus, cpu_and_opencl_agree_on_tile_1024, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop) {
  wsisa_image *rgb = NULL, *grey = NULL, *mask = NULL, *labels = NULL, *ch[3];
  cr_assert_eq(wsisa_image_read_rgb(tu_src("tests/data/tile_1024.png"), &rgb, NULL), 0);
  const int w = rgb->width, h = rgb->height;
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_U8, &grey, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_U8, &mask, NULL), 0);
  cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_I32, &labels, NULL), 0);
  for (int c = 0; c < 3; c++) {
    cr_assert_eq(wsisa_image_new(w, h, 1, WSISA_F32, &ch[c], NULL), 0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        uint8_t v = ((uint8_t *)wsisa_image_row(rgb, y))[3 * x + c];
        ((float *)wsisa_image_row(ch[c], y))[x] = -logf(((float)v + 1) / 256);
        if (c == 0) ((uint8_t *)wsisa_image_row(grey, y))[x] = (uint8_t)(255 - v);
      }
  }
  cr_assert_eq(wsisa_cpu_threshold(grey, 105, mask), 0);
  cr_assert_eq(wsisa_cpu_label(mask, 8, labels), 0);
  int32_t n = max_label(labels);
  cr_assert_gt(n, 100);
  same_everywhere("tile_1024", labels, n, ch, 3);
  wsisa_image_free(rgb);
  wsisa_image_free(grey);
  wsisa_image_free(mask);
  wsisa_image_free(labels);
  for (int c = 0; c < 3; c++) wsisa_image_free(ch[c]);
}
