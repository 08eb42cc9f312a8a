/* `wsisa run --study S.json -o DIR`: the whole study. Tiles, design, reuse
 * plan, execution on StarPU, comparison with the reference, metrics, indices.
 * Finished units go to a journal (flushed and synced), so a killed run goes on
 * with `wsisa run --resume DIR` and ends with the same outputs. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/engine_private.h"
#include "engine/engine.h"
#include "io/csv.h"
#include "io/io.h"
#include "io/study.h"
#include "reuse/reuse.h"
#include "sa/sa.h"

typedef struct run_opts {
  const char *study_path, *out, *resume, *samples;
  long max_buckets, max_bucket_size, active_paths, unit_timeout;
  const char *reuse, *memory_limit;
} run_opts;

typedef struct run_state {
  wsisa_study *study;
  char dir[4096];
  wsisa_tile_ref *tiles;
  char **tile_names;
  size_t ntiles;
  wsisa_sa_space *space;
  wsisa_sa_opts sa;
  wsisa_sa_design *design;
  size_t nruns;
  double *params;           /* nruns x 15, canonical order */
  uint64_t *run_ids;        /* a design read from CSV keeps its run ids; NULL: 0..n-1 */
  int from_csv;
  wsisa_reuse_design *plan;
  wsisa_reuse_buckets *buckets;
  int workers;              /* StarPU workers over every MPI rank */
  wsisa_counts *counts;     /* nruns x ntiles */
  uint8_t *have;            /* nruns x ntiles: counts known */
  FILE *journal;
  double t_plan, t_exec, t_start;
  wsisa_exec_stats stats;
  uint64_t tasks_no_reuse;
  int object_match; /* a metric needs the objects matched (object_dice) */
  wsisa_machine machine;
  wsisa__run_features *features; /* NULL: no metric needs the feature stage */
} run_state;

static void path_in(const run_state *s, const char *name, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", s->dir, name);
}

/* ---- tiles ----------------------------------------------------------------- */

static int add_tile(run_state *s, const wsisa_tile_ref *t, const char *name, wsisa_err *e) {
  wsisa_tile_ref *nt = realloc(s->tiles, (s->ntiles + 1) * sizeof *nt);
  if (nt) s->tiles = nt;
  char **nn = realloc(s->tile_names, (s->ntiles + 1) * sizeof *nn);
  if (nn) s->tile_names = nn;
  if (!nt || !nn || !(s->tile_names[s->ntiles] = strdup(name)))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->tiles[s->ntiles++] = *t;
  return 0;
}

static int collect_tiles(run_state *s, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  int rc = 0;
  char name[4400];
  for (size_t i = 0; i < in->nslides && !rc; i++) {
    wsisa_slide *slide = NULL;
    wsisa_grid *g = NULL;
    if ((rc = wsisa_slide_open(in->slides[i], &slide, e))) break;
    rc = wsisa_grid_make(slide, in->level, in->tile_size, in->overlap, &g, e);
    for (size_t t = 0; !rc && t < g->ntiles; t++) {
      const wsisa_tile *tl = &g->tiles[t];
      if (in->tissue_only && !tl->tissue) continue;
      wsisa_tile_ref ref = {in->slides[i], 1, in->level, tl->x, tl->y, tl->width, tl->height};
      snprintf(name, sizeof name, "%s#L%d:%lld,%lld,%d,%d", in->slides[i], in->level,
               (long long)tl->x, (long long)tl->y, tl->width, tl->height);
      rc = add_tile(s, &ref, name, e);
    }
    wsisa_grid_free(g);
    wsisa_slide_close(slide);
  }
  for (size_t i = 0; i < in->nimages && !rc; i++) {
    wsisa_image *img = NULL;
    if ((rc = wsisa_image_read_rgb(in->images[i], &img, e))) break;
    wsisa_tile_ref ref = {in->images[i], 0, 0, 0, 0, img->width, img->height};
    wsisa_image_free(img);
    rc = add_tile(s, &ref, in->images[i], e);
  }
  if (!rc && s->ntiles == 0)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs: no tile to segment (no tissue found?)",
                     s->study->path);
  return rc;
}

/* ---- design and plan --------------------------------------------------------- */

/* A design made elsewhere (wsisa sample, another SA tool): one row per run,
 * run_id first, segmentation parameters by their canonical names; the
 * parameters it does not name keep their defaults. */
