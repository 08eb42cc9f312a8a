/* `wsisa-bench ops`: per-operation times on a 4096x4096 tile made from the
 * sample slide (its level-0 region (0,0,2048,2048) mirrored 2x2), our CPU
 * kernel on one core and our OpenCL worker against OpenCV (one thread) and
 * scikit-image/SciPy/NumPy on the same inputs, then the whole normalization +
 * segmentation on that tile: in process on the CPU worker and on the OpenCL
 * worker, and as the `wsisa segment` command (one CPU worker) timed as a
 * subprocess. The OpenCL column comes from a subprocess (`ops
 * --opencl-only`) run under libwsisa-clcount when that library is found, so
 * each operation's kernel launches and waits on reads back to the host are
 * counted too. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "codelets/codelets.h"
#include "cli/cli.h"
#include "engine/workflow/workflow.h"
#include "io/io.h"

/* The sample slide, installed in PREFIX/share/wsisa or in the source tree. */
static const char *sample_slide(void) {
  static char path[WSISA_PATH_MAX];
  if (!path[0])
    wsisa_data_file("CMU-1-Small-Region.svs", WSISA_SOURCE_DIR "/tests/data", path, sizeof path);
  return path;
}

/* The intermediates every timed operation reads, made once by the workflow's
 * own operations on the CPU worker and written to the output folder so the
 * peers read exactly the same pixels. */
typedef struct inputs {
  wsisa_image *raw, *rgb, *rc, *rc_open, *diff, *candidates, *big, *markers;
  wsisa_image *relief, *hmin, *fg, *lab, *lab_t;
  wsisa_image *out_u8, *out_f32, *out_i32, *out_u8b, *out_rgb, *out_lab;
  starpu_data_handle_t h_raw, h_rgb, h_rc, h_rc_open, h_diff, h_cand, h_big, h_markers;
  starpu_data_handle_t h_relief, h_hmin, h_fg, h_lab, h_lab_t;
  starpu_data_handle_t h_out_u8, h_out_f32, h_out_i32, h_out_u8b, h_out_rgb, h_out_lab;
} inputs;

static int mirrored_tile(const char *slide_path, int size, wsisa_image **out, wsisa_err *e) {
  wsisa_slide *slide = NULL;
  wsisa_image *quad = NULL, *img = NULL;
  int half = size / 2, rc;
  if ((rc = wsisa_slide_open(slide_path, &slide, e))) return rc;
  rc = wsisa_slide_read_rgb(slide, 0, 0, 0, half, half, &quad, e);
  wsisa_slide_close(slide);
  if (rc) return rc;
  if ((rc = wsisa_image_new(size, size, 3, WSISA_U8, &img, e))) goto done;
  for (int y = 0; y < size; y++) {
    int sy = y < half ? y : size - 1 - y; /* bottom half flipped top-bottom */
    const uint8_t *src = wsisa_image_row(quad, sy);
    uint8_t *dst = wsisa_image_row(img, y);
    for (int x = 0; x < size; x++) {
      int sx = x < half ? x : size - 1 - x; /* right half flipped left-right */
      memcpy(dst + 3 * x, src + 3 * sx, 3);
    }
  }
  *out = img;
done:
  wsisa_image_free(quad);
  return rc;
}

static int new_img(int size, int ch, wsisa_dtype t, wsisa_image **img, starpu_data_handle_t *h,
                   wsisa_err *e) {
  int rc = wsisa_image_new(size, size, ch, t, img, e);
  return rc ? rc : wsisa_image_register(*img, h, e);
}

/* Every image of the inputs with its handle, channels and type, in one
 * order: raw, read from the slide, then those prepare makes. */
enum { NINPUTS = 19 };
typedef struct slot {
  wsisa_image **img;
  starpu_data_handle_t *h;
  int ch;
  wsisa_dtype type;
} slot;
static void input_slots(inputs *in, slot *out) {
  const slot all[NINPUTS] = {
      {&in->raw, &in->h_raw, 3, WSISA_U8},          {&in->rgb, &in->h_rgb, 3, WSISA_U8},
      {&in->rc, &in->h_rc, 1, WSISA_U8},            {&in->rc_open, &in->h_rc_open, 1, WSISA_U8},
      {&in->diff, &in->h_diff, 1, WSISA_U8},        {&in->candidates, &in->h_cand, 1, WSISA_U8},
      {&in->big, &in->h_big, 1, WSISA_U8},          {&in->markers, &in->h_markers, 1, WSISA_I32},
      {&in->relief, &in->h_relief, 1, WSISA_F32},   {&in->hmin, &in->h_hmin, 1, WSISA_F32},
      {&in->fg, &in->h_fg, 1, WSISA_U8},            {&in->lab, &in->h_lab, 3, WSISA_F32},
      {&in->lab_t, &in->h_lab_t, 3, WSISA_F32},     {&in->out_u8, &in->h_out_u8, 1, WSISA_U8},
      {&in->out_f32, &in->h_out_f32, 1, WSISA_F32}, {&in->out_i32, &in->h_out_i32, 1, WSISA_I32},
      {&in->out_u8b, &in->h_out_u8b, 1, WSISA_U8},  {&in->out_rgb, &in->h_out_rgb, 3, WSISA_U8},
      {&in->out_lab, &in->h_out_lab, 3, WSISA_F32}};
  memcpy(out, all, sizeof all);
}

