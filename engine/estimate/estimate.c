/* The estimate of a whole study (docs/architecture.md, "The estimate"): its
 * tiles and design, StarPU up so the workflow can be dry-run, and the costs
 * from the performance models; `wsisa plan`, `wsisa calibrate` and `wsisa
 * run` share it. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate_internal.h"

int wsisa_estimate_models_present(void) {
  wsisa_runtime_default_home();
  char path[WSISA_PATH_MAX];
  for (size_t i = 0; i < wsisa_n_ops; i++) {
    starpu_perfmodel_get_model_path(wsisa_ops[i].model->symbol, path, sizeof path);
    if (access(path, R_OK) == 0) return 1;
  }
  return 0;
}

int wsisa__estimate_study_open(wsisa_study *study, const double *params, size_t nruns,
                         wsisa__estimate_study *f, wsisa_err *e) {
  memset(f, 0, sizeof *f);
  f->study = study;
  int rc = wsisa__study_tiles(study, &f->set, e);
  if (!rc && !wsisa_runtime_active()) {
    /* the workers `wsisa run` would start; nothing runs, so no OpenCL program */
    wsisa_sched sched;
    wsisa_runtime_opts o = {.resolved = &sched, .ncpu = -1, .nopencl = -1};
    rc = wsisa_sched_resolve(study->execution.scheduler, study->path, NULL, &sched, e);
    if (!rc && !(rc = wsisa_runtime_init(&o, e))) f->started = 1;
  }
  if (rc) {
    wsisa__estimate_study_close(f);
    return rc;
  }
  f->workers = wsisa_runtime_ncpu() + wsisa_runtime_nopencl();
  int object_match, features;
  wsisa__study_needs(study, &object_match, &features);
  wsisa_estimate_request r = {f->set.tiles, f->set.ntiles, params,   nruns,
                              object_match, features,     wsisa__study_halo_for(study, params, nruns)};
  if ((rc = wsisa_estimate_new(&r, &f->est, e))) wsisa__estimate_study_close(f);
  return rc;
}

void wsisa__estimate_study_close(wsisa__estimate_study *f) {
  wsisa_estimate_free(f->est);
  f->est = NULL;
  if (f->started) wsisa_runtime_shutdown();
  f->started = 0;
  wsisa__study_tiles_free(&f->set);
}

size_t wsisa__estimate_study_paths(const wsisa__estimate_study *f, size_t asked, int workers,
                             uint64_t *memory_limit) {
  int object_match, features;
  wsisa__study_needs(f->study, &object_match, &features);
  wsisa_exec_opts eo = {.normalize = 1,
                        .share_tile_stage = f->study->reuse.strategy != WSISA_REUSE_NONE,
                        .object_match = object_match,
                        .features = features,
                        /* the object store takes its share, as in `wsisa run` */
                        .object_reuse = f->study->reuse.object_reuse};
  /* as `wsisa run` derives it, over this process's resident memory */
  size_t k = wsisa_exec_active_paths(asked ? asked
                                           : WSISA_EXEC_PATHS_PER_WORKER *
                                                 (size_t)(workers > 0 ? workers : 1),
                                     wsisa_memory_available(), wsisa_estimate_baseline(f->est),
                                     memory_limit, f->set.tiles, f->set.ntiles, &eo, NULL);
  return k ? k : 1;
}

/* ---- the estimate at the start of `wsisa run` ------------------------------------ */

