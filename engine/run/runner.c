/* A whole study (`wsisa run`): tiles, design, reuse plan, execution on StarPU
 * and MPI ranks through the unit queue, the journal, metrics, indices and
 * provenance. Each step is a function of its own; wsisa_runner_run strings
 * them together.
 *
 * The results folder: everything that can be refused is refused before it
 * exists; it is made complete enough to resume (study.json, samples.csv, the
 * journal's header) in a temporary folder beside it and renamed into place;
 * one process writes it at a time (a flock on DIR/lock, which holds the
 * writer's pid); `wsisa run --check DIR` verifies it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/run/run_internal.h"
#include "io/csv.h"
#include "io/io.h"

/* ---- design and plan --------------------------------------------------------- */

static int make_plan(wsisa__study_run *s, wsisa_err *e) {
  double t0 = wsisa_now();
  int level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = wsisa_seg_param_level(p);
  uint64_t *keys = malloc(s->nruns * WSISA_SEG_LEVELS * sizeof *keys);
  if (!keys) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  int rc = wsisa_workflow_keys(s->params, s->nruns, WSISA_SEG_NPARAMS, level, keys);
  if (!rc) rc = wsisa_reuse_design_new(keys, s->nruns, WSISA_SEG_LEVELS, &s->plan);
  if (rc) {
    free(keys);
    return wsisa_error(e, rc, "cannot analyse the design for reuse");
  }
  if (s->study->reuse.strategy == WSISA_REUSE_NONE) {
    rc = wsisa_plan_singletons(keys, s->nruns, &s->buckets);
    if (rc) rc = wsisa_error(e, rc, "out of memory");
  } else {
    wsisa_reuse_opts o;
    int by_cost = s->cost_source && strcmp(s->cost_source, "tasks") != 0;
    wsisa_plan_reuse_opts(s->study, s->workers, by_cost ? s->level_cost : NULL, &o);
    /* the knobs in force, for run.json */
    s->study->reuse.max_buckets = (int)o.max_buckets;
    s->study->reuse.max_bucket_size = (int)o.max_bucket_size;
    rc = wsisa_reuse_merge(s->plan, &o, &s->buckets);
    if (rc) rc = wsisa_error(e, rc, "reuse planning failed");
  }
  free(keys);
  s->tasks_no_reuse = (uint64_t)s->nruns * WSISA_SEG_LEVELS * s->set.ntiles;
  s->t_plan = wsisa_now() - t0;
  return rc;
}

/* With no study file: the bundled sample slide (installed beside the
 * executable, or in the source tree) and a small MOAT study. */
static const char default_study[] =
    "{ \"name\": \"default: MOAT screening of the 15 parameters on the bundled sample\",\n"
    "  \"inputs\": { \"slides\": [\"%s\"],\n"
    "              \"tile_size\": 1024, \"tissue_only\": true },\n"
    "  \"method\": { \"name\": \"moat\", \"trajectories\": 4, \"levels\": 4 },\n"
    "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
    "  \"metric\": [\"dice\", \"jaccard\"] }\n";

/* ---- the results folder --------------------------------------------------------- */

/* What one run keeps per run besides its tiles' counts: the parameters, the
 * task keys and its share of the reuse plan (compact graph, trees, buckets;
 * as engine/run/plan.c measures for `wsisa plan`), and per (run, tile) its
 * counts. */
#define RUN_BYTES (WSISA_SEG_NPARAMS * 8 + WSISA_SEG_LEVELS * 8 + 2560)
#define RUN_TILE_BYTES (sizeof(wsisa_counts) + 1)

/* ---- the steps of a run ------------------------------------------------------ */

