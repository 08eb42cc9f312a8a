/* CSV reading (decoded in place, one allocation per file), writing with exact
 * numbers, and staged output files renamed into place together: never over
 * anything but a regular file, never over an input, every write error with
 * the file's name and the system's reason. */
/* realpath(3) is X/Open */
#define _XOPEN_SOURCE 700
#include "io/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- reading ---------------------------------------------------------------- */

typedef struct parser {
  const char *path;
  char *r;        /* next byte to read */
  char *w;        /* next byte to write: fields shrink, so w <= r */
  char *end;
  size_t line;
  char delim;     /* ',', '\t', or ' ' for a run of blanks (numpy's savetxt) */
  int comments;   /* skip lines that start with '#' (numpy's comments) */
} parser;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Blanks around a field: spaces and tabs, but a tab is a field's end in a
 * tab-delimited table. */
static int is_pad(const parser *p, char c) { return c == ' ' || (c == '\t' && p->delim != '\t'); }

static int ends_field(const parser *p, char c) {
  return c == '\n' || (p->delim == ' ' ? is_blank(c) : c == p->delim);
}

/* One field at the parser's position, NUL-terminated in place; *last tells
 * whether it ended its record. */
static int parse_field(parser *p, char **field, int *last, wsisa_err *e) {
  while (p->r < p->end && is_pad(p, *p->r)) p->r++;
  char *start = p->w;
  if (p->r < p->end && *p->r == '"') {
    size_t open_line = p->line;
    p->r++;
    for (;;) {
      if (p->r >= p->end)
        return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: a quoted field is not closed", p->path,
                           open_line);
      char c = *p->r++;
      if (c == '"') {
        if (p->r < p->end && *p->r == '"') {
          *p->w++ = '"';
          p->r++;
          continue;
        }
        break;
      }
      if (c == '\n') p->line++;
      *p->w++ = c;
    }
    const char *after = p->r;
    while (p->r < p->end && (is_pad(p, *p->r) || *p->r == '\r')) p->r++;
    if (p->r < p->end && *p->r != '\n' &&
        (p->delim == ' ' ? p->r == after : *p->r != p->delim))
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: text after a closing quote", p->path,
                         p->line);
  } else {
    while (p->r < p->end && !ends_field(p, *p->r)) *p->w++ = *p->r++;
    while (p->w > start && (is_pad(p, p->w[-1]) || p->w[-1] == '\r')) p->w--;
  }
  /* Read the delimiter before the terminator may overwrite it. */
  if (p->delim == ' ')
    while (p->r < p->end && (is_blank(*p->r) || *p->r == '\r')) p->r++;
  *last = p->r >= p->end || *p->r == '\n';
  if (p->r < p->end && (p->delim != ' ' || *last)) {
    if (*p->r == '\n') p->line++;
    p->r++;
  }
  *p->w++ = '\0';
  *field = start;
  return 0;
}

/* Skip lines holding only blanks (and comment lines, where the table has
 * them); 0 at the end of the file. */
static int next_record(parser *p) {
  for (;;) {
    char *q = p->r;
    while (q < p->end && (is_blank(*q) || *q == '\r')) q++;
    if (q >= p->end) return 0;
    if (*q != '\n' && !(p->comments && *q == '#')) return 1;
    while (q < p->end && *q != '\n') q++;
    p->r = q < p->end ? q + 1 : q;
    p->line++;
  }
}

/* The delimiter of a table of any shape, from its first two lines: a comma
 * (CSV), else a tab, else runs of blanks (numpy's savetxt default). */
static char sniff(const char *r, const char *end) {
  int tab = 0;
  for (int lines = 0; r < end && lines < 2; r++) {
    if (*r == ',') return ',';
    tab |= *r == '\t';
    if (*r == '\n') {
      const char *q = r + 1;
      while (q < end && (is_blank(*q) || *q == '\r')) q++;
      lines += q < end && *q != '\n';
    }
  }
  return tab ? '\t' : ' ';
}

/* Does a field read as a number (what wsisa_csv_number takes, the empty
 * field aside)? A first line of numbers is data, never a header. */
