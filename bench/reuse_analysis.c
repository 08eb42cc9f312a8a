/* wsisa-bench-reuse: analysis time (median of several runs) and reuse of every
 * merging strategy on MOAT and VBD designs of the segmentation's parameter
 * space (docs/workflow.md), made by sa/ as a study makes them: sa/'s table of
 * the 15 parameters, its samplers and designs, and the task keys `wsisa plan`
 * and `wsisa run` use. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "engine/run/run.h"
#include "reuse/reuse.h"
#include "sa/sa.h"

/* The eight parameters seed 000 Table 3 keeps for VBD after MOAT. */
static const char *const vbd_params[] = {"T2",       "G1",          "G2",         "min_size",
                                         "max_size", "min_size_pl", "recon_conn", "watershed_conn"};
#define VBD_D (sizeof vbd_params / sizeof *vbd_params)

/* The VBD designs' samplers, as before sa/ had Sobol' and Hammersley. */
static const wsisa_sa_sampler vbd_samplers[] = {WSISA_SA_MC, WSISA_SA_LHS, WSISA_SA_HALTON};
#define NSAMPLERS (sizeof vbd_samplers / sizeof *vbd_samplers)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct options {
  int runs;
  size_t max_bucket_size, max_buckets, sca_limit;
} options;

/* Median time of design + merge (stage-level reuse, reuse tree, algorithm and
 * the buckets' merged trees); prints one row. */
static int measure(const char *label, const uint64_t *keys, size_t n, const options *opt,
                   wsisa_reuse_opts ro) {
  double times[64];
  int runs = opt->runs < 64 ? opt->runs : 64;
  wsisa_reuse_summary s;
  wsisa_reuse_design *d = NULL;
  for (int r = 0; r < runs; r++) {
    wsisa_reuse_buckets *b = NULL;
    double t0 = wsisa_now();
    int rc = wsisa_reuse_design_new(keys, n, WSISA_SEG_LEVELS, &d);
    if (!rc) rc = wsisa_reuse_merge(d, &ro, &b);
    times[r] = wsisa_now() - t0;
    if (rc) {
      fprintf(stderr, "wsisa-bench-reuse: %s: merge failed (%d)\n", label, rc);
      wsisa_reuse_design_free(d);
      return rc;
    }
    wsisa_reuse_buckets_summarize(b, 1, &s);
    wsisa_reuse_buckets_free(b);
    if (r + 1 < runs) wsisa_reuse_design_free(d);
  }
  qsort(times, (size_t)runs, sizeof *times, cmp_double);
  double none = (double)(n * WSISA_SEG_LEVELS), stage = (double)(d->n_distinct * WSISA_SEG_LEVELS);
  char limit[32];
  if (ro.strategy == WSISA_REUSE_TRTMA) snprintf(limit, sizeof limit, "B=%zu", ro.max_buckets);
  else if (ro.strategy == WSISA_REUSE_STAGE) snprintf(limit, sizeof limit, "-");
  else snprintf(limit, sizeof limit, "M=%zu", ro.max_bucket_size);
  printf("  %-6s %-6s %9zu %7.2f%% %7.2f%% %8zu %6.0f %7.1f%% %6zu %10.2f\n",
         wsisa_reuse_strategy_name(ro.strategy), limit, s.tasks, 100 * (1 - (double)s.tasks / none),
         100 * (1 - (double)s.tasks / stage), s.n_buckets, s.max_cost, 100 * s.imbalance, s.peak_live,
         1e3 * times[runs / 2]);
  wsisa_reuse_design_free(d);
  return 0;
}

/* Every strategy on the runs of design `sd` over `space`: their task keys as
 * `wsisa plan` and `wsisa run` make them, then one row per strategy. */
static int bench_design(const char *label, const wsisa_sa_space *space, const wsisa_sa_design *sd,
                        const options *opt) {
  size_t n = sd->nrows;
  uint64_t *keys = malloc(n * WSISA_SEG_LEVELS * sizeof *keys);
  int level[WSISA_SA_NSEG];
  wsisa_reuse_design *d = NULL;
  for (size_t p = 0; p < space->nparams; p++) level[p] = space->params[p].level;
  int rc = keys ? wsisa_workflow_keys(sd->values, n, sd->nparams, level, keys) : WSISA_ENOMEM;
  if (!rc) rc = wsisa_reuse_design_new(keys, n, WSISA_SEG_LEVELS, &d);
  if (rc) goto done;
  size_t lower = wsisa_reuse_tree_tasks(d->tree);
  printf("\n%s: n = %zu runs, %zu distinct stage instances; tasks: no reuse %zu, stage-level %zu, "
         "lower bound %zu (%.2f%% fine-grain reuse potential)\n",
         label, n, d->n_distinct, n * WSISA_SEG_LEVELS, d->n_distinct * WSISA_SEG_LEVELS, lower,
         100 * (1 - (double)lower / (double)(d->n_distinct * WSISA_SEG_LEVELS)));
  printf("  %-6s %-6s %9s %8s %8s %8s %6s %8s %6s %10s\n", "algo", "limit", "tasks", "reuse",
         "fine", "buckets", "max", "imbal", "peak1", "time[ms]");
  size_t n_distinct = d->n_distinct;
  wsisa_reuse_design_free(d);
  wsisa_reuse_opts base = {.max_bucket_size = opt->max_bucket_size, .max_buckets = opt->max_buckets};
  const wsisa_reuse_strategy order[] = {WSISA_REUSE_STAGE, WSISA_REUSE_NAIVE, WSISA_REUSE_SCA,
                                        WSISA_REUSE_RTMA, WSISA_REUSE_TRTMA};
  for (size_t i = 0; i < sizeof order / sizeof *order && !rc; i++) {
    wsisa_reuse_opts ro = base;
    ro.strategy = order[i];
    if (ro.strategy == WSISA_REUSE_SCA && n_distinct > opt->sca_limit) {
      printf("  %-6s skipped: %zu distinct instances (> --sca-limit %zu)\n", "sca", n_distinct,
             opt->sca_limit);
      continue;
    }
    rc = measure(label, keys, n, opt, ro);
  }
done:
  free(keys);
  return rc;
}

