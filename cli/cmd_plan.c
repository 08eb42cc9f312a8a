/* `wsisa plan --study S.json [--samples design.csv] [--json]`: the reuse
 * analysis of a study's design without running it: what stage-level reuse and
 * each task-level merging strategy would run, how the buckets balance, and
 * what the analysis costs; with --estimate, the time, CPU-hours and memory
 * this host's performance models predict (engine/estimate/costs.c). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/run/run.h"
#include "engine/study/study.h"
#include "reuse/reuse.h"

#define NLEVELS WSISA_SEG_LEVELS

typedef struct plan_args {
  const char *study_path, *samples_path, *select;
  int json;
  long workers, active_paths;     /* -1: not given */
  long opencl_workers;            /* -1: not given */
  double level_cost[NLEVELS];
  int have_costs;
  int estimate, calibrate;
  long ranks;                     /* -1: not given */
  double deadline;                /* 0: none */
  uint64_t memory_limit;          /* 0: the study's */
  int force;
} plan_args;

static const char *study_strategy(const wsisa_study *study) {
  return wsisa_reuse_strategy_name(study->reuse.strategy);
}

/* "57.3 s", "12.4 min", "3.20 h" */
static const char *fmt_seconds(char *buf, size_t cap, double s) {
  if (s < 120) snprintf(buf, cap, "%.1f s", s);
  else if (s < 7200) snprintf(buf, cap, "%.1f min", s / 60);
  else snprintf(buf, cap, "%.2f h", s / 3600);
  return buf;
}

static const char *fmt_bytes(char *buf, size_t cap, double b) {
  if (b < 1024.0 * 1024 * 1024) snprintf(buf, cap, "%.0f MiB", b / 1048576.0);
  else snprintf(buf, cap, "%.2f GiB", b / 1073741824.0);
  return buf;
}

static json_t *row_json(const wsisa_plan_row *r, size_t none, size_t stage, const char *selected) {
  const char *name = wsisa_reuse_strategy_name(r->strategy);
  json_t *o = json_object();
  json_object_set_new(o, "strategy", json_string(name));
  json_object_set_new(o, "selected", json_boolean(strcmp(name, selected) == 0));
  if (r->strategy == WSISA_REUSE_TRTMA)
    json_object_set_new(o, "max_buckets", json_integer((json_int_t)r->limit));
  else if (r->strategy != WSISA_REUSE_STAGE)
    json_object_set_new(o, "max_bucket_size", json_integer((json_int_t)r->limit));
  if (r->skipped) {
    json_object_set_new(o, "skipped", json_string("more distinct stage instances than SCA's O(n^4) allows"));
    return o;
  }
  const wsisa_reuse_summary *s = &r->summary;
  json_object_set_new(o, "buckets", json_integer((json_int_t)s->n_buckets));
  json_object_set_new(o, "tasks", json_integer((json_int_t)s->tasks));
  json_object_set_new(o, "reuse_pct", json_real(100 * (1 - (double)s->tasks / (double)none)));
  json_object_set_new(o, "task_level_reuse_pct", json_real(100 * (1 - (double)s->tasks / (double)stage)));
  json_object_set_new(o, "cost", json_real(s->cost));
  json_object_set_new(o, "largest_bucket_cost", json_real(s->max_cost));
  json_object_set_new(o, "largest_bucket_instances", json_integer((json_int_t)s->max_instances));
  json_object_set_new(o, "imbalance", json_real(s->imbalance));
  json_object_set_new(o, "peak_intermediates", json_integer((json_int_t)s->peak_live));
  json_object_set_new(o, "analysis_ms", json_real(r->ms));
  if (r->estimated)
    json_object_set_new(o, "estimate",
                        json_pack("{s:f, s:f, s:I}", "makespan_s", r->makespan, "cpu_hours",
                                  r->cpu_hours, "peak_rss_bytes", (json_int_t)r->peak_rss));
  return o;
}