/* The request's settings over the study's. */
static void apply_request(wsisa__study_run *s, const wsisa_runner_request *r) {
  wsisa_study_reuse_opts *ro = &s->study->reuse;
  if (r->strategy >= 0) ro->strategy = (wsisa_reuse_strategy)r->strategy;
  if (r->max_buckets) ro->max_buckets = (int)r->max_buckets;
  if (r->max_bucket_size) ro->max_bucket_size = (int)r->max_bucket_size;
  if (r->active_paths) ro->active_paths = (int)r->active_paths;
  if (r->memory_limit) s->study->execution.memory_limit = r->memory_limit;
  if (r->object_reuse >= 0) ro->object_reuse = r->object_reuse;
  if (r->placement >= 0) s->study->execution.placement = r->placement;
  /* given costs: --level-costs, else the study's (a resumed run's: those it
   * planned with) */
  s->cost_source = "tasks";
  const double *given = r->level_cost ? r->level_cost
                        : ro->nlevel_costs && ro->cost != WSISA_STUDY_COST_TASKS ? ro->level_costs
                                                                                 : NULL;
  if (given) {
    memcpy(s->level_cost, given, sizeof s->level_cost);
    s->cost_source = "level_costs";
  }
}

/* The results folder a --resume or --check names, NULL for a new run. */
static const char *existing(const wsisa_runner_request *r) {
  return r->resume ? r->resume : r->check;
}

/* The study (from its file, the results folder, or the default), checked
 * before anything is written. */
static int load_study(wsisa__study_run *s, const wsisa_runner_request *r,
                      char study_path[WSISA_PATH_MAX], wsisa_sched *sched, wsisa_err *e) {
  int rc = 0;
  const char *dir = existing(r);
  if (dir)
    rc = wsisa_path_fmt_err(study_path, e, "%s/study.json", dir);
  else if (r->study)
    rc = wsisa_path_fmt_err(study_path, e, "%s", r->study);
  if (rc) return rc;
  if (dir && access(study_path, R_OK) != 0)
    return wsisa_error(e, WSISA_EUSAGE, "%s %s: no study.json there: not a results folder",
                       r->resume ? "--resume" : "--check", dir);
  if (!dir && !r->study) {
    snprintf(study_path, WSISA_PATH_MAX, "(default study)");
    char sample[WSISA_PATH_MAX], quoted[2 * WSISA_PATH_MAX],
        text[sizeof default_study + sizeof quoted];
    if (wsisa_data_file("CMU-1-Small-Region.svs", WSISA_DATA_DIR, sample, sizeof sample))
      return wsisa_error(e, WSISA_EUSAGE, "the bundled sample's path is too long");
    /* a JSON string: quotes and backslashes escaped */
    size_t q = 0;
    for (const char *c = sample; *c; c++) {
      if (*c == '"' || *c == '\\') quoted[q++] = '\\';
      quoted[q++] = *c;
    }
    quoted[q] = '\0';
    snprintf(text, sizeof text, default_study, quoted);
    rc = wsisa_study_parse(text, study_path, &s->study, e);
  } else {
    rc = wsisa_study_load(study_path, &s->study, e);
  }
  if (rc) return rc;
  if (!s->study->segmentation)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: no inputs: a pure SA study (use wsisa sample and wsisa analyze)",
                       study_path);
  apply_request(s, r);
  if ((rc = wsisa__results_check_metrics(s, study_path, e))) return rc;
  rc = wsisa_sched_resolve(s->study->execution.scheduler, study_path, NULL, sched, e);
  if (rc) return rc;
  wsisa_env env;
  wsisa_env_read(&env);
  return wsisa_runtime_env_check(&env, e);
}

/* Where the memory a run may use comes from, for messages. */
static const char *memory_source(const wsisa__study_run *s, const wsisa_runner_request *r) {
  if (r->memory_limit) return "--memory-limit";
  return s->study->execution.memory_limit ? "execution.memory_limit" : NULL;
}

/* The run's design (wsisa__study_design_make) taken into s. */
static int design_make(wsisa__study_run *s, const char *samples, size_t max_runs, wsisa_err *e) {
  wsisa__run_design d;
  int rc = wsisa__study_design_make(s->study, samples, max_runs, &d, e);
  s->space = d.space;
  s->sa = d.sa;
  s->design = d.design;
  s->ndesign = s->nruns = d.nruns;
  s->params = d.params;
  s->run_ids = d.run_ids;
  s->from_csv = d.from_csv;
  return rc;
}

/* With annotations, the 15 defaults among the runs, so that best.json
 * scores them beside the best run: s->defaults_run is the first run of the
 * design that has them, else one run added after the design's (nruns =
 * ndesign + 1), which no table the analysis reads holds; -1 without
 * annotations. */
