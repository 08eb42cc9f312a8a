/* What a study's run writes into its results folder besides the journal:
 * study.json and samples.csv first (what --resume reads back), then
 * metrics.csv and outputs.csv from the counts, run.json (provenance), and the
 * ranking printed at the end. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/run/run_internal.h"
#include "io/csv.h"

int wsisa__run_path(const wsisa__study_run *s, const char *name, char buf[WSISA_PATH_MAX],
                    wsisa_err *e) {
  return wsisa_path_fmt_err(buf, e, "%s/%s", s->dir, name);
}

uint64_t wsisa__run_id(const wsisa__study_run *s, size_t r) {
  return s->run_ids && r < s->ndesign ? s->run_ids[r] : r;
}

typedef struct run_metrics {
  double dice, jaccard, mean_area;
  wsisa_object_metrics obj;
  uint64_t both, run, ref, nuclei, ref_nuclei, match[WSISA_MATCH_FIELDS];
} run_metrics;

/* The metrics of the study's table (wsisa_study_metrics) that `wsisa run`
 * computes from the counts: the table's first rows, the pixel and count
 * metrics (always in metrics.csv), then those of the object matching. */
#define NRUN_METRICS 9
#define NPIXEL_METRICS 4 /* dice .. mean_area */

static run_metrics metrics_of(const wsisa__study_run *s, size_t r) {
  run_metrics m;
  memset(&m, 0, sizeof m);
  for (size_t t = 0; t < s->set.ntiles; t++) {
    const wsisa_counts *c = &s->counts[r * s->set.ntiles + t];
    m.both += c->both;
    m.run += c->run;
    m.ref += c->ref;
    m.nuclei += c->nuclei;
    m.ref_nuclei += c->ref_nuclei;
    for (int k = 0; k < WSISA_MATCH_FIELDS; k++) m.match[k] += c->match[k];
  }
  /* no nucleus, no mean area: a missing output the analysis reports by run id */
  m.mean_area = m.nuclei ? (double)m.run / (double)m.nuclei : NAN;
  /* two empty masks agree perfectly */
  m.dice = m.run + m.ref ? 2.0 * (double)m.both / (double)(m.run + m.ref) : 1.0;
  uint64_t uni = m.run + m.ref - m.both;
  m.jaccard = uni ? (double)m.both / (double)uni : 1.0;
  /* object Dice, F1 (precision, recall) and AJI from the slide's sums */
  wsisa_object_metrics_of(m.match, &m.obj);
  return m;
}

/* The values of the table's first NRUN_METRICS metrics, in its order. */
static void metric_values(const run_metrics *m, double v[NRUN_METRICS]) {
  const double all[NRUN_METRICS] = {m->dice,          m->jaccard,        (double)m->nuclei,
                                    m->mean_area,     m->obj.object_dice, m->obj.f1,
                                    m->obj.precision, m->obj.recall,      m->obj.aji};
  memcpy(v, all, sizeof all);
}

/* root (taken) as JSON text, written whole into path (wsisa_output_write). */
static int write_json(const char *path, json_t *root, size_t flags, wsisa_err *e) {
  char *text = root ? json_dumps(root, flags) : NULL;
  json_decref(root);
  if (!text) return wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  int rc = wsisa_output_write(path, text, strlen(text), e);
  free(text);
  return rc;
}

static long run_metric_index(const char *name) {
  long j = wsisa_study_metric_find(name);
  return j >= 0 && wsisa_study_metrics[j].kind != WSISA_STUDY_METRIC_FEATURE ? j : -1;
}

int wsisa__results_check_metrics(wsisa__study_run *s, const char *study_path, wsisa_err *e) {
  for (size_t m = 0; m < s->study->nmetrics; m++) {
    const char *name = s->study->metrics[m];
    long j = run_metric_index(name);
    int known = j >= 0 || wsisa_study_metric_feature(name) >= 0;
    if (!known && strncmp(name, WSISA_STUDY_WASSERSTEIN, strlen(WSISA_STUDY_WASSERSTEIN)) == 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: metric %s: no such feature (the columns of wsisa segment --features)",
                         study_path, name);
    if (!known)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: metric %s: wsisa run computes dice, jaccard, nucleus_count, "
                         "mean_area, object_dice, object_f1, object_precision, object_recall "
                         "and aji, and from features mean_haematoxylin and "
                         "wasserstein:<feature>",
                         study_path, name);
  }
  int features;
  wsisa__study_needs(s->study, &s->object_match, &features);
  return 0;
}

/* A run's value of study metric k. */
static double output_of(wsisa__study_run *s, size_t r, const double values[NRUN_METRICS],
                        size_t k) {
  const char *name = s->study->metrics[k];
  long j = run_metric_index(name);
  if (j >= 0) return values[j];
  return wsisa__run_features_metric(s->features, r, name);
}

/* Every metric of the study of run r, as JSON (null where undefined). */
static json_t *metrics_json(const wsisa__study_run *s, const double *out, size_t r) {
  const size_t nm = s->study->nmetrics;
  json_t *metrics = json_object();
  for (size_t k = 0; k < nm; k++) {
    double v = out[r * nm + k];
    json_object_set_new(metrics, s->study->metrics[k], isfinite(v) ? json_real(v) : json_null());
  }
  return metrics;
}

/* best.json: the run of the design that agrees best with the annotations, by
 * the study's first metric that has a better direction (higher Dice, F1,
 * AJI...; lower Wasserstein distance); ties go to the first run of the
 * design. Its run id, the 15 parameters (wsisa segment --params @best.json
 * takes them) and every metric of the study; then "defaults", the same
 * scores of the 15 defaults (their run id in the design, or null for the
 * run added to score them). 0 with nothing written when no metric has a
 * direction or no run has a value. */