static json_t *estimate_json(const wsisa_plan_report *o) {
  const wsisa_estimate_figures *f = &o->est;
  json_t *est = json_object(), *ev = json_object(), *unc = json_array();
  json_object_set_new(est, "strategy", json_string(o->strategy));
  json_object_set_new(est, "ranks", json_integer(f->ranks));
  json_object_set_new(est, "workers_per_rank", json_integer(f->workers));
  json_object_set_new(est, "cpu_workers_per_rank", json_integer(o->cpu_workers));
  json_object_set_new(est, "opencl_workers_per_rank", json_integer(o->opencl_workers));
  if (f->object_source[0]) {
    json_object_set_new(est, "object_reuse_share",
                        f->object_share >= 0 ? json_real(f->object_share) : json_null());
    json_object_set_new(est, "object_reuse_how", json_string(f->object_source));
  }
  json_object_set_new(est, "level_costs_how", json_string(f->level_source));
  json_object_set_new(est, "makespan_s", json_real(f->sim.makespan));
  json_object_set_new(est, "work_s", json_real(f->sim.work));
  json_object_set_new(est, "busy_factor", json_real(f->busy_factor));
  json_object_set_new(est, "busy_workers", json_real(f->busy_workers));
  json_object_set_new(est, "busy_workers_how", json_string(f->busy_source));
  json_object_set_new(est, "tile_reads_how", json_string(f->read_source));
  json_object_set_new(est, "fresh_memory_s", json_real(f->fresh_seconds));
  json_object_set_new(est, "fresh_memory_how", json_string(f->fresh_source));
  json_object_set_new(est, "efficiency", json_real(f->efficiency));
  json_object_set_new(est, "cpu_hours", json_real(f->cpu_hours));
  json_object_set_new(est, "peak_rss_bytes", json_integer((json_int_t)f->peak_rss));
  json_object_set_new(est, "baseline_rss_bytes", json_integer((json_int_t)f->baseline_rss));
  json_object_set_new(est, "active_paths", json_integer((json_int_t)f->active_paths));
  json_object_set_new(est, "memory_limit_bytes", json_integer((json_int_t)o->memory_limit));
  json_object_set_new(est, "units", json_integer((json_int_t)f->sim.units));
  json_object_set_new(est, "tasks", json_integer((json_int_t)f->sim.tasks));
  for (int c = 0; c < WSISA_EST_NCLASSES; c++)
    json_object_set_new(ev, wsisa_est_class_name((wsisa_est_class)c), json_real(f->class_share[c]));
  json_object_set_new(est, "evidence", ev);
  json_object_set_new(est, "uncalibrated_share", json_real(wsisa_estimate_uncalibrated_share(f)));
  for (size_t i = 0; i < f->nlisted; i++)
    json_array_append_new(unc, json_pack("{s:s, s:s, s:f}", "codelet", f->listed[i].op, "evidence",
                                         wsisa_est_class_name(f->listed[i].cls), "share",
                                         f->listed[i].share));
  json_object_set_new(est, "uncalibrated", unc);
  if (o->deadline > 0)
    json_object_set_new(est, "deadline",
                        json_pack("{s:f, s:o, s:o, s:i}", "seconds", o->deadline, "ranks",
                                  o->deadline_ranks ? json_integer(o->deadline_ranks) : json_null(),
                                  "makespan_s", isnan(o->deadline_makespan) ? json_null()
                                                                            : json_real(o->deadline_makespan),
                                  "max_ranks", o->deadline_max_ranks));
  json_object_set_new(est, "starpu_home", json_string(o->starpu_home));
  return est;
}

typedef struct report {
  const plan_args *a;
  const wsisa_study *study;
  const char *source;
  const wsisa_reuse_design *d;
  const double *level_cost;
  size_t active_paths;
  double design_ms;
  const wsisa_plan_row *rows;
  size_t nrows;
  const wsisa_plan_report *out;
} report;

