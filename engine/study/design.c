/* A study's design as `wsisa run` and `wsisa plan` take it: the study's own
 * sampler's, or a design file (--samples), as rows of parameter values; and
 * the one reader of design files, which `wsisa analyze` uses too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study_internal.h"
#include "io/csv.h"

/* ---- design files: the one reader ------------------------------------------------- */

int wsisa__design_id_column(const wsisa_csv *t) {
  const char *name = t->header[0];
  return t->has_header && (!name[0] || !strcmp(name, "run_id") || !strcmp(name, "id") ||
                           !strcmp(name, "index"));
}

void wsisa__design_file_free(wsisa__design_file *f) {
  wsisa_csv_free(f->table);
  free(f->values);
  free(f->ids);
  memset(f, 0, sizeof *f);
}

/* Where each parameter's values are in the table: a column, or -1 (its fill). */
static int map_columns(const wsisa_csv *t, const wsisa__design_columns *cols, FILE *warn,
                       long *col, wsisa_err *e) {
  if (!t->has_header) {
    size_t nplain = 0, c = 0;
    char names[512] = "";
    for (size_t i = 0; i < cols->n; i++)
      if (cols->plain[i] && strlen(names) + strlen(cols->names[i]) < 400)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", nplain++ ? ", " : "",
                 cols->names[i]);
    if (t->ncols != nplain)
      return wsisa_error(e, WSISA_EFORMAT,
                         "%s:%zu: %zu column%s and no header, but a file without one holds the "
                         "%zu parameters of %s in order (%s)",
                         t->path, t->lines[0], t->ncols, t->ncols == 1 ? "" : "s", nplain,
                         cols->owner, names);
    for (size_t i = 0; i < cols->n; i++) col[i] = cols->plain[i] ? (long)c++ : -1;
    return 0;
  }
  size_t first = wsisa__design_id_column(t) ? 1 : 0;
  int strict = first && !strcmp(t->header[0], "run_id");
  char extra[512] = "";
  size_t nextra = 0;
  for (size_t c = first; c < t->ncols; c++) {
    size_t i = 0;
    while (i < cols->n && strcmp(t->header[c], cols->names[i])) i++;
    if (i < cols->n) continue;
    if (strict)
      return wsisa_error(e, WSISA_EFORMAT,
                         "%s:%zu: column '%s' is no parameter of %s (after run_id, every column "
                         "of a design is a parameter)",
                         t->path, t->header_line, t->header[c], cols->owner);
    if (strlen(extra) + strlen(t->header[c]) < 400)
      snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s'%s'", nextra ? ", " : "",
               t->header[c]);
    nextra++;
  }
  for (size_t i = 0; i < cols->n; i++)
    if ((col[i] = wsisa_csv_column(t, cols->names[i])) < 0 && isnan(cols->fill[i]))
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: no column '%s' (a parameter of %s)", t->path,
                         t->header_line, cols->names[i], cols->owner);
  if (nextra && warn)
    fprintf(warn, "warning: %s: column%s %s %s no parameter of %s; ignored\n", t->path,
            nextra == 1 ? "" : "s", extra, nextra == 1 ? "is" : "are", cols->owner);
  return 0;
}

int wsisa__design_read(const char *path, const wsisa__design_columns *cols, FILE *warn,
                       wsisa__design_file *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  wsisa_csv *t = NULL;
  long *col = calloc(cols->n + 1, sizeof *col);
  int rc = col ? wsisa_csv_read_table(path, NULL, &t, e)
               : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) rc = map_columns(t, cols, warn, col, e);
  if (!rc && t->nrows == 0) rc = wsisa_error(e, WSISA_EFORMAT, "%s: no runs", path);
  if (!rc && (!(out->ids = calloc(t->nrows + 1, sizeof *out->ids)) ||
              !(out->values = malloc(t->nrows * cols->n * sizeof *out->values + 1))))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  out->has_ids = !rc && wsisa__design_id_column(t);
  if (!rc && out->has_ids) rc = wsisa_csv_run_ids(t, out->ids, e);
  for (size_t r = 0; !rc && !out->has_ids && r < t->nrows; r++) out->ids[r] = r;
  for (size_t r = 0; !rc && r < t->nrows; r++)
    for (size_t i = 0; !rc && i < cols->n; i++) {
      double *v = &out->values[r * cols->n + i];
      *v = cols->fill[i];
      if (col[i] < 0) continue;
      rc = wsisa_csv_number(t, r, (size_t)col[i], v, e);
      if (!rc && isnan(*v))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s has no value", path, t->lines[r],
                         cols->names[i]);
    }
  free(col);
  out->table = t;
  if (rc) wsisa__design_file_free(out);
  return rc;
}