static int write_best(wsisa_stage *stage, const char *path, wsisa__study_run *s,
                      const double *out, wsisa_err *e) {
  const size_t nm = s->study->nmetrics;
  long by = -1;
  for (size_t k = 0; k < nm && by < 0; k++)
    if (wsisa_study_metric_direction(s->study->metrics[k])) by = (long)k;
  if (by < 0) return 0;
  const int dir = wsisa_study_metric_direction(s->study->metrics[by]);
  long best = -1;
  for (size_t r = 0; r < s->ndesign; r++) {
    double v = out[r * nm + (size_t)by];
    if (isnan(v)) continue;
    if (best < 0 || (dir > 0 ? v > out[(size_t)best * nm + (size_t)by]
                             : v < out[(size_t)best * nm + (size_t)by]))
      best = (long)r;
  }
  /* the defaults' score beside the best one's */
  if (s->defaults_run >= 0) s->defaults_value = out[(size_t)s->defaults_run * nm + (size_t)by];
  if (best < 0) return 0;
  const size_t r = (size_t)best;
  json_t *params = json_object();
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    double v = s->params[r * WSISA_SEG_NPARAMS + p];
    json_object_set_new(params, wsisa_seg_param_name(p),
                        v == floor(v) && fabs(v) < 1e15 ? json_integer((json_int_t)v) : json_real(v));
  }
  json_t *defaults = json_null();
  if (s->defaults_run >= 0) {
    const size_t d = (size_t)s->defaults_run;
    const double v = out[d * nm + (size_t)by];
    defaults = json_pack("{s:o, s:o, s:o}", "run_id",
                         d < s->ndesign ? json_integer((json_int_t)wsisa__run_id(s, d))
                                        : json_null(),
                         "value", isfinite(v) ? json_real(v) : json_null(), "metrics",
                         metrics_json(s, out, d));
  }
  json_t *root = json_pack("{s:I, s:s, s:s, s:f, s:o, s:o, s:I, s:I, s:o}", "run_id",
                           (json_int_t)wsisa__run_id(s, r), "chosen_by",
                           s->study->metrics[by], "better", dir > 0 ? "higher" : "lower",
                           "value", out[r * nm + (size_t)by], "parameters", params, "metrics",
                           metrics_json(s, out, r), "runs", (json_int_t)s->ndesign, "tiles",
                           (json_int_t)s->set.ntiles, "defaults", defaults);
  char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(root);
  if (!text) return wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  const char *temp = wsisa_stage_add(stage, path, e);
  FILE *f = temp ? fopen(temp, "wb") : NULL;
  int rc = !temp ? (e && e->code ? e->code : WSISA_EIO)
           : !f  ? wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno))
                 : 0;
  if (f) {
    errno = 0;
    fputs(text, f);
    fputc('\n', f);
    rc = wsisa_output_close(f, temp, e);
  }
  free(text);
  return rc;
}

int wsisa__results_metrics(wsisa__study_run *s, const char *dir, wsisa_err *e) {
  char path[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX], best[WSISA_PATH_MAX];
  if (!dir) dir = s->dir;
  if (wsisa_path_fmt_err(path, e, "%s/metrics.csv", dir) ||
      wsisa_path_fmt_err(outputs, e, "%s/outputs.csv", dir) ||
      wsisa_path_fmt_err(best, e, "%s/best.json", dir))
    return WSISA_EUSAGE;
  const size_t nm = s->study->nmetrics;
  double *out = malloc((s->nruns ? s->nruns : 1) * (nm ? nm : 1) * sizeof *out);
  if (!out) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  /* they appear together or not at all: a folder never holds half a table */
  wsisa_stage stage = WSISA_STAGE_INIT;
  wsisa_csv_writer *w = NULL, *o = NULL;
  int rc = wsisa_csv_create_staged(&stage, path, &w, e);
  if (!rc) rc = wsisa_csv_create_staged(&stage, outputs, &o, e);
  if (rc) {
    if (w) wsisa_csv_close(w, NULL);
    wsisa_stage_abort(&stage);
    free(out);
    return rc;
  }
  const size_t shown = s->object_match ? NRUN_METRICS : NPIXEL_METRICS;
  wsisa_csv_text(w, "run_id");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_text(w, wsisa_seg_param_name(p));
  for (size_t k = 0; k < shown; k++) wsisa_csv_text(w, wsisa_study_metrics[k].name);
  const char *cols[] = {"pixels_both", "pixels_run", "pixels_reference",
                        "reference_nucleus_count"};
  for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) wsisa_csv_text(w, cols[c]);
  /* the matching's counts, which precision and recall come from */
  const char *objs[] = {"objects_matched", "objects_run_unmatched",
                        "objects_reference_unmatched"};
  const int obj_field[] = {WSISA_MATCH_TP, WSISA_MATCH_FP, WSISA_MATCH_FN};
  for (size_t c = 0; s->object_match && c < sizeof objs / sizeof *objs; c++)
    wsisa_csv_text(w, objs[c]);
  for (size_t k = 0; k < nm; k++)
    if (wsisa_study_metric_feature(s->study->metrics[k]) >= 0) wsisa_csv_text(w, s->study->metrics[k]);
  wsisa_csv_end_row(w);
  wsisa_csv_text(o, "run_id");
  for (size_t m = 0; m < nm; m++) wsisa_csv_text(o, s->study->metrics[m]);
  wsisa_csv_end_row(o);
  for (size_t r = 0; r < s->nruns; r++) {
    run_metrics m = metrics_of(s, r);
    double values[NRUN_METRICS];
    metric_values(&m, values);
    for (size_t k = 0; k < nm; k++) out[r * nm + k] = output_of(s, r, values, k);
    /* the defaults' run added after the design is in best.json only */
    if (r >= s->ndesign) continue;
    wsisa_csv_uint(w, r);
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_num(w, s->params[r * WSISA_SEG_NPARAMS + p]);
    for (size_t k = 0; k < shown; k++) wsisa_csv_num(w, values[k]);
    wsisa_csv_uint(w, m.both);
    wsisa_csv_uint(w, m.run);
    wsisa_csv_uint(w, m.ref);
    wsisa_csv_uint(w, m.ref_nuclei);
    for (size_t c = 0; s->object_match && c < sizeof objs / sizeof *objs; c++)
      wsisa_csv_uint(w, m.match[obj_field[c]]);
    for (size_t k = 0; k < nm; k++)
      if (wsisa_study_metric_feature(s->study->metrics[k]) >= 0)
        wsisa_csv_num(w, wsisa__run_features_metric(s->features, r, s->study->metrics[k]));
    wsisa_csv_end_row(w);
    wsisa_csv_uint(o, wsisa__run_id(s, r));
    for (size_t k = 0; k < nm; k++) wsisa_csv_num(o, out[r * nm + k]);
    wsisa_csv_end_row(o);
  }
  rc = wsisa_csv_close(w, e);
  int rc2 = wsisa_csv_close(o, e);
  rc = rc ? rc : rc2;
  if (!rc && s->set.annotated) rc = write_best(&stage, best, s, out, e);
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc) wsisa_stage_abort(&stage);
  free(out);
  return rc;
}