int wsisa__estimate_run_costs(wsisa_study *study, const wsisa_estimate_request *r,
                              const char **cost_source, double level_cost[WSISA_SEG_LEVELS],
                              wsisa_estimate **est, wsisa_err *e) {
  *est = NULL;
  int want_models =
      strcmp(*cost_source, "tasks") == 0 && study->reuse.cost != WSISA_STUDY_COST_TASKS;
  if (wsisa_estimate_models_present()) {
    wsisa_err why = WSISA_ERR_INIT;
    /* an estimate that cannot be made leaves the run as it was */
    if (wsisa_estimate_new(r, est, &why))
      wsisa_log(WSISA_LOG_WARN, "estimate", "no estimate: %s", why.msg);
    else if (want_models && wsisa_estimate_level_costs(*est, level_cost) == 0) {
      *cost_source = "models";
      /* the resolved study.json keeps them: a resume plans the same buckets,
       * whatever the models learn meanwhile */
      study->reuse.nlevel_costs = WSISA_SEG_LEVELS;
      memcpy(study->reuse.level_costs, level_cost, WSISA_SEG_LEVELS * sizeof *level_cost);
    }
  }
  if (study->reuse.cost == WSISA_STUDY_COST_MEASURED && strcmp(*cost_source, "tasks") == 0) {
    const char *home = getenv("STARPU_HOME");
    wsisa_estimate_free(*est);
    *est = NULL;
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: reuse.cost_model is measured, but the performance models under %s "
                       "have no calibrated times for every task level: run `wsisa calibrate "
                       "--study %s` or give --level-costs",
                       study->path, home ? home : "STARPU_HOME", study->path);
  }
  return 0;
}

void wsisa__estimate_run(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                         wsisa__run_estimate *p) {
  memset(p, 0, sizeof *p);
  if (!est || !wsisa_estimate_calibrated(est)) {
    const char *home = getenv("STARPU_HOME");
    wsisa_log(WSISA_LOG_INFO, "estimate",
              "no estimate: no calibrated performance model under %s (wsisa calibrate --study S)",
              home ? home : "STARPU_HOME");
    return;
  }
  wsisa_estimate_figures f;
  wsisa_err why = WSISA_ERR_INIT;
  if (wsisa_estimate_compute(est, plan, &f, &why)) {
    wsisa_log(WSISA_LOG_WARN, "estimate", "no estimate: %s", why.msg);
    wsisa_estimate_figures_free(&f);
    return;
  }
  p->made = 1;
  p->makespan = f.sim.makespan;
  p->work = f.sim.work;
  p->efficiency = f.efficiency;
  p->cpu_hours = f.cpu_hours;
  p->uncalibrated = wsisa_estimate_uncalibrated_share(&f);
  p->interpolated = f.class_share[WSISA_EST_INTERPOLATED];
  p->peak_rss = f.peak_rss;
  p->baseline_rss = f.baseline_rss;
  p->ranks = f.ranks;
  p->workers = f.workers;
  p->active_paths = f.active_paths;
  p->object_reuse = plan->object_reuse;
  p->object_share = f.object_share;
  snprintf(p->object_source, sizeof p->object_source, "%s",
           f.object_source[0] ? f.object_source : "object reuse off");
  snprintf(p->level_source, sizeof p->level_source, "%s", f.level_source);
  p->busy_factor = f.busy_factor;
  p->busy_workers = f.busy_workers;
  snprintf(p->busy_source, sizeof p->busy_source, "%s", f.busy_source);
  snprintf(p->read_source, sizeof p->read_source, "%s", f.read_source);
  p->fresh_seconds = f.fresh_seconds;
  snprintf(p->fresh_source, sizeof p->fresh_source, "%s", f.fresh_source);
  size_t n = 0;
  for (size_t i = 0; i < f.nlisted && n < sizeof p->uncalibrated_ops; i++) {
    int w = snprintf(p->uncalibrated_ops + n, sizeof p->uncalibrated_ops - n, "%s%s (%s) %.1f%%",
                     i ? ", " : "", f.listed[i].op, wsisa_est_class_name(f.listed[i].cls),
                     100 * f.listed[i].share);
    if (w < 0) break;
    n += (size_t)w;
  }
  wsisa_estimate_figures_free(&f);
  /* one line; a warning when much of it rests on uncalibrated codelets */
  wsisa_log(p->uncalibrated > 0.1 ? WSISA_LOG_WARN : WSISA_LOG_INFO, "estimate",
            "predicted makespan %.1f s on %d rank%s x %d workers, peak RSS %.0f MiB per rank; "
            "%.1f%% of the work on uncalibrated codelets%s%s",
            p->makespan, p->ranks, p->ranks > 1 ? "s" : "", p->workers,
            (double)p->peak_rss / 1048576.0, 100 * p->uncalibrated, n ? ": " : "",
            p->uncalibrated_ops);
}
