/* `wsisa plan --study S.json [--samples design.csv] [--json]`: the reuse
 * analysis of a study's design without running it: what stage-level reuse and
 * each task-level merging strategy would run, how the buckets balance, and
 * what the analysis costs. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/engine.h"
#include "io/study.h"
#include "reuse/reuse.h"

#define NLEVELS WSISA_SEG_LEVELS

typedef struct plan_args {
  const char *study_path, *samples_path, *select;
  int json;
  long workers, active_paths;     /* -1: not given */
  double level_cost[NLEVELS];
  int have_costs;
  int force;
} plan_args;

static int parse_costs(const char *text, double *cost, wsisa_err *e) {
  const char *p = text;
  for (size_t l = 0; l < NLEVELS; l++) {
    char *end;
    cost[l] = strtod(p, &end);
    if (end == p || !isfinite(cost[l]) || cost[l] < 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "--level-costs %s: want %d non-negative numbers separated by commas", text,
                         NLEVELS);
    p = end;
    if (l + 1 < NLEVELS && *p++ != ',')
      return wsisa_error(e, WSISA_EUSAGE, "--level-costs %s: want %d numbers, one per task level",
                         text, NLEVELS);
  }
  if (*p)
    return wsisa_error(e, WSISA_EUSAGE, "--level-costs %s: want %d numbers, one per task level",
                       text, NLEVELS);
  return 0;
}




static const char *study_strategy(const wsisa_study *study) {
  return wsisa_study_reuse_name(study->reuse.strategy);
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
  return o;
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
  json_object_set_new(root, "cost_model", json_string(p->level_cost ? "level_costs" : "tasks"));
  for (size_t l = 0; p->level_cost && l < NLEVELS; l++) json_array_append_new(costs, json_real(p->level_cost[l]));
  json_object_set_new(root, "level_costs", p->level_cost ? costs : json_null());
  if (!p->level_cost) json_decref(costs);
  json_object_set_new(root, "active_paths", json_integer((json_int_t)p->active_paths));
  json_object_set_new(root, "design_analysis_ms", json_real(p->design_ms));
  for (size_t i = 0; i < p->nrows; i++)
    json_array_append_new(rows, row_json(&p->rows[i], none, stage, study_strategy(p->study)));
  json_object_set_new(root, "strategies", rows);
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(root);
  if (!text) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  puts(text);
  free(text);
  return 0;
}

static void print_text(const report *p) {
  const wsisa_reuse_design *d = p->d;
  size_t none = d->n * NLEVELS, stage = d->n_distinct * NLEVELS, lower = wsisa_reuse_tree_tasks(d->tree);
  printf("study     %s\n", p->study->path);
  printf("design    %s: %zu runs, %zu distinct stage instances\n", p->source, d->n, d->n_distinct);
  printf("tasks     no reuse %zu, stage-level %zu, lower bound %zu (%.1f%% reuse at most)\n", none,
         stage, lower, 100 * (1 - (double)lower / (double)none));
  if (p->level_cost) {
    printf("cost      per task level:");
    for (size_t l = 0; l < NLEVELS; l++) printf(" %g", p->level_cost[l]);
    printf("\n");
  } else {
    printf("cost      distinct tasks\n");
  }
  if (p->active_paths) printf("paths     %zu active per bucket (peak = live intermediates)\n", p->active_paths);
  else printf("paths     unbounded (peak = live intermediates)\n");
  printf("\n  %-6s %-10s %8s %8s %7s %7s %10s %7s %5s %9s\n", "", "limit", "buckets", "tasks",
         "reuse", "tasklvl", "largest", "imbal", "peak", "time_ms");
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
    printf("%8zu %8zu %6.1f%% %6.1f%% %10.4g %6.1f%% %5zu %9.2f\n", s->n_buckets, s->tasks,
           100 * (1 - (double)s->tasks / (double)none), 100 * (1 - (double)s->tasks / (double)stage),
           s->max_cost, 100 * s->imbalance, s->peak_live, r->ms);
  }
  printf("\nreuse vs no reuse; tasklvl vs stage-level; largest bucket cost; imbal = largest/mean - 1;\n"
         "time = the strategy's merge (stage-level reuse and the reuse tree took %.2f ms); * = the "
         "study's strategy\n",
         p->design_ms);
}

