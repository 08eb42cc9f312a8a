/* A study's design as `wsisa run` and `wsisa plan` take it: the study's own
 * sampler's, or a design CSV (--samples), as rows of parameter values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study.h"
#include "io/csv.h"

/* The one reader of a design CSV, for `wsisa run` and `wsisa plan` alike (and
 * calibration): one row per run, run_id first, then segmentation parameters
 * by their canonical names, in any order. A parameter without a column keeps
 * the study's value for it (its `default`, or its fixed value), or the
 * segmentation default when the study does not list it: a design over some
 * of the parameters, as `wsisa sample --select` writes for phase 2, runs
 * with the others where the study puts them. Any fault of the file is
 * WSISA_EFORMAT, with the line; only more runs than max_runs (0: no limit)
 * is WSISA_EUSAGE, as --force lifts it. Rows of the 15 parameters in
 * canonical order, and the run ids. */
static int read_samples(const char *path, const wsisa_study *study, size_t max_runs,
                        double **rows, uint64_t **run_ids, size_t *nrows, wsisa_err *e) {
  wsisa_csv *c = NULL;
  int rc = wsisa_csv_read(path, &c, e);
  if (rc) return rc;
  long col_of[WSISA_SEG_NPARAMS];
  double fill[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    const char *name = wsisa_seg_param_name(p);
    long q = wsisa_sa_space_find(study->space, name);
    col_of[p] = wsisa_csv_column(c, name);
    fill[p] = q >= 0 ? study->space->params[q].value : wsisa_seg_defaults()[p];
  }
  for (size_t k = 1; k < c->ncols && !rc; k++)
    if (!wsisa_sa_seg_find(c->header[k]))
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: column '%s' is not a segmentation parameter",
                       c->path, c->header_line, c->header[k]);
  if (!rc && c->nrows == 0) rc = wsisa_error(e, WSISA_EFORMAT, "%s: no runs", c->path);
  if (!rc && max_runs && c->nrows > max_runs)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: %zu runs, more than %zu (--force goes on if the "
                     "machine can hold them)", c->path, c->nrows, max_runs);
  uint64_t *ids = rc ? NULL : malloc(c->nrows * sizeof *ids);
  double *v = rc ? NULL : malloc(c->nrows * WSISA_SEG_NPARAMS * sizeof *v);
  if (!rc && (!ids || !v)) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) rc = wsisa_csv_run_ids(c, ids, e);
  for (size_t r = 0; !rc && r < c->nrows; r++)
    for (int p = 0; p < WSISA_SEG_NPARAMS && !rc; p++) {
      double *x = &v[r * WSISA_SEG_NPARAMS + p];
      *x = fill[p];
      if (col_of[p] < 0) continue;
      wsisa_err why = WSISA_ERR_INIT;
      if ((rc = wsisa_csv_number(c, r, (size_t)col_of[p], x, e))) break;
      if (isnan(*x))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s has no value", c->path, c->lines[r],
                         wsisa_seg_param_name(p));
      else if (wsisa_sa_seg_validate(wsisa_seg_param_name(p), *x, &why))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s", c->path, c->lines[r], why.msg);
    }
  if (!rc) {
    *rows = v;
    *run_ids = ids;
    *nrows = c->nrows;
    v = NULL;
    ids = NULL;
  }
  free(v);
  free(ids);
  wsisa_csv_free(c);
  return rc;
}

/* The parameter values of the study's own design, in the study's order. */
static int study_values(const wsisa_study *study, const char *select, double **values,
                        size_t *nrows, char *source, size_t cap, wsisa_err *e) {
  wsisa_sa_space *space = NULL;
  wsisa_sa_design *d = NULL;
  wsisa_sa_opts opts;
  int rc = wsisa_study_design(study, select, &space, &opts, &d, e);
  /* The design's columns follow the space it was made over, which keeps the
   * study's parameter order; map by name all the same. */
  size_t np = study->space->nparams;
  double *v = rc ? NULL : malloc(d->nrows * np * sizeof *v);
  if (!rc && !v) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t p = 0; !rc && p < np; p++) {
    long q = wsisa_sa_space_find(space, study->space->params[p].name);
    for (size_t r = 0; r < d->nrows; r++)
      v[r * np + p] = q >= 0 ? d->values[r * d->nparams + (size_t)q] : study->space->params[p].value;
  }
  if (!rc) {
    *values = v;
    *nrows = d->nrows;
    snprintf(source, cap, "the study's %s design (%s, seed %llu)", wsisa_sa_method_name(d->method),
             wsisa_sa_sampler_name(opts.sampler), (unsigned long long)opts.seed);
  } else {
    free(v);
  }
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(space);
  return rc;
}

/* Rows of the 15 segmentation parameters in canonical order from values in
 * the study's parameter order (every parameter of a segmentation study is
 * one of the 15 by name); those it does not list keep their defaults. */
int wsisa__study_canonical_rows(const wsisa_study *study, const double *values, size_t n,
                                double **out, wsisa_err *e) {
  size_t np = study->space->nparams;
  double *rows = malloc(n * WSISA_SEG_NPARAMS * sizeof *rows);
  if (!rows) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    long col = wsisa_sa_space_find(study->space, wsisa_seg_param_name(p));
    for (size_t r = 0; r < n; r++)
      rows[r * WSISA_SEG_NPARAMS + p] =
          col < 0 || (size_t)col >= np ? wsisa_seg_defaults()[p] : values[r * np + (size_t)col];
  }
  *out = rows;
  return 0;
}

int wsisa__study_design_rows(const wsisa_study *study, const char *samples, const char *select,
                             double **rows, size_t *nruns, char *source, size_t cap,
                             wsisa_err *e) {
  if (samples) {
    snprintf(source, cap, "%s", samples);
    uint64_t *ids = NULL;
    int rc = read_samples(samples, study, 0, rows, &ids, nruns, e);
    free(ids);
    return rc;
  }
  double *values = NULL;
  int rc = study_values(study, select, &values, nruns, source, cap, e);
  if (!rc) rc = wsisa__study_canonical_rows(study, values, *nruns, rows, e);
  free(values);
  return rc;
}

/* ---- wsisa run's design ---------------------------------------------------------- */

int wsisa__study_design_make(wsisa__study_run *s, const char *samples, size_t max_runs,
                             wsisa_err *e) {
  if (samples) {
    s->from_csv = 1;
    int rc = read_samples(samples, s->study, max_runs, &s->params, &s->run_ids, &s->nruns, e);
    s->ndesign = s->nruns;
    return rc;
  }
  int rc = wsisa_study_design(s->study, NULL, &s->space, &s->sa, &s->design, e);
  if (rc) return rc;
  s->ndesign = s->nruns = s->design->nrows;
  s->params = malloc(s->nruns * WSISA_SEG_NPARAMS * sizeof *s->params);
  if (!s->params) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    long col = wsisa_sa_space_find(s->space, wsisa_seg_param_name(p));
    for (size_t r = 0; r < s->nruns; r++)
      s->params[r * WSISA_SEG_NPARAMS + p] =
          col < 0 ? wsisa_seg_defaults()[p]
                  : s->design->values[r * s->design->nparams + (size_t)col];
  }
  return 0;
}

int wsisa__study_defaults(wsisa__study_run *s, wsisa_err *e) {
  s->defaults_run = -1;
  if (!s->annotated) return 0;
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