static int design_from_csv(run_state *s, const char *path, wsisa_err *e) {
  wsisa_csv *c = NULL;
  int rc = wsisa_csv_read(path, &c, e);
  if (rc) return rc;
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

static int make_design(run_state *s, const char *samples, wsisa_err *e) {
  if (samples) {
    s->from_csv = 1;
    return design_from_csv(s, samples, e);
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

/* The none strategy: every run alone, its own chain of seven tasks, even when
 * two runs are equal. */
static int buckets_none(run_state *s, const uint64_t *keys, wsisa_err *e) {
  wsisa_reuse_buckets *b = calloc(1, sizeof *b);
  if (!b) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->buckets = b;
  b->n_buckets = s->nruns;
  b->k = WSISA_SEG_LEVELS;
  b->start = calloc(s->nruns + 1, sizeof *b->start);
  b->instances = calloc(s->nruns, sizeof *b->instances);
  b->trees = calloc(s->nruns, sizeof *b->trees);
  b->tasks = calloc(s->nruns, sizeof *b->tasks);
  b->cost = calloc(s->nruns, sizeof *b->cost);
  if (!b->start || !b->instances || !b->trees || !b->tasks || !b->cost)
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t r = 0; r < s->nruns; r++) {
    b->start[r + 1] = r + 1;
    b->instances[r] = r;
    if (wsisa_reuse_tree_build(keys, WSISA_SEG_LEVELS, &r, 1, &b->trees[r]))
      return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    b->tasks[r] = WSISA_SEG_LEVELS;
    b->cost[r] = WSISA_SEG_LEVELS;
  }
  return 0;
}

static int make_plan(run_state *s, wsisa_err *e) {
  double t0 = wsisa_now();
  size_t level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = (size_t)wsisa_seg_param_level(p) - 1;
  uint64_t *keys = malloc(s->nruns * WSISA_SEG_LEVELS * sizeof *keys);
  if (!keys) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  int rc = wsisa_reuse_keys_from_values(s->params, s->nruns, WSISA_SEG_NPARAMS, level,
                                        WSISA_SEG_LEVELS, keys);
  if (!rc) rc = wsisa_reuse_design_new(keys, s->nruns, WSISA_SEG_LEVELS, &s->plan);
  if (rc) {
    free(keys);
    return wsisa_error(e, rc, "cannot analyse the design for reuse");
  }
  const wsisa_study_reuse_opts *ro = &s->study->reuse;
  if (ro->strategy == WSISA_STUDY_REUSE_NONE) {
    rc = buckets_none(s, keys, e);
  } else {
    wsisa_reuse_opts o;
    memset(&o, 0, sizeof o);
    static const wsisa_reuse_strategy map[] = {WSISA_REUSE_STAGE, WSISA_REUSE_STAGE,
                                               WSISA_REUSE_NAIVE, WSISA_REUSE_SCA,
                                               WSISA_REUSE_RTMA,  WSISA_REUSE_TRTMA};
    o.strategy = map[ro->strategy];
    o.max_buckets = ro->max_buckets > 0 ? (size_t)ro->max_buckets : (size_t)(3 * s->workers);
    o.max_bucket_size = ro->max_bucket_size > 0 ? (size_t)ro->max_bucket_size : 8;
    o.trtma_last_phase = WSISA_REUSE_BALANCE;
    /* the knobs in force, for run.json */
    s->study->reuse.max_buckets = (int)o.max_buckets;
    s->study->reuse.max_bucket_size = (int)o.max_bucket_size;
    rc = wsisa_reuse_merge(s->plan, &o, &s->buckets);
    if (rc) rc = wsisa_error(e, rc, "reuse planning failed");
  }
  free(keys);
  s->tasks_no_reuse = (uint64_t)s->nruns * WSISA_SEG_LEVELS * s->ntiles;
  s->t_plan = wsisa_now() - t0;
  return rc;
}

/* ---- journal ------------------------------------------------------------------ */

static int journal_unit(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                        const wsisa_counts *counts, size_t n, wsisa_err *e) {
  (void)bucket;
  run_state *s = ctx;
  int frc = s->features ? wsisa__run_features_unit(s->features, tile, runs, counts, n, e) : 0;
  if (frc) return frc;
  for (size_t i = 0; i < n; i++) {
    const wsisa_counts *c = &counts[i];
    fprintf(s->journal, "%zu,%zu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", tile, runs[i],
            (unsigned long long)c->both, (unsigned long long)c->run,
            (unsigned long long)c->ref, (unsigned long long)c->nuclei,
            (unsigned long long)c->ref_nuclei, (unsigned long long)c->obj_ref,
            (unsigned long long)c->obj_run);
    s->counts[runs[i] * s->ntiles + tile] = counts[i];
    s->counts[runs[i] * s->ntiles + tile].features = NULL; /* the unit's, gone after */
    s->counts[runs[i] * s->ntiles + tile].ref_features = NULL;
    s->have[runs[i] * s->ntiles + tile] = 1;
  }
  if (fflush(s->journal) || fsync(fileno(s->journal)))
    return wsisa_error(e, WSISA_EIO, "%s/journal.csv: %s", s->dir, strerror(errno));
  return 0;
}

/* Read what an earlier run finished; a torn last line (killed mid-write) is
 * ignored, and that unit runs again. */
static int journal_read(run_state *s, wsisa_err *e) {
  char path[4200], line[256];
  path_in(s, "journal.csv", path, sizeof path);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  size_t lineno = 0, kept = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (lineno == 1 || !strchr(line, '\n')) continue;
    unsigned long long tile, run, both, a, b, na, nb, oa, ob;
    if (sscanf(line, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", &tile, &run, &both, &a, &b,
               &na, &nb, &oa, &ob) != 9)
      continue;
    if (tile >= s->ntiles || run >= s->nruns) {
      fclose(f);
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: tile %llu or run %llu is not in this study",
                         path, lineno, tile, run);
    }
    s->counts[run * s->ntiles + tile] = (wsisa_counts){both, a, b, na, nb, oa, ob, NULL, NULL, 0};
    s->have[run * s->ntiles + tile] = 1;
    kept++;
  }
  fclose(f);
  wsisa_log(WSISA_LOG_INFO, "run", "resuming: %zu (run, tile) results already in the journal", kept);
  return 0;
}