static int is_number(const char *s) {
  if (!s[0]) return 0;
  if (strcasecmp(s, "na") == 0) return 1;
  char *end;
  (void)strtod(s, &end);
  return end != s && !*end;
}

static int grow(void **arr, size_t *cap, size_t need, size_t size, wsisa_err *e) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *g = realloc(*arr, n * size);
  if (!g) return wsisa_error(e, WSISA_ENOMEM, "out of memory reading a CSV file");
  *arr = g;
  *cap = n;
  return 0;
}

void wsisa_csv_free(wsisa_csv *c) {
  if (!c) return;
  free(c->path);
  free(c->header);
  free(c->cells);
  free(c->lines);
  free(c->text);
  free(c);
}

int wsisa_csv_read(const char *path, wsisa_csv **out, wsisa_err *e) {
  return wsisa_csv_read_table(path, "run_id", out, e);
}

/* One record's fields into *fields (grown as needed); their count. */
static int parse_record(parser *p, char ***fields, size_t *cap, size_t *n, wsisa_err *e) {
  *n = 0;
  for (int last = 0; !last;) {
    char *field;
    int rc = parse_field(p, &field, &last, e);
    if (!rc) rc = grow((void **)fields, cap, *n + 1, sizeof **fields, e);
    if (rc) return rc;
    (*fields)[(*n)++] = field;
  }
  return 0;
}

int wsisa_csv_read_table(const char *path, const char *first, wsisa_csv **out, wsisa_err *e) {
  *out = NULL;
  wsisa_csv *c = calloc(1, sizeof *c);
  if (!c) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  size_t len = 0, cell_cap = 0, line_cap = 0, head_cap = 0;
  int rc = wsisa_text_read(path, WSISA_TEXT_MAX_TABLE, "a CSV table", &c->text, &len, e);
  if (rc) goto fail;
  c->path = strdup(path);
  if (!c->path) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto fail;
  }
  parser p = {path, c->text, c->text, c->text + len, 1, ',', 0};
  if (len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0) p.r += 3;
  /* any table: CSV or numpy's text, its delimiter sniffed */
  if (!first) p.delim = sniff(p.r, p.end);
  if (!next_record(&p)) {
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: empty file (expected a header row starting with %s)",
                     path, first ? first : "the column names, or a row of numbers");
    goto fail;
  }
  c->has_header = 1;
  for (;;) {
    c->header_line = p.line;
    /* numpy's savetxt writes its header after "# " */
    int hashed = !first && *p.r == '#';
    if (hashed) {
      p.r++;
      while (p.r < p.end && *p.r == ' ') p.r++;
    }
    if ((rc = parse_record(&p, &c->header, &head_cap, &c->ncols, e))) goto fail;
    size_t numbers = 0;
    for (size_t i = 0; !first && i < c->ncols; i++) numbers += is_number(c->header[i]);
    if (first || numbers < c->ncols) break;
    if (!hashed) { /* a first line of numbers is the first row */
      c->has_header = 0;
      break;
    }
    /* "# 1 2 3": one of numpy's comments, not a header */
    p.comments = 1;
    if (!next_record(&p)) {
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: no rows, only comments", path);
      goto fail;
    }
    p.comments = 0;
  }
  if (first && strcmp(c->header[0], first) != 0) {
    rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: the first column is '%s'; it must be %s", path,
                     c->header_line, c->header[0], first);
    goto fail;
  }
  for (size_t i = 0; c->has_header && i < c->ncols; i++) {
    if (!c->header[i][0] && (first || i > 0)) {
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: column %zu has no name", path, c->header_line,
                       i + 1);
      goto fail;
    }
    for (size_t j = 0; j < i; j++)
      if (strcmp(c->header[i], c->header[j]) == 0) {
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: column '%s' appears twice", path,
                         c->header_line, c->header[i]);
        goto fail;
      }
  }
  if (!c->has_header) { /* the first row's fields are its cells; the columns have no names */
    size_t n = c->ncols;
    if ((rc = grow((void **)&c->cells, &cell_cap, n, sizeof *c->cells, e)) ||
        (rc = grow((void **)&c->lines, &line_cap, 1, sizeof *c->lines, e)))
      goto fail;
    memcpy(c->cells, c->header, n * sizeof *c->cells);
    for (size_t i = 0; i < n; i++) c->header[i] = (char *)"";
    c->lines[c->nrows++] = c->header_line;
    c->header_line = 0;
  }
  p.comments = !first;
  const char *against = c->has_header ? "the header has" : "the first row has";
  while (next_record(&p)) {
    size_t line = p.line, n = 0;
    if ((rc = grow((void **)&c->lines, &line_cap, c->nrows + 1, sizeof *c->lines, e))) goto fail;
    for (int last = 0; !last;) {
      char *field;
      if ((rc = parse_field(&p, &field, &last, e))) goto fail;
      if (n == c->ncols) {
        while (!last && !(rc = parse_field(&p, &field, &last, e))) n++;
        rc = rc ? rc
                : wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %zu fields, %s %zu", path, line, n + 1,
                              against, c->ncols);
        goto fail;
      }
      size_t at = c->nrows * c->ncols + n++;
      if ((rc = grow((void **)&c->cells, &cell_cap, at + 1, sizeof *c->cells, e))) goto fail;
      c->cells[at] = field;
    }
    if (n != c->ncols) {
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %zu field%s, %s %zu", path, line, n,
                       n == 1 ? "" : "s", against, c->ncols);
      goto fail;
    }
    c->lines[c->nrows++] = line;
  }
  *out = c;
  return 0;
