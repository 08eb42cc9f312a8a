/* `wsisa run` metrics from the feature stage: mean_haematoxylin (the mean over
 * nuclei of their mean H) and wasserstein:<feature> (the Wasserstein-1
 * distance between the run's per-nucleus values and the reference run's,
 * pooled over tiles, exact). The per-(run, tile) values of the features the
 * metrics need go to feature_values.csv in the results folder (flushed and synced
 * before the unit's line in journal.csv), with %.17g so resume reads back the
 * very same doubles; its lines carry journal.csv's proof of being whole. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "engine/run/run_internal.h"
#include "engine/study/study.h"

#define MEAN_H "mean_haematoxylin"

typedef struct values {
  double *v;
  size_t n;
  int have;
} values;

struct wsisa__run_features {
  size_t nruns, ntiles, ncols;
  int *cols;        /* feature columns whose values are kept (h_mean first when asked) */
  values *run;      /* (run x tile) x ncols */
  values *ref;      /* tile x ncols */
  values *ref_pooled; /* per column: the reference's values over every tile,
                         sorted; made once, on first use (have) */
  FILE *journal;
  char path[WSISA_PATH_MAX];
};

static size_t wasserstein_prefix(const char *metric) {
  size_t k = strlen(WSISA_STUDY_WASSERSTEIN);
  return strncmp(metric, WSISA_STUDY_WASSERSTEIN, k) == 0 ? k : 0;
}