static int design_defaults(wsisa__study_run *s, wsisa_err *e) {
  s->defaults_run = -1;
  if (!s->set.annotated) return 0;
  const double *def = wsisa_seg_defaults();
  const size_t row = WSISA_SEG_NPARAMS * sizeof *def;
  for (size_t r = 0; r < s->ndesign; r++)
    if (memcmp(s->params + r * WSISA_SEG_NPARAMS, def, row) == 0) {
      s->defaults_run = (long)r;
      return 0;
    }
  double *params = realloc(s->params, (s->ndesign + 1) * row);
  if (!params) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  memcpy(params + s->ndesign * WSISA_SEG_NPARAMS, def, row);
  s->params = params;
  s->nruns = s->ndesign + 1;
  s->defaults_run = (long)s->ndesign;
  return 0;
}

/* Design and tiles, refused up front when they cannot fit: the design's size
 * is checked before it is made (a 10^7-sample study is refused at once), then
 * runs x tiles against the memory. */
static int prepare(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  const char *dir = existing(r);
  char design_csv[WSISA_PATH_MAX];
  if (wsisa_path_fmt_err(design_csv, e, "%s/design.csv", dir ? dir : ".")) return WSISA_EUSAGE;
  const char *samples = r->samples;
  if (dir && access(design_csv, R_OK) == 0) samples = design_csv;
  size_t max_runs = r->force ? 0 : WSISA_STUDY_MAX_RUNS, rows;
  uint64_t memory = s->study->execution.memory_limit;
  const char *source = memory_source(s, r);
  int rc = samples ? 0
                   : wsisa_study_check_size(s->study, NULL, max_runs, RUN_BYTES, memory, source,
                                            &rows, e);
  if (rc || (rc = design_make(s, samples, max_runs, e)) ||
      (rc = wsisa__study_tiles(s->study, &s->set, e)) || (rc = design_defaults(s, e)))
    return rc;
  double need = (double)s->nruns * (RUN_BYTES + (double)s->set.ntiles * RUN_TILE_BYTES);
  if (!memory) memory = wsisa_memory_available(), source = "the memory available";
  char need_text[32], have[32];
  if (memory && need > (double)memory)
    return wsisa_error(e, WSISA_EUSAGE, "%s: %zu runs x %zu tiles need about %s to run, more than %s (%s)",
                       samples ? samples : s->study->path, s->nruns, s->set.ntiles,
                       wsisa_bytes_text(need, need_text, sizeof need_text), source,
                       wsisa_bytes_text((double)memory, have, sizeof have));
  s->counts = calloc(s->nruns * s->set.ntiles, sizeof *s->counts);
  s->have = calloc(s->nruns * s->set.ntiles, 1);
  if (!s->counts || !s->have) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  return wsisa__run_features_new(s->study->metrics, s->study->nmetrics, s->nruns, s->set.ntiles,
                                 s->dir, &s->features, e);
}

/* --resume: the folder locked, what the journals hold read back (a torn last
 * line cut off), the journals open for appending. */
static int reopen(wsisa__study_run *s, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc;
  /* the annotations the journal's counts were measured against */
  if ((rc = wsisa__results_reference_check(s, e))) return rc;
  /* a folder made before the temporary-folder step may lack its design */
  if ((rc = wsisa__run_path(s, "samples.csv", path, e))) return rc;
  if (access(path, F_OK) != 0) {
    wsisa_log(WSISA_LOG_WARN, "run", "%s: missing; written again from the study", path);
    if ((rc = wsisa__results_samples(s, NULL, e))) return rc;
  }
  if ((rc = wsisa__run_path(s, "journal.csv", path, e))) return rc;
  int fresh = access(path, F_OK) != 0;
  if (fresh) wsisa_log(WSISA_LOG_WARN, "run", "%s: missing; every unit runs", path);
  else if ((rc = wsisa__journal_read(s, 1, NULL, e))) return rc;
  if ((rc = wsisa__journal_open(s, fresh, e))) return rc;
  if (!s->features) return 0;
  if ((rc = wsisa__run_path(s, "feature_values.csv", path, e))) return rc;
  fresh = access(path, F_OK) != 0;
  if (fresh) memset(s->have, 0, s->nruns * s->set.ntiles);
  else if ((rc = wsisa__run_features_read(s->features, s->have, 1, NULL, NULL, e))) return rc;
  return wsisa__run_features_open(s->features, fresh, e);
}

