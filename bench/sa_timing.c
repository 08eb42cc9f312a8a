/* wsisa-bench-sa: time designs of 100,000 runs over the 15 segmentation
 * parameters, and their analyses; prints the median of several repetitions.
 * Usage: wsisa-bench-sa [repetitions (default 7)] [runs (default 100000)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa/sa.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* A model with main effects of every size and one interaction. */
static double *model(const wsisa_sa_design *d) {
  double *y = malloc(d->nrows * sizeof *y);
  for (size_t r = 0; y && r < d->nrows; r++) {
    const double *u = d->unit + r * d->ndims;
    double s = u[0] * u[1];
    for (size_t i = 0; i < d->ndims; i++) s += u[i] / (double)(i + 1);
    y[r] = s;
  }
  return y;
}

typedef struct job {
  const char *label;
  wsisa_sa_method method;
  wsisa_sa_sampler sampler;
  int analyze;     /* 0: time the design; 1: time the analysis */
  size_t bootstrap;
} job;

static int run(const job *j, const wsisa_sa_space *space, size_t runs, int reps, double *out,
               size_t *nrows) {
  size_t k = wsisa_sa_space_dims(space);
  wsisa_sa_opts o;
  wsisa_sa_opts_default(&o, j->method);
  o.sampler = j->sampler;
  o.trajectories = runs / (k + 1);
  o.samples = j->method == WSISA_SA_VBD ? runs / (k + 2) : runs;
  o.bootstrap = j->bootstrap;
  double *t = calloc((size_t)reps, sizeof *t);
  wsisa_err e = WSISA_ERR_INIT;
  for (int rep = 0; t && rep < reps; rep++) {
    wsisa_sa_design *d = NULL;
    double start = now();
    if (wsisa_sa_design_make(space, &o, &d, &e)) break;
    t[rep] = now() - start;
    *nrows = d->nrows;
    if (j->analyze) {
      double *y = model(d), *x = malloc(d->nrows * k * sizeof *x);
      for (size_t r = 0; x && r < d->nrows; r++)
        for (size_t i = 0; i < k; i++) x[r * k + i] = d->values[r * d->nparams + d->dims[i]];
      start = now();
      int rc = 0;
      if (j->method == WSISA_SA_MOAT) {
        wsisa_sa_moat_result m;
        rc = wsisa_sa_moat_analyze(space, d, y, &m, &e);
        wsisa_sa_moat_result_free(&m);
      } else if (j->method == WSISA_SA_VBD) {
        wsisa_sa_vbd_opts vo = {o.bootstrap, o.confidence, o.seed, 0};
        wsisa_sa_vbd_result v;
        rc = wsisa_sa_vbd_analyze(y, d->groups, k, 0, &vo, &v, NULL, &e);
        wsisa_sa_vbd_result_free(&v);
      } else {
        wsisa_sa_corr_result c;
        rc = wsisa_sa_correlation(x, d->nrows, k, y, &c, &e);
        wsisa_sa_corr_result_free(&c);
      }
      t[rep] = now() - start;
      free(y);
      free(x);
      if (rc) break;
    }
    wsisa_sa_design_free(d);
  }
  if (e.code) {
    fprintf(stderr, "%s: %s\n", j->label, e.msg);
    free(t);
    return 1;
  }
  *out = median(t, reps);
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  size_t runs = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 100000;
  if (reps < 1 || runs < 100) {
    fprintf(stderr, "usage: wsisa-bench-sa [repetitions >= 1] [runs >= 100]\n");
    return 2;
  }
  wsisa_sa_space *space = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  if (wsisa_sa_space_segmentation(&space, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  static const job jobs[] = {
      {"design correlation / mc", WSISA_SA_CORRELATION, WSISA_SA_MC, 0, 0},
      {"design correlation / lhs", WSISA_SA_CORRELATION, WSISA_SA_LHS, 0, 0},
      {"design correlation / halton", WSISA_SA_CORRELATION, WSISA_SA_HALTON, 0, 0},
      {"design correlation / hammersley", WSISA_SA_CORRELATION, WSISA_SA_HAMMERSLEY, 0, 0},
      {"design correlation / sobol", WSISA_SA_CORRELATION, WSISA_SA_SOBOL, 0, 0},
      {"design moat / halton", WSISA_SA_MOAT, WSISA_SA_HALTON, 0, 0},
      {"design vbd / sobol", WSISA_SA_VBD, WSISA_SA_SOBOL, 0, 0},
      {"analyze moat", WSISA_SA_MOAT, WSISA_SA_HALTON, 1, 0},
      {"analyze vbd, no bootstrap", WSISA_SA_VBD, WSISA_SA_SOBOL, 1, 0},
      {"analyze vbd, 1000 resamples", WSISA_SA_VBD, WSISA_SA_SOBOL, 1, 1000},
      {"analyze correlation (4 measures)", WSISA_SA_CORRELATION, WSISA_SA_LHS, 1, 0},
  };
  printf("%zu runs x %zu parameters, median of %d\n", runs, space->nparams, reps);
  printf("%-34s %10s %10s\n", "step", "runs", "seconds");
  int status = 0;
  for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
    double t = 0;
    size_t n = 0;
    if (run(&jobs[i], space, runs, reps, &t, &n)) {
      status = 1;
      continue;
    }
    printf("%-34s %10zu %10.4f\n", jobs[i].label, n, t);
  }
  wsisa_sa_space_free(space);
  return status;
}