static int journal_open(run_state *s, int fresh, wsisa_err *e) {
  char path[4200];
  path_in(s, "journal.csv", path, sizeof path);
  s->journal = fopen(path, "a");
  if (!s->journal) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (fresh)
    fprintf(s->journal, "tile,run_id,both,run,ref,nuclei,ref_nuclei,obj_ref,obj_run\n");
  return fflush(s->journal) ? wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno)) : 0;
}

/* ---- results --------------------------------------------------------------------- */

typedef struct run_metrics {
  double dice, jaccard, mean_area, object_dice;
  uint64_t both, run, ref, nuclei, ref_nuclei, obj_ref, obj_run;
} run_metrics;

/* The metrics a segmentation study may ask of `wsisa run`. */
static const char *const run_metric_names[] = {"dice", "jaccard", "nucleus_count", "mean_area",
                                               "object_dice"};
#define NRUN_METRICS (sizeof run_metric_names / sizeof *run_metric_names)

static run_metrics metrics_of(const run_state *s, size_t r) {
  run_metrics m;
  memset(&m, 0, sizeof m);
  for (size_t t = 0; t < s->ntiles; t++) {
    const wsisa_counts *c = &s->counts[r * s->ntiles + t];
    m.both += c->both;
    m.run += c->run;
    m.ref += c->ref;
    m.nuclei += c->nuclei;
    m.ref_nuclei += c->ref_nuclei;
    m.obj_ref += c->obj_ref;
    m.obj_run += c->obj_run;
  }
  /* no nucleus, no mean area: a missing output the analysis reports by run id */
  m.mean_area = m.nuclei ? (double)m.run / (double)m.nuclei : NAN;
  /* two empty masks agree perfectly */
  m.dice = m.run + m.ref ? 2.0 * (double)m.both / (double)(m.run + m.ref) : 1.0;
  uint64_t uni = m.run + m.ref - m.both;
  m.jaccard = uni ? (double)m.both / (double)uni : 1.0;
  /* object Dice (GlaS): the area-weighted mean of each reference object's Dice
   * with its best run object, averaged with the same seen from the run's side;
   * an empty side has no matches */
  m.object_dice = m.run + m.ref == 0
                      ? 1.0
                      : 0.5 * ((m.ref ? (double)m.obj_ref / WSISA_OBJECT_MATCH_ONE / (double)m.ref : 0.0) +
                               (m.run ? (double)m.obj_run / WSISA_OBJECT_MATCH_ONE / (double)m.run : 0.0));
  return m;
}