/* Units whose every run already has its counts (resume). */
static uint8_t *units_done(const wsisa__study_run *s) {
  size_t nb = s->buckets->n_buckets;
  uint8_t *done = calloc(s->set.ntiles * nb + 1, 1);
  for (size_t t = 0; done && t < s->set.ntiles; t++)
    for (size_t b = 0; b < nb; b++) {
      int all = 1;
      for (size_t i = s->buckets->start[b]; i < s->buckets->start[b + 1]; i++)
        all &= s->have[s->buckets->instances[i] * s->set.ntiles + t];
      done[t * nb + b] = (uint8_t)all;
    }
  return done;
}

/* StarPU (and the MPI workers) up and the reuse plan. */
static int start(wsisa__study_run *s, const wsisa_sched *sched, wsisa_err *e) {
  /* every task measured: the performance models learn from each run */
  wsisa_runtime_opts ropts = {.resolved = sched, .ncpu = -1, .nopencl = -1, .calibrate = 1};
  int rc = wsisa_codelets_start(&ropts, e);
  if (rc) return rc;
  s->runtime = 1;
  /* StarPU catches SIGINT for itself (and hands it on): ours again */
  wsisa_units_catch_signals();
  wsisa_text_read_stop(wsisa_units_interrupted);
  rc = wsisa_dist_workers(wsisa_runtime_ncpu() + wsisa_runtime_nopencl(), &s->workers, e);
  /* the models' costs first: the plan may weigh buckets by them */
  wsisa_estimate_request q = {s->set.tiles,        s->set.ntiles,          s->params,         s->nruns,
                              s->object_match, s->features != NULL, wsisa__study_halo_for(s->study, s->params, s->nruns)};
  if (!rc) rc = wsisa__estimate_run_costs(s->study, &q, &s->cost_source, s->level_cost, &s->est, e);
  return rc ? rc : make_plan(s, e);
}

/* RMSR's K from the memory limit, with what the process holds now (StarPU,
 * the libraries, design and plan) counted in: a limit below what one path
 * needs is refused with the smallest that works. */
static int plan_memory(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_exec_opts *eo,
                       wsisa_err *e) {
  size_t k_asked = s->study->reuse.active_paths > 0 ? (size_t)s->study->reuse.active_paths : 0;
  uint64_t asked = s->study->execution.memory_limit, minimum = 0;
  const char *source = memory_source(s, r);
  s->baseline_rss = wsisa_rss_now();
  eo->active_paths =
      wsisa_exec_active_paths(k_asked, wsisa_memory_available(), s->baseline_rss,
                              &s->study->execution.memory_limit, s->set.tiles, s->set.ntiles, eo, &minimum);
  /* The limit named is 2 % (at least 2 MiB) over this run's smallest: what
   * the process holds before the first unit differs by a MiB or so from run
   * to run (the workers' start-up, the allocator), and the limit named must
   * still hold when the run is repeated with it. */
  if (!eo->active_paths && asked)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s%s%s %.0fM: below what one path of this study needs here (%.0f MiB "
                       "held before the first unit, then the tile, the running tasks and one "
                       "path); give at least %.0fM",
                       r->memory_limit ? "" : s->study->path, r->memory_limit ? "" : ": ",
                       source, (double)asked / 1048576.0, (double)s->baseline_rss / 1048576.0,
                       ceil(((double)minimum + fmax(0.02 * (double)minimum, 2.0 * 1048576.0)) /
                            1048576.0));
  if (!eo->active_paths) {
    wsisa_log(WSISA_LOG_WARN, "run",
              "%.0f MiB available is below one active path (%.0f MiB); running with K = 1",
              (double)s->study->execution.memory_limit / 1048576.0,
              (double)minimum / 1048576.0);
    eo->active_paths = 1;
  }
  wsisa_log(WSISA_LOG_INFO, "run", "K = %zu active paths; %.0f MiB held before the units, limit %.0f MiB",
            eo->active_paths, (double)s->baseline_rss / 1048576.0,
            (double)s->study->execution.memory_limit / 1048576.0);
  s->study->reuse.active_paths = (int)eo->active_paths;
  if (eo->object_reuse)
    eo->object_store_bytes = s->object_store_bytes = wsisa_exec_object_store_bytes(
        s->study->execution.memory_limit, s->baseline_rss);
  return 0;
}