static int print_json(const report *p, wsisa_err *e) {
  const wsisa_reuse_design *d = p->d;
  size_t none = d->n * NLEVELS, stage = d->n_distinct * NLEVELS, lower = wsisa_reuse_tree_tasks(d->tree);
  json_t *root = json_object(), *rows = json_array(), *costs = json_array();
  json_object_set_new(root, "study", json_string(p->study->path));
  json_object_set_new(root, "design", json_string(p->a->samples_path ? "csv" : "study"));
  json_object_set_new(root, "samples", p->a->samples_path ? json_string(p->a->samples_path) : json_null());
  json_object_set_new(root, "runs", json_integer((json_int_t)d->n));
  json_object_set_new(root, "distinct_stage_instances", json_integer((json_int_t)d->n_distinct));
  json_object_set_new(root, "task_levels", json_integer(NLEVELS));
  json_object_set_new(root, "tasks_no_reuse", json_integer((json_int_t)none));
  json_object_set_new(root, "tasks_stage_level", json_integer((json_int_t)stage));
  json_object_set_new(root, "tasks_lower_bound", json_integer((json_int_t)lower));
  json_object_set_new(root, "cost_model", json_string(p->out->cost_source));
  for (size_t l = 0; p->level_cost && l < NLEVELS; l++) json_array_append_new(costs, json_real(p->level_cost[l]));
  json_object_set_new(root, "level_costs", p->level_cost ? costs : json_null());
  if (!p->level_cost) json_decref(costs);
  json_object_set_new(root, "active_paths", json_integer((json_int_t)p->active_paths));
  json_object_set_new(root, "design_analysis_ms", json_real(p->design_ms));
  for (size_t i = 0; i < p->nrows; i++)
    json_array_append_new(rows, row_json(&p->rows[i], none, stage, study_strategy(p->study)));
  json_object_set_new(root, "strategies", rows);
  if (p->out->estimated) json_object_set_new(root, "estimate", estimate_json(p->out));
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(root);
  if (!text) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  puts(text);
  free(text);
  return 0;
}

static void print_estimate(const wsisa_plan_report *o) {
  const wsisa_estimate_figures *f = &o->est;
  char a[32], b[32], c[32];
  printf("\nestimate  %s on %d rank%s x %d worker%s (%d CPU, %d OpenCL), this host's performance "
         "models (STARPU_HOME=%s)\n",
         o->strategy, f->ranks, f->ranks > 1 ? "s" : "", f->workers, f->workers > 1 ? "s" : "",
         o->cpu_workers, o->opencl_workers, o->starpu_home);
  printf("  makespan      %s (%.0f worker-s of work: the workers busy %.0f%% of it)\n",
         fmt_seconds(a, sizeof a, f->sim.makespan), f->sim.work, 100 * f->sim.efficiency);
  printf("  efficiency    %.2f over one worker alone (T1 / (p x Tp))", f->efficiency);
  if (f->busy_slowdown != 1)
    printf(": a CPU task %.2fx its time alone with %.1f CPU workers busy", f->busy_slowdown,
           f->busy_workers);
  printf("\n");
  printf("  CPU-hours     %.3g (%d x %d workers x makespan)\n", f->cpu_hours, f->ranks, f->workers);
  printf("  peak memory   %s per rank (process %s, K = %zu active paths; memory limit %s)\n",
         fmt_bytes(a, sizeof a, (double)f->peak_rss), fmt_bytes(b, sizeof b, (double)f->baseline_rss),
         f->active_paths, fmt_bytes(c, sizeof c, (double)o->memory_limit));
  printf("  evidence      ");
  for (int k = 0; k < WSISA_EST_NCLASSES; k++)
    printf("%s%.1f%% %s", k ? ", " : "", 100 * f->class_share[k], wsisa_est_class_name((wsisa_est_class)k));
  printf(" (of the work)\n");
  if (f->nlisted) {
    printf("  uncalibrated  %.1f%% of the predicted work:",
           100 * wsisa_estimate_uncalibrated_share(f));
    for (size_t i = 0; i < f->nlisted; i++)
      printf("%s %s (%s) %.1f%%", i ? "," : "", f->listed[i].op,
             wsisa_est_class_name(f->listed[i].cls), 100 * f->listed[i].share);
    printf("\n");
  }
  if (o->deadline > 0) {
    if (o->deadline_ranks)
      printf("  deadline      %s: %d rank%s of %d workers (predicted %s)\n",
             fmt_seconds(a, sizeof a, o->deadline), o->deadline_ranks,
             o->deadline_ranks > 1 ? "s" : "", f->workers,
             fmt_seconds(b, sizeof b, o->deadline_makespan));
    else
      printf("  deadline      %s: not met by %d ranks of %d workers (predicted %s)\n",
             fmt_seconds(a, sizeof a, o->deadline), o->deadline_max_ranks, f->workers,
             fmt_seconds(b, sizeof b, o->deadline_makespan));
  }
}