static int prepare(inputs *in, int size, const char *dir, wsisa_err *e) {
  const double *p = wsisa_seg_defaults();
  wsisa_image *tmp_img[4] = {0};
  starpu_data_handle_t t[4], stats = NULL;
  int rc = mirrored_tile(sample_slide(), size, &in->raw, e);
  if (rc) return rc;
  if ((rc = wsisa_image_register(in->raw, &in->h_raw, e))) goto done;
  slot all[NINPUTS];
  input_slots(in, all);
  for (int i = 1; i < NINPUTS && !rc; i++) /* all but raw */
    rc = new_img(size, all[i].ch, all[i].type, all[i].img, all[i].h, e);
  /* scratch: three masks, distance, minima */
  static const wsisa_dtype tmp_types[4] = {WSISA_U8, WSISA_U8, WSISA_U8, WSISA_F32};
  for (int i = 0; i < 4 && !rc; i++) rc = new_img(size, 1, tmp_types[i], &tmp_img[i], &t[i], e);
  if (rc) goto done;
  starpu_vector_data_register(&stats, -1, 0, WSISA_STATS_N, sizeof(double));
  wsisa_codelets_set_where(STARPU_CPU);
  /* the normalization's steps (for rgb2lab and lab2rgb), rgb, rc, rc_open,
   * diff, candidates (diff > G2, before filling), then the level-5/6 chain
   * for the separation inputs */
  int s = wsisa_submit_fisher_fg(in->h_raw, in->h_fg);
  s |= wsisa_submit_rgb2lab(in->h_raw, in->h_lab);
  s |= wsisa_submit_masked_stats(in->h_lab, in->h_fg, stats);
  s |= wsisa_submit_color_transfer(in->h_lab, in->h_fg, stats, in->h_lab_t);
  s |= wsisa_submit_lab2rgb(in->h_lab_t, in->h_fg, in->h_raw, in->h_rgb);
  s |= wsisa_submit_invert(in->h_rgb, in->h_rc, 0);
  s |= wsisa_submit_morph(in->h_rc, in->h_rc_open, WSISA_MORPH_OPEN, 19);
  s |= wsisa_submit_reconstruct(in->h_rc_open, in->h_rc, in->h_out_u8, 8);
  s |= wsisa_submit_sub_sat(in->h_rc, in->h_out_u8, in->h_diff);
  s |= wsisa_submit_threshold(in->h_diff, in->h_cand, (int)p[WSISA_P_G2]);
  s |= wsisa_submit_fill_holes(in->h_cand, t[0], 4);
  s |= wsisa_submit_morph(t[0], t[1], WSISA_MORPH_OPEN, 3);
  s |= wsisa_submit_area_filter(t[1], t[2], 8, (int)p[WSISA_P_MIN_SIZE_PL], 0);
  s |= wsisa_submit_morph(t[2], in->h_big, WSISA_MORPH_DILATE, 3);
  s |= wsisa_submit_edt(in->h_big, t[3]);
  s |= wsisa_submit_neg_dist(t[3], in->h_big, in->h_relief);
  s |= wsisa_submit_hmin(in->h_relief, in->h_hmin, 1.0f, 8);
  s |= wsisa_submit_regional_min(in->h_hmin, t[0], 8);
  s |= wsisa_submit_label(t[0], in->h_markers, 8);
  starpu_task_wait_for_all();
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  if (s) {
    rc = wsisa_error(e, WSISA_ERUNTIME, "cannot prepare the benchmark inputs");
    goto done;
  }
  /* bring the inputs home for the peers */
  starpu_data_handle_t home[] = {in->h_rgb,  in->h_rc,      in->h_rc_open, in->h_cand,
                                 in->h_big,  in->h_markers, in->h_relief,  in->h_hmin};
  for (size_t i = 0; i < sizeof home / sizeof *home; i++) {
    starpu_data_acquire(home[i], STARPU_R);
    starpu_data_release(home[i]);
  }
  /* tile.png: the raw tile, also the input of the `wsisa segment` run (no
   * files for dir NULL: the OpenCL subprocess's inputs) */
  struct { const char *name; const wsisa_image *img; } files[] = {
      {"tile.png", in->raw},       {"rgb.png", in->rgb},         {"rc.png", in->rc},
      {"rc_open.png", in->rc_open}, {"candidates.png", in->candidates}, {"big.png", in->big},
      {"markers.tiff", in->markers}, {"relief.tiff", in->relief}, {"hmin.tiff", in->hmin}};
  char path[WSISA_PATH_MAX];
  for (size_t i = 0; i < sizeof files / sizeof *files && !rc && dir; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
    rc = wsisa_image_write(path, files[i].img, e);
  }
done:
  if (stats) starpu_data_unregister(stats);
  for (int i = 0; i < 4; i++)
    if (tmp_img[i]) {
      starpu_data_unregister(t[i]);
      wsisa_image_free(tmp_img[i]);
    }
  return rc;
}

