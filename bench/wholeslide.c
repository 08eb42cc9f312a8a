/* wsisa-bench wholeslide: `wsisa segment SLIDE --all` on slides made from the
 * bundled sample by mirroring it into kx x ky copies (every other copy
 * flipped, so neighbours meet edge to edge), written as pyramidal JPEG TIFFs
 * at its 0.499 um/pixel: tiles per second on 1, 2, ... CPU workers, the cost
 * per tile and the peak memory as the slide grows (6, 70, 278 tissue tiles),
 * against segmenting the same tiles one `wsisa segment --tile` process each. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "io/io.h"

#define SAMPLE "CMU-1-Small-Region.svs"
#define MOSAIC_TILE 256
#define MOSAIC_QUALITY 90
/* the per-tile loop segments at most this many tiles of a slide (its cost per
 * tile does not depend on how many); --quick: fewer */
#define LOOP_TILES 12
#define LOOP_TILES_QUICK 3

typedef struct slide_case {
  const char *name;
  int kx, ky; /* copies of the sample; 0: the sample itself */
} slide_case;

static const slide_case full_cases[] = {{"sample", 0, 0}, {"mosaic_4x3", 4, 3}, {"mosaic_8x6", 8, 6}};
static const slide_case quick_cases[] = {{"sample", 0, 0}, {"mosaic_2x1", 2, 1}};

/* ---- the mosaics -------------------------------------------------------------- */

typedef struct mosaic_src {
  wsisa_image *sample;
  int kx, ky;
} mosaic_src;

/* Level-0 pixel (x, y) of the mosaic: the sample's, mirrored copy by copy. */
static const uint8_t *mosaic_px(const mosaic_src *m, int64_t x, int64_t y) {
  const int64_t w = m->sample->width, h = m->sample->height;
  const int64_t sx = (x / w) % 2 ? w - 1 - x % w : x % w;
  const int64_t sy = (y / h) % 2 ? h - 1 - y % h : y % h;
  return (const uint8_t *)wsisa_image_row(m->sample, (int)sy) + sx * 3;
}

/* A level's pixel is the rounded mean of the level-0 block under it (clipped
 * at the edges), as a scanner's pyramid. */
static int paint_mosaic(void *ctx, int level, int64_t x, int64_t y, int w, int h, uint8_t *rgb,
                        size_t stride, wsisa_err *e) {
  (void)e;
  const mosaic_src *m = ctx;
  const int64_t k = (int64_t)1 << level;
  const int64_t W = (int64_t)m->sample->width * m->kx, H = (int64_t)m->sample->height * m->ky;
  for (int j = 0; j < h; j++) {
    uint8_t *out = rgb + (size_t)j * stride;
    for (int i = 0; i < w; i++) {
      const int64_t x0 = (x + i) * k, y0 = (y + j) * k;
      const int64_t x1 = x0 + k < W ? x0 + k : W, y1 = y0 + k < H ? y0 + k : H;
      uint64_t sum[3] = {0, 0, 0}, n = 0;
      for (int64_t yy = y0; yy < y1; yy++)
        for (int64_t xx = x0; xx < x1; xx++, n++) {
          const uint8_t *p = mosaic_px(m, xx, yy);
          sum[0] += p[0], sum[1] += p[1], sum[2] += p[2];
        }
      for (int c = 0; c < 3; c++) out[3 * i + c] = (uint8_t)((2 * sum[c] + n) / (2 * n));
    }
  }
  return 0;
}

