/* The analysis of a study's outputs: sensitivity indices of every output
 * column, checked run by run against the study's design, written as
 * indices.csv, indices.json and SVG plots (`wsisa analyze`, and the end of
 * `wsisa run`). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "engine/study/study_internal.h"
#include "io/csv.h"
#include "io/svg.h"
#include "sa/sa.h"

/* Indices of one output as a table: k parameters x nstats named columns. */
typedef struct table {
  size_t nstats;
  const char *const *names;
  double *v;
} table;

typedef struct analysis {
  const wsisa_study *study;
  wsisa_sa_space *space;
  wsisa_sa_opts opts;
  wsisa_sa_design *design;
  int phase;                 /* two_phase: 1 or 2; others 0 */
  const char *samples_path, *outputs_path, *dir, *select;
  int drop_missing;
  wsisa_csv *outputs;
  size_t nout;
  size_t *out_cols;
  double *y;                 /* nout x runs, NaN where missing or not finite */
  const char **labels;       /* names of the varying parameters */
  FILE *report;              /* what stdout shows once everything is written */
  char *report_text;
  size_t report_len;
  json_t *json;              /* indices.json */
  json_t *results;           /* its "outputs" object */
  wsisa_csv_writer *csv, *csv2;
  const char *problem_path;  /* parameters from a problem file instead of a study */
  const char *source;        /* the study's or the problem's path, for messages */
  int foreign;               /* the samples are a design made elsewhere */
  uint64_t *ids;             /* its run ids, row by row (NULL: 0..n-1) */
  char samples_rows[128];    /* which lines of the samples are rows, for messages */
  const size_t *columns;     /* --column: output columns by position (0-based) */
  size_t ncolumns;
  char (*numbered)[24];      /* names of the columns of outputs without a header */
} analysis;

/* SALib's *_conf columns last: half-widths z * se (docs/study-file.md) */
static const char *const moat_stats[] = {"mu",          "mu_star", "sigma",  "mu_param",
                                         "mu_star_param", "sigma_param", "effects",
                                         "mu_star_conf"};
static const char *const vbd_stats[] = {"S1", "S1_lo", "S1_hi", "S1_se", "ST",
                                        "ST_lo", "ST_hi", "ST_se", "S1_conf", "ST_conf"};
static const char *const corr_stats[] = {"pearson", "spearman", "pcc", "prcc"};
#define COUNT(a) (sizeof(a) / sizeof *(a))
/* The largest output magnitude analysed: its square, summed over 10^8 runs,
 * stays below DBL_MAX. */
#define MAX_OUTPUT 1e150

/* "4, 17, 52" or "4, 17, ... (31 runs)" */
static void run_list(const size_t *runs, size_t n, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && i < 10; i++)
    used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, "%s%zu", i ? ", " : "",
                             runs[i]);
  if (n > 10 && used < cap) snprintf(buf + used, cap - used, ", ... (%zu runs)", n);
}

static json_t *jnum(double v) {
  if (!isfinite(v)) return json_null();
  if (v == floor(v) && fabs(v) < 1e15) return json_integer((json_int_t)v);
  return json_real(v);
}

/* ---- checking the inputs against the design ------------------------------------- */

static int close_enough(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

/* Where the samples differ from the study's own design, in words; "" when
 * they are that design, row for row. 1: its very rows, numbered otherwise. */
static int own_design_mismatch(const analysis *a, const wsisa_csv *s, const double *values,
                                const uint64_t *ids, char *why, size_t cap) {
  const wsisa_sa_design *d = a->design;
  const wsisa_sa_space *sp = a->space;
  why[0] = '\0';
  if (s->nrows != d->nrows) {
    char rows[128];
    wsisa_csv_rows(s, rows, sizeof rows);
    snprintf(why, cap,
             "%s: %zu run%s (%s), but the design of %s has %zu (was the study changed after "
             "sampling?)",
             s->path, s->nrows, s->nrows == 1 ? "" : "s", rows, a->study->path, d->nrows);
    return 0;
  }
  for (size_t r = 0; r < s->nrows; r++)
    for (size_t p = 0; p < sp->nparams; p++) {
      double v = values[r * sp->nparams + p], want = d->values[r * d->nparams + p];
      if (!close_enough(v, want)) {
        snprintf(why, cap,
                 "%s:%zu: %s is %.15g where the design of %s has %.15g for run %zu (was the "
                 "study, its sampler or seed changed after sampling?)",
                 s->path, s->lines[r], sp->params[p].name, v, a->study->path, want, r);
        return 0;
      }
    }
  /* the very rows of the study's design: numbered as it numbers them */
  for (size_t r = 0; r < s->nrows; r++)
    if (ids[r] != r) {
      snprintf(why, cap, "%s:%zu: run_id %" PRIu64 " where the design has run %zu", s->path,
               s->lines[r], ids[r], r);
      return 1;
    }
  return 0;
}

/* The design file as rows of the space's parameters: a segmentation study's
 * by the rules `wsisa run` and `wsisa plan` read it with
 * (wsisa__design_read_seg), another's by the one reader of design files
 * over its parameters (a fixed one's column may be absent, and a file
 * without a header holds the varying ones in order). */
static int read_samples(analysis *a, wsisa__design_file *f, wsisa_err *e) {
  const wsisa_sa_space *sp = a->space;
  size_t np = sp->nparams;
  if (a->study && a->study->segmentation) {
    int seg[WSISA_SEG_NPARAMS];
    int rc = wsisa__design_read_seg(a->samples_path, sp, a->report, f, seg, e);
    /* read as a run reads it, where a parameter without a column keeps the
     * study's value; an index needs the values the parameter took */
    for (size_t p = 0; !rc && f->table->has_header && p < np; p++)
      if (sp->params[p].kind != WSISA_SA_FIXED && wsisa_csv_column(f->table, sp->params[p].name) < 0)
        rc = wsisa_error(e, WSISA_EFORMAT,
                         "%s:%zu: no column '%s': the analysis needs the values of every "
                         "parameter %s varies",
                         a->samples_path, f->table->header_line, sp->params[p].name, a->source);
    if (rc) wsisa__design_file_free(f);
    /* the space's parameters come first, in its order */
    for (size_t r = 0; !rc && r < f->table->nrows; r++)
      memmove(f->values + r * np, f->values + r * WSISA_SEG_NPARAMS, np * sizeof *f->values);
    return rc;
  }
  const char **names = calloc(np + 1, sizeof *names);
  double *fill = calloc(np + 1, sizeof *fill);
  unsigned char *plain = calloc(np + 1, 1);
  int rc = names && fill && plain ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t p = 0; !rc && p < np; p++) {
    names[p] = sp->params[p].name;
    fill[p] = sp->params[p].kind == WSISA_SA_FIXED ? sp->params[p].value : NAN;
    plain[p] = sp->params[p].kind != WSISA_SA_FIXED;
  }
  wsisa__design_columns cols = {np, names, fill, plain, a->source};
  if (!rc) rc = wsisa__design_read(a->samples_path, &cols, a->report, f, e);
  free(names);
  free(fill);
  free(plain);
  return rc;
}

