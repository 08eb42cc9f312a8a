/* wsisa-bench kernels: the CPU kernels a study's tasks stream over a tile,
 * timed as codelets on one CPU worker alone and as N copies at once on N CPU
 * workers. A kernel that streams more bytes a pixel slows more when the
 * copies share the memory bus: the ratio of the two times is its
 * memory-bandwidth share on this machine. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "codelets/codelets.h"
#include "io/io.h"

#define MAX_COPIES 16

/* One copy's data: the tile and the level-by-level intermediates of the
 * default parameters, each kernel's output kept for the next. */
typedef struct copy {
  wsisa_image *img[18];
  starpu_data_handle_t h[20];
  uint64_t counts[3], nlabels;
} copy;
enum {
  RGB, RC, RC_OPEN, BG, SEEDS, LOOSE, RBC, RECON, RECON4, DIFF, ABOVE, CAND, CAND8, SIZED, G2,
  GROWN, HYST, LABELS, /* images */
  COUNTS = 18          /* the comparison's counts; the label count is h[COUNTS + 1] */
};

typedef struct kernel_row {
  const char *name;
  int (*run)(copy *c);
} kernel_row;

#define H(k) c->h[k]
static int k_background(copy *c) { return wsisa_submit_background(H(RGB), H(BG), 220, 220, 220); }
static int k_ratio(copy *c) { return wsisa_submit_ratio_mask(H(RGB), H(SEEDS), 0, 1, 5.0); }
static int k_rbc(copy *c) {
  return wsisa_submit_ratio_mask(H(RGB), H(LOOSE), 0, 1, 4.0) ||
         wsisa_submit_bin_reconstruct(H(SEEDS), H(LOOSE), H(RBC), 8);
}
static int k_recon8(copy *c) { return wsisa_submit_reconstruct(H(RC_OPEN), H(RC), H(RECON), 8); }
static int k_recon4(copy *c) { return wsisa_submit_reconstruct(H(RC_OPEN), H(RC), H(RECON4), 4); }
static int k_sub(copy *c) {
  return wsisa_submit_sub_sat(H(RC), H(RECON), H(DIFF)) ||
         wsisa_submit_threshold(H(DIFF), H(ABOVE), 80);
}
static int k_fill4(copy *c) { return wsisa_submit_fill_holes(H(ABOVE), H(CAND), 4); }
static int k_fill8(copy *c) { return wsisa_submit_fill_holes(H(ABOVE), H(CAND8), 8); }
static int k_area(copy *c) { return wsisa_submit_area_filter(H(CAND), H(SIZED), 8, 11, 1000); }
static int k_hyst(copy *c) {
  return wsisa_submit_threshold(H(DIFF), H(G2), 45) ||
         wsisa_submit_bin_reconstruct(H(SIZED), H(G2), H(GROWN), 8);
}
static int k_open(copy *c) { return wsisa_submit_morph(H(GROWN), H(HYST), WSISA_MORPH_OPEN, 3); }
static int k_label(copy *c) {
  return wsisa_submit_label(H(HYST), H(LABELS), 4) ||
         wsisa_submit_count_labels(H(LABELS), H(COUNTS + 1));
}
static int k_compare(copy *c) { return wsisa_submit_compare(H(HYST), H(CAND), H(COUNTS)); }
#undef H

static const kernel_row rows[] = {
    {"background (level 1)", k_background},
    {"ratio_mask (level 1)", k_ratio},
    {"ratio_mask + bin_reconstruct (1)", k_rbc},
    {"reconstruct 8-conn (level 2)", k_recon8},
    {"reconstruct 4-conn (level 2)", k_recon4},
    {"sub_sat + threshold (level 3)", k_sub},
    {"fill_holes 4-conn (level 3)", k_fill4},
    {"fill_holes 8-conn (level 3)", k_fill8},
    {"area_filter (level 4)", k_area},
    {"threshold + bin_reconstruct (5)", k_hyst},
    {"morph open 3x3 (level 5)", k_open},
    {"label + count_labels", k_label},
    {"compare", k_compare},
};
#define NKERNELS (sizeof rows / sizeof *rows)

