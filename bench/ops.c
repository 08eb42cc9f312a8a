/* `wsisa-bench ops`: per-operation times on a 4096x4096 tile made from the
 * sample slide (its level-0 region (0,0,2048,2048) mirrored 2x2), our CPU
 * kernel on one core and our OpenCL worker against OpenCV (one thread) and
 * scikit-image/SciPy on the same inputs, and the whole normalization +
 * 7-task segmentation on that tile. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench.h"
#include "codelets/codelets.h"
#include "cli/cli.h"
#include "engine/engine.h"
#include "io/io.h"

#define SAMPLE_SLIDE "tests/data/CMU-1-Small-Region.svs"

/* The intermediates every timed operation reads, made once by the workflow's
 * own operations on the CPU worker and written to the output folder so the
 * peers read exactly the same pixels. */
typedef struct inputs {
  wsisa_image *rgb, *rc, *rc_open, *diff, *candidates, *big, *markers;
  wsisa_image *out_u8, *out_f32, *out_i32, *out_u8b;
  starpu_data_handle_t h_rgb, h_rc, h_rc_open, h_diff, h_cand, h_big, h_markers;
  starpu_data_handle_t h_out_u8, h_out_f32, h_out_i32, h_out_u8b;
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

static int prepare(inputs *in, int size, const char *dir, wsisa_err *e) {
  const double *p = wsisa_seg_defaults();
  wsisa_image *raw = NULL, *tmp_img[6] = {0};
  starpu_data_handle_t h_raw, t[6];
  int rc = mirrored_tile(SAMPLE_SLIDE, size, &raw, e);
  if (rc) return rc;
  if ((rc = wsisa_image_register(raw, &h_raw, e))) goto done;
  struct { wsisa_image **img; starpu_data_handle_t *h; int ch; wsisa_dtype type; } all[] = {
      {&in->rgb, &in->h_rgb, 3, WSISA_U8},        {&in->rc, &in->h_rc, 1, WSISA_U8},
      {&in->rc_open, &in->h_rc_open, 1, WSISA_U8}, {&in->diff, &in->h_diff, 1, WSISA_U8},
      {&in->candidates, &in->h_cand, 1, WSISA_U8}, {&in->big, &in->h_big, 1, WSISA_U8},
      {&in->markers, &in->h_markers, 1, WSISA_I32}, {&in->out_u8, &in->h_out_u8, 1, WSISA_U8},
      {&in->out_f32, &in->h_out_f32, 1, WSISA_F32}, {&in->out_i32, &in->h_out_i32, 1, WSISA_I32},
      {&in->out_u8b, &in->h_out_u8b, 1, WSISA_U8}};
  for (size_t i = 0; i < sizeof all / sizeof *all && !rc; i++)
    rc = new_img(size, all[i].ch, all[i].type, all[i].img, all[i].h, e);
  /* scratch: three masks, distance, relief, minima */
  static const wsisa_dtype tmp_types[6] = {WSISA_U8, WSISA_U8, WSISA_U8,
                                           WSISA_F32, WSISA_F32, WSISA_U8};
  for (int i = 0; i < 6 && !rc; i++) rc = new_img(size, 1, tmp_types[i], &tmp_img[i], &t[i], e);
  if (rc) goto done;
  wsisa_codelets_set_where(STARPU_CPU);
  /* rgb, rc, rc_open, diff, candidates (diff > G1, before filling), then the
   * level-5/6 chain for the separation inputs. */
  int s = wsisa_normalize_submit(h_raw, in->h_rgb, size, size);
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
  s |= wsisa_submit_neg_dist(t[3], in->h_big, t[4]);
  s |= wsisa_submit_hmin(t[4], in->h_out_f32, 1.0f, 8);
  s |= wsisa_submit_regional_min(in->h_out_f32, t[5], 8);
  s |= wsisa_submit_label(t[5], in->h_markers, 8);
  starpu_task_wait_for_all();
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  if (s) {
    rc = wsisa_error(e, WSISA_ERUNTIME, "cannot prepare the benchmark inputs");
    goto done;
  }
  /* bring the inputs home for the peers */
  starpu_data_handle_t home[] = {in->h_rgb, in->h_rc, in->h_rc_open, in->h_cand, in->h_big,
                                 in->h_markers};
  for (size_t i = 0; i < sizeof home / sizeof *home; i++) {
    starpu_data_acquire(home[i], STARPU_R);
    starpu_data_release(home[i]);
  }
  struct { const char *name; const wsisa_image *img; } files[] = {
      {"rgb.png", in->rgb},        {"rc.png", in->rc},   {"rc_open.png", in->rc_open},
      {"candidates.png", in->candidates}, {"big.png", in->big}, {"markers.tiff", in->markers}};
  char path[4200];
  for (size_t i = 0; i < sizeof files / sizeof *files && !rc; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
    rc = wsisa_image_write(path, files[i].img, e);
  }
done:
  for (int i = 0; i < 6; i++)
    if (tmp_img[i]) {
      starpu_data_unregister(t[i]);
      wsisa_image_free(tmp_img[i]);
    }
  if (raw) {
    starpu_data_unregister(h_raw);
    wsisa_image_free(raw);
  }
  return rc;
}

/* ---- the operations timed ------------------------------------------------- */

typedef int (*op_fn)(inputs *in);
static int op_open(inputs *in) {
  return wsisa_submit_morph(in->h_rc, in->h_out_u8, WSISA_MORPH_OPEN, 19);
}
static int op_recon(inputs *in) {
  return wsisa_submit_reconstruct(in->h_rc_open, in->h_rc, in->h_out_u8, 8);
}
static int op_fill(inputs *in) { return wsisa_submit_fill_holes(in->h_cand, in->h_out_u8, 4); }
static int op_label(inputs *in) { return wsisa_submit_label(in->h_cand, in->h_out_i32, 8); }
static int op_edt(inputs *in) { return wsisa_submit_edt(in->h_big, in->h_out_f32); }
static int op_watershed(inputs *in) {
  return wsisa_submit_watershed(in->h_rgb, in->h_markers, in->h_big, in->h_out_i32,
                                in->h_out_u8b);
}

typedef struct op_row {
  const char *name; /* also the peers' name for it */
  op_fn run;
  const char *peer; /* "opencv" or "skimage" */
} op_row;

static const op_row rows[] = {
    {"opening_disk19", op_open, "opencv"},
    {"reconstruction_8conn", op_recon, "skimage"},
    {"fill_holes_4conn", op_fill, "skimage"},
    {"label_8conn_stats", op_label, "opencv"},
    {"distance_transform", op_edt, "opencv"},
    {"watershed", op_watershed, "opencv"},
};
#define NROWS (sizeof rows / sizeof *rows)

static bench_stats time_op(inputs *in, op_fn fn, uint32_t where, int repeats) {
  double ms[64];
  if (repeats > 64) repeats = 64;
  wsisa_codelets_set_where(where);
  fn(in); /* warm-up: program build, first allocation, model calibration */
  starpu_task_wait_for_all();
  for (int r = 0; r < repeats; r++) {
    double t0 = wsisa_now();
    fn(in);
    starpu_task_wait_for_all();
    ms[r] = (wsisa_now() - t0) * 1e3;
  }
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  return bench_summarize(ms, repeats);
}

/* Read "name median min max" lines of a peer program. */
static int read_peer(const char *cmd, const char *peer, bench_stats *stats, int *have) {
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[512], name[128];
  double med, mn, mx;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%127s %lf %lf %lf", name, &med, &mn, &mx) == 4)
      for (size_t i = 0; i < NROWS; i++)
        if (strcmp(rows[i].name, name) == 0 && strcmp(rows[i].peer, peer) == 0) {
          stats[i] = (bench_stats){med, mn, mx};
          have[i] = 1;
        }
  return pclose(f) == 0 ? 0 : -1;
}

static bench_stats time_workflow(inputs *in, int size, int repeats) {
  double ms[64];
  if (repeats > 64) repeats = 64;
  wsisa_codelets_set_where(STARPU_CPU);
  for (int r = 0; r <= repeats; r++) {
    double t0 = wsisa_now();
    wsisa_tile_data tile;
    wsisa_err e = WSISA_ERR_INIT;
    if (wsisa_workflow_tile_submit(in->h_rgb, size, size, 1, &tile, &e) == 0) {
      wsisa_workflow_segment_submit(&tile, wsisa_seg_defaults(), in->h_out_u8b, &e);
      wsisa_workflow_tile_release(&tile, 1);
    }
    starpu_task_wait_for_all();
    if (r > 0) ms[r - 1] = (wsisa_now() - t0) * 1e3; /* run 0 warms up */
  }
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  return bench_summarize(ms, repeats);
}

static void free_inputs(inputs *in) {
  starpu_data_handle_t *hs[] = {&in->h_rgb, &in->h_rc, &in->h_rc_open, &in->h_diff,
                                &in->h_cand, &in->h_big, &in->h_markers, &in->h_out_u8,
                                &in->h_out_f32, &in->h_out_i32, &in->h_out_u8b};
  wsisa_image **imgs[] = {&in->rgb, &in->rc, &in->rc_open, &in->diff, &in->candidates,
                          &in->big, &in->markers, &in->out_u8, &in->out_f32, &in->out_i32,
                          &in->out_u8b};
  for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
    if (*hs[i]) starpu_data_unregister(*hs[i]);
    wsisa_image_free(*imgs[i]);
  }
  memset(in, 0, sizeof *in);
}

