/* Shared-internal pieces of engine/. */
#ifndef WSISA_ENGINE_PRIVATE_H
#define WSISA_ENGINE_PRIVATE_H

#include <stdio.h>

#include <jansson.h>

#include "engine/engine.h"
#include "engine/study/study.h"
#include "reuse/reuse.h"
#include "sa/sa.h"

/* `wsisa run`'s feature metrics (engine/features.c): mean_haematoxylin and
 * wasserstein:<feature>, from per-(run, tile) values journaled in
 * feature_values.csv. */
typedef struct wsisa__run_features wsisa__run_features;
struct wsisa_counts;
/* NULL in *out when no metric needs features; WSISA_EUSAGE for
 * wasserstein:<unknown feature>. */
int wsisa__run_features_new(char *const *metrics, size_t nmetrics, size_t nruns, size_t ntiles,
                            const char *dir, wsisa__run_features **out, wsisa_err *e);
void wsisa__run_features_free(wsisa__run_features *f);
int wsisa__run_features_open(wsisa__run_features *f, int fresh, wsisa_err *e);
/* The results folder was renamed into place: messages name `dir` now. */
void wsisa__run_features_move(wsisa__run_features *f, const char *dir);
/* Resume: read the values back (checked lines, as the journal's; `repair`,
 * lines and torn as wsisa__lines_read); a (run, tile) of `have` without them
 * is cleared. */
int wsisa__run_features_read(wsisa__run_features *f, uint8_t *have, int repair, size_t *lines,
                             size_t *torn, wsisa_err *e);
/* A finished unit's values, journaled (synced) and kept. */
int wsisa__run_features_unit(wsisa__run_features *f, size_t tile, const size_t *runs,
                             const struct wsisa_counts *counts, size_t n, wsisa_err *e);
/* The metric of a run; NaN when undefined (no nucleus). */
double wsisa__run_features_metric(wsisa__run_features *f, size_t run, const char *metric);
/* Wasserstein-1 distance of two sorted, non-empty samples. */
double wsisa__wasserstein1(const double *a, size_t na, const double *b, size_t nb);

/* DIR/name into buf. */
void wsisa__run_path(const wsisa__study_run *s, const char *name, char *buf, size_t cap);

/* journal.csv: one line per finished (run, tile), flushed and synced. */
int wsisa__journal_open(wsisa__study_run *s, int fresh, wsisa_err *e);
typedef struct wsisa__journal_summary {
  size_t lines;   /* whole data lines */
  size_t repeats; /* lines of a (run, tile) seen before, with the same counts */
  size_t torn;    /* line number of a torn last line, 0 if none */
} wsisa__journal_summary;
/* The counts an earlier run finished. With `repair` (resume) a torn last line
 * is cut off; without (--check) it is only reported in *sum (may be NULL). */
int wsisa__journal_read(wsisa__study_run *s, int repair, wsisa__journal_summary *sum,
                        wsisa_err *e);
/* The unit callback (wsisa_exec_unit_fn) that journals and keeps the counts. */
int wsisa__journal_unit(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                        const wsisa_counts *counts, size_t n, wsisa_err *e);

/* Is every metric of the study one `wsisa run` computes? Sets s->object_match. */
int wsisa__results_check_metrics(wsisa__study_run *s, const char *study_path, wsisa_err *e);
/* study.json (resolved) and samples.csv (and design.csv for a CSV design):
 * what --resume reads back. */
int wsisa__results_study(wsisa__study_run *s, wsisa_err *e);
/* samples.csv (and design.csv) into `dir` (NULL: the results folder). */
int wsisa__results_samples(wsisa__study_run *s, const char *dir, wsisa_err *e);
/* metrics.csv and outputs.csv from the counts, into `dir` (NULL: the results
 * folder), together or not at all; with annotations, best.json beside them
 * (the best run by the first metric that has a better direction). */
int wsisa__results_metrics(wsisa__study_run *s, const char *dir, wsisa_err *e);
/* The reference the runs were compared with, as run.json's "reference". */
json_t *wsisa__results_reference_json(const wsisa__study_run *s);
/* With annotations, reference.json into `dir` (NULL: the results folder):
 * which files, their sizes and CRC-32, which tiles they cover. A resume or
 * --check holds the files to it: an annotation changed since the run began
 * would mix two references. */
int wsisa__results_reference(wsisa__study_run *s, const char *dir, wsisa_err *e);
/* Resume: refuse when reference.json is not what the annotations give now. */
int wsisa__results_reference_check(wsisa__study_run *s, wsisa_err *e);
/* The reference segmentation's nuclei per mm² of tissue of each input, and a
 * warning (stderr, run.json) for an input where it found almost nothing. */
#define WSISA_MIN_NUCLEI_PER_MM2 200.0
/* run.json: versions, workers, machine, reuse, tasks, times, memory, the
 * inputs (resolution, stain, nucleus density) and warnings. On a resume of a
 * run whose run.json exists, its figures are kept and the resume is added to
 * its "resumes". */
int wsisa__results_provenance(wsisa__study_run *s, wsisa_err *e);
/* The parameters ranked by the first metric's main index, on stdout. */
void wsisa__results_print_top(const wsisa__study_run *s);

#endif
