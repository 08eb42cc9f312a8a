/* wsisa-bench predict: how good the estimate is (seed 004 §4). Calibrate the
 * performance models on one study, then run studies that differ from it
 * (more runs, another method and sampler, another tile size, another reuse
 * strategy, 1..N CPU workers up to the cores present, two ranks, CPU +
 * OpenCL workers where an OpenCL device is; object reuse on, the default,
 * and off) with the models frozen, and set each run's prediction (run.json,
 * made at its start from the models) against what it measured. The repeats
 * are rounds, each calibrating afresh in a STARPU_HOME of its own and then
 * running every configuration once: a calibration is one sample of the
 * machine's pace, so each round's predictions are set against its own runs
 * and a configuration's error is the median over the rounds. Beside every
 * run, a small reference study times the machine's pace, so a slow spell of
 * a shared machine is told apart from the estimate's error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "codelets/codelets.h"
#include "io/svg.h"

#define NAN_ (0.0 / 0.0)

typedef struct config {
  char label[32];
  char varies[64];     /* against the calibration study */
  const char *study;   /* which study file (below) */
  char env[160];       /* before `wsisa run` (may start mpirun) */
  const char *args;    /* after it */
  int mpi;             /* needs Open MPI */
  int opencl;          /* CPU + OpenCL workers: the models calibrated with them */
  int reuse_off;       /* --object-reuse off (the default is on) */
} config;

/* The studies: the calibration's, and those that differ from it. */
typedef struct study_spec {
  const char *name;
  const char *inputs_quick, *inputs_full; /* JSON "inputs" objects; %s: the source tree */
  const char *rest;                       /* method, sampler, metric */
} study_spec;

#define SLIDE "{ \"slides\": [\"%s/tests/data/CMU-1-Small-Region.svs\"], \"tile_size\": "
static const study_spec specs[] = {
    {"cal", "{ \"images\": [\"%s/tests/data/tile_1024.png\"] }", SLIDE "1024 }",
     "\"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
     "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\""},
    {"moat_t4", "{ \"images\": [\"%s/tests/data/tile_1024.png\"] }", SLIDE "1024 }",
     "\"method\": { \"name\": \"moat\", \"trajectories\": 4, \"levels\": 4 },\n"
     "  \"sampler\": { \"name\": \"halton\", \"seed\": 7 }, \"metric\": \"dice\""},
    {"corr_lhs", "{ \"images\": [\"%s/tests/data/tile_1024.png\"] }", SLIDE "1024 }",
     "\"parameters\": { \"G1\": {}, \"G2\": {}, \"min_size\": {}, \"recon_conn\": {},\n"
     "                  \"fill_holes_conn\": {} },\n"
     "  \"method\": { \"name\": \"correlation\", \"samples\": 24 },\n"
     "  \"sampler\": { \"name\": \"lhs\", \"seed\": 2 }, \"metric\": \"dice\""},
    {"vbd_lhs", "{ \"images\": [\"%s/tests/data/tile_1024.png\"] }", SLIDE "1024 }",
     "\"parameters\": { \"G1\": {}, \"min_size\": {}, \"T1\": {}, \"watershed_conn\": {} },\n"
     "  \"method\": { \"name\": \"vbd\", \"samples\": 16 },\n"
     "  \"sampler\": { \"name\": \"lhs\", \"seed\": 3 }, \"metric\": \"dice\""},
    /* the pace reference: 8 runs, 3 parameters, about 0.5 s with 2 workers */
    {"pace", "{ \"images\": [\"%s/tests/data/tile_1024.png\"] }", SLIDE "1024 }",
     "\"parameters\": { \"G1\": {}, \"T1\": {}, \"min_size\": {} },\n"
     "  \"method\": { \"name\": \"correlation\", \"samples\": 8 },\n"
     "  \"sampler\": { \"name\": \"lhs\", \"seed\": 11 }, \"metric\": \"dice\""},
    {"tile_small", "{ \"images\": [\"%s/tests/data/tile_256.png\", \"%s/tests/data/tile_256_b.png\"] }",
     SLIDE "512 }",
     "\"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
     "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\""},
};
#define NSPECS (sizeof specs / sizeof *specs)