/* ---- a segmentation study's design files: one set of rules ----------------------- */

int wsisa__design_read_seg(const char *path, const wsisa_sa_space *sp, FILE *warn,
                           wsisa__design_file *f, int seg[WSISA_SEG_NPARAMS], wsisa_err *e) {
  const char *names[WSISA_SEG_NPARAMS];
  double fill[WSISA_SEG_NPARAMS];
  unsigned char plain[WSISA_SEG_NPARAMS];
  size_t n = 0;
  memset(f, 0, sizeof *f);
  for (size_t q = 0; q < sp->nparams; q++) {
    const wsisa_sa_seg_param *s = wsisa_sa_seg_find(sp->params[q].name);
    if (!s || n != q)
      return wsisa_error(e, WSISA_EINTERNAL, "%s: not a segmentation parameter",
                         sp->params[q].name);
    seg[n] = (int)(s - wsisa_sa_seg_params);
    names[n] = s->name;
    /* without its column, the study's value (a one-run design of G1 alone) */
    fill[n] = sp->params[q].value;
    plain[n++] = sp->params[q].kind != WSISA_SA_FIXED;
  }
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    if (wsisa_sa_space_find(sp, wsisa_seg_param_name(p)) < 0) {
      seg[n] = p;
      names[n] = wsisa_seg_param_name(p);
      fill[n] = wsisa_seg_defaults()[p];
      plain[n++] = 0;
    }
  wsisa__design_columns cols = {n, names, fill, plain, "the segmentation"};
  int rc = wsisa__design_read(path, &cols, warn, f, e);
  const wsisa_csv *t = f->table;
  for (size_t r = 0; !rc && r < t->nrows; r++)
    for (size_t i = 0; i < n && !rc; i++) {
      wsisa_err why = WSISA_ERR_INIT;
      if (wsisa_sa_seg_validate(names[i], f->values[r * n + i], &why))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s", path, t->lines[r], why.msg);
    }
  if (rc) wsisa__design_file_free(f);
  return rc;
}

/* ---- the design `wsisa run` and `wsisa plan` take -------------------------------- */

/* A design file over the segmentation (wsisa__design_read_seg); more runs
 * than max_runs (0: no limit) is WSISA_EUSAGE, as --force lifts it. Rows of
 * the 15 parameters in canonical order, and the run ids. */
static int read_samples(const char *path, const wsisa_study *study, size_t max_runs,
                        double **rows, uint64_t **run_ids, size_t *nrows, wsisa_err *e) {
  int seg[WSISA_SEG_NPARAMS];
  const size_t n = WSISA_SEG_NPARAMS;
  wsisa__design_file f;
  int rc = wsisa__design_read_seg(path, study->space, stderr, &f, seg, e);
  if (rc) return rc;
  const wsisa_csv *t = f.table;
  char counted[128];
  wsisa_csv_rows(t, counted, sizeof counted);
  if (max_runs && t->nrows > max_runs)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: %zu runs (%s), more than %zu (--force goes on if "
                     "the machine can hold them)", path, t->nrows, counted, max_runs);
  double *v = rc ? NULL : malloc(t->nrows * WSISA_SEG_NPARAMS * sizeof *v);
  if (!rc && !v) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t r = 0; !rc && r < t->nrows; r++)
    for (size_t i = 0; i < n; i++) v[r * WSISA_SEG_NPARAMS + seg[i]] = f.values[r * n + i];
  if (!rc) {
    *rows = v;
    *run_ids = f.ids;
    *nrows = t->nrows;
    v = NULL;
    f.ids = NULL;
  }
  free(v);
  wsisa__design_file_free(&f);
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

int wsisa__study_design_make(wsisa_study *study, const char *samples, size_t max_runs,
                             wsisa__run_design *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  if (samples) {
    out->from_csv = 1;
    return read_samples(samples, study, max_runs, &out->params, &out->run_ids, &out->nruns, e);
  }
  int rc = wsisa_study_design(study, NULL, &out->space, &out->sa, &out->design, e);
  if (rc) return rc;
  out->nruns = out->design->nrows;
  out->params = malloc(out->nruns * WSISA_SEG_NPARAMS * sizeof *out->params);
  if (!out->params) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    long col = wsisa_sa_space_find(out->space, wsisa_seg_param_name(p));
    for (size_t r = 0; r < out->nruns; r++)
      out->params[r * WSISA_SEG_NPARAMS + p] =
          col < 0 ? wsisa_seg_defaults()[p]
                  : out->design->values[r * out->design->nparams + (size_t)col];
  }
  return 0;
}