/* The one line a SIGINT or SIGTERM ends with. */
static int interrupted(const wsisa__study_run *s, int have_folder, size_t before, size_t total,
                       wsisa_err *e) {
  if (!have_folder)
    return wsisa_error(e, WSISA_EINTERRUPTED, "interrupted before any unit ran; nothing written");
  if (!total)
    return wsisa_error(e, WSISA_EINTERRUPTED,
                       "interrupted before any unit ran; continue with `wsisa run --resume %s`",
                       s->dir);
  return wsisa_error(e, WSISA_EINTERRUPTED,
                     "interrupted after %zu of %zu units; continue with `wsisa run --resume %s`",
                     before + s->units_journaled, total, s->dir);
}

/* How each tile is read: the halo (inputs.halo, or what the study's runs
 * and the defaults can see) and, unless inputs.normalization is "tile", each
 * slide's colour statistics from its tissue, computed once (StarPU running). */
static int tile_reading(wsisa__study_run *s, wsisa_exec_opts *eo, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  eo->halo = s->halo = wsisa__study_halo_for(s->study, s->params, s->nruns);
  if (in->overlap > 0 && s->halo > 0)
    wsisa_log(WSISA_LOG_WARN, "run",
              "%s: inputs.overlap %d: the nuclei in pixels two tiles share are owned by both "
              "and counted twice; the halo (%d pixels) already sees past each border: give "
              "overlap 0",
              s->study->path, in->overlap, s->halo);
  for (size_t i = 0; i < s->set.ninputs; i++) {
    wsisa__study_input *ri = &s->set.inputs[i];
    if (ri->kind != WSISA_INPUT_SLIDE || in->tile_stats || !ri->ntiles) continue;
    double t0 = wsisa_now();
    int rc = wsisa_slide_stats(ri->path, &ri->scale, ri->stats, e);
    if (rc) return rc;
    ri->has_stats = ri->stats[WSISA_STATS_COUNT] > 0;
    for (size_t t = ri->first_tile; t < ri->first_tile + ri->ntiles; t++) {
      s->set.tiles[t].has_stats = ri->has_stats;
      memcpy(s->set.tiles[t].stats, ri->stats, sizeof ri->stats);
    }
    wsisa_log(WSISA_LOG_INFO, "run",
              "%s: colour statistics of %.0f tissue pixels in %.1f s (mean %.4f %.4f %.4f, "
              "std %.4f %.4f %.4f)",
              ri->path, ri->stats[WSISA_STATS_COUNT], wsisa_now() - t0,
              ri->stats[WSISA_STATS_MEAN], ri->stats[WSISA_STATS_MEAN + 1],
              ri->stats[WSISA_STATS_MEAN + 2], ri->stats[WSISA_STATS_STD],
              ri->stats[WSISA_STATS_STD + 1], ri->stats[WSISA_STATS_STD + 2]);
  }
  return 0;
}

/* A resume writes the outputs again from the journal: those there that
 * disagree with it (edited, or made before the journal was) are named, one
 * line each, and listed in run.json, never replaced silently. */
static json_t *outputs_rewritten(wsisa__study_run *s) {
  json_t *list = json_array();
  char made[] = "/tmp/wsisa-resume-XXXXXX";
  wsisa_err inner = WSISA_ERR_INIT;
  if (!list || !mkdtemp(made)) return list;
  const char *names[] = {"metrics.csv", "outputs.csv", "best.json"};
  int made_ok = !wsisa__results_metrics(s, made, &inner);
  for (size_t i = 0; i < 3 && made_ok; i++) {
    char path[WSISA_PATH_MAX], again[WSISA_PATH_MAX], why[600];
    /* one not there yet (an interrupted run's) is simply written */
    if (wsisa__run_path(s, names[i], path, &inner) ||
        wsisa_path_fmt_err(again, &inner, "%s/%s", made, names[i]) || access(path, F_OK) != 0 ||
        access(again, F_OK) != 0 ||
        !wsisa__results_differs(path, again, "the journal", why, sizeof why))
      continue;
    wsisa_log(WSISA_LOG_WARN, "run", "%s: rewritten from the journal", why);
    json_array_append_new(list, json_pack("{s:s, s:s}", "file", names[i], "why", why));
  }
  wsisa__run_folder_remove(made);
  return list;
}