/* The configurations: studies and strategies unlike the calibration's, with
 * object reuse on (the default) and off, 1..N CPU workers up to the cores
 * present, two ranks, and CPU + OpenCL workers where an OpenCL device is. */
#define MAX_CONFIGS 48
static size_t add(config *c, size_t n, const char *label, const char *varies, const char *study,
                  const char *env, const char *args, int mpi, int opencl, int reuse_off) {
  if (n >= MAX_CONFIGS) return n;
  config *x = &c[n];
  memset(x, 0, sizeof *x);
  snprintf(x->label, sizeof x->label, "%s", label);
  snprintf(x->varies, sizeof x->varies, "%s", varies);
  snprintf(x->env, sizeof x->env, "%s", env);
  x->study = study;
  x->args = args;
  x->mpi = mpi;
  x->opencl = opencl;
  x->reuse_off = reuse_off;
  return n + 1;
}

static size_t make_configs(config *c, int cores, int have_cl) {
  size_t n = 0;
  n = add(c, n, "seen", "none: the calibration study", "cal", "", "", 0, 0, 0);
  n = add(c, n, "moat_t4", "64 runs, another seed", "moat_t4", "", "", 0, 0, 0);
  n = add(c, n, "corr_lhs", "correlation, LHS, 5 parameters", "corr_lhs", "", "", 0, 0, 0);
  n = add(c, n, "vbd_lhs", "VBD, LHS 16, 4 parameters", "vbd_lhs", "", "", 0, 0, 0);
  n = add(c, n, "tile_small", "tile size (256 images; 512 on the slide)", "tile_small", "", "", 0,
          0, 0);
  n = add(c, n, "trtma", "strategy trtma", "cal", "", "--reuse trtma", 0, 0, 0);
  n = add(c, n, "none", "strategy none", "cal", "", "--reuse none", 0, 0, 0);
  for (int w = 1; w <= cores && w <= 64; w++) {
    char label[32], varies[64], env[64];
    snprintf(label, sizeof label, "%d_worker%s", w, w > 1 ? "s" : "");
    snprintf(varies, sizeof varies, "%d CPU worker%s", w, w > 1 ? "s" : "");
    snprintf(env, sizeof env, "STARPU_NCPU=%d", w);
    n = add(c, n, label, varies, "cal", env, "", 0, 0, 0);
  }
  n = add(c, n, "2_ranks", "2 ranks x 1 CPU worker (mpirun)", "cal",
          "STARPU_NCPU=1 mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2", "", 1, 0,
          0);
  if (have_cl) {
    char env[160];
    snprintf(env, sizeof env, "STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=1 STARPU_NCPU=%d",
             cores > 1 ? cores - 1 : 1);
    n = add(c, n, "cpu_opencl", "CPU + 1 OpenCL worker", "cal", env, "", 0, 1, 0);
  }
  /* object reuse off: levels 6-7 with their fine-grain codelets */
  n = add(c, n, "seen_off", "object reuse off", "cal", "", "", 0, 0, 1);
  n = add(c, n, "moat_t4_off", "64 runs, object reuse off", "moat_t4", "", "", 0, 0, 1);
  n = add(c, n, "vbd_lhs_off", "VBD, object reuse off", "vbd_lhs", "", "", 0, 0, 1);
  return n;
}

/* Is there an OpenCL device StarPU starts a worker on (PoCL's CPU device
 * with STARPU_OPENCL_ON_CPUS=1)? */
static int opencl_present(void) {
  setenv("STARPU_OPENCL_ON_CPUS", "1", 0);
  wsisa_runtime_opts ro = {.ncpu = 0, .nopencl = 1};
  wsisa_err why = WSISA_ERR_INIT;
  if (wsisa_codelets_start(&ro, &why)) return 0;
  int n = wsisa_runtime_nopencl();
  wsisa_runtime_shutdown();
  return n > 0;
}

static int write_spec(const bench_opts *o, const study_spec *sp, char path[WSISA_PATH_MAX],
                      wsisa_err *e) {
  int rc = wsisa_path_fmt_err(path, e, "%s/studies/predict_%s.json", o->dir, sp->name);
  if (rc) return rc;
  FILE *f = fopen(path, "w");
  if (!f) return wsisa_error(e, WSISA_EIO, "%s: cannot write", path);
  char inputs[1024];
  snprintf(inputs, sizeof inputs, o->quick ? sp->inputs_quick : sp->inputs_full, WSISA_SOURCE_DIR,
           WSISA_SOURCE_DIR);
  fprintf(f, "{ \"inputs\": %s,\n  %s }\n", inputs, sp->rest);
  return fclose(f) ? wsisa_error(e, WSISA_EIO, "%s: cannot write", path) : 0;
}