static int plan(const plan_args *a, wsisa_err *e) {
  wsisa_study *study = NULL;
  wsisa_plan_report out;
  memset(&out, 0, sizeof out);
  int rc = wsisa_study_load(a->study_path, &study, e);
  const double *cost = a->have_costs ? a->level_cost : NULL;
  wsisa_plan_request r = {a->samples_path, a->select, (int)a->workers, a->active_paths, cost,
                         a->force};
  if (!rc) rc = wsisa_plan_compare(study, &r, &out, e);
  if (!rc) {
    report p = {a, study, out.source, out.design, cost, out.active_paths, out.design_ms,
                out.rows, WSISA_PLAN_STRATEGIES};
    if (a->json) rc = print_json(&p, e);
    else print_text(&p);
  }
  wsisa_plan_report_free(&out);
  wsisa_study_free(study);
  return rc;
}

int wsisa_cmd_plan(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {{"study", required_argument, 0, 's'},
                                           {"samples", required_argument, 0, 'S'},
                                           {"select", required_argument, 0, 'L'},
                                           {"json", no_argument, 0, 'j'},
                                           {"workers", required_argument, 0, 'w'},
                                           {"active-paths", required_argument, 0, 'k'},
                                           {"level-costs", required_argument, 0, 'c'},
                                           {"force", no_argument, 0, 'f'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  plan_args a = {.workers = -1, .active_paths = -1};
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (opt) {
      case 's': a.study_path = optarg; break;
      case 'S': a.samples_path = optarg; break;
      case 'L': a.select = optarg; break;
      case 'j': a.json = 1; break;
      case 'f': a.force = 1; break;
      case 'w':
        if ((rc = wsisa_cli_long("--workers", optarg, &a.workers, e))) return rc;
        if (a.workers < 1) return wsisa_error(e, WSISA_EUSAGE, "--workers %s: want at least 1", optarg);
        break;
      case 'k':
        if ((rc = wsisa_cli_long("--active-paths", optarg, &a.active_paths, e))) return rc;
        if (a.active_paths < 0)
          return wsisa_error(e, WSISA_EUSAGE, "--active-paths %s: want 0 (unbounded) or more", optarg);
        break;
      case 'c':
        if ((rc = parse_costs(optarg, a.level_cost, e))) return rc;
        a.have_costs = 1;
        break;
      case 'h':
        printf("usage: wsisa plan --study S.json [--samples design.csv] [--json]\n"
               "  --study S.json        a segmentation study (its reuse settings set the limits)\n"
               "  --samples F           plan this design (CSV: run_id, then parameter columns;\n"
               "                        a fixed parameter's column may be absent) instead of\n"
               "                        the study's own\n"
               "  --select P,...        two_phase studies: plan the phase-2 design\n"
               "  --json                the report as JSON\n"
               "  --workers W           TRTMA's default max_buckets is 3 x W (default: CPUs)\n"
               "  --active-paths K      paths per bucket for the peak estimate (default: the\n"
               "                        study's reuse.active_paths; 0 = unbounded)\n"
               "  --level-costs c1,...,c7   cost per task of each level (e.g. seconds from the\n"
               "                        perf models); buckets then cost their tasks' sum\n"
               "  --force               plan a design of more than %zu runs (it must still fit\n"
               "                        in the memory available)\n"
               "Stage-level reuse, then naive, sca, rtma and trtma with the limits wsisa run\n"
               "uses (max_bucket_size default %d, max_buckets default 3 x workers).\n",
               WSISA_STUDY_MAX_RUNS, WSISA_DEFAULT_BUCKET_SIZE);
        return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (!a.study_path) return wsisa_error(e, WSISA_EUSAGE, "--study: required");
  if (a.samples_path && a.select)
    return wsisa_error(e, WSISA_EUSAGE, "--select: only for the study's own design, not with --samples");
  return plan(&a, e);
}
