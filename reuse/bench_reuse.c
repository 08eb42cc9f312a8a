/* wsisa-bench-reuse: analysis time (median of several runs) and reuse of every
 * merging strategy on MOAT and VBD designs of the segmentation's parameter
 * space (docs/workflow.md), generated here by a small local sampler. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reuse/reuse.h"

/* ---- the segmentation's parameter space ------------------------------------ */

typedef enum { STEPPED, INTEGER, CONNECTIVITY } kind;

typedef struct param {
  const char *name;
  size_t level; /* task level, 0-based */
  kind kind;
  double lo, hi, step, fallback; /* fallback: the default value */
} param;

/* Canonical order (docs/workflow.md); levels as the segmentation's tasks use them. */
static const param space[15] = {
    {"B", 0, STEPPED, 210, 240, 10, 220},
    {"G", 0, STEPPED, 210, 240, 10, 220},
    {"R", 0, STEPPED, 210, 240, 10, 220},
    {"T1", 0, STEPPED, 2.5, 7.5, 0.5, 5.0},
    {"T2", 0, STEPPED, 2.5, 7.5, 0.5, 4.0},
    {"G1", 2, STEPPED, 5, 80, 5, 80},
    {"G2", 4, STEPPED, 2, 40, 2, 45},
    {"min_size", 3, STEPPED, 2, 40, 2, 11},
    {"max_size", 3, INTEGER, 900, 1500, 1, 1000},
    {"min_size_pl", 5, STEPPED, 5, 80, 5, 30},
    {"min_size_seg", 6, STEPPED, 2, 40, 2, 21},
    {"max_size_seg", 6, INTEGER, 900, 1500, 1, 1000},
    {"fill_holes_conn", 2, CONNECTIVITY, 4, 8, 4, 4},
    {"recon_conn", 1, CONNECTIVITY, 4, 8, 4, 8},
    {"watershed_conn", 5, CONNECTIVITY, 4, 8, 4, 8},
};
#define NPARAMS 15
#define NLEVELS 7

/* The eight parameters seed 000 Table 3 keeps for VBD after MOAT. */
static const size_t vbd_params[8] = {4, 5, 6, 7, 8, 9, 13, 14};
#define VBD_D 8

/* A unit-interval coordinate to a parameter value: equal-width bins over the
 * allowed values, so grids and samples both land on real values. */
static double value_of(const param *p, double u) {
  double count = p->kind == CONNECTIVITY ? 2 : floor((p->hi - p->lo) / p->step + 0.5) + 1;
  double bin = floor(u * count);
  if (bin > count - 1) bin = count - 1;
  if (bin < 0) bin = 0;
  return p->lo + bin * p->step;
}

/* ---- local samplers ---------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double next_unit(void) { return (double)(next_u64() >> 11) * 0x1.0p-53; }

static size_t next_below(size_t n) { return (size_t)(next_unit() * (double)n); }

typedef enum { MC, LHS, HALTON } sampler;
static const char *sampler_name[] = {"MC", "LHS", "Halton"};

/* Radical inverse of i in a prime base (Halton). */
static double radical_inverse(size_t i, unsigned base) {
  double inv = 1.0 / base, f = inv, x = 0;
  for (; i > 0; i /= base, f *= inv) x += f * (double)(i % base);
  return x;
}

/* n points in [0,1)^dims, row-major. */
static void unit_sample(sampler s, size_t n, size_t dims, double *out) {
  static const unsigned primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
  if (s == MC) {
    for (size_t i = 0; i < n * dims; i++) out[i] = next_unit();
  } else if (s == HALTON) {
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < dims; j++) out[i * dims + j] = radical_inverse(i + 1, primes[j]);
  } else {
    size_t *perm = malloc(n * sizeof *perm);
    for (size_t j = 0; j < dims; j++) {
      for (size_t i = 0; i < n; i++) perm[i] = i;
      for (size_t i = n; i > 1; i--) {
        size_t r = next_below(i), t = perm[i - 1];
        perm[i - 1] = perm[r];
        perm[r] = t;
      }
      for (size_t i = 0; i < n; i++) out[i * dims + j] = ((double)perm[i] + next_unit()) / (double)n;
    }
    free(perm);
  }
}

static void defaults(double *row) {
  for (size_t p = 0; p < NPARAMS; p++) row[p] = space[p].fallback;
}

/* MOAT (Morris 1991): r trajectories of d+1 points on a 4-level grid, each
 * step moving one parameter, in random order, by Δ = 2/3. */