/* The samples are the study's own design (checked row by row), or a design
 * made elsewhere whose layout suits the method (then it replaces the study's
 * design and keeps its run ids). */
static int check_samples(analysis *a, wsisa_err *e) {
  const wsisa_sa_space *sp = a->space;
  wsisa__design_file f = {0};
  int rc = read_samples(a, &f, e);
  const wsisa_csv *s = f.table;
  if (!rc) wsisa_csv_rows(s, a->samples_rows, sizeof a->samples_rows);
  char why[1024] = "";
  int renumbered = !rc && a->design && own_design_mismatch(a, s, f.values, f.ids, why, sizeof why);
  if (!rc && (!a->design || why[0])) {
    /* not the study's design: one made elsewhere, if its rows suit the method */
    wsisa_sa_design *foreign = NULL;
    wsisa_err fe = WSISA_ERR_INIT;
    wsisa_sa_method method = a->design ? a->design->method : a->opts.method;
    if (wsisa_sa_design_from_values(sp, method, a->design ? a->design->second_order : 0, f.values,
                                    s->nrows, &foreign, &fe))
      rc = a->design ? wsisa_error(e, WSISA_EFORMAT, "%s; nor is it a %s design made elsewhere: %s",
                                   why, wsisa_sa_method_name(method), fe.msg)
                     : wsisa_error(e, WSISA_EFORMAT, "%s (%s): %s", s->path, a->samples_rows,
                                   fe.msg);
    else if (renumbered)
      /* the study's rows renumbered: a slip, not another design */
      rc = wsisa_error(e, WSISA_EFORMAT, "%s", why), wsisa_sa_design_free(foreign);
    if (!rc) {
      wsisa_sa_design_free(a->design);
      a->design = foreign;
      a->ids = f.ids;
      f.ids = NULL;
      a->foreign = 1;
    }
  }
  wsisa__design_file_free(&f);
  return rc;
}

/* A foreign design's run ids sorted, each with its row: a run id is found in
 * log n steps, so analysing 10^6 rows is not 10^12 comparisons. */
typedef struct id_row {
  uint64_t id;
  size_t row;
} id_row;

static int by_id(const void *x, const void *y) {
  const id_row *a = x, *b = y;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return a->row < b->row ? -1 : a->row > b->row;
}

/* NULL when the design numbers its rows 0..n-1 (or out of memory: *failed). */
static id_row *index_ids(const analysis *a, int *failed) {
  *failed = 0;
  if (!a->ids) return NULL;
  size_t n = a->design->nrows;
  id_row *index = malloc((n + 1) * sizeof *index);
  if (!index) {
    *failed = 1;
    return NULL;
  }
  for (size_t r = 0; r < n; r++) index[r] = (id_row){a->ids[r], r};
  qsort(index, n, sizeof *index, by_id);
  return index;
}

/* The design row of run id `id` (the first, should ids repeat), or -1. */
static long row_of(const analysis *a, const id_row *index, uint64_t id) {
  if (!a->ids) return id < a->design->nrows ? (long)id : -1;
  size_t lo = 0, hi = a->design->nrows;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (index[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < a->design->nrows && index[lo].id == id ? (long)index[lo].row : -1;
}

/* Which output columns: --column's positions (0-based after any id column,
 * as SALib's -c counts them), else the study's metrics by name, else all. */
static int pick_outputs(analysis *a, size_t first, wsisa_err *e) {
  const wsisa_csv *y = a->outputs;
  const wsisa_study *st = a->study;
  size_t nmetrics = st ? st->nmetrics : 0, avail = y->ncols - first;
  a->nout = a->ncolumns ? a->ncolumns : nmetrics ? nmetrics : avail;
  if (a->nout == 0)
    return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: no output column after its id column",
                       y->path, y->header_line);
  if (!(a->out_cols = calloc(a->nout, sizeof *a->out_cols)))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->nout; i++) {
    if (a->ncolumns) {
      size_t k = a->columns[i];
      if (k >= avail)
        return wsisa_error(e, WSISA_EUSAGE,
                           "--column %zu: %s has %zu output column%s (0 to %zu%s)", k, y->path,
                           avail, avail == 1 ? "" : "s", avail - 1,
                           first ? ", after its id column" : "");
      for (size_t j = 0; j < i; j++)
        if (a->columns[j] == k) return wsisa_error(e, WSISA_EUSAGE, "--column %zu: given twice", k);
      a->out_cols[i] = k + first;
      continue;
    }
    long c = nmetrics ? wsisa_csv_column(y, st->metrics[i]) : (long)(i + first);
    if (c < 0 && !y->has_header)
      return wsisa_error(e, WSISA_EFORMAT,
                         "%s: no header, so no column '%s' (a metric %s names): name the "
                         "columns, or pick them with --column",
                         y->path, st->metrics[i], st->path);
    if (c < 0)
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: no column '%s' (a metric %s names)", y->path,
                         y->header_line, st->metrics[i], st->path);
    a->out_cols[i] = (size_t)c;
  }
  return 0;
}