static int cmp_abs(const void *a, const void *b) {
  double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
  return (x > y) - (x < y);
}

/* A configuration is at tile sizes calibration ran when its estimate times
 * (almost) none of its work from other sizes (run.json's
 * estimate.predicted.interpolated_share): the bar (median and worst error) is
 * over those. */
#define AT_CALIBRATED_SIZES 0.01

/* Median and worst of |errors|. */
static void summarize(double *err, int n, double *median, double *worst) {
  qsort(err, (size_t)n, sizeof *err, cmp_abs);
  *median = n ? (n % 2 ? fabs(err[n / 2]) : 0.5 * (fabs(err[n / 2 - 1]) + fabs(err[n / 2]))) : NAN_;
  *worst = n ? fabs(err[n - 1]) : NAN_;
}

/* The geometric mean of a[i] / b[i] over the pairs both positive. */
static double geomean_ratio(const double *a, const double *b, size_t n) {
  double sum = 0;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (a[i] > 0 && b[i] > 0) sum += log(a[i] / b[i]), m++;
  return m ? exp(sum / (double)m) : NAN_;
}

/* Round k's calibrations, each in a STARPU_HOME of its own (home[h]): with
 * CPU workers, and with an OpenCL device a second with its worker beside
 * them; their seconds into *seconds. */
