/* wsisa-bench balance: RTMA against TRTMA as workers grow relative to the
 * buckets (seed 000 §5, Fig. 14: RTMA with MaxBucketSize 10 makes a fixed
 * number of buckets, TRTMA 3 x the workers). This machine measures what it
 * allows, 1 and 2 workers and 1, 2, 4 MPI ranks of one worker; the estimate
 * from the performance models (calibrated first) extends the curve to 8 ...
 * 256 workers, those points marked as predicted. Then TRTMA balanced by task
 * count against balanced by the models' level costs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "io/svg.h"

#define NAN_ (0.0 / 0.0)
#define MPIRUN "mpirun --oversubscribe --allow-run-as-root --bind-to none"

typedef struct point {
  const char *label;
  int ranks, workers; /* ranks 0: one process without mpirun */
  int measured;
} point;

static const point points[] = {
    {"1 worker", 0, 1, 1},         {"2 workers", 0, 2, 1},
#ifdef WSISA_WITH_MPI
    {"2 ranks x 1", 2, 1, 1},      {"4 ranks x 1*", 4, 1, 1},
#endif
    {"8 ranks x 1", 8, 1, 0},      {"16 ranks x 1", 16, 1, 0},   {"32 ranks x 1", 32, 1, 0},
    {"64 ranks x 1", 64, 1, 0},    {"128 ranks x 1", 128, 1, 0}, {"256 ranks x 1", 256, 1, 0},
};
#define NPOINTS (sizeof points / sizeof *points)

/* A strategy's row of a `plan --estimate` report. */
static json_t *row_of(json_t *root, const char *strategy) {
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(root, "strategies"), i, s) {
    const char *name = json_string_value(json_object_get(s, "strategy"));
    if (name && strcmp(name, strategy) == 0) return s;
  }
  return NULL;
}

typedef struct figures {
  double rtma, trtma;           /* makespan, s (median when measured) */
  double rtma_pred, trtma_pred; /* predicted */
  double rtma_buckets, trtma_buckets;
} figures;

/* Each point's makespans: measured with the models frozen, or predicted by
 * `wsisa plan --estimate` from them. */
static int measure_points(const bench_opts *o, const char *home, const char *study,
                          figures fig[NPOINTS], bench_run *any, wsisa_err *e) {
  char env[BENCH_CMD_MAX], args[BENCH_CMD_MAX];
  int rc = 0;
  memset(any, 0, sizeof *any);
  for (size_t p = 0; p < NPOINTS; p++) {
    figures *f = &fig[p];
    *f = (figures){NAN_, NAN_, NAN_, NAN_, NAN_, NAN_};
    if (points[p].measured) {
      static const char *const strategies[] = {"rtma", "trtma"};
      for (int s = 0; s < 2; s++) {
        fprintf(stderr, "wsisa-bench balance: %s, %s\n", points[p].label, strategies[s]);
        int n = snprintf(env, sizeof env, "STARPU_HOME='%s' STARPU_CALIBRATE=0 STARPU_NCPU=%d", home,
                         points[p].workers);
        if (points[p].ranks)
          snprintf(env + n, sizeof env - (size_t)n, " " MPIRUN " -np %d", points[p].ranks);
        snprintf(args, sizeof args, "--reuse %s", strategies[s]);
        bench_run r;
        if ((rc = bench_run_wsisa(o, env, study, args, &r, e))) return rc;
        *any = r;
        *(s ? &f->trtma : &f->rtma) = r.exec.median;
        *(s ? &f->trtma_pred : &f->rtma_pred) = r.pred_makespan;
        *(s ? &f->trtma_buckets : &f->rtma_buckets) = r.buckets;
      }
    } else {
      fprintf(stderr, "wsisa-bench balance: %s, predicted\n", points[p].label);
      snprintf(env, sizeof env, "STARPU_HOME='%s'", home);
      snprintf(args, sizeof args, "--ranks %d --workers %d", points[p].ranks, points[p].workers);
      json_t *root;
      if ((rc = bench_estimate_json(env, study, args, &root, e))) return rc;
      json_t *r = row_of(root, "rtma"), *t = row_of(root, "trtma");
      f->rtma = f->rtma_pred = bench_json_num(r, "estimate", "makespan_s");
      f->trtma = f->trtma_pred = bench_json_num(t, "estimate", "makespan_s");
      f->rtma_buckets = bench_json_num(r, NULL, "buckets");
      f->trtma_buckets = bench_json_num(t, NULL, "buckets");
      json_decref(root);
    }
  }
  return 0;
}