/* DIR/slides/NAME.tiff: the sample mirrored kx x ky, made once. */
static int make_mosaic(const bench_opts *o, const slide_case *c, const char *sample,
                       char path[WSISA_PATH_MAX], wsisa_err *e) {
  if (!c->kx) return wsisa_path_fmt_err(path, e, "%s", sample);
  int rc = wsisa_path_fmt_err(path, e, "%s/slides/%s.tiff", o->dir, c->name);
  if (rc) return rc;
  struct stat st;
  if (stat(path, &st) == 0) return 0;
  char dir[WSISA_PATH_MAX];
  if ((rc = wsisa_path_fmt_err(dir, e, "%s/slides", o->dir))) return rc;
  mkdir(dir, 0777);
  wsisa_slide *s = NULL;
  mosaic_src m = {NULL, c->kx, c->ky};
  rc = wsisa_slide_open(sample, &s, e);
  wsisa_level l0;
  if (!rc) rc = wsisa_slide_level(s, 0, &l0, e);
  if (!rc) rc = wsisa_slide_read_rgb(s, 0, 0, 0, (int)l0.width, (int)l0.height, &m.sample, e);
  wsisa_slide_close(s);
  double mpp = 0.499;
  if (!rc) {
    wsisa_scale sc;
    wsisa_slide *again = NULL;
    if (!wsisa_slide_open(sample, &again, NULL) &&
        !wsisa_scale_choose(again, 0, WSISA_TARGET_MPP, &sc, NULL))
      mpp = sc.mpp;
    wsisa_slide_close(again);
    printf("# writing %s: the sample mirrored %dx%d, %lldx%lld at %.4g um/pixel, JPEG %d\n",
           path, c->kx, c->ky, (long long)l0.width * c->kx, (long long)l0.height * c->ky, mpp,
           MOSAIC_QUALITY);
    fflush(stdout);
    const wsisa_pyramid_opts po = {.tile = MOSAIC_TILE, .jpeg_quality = MOSAIC_QUALITY,
                                   .mpp = mpp};
    wsisa_stage stage = WSISA_STAGE_INIT;
    rc = wsisa_pyramid_write_staged(&stage, path, l0.width * c->kx, l0.height * c->ky, &po,
                                    paint_mosaic, &m, e);
    if (!rc) rc = wsisa_stage_commit(&stage, e);
    if (rc) wsisa_stage_abort(&stage);
  }
  wsisa_image_free(m.sample);
  return rc;
}

/* ---- timing a command ------------------------------------------------------------ */

/* `cmd` through the shell, timed, with the peak RSS of the processes it
 * started (KiB) and their CPU seconds (user + system: less sensitive than
 * the wall time to other jobs on the machine): a child of our own waits for
 * them, so that its RUSAGE_CHILDREN holds theirs alone. */
static int timed(const char *cmd, double *wall, double *rss_kib, double *cpu) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  const double t0 = wsisa_now();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fd[0]);
    int st = system(cmd);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double v[3] = {st == 0 ? 0.0 : 1.0, (double)ru.ru_maxrss,
                   (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                       (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec};
    if (write(fd[1], v, sizeof v) != (ssize_t)sizeof v) _exit(2);
    _exit(0);
  }
  close(fd[1]);
  double v[3] = {1, 0, 0};
  ssize_t got = read(fd[0], v, sizeof v);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *wall = wsisa_now() - t0;
  *rss_kib = v[1];
  if (cpu) *cpu = v[2];
  return got == (ssize_t)sizeof v && v[0] == 0 && WIFEXITED(status) && !WEXITSTATUS(status) ? 0
                                                                                            : -1;
}

/* The tissue tiles of a slide at 1024 (wsisa tiles' grid): their columns and
 * rows, at most `cap`; their count. */
static size_t tissue_tiles(const char *slide, int *cols, int *rows, size_t cap, wsisa_err *e) {
  wsisa_slide *s = NULL;
  wsisa_scale sc;
  wsisa_grid *g = NULL;
  size_t n = 0;
  if (wsisa_slide_open(slide, &s, e) || wsisa_scale_choose(s, 0, WSISA_TARGET_MPP, &sc, e) ||
      wsisa_grid_make_scaled(s, &sc, 1024, 0, &g, e)) {
    wsisa_slide_close(s);
    return 0;
  }
  for (size_t i = 0; i < g->ntiles; i++)
    if (g->tiles[i].tissue) {
      if (n < cap) cols[n] = g->tiles[i].col, rows[n] = g->tiles[i].row;
      n++;
    }
  wsisa_grid_free(g);
  wsisa_slide_close(s);
  return n;
}