static void copy_free(copy *c) {
  for (int i = 0; i < COUNTS + 2; i++)
    if (c->h[i]) starpu_data_unregister(c->h[i]);
  for (int i = 1; i < LABELS + 1; i++) wsisa_image_free(c->img[i]);
  memset(c, 0, sizeof *c);
}

/* The copy's images registered in main RAM (the CPU kernels work on them in
 * place), and level 2's shared stage: rc = 255 - red, opened by the 19x19
 * disk. */
static int copy_make(copy *c, wsisa_image *rgb, wsisa_err *e) {
  memset(c, 0, sizeof *c);
  c->img[RGB] = rgb;
  for (int i = 1; i <= LABELS; i++)
    if (wsisa_image_new(rgb->width, rgb->height, 1, i == LABELS ? WSISA_I32 : WSISA_U8,
                        &c->img[i], e))
      return WSISA_ENOMEM;
  for (int i = 0; i <= LABELS; i++)
    if (wsisa_image_register(c->img[i], &c->h[i], e)) return WSISA_ERUNTIME;
  starpu_vector_data_register(&c->h[COUNTS], STARPU_MAIN_RAM, (uintptr_t)c->counts, 3,
                              sizeof *c->counts);
  starpu_vector_data_register(&c->h[COUNTS + 1], STARPU_MAIN_RAM, (uintptr_t)&c->nlabels, 1,
                              sizeof c->nlabels);
  if (wsisa_submit_invert(c->h[RGB], c->h[RC], 0) ||
      wsisa_submit_morph(c->h[RC], c->h[RC_OPEN], WSISA_MORPH_OPEN, 19))
    return wsisa_error(e, WSISA_ERUNTIME, "the level-2 stage could not be submitted");
  starpu_task_wait_for_all();
  return 0;
}

/* StarPU with `copies` CPU workers, one copy of the data each: every row's
 * operation submitted for every copy at once, the batch timed to its end,
 * `repeats` times after one untimed run (first allocations, models). */
static int time_copies(wsisa_image *rgb, int copies, int repeats, bench_stats *out,
                       wsisa_err *e) {
  /* eager: one queue, so the copies' tasks go to the idle workers at once */
  wsisa_runtime_opts ropts = {.sched = getenv("STARPU_SCHED") ? NULL : "eager", .ncpu = copies,
                              .nopencl = 0};
  int rc = wsisa_codelets_start(&ropts, e);
  if (rc) return rc;
  if (wsisa_runtime_ncpu() < copies) {
    wsisa_runtime_shutdown();
    return wsisa_error(e, WSISA_EUSAGE, "%d CPU workers asked, StarPU started %d", copies,
                       wsisa_runtime_ncpu());
  }
  copy *c = calloc((size_t)copies, sizeof *c);
  rc = c ? 0 : WSISA_ENOMEM;
  for (int i = 0; i < copies && !rc; i++) rc = copy_make(&c[i], rgb, e);
  double ms[BENCH_MAX_REPEATS];
  for (size_t k = 0; k < NKERNELS && !rc; k++) {
    for (int r = -1; r < repeats && !rc; r++) {
      const double t0 = wsisa_now();
      for (int i = 0; i < copies && !rc; i++) rc = rows[k].run(&c[i]);
      starpu_task_wait_for_all();
      if (r >= 0) ms[r] = (wsisa_now() - t0) * 1e3;
    }
    if (!rc) out[k] = bench_summarize(ms, repeats);
  }
  if (rc && !e->msg[0]) wsisa_error(e, rc, "%s: could not be submitted", rows[0].name);
  for (int i = 0; c && i < copies; i++) copy_free(&c[i]);
  free(c);
  wsisa_runtime_shutdown();
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsisa-bench kernels [--image PNG] [--copies N] [--repeats N | --quick] [-o DIR]\n"
          "\n"
          "The CPU kernels a study's tasks run over a tile, level by level with the\n"
          "default parameters, as codelets: on one CPU worker alone, then with N CPU\n"
          "workers, each running its own copy of the operation at once (StarPU's\n"
          "workers in a study, the same operation on N tiles). Times are wall ms from\n"
          "the submission to the last task's end, medians of the repeats (min..max).\n"
          "together/alone is the slowdown from sharing the machine's memory bandwidth\n"
          "and caches: a kernel that streams more bytes a pixel slows more. Meaningful\n"
          "with N cores idle; STARPU_SCHED as set, else eager.\n"
          "\n"
          "  --image PNG    the tile (default tests/data/tile_1024.png, installed in\n"
          "                 PREFIX/share/wsisa or in the source tree)\n"
          "  --copies N     CPU workers and copies at once, 2..%d (default 2)\n"
          "  --repeats N    runs per figure, 1..%d (default 30); --quick: 10\n"
          "  -o DIR         output folder (default bench-results/kernels): kernels.csv\n"
          "                 (kernel, alone_ms, alone_min, alone_max, copies, together_ms,\n"
          "                 together_min, together_max, together_over_alone)\n",
          MAX_COPIES, BENCH_MAX_REPEATS);
}