static int check_outputs(analysis *a, wsisa_err *e) {
  size_t n = a->design->nrows;
  int rc = wsisa_csv_read_table(a->outputs_path, NULL, &a->outputs, e);
  if (rc) return rc;
  wsisa_csv *y = a->outputs;
  /* without a header the columns are numbered from 0, as SALib's -c counts */
  if (!y->has_header && !(a->numbered = calloc(y->ncols, sizeof *a->numbered)))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t c = 0; !y->has_header && c < y->ncols; c++) {
    snprintf(a->numbered[c], sizeof a->numbered[c], "y%zu", c);
    y->header[c] = a->numbered[c];
  }
  /* without a run id column, row r is run r */
  size_t first = wsisa__design_id_column(y) ? 1 : 0;
  char rows[128];
  wsisa_csv_rows(y, rows, sizeof rows);
  uint64_t *ids = calloc(y->nrows + 1, sizeof *ids);
  size_t *absent = calloc(n + 1, sizeof *absent);
  unsigned char *seen = calloc(n + 1, 1);
  int no_index;
  id_row *index = index_ids(a, &no_index);
  if (!ids || !absent || !seen || no_index) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc && first) rc = wsisa_csv_run_ids(y, ids, e);
  for (size_t r = 0; r < y->nrows && !rc && !first; r++) ids[r] = a->ids ? a->ids[r] : r;
  if (!rc && !first && y->nrows != n)
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: %zu row%s (%s) for the %zu runs of %s (%s); without a run id column, "
                     "rows are matched to runs in order",
                     y->path, y->nrows, y->nrows == 1 ? "" : "s", rows, n, a->samples_path,
                     a->samples_rows);
  for (size_t r = 0; r < y->nrows && !rc; r++) {
    long at = row_of(a, index, ids[r]);
    if (at < 0 && !a->ids)
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: run_id %" PRIu64 " is not a run of %s (0..%zu)",
                       y->path, y->lines[r], ids[r], a->samples_path, n - 1);
    else if (at < 0)
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: run_id %" PRIu64 " is not a run of %s",
                       y->path, y->lines[r], ids[r], a->samples_path);
    else
      seen[at] = 1;
  }
  if (!rc && y->nrows != n) {
    size_t nabsent = 0;
    for (size_t r = 0; r < n; r++)
      if (!seen[r]) absent[nabsent++] = r;
    char list[256];
    run_list(absent, nabsent, list, sizeof list);
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: %zu row%s (%s) for the %zu runs of %s; no row for run%s %s (a run "
                     "without output is a row with an empty cell)",
                     y->path, y->nrows, y->nrows == 1 ? "" : "s", rows, n, a->samples_path,
                     nabsent == 1 ? "" : "s", list);
  }
  for (size_t r = 0; r < y->nrows && !rc; r++)
    if (row_of(a, index, ids[r]) != (long)r)
      rc = wsisa_error(e, WSISA_EFORMAT,
                       "%s:%zu: run_id %" PRIu64 " where %s has run %" PRIu64 " (rows must "
                       "follow the design's order)",
                       y->path, y->lines[r], ids[r], a->samples_path, a->ids ? a->ids[r] : r);
  if (!rc) rc = pick_outputs(a, first, e);
  if (!rc && !(a->y = calloc(a->nout * n + 1, sizeof *a->y)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->nout && !rc; i++)
    for (size_t r = 0; r < n && !rc; r++) {
      double *v = &a->y[i * n + r];
      rc = wsisa_csv_number(y, r, a->out_cols[i], v, e);
      if (!isfinite(*v)) *v = NAN;
      /* squares and sums of squares must stay finite: past this the indices
       * come out inf or NaN without a word */
      else if (!rc && fabs(*v) > MAX_OUTPUT)
        rc = wsisa_error(e, WSISA_EFORMAT,
                         "%s:%zu: '%s' is %g, too large to analyse (variances overflow past "
                         "1e308; at most %g in magnitude): rescale the output",
                         y->path, y->lines[r], y->header[a->out_cols[i]], *v, MAX_OUTPUT);
    }
  /* VBD refuses missing outputs before anything is written. */
  for (size_t i = 0; i < a->nout && !rc && a->design->method == WSISA_SA_VBD && !a->drop_missing;
       i++) {
    size_t nmissing = 0;
    for (size_t r = 0; r < n; r++)
      if (isnan(a->y[i * n + r])) absent[nmissing++] = r;
    if (nmissing) {
      char list[256];
      run_list(absent, nmissing, list, sizeof list);
      rc = wsisa_error(e, WSISA_EFORMAT,
                       "%s: '%s' is missing or not finite for run%s %s; VBD needs every run "
                       "(--drop-missing drops their base samples)",
                       y->path, y->header[a->out_cols[i]], nmissing == 1 ? "" : "s", list);
    }
  }
  free(ids);
  free(index);
  free(absent);
  free(seen);
  return rc;
}

/* ---- writing ---------------------------------------------------------------------- */