int wsisa__run_features_new(char *const *metrics, size_t nmetrics, size_t nruns, size_t ntiles,
                            const char *dir, wsisa__run_features **out, wsisa_err *e) {
  *out = NULL;
  int cols[64];
  size_t ncols = 0;
  for (size_t m = 0; m < nmetrics; m++) {
    size_t k = wasserstein_prefix(metrics[m]);
    int c = wsisa_study_metric_feature(metrics[m]);
    if (k && c < 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "metric %s: no feature %s (the columns of wsisa segment --features)",
                         metrics[m], metrics[m] + k);
    int seen = c < 0;
    for (size_t i = 0; i < ncols && !seen; i++) seen = cols[i] == c;
    if (!seen && ncols < sizeof cols / sizeof *cols) cols[ncols++] = c;
  }
  if (!ncols) return 0;
  wsisa__run_features *f = calloc(1, sizeof *f);
  if (!f) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  f->nruns = nruns, f->ntiles = ntiles, f->ncols = ncols;
  f->cols = malloc(ncols * sizeof *f->cols);
  f->run = calloc(nruns * ntiles * ncols, sizeof *f->run);
  f->ref = calloc(ntiles * ncols, sizeof *f->ref);
  if (!f->cols || !f->run || !f->ref) {
    wsisa__run_features_free(f);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  memcpy(f->cols, cols, ncols * sizeof *cols);
  int rc = wsisa__run_features_move(f, dir, e);
  if (rc) {
    wsisa__run_features_free(f);
    return rc;
  }
  *out = f;
  return 0;
}

void wsisa__run_features_free(wsisa__run_features *f) {
  if (!f) return;
  if (f->journal) fclose(f->journal);
  for (size_t i = 0; f->run && i < f->nruns * f->ntiles * f->ncols; i++) free(f->run[i].v);
  for (size_t i = 0; f->ref && i < f->ntiles * f->ncols; i++) free(f->ref[i].v);
  for (size_t k = 0; f->ref_pooled && k < f->ncols; k++) free(f->ref_pooled[k].v);
  free(f->ref_pooled);
  free(f->cols);
  free(f->run);
  free(f->ref);
  free(f);
}

static values *slot(wsisa__run_features *f, int ref, size_t run, size_t tile, size_t k) {
  return ref ? &f->ref[tile * f->ncols + k] : &f->run[(run * f->ntiles + tile) * f->ncols + k];
}

static int keep(values *v, double *taken, size_t n) {
  free(v->v);
  v->v = taken;
  v->n = n;
  v->have = 1;
  return 0;
}

/* One line: tile, run id (or "ref"), feature name, the values separated by
 * spaces, then the proof of a whole line (engine/run/journal.c); the copy kept in
 * memory is what the line says. */
static int write_values(wsisa__run_features *f, size_t tile, int ref, size_t run, size_t k,
                        const double *rows, size_t n, wsisa_err *e) {
  const size_t stride = WSISA_NF_ROW(wsisa_workflow_channel_count());
  char name[64];
  wsisa_workflow_feature_column(f->cols[k], name, sizeof name);
  double *v = malloc((n ? n : 1) * sizeof *v);
  char *text = NULL;
  size_t len = 0;
  FILE *line = v ? open_memstream(&text, &len) : NULL;
  if (!line) {
    free(v);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  if (ref) fprintf(line, "%zu,ref,%s,", tile, name);
  else fprintf(line, "%zu,%zu,%s,", tile, run, name);
  for (size_t i = 0; i < n; i++) {
    v[i] = rows[i * stride + (size_t)f->cols[k]];
    fprintf(line, i ? " %.17g" : "%.17g", v[i]);
  }
  int bad = fclose(line) != 0;
  if (!bad) wsisa__line_put(f->journal, text, len);
  free(text);
  if (bad) {
    free(v);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  return keep(slot(f, ref, run, tile, k), v, n);
}

int wsisa__run_features_unit(wsisa__run_features *f, size_t tile, const size_t *runs,
                             const wsisa_counts *counts, size_t n, wsisa_err *e) {
  int rc = 0;
  errno = 0;
  for (size_t k = 0; k < f->ncols && n && !rc; k++)
    if (!slot(f, 1, 0, tile, k)->have)
      rc = write_values(f, tile, 1, 0, k, counts[0].ref_features, counts[0].ref_nuclei, e);
  for (size_t i = 0; i < n && !rc; i++)
    for (size_t k = 0; k < f->ncols && !rc; k++)
      rc = write_values(f, tile, 0, runs[i], k, counts[i].features,
                        counts[i].features ? counts[i].nuclei : 0, e);
  if (rc) return rc;
  int err = 0;
  if (fflush(f->journal) != 0 || ferror(f->journal)) err = errno ? errno : EIO;
  if (!err && fsync(fileno(f->journal)) != 0) err = errno;
  return err ? wsisa_error(e, WSISA_EIO, "%s: %s", f->path, strerror(err)) : 0;
}

#define VALUES_HEADER "tile,run_id,feature,values,fields,crc32"
/* the header of files written before lines carried their proof */
static const wsisa__old_header values_old[] = {{"tile,run_id,feature,values", "checksum"},
                                               {NULL, NULL}};
#define VALUES_FIELDS 6

int wsisa__run_features_move(wsisa__run_features *f, const char *dir, wsisa_err *e) {
  return wsisa_path_fmt_err(f->path, e, "%s/feature_values.csv", dir);
}

int wsisa__run_features_open(wsisa__run_features *f, int fresh, wsisa_err *e) {
  return wsisa__lines_open(f->path, fresh, VALUES_HEADER, &f->journal, e);
}

/* One whole line back into memory; a line that names what is not in this
 * study, or repeats an earlier one with other values, is an error. */
static int take_line(void *ctx, char **fields, size_t nf, size_t lineno, wsisa_err *e) {
  wsisa__run_features *f = ctx;
  (void)nf;
  char *end;
  errno = 0;
  size_t tile = strtoul(fields[0], &end, 10), run = 0;
  int ref = strcmp(fields[1], "ref") == 0;
  int bad = *end || errno || !fields[0][0] || fields[0][0] == '-' || tile >= f->ntiles;
  if (!bad && !ref) {
    run = strtoul(fields[1], &end, 10);
    bad = *end || errno || !fields[1][0] || fields[1][0] == '-' || run >= f->nruns;
  }
  int col = wsisa_workflow_feature_find(fields[2]);
  size_t k = 0;
  while (k < f->ncols && f->cols[k] != col) k++;
  if (bad || k == f->ncols)
    return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: tile %s, run %s, feature %s: not in this study",
                       f->path, lineno, fields[0], fields[1], fields[2]);
  size_t cap = 1, n = 0;
  for (const char *p = fields[3]; *p; p++) cap += *p == ' ';
  double *v = malloc(cap * sizeof *v);
  if (!v) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (char *p = fields[3]; *p;) {
    v[n++] = strtod(p, &end);
    if (end == p || (*end && *end != ' ')) {
      free(v);
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: a value is not a number", f->path, lineno);
    }
    p = *end == ' ' ? end + 1 : end;
  }
  values *slot_v = slot(f, ref, run, tile, k);
  if (slot_v->have) {
    int same = slot_v->n == n && (n == 0 || memcmp(slot_v->v, v, n * sizeof *v) == 0);
    free(v);
    if (!same)
      return wsisa_error(e, WSISA_EFORMAT,
                         "%s:%zu: tile %zu, run %s, feature %s: other values than an earlier "
                         "line (two writers, or a damaged file)",
                         f->path, lineno, tile, fields[1], fields[2]);
    return 0;
  }
  return keep(slot_v, v, n);
}

int wsisa__run_features_read(wsisa__run_features *f, uint8_t *have, int repair, size_t *lines,
                             size_t *torn, wsisa_err *e) {
  int rc = wsisa__lines_read(f->path, VALUES_HEADER, values_old, VALUES_FIELDS, repair,
                             take_line, f, lines, torn, e);
  if (rc) return rc;
  /* a (run, tile) the journal holds without its values (or its tile's
   * reference values) runs again */
  for (size_t r = 0; r < f->nruns; r++)
    for (size_t t = 0; t < f->ntiles; t++)
      for (size_t k = 0; k < f->ncols; k++)
        if (!slot(f, 0, r, t, k)->have || !slot(f, 1, 0, t, k)->have) have[r * f->ntiles + t] = 0;
  return 0;
}

/* A run's (or the reference's) values of column k over every tile, sorted. */
static double *pooled(wsisa__run_features *f, int ref, size_t run, size_t k, size_t *n) {
  *n = 0;
  for (size_t t = 0; t < f->ntiles; t++) *n += slot(f, ref, run, t, k)->n;
  double *all = malloc((*n ? *n : 1) * sizeof *all);
  if (!all) return NULL;
  size_t at = 0;
  for (size_t t = 0; t < f->ntiles; t++) {
    const values *v = slot(f, ref, run, t, k);
    memcpy(all + at, v->v, v->n * sizeof *all);
    at += v->n;
  }
  qsort(all, *n, sizeof *all, wsisa_compare_doubles);
  return all;
}

double wsisa__wasserstein1(const double *a, size_t na, const double *b, size_t nb) {
  /* ∫ |F_a - F_b| over the merged sorted values (both sorted, not empty) */
  size_t i = 0, j = 0;
  double w = 0, x = fmin(a[0], b[0]);
  while (i < na || j < nb) {
    double next = i < na && (j >= nb || a[i] <= b[j]) ? a[i] : b[j];
    w += fabs((double)i / (double)na - (double)j / (double)nb) * (next - x);
    x = next;
    while (i < na && a[i] == next) i++;
    while (j < nb && b[j] == next) j++;
  }
  return w;
}

/* The reference's pooled values of column k, sorted once for every run. */
static const values *reference(wsisa__run_features *f, size_t k) {
  if (!f->ref_pooled && !(f->ref_pooled = calloc(f->ncols, sizeof *f->ref_pooled))) return NULL;
  values *r = &f->ref_pooled[k];
  if (!r->have) {
    r->v = pooled(f, 1, 0, k, &r->n);
    r->have = r->v != NULL;
  }
  return r->have ? r : NULL;
}

double wsisa__run_features_metric(wsisa__run_features *f, size_t run, const char *metric) {
  int col = wsisa_study_metric_feature(metric);
  size_t k = 0;
  while (k < f->ncols && f->cols[k] != col) k++;
  if (col < 0 || k == f->ncols) return NAN;
  if (strcmp(metric, MEAN_H) == 0) {
    /* summed in tile then nucleus order, as the journal holds them */
    double sum = 0;
    size_t n = 0;
    for (size_t t = 0; t < f->ntiles; t++) {
      const values *s = slot(f, 0, run, t, k);
      for (size_t i = 0; i < s->n; i++) sum += s->v[i];
      n += s->n;
    }
    return n ? sum / (double)n : NAN;
  }
  size_t n = 0;
  double *v = pooled(f, 0, run, k, &n), out = NAN;
  const values *r = reference(f, k);
  if (v && r && n && r->n) out = wsisa__wasserstein1(v, n, r->v, r->n);
  free(v);
  return out;
}