fail:
  wsisa_csv_free(c);
  return rc;
}

void wsisa_csv_rows(const wsisa_csv *c, char *buf, size_t cap) {
  char head[64];
  if (c->has_header)
    snprintf(head, sizeof head, "after the header on line %zu", c->header_line);
  else
    snprintf(head, sizeof head, "no header");
  if (!c->nrows)
    snprintf(buf, cap, "no rows, %s", head);
  else if (c->nrows == 1)
    snprintf(buf, cap, "line %zu, %s", c->lines[0], head);
  else
    snprintf(buf, cap, "lines %zu-%zu, %s", c->lines[0], c->lines[c->nrows - 1], head);
}

long wsisa_csv_column(const wsisa_csv *c, const char *name) {
  for (size_t i = 0; i < c->ncols; i++)
    if (strcmp(c->header[i], name) == 0) return (long)i;
  return -1;
}

int wsisa_csv_number(const wsisa_csv *c, size_t row, size_t col, double *out, wsisa_err *e) {
  const char *s = wsisa_csv_cell(c, row, col);
  if (!s[0] || ((s[0] == 'n' || s[0] == 'N') &&
                 (strcasecmp(s, "na") == 0 || strcasecmp(s, "nan") == 0))) {
    *out = NAN;
    return 0;
  }
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  /* strtod also reads hex and "infinity"; overflow to inf is a real value too. */
  if ((end == s || *end) && !c->has_header)
    return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: field %zu: '%s' is not a number", c->path,
                       c->lines[row], col + 1, s);
  if (end == s || *end)
    return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: column '%s': '%s' is not a number", c->path,
                       c->lines[row], c->header[col], s);
  *out = v;
  return 0;
}

static int cmp_pairs(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

int wsisa_csv_run_ids(const wsisa_csv *c, uint64_t *ids, wsisa_err *e) {
  for (size_t r = 0; r < c->nrows; r++) {
    const char *s = wsisa_csv_cell(c, r, 0);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!s[0] || *end || errno || s[0] == '-' || s[0] == '+')
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: run_id '%s' is not a whole number >= 0",
                         c->path, c->lines[r], s);
    ids[r] = v;
  }
  /* Repeats: sort a copy of (id, row) pairs. */
  uint64_t(*pairs)[2] = malloc(c->nrows * sizeof *pairs + 1);
  if (!pairs) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t r = 0; r < c->nrows; r++) {
    pairs[r][0] = ids[r];
    pairs[r][1] = r;
  }
  qsort(pairs, c->nrows, sizeof *pairs, cmp_pairs);
  int rc = 0;
  for (size_t i = 1; i < c->nrows && !rc; i++)
    if (pairs[i][0] == pairs[i - 1][0])
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: run_id %" PRIu64 " repeats line %zu", c->path,
                       c->lines[pairs[i][1]], pairs[i][0], c->lines[pairs[i - 1][1]]);
  free(pairs);
  return rc;
}

