/* The study's reuse plan: the options a study's strategy runs with, the none strategy's one-run buckets, and the comparison
 * of every strategy on a study's design that `wsisa plan` prints. `wsisa run` and
 * `wsisa plan` both take their settings from here, so a plan shows what a
 * run would do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/run_internal.h"
#include "io/csv.h"
#include "engine/study/study.h"
#include "sa/sa.h"

void wsisa_plan_reuse_opts(const wsisa_study *study, int workers, const double *level_cost,
                           wsisa_reuse_opts *o) {
  const wsisa_study_reuse_opts *ro = &study->reuse;
  memset(o, 0, sizeof *o);
  /* none plans as stage: its buckets are made by wsisa_plan_singletons */
  o->strategy = ro->strategy == WSISA_REUSE_NONE ? WSISA_REUSE_STAGE : ro->strategy;
  o->max_buckets = ro->max_buckets > 0 ? (size_t)ro->max_buckets
                                       : 3 * (size_t)(workers > 0 ? workers : 1);
  o->max_bucket_size =
      ro->max_bucket_size > 0 ? (size_t)ro->max_bucket_size : WSISA_DEFAULT_BUCKET_SIZE;
  o->trtma_last_phase = WSISA_REUSE_BALANCE;
  o->level_cost = level_cost;
}

int wsisa_plan_singletons(const uint64_t *keys, size_t nruns, wsisa_reuse_buckets **out) {
  wsisa_reuse_buckets *b = NULL;
  int rc = wsisa_reuse_buckets_new(nruns, nruns, WSISA_SEG_LEVELS, &b);
  if (rc) return rc;
  for (size_t r = 0; !rc && r < nruns; r++) {
    b->start[r + 1] = r + 1;
    b->instances[r] = r;
    if (wsisa_reuse_tree_build(keys, WSISA_SEG_LEVELS, &r, 1, &b->trees[r])) rc = WSISA_ENOMEM;
    b->tasks[r] = WSISA_SEG_LEVELS;
    b->cost[r] = WSISA_SEG_LEVELS;
  }
  if (rc) {
    wsisa_reuse_buckets_free(b);
    return rc;
  }
  *out = b;
  return 0;
}

/* ---- wsisa plan ---------------------------------------------------------------- */

/* Bytes `wsisa plan` holds per run besides the design: its values, task
 * keys, compact graph and reuse tree, and the largest strategy's buckets
 * (peak RSS over runs, 2.3 KiB on a 10^5-run VBD design, rounded up). */
#define PLAN_RUN_BYTES 2560

static int run_strategy(const wsisa_reuse_design *d, const wsisa_reuse_opts *o, size_t active_paths,
                        wsisa_plan_row *out, wsisa_err *e) {
  wsisa_reuse_buckets *b = NULL;
  double t0 = 1e3 * wsisa_now();
  int rc = wsisa_reuse_merge(d, o, &b);
  out->ms = 1e3 * wsisa_now() - t0;
  if (rc)
    return wsisa_error(e, rc, "reuse analysis (%s) failed: %s", wsisa_reuse_strategy_name(o->strategy),
                       wsisa_strerror(rc));
  wsisa_reuse_buckets_summarize(b, active_paths, &out->summary);
  wsisa_reuse_buckets_free(b);
  return 0;
}

/* What the estimate of one strategy needs. */
typedef struct est_ctx {
  const wsisa_study *study;
  const wsisa_reuse_design *design;
  const uint64_t *keys;     /* the design's task keys, for `none` */
  wsisa__estimate_study *f;
  const double *cost;       /* level costs in force, or NULL */
  int cpu_workers;          /* per rank; -1: as started */
  int opencl_workers;       /* per rank; -1: as started */
  int workers;              /* per rank, all kinds */
  size_t asked;             /* K asked (0: workers) */
  uint64_t limit;           /* memory per rank, 0: 80% of what is available */
  wsisa_reuse_strategy strategy;
  uint64_t limit_used;
} est_ctx;

/* Plan the strategy as `wsisa run` on `ranks` ranks would, and estimate it. */
static int estimate_strategy(est_ctx *c, wsisa_reuse_strategy strategy, int ranks,
                            wsisa_estimate_figures *fig, wsisa_err *e) {
  wsisa_reuse_buckets *b = NULL;
  int rc;
  if (strategy == WSISA_REUSE_NONE) {
    rc = wsisa_plan_singletons(c->keys, c->design->n, &b);
  } else {
    wsisa_reuse_opts o;
    wsisa_plan_reuse_opts(c->study, c->workers * ranks, c->cost, &o);
    o.strategy = strategy;
    rc = wsisa_reuse_merge(c->design, &o, &b);
  }
  if (rc) return wsisa_error(e, rc, "reuse planning failed: %s", wsisa_strerror(rc));
  uint64_t limit = c->limit;
  size_t k = wsisa__estimate_study_paths(c->f, c->asked, c->workers, &limit);
  c->limit_used = limit;
  wsisa_estimate_plan plan = {b, strategy != WSISA_REUSE_NONE, k, NULL, ranks,
                              c->cpu_workers, c->opencl_workers, c->study->reuse.object_reuse,
                              c->study->execution.placement};
  rc = wsisa_estimate_compute(c->f->est, &plan, fig, e);
  wsisa_reuse_buckets_free(b);
  return rc;
}