/* The design of a CSV-driven run, in canonical columns: design.csv marks the
 * results folder so --resume reads the same design back. */
static int write_csv_design(wsisa__study_run *s, const char *dir, const char *name,
                            wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  wsisa_csv_writer *w;
  int rc = wsisa_path_fmt_err(path, e, "%s/%s", dir, name);
  if (!rc) rc = wsisa_csv_create(path, &w, e);
  if (rc) return rc;
  wsisa_csv_text(w, "run_id");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_text(w, wsisa_seg_param_name(p));
  wsisa_csv_end_row(w);
  for (size_t r = 0; r < s->ndesign; r++) {
    wsisa_csv_uint(w, s->run_ids[r]);
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_num(w, s->params[r * WSISA_SEG_NPARAMS + p]);
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

int wsisa__results_samples(wsisa__study_run *s, const char *dir, wsisa_err *e) {
  if (!dir) dir = s->dir;
  if (s->from_csv) {
    int rc = write_csv_design(s, dir, "samples.csv", e);
    return rc ? rc : write_csv_design(s, dir, "design.csv", e);
  }
  char path[WSISA_PATH_MAX];
  wsisa_csv_writer *w;
  int rc = wsisa_path_fmt_err(path, e, "%s/samples.csv", dir);
  if (!rc) rc = wsisa_csv_create(path, &w, e);
  if (rc) return rc;
  wsisa_csv_text(w, "run_id");
  for (size_t c = 0; c < s->space->nparams; c++) wsisa_csv_text(w, s->space->params[c].name);
  wsisa_csv_end_row(w);
  for (size_t r = 0; r < s->ndesign; r++) {
    wsisa_csv_uint(w, r);
    for (size_t c = 0; c < s->design->nparams; c++)
      wsisa_csv_num(w, s->design->values[r * s->design->nparams + c]);
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

int wsisa__results_study(wsisa__study_run *s, wsisa_err *e) {
  char path[WSISA_PATH_MAX], *text = NULL;
  int rc = wsisa__run_path(s, "study.json", path, e);
  if (!rc) rc = wsisa_study_to_json(s->study, &text, e);
  if (rc) return rc;
  rc = wsisa_output_write(path, text, strlen(text), e);
  free(text);
  return rc;
}

static int write_provenance(wsisa__study_run *s, json_t *inputs, json_t *warnings,
                            json_t *resumes, wsisa_err *e);

/* ---- the reference ----------------------------------------------------------------- */

json_t *wsisa__results_reference_json(const wsisa__study_run *s) {
  if (!s->set.annotated) return json_pack("{s:s}", "kind", "default_parameters");
  json_t *inputs = json_array();
  for (size_t i = 0; i < s->set.ninputs; i++) {
    const wsisa__study_input *in = &s->set.inputs[i];
    json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "input", in->path, "kind",
                          in->annot ? wsisa_annot_kind_name(in->annot->kind) : "none",
                          "tiles_annotated", (json_int_t)in->ntiles, "tiles_left_out",
                          (json_int_t)in->tiles_left_out);
    if (in->annot) {
      char crc[16];
      snprintf(crc, sizeof crc, "%08x", (unsigned)in->annot_crc32);
      json_object_set_new(o, "file", json_string(in->annot->path));
      json_object_set_new(o, "bytes", json_integer((json_int_t)in->annot_bytes));
      json_object_set_new(o, "crc32", json_string(crc));
      json_object_set_new(o, "nuclei", json_integer((json_int_t)in->annot_objects));
    }
    json_array_append_new(inputs, o);
  }
  return json_pack("{s:s, s:I, s:I, s:o}", "kind", "annotation", "tiles_annotated",
                   (json_int_t)s->set.ntiles, "tiles_left_out", (json_int_t)s->set.tiles_left_out,
                   "inputs", inputs);
}

static char *reference_text(const wsisa__study_run *s) {
  json_t *root = wsisa__results_reference_json(s);
  char *text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
  json_decref(root);
  char *line = text ? realloc(text, strlen(text) + 2) : NULL;
  if (!line) {
    free(text);
    return NULL;
  }
  strcat(line, "\n");
  return line;
}

int wsisa__results_reference(wsisa__study_run *s, const char *dir, wsisa_err *e) {
  if (!s->set.annotated) return 0;
  char path[WSISA_PATH_MAX], *text = reference_text(s);
  int rc = wsisa_path_fmt_err(path, e, "%s/reference.json", dir ? dir : s->dir);
  if (!rc && !text) rc = wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  if (!rc) rc = wsisa_output_write(path, text, strlen(text), e);
  free(text);
  return rc;
}

int wsisa__results_differs(const char *path, const char *made, const char *what, char *why,
                           size_t cap) {
  char *a = NULL, *b = NULL;
  size_t la = 0, lb = 0;
  wsisa_err err = WSISA_ERR_INIT;
  int differs = 0;
  if (wsisa_text_read(path, WSISA_TEXT_MAX_TABLE, "a results file", &a, &la, &err)) {
    snprintf(why, cap, "%s", err.msg);
    differs = 1;
  } else if (!wsisa_text_read(made, WSISA_TEXT_MAX_TABLE, "a results file", &b, &lb, NULL) &&
             (la != lb || memcmp(a, b, la) != 0)) {
    size_t line = 1, i = 0;
    while (i < la && i < lb && a[i] == b[i]) line += a[i++] == '\n';
    snprintf(why, cap, "%s:%zu: not what %s gives", path, line, what);
    differs = 1;
  }
  free(a);
  free(b);
  return differs;
}

int wsisa__results_reference_check(wsisa__study_run *s, wsisa_err *e) {
  if (!s->set.annotated) return 0;
  char path[WSISA_PATH_MAX], *text = reference_text(s);
  int rc = wsisa__run_path(s, "reference.json", path, e);
  if (rc) {
    free(text);
    return rc;
  }
  if (!text) return wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  FILE *f = NULL;
  wsisa_err kind = WSISA_ERR_INIT;
  if (wsisa_file_fopen(path, &f, &kind) && access(path, F_OK) == 0) {
    free(text);
    return wsisa_error(e, WSISA_EFORMAT, "%s", kind.msg);
  }
  size_t len = strlen(text), got = 0;
  char *was = f ? malloc(len + 2) : NULL;
  if (was) got = fread(was, 1, len + 1, f);
  int same = was && got == len && memcmp(was, text, len) == 0;
  int missing = !f;
  if (f) fclose(f);
  free(was);
  free(text);
  if (missing)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s: missing; the annotations the run began with are unknown (run the "
                       "study again into a new folder)",
                       path);
  if (!same)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: the annotations are not those the run began with (a file changed, "
                       "or covers other tiles); run the study again into a new folder",
                       path);
  return 0;
}

static long peak_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* Predicted (at the start, engine/estimate/estimate.c) against actual: how good the
 * estimate was. The makespan is the units' execution, seconds.execute. */
static json_t *estimate_json(const wsisa__study_run *s, long rss_kib) {
  const wsisa__run_estimate *p = &s->estimated;
  if (!p->made) return json_null();
  double actual_rss = (double)rss_kib * 1024.0;
  json_t *objects = json_pack("{s:b, s:o, s:s}", "on", p->object_reuse, "share_reused",
                              p->object_share >= 0 ? json_real(p->object_share) : json_null(),
                              "how", p->object_source);
  json_t *o = json_pack(
      "{s:{s:f, s:f, s:f, s:f, s:I, s:I, s:i, s:i, s:I, s:f, s:s}, s:{s:f, s:I},"
      " s:{s:f, s:f}}",
      "predicted", "makespan_s", p->makespan, "work_s", p->work, "efficiency", p->efficiency,
      "cpu_hours", p->cpu_hours, "peak_rss_bytes", (json_int_t)p->peak_rss,
      "baseline_rss_bytes", (json_int_t)p->baseline_rss, "ranks", p->ranks, "workers_per_rank",
      p->workers, "active_paths", (json_int_t)p->active_paths, "uncalibrated_share",
      p->uncalibrated, "uncalibrated", p->uncalibrated_ops, "actual", "makespan_s", s->t_exec,
      "peak_rss_bytes", (json_int_t)actual_rss, "error_percent", "makespan",
      s->t_exec > 0 ? 100.0 * (p->makespan - s->t_exec) / s->t_exec : 0.0, "peak_rss",
      actual_rss > 0 ? 100.0 * ((double)p->peak_rss - actual_rss) / actual_rss : 0.0);
  json_object_set_new(json_object_get(o, "predicted"), "interpolated_share",
                      json_real(p->interpolated));
  json_object_set_new(json_object_get(o, "predicted"), "object_reuse", objects);
  json_object_set_new(json_object_get(o, "predicted"), "level_costs_how",
                      json_string(p->level_source));
  json_object_set_new(json_object_get(o, "predicted"), "busy_factor", json_real(p->busy_factor));
  json_object_set_new(json_object_get(o, "predicted"), "busy_workers", json_real(p->busy_workers));
  json_object_set_new(json_object_get(o, "predicted"), "busy_workers_how",
                      json_string(p->busy_source));
  json_object_set_new(json_object_get(o, "predicted"), "tile_reads_how",
                      json_string(p->read_source));
  json_object_set_new(json_object_get(o, "predicted"), "fresh_memory_s",
                      json_real(p->fresh_seconds));
  json_object_set_new(json_object_get(o, "predicted"), "fresh_memory_how",
                      json_string(p->fresh_source));
  return o;
}

/* What the stain check measured on an input (engine/workflow/stain.c), and
 * into `warnings` what it doubted, or that it was turned off. */
static json_t *stain_json(const wsisa__study_input *in, json_t *warnings) {
  if (!in->stain_checked) {
    char w[WSISA_NOTE_MAX];
    snprintf(w, sizeof w,
             "%s: the stain check is turned off (inputs.stain_check false): not checked to be "
             "bright-field H&E, which the segmentation needs",
             in->path);
    json_array_append_new(warnings, json_string(w));
    return json_pack("{s:b}", "checked", 0);
  }
  if (in->stain_warning) json_array_append_new(warnings, json_string(in->stain_warning));
  wsisa__stain_measures m;
  wsisa__stain_measure(&in->stain, &m);
  json_t *o = json_pack("{s:b, s:I, s:I, s:I, s:b, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                        "checked", 1, "tiles", (json_int_t)m.tiles, "pixels",
                        (json_int_t)m.pixels, "tissue_pixels", (json_int_t)m.tissue,
                        "dark_background", m.dark_background, "tissue_share", m.tissue_share,
                        "mean_optical_density", m.mean_od, "darkest_optical_density", m.dark_od,
                        "colourless_share", m.colourless, "brightest_grey", m.white,
                        "brightest_level", m.light, "brown_share", m.brown);
  if (m.vectors)
    json_object_set_new(
        o, "vectors",
        json_pack("{s:[f, f, f], s:[f, f, f], s:f, s:f, s:f, s:b, s:f}", "haematoxylin",
                  m.haematoxylin[0], m.haematoxylin[1], m.haematoxylin[2], "eosin", m.eosin[0],
                  m.eosin[1], m.eosin[2], "residual_share", m.residual, "eosin_green",
                  m.eosin_green, "eosin_minor", m.eosin_minor, "eosin_found", m.eosin_found,
                  "swap", m.swap));
  else
    json_object_set_new(o, "vectors", json_null());
  return o;
}

/* One input's line of run.json: how it was read (MPP and its source, level,
 * factor), what the stain check saw, and the reference's nucleus density;
 * a warning for a density so low the indices describe noise. */
static json_t *input_json(const wsisa__study_run *s, const wsisa__study_input *in,
                          json_t *warnings) {
  const wsisa_scale *sc = &in->scale;
  uint64_t nuclei = 0, tissue = 0;
  /* run 0's row: every run has the same reference */
  for (size_t t = in->first_tile; t < in->first_tile + in->ntiles; t++) {
    nuclei += s->counts[t].ref_nuclei;
    tissue += s->counts[t].ref_tissue;
  }
  /* exactly the tissue the reference segmented, at the MPP segmented */
  const double tissue_mm2 = (double)tissue * sc->target_mpp * sc->target_mpp * 1e-6;
  double density = tissue_mm2 > 0 ? (double)nuclei / tissue_mm2 : 0;
  json_t *o = json_pack("{s:s, s:s, s:s, s:f, s:i, s:f, s:f, s:b, s:f, s:I, s:f, s:I, s:f}",
                        "path", in->path, "kind", wsisa_input_kind_name(in->kind),
                        "mpp_source", wsisa_mpp_source_name(sc->source), "target_mpp",
                        sc->target_mpp, "level", sc->level, "level_downsample",
                        sc->level_downsample, "factor", sc->factor, "resampled",
                        sc->factor_q != WSISA_SCALE_ONE, "level0_per_pixel",
                        wsisa_scale_step(sc), "tiles", (json_int_t)in->ntiles, "tissue_mm2",
                        tissue_mm2, "reference_nuclei", (json_int_t)nuclei,
                        "reference_nuclei_per_mm2", density);
  /* the um per pixel read, which tissue_mm2 and the density are counted in */
  json_object_set_new(o, "pixel_mpp", json_real(wsisa_scale_pixel_mpp(sc)));
  /* a slide's tiles, by their index in its grid (`wsisa tiles --json`'s), and
   * how inputs.tiles chose them */
  if (in->grid_index) {
    json_t *idx = json_array();
    for (size_t t = 0; t < in->ntiles; t++)
      json_array_append_new(idx, json_integer((json_int_t)in->grid_index[t]));
    json_object_set_new(o, "tiles_chosen",
                        json_pack("{s:s, s:o}", "by",
                                  wsisa_study_tiles_kind_name(s->study->inputs.tiles.kind),
                                  "indices", idx));
  }
  /* how its tiles were read: the halo, and the colour statistics they were
   * normalized with (the slide's, or each tile's own) */
  json_object_set_new(o, "halo", json_integer(in->kind == WSISA_INPUT_SLIDE ? s->halo : 0));
  if (in->has_stats)
    json_object_set_new(
        o, "normalization",
        json_pack("{s:s, s:f, s:[f, f, f], s:[f, f, f]}", "statistics", "slide", "pixels",
                  in->stats[WSISA_STATS_COUNT], "mean", in->stats[WSISA_STATS_MEAN],
                  in->stats[WSISA_STATS_MEAN + 1], in->stats[WSISA_STATS_MEAN + 2], "std",
                  in->stats[WSISA_STATS_STD], in->stats[WSISA_STATS_STD + 1],
                  in->stats[WSISA_STATS_STD + 2]));
  else
    json_object_set_new(o, "normalization", json_pack("{s:s}", "statistics", "tile"));
  /* an image without a given MPP is taken as if at the target resolution */
  json_object_set_new(o, "mpp", sc->source == WSISA_MPP_NONE ? json_null() : json_real(sc->mpp));
  json_object_set_new(o, "stain", stain_json(in, warnings));
  if (s->set.annotated) {
    /* the annotation's nuclei: as many as someone drew, no density to judge */
    json_object_set_new(o, "tiles_left_out", json_integer((json_int_t)in->tiles_left_out));
    json_object_set_new(o, "reference", json_string(in->annot ? wsisa_annot_kind_name(in->annot->kind)
                                                              : "none"));
  } else if (tissue_mm2 > 0 && density < WSISA_MIN_NUCLEI_PER_MM2) {
    char w[WSISA_NOTE_MAX];
    snprintf(w, sizeof w,
             "%s: the reference segmentation found %llu nuclei in %.3g mm2 of tissue (%.0f per "
             "mm2, fewer than %.0f): not H&E tissue at %g um/pixel? the indices may describe "
             "noise",
             in->path, (unsigned long long)nuclei, tissue_mm2, density,
             WSISA_MIN_NUCLEI_PER_MM2, wsisa_scale_pixel_mpp(sc));
    wsisa_log(WSISA_LOG_WARN, "run", "%s", w);
    json_array_append_new(warnings, json_string(w));
  }
  return o;
}

/* "2026-11-24T02:03:24+0100", local time. */
static json_t *now_json(void) {
  char stamp[40] = "";
  time_t t = time(NULL);
  struct tm tm;
  if (localtime_r(&t, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return json_string(stamp);
}

int wsisa__results_provenance(wsisa__study_run *s, json_t *rewritten, wsisa_err *e) {
  char run_json[WSISA_PATH_MAX];
  int rc = wsisa__run_path(s, "run.json", run_json, e);
  if (rc) return rc;
  json_t *inputs = json_array(), *warnings = json_array();
  for (size_t i = 0; i < s->set.ninputs; i++)
    json_array_append_new(inputs, input_json(s, &s->set.inputs[i], warnings));
  /* A resume: an earlier run.json holds the figures of the run that did the
   * work; one that has nothing left to do keeps them and only says it came. */
  json_t *earlier = wsisa_file_check(run_json, NULL) == 0 ? json_load_file(run_json, 0, NULL) : NULL;
  json_t *resumes = earlier ? json_incref(json_object_get(earlier, "resumes")) : NULL;
  if (!json_is_array(resumes)) {
    json_decref(resumes);
    resumes = json_array();
  }
  if (earlier || s->units_run < s->units_total) {
    json_t *entry = json_pack("{s:o, s:I, s:I, s:f}", "at", now_json(), "units_run",
                              (json_int_t)s->units_run, "units_total",
                              (json_int_t)s->units_total, "seconds", wsisa_now() - s->t_start);
    if (entry && json_array_size(rewritten)) json_object_set(entry, "rewritten", rewritten);
    json_array_append_new(resumes, entry);
  }
  json_decref(rewritten);
  if (earlier && json_is_object(earlier) && s->units_run == 0) {
    json_object_set_new(earlier, "resumes", resumes);
    json_decref(inputs);
    json_decref(warnings);
    return write_json(run_json, earlier, JSON_INDENT(2) | JSON_REAL_PRECISION(8), e);
  }
  json_decref(earlier);
  return write_provenance(s, inputs, warnings, resumes, e);
}

/* Where the units and their tasks ran with CPU and OpenCL workers (the
 * placement asked, the one in force: null with one kind of worker), and what
 * crossed the bus to and from the OpenCL devices (null without StarPU's
 * profiling, STARPU_PROFILING=1). */
static json_t *placement_json(const wsisa__study_run *s) {
  const wsisa_exec_stats *st = &s->stats;
  const char *in_force = st->placed_by_unit        ? wsisa_placement_names[WSISA_PLACEMENT_UNIT]
                         : st->tasks_submitted > 0 ? wsisa_placement_names[WSISA_PLACEMENT_TASK]
                                                   : NULL;
  json_t *p = json_pack(
      "{s:s, s:o, s:{s:I, s:I}, s:{s:I, s:I}, s:{s:I, s:I, s:I, s:I, s:I, s:I}}", "asked",
      wsisa_placement_names[s->study->execution.placement], "in_force",
      in_force ? json_string(in_force) : json_null(), "units", "cpu",
      (json_int_t)st->units_on[WSISA_KIND_CPU], "opencl",
      (json_int_t)st->units_on[WSISA_KIND_OPENCL], "tile_stages", "cpu",
      (json_int_t)st->tile_stages_on[WSISA_KIND_CPU], "opencl",
      (json_int_t)st->tile_stages_on[WSISA_KIND_OPENCL], "tasks", "submitted",
      (json_int_t)st->tasks_submitted, "ended", (json_int_t)st->tasks_ended, "cpu",
      (json_int_t)st->tasks_on[WSISA_KIND_CPU], "opencl",
      (json_int_t)st->tasks_on[WSISA_KIND_OPENCL], "off_unit_kind",
      (json_int_t)st->tasks_astray, "one_place", (json_int_t)st->tasks_fixed);
  wsisa_bus_traffic bus;
  json_object_set_new(p, "bus",
                      wsisa_runtime_bus_traffic(&bus)
                          ? json_null()
                          : json_pack("{s:I, s:I, s:I, s:I}", "to_device_bytes",
                                      (json_int_t)bus.to_device_bytes, "from_device_bytes",
                                      (json_int_t)bus.from_device_bytes, "to_device_transfers",
                                      (json_int_t)bus.to_device_transfers,
                                      "from_device_transfers",
                                      (json_int_t)bus.from_device_transfers));
  return p;
}

static int write_provenance(wsisa__study_run *s, json_t *inputs, json_t *warnings,
                            json_t *resumes, wsisa_err *e) {
  int major, minor, release;
  starpu_get_version(&major, &minor, &release);
  char starpu_v[32], path[WSISA_PATH_MAX];
  snprintf(starpu_v, sizeof starpu_v, "%d.%d.%d", major, minor, release);
  const wsisa_study_reuse_opts *ro = &s->study->reuse;
  /* read once: run.json's figure and the estimate's actual are the same peak */
  const long peak_kib = peak_rss_kib();
  json_t *root = json_pack(
      "{s:s, s:s, s:s, s:s, s:{s:i, s:i}, s:{s:s, s:i, s:i, s:i, s:I}, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:f},"
      " s:{s:f, s:f, s:f}, s:I, s:I, s:I}",
      "wsisa", WSISA_VERSION, "starpu", starpu_v, "scheduler", wsisa_runtime_sched(),
      "scheduler_from", wsisa_runtime_sched_from(),
      "workers", "cpu", wsisa_runtime_ncpu(), "opencl", wsisa_runtime_nopencl(), "reuse",
      "strategy", wsisa_reuse_strategy_name(ro->strategy), "max_buckets", ro->max_buckets,
      "max_bucket_size", ro->max_bucket_size, "active_paths", ro->active_paths, "buckets",
      (json_int_t)s->buckets->n_buckets, "tasks", "executed", (json_int_t)s->stats.tasks,
      "no_reuse", (json_int_t)s->tasks_no_reuse, "skipped_background",
      (json_int_t)s->stats.skipped, "tile_stages", (json_int_t)s->stats.tile_stages,
      "distinct_runs", (json_int_t)s->plan->n_distinct, "lower_bound_per_tile",
      (json_int_t)wsisa_reuse_tree_tasks(s->plan->tree), "reuse_percent",
      s->tasks_no_reuse ? 100.0 * (1.0 - (double)s->stats.tasks / (double)s->tasks_no_reuse) : 0.0,
      "seconds", "plan", s->t_plan, "execute", s->t_exec, "total", wsisa_now() - s->t_start,
      "peak_rss_kib", (json_int_t)peak_kib, "peak_active_paths",
      (json_int_t)s->stats.peak_paths, "runs", (json_int_t)s->ndesign);
  /* with annotations the defaults run beside a design without them */
  json_object_set_new(root, "defaults_run_added", json_boolean(s->nruns > s->ndesign));
  json_object_set_new(root, "tiles", json_integer((json_int_t)s->set.ntiles));
  json_object_set_new(root, "tiles_opened_ahead",
                      json_integer((json_int_t)s->stats.tiles_opened_ahead));
  json_object_set_new(json_object_get(root, "seconds"), "submitter_cpu",
                      json_real(s->stats.submitter_cpu_s));
  /* how the C library's allocator was set (core/buffers.c), and the page
   * faults while the units ran: a freed buffer handed back to the kernel is
   * faulted in again at its next use */
  json_object_set_new(root, "allocator", json_string(wsisa_runtime_allocator()));
  json_object_set_new(root, "page_faults",
                      json_pack("{s:I, s:I}", "minor", (json_int_t)s->faults_minor, "major",
                                (json_int_t)s->faults_major));
  /* the CPU workers against those asked and the cores offered (core/runtime.c) */
  const wsisa_runtime_cpus *rc_cpus = wsisa_runtime_cpus_started();
  json_t *wk = json_object_get(root, "workers");
  json_object_set_new(wk, "cpu_asked", rc_cpus->asked >= 0 ? json_integer(rc_cpus->asked) : json_null());
  json_object_set_new(wk, "cores", json_integer(rc_cpus->cores.offered));
  json_object_set_new(wk, "cores_limited_by", json_string(rc_cpus->cores.limit));
  json_object_set_new(wk, "starpu_maxcpus", json_integer(rc_cpus->maxcpus));
  json_object_set_new(wk, "starpu_blocking_drivers", json_boolean(wsisa_runtime_blocking_drivers()));
  json_object_set_new(wk, "starpu_last_worker_sleeps",
                      json_boolean(wsisa_runtime_last_worker_sleeps()));
  /* where the CPU workers run (OS core numbers, as taskset's): by the
   * affinity mask, StarPU's own binding, the user's, or unbound */
  json_object_set_new(wk, "binding", json_string(rc_cpus->binding ? rc_cpus->binding : "StarPU"));
  json_t *bound = json_array();
  for (int i = 0; i < rc_cpus->nbound; i++) json_array_append_new(bound, json_integer(rc_cpus->bound[i]));
  json_object_set_new(wk, "bound_cores", bound);
  if (rc_cpus->warning[0]) json_array_append_new(warnings, json_string(rc_cpus->warning));
  /* object reuse (docs/architecture.md): the units of levels 6 and 7 looked
   * at and taken from the tiles' stores, what the stores held and evicted */
  const wsisa_exec_stats *st = &s->stats;
  json_object_set_new(
      root, "objects",
      json_pack("{s:b, s:I, s:I, s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I}, s:I, s:I, s:I}",
                "object_reuse", ro->object_reuse, "seen",
                (json_int_t)(st->objects_seen[0] + st->objects_seen[1]), "reused",
                (json_int_t)(st->objects_reused[0] + st->objects_reused[1]), "level6_clusters",
                "seen", (json_int_t)st->objects_seen[0], "reused", (json_int_t)st->objects_reused[0],
                "area", (json_int_t)st->objects_area[0], "area_reused",
                (json_int_t)st->objects_area_reused[0], "level7_groups", "seen",
                (json_int_t)st->objects_seen[1], "reused", (json_int_t)st->objects_reused[1], "area",
                (json_int_t)st->objects_area[1], "area_reused", (json_int_t)st->objects_area_reused[1],
                "store_bytes_peak",
                (json_int_t)st->object_store_peak, "store_bytes_limit",
                (json_int_t)s->object_store_bytes, "evictions",
                (json_int_t)st->object_evictions));
  json_object_set_new(root, "placement", placement_json(s));
  json_object_set_new(root, "reference", wsisa__results_reference_json(s));
  /* ranks and tiles: how far the units of a tile spread over ranks (units
   * away from the tile's first rank, the stages they opened, what their
   * stores looked at and found; 0 for one process) */
  json_object_set_new(
      root, "mpi",
      json_pack("{s:i, s:i, s:i, s:b, s:I, s:I, s:{s:I, s:I}}", "ranks", wsisa_dist_size(),
                "ranks_lost", wsisa_dist_lost(), "workers", s->workers, "tile_affinity",
                st->tile_affinity, "units_moved", (json_int_t)st->units_moved,
                "tile_stages_moved", (json_int_t)st->tile_stages_moved, "objects_moved", "seen",
                (json_int_t)st->objects_seen_moved, "reused",
                (json_int_t)st->objects_reused_moved));
  const wsisa_machine *mc = &s->machine;
  json_object_set_new(root, "machine",
                      json_pack("{s:s, s:i, s:i, s:i, s:I, s:I}", "cpu_model", mc->cpu_model,
                                "cores", mc->cores, "hardware_threads", mc->pus, "numa_nodes",
                                mc->numa_nodes, "memory_total_bytes",
                                (json_int_t)mc->memory_total, "memory_available_bytes",
                                (json_int_t)mc->memory_available));
  json_object_set_new(root, "memory_limit_bytes",
                      json_integer((json_int_t)s->study->execution.memory_limit));
  json_object_set_new(root, "baseline_rss_kib", json_integer((json_int_t)(s->baseline_rss / 1024)));
  json_object_set_new(json_object_get(root, "reuse"), "cost_model",
                      json_string(s->cost_source ? s->cost_source : "tasks"));
  if (s->cost_source && strcmp(s->cost_source, "tasks") != 0) {
    json_t *lc = json_array();
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) json_array_append_new(lc, json_real(s->level_cost[l]));
    json_object_set_new(json_object_get(root, "reuse"), "level_costs", lc);
  }
  json_object_set_new(root, "estimate", estimate_json(s, peak_kib));
  json_object_set_new(root, "inputs", inputs);
  json_object_set_new(root, "warnings", warnings);
  /* this process's figures: after a resume, those of the units it ran */
  json_object_set_new(root, "resumes", resumes);
  int rc = wsisa__run_path(s, "run.json", path, e);
  if (rc) {
    json_decref(root);
    return rc;
  }
  return write_json(path, root, JSON_INDENT(2) | JSON_REAL_PRECISION(8), e);
}

int wsisa__results_indexed(const wsisa__study_run *s) {
  return !s->from_csv && !(s->design && s->design->ndims == 0);
}

/* The ranking the user reads first: parameters by their main index for the
 * first metric (MOAT mu*, VBD ST, correlation |PRCC|). */
void wsisa__results_print_top(const wsisa__study_run *s) {
  char path[WSISA_PATH_MAX];
  wsisa_csv *c = NULL;
  if (wsisa__run_path(s, "indices.csv", path, NULL) ||
      wsisa_csv_read_table(path, "output", &c, NULL))
    return;
  static const char *const keys[] = {"mu_star", "ST", "prcc"};
  long col = -1, pcol = wsisa_csv_column(c, "parameter");
  const char *key = NULL;
  for (int i = 0; i < 3 && col < 0; i++) col = wsisa_csv_column(c, key = keys[i]);
  if (col < 0 || pcol < 0) {
    wsisa_csv_free(c);
    return;
  }
  const char *metric = c->nrows ? wsisa_csv_cell(c, 0, 0) : "";
  size_t n = 0, order[64];
  double v[64];
  for (size_t r = 0; r < c->nrows && n < 64; r++) {
    if (strcmp(wsisa_csv_cell(c, r, 0), metric) != 0) continue;
    double x;
    if (wsisa_csv_number(c, r, (size_t)col, &x, NULL) || !isfinite(x)) continue;
    v[n] = fabs(x);
    order[n] = r;
    n++;
  }
  /* insertion sort, largest first: n is at most 15 or so */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j] > v[j - 1]; j--) {
      double tv = v[j];
      v[j] = v[j - 1], v[j - 1] = tv;
      size_t to = order[j];
      order[j] = order[j - 1], order[j - 1] = to;
    }
  printf("top parameters for %s by %s:", metric, key);
  for (size_t i = 0; i < n && i < 5; i++)
    printf(" %s (%.3g)%s", wsisa_csv_cell(c, order[i], (size_t)pcol), v[i], i + 1 < n && i < 4 ? "," : "");
  printf("\n");
  wsisa_csv_free(c);
}
