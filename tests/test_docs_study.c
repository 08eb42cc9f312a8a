/* docs/study-file.md held to the code: every ```json block is a study that
 * `wsisa sample` accepts, every ```json rejected block one it refuses with the
 * message of the ```text block after it, the table of the 15 parameters is
 * sa/segmentation.c's, and the defaults the key tables state are the ones a
 * minimal study resolves to. Both pages' file names point at files. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/run.h"
#include "engine/study/study.h"
#include "sa/sa.h"
#include "tests/testutil.h"

#define DOC "docs/study-file.md"

/* ---- the page as fenced blocks and table rows ------------------------------- */

typedef struct block {
  char info[64]; /* the fence's info string: "json", "json rejected", "text", "sh" */
  size_t line;   /* of the opening fence */
  char *text;
} block;

typedef struct page {
  char *text;
  char **lines;
  size_t nlines;
  block *blocks;
  size_t nblocks;
} page;

static void page_read(page *p) {
  memset(p, 0, sizeof *p);
  p->text = tu_slurp(tu_src(DOC), NULL);
  cr_assert_not_null(p->text, "cannot read %s", DOC);
  size_t cap = 1;
  for (const char *c = p->text; *c; c++) cap += *c == '\n';
  p->lines = calloc(cap, sizeof *p->lines);
  p->blocks = calloc(cap, sizeof *p->blocks);
  cr_assert(p->lines && p->blocks);
  for (char *line = p->text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    p->lines[p->nlines++] = line;
  }
  block *open = NULL;
  size_t len = 0;
  for (size_t i = 0; i < p->nlines; i++) {
    const char *l = p->lines[i];
    if (strncmp(l, "```", 3) != 0) {
      if (open) {
        size_t n = strlen(l);
        open->text = realloc(open->text, len + n + 2);
        cr_assert_not_null(open->text);
        memcpy(open->text + len, l, n);
        len += n;
        open->text[len++] = '\n';
        open->text[len] = '\0';
      }
      continue;
    }
    if (open) {
      cr_assert_str_eq(l, "```", "%s:%zu: a fence inside a block", DOC, i + 1);
      if (!open->text) open->text = calloc(1, 1);
      open = NULL;
      continue;
    }
    open = &p->blocks[p->nblocks++];
    snprintf(open->info, sizeof open->info, "%s", l + 3);
    open->line = i + 1;
    len = 0;
  }
  cr_assert_null(open, "%s: a block is never closed", DOC);
}

static void page_free(page *p) {
  for (size_t i = 0; i < p->nblocks; i++) free(p->blocks[i].text);
  free(p->blocks);
  free(p->lines);
  free(p->text);
}

/* The cells of a table row "| a | b |", trimmed, into cells[] (at most max);
 * 0 when the line is not a row. The line is cut in place. */
static size_t row_cells(char *line, char **cells, size_t max) {
  if (line[0] != '|') return 0;
  size_t n = 0;
  char *c = line + 1;
  while (n < max) {
    /* an escaped \| (as in "Σ\|A∩B\|") belongs to the cell */
    char *bar = c;
    while (*bar && (*bar != '|' || (bar > c && bar[-1] == '\\'))) bar++;
    if (!*bar) break;
    *bar = '\0';
    while (isspace((unsigned char)*c)) c++;
    char *end = c + strlen(c);
    while (end > c && isspace((unsigned char)end[-1])) *--end = '\0';
    cells[n++] = c;
    c = bar + 1;
  }
  return n;
}

/* "`x`" into "x" (in place); NULL when the text does not start with a back-quoted token. */
static char *first_code(char *cell) {
  if (cell[0] != '`') return NULL;
  char *end = strchr(cell + 1, '`');
  if (!end) return NULL;
  *end = '\0';
  return cell + 1;
}

/* ---- running wsisa sample on a block ------------------------------------------ */

/* Write the block as study.json in a fresh folder and run `wsisa sample` there,
 * so messages name the file "study.json" as the page does. */