/* The code of an error already recorded (by a call that returned NULL). */
static int failed(const wsisa_err *e) { return e->code ? e->code : WSISA_ENOMEM; }

static void file_safe(const char *name, char *buf, size_t cap) {
  size_t i = 0;
  for (; name[i] && i + 1 < cap; i++) {
    char ch = name[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '-' || ch == '.';
    buf[i] = ok ? ch : '_';
  }
  buf[i] = '\0';
}

static const char *staged(analysis *a, wsisa_stage *stage, const char *output, const char *suffix,
                          wsisa_err *e) {
  char safe[128], path[WSISA_PATH_MAX];
  file_safe(output, safe, sizeof safe);
  if (output[0] ? wsisa_path_fmt_err(path, e, "%s/%s_%s", a->dir, safe, suffix)
                : wsisa_path_fmt_err(path, e, "%s/%s", a->dir, suffix))
    return NULL;
  /* -o DIR holding the inputs must not overwrite them */
  const char *inputs[] = {a->source, a->samples_path, a->outputs_path};
  if (wsisa_output_check(NULL, path, inputs, 3, e)) return NULL;
  return wsisa_stage_add(stage, path, e);
}

/* Ten significant digits: estimates carry no more, and the files stay legible. */
static double sig10(double v) {
  if (!isfinite(v)) return v;
  char buf[32];
  snprintf(buf, sizeof buf, "%.10g", v);
  return strtod(buf, NULL);
}

/* One output's table into indices.csv and indices.json. */
static json_t *emit_table(analysis *a, const char *output, const table *t) {
  size_t k = a->design->nfactors;
  json_t *params = json_object();
  for (size_t i = 0; i < k; i++) {
    wsisa_csv_text(a->csv, output);
    wsisa_csv_text(a->csv, a->labels[i]);
    json_t *o = json_object();
    for (size_t s = 0; s < t->nstats; s++) {
      double v = sig10(t->v[i * t->nstats + s]);
      wsisa_csv_num(a->csv, v);
      json_object_set_new(o, t->names[s], jnum(v));
    }
    wsisa_csv_end_row(a->csv);
    json_object_set_new(params, a->labels[i], o);
  }
  return params;
}

static void print_table(analysis *a, const table *t, const size_t *show, size_t nshow) {
  fprintf(a->report, "  %-16s", "parameter");
  for (size_t s = 0; s < nshow; s++) fprintf(a->report, " %12s", t->names[show[s]]);
  fputc('\n', a->report);
  for (size_t i = 0; i < a->design->nfactors; i++) {
    fprintf(a->report, "  %-16s", a->labels[i]);
    for (size_t s = 0; s < nshow; s++) fprintf(a->report, " %12.4g", t->v[i * t->nstats + show[s]]);
    fputc('\n', a->report);
  }
}

/* ---- the methods -------------------------------------------------------------------- */

static int analyze_moat(analysis *a, const char *output, const double *y, json_t *res,
                        wsisa_stage *stage, wsisa_err *e) {
  wsisa_sa_moat_result m;
  size_t k = a->design->nfactors;
  int rc = wsisa_sa_moat_analyze(a->space, a->design, y, &m, e);
  if (rc) return rc;
  double *v = calloc(k * COUNT(moat_stats), sizeof *v), *conf = calloc(k, sizeof *conf);
  size_t *order = calloc(k, sizeof *order);
  if (!v || !order || !conf) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc)
    rc = wsisa_sa_moat_mu_star_conf(&m, a->opts.bootstrap, a->opts.confidence, a->opts.seed, conf,
                                    e);
  for (size_t i = 0; !rc && i < k; i++) {
    double row[] = {m.mu[i],        m.mu_star[i], m.sigma[i],            m.mu_p[i],
                    m.mu_star_p[i], m.sigma_p[i], (double)m.neffects[i], conf[i]};
    memcpy(v + i * COUNT(moat_stats), row, sizeof row);
  }
  if (!rc) {
    table t = {COUNT(moat_stats), moat_stats, v};
    json_object_set_new(res, "parameters", emit_table(a, output, &t));
    json_object_set_new(res, "effects", json_integer((json_int_t)m.total_effects));
    json_object_set_new(res, "dropped_effects", json_integer((json_int_t)m.dropped_effects));
    if (m.dropped_effects)
      fprintf(a->report, "%s: dropped %zu of %zu elementary effects that touch those runs\n",
              output, m.dropped_effects, m.total_effects);
    const size_t show[] = {1, 0, 2};
    fprintf(a->report, "%s: MOAT, grid units (Delta = p/(2(p-1)); sigma with n - 1)\n", output);
    print_table(a, &t, show, 3);
    wsisa_sa_moat_rank(&m, order);
    json_t *ranking = json_array();
    for (size_t i = 0; i < k; i++) json_array_append_new(ranking, json_string(a->labels[order[i]]));
    json_object_set_new(res, "ranking", ranking);
    const char *path = staged(a, stage, output, "moat.svg", e);
    char title[256];
    snprintf(title, sizeof title, "MOAT: %s (%zu trajectories)", output, a->design->groups);
    rc = path ? wsisa_svg_scatter(path, title, "mu* (grid units)", "sigma (grid units)", k,
                                  a->labels, m.mu_star, m.sigma, e)
              : failed(e);
  }
  /* Phase 1 of a two-phase study names the parameters for phase 2: the
   * factors with the largest mu*, a group by all its parameters. */
  if (!rc && a->phase == 1 && output == a->outputs->header[a->out_cols[0]]) {
    size_t keep = a->opts.keep < k ? a->opts.keep : k, nsel = 0;
    const wsisa_sa_design *d = a->design;
    json_t *sel = json_array();
    char names[2048] = "";
    for (size_t i = 0; i < keep; i++)
      for (size_t j = 0; j < d->ndims; j++) {
        if (d->factor[j] != order[i]) continue;
        const char *name = a->space->params[d->dims[j]].name;
        json_array_append_new(sel, json_string(name));
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", nsel++ ? "," : "",
                 name);
      }
    json_object_set_new(a->json, "selected", sel);
    fprintf(a->report,
            "two_phase: the %zu %s with the largest mu* of %s go to phase 2 (VBD):\n"
            "  wsisa sample --study %s --select %s -o phase2.csv\n",
            keep, d->nfactors < d->ndims ? "factors (a group with all its parameters)" : "parameters",
            output, a->study->path, names);
  }
  free(v);
  free(conf);
  free(order);
  wsisa_sa_moat_result_free(&m);
  return rc;
}