static double *moat_design(size_t r, size_t *n_out) {
  const double delta = 2.0 / 3.0;
  size_t n = r * (NPARAMS + 1);
  double *v = malloc(n * NPARAMS * sizeof *v), x[NPARAMS], dir[NPARAMS];
  size_t order[NPARAMS], row = 0;
  for (size_t t = 0; t < r; t++) {
    for (size_t p = 0; p < NPARAMS; p++) {
      double base = next_below(2) / 3.0;
      dir[p] = next_below(2) ? 1 : -1;
      x[p] = dir[p] > 0 ? base : base + delta;
      order[p] = p;
    }
    for (size_t i = NPARAMS; i > 1; i--) {
      size_t j = next_below(i), tmp = order[i - 1];
      order[i - 1] = order[j];
      order[j] = tmp;
    }
    for (size_t step = 0; step <= NPARAMS; step++) {
      if (step > 0) x[order[step - 1]] += dir[order[step - 1]] * delta;
      for (size_t p = 0; p < NPARAMS; p++) v[row * NPARAMS + p] = value_of(&space[p], x[p]);
      row++;
    }
  }
  *n_out = n;
  return v;
}

/* VBD (Saltelli): base matrices A and B from one 2d-dimensional sample, and
 * for each point A, B and the d matrices AB_i (A with column i from B): n =
 * N(d+2). Parameters outside the eight keep their defaults. */
static double *vbd_design(sampler s, size_t base_n, size_t *n_out) {
  size_t n = base_n * (VBD_D + 2), row = 0;
  double *u = malloc(base_n * 2 * VBD_D * sizeof *u), *v = malloc(n * NPARAMS * sizeof *v);
  unit_sample(s, base_n, 2 * VBD_D, u);
  for (size_t j = 0; j < base_n; j++) {
    const double *a = u + j * 2 * VBD_D, *b = a + VBD_D;
    for (size_t m = 0; m < VBD_D + 2; m++) {
      double *out = v + row++ * NPARAMS;
      defaults(out);
      for (size_t i = 0; i < VBD_D; i++) {
        double c = m == 1 || (m >= 2 && m - 2 == i) ? b[i] : a[i];
        out[vbd_params[i]] = value_of(&space[vbd_params[i]], c);
      }
    }
  }
  free(u);
  *n_out = n;
  return v;
}

/* ---- measurement ------------------------------------------------------------- */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
    double t0 = now();
    int rc = wsisa_reuse_design_new(keys, n, NLEVELS, &d);
    if (!rc) rc = wsisa_reuse_merge(d, &ro, &b);
    times[r] = now() - t0;
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
  double none = (double)(n * NLEVELS), stage = (double)(d->n_distinct * NLEVELS);
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

static int bench_design(const char *label, const double *values, size_t n, const options *opt) {
  static const size_t level_of[NPARAMS] = {0, 0, 0, 0, 0, 2, 4, 3, 3, 5, 6, 6, 2, 1, 5};
  uint64_t *keys = malloc(n * NLEVELS * sizeof *keys);
  wsisa_reuse_design *d = NULL;
  int rc = wsisa_reuse_keys_from_values(values, n, NPARAMS, level_of, NLEVELS, keys);
  if (!rc) rc = wsisa_reuse_design_new(keys, n, NLEVELS, &d);
  if (rc) goto done;
  size_t lower = wsisa_reuse_tree_tasks(d->tree);
  printf("\n%s: n = %zu runs, %zu distinct stage instances; tasks: no reuse %zu, stage-level %zu, "
         "lower bound %zu (%.2f%% fine-grain reuse potential)\n",
         label, n, d->n_distinct, n * NLEVELS, d->n_distinct * NLEVELS, lower,
         100 * (1 - (double)lower / (double)(d->n_distinct * NLEVELS)));
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

int main(int argc, char **argv) {
  options opt = {.runs = 5, .max_bucket_size = 7, .max_buckets = 48, .sca_limit = 2000};
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
             "MOAT with T trajectories (n = 16T, default 640) and VBD on 8 parameters\n"
             "(n = 10N, default 10000) with MC, LHS and Halton; median of R runs.\n");
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
         NLEVELS, opt.runs);
  rng_state = seed;
  size_t n;
  double *v = moat_design(moat_r, &n);
  char label[64];
  snprintf(label, sizeof label, "MOAT (15 parameters, 4 levels)");
  int rc = bench_design(label, v, n, &opt);
  free(v);
  for (int s = MC; s <= HALTON && !rc; s++) {
    rng_state = seed + 1 + (uint64_t)s;
    v = vbd_design((sampler)s, vbd_n, &n);
    snprintf(label, sizeof label, "VBD %s (8 parameters)", sampler_name[s]);
    rc = bench_design(label, v, n, &opt);
    free(v);
  }
  return rc ? 1 : 0;
}