static int sample_block(const block *b, char **err) {
  const char *dir = tu_tmpdir("docs-study");
  cr_assert_not_null(dir);
  char path[WSISA_PATH_MAX], command[8800];
  tu_path(path, "%s/study.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(b->text, f);
  fclose(f);
  snprintf(command, sizeof command, "cd '%s' && %s sample --study study.json -o s.csv", dir,
           WSISA_EXE);
  return tu_run_shell(command, NULL, err);
}

Test(docs_study, every_json_block_is_a_study_wsisa_sample_accepts) {
  page p;
  page_read(&p);
  size_t n = 0;
  for (size_t i = 0; i < p.nblocks; i++) {
    if (strcmp(p.blocks[i].info, "json") != 0) continue;
    char *err = NULL;
    int status = sample_block(&p.blocks[i], &err);
    cr_expect_eq(status, 0, "%s:%zu: wsisa sample exits %d: %s", DOC, p.blocks[i].line, status,
                 err ? err : "");
    free(err);
    n++;
  }
  /* the smallest studies, one per section, and the three complete examples */
  cr_expect_geq(n, 10, "only %zu json blocks in %s", n, DOC);
  page_free(&p);
}

Test(docs_study, every_rejected_block_fails_with_the_message_shown) {
  page p;
  page_read(&p);
  size_t n = 0;
  for (size_t i = 0; i < p.nblocks; i++) {
    const block *b = &p.blocks[i];
    if (strcmp(b->info, "json rejected") != 0) continue;
    cr_assert(i + 1 < p.nblocks && strcmp(p.blocks[i + 1].info, "text") == 0,
              "%s:%zu: a rejected study needs its message in a text block after it", DOC, b->line);
    char want[1024], *err = NULL;
    snprintf(want, sizeof want, "wsisa sample: %s", p.blocks[i + 1].text);
    int status = sample_block(b, &err);
    cr_expect_eq(status, 2, "%s:%zu: wsisa sample exits %d", DOC, b->line, status);
    cr_expect_str_eq(err ? err : "", want, "%s:%zu: wsisa sample says\n  %s  the page says\n  %s",
                     DOC, b->line, err ? err : "", want);
    free(err);
    n++;
  }
  cr_expect_geq(n, 5, "only %zu rejected blocks in %s", n, DOC);
  page_free(&p);
}

/* ---- the parameter table ---------------------------------------------------------- */

static void expect_cell(const char *got, const char *want, const char *name, const char *column) {
  cr_expect_str_eq(got, want, "%s: %s of %s is \"%s\", the code says \"%s\"", DOC, column, name,
                   got, want);
}

Test(docs_study, parameter_table_is_the_code_table) {
  page p;
  page_read(&p);
  size_t at = 0;
  while (at < p.nlines &&
         strncmp(p.lines[at], "| name | paper abbrev | task level | default | SA range |", 57) != 0)
    at++;
  cr_assert_lt(at, p.nlines, "%s: no parameter table", DOC);
  at += 2; /* the header and the |---| row */
  size_t row = 0;
  for (; at < p.nlines && p.lines[at][0] == '|'; at++, row++) {
    char *cells[8], want[128];
    cr_assert_eq(row_cells(p.lines[at], cells, 8), 6, "%s:%zu: not 6 cells", DOC, at + 1);
    cr_assert_lt(row, WSISA_SA_NSEG, "%s: more than %d parameters", DOC, WSISA_SA_NSEG);
    const wsisa_sa_seg_param *sp = &wsisa_sa_seg_params[row];
    snprintf(want, sizeof want, "`%s`", sp->name);
    expect_cell(cells[0], want, sp->name, "row (canonical order)");
    snprintf(want, sizeof want, "`%s`", sp->abbrev);
    expect_cell(cells[1], want, sp->name, "the abbreviation");
    snprintf(want, sizeof want, "%d", sp->level);
    expect_cell(cells[2], want, sp->name, "the task level");
    snprintf(want, sizeof want, "%g", sp->def);
    expect_cell(cells[3], want, sp->name, "the default");
    if (sp->kind == WSISA_SA_CATEGORICAL)
      snprintf(want, sizeof want, "values 4, 8");
    else if (sp->kind == WSISA_SA_DISCRETE)
      snprintf(want, sizeof want, "%g..%g step %g", sp->lo, sp->hi, sp->step);
    else
      snprintf(want, sizeof want, "%g..%g, integer", sp->lo, sp->hi);
    expect_cell(cells[4], want, sp->name, "the SA range");
    if (sp->kind == WSISA_SA_CATEGORICAL)
      snprintf(want, sizeof want, "%g or %g", sp->valid_lo, sp->valid_hi);
    else if (sp->valid_hi == INT_MAX)
      snprintf(want, sizeof want, "%s%g or more", sp->integer_valued ? "whole, " : "", sp->valid_lo);
    else
      snprintf(want, sizeof want, "%s%g..%g", sp->integer_valued ? "whole, " : "", sp->valid_lo,
               sp->valid_hi);
    expect_cell(cells[5], want, sp->name, "the valid values");
  }
  cr_expect_eq(row, WSISA_SA_NSEG, "%s: %zu parameters in the table", DOC, row);
  page_free(&p);
}

/* ---- the defaults of the key tables ------------------------------------------------- */

/* The resolved form of the smallest segmentation study with `method`. */
static json_t *resolved(const char *method) {
  char text[256], *json = NULL;
  snprintf(text, sizeof text,
           "{\"inputs\": {\"slides\": [\"slide.svs\"]}, \"method\": \"%s\"}", method);
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse(text, "study.json", &s, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_study_to_json(s, &json, &e), 0, "%s", e.msg);
  json_error_t jerr;
  json_t *root = json_loads(json, 0, &jerr);
  cr_assert_not_null(root);
  free(json);
  wsisa_study_free(s);
  return root;
}

/* A resolved value at "a.b" as text; the resolved study leaves out knobs at 0
 * (pool, max_buckets, ...), so an absent one reads "0". */
static void value_at(json_t *root, const char *path, char *buf, size_t cap) {
  char head[64];
  const char *dot = strchr(path, '.');
  cr_assert_not_null(dot);
  snprintf(head, sizeof head, "%.*s", (int)(dot - path), path);
  json_t *v = json_object_get(json_object_get(root, head), dot + 1);
  if (!v) snprintf(buf, cap, "0");
  else if (json_is_string(v)) snprintf(buf, cap, "%s", json_string_value(v));
  else if (json_is_integer(v)) snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
  else if (json_is_real(v)) snprintf(buf, cap, "%g", json_real_value(v));
  else if (json_is_boolean(v)) snprintf(buf, cap, "%s", json_is_true(v) ? "true" : "false");
  else cr_assert_fail("%s: not a scalar", path);
}

static const char *const methods[] = {"moat", "vbd", "correlation", "two_phase"};

static void expect_default(const char *key, const char *method, const char *want, size_t line) {
  char got[128];
  json_t *root = resolved(method);
  value_at(root, key, got, sizeof got);
  json_decref(root);
  cr_expect_str_eq(want, got, "%s:%zu: %s defaults to %s (method %s), the page says %s", DOC, line,
                   key, got, method, want);
}

/* A default cell "`halton` for `moat`; `sobol` for `vbd` and `two_phase`; ...". */
static size_t expect_per_method(const char *key, char *cell, size_t line) {
  size_t checked = 0;
  for (char *clause = strtok(cell, ";"); clause; clause = strtok(NULL, ";")) {
    while (*clause == ' ') clause++;
    char *value = first_code(clause);
    cr_assert_not_null(value, "%s:%zu: %s", DOC, line, clause);
    char *rest = value + strlen(value) + 1;
    for (char *q; (q = strchr(rest, '`'));) {
      char *end = strchr(q + 1, '`');
      cr_assert_not_null(end);
      *end = '\0';
      expect_default(key, q + 1, value, line);
      checked++;
      rest = end + 1;
    }
  }
  return checked;
}

Test(docs_study, stated_defaults_are_the_parsers) {
  page p;
  page_read(&p);
  size_t checked = 0, bucket_rows = 0;
  for (size_t i = 0; i < p.nlines; i++) {
    char *cells[8];
    size_t n = row_cells(p.lines[i], cells, 8);
    if (n < 4) continue;
    char *key = first_code(cells[0]);
    if (!key || !strchr(key, '.') || !strchr("imsre", key[0])) continue;
    /* key | methods | type | default | ... (the method knobs), else key | type | default */
    int knob_table = strncmp(key, "method.", 7) == 0;
    char *def = cells[knob_table ? 3 : 2];
    if (strstr(def, " for `")) {
      checked += expect_per_method(key, def, i + 1);
    } else if (def[0] == '`') {
      char *want = first_code(def);
      const char *method = "moat";
      if (knob_table)
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++)
          if (strncmp(cells[1], methods[m], strlen(methods[m])) == 0) method = methods[m];
      expect_default(key, method, want, i + 1);
      checked++;
    } else if (strcmp(key, "reuse.max_bucket_size") == 0 || strcmp(key, "reuse.max_buckets") == 0) {
      /* what `wsisa run` applies when the study sets none, on 5 workers */
      wsisa_study *s = NULL;
      wsisa_err e = WSISA_ERR_INIT;
      cr_assert_eq(wsisa_study_parse("{\"inputs\": {\"slides\": [\"s.svs\"]}, \"method\": \"moat\"}",
                                     "study.json", &s, &e),
                   0);
      wsisa_reuse_opts o;
      wsisa_plan_reuse_opts(s, 5, NULL, &o);
      wsisa_study_free(s);
      long stated = strtol(def, NULL, 10);
      if (strcmp(key, "reuse.max_bucket_size") == 0) {
        cr_expect_eq((size_t)stated, o.max_bucket_size, "%s:%zu: max_bucket_size", DOC, i + 1);
        cr_expect_eq(o.max_bucket_size, WSISA_DEFAULT_BUCKET_SIZE);
      } else {
        cr_expect(strstr(def, "× workers"), "%s:%zu: %s", DOC, i + 1, def);
        cr_expect_eq((size_t)stated * 5, o.max_buckets, "%s:%zu: max_buckets", DOC, i + 1);
      }
      bucket_rows++;
    }
  }
  /* inputs 5, method 9, sampler 4 + 1, reuse 2 */
  cr_expect_geq(checked, 21, "only %zu defaults checked in %s", checked, DOC);
  cr_expect_eq(bucket_rows, 2);
  page_free(&p);
}