static int calibrate_round(const bench_opts *o, int k, int have_cl, const char *study,
                           char home[2][WSISA_PATH_MAX], double *seconds, wsisa_err *e) {
  char round[16] = "", env[BENCH_CMD_MAX], log[WSISA_PATH_MAX], args[BENCH_CMD_MAX];
  if (k) snprintf(round, sizeof round, "_%d", k + 1);
  *seconds = 0;
  for (int h = 0; h < 1 + have_cl; h++) {
    int rc =
        wsisa_path_fmt_err(home[h], e, "%s/starpu_home%s%s", o->dir, round, h ? "_opencl" : "");
    if (rc) return rc;
    snprintf(args, sizeof args, "rm -rf '%s' && mkdir -p '%s'", home[h], home[h]);
    if (system(args) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", home[h]);
    fprintf(stderr, "wsisa-bench predict: calibrating on %s%s (round %d of %d)\n", study,
            h ? " with an OpenCL worker" : "", k + 1, o->repeats);
    snprintf(env, sizeof env, "STARPU_HOME='%s'%s", home[h],
             h ? " STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=1" : "");
    snprintf(args, sizeof args, "calibrate --study '%s'", study);
    if ((rc =
             wsisa_path_fmt_err(log, e, "%s/calibrate%s%s.log", o->dir, round, h ? "_opencl" : "")))
      return rc;
    double t0 = wsisa_now();
    rc = bench_wsisa(env, args, log, e);
    if (rc) return rc;
    *seconds += wsisa_now() - t0;
  }
  return 0;
}

/* What the table says and how it was measured. */
static void print_header(const bench_opts *o, double t_cal, int have_cl, int cores, double base) {
  printf("# the repeats in rounds: each round runs wsisa calibrate on the first study in a "
         "STARPU_HOME of its own (%d calibration%s, %.0f s in all%s), then one run of each "
         "configuration with the models frozen (STARPU_CALIBRATE=0); predicted = run.json "
         "estimate, made at the run's start; %d cores\n",
         o->repeats, o->repeats > 1 ? "s" : "", t_cal,
         have_cl ? "; each once with CPU workers and once with an OpenCL worker beside them" : "",
         cores);
  printf("# error = (predicted - measured) / measured, each round's prediction against its own "
         "run, median over the rounds; pred = median prediction; makespan = seconds.execute; RSS "
         "= peak of "
         "rank 0; object reuse on unless the label ends in _off; interp%% = the work the estimate "
         "timed from other tile sizes (per pixel), * = at tile sizes calibration ran (under "
         "%.0f%%)\n",
         100 * AT_CALIBRATED_SIZES);
  printf("# pace = the seconds of a reference study (correlation, 8 runs on %s, 2 CPU workers, "
         "median %.2f s) on either side of the run over their median over every run, median over "
         "the rounds; paced s = measured / pace, the run at the median pace (a slow spell taken "
         "out), and its error\n",
         o->quick ? "tile_1024.png" : "the sample slide's tiles at 1024", base);
  printf("%-12s %-40s %9s %22s %7s %5s %7s %7s %8s %8s %7s %6s %7s\n", "config", "differs in",
         "pred s", "measured s", "err%", "pace", "paced s", "err%", "pred MiB", "meas MiB", "err%",
         "uncal%", "interp%");
}

/* A configuration's row of predict.csv. */
static void csv_row(wsisa_csv_writer *w, const config *cf, const bench_run *r, double pmake,
                    double prss, const double err[3], double pace, double paced, int sized) {
  wsisa_csv_text(w, cf->label);
  wsisa_csv_text(w, cf->varies);
  wsisa_csv_text(w, cf->reuse_off ? "off" : "on");
  wsisa_csv_num(w, pmake);
  bench_csv_stats(w, r->exec, 1);
  wsisa_csv_num(w, err[0]);
  wsisa_csv_num(w, prss / 1024);
  wsisa_csv_num(w, r->rss.median / 1024);
  wsisa_csv_num(w, err[1]);
  wsisa_csv_num(w, 100 * r->uncalibrated);
  wsisa_csv_num(w, 100 * r->interpolated);
  wsisa_csv_text(w, sized ? "yes" : "no");
  wsisa_csv_num(w, pace);
  wsisa_csv_num(w, paced);
  wsisa_csv_num(w, err[2]);
  wsisa_csv_end_row(w);
}

/* The errors' median and worst, object reuse on and off, at calibrated tile
 * sizes and in all ([reuse off][at calibrated sizes only]). */
static void print_errors(double err_t[2][2][MAX_CONFIGS], double err_p[2][2][MAX_CONFIGS],
                         double err_m[2][2][MAX_CONFIGS], int n[2][2]) {
  /* first the bar: object reuse on, at tile sizes calibrated */
  for (int k = 0; k < 2; k++)
    for (int only = 1; only >= 0; only--) {
      double med_t, worst_t, med_p, worst_p, med_m, worst_m;
      summarize(err_t[k][only], n[k][only], &med_t, &worst_t);
      summarize(err_p[k][only], n[k][only], &med_p, &worst_p);
      summarize(err_m[k][only], n[k][only], &med_m, &worst_m);
      printf("# object reuse %s, %d configurations%s: makespan |error| median %.1f%%, worst "
             "%.1f%% (paced: median %.1f%%, worst %.1f%%); peak RSS |error| median %.1f%%, worst "
             "%.1f%%%s\n",
             k ? "off" : "on", n[k][only], only ? " at calibrated tile sizes (*)" : " in all",
             med_t, worst_t, med_p, worst_p, med_m, worst_m,
             k || !only ? "" : " (seed 004: mean 1.1-2.3% for tasks seen, up to 15% for similar ones)");
    }
}

/* predict.svg, predict_scatter.svg and predict_rss.svg: predicted against
 * measured, makespan (pt, mt) and peak RSS (pm, mm). */
static int write_figures(const bench_opts *o, size_t nconfigs, const char **lp, double *pt,
                         double *mt, double *pm, double *mm, wsisa_err *e) {
  int rc;
  wsisa_svg_series st[2] = {{"predicted", pt, NULL, NULL}, {"measured", mt, NULL, NULL}};
  wsisa_svg_series sm[2] = {{"predicted", pm, NULL, NULL}, {"measured", mm, NULL, NULL}};
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(o, "predict", path, e)) return WSISA_EUSAGE;
  if ((rc = wsisa_svg_bars(path, "Makespan: predicted from the models against measured", "seconds",
                           nconfigs, lp, 2, st, e)))
    return rc;
  if (bench_svg_path(o, "predict_scatter", path, e)) return WSISA_EUSAGE;
  if ((rc = wsisa_svg_scatter(path, "Makespan: predicted against measured", "measured (s)",
                              "predicted (s)", nconfigs, lp, mt, pt, e)))
    return rc;
  if (bench_svg_path(o, "predict_rss", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "Peak RSS: predicted against measured", "MiB", nconfigs, lp, 2, sm, e);
}

/* How the machine's pace moved over the rounds: the models are frozen, so
 * a round whose every configuration ran slower than predicted is the
 * machine's, not the estimate's; the reference tells it apart. */
static void print_rounds(int repeats, size_t nconfigs, const int *have,
                         double pred[][BENCH_MAX_REPEATS], double pace[][BENCH_MAX_REPEATS], double exec[][BENCH_MAX_REPEATS],
                         const int *in_bar, double round_err[][BENCH_MAX_REPEATS], const double *cal_s,
                         bench_stats pace_all) {
  printf("# by round (its calibration's seconds; measured / predicted, geometric mean over the "
         "configurations with an estimate; the reference's pace, median; |error| median and "
         "worst, object reuse on at calibrated tile sizes, this calibration alone):");
  for (int k = 0; k < repeats; k++) {
    double measured[MAX_CONFIGS], predicted[MAX_CONFIGS], p[MAX_CONFIGS], bar[MAX_CONFIGS];
    size_t m = 0;
    int nb = 0;
    for (size_t c = 0; c < nconfigs; c++)
      if (have[c] && !isnan(pred[c][k])) {
        p[m] = pace[c][k], measured[m] = exec[c][k], predicted[m++] = pred[c][k];
        if (in_bar[c]) bar[nb++] = round_err[c][k];
      }
    double med, worst;
    summarize(bar, nb, &med, &worst);
    printf("%s %.0f s %.3f %.3f %.1f%% %.1f%%", k ? ";" : "", cal_s[k],
           geomean_ratio(measured, predicted, m), bench_summarize(p, (int)m).median, med, worst);
  }
  printf("; the pace over every run: %.3f (%.3f..%.3f)\n", pace_all.median, pace_all.min,
         pace_all.max);
}

/* Each run's pace (the references on either side of it, at[c][k] and the
 * next, over `base`) and its time at the median pace; the pace over every
 * run. The configurations' figures are summarized in res. */
static bench_stats pace_runs(int repeats, size_t nconfigs, const int *have, const double *ref,
                             size_t at[][BENCH_MAX_REPEATS], double base,
                             double exec[][BENCH_MAX_REPEATS], double wall[][BENCH_MAX_REPEATS],
                             double rss[][BENCH_MAX_REPEATS],
                             double pace[][BENCH_MAX_REPEATS], double paced[][BENCH_MAX_REPEATS],
                             bench_stats *pace_s, bench_stats *paced_s, bench_run *res) {
  static double every_pace[MAX_CONFIGS * BENCH_MAX_REPEATS];
  size_t npace = 0;
  for (size_t c = 0; c < nconfigs; c++)
    if (have[c]) {
      for (int k = 0; k < repeats; k++) {
        pace[c][k] = sqrt(ref[at[c][k]] * ref[at[c][k] + 1]) / base;
        paced[c][k] = exec[c][k] / pace[c][k];
        every_pace[npace++] = pace[c][k];
      }
      paced_s[c] = bench_summarize(paced[c], repeats);
      pace_s[c] = bench_summarize(pace[c], repeats);
      res[c].wall = bench_summarize(wall[c], repeats);
      res[c].exec = bench_summarize(exec[c], repeats);
      res[c].rss = bench_summarize(rss[c], repeats);
    }
  return bench_summarize(every_pace, (int)npace);
}

int bench_predict(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "predict", &o, e);
  if (rc) return rc;
  long ncores = sysconf(_SC_NPROCESSORS_ONLN);
  int cores = ncores > 0 ? (int)ncores : 1;
  int have_cl = !o.no_opencl && opencl_present();
  static config configs[MAX_CONFIGS];
  size_t nconfigs = make_configs(configs, cores, have_cl);
  char home[2][WSISA_PATH_MAX], env[BENCH_CMD_MAX], study[NSPECS][WSISA_PATH_MAX];
  for (size_t i = 0; i < NSPECS && !rc; i++) rc = write_spec(&o, &specs[i], study[i], e);
  if (rc) return rc;
  double t_cal = 0;
  static bench_run res[MAX_CONFIGS];
  int have[MAX_CONFIGS] = {0};
  bench_opts once = o;
  once.repeats = 1;
  /* the pace reference, CPU workers with the models frozen: one run before
   * each configuration's run and one after the last */
  size_t sp = 0;
  while (sp < NSPECS && strcmp(specs[sp].name, "pace") != 0) sp++;
  char pace_env[BENCH_CMD_MAX], args[BENCH_CMD_MAX];
  bench_run pr;
  static double ref[MAX_CONFIGS * BENCH_MAX_REPEATS + 1], cal_s[BENCH_MAX_REPEATS];
  static size_t at[MAX_CONFIGS][BENCH_MAX_REPEATS];
  size_t nref = 0;
  /* the repeats in turns, one run of every configuration a round: a shared
   * machine's speed drifts over minutes, and a slow spell then falls on
   * every configuration alike instead of on one configuration's repeats */
  static double wall[MAX_CONFIGS][BENCH_MAX_REPEATS], exec[MAX_CONFIGS][BENCH_MAX_REPEATS],
      rss[MAX_CONFIGS][BENCH_MAX_REPEATS], pred[MAX_CONFIGS][BENCH_MAX_REPEATS],
      pred_rss[MAX_CONFIGS][BENCH_MAX_REPEATS];
  for (int k = 0; k < o.repeats; k++) {
    /* models of their own, a set a round: the round's estimates rest on
     * its calibration only */
    if ((rc = calibrate_round(&o, k, have_cl, study[0], home, &cal_s[k], e))) return rc;
    t_cal += cal_s[k];
    snprintf(pace_env, sizeof pace_env, "STARPU_HOME='%s' STARPU_CALIBRATE=0", home[0]);
    for (size_t c = 0; c < nconfigs; c++) {
#ifndef WSISA_WITH_MPI
      if (configs[c].mpi) continue;
#endif
      size_t s = 0;
      while (s < NSPECS && strcmp(specs[s].name, configs[c].study) != 0) s++;
      fprintf(stderr, "wsisa-bench predict: %s (round %d of %d)\n", configs[c].label, k + 1,
              o.repeats);
      if ((rc = bench_run_wsisa(&once, pace_env, study[sp], "", &pr, e))) return rc;
      at[c][k] = nref;
      ref[nref++] = pr.exec.median;
      /* the models stay as calibrated: no run adds to them */
      snprintf(env, sizeof env, "STARPU_HOME='%s' STARPU_CALIBRATE=0 %s", home[configs[c].opencl],
               configs[c].env);
      snprintf(args, sizeof args, "%s%s", configs[c].args,
               configs[c].reuse_off ? " --object-reuse off" : "");
      if ((rc = bench_run_wsisa(&once, env, study[s], args, &res[c], e))) return rc;
      wall[c][k] = res[c].wall.median;
      exec[c][k] = res[c].exec.median;
      rss[c][k] = res[c].rss.median;
      pred[c][k] = res[c].pred_makespan;
      pred_rss[c][k] = res[c].pred_rss_kib;
      have[c] = 1;
    }
  }
  if ((rc = bench_run_wsisa(&once, pace_env, study[sp], "", &pr, e))) return rc;
  ref[nref] = pr.exec.median;
  /* a run's pace: the references on either side of it (geometric mean) over
   * the references' median; its time at the median pace, measured / pace.
   * The base is not the reference right after calibration: that one runs
   * 6-14 % slower than the same reference minutes later, and the models
   * (made over the whole calibration) agree with the later ones */
  double base = bench_summarize(ref, (int)nref + 1).median;
  static double pace[MAX_CONFIGS][BENCH_MAX_REPEATS], paced[MAX_CONFIGS][BENCH_MAX_REPEATS];
  static bench_stats paced_s[MAX_CONFIGS], pace_s[MAX_CONFIGS];
  bench_stats pace_all = pace_runs(o.repeats, nconfigs, have, ref, at, base, exec, wall, rss, pace,
                                  paced, pace_s, paced_s, res);

  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "predict",
                           "config,varies,object_reuse,predicted_s,measured_s,measured_min,"
                           "measured_max,makespan_error_pct,predicted_rss_mib,measured_rss_mib,"
                           "rss_error_pct,uncalibrated_pct,interpolated_pct,calibrated_sizes,"
                           "pace,paced_measured_s,paced_error_pct",
                           &w, e)))
    return rc;
  bench_print_runs_context(&o, &res[0], NULL);
  print_header(&o, t_cal, have_cl, cores, base);
  /* [reuse off][at calibrated sizes only] */
  static double err_t[2][2][MAX_CONFIGS], err_p[2][2][MAX_CONFIGS], err_m[2][2][MAX_CONFIGS];
  static double pt[MAX_CONFIGS], mt[MAX_CONFIGS], pm[MAX_CONFIGS], mm[MAX_CONFIGS];
  static const char *lp[MAX_CONFIGS];
  static double round_err[MAX_CONFIGS][BENCH_MAX_REPEATS];
  static int in_bar[MAX_CONFIGS];
  int n[2][2] = {{0, 0}, {0, 0}}, missing = 0;
  for (size_t c = 0; c < nconfigs; c++) {
    pt[c] = mt[c] = pm[c] = mm[c] = NAN_;
    lp[c] = configs[c].label;
    if (!have[c]) continue;
    const bench_run *r = &res[c];
    /* every run is to carry its estimate (run.json's estimate.error_percent) */
    int no_estimate = 0;
    for (int k = 0; k < o.repeats; k++) no_estimate |= isnan(pred[c][k]) || isnan(pred_rss[c][k]);
    if (no_estimate) {
      printf("%-12s %-40s no estimate in run.json\n", configs[c].label, configs[c].varies);
      missing++;
      continue;
    }
    /* each round's prediction against its own run, then the median over
     * the rounds */
    double rt[BENCH_MAX_REPEATS], rp[BENCH_MAX_REPEATS], rm[BENCH_MAX_REPEATS];
    for (int k = 0; k < o.repeats; k++) {
      rt[k] = round_err[c][k] = 100 * (pred[c][k] - exec[c][k]) / exec[c][k];
      rp[k] = 100 * (pred[c][k] - paced[c][k]) / paced[c][k];
      rm[k] = 100 * (pred_rss[c][k] - rss[c][k]) / rss[c][k];
    }
    double et = bench_summarize(rt, o.repeats).median, ep = bench_summarize(rp, o.repeats).median,
           em = bench_summarize(rm, o.repeats).median;
    double pmake = bench_summarize(pred[c], o.repeats).median,
           prss = bench_summarize(pred_rss[c], o.repeats).median;
    char a[64];
    /* a run.json from before the share was written counts as calibrated */
    int sized = !(r->interpolated >= AT_CALIBRATED_SIZES);
    printf("%-12s %-40s %9.2f %22s %+6.1f%% %5.2f %7.2f %+6.1f%% %8.1f %8.1f %+6.1f%% %6.1f "
           "%6.1f%s\n",
           configs[c].label, configs[c].varies, pmake,
           bench_fmt(a, sizeof a, r->exec, 1, 2), et, pace_s[c].median, paced_s[c].median, ep,
           prss / 1024, r->rss.median / 1024, em, 100 * r->uncalibrated,
           isnan(r->interpolated) ? 0 : 100 * r->interpolated, sized ? "*" : "");
    const double err[3] = {et, em, ep};
    csv_row(w, &configs[c], r, pmake, prss, err, pace_s[c].median, paced_s[c].median, sized);
    int k = configs[c].reuse_off;
    in_bar[c] = !k && sized;
    for (int only = 0; only < 2 && !isnan(et); only++)
      if (!only || sized) {
        err_t[k][only][n[k][only]] = et, err_m[k][only][n[k][only]] = em;
        err_p[k][only][n[k][only]] = ep;
        n[k][only]++;
      }
    pt[c] = pmake;
    mt[c] = r->exec.median;
    pm[c] = prss / 1024;
    mm[c] = r->rss.median / 1024;
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  print_errors(err_t, err_p, err_m, n);
  print_rounds(o.repeats, nconfigs, have, pred, pace, exec, in_bar, round_err, cal_s, pace_all);
  if (missing)
    printf("# %d configuration%s without an estimate in run.json\n", missing, missing > 1 ? "s" : "");
  return write_figures(&o, nconfigs, lp, pt, mt, pm, mm, e);
}