static int analyze_vbd(analysis *a, const char *output, const double *y, json_t *res,
                       wsisa_stage *stage, wsisa_err *e) {
  const wsisa_sa_design *d = a->design;
  size_t k = d->nfactors;
  wsisa_sa_vbd_opts vo = {a->opts.bootstrap, a->opts.confidence, a->opts.seed, a->drop_missing};
  wsisa_sa_vbd_result r;
  size_t dropped = 0;
  int rc = wsisa_sa_vbd_analyze(y, d->groups, k, d->second_order, &vo, &r, &dropped, e);
  if (rc) return rc;
  double *v = calloc(k * COUNT(vbd_stats), sizeof *v);
  if (!v) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  double z = wsisa_sa_normal_quantile(0.5 + a->opts.confidence / 2);
  for (size_t i = 0; !rc && i < k; i++) {
    double row[] = {r.s1[i], r.s1_lo[i], r.s1_hi[i], r.s1_se[i], r.st[i],
                    r.st_lo[i], r.st_hi[i], r.st_se[i], z * r.s1_se[i], z * r.st_se[i]};
    memcpy(v + i * COUNT(vbd_stats), row, sizeof row);
  }
  if (!rc) {
    table t = {COUNT(vbd_stats), vbd_stats, v};
    json_object_set_new(res, "parameters", emit_table(a, output, &t));
    json_object_set_new(res, "variance", jnum(r.variance));
    json_object_set_new(res, "base_samples", json_integer((json_int_t)r.n));
    json_object_set_new(res, "dropped_base_samples", json_integer((json_int_t)dropped));
    if (dropped)
      fprintf(a->report, "%s: dropped %zu of %zu base samples that touch those runs\n", output,
              dropped, d->groups);
    if (!(r.variance > 0))
      fprintf(a->report, "%s: the output does not vary; its indices are undefined\n", output);
    fprintf(a->report, "%s: VBD, %zu base samples, %g%% bootstrap intervals (%zu resamples)\n",
            output, r.n, 100 * a->opts.confidence, a->opts.bootstrap);
    const size_t show[] = {0, 1, 2, 4, 5, 6};
    print_table(a, &t, show, 6);
  }
  if (!rc && r.s2) {
    json_t *pairs = json_array();
    for (size_t i = 0; i < k; i++)
      for (size_t j = i + 1; j < k; j++) {
        size_t at = i * k + j;
        wsisa_csv_text(a->csv2, output);
        wsisa_csv_text(a->csv2, a->labels[i]);
        wsisa_csv_text(a->csv2, a->labels[j]);
        double row[] = {r.s2[at], r.s2_lo[at], r.s2_hi[at], r.s2_se[at], z * r.s2_se[at]};
        for (size_t s = 0; s < 5; s++) wsisa_csv_num(a->csv2, row[s] = sig10(row[s]));
        wsisa_csv_end_row(a->csv2);
        json_array_append_new(pairs, json_pack("{s:[s,s], s:o, s:o, s:o, s:o, s:o}", "parameters",
                                               a->labels[i], a->labels[j], "S2", jnum(row[0]),
                                               "S2_lo", jnum(row[1]), "S2_hi", jnum(row[2]),
                                               "S2_se", jnum(row[3]), "S2_conf", jnum(row[4])));
      }
    json_object_set_new(res, "second_order", pairs);
  }
  if (!rc) {
    wsisa_svg_series series[2] = {{"S1 (first order)", r.s1, r.s1_lo, r.s1_hi},
                                  {"ST (total)", r.st, r.st_lo, r.st_hi}};
    const char *path = staged(a, stage, output, "vbd.svg", e);
    char title[256];
    snprintf(title, sizeof title, "Sobol' indices: %s (%zu base samples, %g%% intervals)", output,
             r.n, 100 * a->opts.confidence);
    rc = path ? wsisa_svg_bars(path, title, "index", k, a->labels, 2, series, e) : failed(e);
  }
  free(v);
  wsisa_sa_vbd_result_free(&r);
  return rc;
}