static int write_metrics(run_state *s, wsisa_err *e) {
  char path[4200], outputs[4200];
  path_in(s, "metrics.csv", path, sizeof path);
  path_in(s, "outputs.csv", outputs, sizeof outputs);
  wsisa_csv_writer *w = NULL, *o = NULL;
  int rc = wsisa_csv_create(path, &w, e);
  if (!rc) rc = wsisa_csv_create(outputs, &o, e);
  if (rc) {
    if (w) wsisa_csv_close(w, NULL);
    return rc;
  }
  wsisa_csv_text(w, "run_id");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_text(w, wsisa_seg_param_name(p));
  for (size_t k = 0; k < NRUN_METRICS - !s->object_match; k++)
    wsisa_csv_text(w, run_metric_names[k]);
  const char *cols[] = {"pixels_both", "pixels_run", "pixels_reference",
                        "reference_nucleus_count"};
  for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) wsisa_csv_text(w, cols[c]);
  for (size_t k = 0; k < s->study->nmetrics; k++)
    if (wsisa__run_features_is_metric(s->study->metrics[k])) wsisa_csv_text(w, s->study->metrics[k]);
  wsisa_csv_end_row(w);
  wsisa_csv_text(o, "run_id");
  for (size_t m = 0; m < s->study->nmetrics; m++) wsisa_csv_text(o, s->study->metrics[m]);
  wsisa_csv_end_row(o);
  for (size_t r = 0; r < s->nruns; r++) {
    run_metrics m = metrics_of(s, r);
    wsisa_csv_uint(w, r);
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_num(w, s->params[r * WSISA_SEG_NPARAMS + p]);
    const double values[NRUN_METRICS] = {m.dice, m.jaccard, (double)m.nuclei, m.mean_area,
                                         m.object_dice};
    for (size_t k = 0; k < NRUN_METRICS - !s->object_match; k++) wsisa_csv_num(w, values[k]);
    wsisa_csv_uint(w, m.both);
    wsisa_csv_uint(w, m.run);
    wsisa_csv_uint(w, m.ref);
    wsisa_csv_uint(w, m.ref_nuclei);
    for (size_t k = 0; k < s->study->nmetrics; k++)
      if (wsisa__run_features_is_metric(s->study->metrics[k]))
        wsisa_csv_num(w, wsisa__run_features_metric(s->features, r, s->study->metrics[k]));
    wsisa_csv_end_row(w);
    wsisa_csv_uint(o, s->run_ids ? s->run_ids[r] : r);
    for (size_t k = 0; k < s->study->nmetrics; k++) {
      for (size_t j = 0; j < NRUN_METRICS; j++)
        if (strcmp(s->study->metrics[k], run_metric_names[j]) == 0) wsisa_csv_num(o, values[j]);
      if (wsisa__run_features_is_metric(s->study->metrics[k]))
        wsisa_csv_num(o, wsisa__run_features_metric(s->features, r, s->study->metrics[k]));
    }
    wsisa_csv_end_row(o);
  }
  rc = wsisa_csv_close(w, e);
  int rc2 = wsisa_csv_close(o, e);
  return rc ? rc : rc2;
}

/* The design of a CSV-driven run, in canonical columns: design.csv marks the
 * results folder so --resume reads the same design back. */
