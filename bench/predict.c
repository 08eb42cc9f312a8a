/* wsisa-bench predict: how good the estimate is (seed 004 §4). Calibrate the
 * performance models on one study, then run studies that differ from it
 * (more runs, another method and sampler, another tile size, another reuse
 * strategy, one worker, two ranks) with the models frozen, and set each
 * run's prediction (run.json, made at its start from the models) against
 * what it measured. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "io/svg.h"

#define NAN_ (0.0 / 0.0)

typedef struct config {
  const char *label;
  const char *varies;  /* against the calibration study */
  const char *study;   /* which study file (below) */
  const char *env;     /* before `wsisa run` (may start mpirun) */
  const char *args;    /* after it */
  int mpi;             /* needs Open MPI */
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
    {"tile_small", "{ \"images\": [\"%s/tests/data/tile_256.png\", \"%s/tests/data/tile_256_b.png\"] }",
     SLIDE "512 }",
     "\"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
     "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\""},
};
#define NSPECS (sizeof specs / sizeof *specs)

static const config configs[] = {
    {"seen", "none: the calibration study", "cal", "", "", 0},
    {"moat_t4", "64 runs, another seed", "moat_t4", "", "", 0},
    {"corr_lhs", "correlation, LHS, 5 parameters", "corr_lhs", "", "", 0},
    {"tile_small", "tile size (256 images; 512 on the slide)", "tile_small", "", "", 0},
    {"trtma", "strategy trtma", "cal", "", "--reuse trtma", 0},
    {"none", "strategy none", "cal", "", "--reuse none", 0},
    {"1_worker", "1 CPU worker", "cal", "STARPU_NCPU=1", "", 0},
    {"2_ranks", "2 ranks x 1 CPU worker (mpirun)", "cal",
     "STARPU_NCPU=1 mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2", "", 1},
};
#define NCONFIGS (sizeof configs / sizeof *configs)

