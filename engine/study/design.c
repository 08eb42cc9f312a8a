/* A study's design as `wsisa run` and `wsisa plan` take it: the study's own
 * sampler's, or a design CSV (--samples), as rows of parameter values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study.h"
#include "io/csv.h"

/* Parameter values of a design CSV, in the order of the study's space: every
 * column must be a parameter; a missing column is allowed for a fixed one. */
static int read_samples(const char *path, const wsisa_study *study, double **values,
                        size_t *nrows, wsisa_err *e) {
  const wsisa_sa_space *sp = study->space;
  wsisa_csv *s = NULL;
  long *col = calloc(sp->nparams, sizeof *col);
  double *v = NULL;
  int rc = col ? wsisa_csv_read(path, &s, e) : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (rc) goto done;
  for (size_t c = 1; c < s->ncols && !rc; c++)
    if (wsisa_sa_space_find(sp, s->header[c]) < 0)
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: column '%s' is not a parameter of %s", s->path,
                       s->header_line, s->header[c], study->path);
  for (size_t p = 0; p < sp->nparams && !rc; p++)
    if ((col[p] = wsisa_csv_column(s, sp->params[p].name)) < 0 &&
        sp->params[p].kind != WSISA_SA_FIXED)
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: no column '%s' (a varying parameter of %s)",
                       s->path, s->header_line, sp->params[p].name, study->path);
  if (!rc && s->nrows == 0) rc = wsisa_error(e, WSISA_EFORMAT, "%s: no runs", s->path);
  if (!rc && !(v = malloc(s->nrows * sp->nparams * sizeof *v)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t r = 0; !rc && r < s->nrows; r++)
    for (size_t p = 0; p < sp->nparams && !rc; p++) {
      double *x = &v[r * sp->nparams + p];
      if (col[p] < 0) {
        *x = sp->params[p].value;
        continue;
      }
      wsisa_err why = WSISA_ERR_INIT;
      if ((rc = wsisa_csv_number(s, r, (size_t)col[p], x, e))) break;
      if (isnan(*x))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s has no value", s->path, s->lines[r],
                         sp->params[p].name);
      else if (wsisa_sa_seg_validate(sp->params[p].name, *x, &why))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s", s->path, s->lines[r], why.msg);
    }
  if (!rc) {
    *values = v;
    *nrows = s->nrows;
    v = NULL;
  }
done:
  free(v);
  free(col);
  wsisa_csv_free(s);
  return rc;
}

/* The runs' parameter values: the CSV's, or the study's own design. */
int wsisa__study_design_values(const wsisa_study *study, const char *samples, const char *select,
                               double **values, size_t *nrows, char *source, size_t cap,
                               wsisa_err *e) {
  if (samples) {
    snprintf(source, cap, "%s", samples);
    return read_samples(samples, study, values, nrows, e);
  }
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
                             double **rows, size_t *nruns, wsisa_err *e) {
  char source[512];
  double *values = NULL;
  int rc = wsisa__study_design_values(study, samples, select, &values, nruns, source,
                                      sizeof source, e);
  if (!rc) rc = wsisa__study_canonical_rows(study, values, *nruns, rows, e);
  free(values);
  return rc;
}

/* ---- wsisa run's design ---------------------------------------------------------- */

/* A design made elsewhere (wsisa sample, another SA tool): one row per run,
 * run_id first, segmentation parameters by their canonical names; the
 * parameters it does not name keep their defaults. */
static int design_from_csv(wsisa__study_run *s, const char *path, size_t max_runs,
                           wsisa_err *e) {
  wsisa_csv *c = NULL;
  int rc = wsisa_csv_read(path, &c, e);
  if (rc) return rc;
  if (max_runs && c->nrows > max_runs) {
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: %zu runs, more than %zu (--force goes on if the "
                     "machine can hold them)", path, c->nrows, max_runs);
    wsisa_csv_free(c);
    return rc;
  }
  long col_of[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) col_of[p] = wsisa_csv_column(c, wsisa_seg_param_name(p));
  for (size_t k = 1; k < c->ncols && !rc; k++)
    if (!wsisa_sa_seg_find(c->header[k]))
      rc = wsisa_error(e, WSISA_EUSAGE, "%s: column %s: not a segmentation parameter", path,
                       c->header[k]);
  if (!rc && c->nrows == 0) rc = wsisa_error(e, WSISA_EUSAGE, "%s: no runs", path);
  uint64_t *ids = rc ? NULL : malloc(c->nrows * sizeof *ids);
  if (!rc && !ids) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) rc = wsisa_csv_run_ids(c, ids, e);
  if (!rc) {
    s->nruns = c->nrows;
    s->run_ids = ids;
    ids = NULL;
    s->params = malloc(s->nruns * WSISA_SEG_NPARAMS * sizeof *s->params);
    if (!s->params) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (size_t r = 0; !rc && r < s->nruns; r++)
    for (int p = 0; !rc && p < WSISA_SEG_NPARAMS; p++) {
      double v = wsisa_seg_defaults()[p];
      if (col_of[p] >= 0 && !(rc = wsisa_csv_number(c, r, (size_t)col_of[p], &v, e)) &&
          (rc = wsisa_sa_seg_validate(wsisa_seg_param_name(p), v, NULL)))
        rc = wsisa_error(e, WSISA_EUSAGE, "%s:%zu: %s=%g is outside the valid range", path,
                         c->lines[r], wsisa_seg_param_name(p), v);
      s->params[r * WSISA_SEG_NPARAMS + p] = v;
    }
  free(ids);
  wsisa_csv_free(c);
  return rc;
}

int wsisa__study_design_make(wsisa__study_run *s, const char *samples, size_t max_runs,
                             wsisa_err *e) {
  if (samples) {
    s->from_csv = 1;
    return design_from_csv(s, samples, max_runs, e);
  }
  int rc = wsisa_study_design(s->study, NULL, &s->space, &s->sa, &s->design, e);
  if (rc) return rc;
  s->nruns = s->design->nrows;
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
