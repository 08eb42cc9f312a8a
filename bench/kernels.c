/* wsisa-bench kernels: the CPU kernels a study's tasks stream over a tile,
 * timed alone and with N copies at once on N threads. A kernel that streams
 * more bytes a pixel slows more when the copies share the memory bus: the
 * ratio of the two times is its memory-bandwidth share on this machine. */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/io.h"

#define MAX_COPIES 16

/* One copy's images: the tile and the level-by-level intermediates of the
 * default parameters, each kernel's output kept for the next. */
typedef struct images {
  const wsisa_image *rgb;
  wsisa_image *rc, *rc_open, *bg, *seeds, *loose, *rbc, *recon, *recon4, *diff, *above, *cand,
      *cand8, *sized, *g2, *grown, *hyst, *labels;
  uint64_t counts[3], nlabels;
} images;

typedef struct kernel_row {
  const char *name;
  int (*run)(images *m);
} kernel_row;

static int k_background(images *m) { return wsisa_cpu_background(m->rgb, 220, 220, 220, m->bg); }
static int k_ratio(images *m) { return wsisa_cpu_ratio_mask(m->rgb, 0, 1, 5.0, m->seeds); }
static int k_rbc(images *m) {
  return wsisa_cpu_ratio_mask(m->rgb, 0, 1, 4.0, m->loose) ||
         wsisa_cpu_bin_reconstruct(m->seeds, m->loose, 8, m->rbc);
}
static int k_recon8(images *m) { return wsisa_cpu_reconstruct(m->rc_open, m->rc, 8, m->recon); }
static int k_recon4(images *m) { return wsisa_cpu_reconstruct(m->rc_open, m->rc, 4, m->recon4); }
static int k_sub(images *m) {
  return wsisa_cpu_sub_sat(m->rc, m->recon, m->diff) || wsisa_cpu_threshold(m->diff, 80, m->above);
}
static int k_fill4(images *m) { return wsisa_cpu_fill_holes(m->above, 4, m->cand); }
static int k_fill8(images *m) { return wsisa_cpu_fill_holes(m->above, 8, m->cand8); }
static int k_area(images *m) { return wsisa_cpu_area_filter(m->cand, 8, 11, 1000, m->sized); }
static int k_hyst(images *m) {
  return wsisa_cpu_threshold(m->diff, 45, m->g2) ||
         wsisa_cpu_bin_reconstruct(m->sized, m->g2, 8, m->grown);
}
static int k_open(images *m) { return wsisa_cpu_morph(m->grown, WSISA_MORPH_OPEN, 3, m->hyst); }
static int k_label(images *m) {
  return wsisa_cpu_label(m->hyst, 4, m->labels) || wsisa_cpu_count_labels(m->labels, &m->nlabels);
}
static int k_compare(images *m) { return wsisa_cpu_compare(m->hyst, m->cand, m->counts); }

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

typedef struct copy {
  images m;
  int repeats, rc;
  double ms[NKERNELS][BENCH_MAX_REPEATS];
} copy;

/* The calling thread's CPU time: a thread the machine's other processes
 * keep waiting does not count, a thread waiting on memory does. */
static double thread_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void *run_copy(void *arg) {
  copy *c = arg;
  for (int r = 0; r < c->repeats && !c->rc; r++)
    for (size_t k = 0; k < NKERNELS && !c->rc; k++) {
      const double t0 = thread_ms();
      c->rc = rows[k].run(&c->m);
      c->ms[k][r] = thread_ms() - t0;
    }
  wsisa_cpu_scratch_release();
  return NULL;
}

/* The u8 images of a copy, listed once; labels (i32) apart. */
#define IMAGES_U8(m)                                                                    \
  {&(m)->rc,    &(m)->rc_open, &(m)->bg,   &(m)->seeds, &(m)->loose, &(m)->rbc,         \
   &(m)->recon, &(m)->recon4,  &(m)->diff, &(m)->above, &(m)->cand,  &(m)->cand8,       \
   &(m)->sized, &(m)->g2,      &(m)->grown, &(m)->hyst}

static void images_free(images *m) {
  wsisa_image **u8[] = IMAGES_U8(m);
  for (size_t i = 0; i < sizeof u8 / sizeof *u8; i++) {
    wsisa_image_free(*u8[i]);
    *u8[i] = NULL;
  }
  wsisa_image_free(m->labels);
  m->labels = NULL;
}