/* ---- the operations timed ------------------------------------------------- */

typedef int (*op_fn)(inputs *in);
static int op_rgb2lab(inputs *in) { return wsisa_submit_rgb2lab(in->h_raw, in->h_out_lab); }
static int op_lab2rgb(inputs *in) {
  return wsisa_submit_lab2rgb(in->h_lab_t, in->h_fg, in->h_raw, in->h_out_rgb);
}
static int op_open(inputs *in) {
  return wsisa_submit_morph(in->h_rc, in->h_out_u8, WSISA_MORPH_OPEN, 19);
}
static int op_recon(inputs *in) {
  return wsisa_submit_reconstruct(in->h_rc_open, in->h_rc, in->h_out_u8, 8);
}
static int op_recon4(inputs *in) {
  return wsisa_submit_reconstruct(in->h_rc_open, in->h_rc, in->h_out_u8, 4);
}
static int op_fill(inputs *in) { return wsisa_submit_fill_holes(in->h_cand, in->h_out_u8, 4); }
static int op_label(inputs *in) { return wsisa_submit_label(in->h_cand, in->h_out_i32, 8); }
static int op_edt(inputs *in) { return wsisa_submit_edt(in->h_big, in->h_out_f32); }
static int op_hmin(inputs *in) { return wsisa_submit_hmin(in->h_relief, in->h_out_f32, 1.0f, 8); }
static int op_regional_min(inputs *in) {
  return wsisa_submit_regional_min(in->h_hmin, in->h_out_u8, 8);
}
static int op_watershed(inputs *in) {
  return wsisa_submit_watershed(in->h_rgb, in->h_markers, in->h_big, in->h_out_i32,
                                in->h_out_u8b);
}

/* One line of the table: our operation against one peer's, which that peer
 * program prints under `key`. An operation with two peers has two lines. */
typedef struct op_row {
  const char *name;
  op_fn run;
  const char *peer; /* "opencv" (wsisa-bench-opencv) or a library of peers_skimage.py */
  const char *key;
  int cold;         /* per-worker caches emptied before each run: a new tile's colours */
} op_row;

/* The peers compute the same function on the same pixels (see their files
 * for the call and why it matches): rgb2lab/lab2rgb the same Reinhard
 * formulas in NumPy (OpenCV's and scikit-image's Lab is CIELAB, another
 * transform); hminima the h-minima transform as skimage's reconstruction by
 * erosion of relief + 1 over relief (skimage's h_minima returns the minima
 * of that, a mask); regional_min skimage's local_minima with
 * allow_borders=True, our plateau definition. */
static const op_row rows[] = {
    {"rgb2lab", op_rgb2lab, "numpy", "rgb2lab", 1},
    {"lab2rgb", op_lab2rgb, "numpy", "lab2rgb", 1},
    {"opening_disk19", op_open, "opencv", "opening_disk19", 0},
    {"reconstruction_8conn", op_recon, "skimage", "reconstruction_8conn", 0},
    {"reconstruction_4conn", op_recon4, "skimage", "reconstruction_4conn", 0},
    {"fill_holes_4conn", op_fill, "scipy", "fill_holes_4conn", 0},
    {"label_8conn_stats", op_label, "opencv", "label_8conn_stats", 0},
    {"distance_transform", op_edt, "opencv", "distance_transform", 0},
    {"distance_transform", op_edt, "scipy", "distance_transform_edt", 0},
    {"hminima_8conn", op_hmin, "skimage", "hminima_8conn", 0},
    {"regional_min_8conn", op_regional_min, "skimage", "regional_min_8conn", 0},
    {"watershed", op_watershed, "opencv", "watershed", 0},
};
#define NROWS (sizeof rows / sizeof *rows)

static void release_scratch(void *arg) {
  (void)arg;
  wsisa_cpu_scratch_release();
}

/* Each CPU worker drops its scratch (the colour caches with it). */
static void forget_caches(void) { starpu_execute_on_each_worker(release_scratch, NULL, STARPU_CPU); }

/* ---- OpenCL calls counted ------------------------------------------------ */

/* Kernel launches, blocking reads back to the host, and the bytes sent to
 * the device and brought back to the host (StarPU's transfers included) of
 * one run (-1: not counted, libwsisa-clcount not loaded). */