static int write_spec(const bench_opts *o, const study_spec *sp, char *path, size_t cap,
                      wsisa_err *e) {
  snprintf(path, cap, "%s/studies/predict_%s.json", o->dir, sp->name);
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

/* Median and worst of |errors|. */
static void summarize(double *err, int n, double *median, double *worst) {
  qsort(err, (size_t)n, sizeof *err, cmp_abs);
  *median = n ? (n % 2 ? fabs(err[n / 2]) : 0.5 * (fabs(err[n / 2 - 1]) + fabs(err[n / 2]))) : NAN_;
  *worst = n ? fabs(err[n - 1]) : NAN_;
}

int bench_predict(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "predict", &o, e);
  if (rc) return rc;
  char home[4300], env[9000], log[4300], study[NSPECS][4300], args[12800];
  /* models of their own: the estimate rests on this calibration only */
  snprintf(home, sizeof home, "%s/starpu_home", o.dir);
  snprintf(args, sizeof args, "rm -rf '%s' && mkdir -p '%s'", home, home);
  if (system(args) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", home);
  for (size_t i = 0; i < NSPECS && !rc; i++) rc = write_spec(&o, &specs[i], study[i], sizeof study[i], e);
  if (rc) return rc;
  fprintf(stderr, "wsisa-bench predict: calibrating on %s\n", study[0]);
  snprintf(env, sizeof env, "STARPU_HOME='%s'", home);
  snprintf(args, sizeof args, "calibrate --study '%s'", study[0]);
  snprintf(log, sizeof log, "%s/calibrate.log", o.dir);
  double t0 = wsisa_now();
  if ((rc = bench_wsisa(env, args, log, e))) return rc;
  double t_cal = wsisa_now() - t0;

  bench_run res[NCONFIGS];
  int have[NCONFIGS] = {0};
  for (size_t c = 0; c < NCONFIGS; c++) {
#ifndef WSISA_WITH_MPI
    if (configs[c].mpi) continue;
#endif
    size_t s = 0;
    while (s < NSPECS && strcmp(specs[s].name, configs[c].study) != 0) s++;
    fprintf(stderr, "wsisa-bench predict: %s\n", configs[c].label);
    /* the models stay as calibrated: no run adds to them */
    snprintf(env, sizeof env, "STARPU_HOME='%s' STARPU_CALIBRATE=0 %s", home, configs[c].env);
    if ((rc = bench_run_wsisa(&o, env, study[s], configs[c].args, &res[c], e))) return rc;
    have[c] = 1;
  }

  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "predict",
                           "config,varies,predicted_s,measured_s,measured_min,measured_max,"
                           "makespan_error_pct,predicted_rss_mib,measured_rss_mib,rss_error_pct,"
                           "uncalibrated_pct",
                           &w, e)))
    return rc;
  bench_print_runs_context(&o, &res[0], NULL);
  printf("# calibration: wsisa calibrate on the first study (%.0f s); then every run with the models "
         "frozen (STARPU_CALIBRATE=0); predicted = run.json estimate, made at the run's start\n",
         t_cal);
  printf("# error = (predicted - measured) / measured; makespan = seconds.execute; RSS = peak of "
         "rank 0\n");
  printf("%-11s %-40s %9s %22s %7s %8s %8s %7s %6s\n", "config", "differs in", "pred s",
         "measured s", "err%", "pred MiB", "meas MiB", "err%", "uncal%");
  double err_t[NCONFIGS], err_m[NCONFIGS];
  double pt[NCONFIGS], mt[NCONFIGS], pm[NCONFIGS], mm[NCONFIGS];
  const char *lp[NCONFIGS];
  int n = 0;
  for (size_t c = 0; c < NCONFIGS; c++) {
    pt[c] = mt[c] = pm[c] = mm[c] = NAN_;
    lp[c] = configs[c].label;
    if (!have[c]) continue;
    const bench_run *r = &res[c];
    double et = 100 * (r->pred_makespan - r->exec.median) / r->exec.median;
    double em = 100 * (r->pred_rss_kib - r->rss.median) / r->rss.median;
    char a[64];
    printf("%-11s %-40s %9.2f %22s %+6.1f%% %8.1f %8.1f %+6.1f%% %6.1f\n", configs[c].label,
           configs[c].varies, r->pred_makespan, bench_fmt(a, sizeof a, r->exec, 1, 2), et,
           r->pred_rss_kib / 1024, r->rss.median / 1024, em, 100 * r->uncalibrated);
    wsisa_csv_text(w, configs[c].label);
    wsisa_csv_text(w, configs[c].varies);
    wsisa_csv_num(w, r->pred_makespan);
    bench_csv_stats(w, r->exec, 1);
    wsisa_csv_num(w, et);
    wsisa_csv_num(w, r->pred_rss_kib / 1024);
    wsisa_csv_num(w, r->rss.median / 1024);
    wsisa_csv_num(w, em);
    wsisa_csv_num(w, 100 * r->uncalibrated);
    wsisa_csv_end_row(w);
    if (!isnan(et)) err_t[n] = et, err_m[n] = em, n++;
    pt[c] = r->pred_makespan;
    mt[c] = r->exec.median;
    pm[c] = r->pred_rss_kib / 1024;
    mm[c] = r->rss.median / 1024;
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  double med_t, worst_t, med_m, worst_m;
  summarize(err_t, n, &med_t, &worst_t);
  summarize(err_m, n, &med_m, &worst_m);
  printf("# %d configurations: makespan |error| median %.1f%%, worst %.1f%%; peak RSS |error| "
         "median %.1f%%, worst %.1f%% (seed 004: mean 1.1-2.3%% for tasks seen, up to 15%% for "
         "similar ones)\n",
         n, med_t, worst_t, med_m, worst_m);
  wsisa_svg_series st[2] = {{"predicted", pt, NULL, NULL}, {"measured", mt, NULL, NULL}};
  wsisa_svg_series sm[2] = {{"predicted", pm, NULL, NULL}, {"measured", mm, NULL, NULL}};
  char path[4300];
  bench_svg_path(&o, "predict", path, sizeof path);
  if ((rc = wsisa_svg_bars(path, "Makespan: predicted from the models against measured", "seconds",
                           NCONFIGS, lp, 2, st, e)))
    return rc;
  bench_svg_path(&o, "predict_rss", path, sizeof path);
  return wsisa_svg_bars(path, "Peak RSS: predicted against measured", "MiB", NCONFIGS, lp, 2, sm, e);
}