/* The nuclei `segment --all` printed ("..., N nuclei, ..."). */
static double nuclei_of(const char *log) {
  FILE *f = fopen(log, "r");
  char line[8192];
  double n = NAN;
  while (f && fgets(line, sizeof line, f)) {
    const char *at = strstr(line, " tiles, ");
    if (at && strstr(line, " nuclei, ")) n = strtod(at + 8, NULL);
  }
  if (f) fclose(f);
  return n;
}

static int parse(int argc, char **argv, bench_opts *o, int *workers, int *nworkers,
                 wsisa_err *e) {
  /* --workers LIST is ours; the rest is bench_parse's */
  char *rest[32];
  int nrest = 0;
  const char *list = NULL;
  for (int i = 0; i < argc && nrest < 31; i++) {
    if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) list = argv[++i];
    else rest[nrest++] = argv[i];
  }
  rest[nrest] = NULL;
  int rc = bench_parse(nrest, rest, "wholeslide", o, e);
  if (rc) return rc;
  *nworkers = 0;
  if (!list) {
    /* 1 and 2, as the papers' tables: more when the cores allow */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int w = 1; w <= (cores > 2 ? cores : 2) && *nworkers < 8; w *= 2) workers[(*nworkers)++] = w;
    return 0;
  }
  char *copy = strdup(list), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t && *nworkers < 8; t = strtok_r(NULL, ",", &save)) {
    long v;
    if ((rc = wsisa_cli_long("--workers", t, &v, e)) || v < 1 || v > 1024) {
      free(copy);
      return rc ? rc : wsisa_error(e, WSISA_EUSAGE, "--workers %s: 1..1024 each", list);
    }
    workers[(*nworkers)++] = (int)v;
  }
  free(copy);
  return 0;
}