/* Every unit not done, each journaled as it ends; the folder is made (a new
 * run) once nothing is left to refuse. */
static int execute(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  uint8_t *done = units_done(s);
  if (!done) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  size_t total = s->set.ntiles * s->buckets->n_buckets, before = 0;
  for (size_t u = 0; u < total; u++) before += done[u];
  /* every MPI rank derives its own K from what was asked (engine/exec/dist.c) */
  size_t k_asked = s->study->reuse.active_paths > 0 ? (size_t)s->study->reuse.active_paths : 0;
  uint64_t limit_asked = s->study->execution.memory_limit;
  wsisa_exec_opts eo = {.normalize = 1,
                        .share_tile_stage = s->study->reuse.strategy != WSISA_REUSE_NONE,
                        .object_match = s->object_match,
                        .features = s->features != NULL,
                        .object_reuse = s->study->reuse.object_reuse,
                        .placement = s->study->execution.placement};
  int rc = tile_reading(s, &eo, e);
  if (!rc) rc = plan_memory(s, r, &eo, e);
  int have_folder = r->resume != NULL;
  if (!rc && !have_folder && !wsisa_units_interrupted()) {
    rc = wsisa__run_folder_create(s, s->out, e);
    have_folder = !rc;
  }
  if (!rc && wsisa_units_interrupted()) rc = WSISA_EINTERRUPTED;
  if (!rc) {
    s->units_total = total;
    s->units_run = total - before;
    /* every rank as this one: its workers, its K */
    wsisa_estimate_plan ep = {s->buckets, eo.share_tile_stage, eo.active_paths, done,
                              wsisa_dist_size(), -1, -1, eo.object_reuse, eo.placement};
    wsisa__estimate_run(s->est, &ep, &s->estimated);
    /* unit placement's prior: each kind's time per task by the models */
    if (s->est && wsisa_estimate_kind_seconds(s->est, eo.kind_task_seconds))
      memset(eo.kind_task_seconds, 0, sizeof eo.kind_task_seconds);
    if (eo.kind_task_seconds[WSISA_KIND_OPENCL] > 0)
      wsisa_log(WSISA_LOG_INFO, "run",
                "unit placement's prior: %.4f s a level task on a CPU worker, %.4f s on an "
                "OpenCL worker (the models)",
                eo.kind_task_seconds[WSISA_KIND_CPU], eo.kind_task_seconds[WSISA_KIND_OPENCL]);
    double t0 = wsisa_now();
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    rc = wsisa_units_run(s->set.tiles, s->set.ntiles, s->params, s->buckets, done, &eo, k_asked,
                         limit_asked, wsisa__journal_unit, s, &s->stats, e);
    s->t_exec = wsisa_now() - t0;
    getrusage(RUSAGE_SELF, &u1);
    s->faults_minor = u1.ru_minflt - u0.ru_minflt;
    s->faults_major = u1.ru_majflt - u0.ru_majflt;
  }
  if (rc == WSISA_EINTERRUPTED) rc = interrupted(s, have_folder, before, total, e);
  free(done);
  if (!rc) rc = wsisa__results_provenance(s, r->resume ? outputs_rewritten(s) : NULL, e);
  return rc;
}

static int analyze(wsisa__study_run *s, wsisa_err *e) {
  char study[WSISA_PATH_MAX], samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX];
  int rc = wsisa__run_path(s, "study.json", study, e);
  if (!rc) rc = wsisa__run_path(s, "samples.csv", samples, e);
  if (!rc) rc = wsisa__run_path(s, "outputs.csv", outputs, e);
  if (rc) return rc;
  /* a run without nuclei has no mean area: VBD drops its base samples and
   * says how many, rather than failing the study at its last step */
  wsisa_analysis_request a = {.study_path = study, .samples_path = samples, .outputs_path = outputs,
                              .dir = s->dir, .drop_missing = 1};
  rc = wsisa_analysis_run(&a, e);
  if (!rc) printf("wrote %s/indices.csv, %s/indices.json and plots\n", s->dir, s->dir);
  return rc;
}

