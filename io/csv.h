/* CSV files of designs, outputs and indices: a header row, `run_id` first,
 * quoted fields tolerated; tables of any shape (numpy's text, with or without
 * a header); and output files staged so nothing is half-written. */
#ifndef WSISA_IO_CSV_H
#define WSISA_IO_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"

/* ---- reading ---------------------------------------------------------------- */

typedef struct wsisa_csv {
  char *path;
  size_t ncols, nrows;
  char **header;   /* ncols names ("" each without a header) */
  char **cells;    /* nrows x ncols, never NULL ("" for an empty field) */
  size_t *lines;   /* line of the file where each row starts (1-based) */
  size_t header_line; /* 0 without a header */
  int has_header;
  char *text;      /* the file's bytes; fields are decoded in place */
} wsisa_csv;

/* Read a whole CSV file: RFC 4180 quoting ("a, b" and "" inside quotes), CRLF
 * or LF, a UTF-8 byte-order mark, blank lines skipped, spaces around unquoted
 * fields trimmed. The header's first column must be `run_id`, names must be
 * unique and non-empty, and every row must have as many fields as the header.
 * Errors name the file and line: "y.csv:7: 3 fields, the header has 4". */
int wsisa_csv_read(const char *path, wsisa_csv **out, wsisa_err *e);
/* The same for a table whose first column is `first`, such as indices.csv
 * (first column "output"). NULL: a table of any shape, as numpy's savetxt or
 * a CSV writer leaves it: delimited by commas, else tabs, else runs of blanks
 * (from its first two lines); any first column, which may be unnamed (pandas'
 * index); a header after "# " (numpy's) or none: a first line of numbers is
 * the first row, never a header (has_header 0, names ""); later lines that
 * start with '#' are comments. */
int wsisa_csv_read_table(const char *path, const char *first, wsisa_csv **out, wsisa_err *e);
/* Which lines the rows are, for messages: "lines 1-320, no header",
 * "lines 2-65, after the header on line 1". */
void wsisa_csv_rows(const wsisa_csv *c, char *buf, size_t cap);
void wsisa_csv_free(wsisa_csv *csv);

static inline const char *wsisa_csv_cell(const wsisa_csv *c, size_t row, size_t col) {
  return c->cells[row * c->ncols + col];
}
/* Column index by header name, or -1. */
long wsisa_csv_column(const wsisa_csv *c, const char *name);
/* A cell as a number. Empty, NA, NaN and nan give NaN (a missing value), inf
 * and -inf give infinities; any other non-number is an error naming the file,
 * line, column and text. */
int wsisa_csv_number(const wsisa_csv *c, size_t row, size_t col, double *out, wsisa_err *e);
/* The run_id column as non-negative whole numbers, each once. */
int wsisa_csv_run_ids(const wsisa_csv *c, uint64_t *ids, wsisa_err *e);

/* ---- writing ---------------------------------------------------------------- */

typedef struct wsisa_csv_writer wsisa_csv_writer;
struct wsisa_stage;

int wsisa_csv_create(const char *path, wsisa_csv_writer **out, wsisa_err *e);
/* The same under a staged name (wsisa_stage_add), renamed into place by
 * wsisa_stage_commit. */
int wsisa_csv_create_staged(struct wsisa_stage *s, const char *path, wsisa_csv_writer **out,
                            wsisa_err *e);
/* A text field, quoted when it holds a comma, quote, line break or edge space. */
void wsisa_csv_text(wsisa_csv_writer *w, const char *text);
/* A number in the shortest of %.15g / %.17g that reads back exactly; NaN is an
 * empty field. */
void wsisa_csv_num(wsisa_csv_writer *w, double value);
void wsisa_csv_uint(wsisa_csv_writer *w, uint64_t value);
void wsisa_csv_end_row(wsisa_csv_writer *w);
/* Flush, sync and close; any write error names the file and the system's
 * reason ("y.csv: No space left on device"). Frees the writer either way. */
int wsisa_csv_close(wsisa_csv_writer *w, wsisa_err *e);
/* Format a number as wsisa_csv_num does (for JSON or messages). */
void wsisa_csv_format(double value, char *buf, size_t cap);

/* ---- output files ------------------------------------------------------------- */

/* Flush, sync (regular files) and close a file written with stdio: 0, or an
 * error naming the file (its final name when `path` is a staged one) and the
 * system's reason. */
int wsisa_output_close(FILE *f, const char *path, wsisa_err *e);
/* The name to show for `path`: a staged temporary name without its suffix. */
void wsisa_output_name(const char *path, char *buf, size_t cap);
/* Do a and b name the same existing file (st_dev and st_ino, through
 * symlinks)? */
int wsisa_same_file(const char *a, const char *b);
/* Refuse `out` when it is one of the command's inputs (NULL entries are
 * skipped): "FLAG OUT: the same file as the input IN ...". */
int wsisa_output_check(const char *flag, const char *out, const char *const *inputs, size_t n,
                       wsisa_err *e);
/* Is `path` a device, pipe or socket, which an output is written to in place
 * (never replaced, whatever its name)? */
int wsisa_output_in_place(const char *path);
/* Does `path` end in one of `exts` (NULL-ended, ".csv"; any case)? */
int wsisa_path_has_ext(const char *path, const char *const *exts);
/* Refuse `out` unless its name ends in one of `exts` (NULL-ended, ".csv"; any
 * case) or it is written in place: "FLAG OUT: unsupported file type (give
 * .a or .b)". */
int wsisa_output_type(const char *flag, const char *out, const char *const *exts, wsisa_err *e);
/* Write `len` bytes to `path` through a stage: all or nothing. */
int wsisa_output_write(const char *path, const void *data, size_t len, wsisa_err *e);

/* ---- staged output ------------------------------------------------------------ */

/* Files are written under temporary names next to their final ones and renamed
 * into place together by commit; abort (or a failed commit) removes them, so a
 * failing command leaves no partial output. Only a regular file (or nothing)
 * is ever replaced: a device, pipe or socket is written in place, and a
 * symlink keeps pointing at the file it names, which is replaced. */
typedef struct wsisa_stage {
  size_t n;
  char **final_paths, **temp_paths;
  unsigned char *in_place; /* written where it is (a device or pipe) */
  int *held; /* a FIFO's: our end, opened once a reader came; -1: none */
} wsisa_stage;

#define WSISA_STAGE_INIT {0, NULL, NULL, NULL, NULL}

/* The path to write `path` through (owned by the stage): a temporary name
 * beside it, or the path itself for a device or pipe. Refuses a directory, an
 * unwritable place and a file already in the stage. A FIFO is waited on here
 * until a reader opens it, a wait SIGINT or SIGTERM ends (WSISA_EINTERRUPTED,
 * the stop test of wsisa_text_read_stop), and held open until the commit. */
const char *wsisa_stage_add(wsisa_stage *s, const char *path, wsisa_err *e);
int wsisa_stage_commit(wsisa_stage *s, wsisa_err *e);
void wsisa_stage_abort(wsisa_stage *s);

#endif