static int analyze_correlation(analysis *a, const char *output, const double *y, json_t *res,
                               wsisa_stage *stage, wsisa_err *e) {
  const wsisa_sa_design *d = a->design;
  size_t k = d->ndims, n = d->nrows;
  double *x = calloc(n * k, sizeof *x), *v = calloc(k * COUNT(corr_stats), sizeof *v);
  wsisa_sa_corr_result r = {0};
  int rc = x && v ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t row = 0; !rc && row < n; row++)
    for (size_t i = 0; i < k; i++) x[row * k + i] = d->values[row * d->nparams + d->dims[i]];
  if (!rc) rc = wsisa_sa_correlation(x, n, k, y, &r, e);
  for (size_t i = 0; !rc && i < k; i++) {
    double row[] = {r.pearson[i], r.spearman[i], r.pcc[i], r.prcc[i]};
    memcpy(v + i * COUNT(corr_stats), row, sizeof row);
  }
  if (!rc) {
    table t = {COUNT(corr_stats), corr_stats, v};
    json_object_set_new(res, "parameters", emit_table(a, output, &t));
    json_object_set_new(res, "runs_used", json_integer((json_int_t)r.n));
    fprintf(a->report, "%s: correlations over %zu runs\n", output, r.n);
    /* an undefined coefficient is an empty cell, null, and a reason */
    json_t *undefined = json_object();
    for (size_t i = 0; i < k; i++) {
      const char *why[2] = {r.pcc_why[i], r.prcc_why[i]}, *stat[2] = {"pcc", "prcc"};
      for (int s = 0; s < 2; s++) {
        if (!why[s]) continue;
        json_t *o = json_object_get(undefined, a->labels[i]);
        if (!o) json_object_set_new(undefined, a->labels[i], o = json_object());
        json_object_set_new(o, stat[s], json_string(why[s]));
        fprintf(a->report, "warning: %s: the %s of %s is undefined: %s\n", output, stat[s],
                a->labels[i], why[s]);
      }
    }
    if (json_object_size(undefined))
      json_object_set(res, "undefined", undefined);
    json_decref(undefined);
    const size_t show[] = {0, 1, 2, 3};
    print_table(a, &t, show, 4);
    wsisa_svg_series series[4] = {{"Pearson", r.pearson, NULL, NULL},
                                  {"Spearman", r.spearman, NULL, NULL},
                                  {"PCC", r.pcc, NULL, NULL},
                                  {"PRCC", r.prcc, NULL, NULL}};
    const char *path = staged(a, stage, output, "correlation.svg", e);
    char title[256];
    snprintf(title, sizeof title, "Correlation with %s (%zu runs)", output, r.n);
    rc = path ? wsisa_svg_bars(path, title, "coefficient", k, a->labels, 4, series, e)
              : failed(e);
  }
  free(x);
  free(v);
  wsisa_sa_corr_result_free(&r);
  return rc;
}

static int analyze_output(analysis *a, size_t which, wsisa_stage *stage, wsisa_err *e) {
  size_t n = a->design->nrows, nmissing = 0;
  const char *name = a->outputs->header[a->out_cols[which]];
  const double *y = a->y + which * n;
  size_t *missing = calloc(n + 1, sizeof *missing);
  if (!missing) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t r = 0; r < n; r++)
    if (isnan(y[r])) missing[nmissing++] = r;
  json_t *res = json_object(), *miss = json_array();
  for (size_t i = 0; i < nmissing; i++) json_array_append_new(miss, json_integer((json_int_t)missing[i]));
  json_object_set_new(res, "missing_runs", miss);
  if (nmissing) {
    char list[256];
    run_list(missing, nmissing, list, sizeof list);
    fprintf(a->report, "%s: %zu run%s with a missing or non-finite output: %s\n", name, nmissing,
            nmissing == 1 ? "" : "s", list);
  }
  int rc;
  switch (a->design->method) {
    case WSISA_SA_MOAT: rc = analyze_moat(a, name, y, res, stage, e); break;
    case WSISA_SA_VBD: rc = analyze_vbd(a, name, y, res, stage, e); break;
    default: rc = analyze_correlation(a, name, y, res, stage, e); break;
  }
  json_object_set_new(a->results, name, res);
  free(missing);
  return rc;
}

/* The grid of a MOAT design as its rows show it: the step every parameter
 * takes in unit terms (NaN when steps differ) and the levels p it implies,
 * Delta = p / (2 (p - 1)) for even p (0 when it implies none). */
static void moat_grid(const wsisa_sa_design *d, double *delta, unsigned *levels) {
  size_t k = d->ndims, rows = d->group_size;
  *delta = NAN;
  *levels = 0;
  for (size_t t = 0; t < d->groups; t++)
    for (size_t step = 1; step < rows; step++) {
      const double *ua = d->unit + (t * rows + step - 1) * k, *ub = ua + k;
      for (size_t i = 0; i < k; i++) {
        double du = fabs(ub[i] - ua[i]);
        if (du == 0) continue;
        if (isnan(*delta) && t == 0 && step == 1) *delta = du;
        else if (!(fabs(du - *delta) <= 1e-9)) *delta = -1;
      }
    }
  if (!(*delta > 0)) {
    *delta = NAN;
    return;
  }
  double p = 2 * *delta / (2 * *delta - 1);
  if (*delta > 0.5 && fabs(p - round(p)) <= 1e-6 && (long)round(p) % 2 == 0 && p < 1e6)
    *levels = (unsigned)round(p);
}