/* ---- writing ---------------------------------------------------------------- */

struct wsisa_csv_writer {
  FILE *f;
  char *path;
  int fields; /* written in the current row */
};

int wsisa_csv_create(const char *path, wsisa_csv_writer **out, wsisa_err *e) {
  *out = NULL;
  char name[WSISA_PATH_MAX];
  wsisa_output_name(path, name, sizeof name);
  wsisa_csv_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(name))) {
    free(w);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  w->f = fopen(path, "w");
  if (!w->f) {
    int rc = wsisa_error(e, WSISA_EIO, "%s: %s", name, strerror(errno));
    free(w->path);
    free(w);
    return rc;
  }
  errno = 0; /* what a failing write leaves here is its reason (wsisa_output_close) */
  *out = w;
  return 0;
}

int wsisa_csv_create_staged(wsisa_stage *s, const char *path, wsisa_csv_writer **out,
                            wsisa_err *e) {
  *out = NULL;
  const char *temp = wsisa_stage_add(s, path, e);
  if (!temp) return e && e->code ? e->code : WSISA_EIO;
  return wsisa_csv_create(temp, out, e);
}

static void separator(wsisa_csv_writer *w) {
  if (w->fields++) fputc(',', w->f);
}

void wsisa_csv_text(wsisa_csv_writer *w, const char *text) {
  separator(w);
  size_t n = strlen(text);
  int quote = strpbrk(text, ",\"\r\n") != NULL || (n && (is_blank(text[0]) || is_blank(text[n - 1])));
  if (!quote) {
    fputs(text, w->f);
    return;
  }
  fputc('"', w->f);
  for (const char *s = text; *s; s++) {
    if (*s == '"') fputc('"', w->f);
    fputc(*s, w->f);
  }
  fputc('"', w->f);
}

void wsisa_csv_format(double v, char *buf, size_t cap) {
  if (isnan(v)) {
    snprintf(buf, cap, "%s", "");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    return;
  }
  /* Whole numbers (most parameter values) skip printf's float path, which
   * dominates writing 10^5-run designs otherwise. */
  if (v == floor(v) && fabs(v) < 1e15 && cap >= 18) {
    char digits[20];
    long long n = (long long)v;
    unsigned long long m = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
    size_t len = 0;
    do digits[len++] = (char)('0' + m % 10);
    while ((m /= 10) != 0);
    size_t at = 0;
    if (n < 0) buf[at++] = '-';
    while (len) buf[at++] = digits[--len];
    buf[at] = '\0';
    return;
  }
  snprintf(buf, cap, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, cap, "%.17g", v);
}

void wsisa_csv_num(wsisa_csv_writer *w, double v) {
  char buf[40];
  wsisa_csv_format(v, buf, sizeof buf);
  separator(w);
  fputs(buf, w->f);
}

void wsisa_csv_uint(wsisa_csv_writer *w, uint64_t v) {
  separator(w);
  fprintf(w->f, "%" PRIu64, v);
}

void wsisa_csv_end_row(wsisa_csv_writer *w) {
  fputc('\n', w->f);
  w->fields = 0;
}

int wsisa_csv_close(wsisa_csv_writer *w, wsisa_err *e) {
  if (!w) return 0;
  int rc = wsisa_output_close(w->f, w->path, e);
  free(w->path);
  free(w);
  return rc;
}

/* ---- output files ------------------------------------------------------------- */

/* Temporary names are "<final>.tmp<pid>.<n>": messages strip the suffix so
 * they name the file the user asked for. */
void wsisa_output_name(const char *path, char *buf, size_t cap) {
  snprintf(buf, cap, "%s", path);
  char *dot = strrchr(buf, '.');
  if (!dot || dot == buf || !dot[1] || strspn(dot + 1, "0123456789") != strlen(dot + 1)) return;
  *dot = '\0';
  char *tmp = strrchr(buf, '.');
  if (tmp && strncmp(tmp, ".tmp", 4) == 0 && tmp[4] &&
      strspn(tmp + 4, "0123456789") == strlen(tmp + 4)) {
    *tmp = '\0';
    return;
  }
  *dot = '.';
}