static void print_text(const report *p) {
  const wsisa_reuse_design *d = p->d;
  size_t none = d->n * NLEVELS, stage = d->n_distinct * NLEVELS, lower = wsisa_reuse_tree_tasks(d->tree);
  printf("study     %s\n", p->study->path);
  printf("design    %s: %zu runs, %zu distinct stage instances\n", p->source, d->n, d->n_distinct);
  printf("tasks     no reuse %zu, stage-level %zu, lower bound %zu (%.1f%% reuse at most)\n", none,
         stage, lower, 100 * (1 - (double)lower / (double)none));
  if (p->level_cost) {
    printf("cost      per task level%s:", strcmp(p->out->cost_source, "models") == 0
                                               ? " (seconds, from the performance models)"
                                               : "");
    for (size_t l = 0; l < NLEVELS; l++) printf(" %.4g", p->level_cost[l]);
    printf("\n");
  } else {
    printf("cost      distinct tasks\n");
  }
  if (p->active_paths) printf("paths     %zu active per bucket (peak = live intermediates)\n", p->active_paths);
  else printf("paths     unbounded (peak = live intermediates)\n");
  int est = p->out->estimated;
  printf("\n  %-6s %-10s %8s %8s %7s %7s %10s %7s %5s %9s%s\n", "", "limit", "buckets", "tasks",
         "reuse", "tasklvl", "largest", "imbal", "peak", "time_ms", est ? "  predicted" : "");
  for (size_t i = 0; i < p->nrows; i++) {
    const wsisa_plan_row *r = &p->rows[i];
    const char *name = wsisa_reuse_strategy_name(r->strategy);
    char limit[32] = "-";
    if (r->strategy == WSISA_REUSE_TRTMA) snprintf(limit, sizeof limit, "buckets %zu", r->limit);
    else if (r->strategy != WSISA_REUSE_STAGE) snprintf(limit, sizeof limit, "size %zu", r->limit);
    printf("%c %-6s %-10s ", strcmp(name, study_strategy(p->study)) == 0 ? '*' : ' ', name, limit);
    if (r->skipped) {
      printf("skipped: %zu distinct stage instances (SCA is O(n^4); limit %d)\n", d->n_distinct,
             WSISA_PLAN_SCA_LIMIT);
      continue;
    }
    const wsisa_reuse_summary *s = &r->summary;
    printf("%8zu %8zu %6.1f%% %6.1f%% %10.4g %6.1f%% %5zu %9.2f", s->n_buckets, s->tasks,
           100 * (1 - (double)s->tasks / (double)none), 100 * (1 - (double)s->tasks / (double)stage),
           s->max_cost, 100 * s->imbalance, s->peak_live, r->ms);
    char b[32];
    if (r->estimated) printf("  %s", fmt_seconds(b, sizeof b, r->makespan));
    printf("\n");
  }
  printf("\nreuse vs no reuse; tasklvl vs stage-level; largest bucket cost; imbal = largest/mean - 1;\n"
         "time = the strategy's merge (stage-level reuse and the reuse tree took %.2f ms); * = the "
         "study's strategy\n",
         p->design_ms);
  if (est) print_estimate(p->out);
}

