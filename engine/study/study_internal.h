/* engine/study's own declarations: SALib's problem reader, the one design
 * file reader the study's commands share, and the CRC of checked lines'
 * continuation. Included by engine/study/ and its suite alone
 * (tests/test_engine_study*.c). */
#ifndef WSISA_ENGINE_STUDY_INTERNAL_H
#define WSISA_ENGINE_STUDY_INTERNAL_H

#include "engine/study/study.h"

/* ---- SALib's problem (engine/study/problem.c) ------------------------------- */

/* SALib's problem into a space of continuous parameters (engine/study/
 * problem.c): a JSON dict with SALib's keys (names, bounds; num_vars, groups,
 * dists, outputs, sample_scaled; groups and dists may be null) or SALib's
 * text parameter file (`name lower upper [group [dist]]` a line), told apart
 * by the content. `note` receives a warning to show, or "". */
int wsisa__problem_load(const char *path, wsisa_sa_space **out, char *note, size_t note_cap,
                        wsisa_err *e);

/* ---- design files (engine/study/design.c) ----------------------------------- */

/* A design file as every command reads it (`wsisa run`, `plan`, `analyze`,
 * calibration): the one reader, so a file is taken or refused alike
 * everywhere. Its parameters: */
typedef struct wsisa__design_columns {
  size_t n;
  const char *const *names;
  const double *fill;          /* a parameter without a column takes fill[i];
                                  NaN: it needs one */
  const unsigned char *plain;  /* the columns of a file without a header, in
                                  this order */
  const char *owner;           /* whose parameters, in messages ("S.json") */
} wsisa__design_columns;

typedef struct wsisa__design_file {
  wsisa_csv *table;  /* the file as read: path, lines, wsisa_csv_rows */
  double *values;    /* nrows x n, fills where a column is absent */
  uint64_t *ids;     /* the id column's run ids, or 0, 1, ... */
  int has_ids;
} wsisa__design_file;

/* Read a design: CSV or numpy's text (wsisa_csv_read_table with any shape),
 * one row per run. With a header: an id column first (run_id, an unnamed
 * one as pandas writes, id or index) or none (rows are runs 0, 1, ...), then
 * parameters by name in any order; a column that is no parameter is refused
 * after a run_id column (wsisa's own design, every column a parameter) and
 * otherwise ignored with a warning on `warn`. Without a header the columns
 * are the `plain` parameters in order. A parameter cell must hold a number.
 * Faults of the file are WSISA_EFORMAT with the file and line. */
int wsisa__design_read(const char *path, const wsisa__design_columns *cols, FILE *warn,
                       wsisa__design_file *out, wsisa_err *e);
void wsisa__design_file_free(wsisa__design_file *f);
/* A design file of a segmentation study whose parameters are `sp`'s, by the
 * rules `wsisa run`, `plan` and `analyze` share: wsisa__design_read over
 * sp's parameters in its order (absent: the study's value), then the other
 * segmentation parameters (absent: their defaults), every value checked
 * against what the segmentation accepts. f->values holds the 15 columns a row in that order;
 * seg[i] is column i's canonical index. */
int wsisa__design_read_seg(const char *path, const wsisa_sa_space *sp, FILE *warn,
                           wsisa__design_file *f, int seg[WSISA_SEG_NPARAMS], wsisa_err *e);
/* Does a table's first column hold run ids? run_id (wsisa), an unnamed one
 * (pandas' index), id or index. */
int wsisa__design_id_column(const wsisa_csv *table);

/* Rows of the 15 segmentation parameters in canonical order from values in
 * the study's parameter order; those it does not list keep their defaults. */
int wsisa__study_canonical_rows(const wsisa_study *study, const double *values, size_t n,
                                double **out, wsisa_err *e);
/* ---- checked lines (engine/study/lines.c) ----------------------------------- */

/* The CRC-32 of a text whose first part had `crc`, `len` more bytes on. */
uint32_t wsisa__crc32_more(uint32_t crc, const char *text, size_t len);

#endif