static int images_make(images *m, const wsisa_image *rgb, wsisa_err *e) {
  const int w = rgb->width, h = rgb->height;
  wsisa_image **u8[] = IMAGES_U8(m);
  m->rgb = rgb;
  for (size_t i = 0; i < sizeof u8 / sizeof *u8; i++)
    if (wsisa_image_new(w, h, 1, WSISA_U8, u8[i], e)) return WSISA_ENOMEM;
  if (wsisa_image_new(w, h, 1, WSISA_I32, &m->labels, e)) return WSISA_ENOMEM;
  /* level 2's shared stage: rc = 255 - red, opened by the 19x19 disk */
  if (wsisa_cpu_invert(rgb, 0, m->rc) || wsisa_cpu_morph(m->rc, WSISA_MORPH_OPEN, 19, m->rc_open))
    return wsisa_error(e, WSISA_EINTERNAL, "the level-2 stage failed");
  return 0;
}

/* `copies` threads at once, each on its own images; ms[k] = the mean over
 * the copies of each one's median. */
static int time_copies(const wsisa_image *rgb, int copies, int repeats, bench_stats *out,
                       wsisa_err *e) {
  copy *c = calloc((size_t)copies, sizeof *c);
  pthread_t th[MAX_COPIES];
  int rc = c ? 0 : WSISA_ENOMEM, started = 0;
  for (int i = 0; i < copies && !rc; i++) {
    c[i].repeats = repeats;
    rc = images_make(&c[i].m, rgb, e);
  }
  for (; started < copies && !rc; started++)
    if (pthread_create(&th[started], NULL, run_copy, &c[started])) rc = WSISA_ENOMEM;
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < copies && !rc; i++) rc = c[i].rc;
  for (size_t k = 0; k < NKERNELS && !rc; k++) {
    out[k] = (bench_stats){0, 0, 0};
    for (int i = 0; i < copies; i++) {
      const bench_stats s = bench_summarize(c[i].ms[k], repeats);
      out[k].median += s.median / copies;
      out[k].min = i == 0 || s.min < out[k].min ? s.min : out[k].min;
      out[k].max = i == 0 || s.max > out[k].max ? s.max : out[k].max;
    }
  }
  for (int i = 0; c && i < copies; i++) images_free(&c[i].m);
  free(c);
  if (rc && !e->msg[0]) wsisa_error(e, rc, "a kernel failed");
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsisa-bench kernels [--image PNG] [--copies N] [--repeats N | --quick] [-o DIR]\n"
          "\n"
          "The CPU kernels a study's tasks run over a tile, level by level with the\n"
          "default parameters, on one thread alone, then on N threads at once, each\n"
          "with its own images (StarPU's N CPU workers running N tasks). Times are each\n"
          "thread's CPU time per call (a thread kept waiting by other processes on a\n"
          "shared machine does not count; one waiting on memory does): the median of\n"
          "the repeats (min..max), in ms, with N copies the mean of the copies'\n"
          "medians. together/alone is the slowdown from sharing the machine's memory\n"
          "bandwidth and caches: a kernel that streams more bytes a pixel slows more.\n"
          "Meaningful with N cores idle: on a loaded machine the copies may not run at\n"
          "once.\n"
          "\n"
          "  --image PNG    the tile (default tests/data/tile_1024.png, installed in\n"
          "                 PREFIX/share/wsisa or in the source tree)\n"
          "  --copies N     threads at once, 1..%d (default 2)\n"
          "  --repeats N    calls per kernel and thread, 1..%d (default 30); --quick: 10\n"
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
  if (copies < 1 || copies > MAX_COPIES)
    return wsisa_error(e, WSISA_EUSAGE, "--copies %ld: must be in 1..%d", copies, MAX_COPIES);
  if (repeats < 1 || repeats > BENCH_MAX_REPEATS)
    return wsisa_error(e, WSISA_EUSAGE, "--repeats %ld: must be in 1..%d", repeats,
                       BENCH_MAX_REPEATS);
  char path[4200];
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
    printf("# %s (%dx%d), thread CPU ms per call, median of %ld (min..max); %ld copies at "
           "once\n",
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