static int write_csv_design(run_state *s, const char *name, wsisa_err *e) {
  char path[4200];
  path_in(s, name, path, sizeof path);
  wsisa_csv_writer *w;
  int rc = wsisa_csv_create(path, &w, e);
  if (rc) return rc;
  wsisa_csv_text(w, "run_id");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_text(w, wsisa_seg_param_name(p));
  wsisa_csv_end_row(w);
  for (size_t r = 0; r < s->nruns; r++) {
    wsisa_csv_uint(w, s->run_ids[r]);
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) wsisa_csv_num(w, s->params[r * WSISA_SEG_NPARAMS + p]);
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

static int write_samples(run_state *s, wsisa_err *e) {
  if (s->from_csv) {
    int rc = write_csv_design(s, "samples.csv", e);
    return rc ? rc : write_csv_design(s, "design.csv", e);
  }
  char path[4200];
  path_in(s, "samples.csv", path, sizeof path);
  wsisa_csv_writer *w;
  int rc = wsisa_csv_create(path, &w, e);
  if (rc) return rc;
  wsisa_csv_text(w, "run_id");
  for (size_t c = 0; c < s->space->nparams; c++) wsisa_csv_text(w, s->space->params[c].name);
  wsisa_csv_end_row(w);
  for (size_t r = 0; r < s->nruns; r++) {
    wsisa_csv_uint(w, r);
    for (size_t c = 0; c < s->design->nparams; c++)
      wsisa_csv_num(w, s->design->values[r * s->design->nparams + c]);
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

static int write_study(run_state *s, wsisa_err *e) {
  char path[4200], *text = NULL;
  path_in(s, "study.json", path, sizeof path);
  int rc = wsisa_study_to_json(s->study, &text, e);
  if (rc) return rc;
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f)) {
    free(text);
    return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  }
  free(text);
  return 0;
}

static long peak_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static int write_provenance(run_state *s, wsisa_err *e) {
  int major, minor, release;
  starpu_get_version(&major, &minor, &release);
  char starpu_v[32], path[4200];
  snprintf(starpu_v, sizeof starpu_v, "%d.%d.%d", major, minor, release);
  const wsisa_study_reuse_opts *ro = &s->study->reuse;
  json_t *root = json_pack(
      "{s:s, s:s, s:s, s:{s:i, s:i}, s:{s:s, s:i, s:i, s:i, s:I}, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:f},"
      " s:{s:f, s:f, s:f}, s:I, s:I, s:I}",
      "wsisa", WSISA_VERSION, "starpu", starpu_v, "scheduler", wsisa_runtime_sched(),
      "workers", "cpu", wsisa_runtime_ncpu(), "opencl", wsisa_runtime_nopencl(), "reuse",
      "strategy", wsisa_study_reuse_name(ro->strategy), "max_buckets", ro->max_buckets,
      "max_bucket_size", ro->max_bucket_size, "active_paths", ro->active_paths, "buckets",
      (json_int_t)s->buckets->n_buckets, "tasks", "executed", (json_int_t)s->stats.tasks,
      "no_reuse", (json_int_t)s->tasks_no_reuse, "skipped_background",
      (json_int_t)s->stats.skipped, "tile_stages", (json_int_t)s->stats.tile_stages,
      "distinct_runs", (json_int_t)s->plan->n_distinct, "lower_bound_per_tile",
      (json_int_t)wsisa_reuse_tree_tasks(s->plan->tree), "reuse_percent",
      s->tasks_no_reuse ? 100.0 * (1.0 - (double)s->stats.tasks / (double)s->tasks_no_reuse) : 0.0,
      "seconds", "plan", s->t_plan, "execute", s->t_exec, "total", wsisa_now() - s->t_start,
      "peak_rss_kib", (json_int_t)peak_rss_kib(), "peak_active_paths",
      (json_int_t)s->stats.peak_paths, "runs", (json_int_t)s->nruns);
  json_object_set_new(root, "tiles", json_integer((json_int_t)s->ntiles));
  json_object_set_new(root, "mpi", json_pack("{s:i, s:i, s:i}", "ranks", wsisa_dist_size(),
                                             "ranks_lost", wsisa_dist_lost(), "workers",
                                             s->workers));
  const wsisa_machine *mc = &s->machine;
  json_object_set_new(root, "machine",
                      json_pack("{s:s, s:i, s:i, s:i, s:I, s:I}", "cpu_model", mc->cpu_model,
                                "cores", mc->cores, "hardware_threads", mc->pus, "numa_nodes",
                                mc->numa_nodes, "memory_total_bytes",
                                (json_int_t)mc->memory_total, "memory_available_bytes",
                                (json_int_t)mc->memory_available));
  json_object_set_new(root, "memory_limit_bytes",
                      json_integer((json_int_t)s->study->execution.memory_limit));
  path_in(s, "run.json", path, sizeof path);
  int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
  json_decref(root);
  return rc ? wsisa_error(e, WSISA_EIO, "%s: cannot write", path) : 0;
}

static int analyze(run_state *s, wsisa_err *e) {
  char study[4200], samples[4200], outputs[4200];
  path_in(s, "study.json", study, sizeof study);
  path_in(s, "samples.csv", samples, sizeof samples);
  path_in(s, "outputs.csv", outputs, sizeof outputs);
  char *argv[] = {"analyze", "--study", study, "--samples", samples, "--outputs", outputs,
                  "-o", s->dir, NULL};
  return wsisa_cmd_analyze(9, argv, e);
}

/* The ranking the user reads first: parameters by their main index for the
 * first metric (MOAT mu*, VBD ST, correlation |PRCC|). */
static void print_top(run_state *s) {
  char path[4200];
  path_in(s, "indices.csv", path, sizeof path);
  wsisa_csv *c = NULL;
  if (wsisa_csv_read_table(path, "output", &c, NULL)) return;
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

/* With no --study: the bundled sample slide and a small MOAT study. */
static const char default_study[] =
    "{ \"name\": \"default: MOAT screening of the 15 parameters on the bundled sample\",\n"
    "  \"inputs\": { \"slides\": [\"" WSISA_DATA_DIR "/CMU-1-Small-Region.svs\"],\n"
    "              \"level\": 0, \"tile_size\": 1024, \"tissue_only\": true },\n"
    "  \"method\": { \"name\": \"moat\", \"trajectories\": 4, \"levels\": 4 },\n"
    "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
    "  \"metric\": [\"dice\", \"jaccard\"] }\n";

/* ---- the command -------------------------------------------------------------------- */

static int prepare_dir(run_state *s, const run_opts *o, wsisa_err *e) {
  snprintf(s->dir, sizeof s->dir, "%s", o->resume ? o->resume : o->out);
  char path[4200];
  path_in(s, "study.json", path, sizeof path);
  if (o->resume) {
    if (access(path, R_OK) != 0)
      return wsisa_error(e, WSISA_EUSAGE, "--resume %s: no study.json there: not a results folder",
                         s->dir);
    return 0;
  }
  if (access(path, F_OK) == 0)
    return wsisa_error(e, WSISA_EUSAGE,
                       "-o %s: already holds a study's results (use --resume %s, or another -o)",
                       s->dir, s->dir);
  if (mkdir(s->dir, 0755) != 0 && errno != EEXIST)
    return wsisa_error(e, WSISA_EIO, "-o %s: %s", s->dir, strerror(errno));
  if (access(s->dir, W_OK) != 0)
    return wsisa_error(e, WSISA_EIO, "-o %s: not writable (%s)", s->dir, strerror(errno));
  return 0;
}

static void run_free(run_state *s) {
  if (s->journal) fclose(s->journal);
  for (size_t i = 0; i < s->ntiles; i++) free(s->tile_names[i]);
  free(s->tile_names);
  free(s->tiles);
  free(s->params);
  free(s->run_ids);
  free(s->counts);
  free(s->have);
  wsisa__run_features_free(s->features);
  if (s->buckets) wsisa_reuse_buckets_free(s->buckets);
  if (s->plan) wsisa_reuse_design_free(s->plan);
  if (s->design) wsisa_sa_design_free(s->design);
  if (s->space) wsisa_sa_space_free(s->space);
  if (s->study) wsisa_study_free(s->study);
}

static void usage(void) {
  printf("usage: wsisa run [--study S.json] -o DIR [options]\n"
         "       wsisa run --resume DIR\n"
         "  --study S.json        the study (DESIGN.md §6 format); without it, a MOAT\n"
         "                        study of the 15 parameters on the bundled sample slide\n"
         "  -o DIR                results folder (must not hold another study's results)\n"
         "  --resume DIR          go on with an interrupted run; finished units are not redone\n"
         "  --samples CSV         the design from a CSV (run_id, then parameter columns) made\n"
         "                        by wsisa sample or another SA tool, instead of the sampler\n"
         "  --reuse S             none | stage | naive | sca | rtma | trtma (overrides the study)\n"
         "  --max-buckets N       TRTMA MaxBuckets (default 3 x workers)\n"
         "  --max-bucket-size N   RTMA, naive, SCA bucket size\n"
         "  --active-paths K      RMSR: root-to-leaf paths active at once (default: workers)\n"
         "  --memory-limit SIZE   lower K so the active paths fit (e.g. 512M, 4G)\n"
         "  --unit-timeout S      under mpirun: seconds a worker may hold a unit before its\n"
         "                        units go to other ranks (default 600; WSISA_UNIT_TIMEOUT)\n"
         "results: study.json samples.csv metrics.csv outputs.csv indices.csv indices.json\n"
         "         *.svg run.json journal.csv\n");
}

static int apply_flags(run_state *s, const run_opts *o, wsisa_err *e) {
  wsisa_study_reuse_opts *ro = &s->study->reuse;
  if (o->reuse) {
    static const char *const names[] = {"none", "stage", "naive", "sca", "rtma", "trtma"};
    int found = -1;
    for (int i = 0; i < 6; i++)
      if (strcmp(o->reuse, names[i]) == 0) found = i;
    if (found < 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "--reuse %s: unknown strategy (none, stage, naive, sca, rtma, trtma)",
                         o->reuse);
    ro->strategy = (wsisa_study_reuse)found;
  }
  if (o->max_buckets) ro->max_buckets = (int)o->max_buckets;
  if (o->max_bucket_size) ro->max_bucket_size = (int)o->max_bucket_size;
  if (o->active_paths) ro->active_paths = (int)o->active_paths;
  if (o->memory_limit &&
      wsisa_study_parse_bytes(o->memory_limit, &s->study->execution.memory_limit))
    return wsisa_error(e, WSISA_EUSAGE, "--memory-limit %s: not a size (e.g. 4G, 512M)",
                       o->memory_limit);
  return 0;
}

int wsisa_cmd_run(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {
      {"study", required_argument, 0, 's'},          {"output", required_argument, 0, 'o'},
      {"resume", required_argument, 0, 'R'},         {"reuse", required_argument, 0, 'u'},
      {"max-buckets", required_argument, 0, 'b'},    {"max-bucket-size", required_argument, 0, 'z'},
      {"active-paths", required_argument, 0, 'k'},   {"memory-limit", required_argument, 0, 'm'},
      {"samples", required_argument, 0, 'S'},       {"unit-timeout", required_argument, 0, 't'},
      {"help", no_argument, 0, 'h'},                 {0, 0, 0, 0}};
  run_opts o = {0};
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    long *target = NULL;
    const char *flag = NULL;
    switch (opt) {
      case 's': o.study_path = optarg; break;
      case 'o': o.out = optarg; break;
      case 'R': o.resume = optarg; break;
      case 'S': o.samples = optarg; break;
      case 'u': o.reuse = optarg; break;
      case 'm': o.memory_limit = optarg; break;
      case 'b': target = &o.max_buckets, flag = "--max-buckets"; break;
      case 'z': target = &o.max_bucket_size, flag = "--max-bucket-size"; break;
      case 'k': target = &o.active_paths, flag = "--active-paths"; break;
      case 't': target = &o.unit_timeout, flag = "--unit-timeout"; break;
      case 'h': usage(); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
    if (target) {
      if ((rc = wsisa_cli_long(flag, optarg, target, e))) return rc;
      if (*target < 1 || *target > 1000000)
        return wsisa_error(e, WSISA_EUSAGE, "%s %ld: must be in 1..1000000", flag, *target);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (o.resume && (o.study_path || o.out || o.samples))
    return wsisa_error(e, WSISA_EUSAGE, "--resume DIR takes neither --study, -o nor --samples");
  if (!o.resume && !o.out) return wsisa_error(e, WSISA_EUSAGE, "missing -o DIR (the results folder)");

  run_state s;
  memset(&s, 0, sizeof s);
  s.t_start = wsisa_now();
  /* under mpirun, ranks other than 0 only execute what the manager hands out */
  if ((rc = wsisa_dist_start(o.unit_timeout ? (double)o.unit_timeout : 600.0, e))) goto done;
  if (wsisa_dist_rank() > 0) {
    rc = wsisa_dist_worker(e);
    goto done;
  }
  wsisa_machine_read(&s.machine);
  char study_path[4200];
  if (o.resume) snprintf(study_path, sizeof study_path, "%s/study.json", o.resume);
  else if (o.study_path) snprintf(study_path, sizeof study_path, "%s", o.study_path);
  if (o.resume && access(study_path, R_OK) != 0) {
    rc = wsisa_error(e, WSISA_EUSAGE, "--resume %s: no study.json there: not a results folder",
                     o.resume);
    goto done;
  }
  if (!o.resume && !o.study_path) {
    snprintf(study_path, sizeof study_path, "(default study)");
    rc = wsisa_study_parse(default_study, study_path, &s.study, e);
  } else {
    rc = wsisa_study_load(study_path, &s.study, e);
  }
  if (rc) goto done;
  if (!s.study->segmentation) {
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: no inputs: a pure SA study (use wsisa sample and wsisa analyze)",
                     study_path);
    goto done;
  }
  if ((rc = apply_flags(&s, &o, e))) goto done;
  for (size_t m = 0; m < s.study->nmetrics; m++) {
    int known = 0;
    for (size_t j = 0; j < NRUN_METRICS; j++)
      known |= strcmp(s.study->metrics[m], run_metric_names[j]) == 0;
    s.object_match |= strcmp(s.study->metrics[m], "object_dice") == 0;
    known |= wsisa__run_features_is_metric(s.study->metrics[m]);
    if (!known && strncmp(s.study->metrics[m], WSISA_STUDY_WASSERSTEIN,
                          strlen(WSISA_STUDY_WASSERSTEIN)) == 0) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "%s: metric %s: no such feature (the columns of wsisa segment --features)",
                       study_path, s.study->metrics[m]);
      goto done;
    }
    if (!known) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "%s: metric %s: wsisa run computes dice, jaccard, nucleus_count, "
                       "mean_area and object_dice, and from features mean_haematoxylin and "
                       "wasserstein:<feature>",
                       study_path, s.study->metrics[m]);
      goto done;
    }
  }
  const char *sched = s.study->execution.scheduler;
  wsisa_env env;
  wsisa_env_read(&env);
  if (!sched) sched = env.sched;
  if (sched && !wsisa_sched_valid(sched)) {
    rc = wsisa_error(e, WSISA_EUSAGE, "scheduler %s: unknown (one of: %s)", sched,
                     wsisa_sched_names());
    goto done;
  }
  if ((rc = prepare_dir(&s, &o, e))) goto done;
  char design_csv[4200];
  snprintf(design_csv, sizeof design_csv, "%s/design.csv", s.dir);
  const char *samples = o.samples;
  if (o.resume && access(design_csv, R_OK) == 0) samples = design_csv;
  if ((rc = make_design(&s, samples, e)) || (rc = collect_tiles(&s, e))) goto done;
  s.counts = calloc(s.nruns * s.ntiles, sizeof *s.counts);
  s.have = calloc(s.nruns * s.ntiles, 1);
  if (!s.counts || !s.have) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto done;
  }
  /* the study and its design are written first: --resume reads them back */
  if (!o.resume && ((rc = write_study(&s, e)) || (rc = write_samples(&s, e)))) goto done;
  if ((rc = wsisa__run_features_new(s.study->metrics, s.study->nmetrics, s.nruns, s.ntiles, s.dir,
                                     &s.features, e)))
    goto done;
  if (o.resume && (rc = journal_read(&s, e))) goto done;
  if (s.features && o.resume && (rc = wsisa__run_features_read(s.features, s.have, e))) goto done;
  if ((rc = journal_open(&s, !o.resume, e))) goto done;
  if (s.features && (rc = wsisa__run_features_open(s.features, !o.resume, e))) goto done;

  wsisa_runtime_opts ropts = {.sched = sched, .ncpu = -1, .nopencl = -1};
  if ((rc = wsisa_codelets_start(&ropts, e))) goto done;
  rc = wsisa_dist_workers(wsisa_runtime_ncpu() + wsisa_runtime_nopencl(), &s.workers, e);
  if (!rc && !(rc = make_plan(&s, e))) {
    size_t nb = s.buckets->n_buckets;
    uint8_t *done_units = calloc(s.ntiles * nb, 1);
    if (!done_units) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    for (size_t t = 0; !rc && t < s.ntiles; t++)
      for (size_t b = 0; b < nb; b++) {
        int all = 1;
        for (size_t i = s.buckets->start[b]; i < s.buckets->start[b + 1]; i++) {
          size_t d = s.buckets->instances[i];
          all &= s.have[d * s.ntiles + t];
        }
        done_units[t * nb + b] = (uint8_t)all;
      }
    /* every rank derives its own K from what was asked (core/dist.c) */
    size_t k_asked = s.study->reuse.active_paths > 0 ? (size_t)s.study->reuse.active_paths : 0;
    uint64_t limit_asked = s.study->execution.memory_limit;
    wsisa_exec_opts eo = {wsisa_exec_active_paths(k_asked, s.machine.memory_available,
                                                  &s.study->execution.memory_limit, s.tiles,
                                                  s.ntiles),
                          1,
                          s.study->reuse.strategy != WSISA_STUDY_REUSE_NONE, s.object_match,
                          s.features != NULL};
    s.study->reuse.active_paths = (int)eo.active_paths;
    double t0 = wsisa_now();
    if (!rc)
      rc = wsisa_dist_run(s.tiles, s.ntiles, s.params, s.buckets, done_units, &eo, k_asked,
                          limit_asked, journal_unit, &s, &s.stats, e);
    s.t_exec = wsisa_now() - t0;
    free(done_units);
  }
  if (!rc) rc = write_provenance(&s, e);
  wsisa_runtime_shutdown();
  if (rc) goto done;
  /* identical runs share a leaf: every run has its counts for every tile */
  for (size_t i = 0; i < s.nruns * s.ntiles; i++)
    if (!s.have[i]) {
      rc = wsisa_error(e, WSISA_EINTERNAL, "run %zu has no result for tile %zu", i / s.ntiles,
                       i % s.ntiles);
      goto done;
    }
  if ((rc = write_metrics(&s, e))) goto done;
  if (s.from_csv)
    printf("design from %s: no indices computed here (the study's method may not match it); "
           "run `wsisa analyze` on %s/samples.csv and %s/outputs.csv with a matching study\n",
           samples, s.dir, s.dir);
  else if ((rc = analyze(&s, e)))
    goto done;
  if (!s.from_csv) print_top(&s);
  printf("results in %s: metrics.csv%s, run.json\n", s.dir,
         s.from_csv ? ", outputs.csv" : ", indices.csv, indices.json, *.svg");
  printf("%zu runs x %zu tiles, %llu tasks executed (no reuse: %llu), %.1f s\n", s.nruns,
         s.ntiles, (unsigned long long)s.stats.tasks, (unsigned long long)s.tasks_no_reuse,
         wsisa_now() - s.t_start);
done:
  run_free(&s);
  wsisa_dist_end();
  return rc;
}