/* With annotations: the best run, as best.json names it, and how to see it. */
static void print_best(const wsisa__study_run *s) {
  char path[WSISA_PATH_MAX];
  json_t *b = wsisa__run_path(s, "best.json", path, NULL) ? NULL : json_load_file(path, 0, NULL);
  if (!b) {
    printf("no best run: no metric of the study says which way is better (dice, jaccard, "
           "object_*, aji, wasserstein:<feature> do)\n");
    return;
  }
  /* the defaults are always among the runs with annotations
   * (design_defaults): in the design, or run after it to be scored */
  char defaults[128] = "";
  const size_t d = (size_t)s->defaults_run;
  if (s->defaults_run < 0)
    snprintf(defaults, sizeof defaults, "the defaults not run");
  else if (d < s->ndesign)
    snprintf(defaults, sizeof defaults, "the defaults, run %llu: %.6g",
             (unsigned long long)wsisa__run_id(s, d), s->defaults_value);
  else
    snprintf(defaults, sizeof defaults, "the defaults, run beside the design: %.6g",
             s->defaults_value);
  printf("best run against the annotations by %s: run %" JSON_INTEGER_FORMAT " (%.6g; %s); "
         "%s holds its parameters: wsisa segment INPUT --params @%s reproduces it\n",
         json_string_value(json_object_get(b, "chosen_by")),
         json_integer_value(json_object_get(b, "run_id")),
         json_number_value(json_object_get(b, "value")), defaults, path, path);
  json_decref(b);
}

/* Metrics from the counts, indices (unless the design came from a CSV), and
 * the summary on stdout. */
static int finish(wsisa__study_run *s, const char *samples, wsisa_err *e) {
  /* identical runs share a leaf: every run has its counts for every tile */
  for (size_t i = 0; i < s->nruns * s->set.ntiles; i++)
    if (!s->have[i])
      return wsisa_error(e, WSISA_EINTERNAL, "run %zu has no result for tile %zu", i / s->set.ntiles,
                         i % s->set.ntiles);
  int rc = wsisa__results_metrics(s, NULL, e);
  if (rc) return rc;
  if (s->from_csv)
    printf("design from %s: no indices computed here (the study's method may not match it); "
           "run `wsisa analyze` on %s/samples.csv and %s/outputs.csv with a matching study\n",
           samples, s->dir, s->dir);
  else if (!wsisa__results_indexed(s))
    printf("every parameter is fixed: one run, no sensitivity indices to compute (analysis "
           "skipped)\n");
  else if ((rc = analyze(s, e)))
    return rc;
  if (wsisa__results_indexed(s)) wsisa__results_print_top(s);
  if (s->set.annotated) print_best(s);
  printf("results in %s: metrics.csv%s%s, run.json\n", s->dir,
         s->from_csv                 ? ", outputs.csv"
         : wsisa__results_indexed(s) ? ", indices.csv, indices.json, *.svg"
                                     : ", outputs.csv",
         s->set.annotated ? ", best.json" : "");
  printf("%zu runs%s x %zu tiles, %llu tasks executed (no reuse: %llu), %.1f s\n", s->ndesign,
         s->nruns > s->ndesign ? " (and the defaults)" : "", s->set.ntiles,
         (unsigned long long)s->stats.tasks, (unsigned long long)s->tasks_no_reuse,
         wsisa_now() - s->t_start);
  return 0;
}

/* `wsisa run --check`: the folder locked for reading, the run prepared as
 * it began, then checked (engine/run/check.c). */
static int check(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  int rc = wsisa__run_folder_lock(s->dir, 0, &s->lock_fd, e);
  /* the inputs were those of a finished run: a refusal of them now (a
   * reference changed since) is a changed input, not a usage error */
  if (!rc && (rc = prepare(s, r, e)) == WSISA_EUSAGE) rc = e->code = WSISA_EFORMAT;
  return rc ? rc : wsisa__run_check(s, e);
}