int wsisa_output_close(FILE *f, const char *path, wsisa_err *e) {
  char name[WSISA_PATH_MAX];
  wsisa_output_name(path, name, sizeof name);
  int err = 0;
  if (fflush(f) != 0) err = errno ? errno : EIO;
  if (!err && ferror(f)) err = errno ? errno : EIO;
  /* a regular file's blocks are allocated by now or never: fsync finds out
   * (NFS and quotas report late) */
  struct stat st;
  if (!err && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && fsync(fileno(f)) != 0 &&
      errno != EINVAL && errno != EROFS)
    err = errno;
  if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
  return err ? wsisa_error(e, WSISA_EIO, "%s: %s", name, strerror(err)) : 0;
}

int wsisa_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int wsisa_output_check(const char *flag, const char *out, const char *const *inputs, size_t n,
                       wsisa_err *e) {
  for (size_t i = 0; i < n; i++)
    if (inputs[i] && wsisa_same_file(out, inputs[i]))
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s%s%s: the same file as the input %s (writing it would destroy "
                         "the input; choose another output)",
                         flag ? flag : "", flag ? " " : "", out, inputs[i]);
  return 0;
}

int wsisa_output_in_place(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int wsisa_path_has_ext(const char *path, const char *const *exts) {
  size_t len = strlen(path);
  for (const char *const *x = exts; *x; x++) {
    size_t xl = strlen(*x);
    if (len > xl && strcasecmp(path + len - xl, *x) == 0) return 1;
  }
  return 0;
}

int wsisa_output_type(const char *flag, const char *out, const char *const *exts, wsisa_err *e) {
  if (wsisa_path_has_ext(out, exts) || wsisa_output_in_place(out)) return 0;
  char want[128] = "";
  for (const char *const *x = exts; *x; x++) {
    size_t used = strlen(want);
    snprintf(want + used, sizeof want - used, "%s%s", used ? (x[1] ? ", " : " or ") : "", *x);
  }
  return wsisa_error(e, WSISA_EUSAGE, "%s %s: unsupported file type (give %s)", flag, out, want);
}

int wsisa_output_write(const char *path, const void *data, size_t len, wsisa_err *e) {
  wsisa_stage s = WSISA_STAGE_INIT;
  const char *temp = wsisa_stage_add(&s, path, e);
  if (!temp) return e && e->code ? e->code : WSISA_EIO;
  FILE *f = fopen(temp, "wb");
  int rc = f ? 0 : wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (f) {
    errno = 0;
    fwrite(data, 1, len, f);
    rc = wsisa_output_close(f, temp, e);
  }
  if (!rc) rc = wsisa_stage_commit(&s, e);
  if (rc) wsisa_stage_abort(&s);
  return rc;
}

/* ---- staged output ------------------------------------------------------------ */

static int stage_grow(wsisa_stage *s) {
  char **f = realloc(s->final_paths, (s->n + 1) * sizeof *f);
  if (f) s->final_paths = f;
  char **t = realloc(s->temp_paths, (s->n + 1) * sizeof *t);
  if (t) s->temp_paths = t;
  unsigned char *p = realloc(s->in_place, s->n + 1);
  if (p) s->in_place = p;
  int *h = realloc(s->held, (s->n + 1) * sizeof *h);
  if (h) s->held = h;
  return f && t && p && h ? 0 : -1;
}

/* Our end of the FIFO `path`, once a reader has opened it: polled without
 * blocking, so a signal that asks to stop ends the wait. */
static int fifo_reader(const char *path, wsisa_err *e) {
  for (;;) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno != ENXIO && errno != EINTR) {
      wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
      return -1;
    }
    if (wsisa_text_read_stopped()) {
      wsisa_error(e, WSISA_EINTERRUPTED,
                  "%s: interrupted while waiting for a reader; nothing written", path);
      return -1;
    }
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  }
}