int bench_ops(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {{"quick", no_argument, 0, 'q'},
                                           {"repeats", required_argument, 0, 'r'},
                                           {"size", required_argument, 0, 's'},
                                           {"output", required_argument, 0, 'o'},
                                           {"no-opencl", no_argument, 0, 'n'},
                                           {0, 0, 0, 0}};
  long repeats = 5, size = 4096;
  int no_opencl = 0;
  const char *dir = "bench-results/ops";
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
    switch (opt) {
      case 'q': repeats = 3; break;
      case 'r': if ((rc = wsisa_cli_long("--repeats", optarg, &repeats, e))) return rc; break;
      case 's': if ((rc = wsisa_cli_long("--size", optarg, &size, e))) return rc; break;
      case 'o': dir = optarg; break;
      case 'n': no_opencl = 1; break;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (repeats < 1 || repeats > 64)
    return wsisa_error(e, WSISA_EUSAGE, "--repeats %ld: must be in 1..64", repeats);
  if (size < 64 || size > 4096 || size % 2)
    return wsisa_error(e, WSISA_EUSAGE, "--size %ld: must be even, in 64..4096", size);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  if (system(cmd) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", dir);

  setenv("STARPU_OPENCL_ON_CPUS", "1", 0);
  wsisa_runtime_opts ropts = {.ncpu = 1, .nopencl = 1};
  if ((rc = wsisa_codelets_start(&ropts, e))) return rc;
  inputs in;
  memset(&in, 0, sizeof in);
  bench_stats cpu[NROWS], cl[NROWS], peer[NROWS] = {{0}};
  int have_cl = !no_opencl && wsisa_runtime_nopencl() > 0, have_peer[NROWS] = {0};
  fprintf(stderr, "wsisa-bench ops: preparing %ldx%ld inputs in %s\n", size, size, dir);
  if ((rc = prepare(&in, (int)size, dir, e))) goto done;
  for (size_t i = 0; i < NROWS; i++) {
    fprintf(stderr, "wsisa-bench ops: %s\n", rows[i].name);
    cpu[i] = time_op(&in, rows[i].run, STARPU_CPU, (int)repeats);
    if (have_cl) cl[i] = time_op(&in, rows[i].run, STARPU_OPENCL, (int)repeats);
  }
  bench_stats whole = time_workflow(&in, (int)size, (int)repeats);
  /* StarPU's idle workers poll: stop them before the peers run */
  char context[512] = "";
  {
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem) {
      bench_print_context(mem);
      fclose(mem);
      snprintf(context, sizeof context, "%s", buf);
      free(buf);
    }
  }
  free_inputs(&in);
  wsisa_runtime_shutdown();
  /* peers, on the same files, one thread */
  snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 '%s/wsisa-bench-opencv' '%s' %ld 2>/dev/null",
           WSISA_BENCH_DIR, dir, repeats);
  int opencv_ok = read_peer(cmd, "opencv", peer, have_peer) == 0;
  snprintf(cmd, sizeof cmd,
           "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 '%s/bench/peers_skimage.py' "
           "'%s' %ld 2>/dev/null",
           WSISA_SOURCE_DIR, dir, repeats);
  int skimage_ok = read_peer(cmd, "skimage", peer, have_peer) == 0;

  char path[4200];
  snprintf(path, sizeof path, "%s/ops.csv", dir);
  FILE *csv = fopen(path, "w");
  if (!csv) {
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  fprintf(csv, "op,ours_cpu_ms,ours_cpu_min,ours_cpu_max,ours_opencl_ms,peer,peer_ms,peer_min,"
               "peer_max,peer_over_ours\n");
  fputs(context, stdout);
  printf("# %ldx%ld tile from %s, median of %ld runs (min..max); ours: CPU kernel on one "
         "core / OpenCL worker (PoCL)\n",
         size, size, SAMPLE_SLIDE, repeats);
  printf("%-22s %22s %10s %-8s %22s %8s\n", "operation", "ours CPU ms", "OpenCL ms", "peer",
         "peer ms", "peer/ours");
  for (size_t i = 0; i < NROWS; i++) {
    double ratio = have_peer[i] && cpu[i].median > 0 ? peer[i].median / cpu[i].median : 0;
    char ours_s[64], peer_s[64], cl_s[32], ratio_s[32] = "n/a";
    snprintf(ours_s, sizeof ours_s, "%.1f (%.1f..%.1f)", cpu[i].median, cpu[i].min, cpu[i].max);
    snprintf(cl_s, sizeof cl_s, "%.1f", have_cl ? cl[i].median : 0);
    if (have_peer[i])
      snprintf(peer_s, sizeof peer_s, "%.1f (%.1f..%.1f)", peer[i].median, peer[i].min,
               peer[i].max);
    else
      snprintf(peer_s, sizeof peer_s, "n/a");
    if (have_peer[i]) snprintf(ratio_s, sizeof ratio_s, "%.2fx", ratio);
    printf("%-22s %22s %10s %-8s %22s %8s\n", rows[i].name, ours_s, have_cl ? cl_s : "n/a",
           rows[i].peer, peer_s, ratio_s);
    fprintf(csv, "%s,%.3f,%.3f,%.3f,%.3f,%s,%.3f,%.3f,%.3f,%.3f\n", rows[i].name,
            cpu[i].median, cpu[i].min, cpu[i].max, have_cl ? cl[i].median : 0, rows[i].peer,
            have_peer[i] ? peer[i].median : 0, have_peer[i] ? peer[i].min : 0,
            have_peer[i] ? peer[i].max : 0, ratio);
  }
  printf("%-22s %.1f ms (%.1f..%.1f), CPU worker, default parameters\n",
         "normalize+segment", whole.median, whole.min, whole.max);
  fprintf(csv, "normalize_and_segment,%.3f,%.3f,%.3f,0,,0,0,0,0\n", whole.median, whole.min,
          whole.max);
  fclose(csv);
  if (!opencv_ok) printf("# OpenCV peer unavailable (build with libopencv-dev installed)\n");
  if (!skimage_ok) printf("# scikit-image peer unavailable (python3-skimage)\n");
done:
  free_inputs(&in);
  wsisa_runtime_shutdown();
  return rc;
}