int bench_wholeslide(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int workers[8], nworkers = 0;
  int rc = parse(argc, argv, &o, workers, &nworkers, e);
  if (rc) return rc;
  char sample[WSISA_PATH_MAX];
  wsisa_data_file(SAMPLE, WSISA_SOURCE_DIR "/tests/data", sample, sizeof sample);
  const slide_case *cases = o.quick ? quick_cases : full_cases;
  const size_t ncases = o.quick ? sizeof quick_cases / sizeof *quick_cases
                                : sizeof full_cases / sizeof *full_cases;
  wsisa_csv_writer *w = NULL;
  if ((rc = bench_csv_open(&o, "wholeslide",
                           "slide,width,height,tiles,workers,nuclei,wall_s,wall_min,wall_max,"
                           "tiles_per_s,s_per_tile,peak_rss_mib,rss_min,rss_max,"
                           "s_per_tile_over_smallest,cpu_s,cpu_min,cpu_max,cpu_s_per_tile,"
                           "cpu_per_tile_over_smallest,loop_tiles,loop_s_per_tile,"
                           "loop_over_all",
                           &w, e)))
    return rc;
  bench_print_context(stdout);
  printf("# wsisa segment SLIDE --all --geojson --features --summary (tile 1024, defaults), "
         "CPU workers only; median of %d (min..max); the loop: one `wsisa segment --tile i,j "
         "-o mask.png --geojson --features` process per tissue tile (at most %d), %d workers\n",
         o.repeats, o.quick ? LOOP_TILES_QUICK : LOOP_TILES, workers[nworkers - 1]);
  printf("%-11s %6s %5s %7s %8s %22s %9s %9s %9s %9s %18s %9s %12s %9s\n", "slide", "tiles",
         "wkrs", "nuclei", "tiles/s", "wall s", "s/tile", "vs first", "cpu/tile", "vs first",
         "peak MiB", "loop s", "loop s/tile", "loop/all");
  double first_per_tile[8], first_cpu[8];
  for (int k = 0; k < nworkers; k++) first_per_tile[k] = first_cpu[k] = NAN;
  for (size_t c = 0; c < ncases && !rc; c++) {
    char slide[WSISA_PATH_MAX];
    if ((rc = make_mosaic(&o, &cases[c], sample, slide, e))) break;
    int cols[LOOP_TILES], rows[LOOP_TILES];
    const size_t ntiles = tissue_tiles(slide, cols, rows, LOOP_TILES, e);
    if (!ntiles) {
      rc = wsisa_error(e, WSISA_EIO, "%s: no tissue tile", slide);
      break;
    }
    wsisa_slide *sl = NULL;
    wsisa_level l0 = {0};
    if (!wsisa_slide_open(slide, &sl, NULL)) wsisa_slide_level(sl, 0, &l0, NULL);
    wsisa_slide_close(sl);
    /* the loop, once per slide, on the most workers */
    char out[WSISA_PATH_MAX], cmd[40000], log[WSISA_PATH_MAX];
    if ((rc = wsisa_path_fmt_err(out, e, "%s/out-%s", o.dir, cases[c].name))) break;
    const size_t most = o.quick ? LOOP_TILES_QUICK : LOOP_TILES;
    const size_t nloop = ntiles < most ? ntiles : most;
    double loop_wall = 0;
    for (size_t t = 0; t < nloop && !rc; t++) {
      double wall, rss;
      snprintf(cmd, sizeof cmd,
               "rm -rf '%s' && mkdir -p '%s' && env STARPU_OPENCL_ON_CPUS=0 STARPU_NOPENCL=0 "
               "STARPU_NCPU=%d '%s' segment '%s' --tile %d,%d -o '%s/m.png' --geojson "
               "'%s/n.geojson' --features '%s/f.csv' >'%s.log' 2>&1",
               out, out, workers[nworkers - 1], bench_wsisa_exe(), slide, cols[t], rows[t], out,
               out, out, out);
      if (timed(cmd, &wall, &rss, NULL))
        rc = wsisa_error(e, WSISA_ERUNTIME, "%s failed (see %s.log)", cmd, out);
      loop_wall += wall;
    }
    const double loop_per_tile = loop_wall / (double)nloop;
    for (int k = 0; k < nworkers && !rc; k++) {
      double wall[BENCH_MAX_REPEATS], rss[BENCH_MAX_REPEATS], cpu[BENCH_MAX_REPEATS];
      double nuclei = NAN;
      for (int r = 0; r < o.repeats && !rc; r++) {
        if ((rc = wsisa_path_fmt_err(log, e, "%s.log", out))) break;
        snprintf(cmd, sizeof cmd,
                 "rm -rf '%s' && mkdir -p '%s' && cd '%s' && env STARPU_OPENCL_ON_CPUS=0 "
                 "STARPU_NOPENCL=0 STARPU_NCPU=%d '%s' segment '%s' --all --geojson n.geojson "
                 "--features f.csv --summary s.csv >'%s' 2>&1",
                 out, out, out, workers[k], bench_wsisa_exe(), slide, log);
        if (timed(cmd, &wall[r], &rss[r], &cpu[r]))
          rc = wsisa_error(e, WSISA_ERUNTIME, "%s failed (see %s)", cmd, log);
        nuclei = nuclei_of(log);
      }
      if (rc) break;
      const bench_stats ws = bench_summarize(wall, o.repeats), rs = bench_summarize(rss, o.repeats);
      const bench_stats cs = bench_summarize(cpu, o.repeats);
      const double per_tile = ws.median / (double)ntiles, cpu_per_tile = cs.median / (double)ntiles;
      if (isnan(first_per_tile[k])) first_per_tile[k] = per_tile;
      if (isnan(first_cpu[k])) first_cpu[k] = cpu_per_tile;
      char wbuf[64], rbuf[64];
      printf("%-11s %6zu %5d %7.0f %8.2f %22s %9.3f %9.3f %9.3f %9.3f %18s %9.1f %12.3f %9.2f\n",
             cases[c].name, ntiles, workers[k], nuclei, (double)ntiles / ws.median,
             bench_fmt(wbuf, sizeof wbuf, ws, 1, 1), per_tile, per_tile / first_per_tile[k],
             cpu_per_tile, cpu_per_tile / first_cpu[k],
             bench_fmt(rbuf, sizeof rbuf, rs, 1.0 / 1024, 0), loop_wall, loop_per_tile,
             loop_per_tile / per_tile);
      fflush(stdout);
      wsisa_csv_text(w, cases[c].name);
      wsisa_csv_num(w, (double)l0.width);
      wsisa_csv_num(w, (double)l0.height);
      wsisa_csv_num(w, (double)ntiles);
      wsisa_csv_num(w, workers[k]);
      wsisa_csv_num(w, nuclei);
      bench_csv_stats(w, ws, 1);
      wsisa_csv_num(w, (double)ntiles / ws.median);
      wsisa_csv_num(w, per_tile);
      bench_csv_stats(w, rs, 1.0 / 1024);
      wsisa_csv_num(w, per_tile / first_per_tile[k]);
      bench_csv_stats(w, cs, 1);
      wsisa_csv_num(w, cpu_per_tile);
      wsisa_csv_num(w, cpu_per_tile / first_cpu[k]);
      wsisa_csv_num(w, (double)nloop);
      wsisa_csv_num(w, loop_per_tile);
      wsisa_csv_num(w, loop_per_tile / per_tile);
      wsisa_csv_end_row(w);
    }
  }
  int crc = wsisa_csv_close(w, e);
  return rc ? rc : crc;
}