/* The points as a table, balance.csv and balance.svg. */
static int write_points(const bench_opts *o, const figures fig[NPOINTS], const bench_run *any,
                        int traj, wsisa_err *e) {
  int rc;
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(o, "balance",
                           "config,ranks,workers,total_workers,source,rtma_s,trtma_s,"
                           "rtma_predicted_s,trtma_predicted_s,rtma_buckets,trtma_buckets,"
                           "trtma_speedup",
                           &w, e)))
    return rc;
  bench_print_runs_context(o, any, "tile_1024.png");
  printf("# MOAT %d trajectories (%d runs) on one tile: units = buckets. RTMA MaxBucketSize 10; "
         "TRTMA MaxBuckets 3 x workers (seed 000 Fig. 14)\n",
         traj, 16 * traj);
  printf("# measured: makespan (median of %d) with the models frozen; predicted: wsisa plan "
         "--estimate from this host's models; * oversubscribed (%s)\n",
         o->repeats, "2 cores here");
  printf("%-15s %7s %-9s %9s %9s %10s %10s %7s %7s %8s\n", "config", "workers", "source", "rtma s",
         "trtma s", "rtma pred", "trtma pred", "rtma b", "trtma b", "speedup");
  double rv[NPOINTS], tv[NPOINTS];
  char labels[NPOINTS][40];
  const char *lp[NPOINTS];
  for (size_t p = 0; p < NPOINTS; p++) {
    const figures *f = &fig[p];
    int total = (points[p].ranks ? points[p].ranks : 1) * points[p].workers;
    const char *source = points[p].measured ? "measured" : "predicted";
    printf("%-15s %7d %-9s %9.2f %9.2f %10.2f %10.2f %7.0f %7.0f %7.2fx\n", points[p].label, total,
           source, f->rtma, f->trtma, f->rtma_pred, f->trtma_pred, f->rtma_buckets,
           f->trtma_buckets, f->rtma / f->trtma);
    wsisa_csv_text(w, points[p].label);
    wsisa_csv_uint(w, (uint64_t)points[p].ranks);
    wsisa_csv_uint(w, (uint64_t)points[p].workers);
    wsisa_csv_uint(w, (uint64_t)total);
    wsisa_csv_text(w, source);
    wsisa_csv_num(w, f->rtma);
    wsisa_csv_num(w, f->trtma);
    wsisa_csv_num(w, f->rtma_pred);
    wsisa_csv_num(w, f->trtma_pred);
    wsisa_csv_num(w, f->rtma_buckets);
    wsisa_csv_num(w, f->trtma_buckets);
    wsisa_csv_num(w, f->rtma / f->trtma);
    wsisa_csv_end_row(w);
    snprintf(labels[p], sizeof labels[p], "%s%s", points[p].label,
             points[p].measured ? "" : " (predicted)");
    lp[p] = labels[p];
    rv[p] = f->rtma;
    tv[p] = f->trtma;
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  wsisa_svg_series series[2] = {{"RTMA, MaxBucketSize 10", rv, NULL, NULL},
                                {"TRTMA, 3 x workers buckets", tv, NULL, NULL}};
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(o, "balance", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "RTMA and TRTMA as workers grow (predicted points marked)",
                        "seconds", NPOINTS, lp, 2, series, e);
}

/* TRTMA's Fold-Merge and Balance by task count against by measured cost:
 * with --quick on `study`, else on the 160-run study of the sample slide
 * (tests/studies/moat_segmentation.json). */