static int plan(const plan_args *a, wsisa_err *e) {
  wsisa_study *study = NULL;
  wsisa_plan_report out;
  memset(&out, 0, sizeof out);
  int rc = wsisa_study_load(a->study_path, &study, e);
  const double *cost = a->have_costs ? a->level_cost : NULL;
  wsisa_plan_request r = {.samples_path = a->samples_path, .select = a->select,
                          .workers = (int)a->workers, .active_paths = a->active_paths,
                          .opencl_workers = a->opencl_workers < 0    ? 0
                                            : a->opencl_workers == 0 ? -1
                                                                     : (int)a->opencl_workers,
                          .level_cost = cost, .force = a->force, .estimate = a->estimate,
                          .ranks = (int)a->ranks, .deadline = a->deadline,
                          .memory_limit = a->memory_limit};
  if (!rc && a->calibrate) {
    wsisa_calibrate_request c = {a->samples_path, a->select, 0};
    wsisa_calibrate_report cr;
    if (!(rc = wsisa_calibrate_study(study, &c, &cr, e))) wsisa_calibrate_print(&cr, stderr);
  }
  if (!rc) rc = wsisa_plan_compare(study, &r, &out, e);
  if (!rc) {
    const double *in_force = strcmp(out.cost_source, "tasks") ? out.level_cost : NULL;
    report p = {a, study, out.source, out.design, in_force, out.active_paths, out.design_ms,
                out.rows, WSISA_PLAN_STRATEGIES, &out};
    if (a->json) rc = print_json(&p, e);
    else print_text(&p);
  }
  wsisa_plan_report_free(&out);
  wsisa_study_free(study);
  return rc;
}

static const wsisa_cli_flag flags[] = {
    {.shared = WSISA_FLAG_STUDY,
     .note = "a segmentation study (its reuse settings set the limits)"},
    {.shared = WSISA_FLAG_SAMPLES, .note = "instead of the study's own"},
    {.shared = WSISA_FLAG_SELECT},
    {.shared = WSISA_FLAG_JSON},
    {"workers", 'w', .arg = "W",
     .help = "TRTMA's default max_buckets is 3 x W (default: CPUs);\n"
             "with --estimate, W CPU workers per rank, each priced by\n"
             "the CPU workers' models (default: those StarPU starts)"},
    {"opencl-workers", 'g', .arg = "G",
     .help = "with --estimate: G OpenCL workers per rank beside the CPU\n"
             "ones (0: none), priced by the OpenCL workers' models, a\n"
             "task going where it would finish first as under dmda\n"
             "(default: those StarPU starts; calibrate and plan with\n"
             "the same STARPU_OPENCL_ON_CPUS / devices)"},
    {.shared = WSISA_FLAG_ACTIVE_PATHS, .note = "for the peak estimate; 0: unbounded"},
    {.shared = WSISA_FLAG_LEVEL_COSTS},
    {"estimate", 'E',
     .help = "predict each strategy's makespan, and the study's\n"
             "makespan, CPU-hours and peak memory, from this host's\n"
             "calibrated performance models (STARPU_HOME)"},
    {"ranks", 'n', .arg = "N",
     .help = "... on N ranks (mpirun -np N) of the workers StarPU\n"
             "starts here, or --workers W CPU workers (default 1)"},
    {"deadline", 'd', .arg = "T",
     .help = "... and the fewest ranks finishing within T (seconds, or\n"
             "90m, 8h, 2d)"},
    {.shared = WSISA_FLAG_MEMORY_LIMIT, .note = "with --estimate: per rank, as wsisa run lowers K"},
    {"calibrate", 'C', .help = "first run wsisa calibrate on the study (its slides)"},
    {.shared = WSISA_FLAG_FORCE,
     .note = "a design of more than %.0f runs (it must still fit in the\n"
             "memory available)",
     .n = {WSISA_STUDY_MAX_RUNS}},
    {.shared = WSISA_FLAG_HELP},
    {0}};