/* ---- wsisa-bench tilesample: the indices as tiles are added ---------------------- */

/* Average ranks (ties share theirs). */
static void ranks_of(const double *v, size_t n, double *rank) {
  for (size_t i = 0; i < n; i++) {
    size_t below = 0, equal = 0;
    for (size_t j = 0; j < n; j++) below += v[j] < v[i], equal += v[j] == v[i];
    rank[i] = (double)below + (double)(equal + 1) / 2.0;
  }
}

/* Spearman's rank correlation of a and b (NaN when either is flat). */
static double spearman(const double *a, const double *b, size_t n) {
  double ra[64], rb[64], ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
  if (n > 64) return NAN;
  ranks_of(a, n, ra);
  ranks_of(b, n, rb);
  for (size_t i = 0; i < n; i++) ma += ra[i] / (double)n, mb += rb[i] / (double)n;
  for (size_t i = 0; i < n; i++) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/* indices.csv's mu_star of the dice output, per parameter, into mu (the
 * parameters' order of the file); the count. */
static size_t mu_star_of(const char *dir, char names[][32], double *mu, size_t cap,
                         wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  wsisa_csv *c = NULL;
  if (wsisa_path_fmt_err(path, e, "%s/indices.csv", dir) ||
      wsisa_csv_read_table(path, "output", &c, e))
    return 0;
  long pc = wsisa_csv_column(c, "parameter"), mc = wsisa_csv_column(c, "mu_star");
  size_t n = 0;
  for (size_t r = 0; r < c->nrows && n < cap && pc >= 0 && mc >= 0; r++) {
    if (strcmp(wsisa_csv_cell(c, r, 0), "dice") != 0) continue;
    snprintf(names[n], 32, "%s", wsisa_csv_cell(c, r, (size_t)pc));
    if (wsisa_csv_number(c, r, (size_t)mc, &mu[n], e)) break;
    n++;
  }
  wsisa_csv_free(c);
  return n;
}

int bench_tilesample(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "tilesample", &o, e);
  if (rc) return rc;
  char sample[WSISA_PATH_MAX], slide[WSISA_PATH_MAX];
  wsisa_data_file(SAMPLE, WSISA_SOURCE_DIR "/tests/data", sample, sizeof sample);
  /* the 4x3 mosaic's 70 tissue tiles, a sample of 32 and its first 8 and 16;
   * --quick: the sample slide's 6, a sample of 4 and its first 1 and 2 */
  const slide_case *c = o.quick ? &quick_cases[0] : &full_cases[1];
  if ((rc = make_mosaic(&o, c, sample, slide, e))) return rc;
  const size_t chosen = o.quick ? 4 : 32;
  const size_t sizes[4] = {chosen / 4, chosen / 2, chosen, 0}; /* 0: every tissue tile */
  const size_t nsizes = 4;
  char names[WSISA_SEG_NPARAMS][32];
  double mu[4][WSISA_SEG_NPARAMS], wall[4];
  size_t nparams = 0;
  bench_print_context(stdout);
  printf("# wsisa run: MOAT, 2 trajectories of the 15 parameters (32 runs), Halton seed 1, "
         "dice, on %s (tile 1024) with inputs.tiles {\"sample\": N, \"seed\": 1} (a sample of "
         "N is the first N of a larger one), and on every tissue tile; CPU workers only\n",
         c->name);
  for (size_t k = 0; k < nsizes && !rc; k++) {
    char study[WSISA_PATH_MAX], out[WSISA_PATH_MAX], cmd[40000], tiles[96] = "";
    if ((rc = wsisa_path_fmt_err(study, e, "%s/studies/tilesample_%zu.json", o.dir, sizes[k])) ||
        (rc = wsisa_path_fmt_err(out, e, "%s/run_%zu", o.dir, sizes[k])))
      break;
    if (sizes[k])
      snprintf(tiles, sizeof tiles, ", \"tiles\": { \"sample\": %zu, \"seed\": 1 }", sizes[k]);
    FILE *f = fopen(study, "w");
    if (!f) return wsisa_error(e, WSISA_EIO, "%s: %s", study, strerror(errno));
    fprintf(f,
            "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 1024%s },\n"
            "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
            "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\" }\n",
            slide, tiles);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && env STARPU_OPENCL_ON_CPUS=0 STARPU_NOPENCL=0 '%s' run --study '%s' "
             "-o '%s' >'%s.log' 2>&1",
             out, bench_wsisa_exe(), study, out, out);
    double rss;
    if (timed(cmd, &wall[k], &rss, NULL)) {
      rc = wsisa_error(e, WSISA_ERUNTIME, "%s failed (see %s.log)", cmd, out);
      break;
    }
    size_t n = mu_star_of(out, names, mu[k], WSISA_SEG_NPARAMS, e);
    if (!n) rc = wsisa_error(e, WSISA_EFORMAT, "%s/indices.csv: no dice indices", out);
    nparams = n;
  }
  if (rc) return rc;
  wsisa_csv_writer *w = NULL;
  if ((rc = bench_csv_open(&o, "tilesample",
                           "parameter,mu_star_quarter,mu_star_half,mu_star_chosen,mu_star_all",
                           &w, e)))
    return rc;
  printf("%-22s", "mu_star (dice)");
  for (size_t k = 0; k < nsizes; k++) {
    char head[32];
    if (sizes[k]) snprintf(head, sizeof head, "%zu tiles", sizes[k]);
    else snprintf(head, sizeof head, "all tissue");
    printf(" %12s", head);
  }
  printf("\n");
  for (size_t p = 0; p < nparams; p++) {
    printf("%-22s", names[p]);
    wsisa_csv_text(w, names[p]);
    for (size_t k = 0; k < nsizes; k++) {
      printf(" %12.4f", mu[k][p]);
      wsisa_csv_num(w, mu[k][p]);
    }
    printf("\n");
    wsisa_csv_end_row(w);
  }
  /* against the chosen tiles (100 %) and against every tissue tile: the
   * ranks' agreement, the largest change over the largest mu* */
  static const char *const rows[] = {"spearman_vs_chosen", "max_change_vs_chosen",
                                     "spearman_vs_all", "max_change_vs_all", "wall_s"};
  for (int r = 0; r < 5; r++) {
    printf("%-22s", rows[r]);
    wsisa_csv_text(w, rows[r]);
    const size_t ref = r < 2 ? 2 : 3;
    double top = 0;
    for (size_t p = 0; p < nparams; p++) top = fmax(top, mu[ref][p]);
    for (size_t k = 0; k < nsizes; k++) {
      double v;
      if (r == 4) {
        v = wall[k];
      } else if (r % 2 == 0) {
        v = spearman(mu[k], mu[ref], nparams);
      } else {
        v = 0;
        for (size_t p = 0; p < nparams; p++) v = fmax(v, fabs(mu[k][p] - mu[ref][p]));
        v = top > 0 ? v / top : NAN;
      }
      printf(" %12.4f", v);
      wsisa_csv_num(w, v);
    }
    printf("\n");
    wsisa_csv_end_row(w);
  }
  printf("# spearman: rank correlation of the 15 mu* with those of the reference column; "
         "max_change: the largest |mu* - reference mu*| over the reference's largest mu*\n");
  return wsisa_csv_close(w, e);
}