/* A new run or a resumed one, from the checks to the indices. */
static int run(wsisa__study_run *s, const wsisa_runner_request *r, const wsisa_sched *sched,
               wsisa_err *e) {
  /* one writer per folder: a second --resume is refused before any work */
  int rc = r->resume ? wsisa__run_folder_lock(s->dir, 1, &s->lock_fd, e) : wsisa__run_folder_check_new(s->out, e);
  if (!rc) rc = prepare(s, r, e);
  if (!rc && r->resume) rc = reopen(s, e);
  if (!rc && wsisa_units_interrupted())
    rc = interrupted(s, r->resume != NULL, 0, 0, e);
  if (!rc) rc = start(s, sched, e);
  if (!rc) rc = execute(s, r, e);
  if (s->runtime) {
    wsisa_runtime_shutdown();
    s->runtime = 0;
  }
  char design_csv[WSISA_PATH_MAX];
  if (!rc) rc = wsisa__run_path(s, "design.csv", design_csv, e);
  if (!rc) rc = finish(s, r->resume && s->from_csv ? design_csv : r->samples, e);
  if (!rc || rc == WSISA_EINTERRUPTED) return rc;
  if (s->created && !s->units_journaled) {
    /* nothing done yet: leave nothing behind */
    wsisa__run_folder_remove(s->dir);
  } else if (e && s->units_journaled) {
    size_t n = strlen(e->msg);
    snprintf(e->msg + n, sizeof e->msg - n,
             "; the finished units are kept: `wsisa run --resume %s` goes on from them", s->dir);
  }
  return rc;
}

/* ---- a run's life ------------------------------------------------------------- */

static void run_free(wsisa__study_run *s) {
  if (s->runtime) wsisa_runtime_shutdown();
  if (s->journal) fclose(s->journal);
  wsisa__study_tiles_free(&s->set);
  wsisa_estimate_free(s->est);
  free(s->params);
  free(s->run_ids);
  free(s->counts);
  free(s->have);
  wsisa__run_features_free(s->features);
  if (s->buckets) wsisa_reuse_buckets_free(s->buckets);
  if (s->plan) wsisa_reuse_design_free(s->plan);
  if (s->design) wsisa_sa_design_free(s->design);
  if (s->space) wsisa_sa_space_free(s->space);
  if (s->study) wsisa_study_free(s->study);
  /* the lock goes last: the folder is complete when the next writer comes */
  if (s->lock_fd >= 0) close(s->lock_fd);
}

int wsisa_runner_run(const wsisa_runner_request *r, wsisa_err *e) {
  wsisa__study_run s;
  memset(&s, 0, sizeof s);
  s.lock_fd = -1;
  s.defaults_run = -1;
  s.t_start = wsisa_now();
  /* from here SIGINT and SIGTERM stop the run between units (engine/exec/units.c);
   * a worker rank waits for the manager to tell it to stop */
  wsisa_units_catch_signals();
  wsisa_text_read_stop(wsisa_units_interrupted);
  /* under mpirun, ranks other than 0 only execute what the manager hands out */
  int rc = wsisa_dist_start(r->unit_timeout > 0 ? r->unit_timeout : 600.0, e);
  if (!rc && wsisa_dist_rank() > 0) {
    rc = wsisa_dist_worker(e);
  } else if (!rc) {
    wsisa_machine_read(&s.machine);
    char study_path[WSISA_PATH_MAX];
    wsisa_sched sched = {NULL, WSISA_SCHED_DEFAULT};
    rc = wsisa_path_fmt_err(s.dir, e, "%s", existing(r) ? existing(r) : r->out);
    /* "results/" names the folder results: its temporary one goes beside it */
    size_t n = strlen(s.dir);
    while (n > 1 && s.dir[n - 1] == '/') s.dir[--n] = '\0';
    snprintf(s.out, sizeof s.out, "%s", s.dir);
    if (!rc) rc = load_study(&s, r, study_path, &sched, e);
    if (!rc) rc = r->check ? check(&s, r, e) : run(&s, r, &sched, e);
  }
  run_free(&s);
  wsisa_dist_end();
  return rc;
}