/* The design of `opts` over `space`, then every strategy on it. */
static int bench_sa_design(const char *label, const wsisa_sa_space *space,
                           const wsisa_sa_opts *opts, const options *opt, wsisa_err *e) {
  wsisa_sa_design *sd = NULL;
  int rc = wsisa_sa_design_make(space, opts, &sd, e);
  if (!rc) rc = bench_design(label, space, sd, opt);
  wsisa_sa_design_free(sd);
  return rc;
}

static int bench_all(size_t moat_r, size_t vbd_n, uint64_t seed, const options *opt,
                     wsisa_err *e) {
  wsisa_sa_space *space = NULL, *vbd_space = NULL;
  wsisa_sa_opts o;
  char label[64];
  int rc = wsisa_sa_space_segmentation(&space, e);
  if (!rc) {
    wsisa_sa_opts_default(&o, WSISA_SA_MOAT);
    o.trajectories = moat_r;
    o.seed = seed;
    snprintf(label, sizeof label, "MOAT %s (15 parameters, %u levels)",
             wsisa_sa_sampler_name(o.sampler), o.levels);
    rc = bench_sa_design(label, space, &o, opt, e);
  }
  if (!rc) rc = wsisa_sa_space_select(space, vbd_params, VBD_D, &vbd_space, e);
  for (size_t s = 0; s < NSAMPLERS && !rc; s++) {
    wsisa_sa_opts_default(&o, WSISA_SA_VBD);
    o.sampler = vbd_samplers[s];
    o.samples = vbd_n;
    o.seed = seed + 1 + s;
    snprintf(label, sizeof label, "VBD %s (%zu parameters)", wsisa_sa_sampler_name(o.sampler),
             VBD_D);
    rc = bench_sa_design(label, vbd_space, &o, opt, e);
  }
  wsisa_sa_space_free(vbd_space);
  wsisa_sa_space_free(space);
  return rc;
}

int main(int argc, char **argv) {
  options opt = {.runs = 5, .max_bucket_size = 7, .max_buckets = 48,
                 .sca_limit = WSISA_PLAN_SCA_LIMIT};
  size_t moat_r = 40, vbd_n = 1000;
  uint64_t seed = 1;
  static const struct option longopts[] = {
      {"runs", required_argument, NULL, 'r'},        {"max-bucket-size", required_argument, NULL, 'm'},
      {"max-buckets", required_argument, NULL, 'b'}, {"trajectories", required_argument, NULL, 't'},
      {"vbd-samples", required_argument, NULL, 'v'}, {"sca-limit", required_argument, NULL, 's'},
      {"seed", required_argument, NULL, 'S'},        {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
    char *end = NULL;
    unsigned long long value = optarg ? strtoull(optarg, &end, 10) : 0;
    if (optarg && (*end || value == 0)) {
      fprintf(stderr, "wsisa-bench-reuse: %s: not a positive integer: %s\n", argv[optind - 1], optarg);
      return 2;
    }
    switch (c) {
    case 'r': opt.runs = value > 64 ? 64 : (int)value; break;
    case 'm': opt.max_bucket_size = (size_t)value; break;
    case 'b': opt.max_buckets = (size_t)value; break;
    case 't': moat_r = (size_t)value; break;
    case 'v': vbd_n = (size_t)value; break;
    case 's': opt.sca_limit = (size_t)value; break;
    case 'S': seed = value; break;
    case 'h':
      printf("usage: wsisa-bench-reuse [--runs R] [--max-bucket-size M] [--max-buckets B]\n"
             "         [--trajectories T] [--vbd-samples N] [--sca-limit S] [--seed X]\n"
             "MOAT (Halton, as a study's default) with T trajectories (n = 16T, default 640)\n"
             "and VBD on 8 parameters (n = 10N, default 10000) with MC, LHS and Halton, the\n"
             "others at their defaults; designs, parameter ranges and task keys as wsisa\n"
             "plan makes them; median of R runs.\n");
      return 0;
    default:
      fprintf(stderr, "wsisa-bench-reuse: %s: unknown flag\n", argv[optind - 1]);
      return 2;
    }
  }
  printf("reuse analysis benchmark: k = %d levels, M = max bucket size (naive, sca, rtma), "
         "B = max buckets (trtma); reuse vs no reuse, fine = vs stage-level; max = largest bucket "
         "in tasks; imbal = max/mean - 1; peak1 = peak live intermediates, 1 active path; "
         "time = median of %d runs of stage-level + reuse tree + merge\n",
         WSISA_SEG_LEVELS, opt.runs);
  wsisa_err e = WSISA_ERR_INIT;
  int rc = bench_all(moat_r, vbd_n, seed, &opt, &e);
  if (rc && e.msg[0]) fprintf(stderr, "wsisa-bench-reuse: %s\n", e.msg);
  return wsisa_exit_code(rc);
}