typedef struct cl_counts {
  long launches, reads;
  long long to_device, to_host;
} cl_counts;
#define CL_COUNTS_NONE ((cl_counts){-1, -1, -1, -1})

typedef void (*clcount_fn)(unsigned long out[3]);
typedef void (*clcount_bytes_fn)(unsigned long long out[4]);

/* libwsisa-clcount's function `name` when it is loaded (LD_PRELOAD), else NULL. */
static void *clcount_symbol(const char *name) {
  void *self = dlopen(NULL, RTLD_LAZY);
  return self ? dlsym(self, name) : NULL;
}

/* Where the counts stand: launches, reads, blocking reads; reads, bytes
 * read, writes, bytes written. */
typedef struct count_mark {
  unsigned long calls[3];
  unsigned long long bytes[4];
} count_mark;

/* The counts so far into *m; 0 when the library is loaded. */
static int count_now(count_mark *m) {
  void *totals = clcount_symbol("wsisa_clcount_totals");
  void *bytes = clcount_symbol("wsisa_clcount_bytes");
  if (!totals || !bytes) return -1;
  clcount_fn t;
  clcount_bytes_fn b;
  memcpy(&t, &totals, sizeof t);
  memcpy(&b, &bytes, sizeof b);
  t(m->calls);
  b(m->bytes);
  return 0;
}

/* The counts between count_begin and count_end, into *out. */
static void count_begin(count_mark *at) { count_now(at); }

static void count_end(const count_mark *at, cl_counts *out) {
  count_mark now;
  *out = CL_COUNTS_NONE;
  if (count_now(&now)) return;
  *out = (cl_counts){(long)(now.calls[0] - at->calls[0]), (long)(now.calls[2] - at->calls[2]),
                     (long long)(now.bytes[3] - at->bytes[3]),
                     (long long)(now.bytes[1] - at->bytes[1])};
}

/* libwsisa-clcount beside this wsisa-bench (build/lib, or PREFIX/lib when
 * installed), into path; 0 when found. */
static int clcount_library(char path[WSISA_PATH_MAX]) {
  char here[WSISA_PATH_MAX];
  if (wsisa_exe_dir(here, sizeof here) ||
      wsisa_path_fmt(path, "%s/../lib/libwsisa-clcount.so", here))
    return -1;
  return access(path, R_OK);
}

/* One run of the operation on the workers of `where` untimed (the warm-up:
 * program build, first allocation, model calibration; its OpenCL calls
 * counted into *count), then `repeats` timed. */
static bench_stats time_op(inputs *in, op_fn fn, int cold, uint32_t where, int repeats,
                           cl_counts *count) {
  double ms[64];
  if (repeats > 64) repeats = 64;
  wsisa_codelets_set_where(where);
  count_mark at = {{0}, {0}};
  count_begin(&at);
  fn(in);
  starpu_task_wait_for_all();
  count_end(&at, count);
  for (int r = 0; r < repeats; r++) {
    if (cold) forget_caches();
    double t0 = wsisa_now();
    fn(in);
    starpu_task_wait_for_all();
    ms[r] = (wsisa_now() - t0) * 1e3;
  }
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  return bench_summarize(ms, repeats);
}

/* Every row's operation on the workers of `where`; a row with the operation
 * of the row before it (another peer) shares its figures. */
static void time_rows(inputs *in, uint32_t where, int repeats, bench_stats *out,
                      cl_counts *counts) {
  for (size_t i = 0; i < NROWS; i++) {
    if (i > 0 && rows[i].run == rows[i - 1].run) {
      out[i] = out[i - 1];
      counts[i] = counts[i - 1];
      continue;
    }
    fprintf(stderr, "wsisa-bench ops: %s%s\n", rows[i].name,
            where == STARPU_OPENCL ? " (OpenCL)" : "");
    out[i] = time_op(in, rows[i].run, rows[i].cold, where, repeats, &counts[i]);
  }
}

/* Read "key median min max" lines of a peer program. */
static int read_peer(const char *cmd, bench_stats *stats, int *have) {
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[512], key[128];
  double med, mn, mx;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%127s %lf %lf %lf", key, &med, &mn, &mx) == 4)
      for (size_t i = 0; i < NROWS; i++)
        if (strcmp(rows[i].key, key) == 0) {
          stats[i] = (bench_stats){med, mn, mx};
          have[i] = 1;
        }
  return pclose(f) == 0 ? 0 : -1;
}

/* Normalization + segmentation of the tile on the workers of `where`; run 0
 * warms up, its OpenCL calls counted into *count. */