const char *wsisa_stage_add(wsisa_stage *s, const char *path, wsisa_err *e) {
  struct stat st, lst;
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    wsisa_error(e, WSISA_EUSAGE, "%s: is a directory, not a file", path);
    return NULL;
  }
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->final_paths[i], path) == 0 || wsisa_same_file(s->final_paths[i], path)) {
      wsisa_error(e, WSISA_EUSAGE, "%s: named twice as an output of one command", path);
      return NULL;
    }
  /* A device, pipe or socket is written where it is: renaming a file over it
   * would replace /dev/null with a regular file. */
  int in_place = wsisa_output_in_place(path);
  char *final = NULL;
  if (exists && !in_place && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
    /* through a symlink, replace the file it points at and keep the link */
    char resolved[WSISA_PATH_MAX];
    if (realpath(path, resolved)) final = strdup(resolved);
  }
  if (!final) final = strdup(path);
  if (!final) {
    wsisa_error(e, WSISA_ENOMEM, "out of memory");
    return NULL;
  }
  int writable;
  if (in_place) {
    writable = access(final, W_OK) == 0;
  } else {
    /* refuse an unwritable place now, under the name the user gave */
    char *dir = strdup(final);
    if (!dir) {
      free(final);
      wsisa_error(e, WSISA_ENOMEM, "out of memory");
      return NULL;
    }
    char *slash = strrchr(dir, '/');
    const char *where = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
    writable = access(where, W_OK) == 0;
    free(dir);
  }
  if (!writable) {
    wsisa_error(e, WSISA_EIO, "%s: cannot write there (%s)", path, strerror(errno));
    free(final);
    return NULL;
  }
  int held = in_place && S_ISFIFO(st.st_mode) ? fifo_reader(final, e) : -1;
  if (in_place && S_ISFIFO(st.st_mode) && held < 0) {
    free(final);
    return NULL;
  }
  size_t len = strlen(final) + 32;
  char *temp = in_place ? strdup(final) : malloc(len);
  if (!temp || stage_grow(s)) {
    if (held >= 0) close(held);
    free(temp);
    free(final);
    wsisa_error(e, WSISA_ENOMEM, "out of memory");
    return NULL;
  }
  /* same directory as the final file, so rename(2) is atomic */
  if (!in_place) snprintf(temp, len, "%s.tmp%ld.%zu", final, (long)getpid(), s->n);
  s->final_paths[s->n] = final;
  s->temp_paths[s->n] = temp;
  s->in_place[s->n] = (unsigned char)in_place;
  s->held[s->n] = held;
  s->n++;
  return temp;
}

static void stage_free(wsisa_stage *s) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->final_paths[i]);
    free(s->temp_paths[i]);
    if (s->held[i] >= 0) close(s->held[i]); /* the reader sees the end now */
  }
  free(s->final_paths);
  free(s->temp_paths);
  free(s->in_place);
  free(s->held);
  s->n = 0;
  s->final_paths = s->temp_paths = NULL;
  s->in_place = NULL;
  s->held = NULL;
}

void wsisa_stage_abort(wsisa_stage *s) {
  for (size_t i = 0; i < s->n; i++)
    if (!s->in_place[i]) unlink(s->temp_paths[i]);
  stage_free(s);
}

int wsisa_stage_commit(wsisa_stage *s, wsisa_err *e) {
  for (size_t i = 0; i < s->n; i++) {
    if (s->in_place[i]) continue;
    /* a device that appeared meanwhile is not replaced either */
    struct stat st;
    if (stat(s->final_paths[i], &st) == 0 && !S_ISREG(st.st_mode)) {
      int rc = wsisa_error(e, WSISA_EIO, "%s: no longer a regular file; not replaced",
                           s->final_paths[i]);
      wsisa_stage_abort(s);
      return rc;
    }
    if (rename(s->temp_paths[i], s->final_paths[i]) != 0) {
      int rc = wsisa_error(e, WSISA_EIO, "%s: %s", s->final_paths[i], strerror(errno));
      for (size_t j = i; j < s->n; j++)
        if (!s->in_place[j]) unlink(s->temp_paths[j]);
      stage_free(s);
      return rc;
    }
  }
  stage_free(s);
  return 0;
}