int bench_kernels(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {{"image", required_argument, 0, 'i'},
                                           {"copies", required_argument, 0, 'c'},
                                           {"repeats", required_argument, 0, 'r'},
                                           {"quick", no_argument, 0, 'q'},
                                           {"output", required_argument, 0, 'o'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  long copies = 2, repeats = 30;
  bench_opts o = {0};
  const char *image = NULL, *dir = "bench-results/kernels";
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (opt) {
      case 'i': image = optarg; break;
      case 'c': if ((rc = wsisa_cli_long("--copies", optarg, &copies, e))) return rc; break;
      case 'r': if ((rc = wsisa_cli_long("--repeats", optarg, &repeats, e))) return rc; break;
      case 'q': repeats = 10; break;
      case 'o': dir = optarg; break;
      case 'h': usage(stdout); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: unexpected argument (see wsisa-bench kernels --help)", argv[optind]);
  if (copies < 2 || copies > MAX_COPIES)
    return wsisa_error(e, WSISA_EUSAGE, "--copies %ld: must be in 2..%d", copies, MAX_COPIES);
  if (repeats < 1 || repeats > BENCH_MAX_REPEATS)
    return wsisa_error(e, WSISA_EUSAGE, "--repeats %ld: must be in 1..%d", repeats,
                       BENCH_MAX_REPEATS);
  char path[WSISA_PATH_MAX];
  if (!image) {
    wsisa_data_file("tile_1024.png", WSISA_SOURCE_DIR "/tests/data", path, sizeof path);
    image = path;
  }
  snprintf(o.dir, sizeof o.dir, "%s", dir);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  if (system(cmd) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", dir);
  wsisa_image *rgb = NULL;
  if ((rc = wsisa_image_read_rgb(image, &rgb, e))) return rc;
  bench_stats alone[NKERNELS], together[NKERNELS];
  wsisa_csv_writer *w = NULL;
  if (!(rc = time_copies(rgb, 1, (int)repeats, alone, e)) &&
      !(rc = time_copies(rgb, (int)copies, (int)repeats, together, e)) &&
      !(rc = bench_csv_open(&o, "kernels",
                            "kernel,alone_ms,alone_min,alone_max,copies,together_ms,"
                            "together_min,together_max,together_over_alone",
                            &w, e))) {
    bench_print_context(stdout);
    printf("# %s (%dx%d), wall ms per batch, median of %ld (min..max); alone: 1 CPU worker, "
           "together: %ld CPU workers, a copy each\n",
           image, rgb->width, rgb->height, repeats, copies);
    printf("%-34s %24s %24s %9s\n", "kernel", "alone ms", "together ms", "tog/alone");
    for (size_t k = 0; k < NKERNELS; k++) {
      char a[64], t[64];
      const double ratio = together[k].median / alone[k].median;
      printf("%-34s %24s %24s %8.2fx\n", rows[k].name, bench_fmt(a, sizeof a, alone[k], 1, 3),
             bench_fmt(t, sizeof t, together[k], 1, 3), ratio);
      wsisa_csv_text(w, rows[k].name);
      bench_csv_stats(w, alone[k], 1);
      wsisa_csv_num(w, (double)copies);
      bench_csv_stats(w, together[k], 1);
      wsisa_csv_num(w, ratio);
      wsisa_csv_end_row(w);
    }
    rc = wsisa_csv_close(w, e);
  }
  wsisa_image_free(rgb);
  return rc;
}