static void begin_json(analysis *a) {
  const wsisa_sa_opts *o = &a->opts;
  a->json = json_object();
  json_object_set_new(a->json, "study", a->study ? json_string(a->study->path) : json_null());
  if (a->problem_path) json_object_set_new(a->json, "problem", json_string(a->problem_path));
  json_object_set_new(a->json, "samples", json_string(a->samples_path));
  json_object_set_new(a->json, "outputs", json_string(a->outputs_path));
  json_object_set_new(a->json, "method", json_string(wsisa_sa_method_name(a->design->method)));
  if (a->phase) json_object_set_new(a->json, "two_phase_phase", json_integer(a->phase));
  json_object_set_new(a->json, "runs", json_integer((json_int_t)a->design->nrows));
  json_object_set_new(a->json, "design", json_string(a->foreign ? "made elsewhere" : "study"));
  json_object_set_new(a->json, "sampler", json_string(wsisa_sa_sampler_name(o->sampler)));
  json_object_set_new(a->json, "seed", json_integer((json_int_t)o->seed));
  const wsisa_sa_space *sp = a->space;
  json_t *groups = json_object(), *dists = json_object();
  for (size_t i = 0; i < sp->nparams; i++) {
    const wsisa_sa_param *p = &sp->params[i];
    if (p->kind == WSISA_SA_FIXED) continue;
    if (p->group[0]) {
      json_t *members = json_object_get(groups, p->group);
      if (!members) json_object_set_new(groups, p->group, members = json_array());
      json_array_append_new(members, json_string(p->name));
    }
    if (p->dist != WSISA_SA_UNIF) {
      json_t *b = json_array();
      for (size_t j = 0; j < wsisa_sa_dist_nbounds(p->dist); j++)
        json_array_append_new(b, json_real(p->bounds[j]));
      json_object_set_new(dists, p->name, json_pack("{s:s, s:o}", "dist",
                                                    wsisa_sa_dist_name(p->dist), "bounds", b));
    }
  }
  if (json_object_size(groups) && a->design->method != WSISA_SA_CORRELATION)
    json_object_set(a->json, "groups", groups);
  if (json_object_size(dists)) json_object_set(a->json, "dists", dists);
  json_decref(groups);
  json_decref(dists);
  json_t *conv = json_object();
  if (a->design->method == WSISA_SA_MOAT) {
    json_object_set_new(conv, "trajectories", json_integer((json_int_t)a->design->groups));
    /* the design analysed: the study's knobs, or what a foreign design's steps show */
    double delta = (double)o->levels / (2.0 * (o->levels - 1));
    unsigned levels = o->levels;
    if (a->foreign) moat_grid(a->design, &delta, &levels);
    json_object_set_new(conv, "levels", levels ? json_integer(levels) : json_null());
    json_object_set_new(conv, "delta", jnum(delta));
    json_object_set_new(conv, "sigma_denominator", json_string("n-1"));
    json_object_set_new(conv, "bootstrap_resamples", json_integer((json_int_t)o->bootstrap));
    json_object_set_new(conv, "confidence", json_real(o->confidence));
    json_object_set_new(conv, "mu_star_conf",
                        json_string("z * sd of mu* over bootstrap resamples of the effects, "
                                    "z = Phi^-1(1/2 + confidence/2) (SALib's)"));
    json_object_set_new(conv, "units",
                        json_string("mu, mu_star, sigma: dy/du, u the parameter scaled to "
                                    "[0, 1] (grid units; under a non-uniform dist, u is the "
                                    "quantile: effects in quantile space); *_param: dy/dvalue "
                                    "(null: categorical)"));
    if (a->design->nfactors < a->design->ndims)
      json_object_set_new(conv, "groups",
                          json_string("a step moves a whole group (Campolongo et al. 2007): "
                                      "mu_star per group is mean |dy| / Delta; mu, sigma and "
                                      "*_param are null for a group of 2 or more"));
  } else if (a->design->method == WSISA_SA_VBD) {
    json_object_set_new(conv, "first_order", json_string("Saltelli 2010"));
    json_object_set_new(conv, "total", json_string("Jansen 1999"));
    json_object_set_new(conv, "bootstrap_resamples", json_integer((json_int_t)o->bootstrap));
    json_object_set_new(conv, "confidence", json_real(o->confidence));
    json_object_set_new(conv, "interval", json_string("percentile"));
    json_object_set_new(conv, "conf", json_string("S1_conf, ST_conf, S2_conf: half-widths "
                                                  "z * se, z = Phi^-1(1/2 + confidence/2) "
                                                  "(SALib's)"));
  } else {
    json_object_set_new(conv, "spearman_ties", json_string("average ranks"));
  }
  json_object_set_new(a->json, "conventions", conv);
  a->results = json_object();
  json_object_set_new(a->json, "results", a->results);
}