static const char *const forms[] = {"--study [--samples | --select] [--json]",
                                    "--study --estimate [--workers] [--opencl-workers] [--ranks] [--deadline] [--json]", NULL};
const wsisa_cli_command wsisa_cli_plan = {
    "plan", wsisa_cmd_plan, forms,
    "reuse analysis; predicted time, CPU-hours and memory; no execution", flags};

int wsisa_cmd_plan(int argc, char **argv, wsisa_err *e) {
  plan_args a = {.workers = -1, .active_paths = -1, .ranks = -1, .opencl_workers = -1};
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_plan)) != -1) {
    switch (opt) {
      case WSISA_FLAG_STUDY: a.study_path = optarg; break;
      case WSISA_FLAG_SAMPLES: a.samples_path = optarg; break;
      case WSISA_FLAG_SELECT: a.select = optarg; break;
      case WSISA_FLAG_JSON: a.json = 1; break;
      case WSISA_FLAG_FORCE: a.force = 1; break;
      case 'w':
        if ((rc = wsisa_cli_long("--workers", optarg, &a.workers, e))) return rc;
        if (a.workers < 1) return wsisa_error(e, WSISA_EUSAGE, "--workers %s: want at least 1", optarg);
        break;
      case 'g':
        if ((rc = wsisa_cli_long("--opencl-workers", optarg, &a.opencl_workers, e))) return rc;
        if (a.opencl_workers < 0)
          return wsisa_error(e, WSISA_EUSAGE, "--opencl-workers %s: want 0 or more", optarg);
        break;
      case WSISA_FLAG_ACTIVE_PATHS:
        if ((rc = wsisa_cli_long("--active-paths", optarg, &a.active_paths, e))) return rc;
        if (a.active_paths < 0)
          return wsisa_error(e, WSISA_EUSAGE, "--active-paths %s: want 0 (unbounded) or more", optarg);
        break;
      case WSISA_FLAG_LEVEL_COSTS:
        if ((rc = wsisa_cli_level_costs(optarg, a.level_cost, e))) return rc;
        a.have_costs = 1;
        break;
      case 'E': a.estimate = 1; break;
      case 'C': a.calibrate = 1; break;
      case 'n':
        if ((rc = wsisa_cli_long("--ranks", optarg, &a.ranks, e))) return rc;
        if (a.ranks < 1 || a.ranks > 1000000)
          return wsisa_error(e, WSISA_EUSAGE, "--ranks %s: want 1..1000000", optarg);
        break;
      case 'd':
        if ((rc = wsisa_cli_duration("--deadline", optarg, &a.deadline, e))) return rc;
        break;
      case WSISA_FLAG_MEMORY_LIMIT:
        if ((rc = wsisa_cli_bytes("--memory-limit", optarg, &a.memory_limit, e))) return rc;
        break;
      case WSISA_FLAG_HELP:
        wsisa_cli_usage(stdout, &wsisa_cli_plan);
        printf("Stage-level reuse, then naive, sca, rtma and trtma with the limits wsisa run\n"
               "uses (max_bucket_size default %d, max_buckets default 3 x workers).\n",
               WSISA_DEFAULT_BUCKET_SIZE);
        return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (!a.study_path) return wsisa_error(e, WSISA_EUSAGE, "--study: required");
  if (a.samples_path && a.select)
    return wsisa_error(e, WSISA_EUSAGE, "--select: only for the study's own design, not with --samples");
  if (!a.estimate && (a.ranks > 0 || a.deadline > 0 || a.memory_limit))
    return wsisa_error(e, WSISA_EUSAGE, "%s: only with --estimate",
                       a.ranks > 0 ? "--ranks" : a.deadline > 0 ? "--deadline" : "--memory-limit");
  return plan(&a, e);
}