static int makespan_of(void *ctx, int ranks, double *makespan, wsisa_err *e) {
  est_ctx *c = ctx;
  wsisa_estimate_figures fig;
  int rc = estimate_strategy(c, c->strategy, ranks, &fig, e);
  if (!rc) *makespan = fig.sim.makespan;
  wsisa_estimate_figures_free(&fig);
  return rc;
}

int wsisa_plan_compare(const wsisa_study *study, const wsisa_plan_request *r,
                       wsisa_plan_report *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  if (!study->segmentation)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: not a segmentation study (no inputs): its parameters have no task "
                       "levels to plan reuse over",
                       study->path);
  double *rows = NULL;
  uint64_t *keys = NULL;
  size_t n = 0;
  wsisa__estimate_study f;
  memset(&f, 0, sizeof f);
  /* a design too large is refused before it is made: the reuse analysis keeps
   * about PLAN_RUN_BYTES per run besides the design */
  size_t nrows;
  int rc = r->samples_path ? 0
                           : wsisa_study_check_size(study, r->select,
                                                    r->force ? 0 : WSISA_STUDY_MAX_RUNS,
                                                    PLAN_RUN_BYTES, 0, NULL, &nrows, e);
  if (!rc) rc = wsisa__study_design_rows(study, r->samples_path, r->select, &rows, &n, out->source,
                                         sizeof out->source, e);
  if (rc) goto done;
  int level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = wsisa_seg_param_level(p);
  if (!(keys = malloc(n * WSISA_SEG_LEVELS * sizeof *keys))) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = wsisa_workflow_keys(rows, n, WSISA_SEG_NPARAMS, level, keys))) {
    rc = wsisa_error(e, WSISA_EINTERNAL, "%s: a parameter has no task level", study->path);
    goto done;
  }
  double t0 = 1e3 * wsisa_now();
  if ((rc = wsisa_reuse_design_new(keys, n, WSISA_SEG_LEVELS, &out->design))) {
    rc = wsisa_error(e, rc, "reuse analysis failed: %s", wsisa_strerror(rc));
    goto done;
  }
  out->design_ms = 1e3 * wsisa_now() - t0;

  /* the bucket cost model: given, the models' (auto, measured), or task counts */
  const double *cost = r->level_cost;
  if (!cost && study->reuse.nlevel_costs && study->reuse.cost != WSISA_STUDY_COST_TASKS)
    cost = study->reuse.level_costs;
  out->cost_source = cost ? "level_costs" : "tasks";
  if (cost) memcpy(out->level_cost, cost, sizeof out->level_cost);
  int want_models = !cost && study->reuse.cost != WSISA_STUDY_COST_TASKS;
  wsisa_runtime_default_home();
  const char *home = getenv("STARPU_HOME");
  snprintf(out->starpu_home, sizeof out->starpu_home, "%s", home ? home : "(unset)");
  if (r->estimate || (want_models && wsisa_estimate_models_present())) {
    wsisa_err why = WSISA_ERR_INIT;
    if ((rc = wsisa__estimate_study_open((wsisa_study *)study, rows, n, &f, &why))) {
      /* without --estimate the costs are a refinement: the plan goes on by
       * task counts, as a run that cannot cost its tasks does */
      if (r->estimate) {
        wsisa_error(e, rc, "%s", why.msg);
        goto done;
      }
      wsisa_log(WSISA_LOG_WARN, "plan", "no level costs from the performance models (%s): "
                "buckets weighed by task counts", why.msg);
      rc = 0;
    }
    if (f.est && want_models && wsisa_estimate_level_costs(f.est, out->level_cost) == 0) {
      cost = out->level_cost;
      out->cost_source = "models";
    }
  }
  if (study->reuse.cost == WSISA_STUDY_COST_MEASURED && !cost) {
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: reuse.cost_model is measured, but the performance models under %s have "
                     "no calibrated times for every task level: run `wsisa calibrate --study %s` "
                     "or give the %d task-level costs with --level-costs",
                     study->path, out->starpu_home, study->path, WSISA_SEG_LEVELS);
    goto done;
  }
  if (r->estimate && !wsisa_estimate_calibrated(f.est)) {
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: no calibrated performance model of this study's tasks under %s: run "
                     "`wsisa calibrate --study %s` first (or `wsisa plan --calibrate`)",
                     study->path, out->starpu_home, study->path);
    goto done;
  }
  int ranks = r->ranks > 0 ? r->ranks : 1;
  est_ctx ec = {study, out->design, keys, &f, cost, -1, -1, f.workers, 0, r->memory_limit,
                study->reuse.strategy, 0};
  if (r->estimate) {
    ec.cpu_workers = r->workers > 0 ? r->workers : -1;
    ec.opencl_workers = r->opencl_workers > 0 ? r->opencl_workers : r->opencl_workers < 0 ? 0 : -1;
    ec.workers = (ec.cpu_workers >= 0 ? ec.cpu_workers : (int)wsisa_runtime_ncpu()) +
                 (ec.opencl_workers >= 0 ? ec.opencl_workers : (int)wsisa_runtime_nopencl());
    long asked = r->active_paths >= 0 ? r->active_paths : study->reuse.active_paths;
    ec.asked = asked > 0 ? (size_t)asked : 0;
    if (!ec.limit) ec.limit = study->execution.memory_limit;
  }
  long workers = r->estimate ? (long)ec.workers * ranks
                             : (r->workers > 0 ? r->workers : sysconf(_SC_NPROCESSORS_ONLN));
  out->active_paths =
      r->active_paths >= 0 ? (size_t)r->active_paths : (size_t)study->reuse.active_paths;
  static const wsisa_reuse_strategy order[WSISA_PLAN_STRATEGIES] = {
      WSISA_REUSE_STAGE, WSISA_REUSE_NAIVE, WSISA_REUSE_SCA, WSISA_REUSE_RTMA, WSISA_REUSE_TRTMA};
  static const wsisa_reuse_strategy study_order[WSISA_PLAN_STRATEGIES] = {
      WSISA_REUSE_STAGE, WSISA_REUSE_NAIVE, WSISA_REUSE_SCA,
      WSISA_REUSE_RTMA, WSISA_REUSE_TRTMA};
  for (size_t i = 0; i < WSISA_PLAN_STRATEGIES && !rc; i++) {
    wsisa_reuse_opts o;
    wsisa_plan_reuse_opts(study, (int)(workers > 0 ? workers : 1), cost, &o);
    o.strategy = order[i];
    wsisa_plan_row *row = &out->rows[i];
    row->strategy = order[i];
    row->limit = order[i] == WSISA_REUSE_TRTMA ? o.max_buckets : o.max_bucket_size;
    if (order[i] == WSISA_REUSE_SCA && out->design->n_distinct > WSISA_PLAN_SCA_LIMIT) {
      row->skipped = 1;
      continue;
    }
    rc = run_strategy(out->design, &o, out->active_paths, row, e);
    if (!rc && r->estimate) {
      wsisa_estimate_figures fig;
      if (!(rc = estimate_strategy(&ec, study_order[i], ranks, &fig, e))) {
        row->estimated = 1;
        row->makespan = fig.sim.makespan;
        row->cpu_hours = fig.cpu_hours;
        row->peak_rss = fig.peak_rss;
      }
      wsisa_estimate_figures_free(&fig);
    }
  }
  out->strategy = wsisa_reuse_strategy_name(study->reuse.strategy);
  if (!rc && r->estimate) {
    out->cpu_workers = ec.cpu_workers >= 0 ? ec.cpu_workers : wsisa_runtime_ncpu();
    out->opencl_workers = ec.opencl_workers >= 0 ? ec.opencl_workers : wsisa_runtime_nopencl();
    rc = estimate_strategy(&ec, study->reuse.strategy, ranks, &out->est, e);
    out->memory_limit = ec.limit_used;
    out->estimated = !rc;
  }
  if (!rc && r->estimate && r->deadline > 0) {
    out->deadline = r->deadline;
    size_t most = f.set.ntiles * out->design->n_distinct;
    out->deadline_max_ranks = most > 4096 ? 4096 : (int)most;
    rc = wsisa_sim_deadline(r->deadline, out->deadline_max_ranks, makespan_of, &ec,
                            &out->deadline_ranks, &out->deadline_makespan, e);
  }
done:
  wsisa__estimate_study_close(&f);
  free(rows);
  free(keys);
  if (rc) wsisa_plan_report_free(out);
  return rc;
}

void wsisa_plan_report_free(wsisa_plan_report *report) {
  wsisa_reuse_design_free(report->design);
  report->design = NULL;
  if (report->estimated) wsisa_estimate_figures_free(&report->est);
  report->estimated = 0;
}