static int run(analysis *a, wsisa_err *e) {
  wsisa_stage stage = WSISA_STAGE_INIT;
  int rc = check_samples(a, e);
  if (!rc && a->foreign) {
    const wsisa_sa_design *d = a->design;
    if (a->study)
      fprintf(a->report, "%s: not the design of %s; ", a->samples_path, a->study->path);
    else
      fprintf(a->report, "%s: ", a->samples_path);
    fprintf(a->report, "analysed as a %s design made elsewhere: ", wsisa_sa_method_name(d->method));
    if (d->method == WSISA_SA_MOAT)
      fprintf(a->report, "%zu trajectories of %zu runs\n", d->groups, d->group_size);
    else if (d->method == WSISA_SA_VBD)
      fprintf(a->report, "%zu base samples in Saltelli's layout (%s order)\n", d->groups,
              d->second_order ? "second" : "first");
    else
      fprintf(a->report, "%zu runs\n", d->nrows);
  }
  if (!rc && a->design && a->design->ndims == 0)
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: every parameter is fixed: one run has no sensitivity indices "
                     "(its scores are in outputs.csv)",
                     a->study ? a->study->path : a->samples_path);
  if (!rc) rc = check_outputs(a, e);
  /* one row per factor: a group's row names the group (MOAT, VBD) */
  size_t k = a->design ? a->design->nfactors : 0;
  if (!rc && !(a->labels = calloc(k + 1, sizeof *a->labels)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < k; i++)
    a->labels[i] = a->design->method == WSISA_SA_CORRELATION
                       ? a->space->params[a->design->dims[i]].name
                       : wsisa_sa_space_factor_name(a->space, i);
  if (!rc && a->design->method == WSISA_SA_CORRELATION && wsisa_sa_space_grouped(a->space))
    fprintf(a->report, "warning: groups do not apply to correlations; one row per parameter\n");
  struct stat st;
  int made_dir = 0;
  if (!rc && stat(a->dir, &st) != 0) {
    if (mkdir(a->dir, 0777) != 0)
      rc = wsisa_error(e, WSISA_EIO, "%s: %s", a->dir, strerror(errno));
    else
      made_dir = 1;
  } else if (!rc && !S_ISDIR(st.st_mode))
    rc = wsisa_error(e, WSISA_EIO, "%s: not a directory", a->dir);
  const char *csv_path = rc ? NULL : staged(a, &stage, "", "indices.csv", e);
  if (!rc) rc = csv_path ? wsisa_csv_create(csv_path, &a->csv, e) : failed(e);
  if (!rc && a->design->second_order) {
    const char *p2 = staged(a, &stage, "", "indices_s2.csv", e);
    rc = p2 ? wsisa_csv_create(p2, &a->csv2, e) : failed(e);
    if (!rc) {
      const char *head[] = {"output", "parameter_1", "parameter_2", "S2",
                            "S2_lo",  "S2_hi",       "S2_se",       "S2_conf"};
      for (size_t i = 0; i < COUNT(head); i++) wsisa_csv_text(a->csv2, head[i]);
      wsisa_csv_end_row(a->csv2);
    }
  }
  if (!rc) {
    wsisa_csv_text(a->csv, "output");
    wsisa_csv_text(a->csv, "parameter");
    const char *const *names = a->design->method == WSISA_SA_MOAT  ? moat_stats
                               : a->design->method == WSISA_SA_VBD ? vbd_stats
                                                                   : corr_stats;
    size_t nstats = a->design->method == WSISA_SA_MOAT  ? COUNT(moat_stats)
                    : a->design->method == WSISA_SA_VBD ? COUNT(vbd_stats)
                                                        : COUNT(corr_stats);
    for (size_t s = 0; s < nstats; s++) wsisa_csv_text(a->csv, names[s]);
    wsisa_csv_end_row(a->csv);
    begin_json(a);
  }
  for (size_t i = 0; !rc && i < a->nout; i++) rc = analyze_output(a, i, &stage, e);
  if (a->csv) {
    int crc = wsisa_csv_close(a->csv, e);
    rc = rc ? rc : crc;
  }
  if (a->csv2) {
    int crc = wsisa_csv_close(a->csv2, e);
    rc = rc ? rc : crc;
  }
  if (!rc) {
    const char *jpath = staged(a, &stage, "", "indices.json", e);
    if (!jpath) rc = failed(e);
    else {
      char *text = json_dumps(a->json, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
      FILE *f = text ? fopen(jpath, "w") : NULL;
      if (!text) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
      else if (!f) rc = wsisa_error(e, WSISA_EIO, "%s/indices.json: %s", a->dir, strerror(errno));
      if (f) {
        errno = 0;
        fputs(text, f);
        rc = wsisa_output_close(f, jpath, e);
      }
      free(text);
    }
  }
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc) {
    wsisa_stage_abort(&stage);
    if (made_dir) rmdir(a->dir); /* empty again: leave no trace */
  }
  return rc;
}

/* SALib's method names and wsisa's. */
static int method_of(const char *name) {
  if (!strcmp(name, "morris") || !strcmp(name, "moat")) return WSISA_SA_MOAT;
  if (!strcmp(name, "sobol") || !strcmp(name, "vbd")) return WSISA_SA_VBD;
  if (!strcmp(name, "correlation")) return WSISA_SA_CORRELATION;
  return -1;
}

int wsisa_analysis_run(const wsisa_analysis_request *r, wsisa_err *e) {
  analysis a;
  memset(&a, 0, sizeof a);
  a.samples_path = r->samples_path;
  a.outputs_path = r->outputs_path;
  a.dir = r->dir ? r->dir : ".";
  a.select = r->select;
  a.drop_missing = r->drop_missing;
  a.problem_path = r->problem_path;
  a.columns = r->columns;
  a.ncolumns = r->ncolumns;
  wsisa_study *study = NULL;
  char *problem_note = NULL;
  int rc = 0;
  if (r->problem_path) {
    /* no study: the problem's parameters, the method's defaults, and the
     * design whatever the samples hold */
    int method = r->method ? method_of(r->method) : -1;
    a.source = r->problem_path;
    if (method < 0)
      rc = wsisa_error(e, WSISA_EUSAGE, "--method %s: not morris, sobol or correlation",
                       r->method ? r->method : "(none)");
    char note[512];
    if (!rc) rc = wsisa__problem_load(r->problem_path, &a.space, note, sizeof note, e);
    if (!rc && note[0]) problem_note = strdup(note);
    if (!rc) wsisa_sa_opts_default(&a.opts, (wsisa_sa_method)method);
  } else {
    rc = wsisa_study_load(r->study_path, &study, e);
    a.study = study;
    if (!rc) a.source = study->path;
    if (!rc) rc = wsisa_study_design(study, a.select, &a.space, &a.opts, &a.design, e);
    if (!rc && study->sa.method == WSISA_SA_TWO_PHASE) a.phase = a.select ? 2 : 1;
  }
  if (!rc && !(a.report = open_memstream(&a.report_text, &a.report_len)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc && problem_note) fputs(problem_note, a.report);
  free(problem_note);
  if (!rc) rc = run(&a, e);
  if (a.report) fclose(a.report);
  /* the report once everything is written: a failed analysis prints nothing */
  if (!rc) fputs(a.report_text, stdout);
  free(a.report_text);
  json_decref(a.json);
  free(a.labels);
  free(a.ids);
  free(a.out_cols);
  free(a.numbered);
  free(a.y);
  wsisa_csv_free(a.outputs);
  wsisa_sa_design_free(a.design);
  wsisa_sa_space_free(a.space);
  wsisa_study_free(study);
  return rc;
}