static int compare_cost_models(const bench_opts *o, const char *home, const char *study,
                               const char *log, wsisa_err *e) {
  char env[BENCH_CMD_MAX], args[BENCH_CMD_MAX], tasks[WSISA_PATH_MAX];
  int rc;
  const char *which = o->quick ? study : NULL;
  char big[WSISA_PATH_MAX];
  if (!which) {
    /* not --quick: bench_write_study writes the sample's tissue tiles at 1024 */
    if ((rc = bench_write_study(o, "balance_moat160", NULL, 10,
                                "{ \"strategy\": \"trtma\", \"max_buckets\": 6, "
                                "\"active_paths\": 2 }",
                                big, e)))
      return rc;
    fprintf(stderr, "wsisa-bench balance: calibrating on %s\n", big);
    snprintf(env, sizeof env, "STARPU_HOME='%s'", home);
    snprintf(args, sizeof args, "calibrate --study '%s'", big);
    if ((rc = bench_wsisa(env, args, log, e))) return rc;
    which = big;
  }
  /* the same study, its cost model set to task counts */
  if ((rc = wsisa_path_fmt_err(tasks, e, "%s/studies/balance_tasks.json", o->dir))) return rc;
  snprintf(args, sizeof args,
           "sed 's/\"reuse\": { \"strategy\": \"[a-z]*\"/&, \"cost_model\": \"tasks\"/' '%s' > '%s'",
           which, tasks);
  if (system(args) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot write", tasks);
  const char *pair[2] = {tasks, which}, *names[2] = {"task count", "level costs"};
  bench_run r2[2];
  double pred[2], imbalance[2];
  for (int i = 0; i < 2; i++) {
    fprintf(stderr, "wsisa-bench balance: trtma by %s\n", names[i]);
    snprintf(env, sizeof env, "STARPU_HOME='%s' STARPU_CALIBRATE=0", home);
    if ((rc = bench_run_wsisa(o, env, pair[i], "--reuse trtma", &r2[i], e))) return rc;
    json_t *root;
    snprintf(env, sizeof env, "STARPU_HOME='%s'", home);
    if ((rc = bench_estimate_json(env, pair[i], "", &root, e))) return rc;
    json_t *t = row_of(root, "trtma");
    pred[i] = bench_json_num(t, "estimate", "makespan_s");
    imbalance[i] = bench_json_num(t, NULL, "imbalance");
    json_decref(root);
  }
  printf("\n# TRTMA (%s): Fold-Merge and Balance by task count against by the models' level "
         "costs; measured with the models frozen, predicted by wsisa plan --estimate\n",
         o->quick ? "the study above, 2 workers" : "tests/studies/moat_segmentation.json, 160 runs x 6 tiles, 2 workers");
  printf("%-12s %-24s %10s %8s %10s\n", "balance by", "measured s", "predicted", "buckets",
         "imbalance");
  for (int i = 0; i < 2; i++) {
    char a[64];
    printf("%-12s %-24s %10.2f %8.0f %9.1f%%\n", names[i], bench_fmt(a, sizeof a, r2[i].exec, 1, 2),
           pred[i], r2[i].buckets, 100 * imbalance[i]);
  }
  printf("# imbalance = largest bucket / mean - 1 in the plan's own cost model (tasks for the "
         "first, seconds for the second)\n");
  return 0;
}

int bench_balance(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "balance", &o, e);
  if (rc) return rc;
  char home[WSISA_PATH_MAX], env[BENCH_CMD_MAX], log[WSISA_PATH_MAX], args[BENCH_CMD_MAX],
      study[WSISA_PATH_MAX];
  if ((rc = wsisa_path_fmt_err(home, e, "%s/starpu_home", o.dir))) return rc;
  snprintf(args, sizeof args, "rm -rf '%s' && mkdir -p '%s'", home, home);
  if (system(args) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", home);
  /* one tile: units are buckets, so workers meet the bucket count soon */
  int traj = o.quick ? 2 : 8;
  if ((rc = bench_write_study(&o, "balance_study", "tile_1024.png", traj,
                              "{ \"strategy\": \"rtma\", \"max_bucket_size\": 10 }", study, e)))
    return rc;
  fprintf(stderr, "wsisa-bench balance: calibrating on %s\n", study);
  snprintf(env, sizeof env, "STARPU_HOME='%s'", home);
  snprintf(args, sizeof args, "calibrate --study '%s'", study);
  if ((rc = wsisa_path_fmt_err(log, e, "%s/calibrate.log", o.dir)) ||
      (rc = bench_wsisa(env, args, log, e)))
    return rc;

  figures fig[NPOINTS];
  bench_run any;
  if ((rc = measure_points(&o, home, study, fig, &any, e)) ||
      (rc = write_points(&o, fig, &any, traj, e)))
    return rc;
  return compare_cost_models(&o, home, study, log, e);
}