static bench_stats time_workflow(inputs *in, int size, uint32_t where, int repeats,
                                 cl_counts *count) {
  double ms[64];
  count_mark at = {{0}, {0}};
  if (repeats > 64) repeats = 64;
  wsisa_codelets_set_where(where);
  for (int r = 0; r <= repeats; r++) {
    forget_caches(); /* as for a new tile */
    if (r == 0) count_begin(&at);
    double t0 = wsisa_now();
    wsisa_tile_data tile;
    wsisa_err e = WSISA_ERR_INIT;
    int failed = wsisa_workflow_tile_submit(in->h_rgb, size, size, 1, &tile, &e);
    if (!failed) {
      failed = wsisa_workflow_segment_submit(&tile, wsisa_seg_defaults(), in->h_out_u8b, &e);
      wsisa_workflow_tile_release(&tile, 1);
    }
    /* the mask home, as a run needs it (counted among the bytes back) */
    if (!failed && starpu_data_acquire(in->h_out_u8b, STARPU_R) == 0)
      starpu_data_release(in->h_out_u8b);
    starpu_task_wait_for_all();
    if (failed) fprintf(stderr, "wsisa-bench ops: normalize+segment: %s\n", e.msg);
    if (r > 0) ms[r - 1] = (wsisa_now() - t0) * 1e3; /* run 0 warms up */
    if (r == 0) count_end(&at, count);
  }
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  return bench_summarize(ms, repeats);
}

/* `wsisa segment DIR/tile.png` with one CPU worker and no OpenCL worker, as a
 * subprocess: the whole process (start-up, PNG in and out, StarPU) as a user
 * runs it. One untimed run first (StarPU's files, the page cache).
 * STARPU_NOPENCL=0: StarPU reads STARPU_NOPENCL=1 as one OpenCL device, a GPU
 * where there is one. */
static int time_segment_process(const char *dir, int repeats, bench_stats *out) {
  double ms[64];
  if (repeats > 64) repeats = 64;
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "STARPU_NCPU=1 STARPU_NOPENCL=0 STARPU_OPENCL_ON_CPUS=0 STARPU_SILENT=1 "
           "STARPU_HOME='%s/starpu' '%s' segment '%s/tile.png' -o '%s/segment_mask.png' "
           ">/dev/null 2>&1",
           dir, bench_wsisa_exe(), dir, dir);
  for (int r = 0; r <= repeats; r++) {
    double t0 = wsisa_now();
    int status = system(cmd);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    if (r > 0) ms[r - 1] = (wsisa_now() - t0) * 1e3;
  }
  *out = bench_summarize(ms, repeats);
  return 0;
}

/* Unregister the inputs from StarPU (the images stay, home up to date). */
static void unregister_inputs(inputs *in) {
  slot all[NINPUTS];
  input_slots(in, all);
  for (int i = 0; i < NINPUTS; i++)
    if (*all[i].h) {
      starpu_data_unregister(*all[i].h);
      *all[i].h = NULL;
    }
}

/* Register the inputs with a new StarPU session. */
static int register_inputs(inputs *in, wsisa_err *e) {
  slot all[NINPUTS];
  input_slots(in, all);
  for (int i = 0; i < NINPUTS; i++) {
    int rc = wsisa_image_register(*all[i].img, all[i].h, e);
    if (rc) return rc;
  }
  return 0;
}

static void free_inputs(inputs *in) {
  unregister_inputs(in);
  slot all[NINPUTS];
  input_slots(in, all);
  for (int i = 0; i < NINPUTS; i++) wsisa_image_free(*all[i].img);
  memset(in, 0, sizeof *in);
}

/* ---- the OpenCL column, in a subprocess ----------------------------------- */

/* What `ops --opencl-only` leaves in DIR/ops_opencl.csv: per row (its index
 * in rows[], NROWS for normalize+segment) median, min, max ms, launches,
 * blocking reads, bytes to the device and bytes back to the host of one run
 * (-1: not counted). */
#define OPENCL_CSV "ops_opencl.csv"

/* `ops --opencl-only`: the inputs prepared on a CPU worker, then every row
 * and normalize+segment on the OpenCL worker alone, into DIR/OPENCL_CSV. */