/* ---- files the pages name ----------------------------------------------------------- */

/* A path in the source tree: under one of its folders, no placeholder. */
static int names_a_file(const char *token) {
  static const char *const folders[] = {"core/", "sa/",    "reuse/", "io/",    "codelets/",
                                        "engine/", "cli/", "bench/", "tests/", "cmake/"};
  if (strpbrk(token, " <>*")) return 0;
  for (size_t i = 0; i < sizeof folders / sizeof *folders; i++)
    if (strncmp(token, folders[i], strlen(folders[i])) == 0 && strchr(token, '.')) return 1;
  return 0;
}

/* Every source file a page names in back-quotes exists, so a rename cannot
 * leave the pages pointing nowhere. */
Test(docs_study, files_the_pages_name_exist) {
  static const char *const pages[] = {DOC, "docs/adding-a-codelet.md"};
  size_t checked = 0;
  for (size_t k = 0; k < sizeof pages / sizeof *pages; k++) {
    char *text = tu_slurp(tu_src(pages[k]), NULL);
    cr_assert_not_null(text, "cannot read %s", pages[k]);
    for (char *open = strchr(text, '`'), *close; open; open = strchr(close + 1, '`')) {
      if (!(close = strchr(open + 1, '`'))) break;
      *close = '\0';
      if (names_a_file(open + 1)) {
        cr_expect_eq(access(tu_src(open + 1), F_OK), 0, "%s names %s, which does not exist",
                     pages[k], open + 1);
        checked++;
      }
    }
    free(text);
  }
  cr_expect_geq(checked, 20, "only %zu file names found", checked);
}