static int opencl_only(int size, int repeats, const char *dir, wsisa_err *e) {
  wsisa_runtime_opts ropts = {.ncpu = 1, .nopencl = 0};
  int rc = wsisa_codelets_start(&ropts, e);
  if (rc) return rc;
  inputs in;
  memset(&in, 0, sizeof in);
  bench_stats cl[NROWS + 1];
  cl_counts counts[NROWS + 1];
  if ((rc = prepare(&in, size, NULL, e))) goto done;
  unregister_inputs(&in);
  wsisa_runtime_shutdown();
  ropts = (wsisa_runtime_opts){.ncpu = 0, .nopencl = 1};
  if ((rc = wsisa_codelets_start(&ropts, e))) goto done;
  if (wsisa_runtime_nopencl() < 1) {
    rc = wsisa_error(e, WSISA_ERUNTIME, "no OpenCL device");
    goto done;
  }
  if ((rc = register_inputs(&in, e))) goto done;
  time_rows(&in, STARPU_OPENCL, repeats, cl, counts);
  fprintf(stderr, "wsisa-bench ops: normalize+segment (OpenCL)\n");
  cl[NROWS] = time_workflow(&in, size, STARPU_OPENCL, repeats, &counts[NROWS]);
  char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/" OPENCL_CSV, dir);
  FILE *f = fopen(path, "w");
  if (!f) {
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  for (size_t i = 0; i <= NROWS; i++)
    fprintf(f, "%zu,%.3f,%.3f,%.3f,%ld,%ld,%lld,%lld\n", i, cl[i].median, cl[i].min,
            cl[i].max, counts[i].launches, counts[i].reads, counts[i].to_device,
            counts[i].to_host);
  if (fclose(f)) rc = wsisa_error(e, WSISA_EIO, "%s: cannot write", path);
done:
  free_inputs(&in);
  wsisa_runtime_shutdown();
  return rc;
}

/* Run `ops --opencl-only` (under libwsisa-clcount when found) and read its
 * figures into cl and counts (NROWS + 1 each); 0 when it ran. */
static int opencl_subprocess(int size, int repeats, const char *dir, bench_stats *cl,
                             cl_counts *counts) {
  char here[WSISA_PATH_MAX], lib[WSISA_PATH_MAX], preload[8800] = "", cmd[16384];
  if (wsisa_exe_dir(here, sizeof here)) return -1;
  /* the library first in line (an AddressSanitizer build is told not to
   * mind), its per-kernel table at exit in DIR/clcount.csv */
  if (clcount_library(lib) == 0)
    snprintf(preload, sizeof preload,
             "LD_PRELOAD='%s' WSISA_CLCOUNT='%s/clcount.csv' "
             "ASAN_OPTIONS=verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} ",
             lib, dir);
  snprintf(cmd, sizeof cmd, "%s'%s/wsisa-bench' ops --opencl-only --size %d --repeats %d -o '%s'",
           preload, here, size, repeats, dir);
  int status = system(cmd);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  char path[WSISA_PATH_MAX], line[256];
  snprintf(path, sizeof path, "%s/" OPENCL_CSV, dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t seen = 0, i;
  bench_stats b;
  cl_counts c;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%zu,%lf,%lf,%lf,%ld,%ld,%lld,%lld", &i, &b.median, &b.min, &b.max,
               &c.launches, &c.reads, &c.to_device, &c.to_host) == 8 &&
        i <= NROWS) {
      cl[i] = b;
      counts[i] = c;
      seen++;
    }
  fclose(f);
  return seen == NROWS + 1 ? 0 : -1;
}

/* A count for the table: the number, or n/a. */
static const char *count_text(long n, char *buf, size_t cap) {
  if (n < 0) snprintf(buf, cap, "n/a");
  else snprintf(buf, cap, "%ld", n);
  return buf;
}

/* Bytes for the table: in MB (10^6 bytes) to two places, or n/a. */
static const char *bytes_text(long long n, char *buf, size_t cap) {
  if (n < 0) snprintf(buf, cap, "n/a");
  else snprintf(buf, cap, "%.2f MB", (double)n / 1e6);
  return buf;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsisa-bench ops [--size N] [--repeats N | --quick] [--no-opencl] [-o DIR]\n"
          "       wsisa-bench ops --opencl-only [--size N] [--repeats N] [-o DIR]\n"
          "\n"
          "Per-operation times on an NxN tile (default 4096) made from the sample slide\n"
          "(its level-0 region (0,0,N/2,N/2) mirrored 2x2): our CPU kernel on one core and\n"
          "our OpenCL worker, against a peer library computing the same function on the\n"
          "same pixels, one thread (OpenCV; scikit-image, SciPy or NumPy through\n"
          "/usr/bin/python3). Then normalization + segmentation of the tile with the\n"
          "default parameters: in process on the CPU worker and on the OpenCL worker,\n"
          "and the `wsisa segment` command with one CPU worker timed as a subprocess\n"
          "(the whole process).\n"
          "The OpenCL figures come from `ops --opencl-only`, run as a subprocess under\n"
          "libwsisa-clcount (LD_PRELOAD; found in ../lib beside wsisa-bench, built or\n"
          "installed): with each time, the kernel launches and the blocking reads back\n"
          "to the host (each a host round trip) of one run, n/a without the library,\n"
          "and (ops.csv; printed for normalize+segment, whose mask is brought home) the\n"
          "bytes that run sent to the device and brought back to the host;\n"
          "DIR/clcount.csv: the library's table of those per kernel, over the whole\n"
          "subprocess.\n"
          "\n"
          "  --size N       tile side, even, 64..4096 (default 4096)\n"
          "  --repeats N    runs per figure, 1..64 (default 5); --quick: 3\n"
          "  --no-opencl    skip the OpenCL worker\n"
          "  --opencl-only  time and count the OpenCL worker only, into DIR/" OPENCL_CSV "\n"
          "                 (what ops runs as its subprocess)\n"
          "  -o DIR         output folder (default bench-results/ops): ops.csv and the\n"
          "                 inputs the peers read (tile.png is the raw tile)\n"
          "\n"
          "Figures are medians (min..max) in ms. rgb2lab and lab2rgb run with the\n"
          "workers' colour caches emptied before each run, as for a new tile.\n");
}

int bench_ops(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {{"quick", no_argument, 0, 'q'},
                                           {"repeats", required_argument, 0, 'r'},
                                           {"size", required_argument, 0, 's'},
                                           {"output", required_argument, 0, 'o'},
                                           {"no-opencl", no_argument, 0, 'n'},
                                           {"opencl-only", no_argument, 0, 'c'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  long repeats = 5, size = 4096;
  int no_opencl = 0, only_opencl = 0;
  const char *dir = "bench-results/ops";
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (opt) {
      case 'q': repeats = 3; break;
      case 'r': if ((rc = wsisa_cli_long("--repeats", optarg, &repeats, e))) return rc; break;
      case 's': if ((rc = wsisa_cli_long("--size", optarg, &size, e))) return rc; break;
      case 'o': dir = optarg; break;
      case 'n': no_opencl = 1; break;
      case 'c': only_opencl = 1; break;
      case 'h': usage(stdout); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc)
    return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument (see wsisa-bench ops --help)",
                       argv[optind]);
  if (repeats < 1 || repeats > 64)
    return wsisa_error(e, WSISA_EUSAGE, "--repeats %ld: must be in 1..64", repeats);
  if (size < 64 || size > 4096 || size % 2)
    return wsisa_error(e, WSISA_EUSAGE, "--size %ld: must be even, in 64..4096", size);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  if (system(cmd) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", dir);
  setenv("STARPU_OPENCL_ON_CPUS", "1", 0);
  if (only_opencl) return opencl_only((int)size, (int)repeats, dir, e);

  /* StarPU's idle workers poll, each keeping a core busy: a polling OpenCL
   * worker beside the CPU kernel being timed slows it (on this 2-core
   * machine, 5-15 %), and the peers run with the other core idle. So the CPU
   * figures come from a session with the CPU worker alone, the OpenCL ones
   * from a session with the OpenCL worker alone, and the peers and the
   * subprocess run after both. The OpenCL session is a subprocess of its
   * own, so that libwsisa-clcount can be loaded in front of OpenCL there. */
  wsisa_runtime_opts ropts = {.ncpu = 1, .nopencl = 0};
  if ((rc = wsisa_codelets_start(&ropts, e))) return rc;
  inputs in;
  memset(&in, 0, sizeof in);
  bench_stats cpu[NROWS], cl[NROWS + 1], peer[NROWS] = {{0}}, process = {0};
  cl_counts cpu_counts[NROWS], counts[NROWS + 1], whole_counts;
  int have_cl = 0, have_peer[NROWS] = {0};
  fprintf(stderr, "wsisa-bench ops: preparing %ldx%ld inputs in %s\n", size, size, dir);
  if ((rc = prepare(&in, (int)size, dir, e))) goto done;
  time_rows(&in, STARPU_CPU, (int)repeats, cpu, cpu_counts);
  fprintf(stderr, "wsisa-bench ops: normalize+segment\n");
  bench_stats whole = time_workflow(&in, (int)size, STARPU_CPU, (int)repeats, &whole_counts);
  unregister_inputs(&in);
  wsisa_runtime_shutdown();
  /* no OpenCL device (the subprocess fails): no OpenCL column */
  if (!no_opencl)
    have_cl = opencl_subprocess((int)size, (int)repeats, dir, cl, counts) == 0;
  fprintf(stderr, "wsisa-bench ops: wsisa segment (subprocess)\n");
  int have_process = time_segment_process(dir, (int)repeats, &process) == 0;
  /* peers, on the same files, one thread */
  fprintf(stderr, "wsisa-bench ops: peers\n");
  char here[WSISA_PATH_MAX], script[WSISA_PATH_MAX];
  if (wsisa_exe_dir(here, sizeof here)) snprintf(here, sizeof here, ".");
  snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 '%s/wsisa-bench-opencv' '%s' %ld 2>/dev/null",
           here, dir, repeats);
  int opencv_ok = read_peer(cmd, peer, have_peer) == 0;
  wsisa_data_file("peers_skimage.py", WSISA_SOURCE_DIR "/bench", script, sizeof script);
  snprintf(cmd, sizeof cmd,
           "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 '%s' '%s' %ld 2>/dev/null",
           script, dir, repeats);
  int skimage_ok = read_peer(cmd, peer, have_peer) == 0;

  char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/ops.csv", dir);
  FILE *csv = fopen(path, "w");
  if (!csv) {
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  fprintf(csv, "op,ours_cpu_ms,ours_cpu_min,ours_cpu_max,ours_opencl_ms,peer,peer_ms,peer_min,"
               "peer_max,peer_over_ours,opencl_launches,opencl_reads,opencl_bytes_to_device,"
               "opencl_bytes_to_host\n");
  bench_print_context(stdout);
  printf("# %ldx%ld tile from %s, median of %ld runs (min..max); ours: CPU kernel on one "
         "core (StarPU with that CPU worker alone) / OpenCL worker (alone); launches and "
         "reads: OpenCL kernel launches and blocking reads back to the host in one run "
         "(ops.csv adds its bytes to the device and back to the host)\n",
         size, size, "CMU-1-Small-Region.svs", repeats);
  printf("%-22s %22s %10s %8s %6s %-8s %22s %8s\n", "operation", "ours CPU ms", "OpenCL ms",
         "launches", "reads", "peer", "peer ms", "peer/ours");
  for (size_t i = 0; i < NROWS; i++) {
    double ratio = have_peer[i] && cpu[i].median > 0 ? peer[i].median / cpu[i].median : 0;
    char ours_s[64], peer_s[64], cl_s[32], ratio_s[32] = "n/a", n_s[24], r_s[24];
    snprintf(ours_s, sizeof ours_s, "%.1f (%.1f..%.1f)", cpu[i].median, cpu[i].min, cpu[i].max);
    snprintf(cl_s, sizeof cl_s, "%.1f", have_cl ? cl[i].median : 0);
    if (have_peer[i])
      snprintf(peer_s, sizeof peer_s, "%.1f (%.1f..%.1f)", peer[i].median, peer[i].min,
               peer[i].max);
    else
      snprintf(peer_s, sizeof peer_s, "n/a");
    if (have_peer[i]) snprintf(ratio_s, sizeof ratio_s, "%.2fx", ratio);
    const cl_counts n = have_cl ? counts[i] : CL_COUNTS_NONE;
    printf("%-22s %22s %10s %8s %6s %-8s %22s %8s\n", rows[i].name, ours_s,
           have_cl ? cl_s : "n/a", count_text(n.launches, n_s, sizeof n_s),
           count_text(n.reads, r_s, sizeof r_s), rows[i].peer, peer_s, ratio_s);
    fprintf(csv, "%s,%.3f,%.3f,%.3f,%.3f,%s,%.3f,%.3f,%.3f,%.3f,%ld,%ld,%lld,%lld\n",
            rows[i].name, cpu[i].median, cpu[i].min, cpu[i].max, have_cl ? cl[i].median : 0,
            rows[i].peer, have_peer[i] ? peer[i].median : 0, have_peer[i] ? peer[i].min : 0,
            have_peer[i] ? peer[i].max : 0, ratio, n.launches, n.reads, n.to_device, n.to_host);
  }
  char process_s[64] = "n/a";
  if (have_process)
    snprintf(process_s, sizeof process_s, "%.1f ms (%.1f..%.1f)", process.median, process.min,
             process.max);
  printf("%-22s %.1f ms (%.1f..%.1f) in process, CPU worker | wsisa segment process, 1 CPU "
         "worker: %s; default parameters\n",
         "normalize+segment", whole.median, whole.min, whole.max, process_s);
  const cl_counts nw = have_cl ? counts[NROWS] : CL_COUNTS_NONE;
  if (have_cl) {
    char n_s[24], r_s[24], d_s[32], h_s[32];
    printf("%-22s %.1f ms (%.1f..%.1f) in process, OpenCL worker: %s launches, %s reads, "
           "%s to the device, %s back to the host\n",
           "normalize+segment", cl[NROWS].median, cl[NROWS].min, cl[NROWS].max,
           count_text(nw.launches, n_s, sizeof n_s), count_text(nw.reads, r_s, sizeof r_s),
           bytes_text(nw.to_device, d_s, sizeof d_s), bytes_text(nw.to_host, h_s, sizeof h_s));
  }
  fprintf(csv, "normalize_and_segment,%.3f,%.3f,%.3f,%.3f,,0,0,0,0,%ld,%ld,%lld,%lld\n",
          whole.median, whole.min, whole.max, have_cl ? cl[NROWS].median : 0, nw.launches,
          nw.reads, nw.to_device, nw.to_host);
  if (have_process)
    fprintf(csv, "segment_process,%.3f,%.3f,%.3f,0,,0,0,0,0,-1,-1,-1,-1\n", process.median,
            process.min, process.max);
  fclose(csv);
  if (!have_process) printf("# the wsisa segment subprocess failed\n");
  if (!opencv_ok) printf("# OpenCV peer unavailable (build with libopencv-dev installed)\n");
  if (!skimage_ok) printf("# scikit-image peer unavailable (python3-skimage)\n");
done:
  free_inputs(&in);
  wsisa_runtime_shutdown();
  return rc;
}
