/* CSV: quoting, line endings and line numbers when reading; tables of any
 * shape (numpy's text); every malformed input refused with file:line; exact
 * numbers when writing; staged files. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/csv.h"
#include "tests/testutil.h"

static const char *write_file(const char *name, const char *text) {
  static char path[4][WSISA_PATH_MAX];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s", tu_tmpdir("csv"), name);
  FILE *f = fopen(p, "wb");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

Test(io_csv, quotes_line_endings_and_line_numbers) {
  const char *path = write_file("q.csv",
                                "\xEF\xBB\xBFrun_id, name ,\"va,lue\"\r\n"
                                "0,\"a \"\"quoted\"\" word\", 1.5\r\n"
                                "\r\n"
                                "1,\"two\nlines\",  -2 \n"
                                "2,,\"\"\n");
  wsisa_csv *c = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_csv_read(path, &c, &e), 0, "%s", e.msg);
  cr_expect_eq(c->ncols, 3);
  cr_expect_eq(c->nrows, 3);
  cr_expect_str_eq(c->header[0], "run_id", "the byte-order mark is skipped");
  cr_expect_str_eq(c->header[1], "name", "spaces around unquoted fields are trimmed");
  cr_expect_str_eq(c->header[2], "va,lue");
  cr_expect_str_eq(wsisa_csv_cell(c, 0, 1), "a \"quoted\" word");
  cr_expect_str_eq(wsisa_csv_cell(c, 1, 1), "two\nlines");
  cr_expect_str_eq(wsisa_csv_cell(c, 2, 1), "");
  cr_expect_str_eq(wsisa_csv_cell(c, 2, 2), "");
  cr_expect_eq(c->lines[0], 2);
  cr_expect_eq(c->lines[1], 4, "the blank line counts");
  cr_expect_eq(c->lines[2], 6, "the quoted line break counts");
  double v;
  cr_assert_eq(wsisa_csv_number(c, 1, 2, &v, NULL), 0);
  cr_expect_eq(v, -2);
  cr_assert_eq(wsisa_csv_number(c, 2, 2, &v, NULL), 0);
  cr_expect(isnan(v), "an empty cell is a missing value");
  uint64_t ids[3];
  cr_assert_eq(wsisa_csv_run_ids(c, ids, NULL), 0);
  cr_expect_eq(ids[2], 2);
  cr_expect_eq(wsisa_csv_column(c, "va,lue"), 2);
  cr_expect_eq(wsisa_csv_column(c, "nope"), -1);
  wsisa_csv_free(c);
}

Test(io_csv, missing_and_non_finite_numbers) {
  const char *path = write_file("n.csv", "run_id,y\n0,NA\n1,nan\n2,inf\n3,-Infinity\n4,abc\n5,1e400\n");
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read(path, &c, NULL), 0);
  double v;
  cr_assert_eq(wsisa_csv_number(c, 0, 1, &v, NULL), 0);
  cr_expect(isnan(v));
  cr_assert_eq(wsisa_csv_number(c, 1, 1, &v, NULL), 0);
  cr_expect(isnan(v));
  cr_assert_eq(wsisa_csv_number(c, 2, 1, &v, NULL), 0);
  cr_expect(isinf(v) && v > 0);
  cr_assert_eq(wsisa_csv_number(c, 3, 1, &v, NULL), 0);
  cr_expect(isinf(v) && v < 0);
  cr_assert_eq(wsisa_csv_number(c, 5, 1, &v, NULL), 0);
  cr_expect(isinf(v), "overflow is an infinite value, which analyses treat as missing");
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_csv_number(c, 4, 1, &v, &e), WSISA_EFORMAT);
  cr_expect(strstr(e.msg, "n.csv:6: column 'y': 'abc' is not a number"), "%s", e.msg);
  wsisa_csv_free(c);
}

/* Each malformed file and the text its error must hold. */
static const struct {
  const char *text, *want;
} bad[] = {
    {"", "b.csv: empty file"},
    {"\n  \n", "b.csv: empty file"},
    {"id,y\n0,1\n", "b.csv:1: the first column is 'id'; it must be run_id"},
    {"run_id,y,y\n", "b.csv:1: column 'y' appears twice"},
    {"run_id,,y\n", "b.csv:1: column 2 has no name"},
    {"run_id,y\n0,1\n1,2,3\n", "b.csv:3: 3 fields, the header has 2"},
    {"run_id,y\n0,1\n1\n", "b.csv:3: 1 field, the header has 2"},
    {"run_id,y\n0,\"open\n1,2\n", "b.csv:2: a quoted field is not closed"},
    {"run_id,y\n0,\"a\"b\n", "b.csv:2: text after a closing quote"},
};

/* Tables as numpy's savetxt and CSV writers leave them: the delimiter found
 * from the first lines, a header or none (a first line of numbers is a row),
 * numpy's "# " header and comments; and which lines the rows are. */
Test(io_csv, tables_of_any_shape) {
  const struct {
    const char *text;
    int header;
    size_t ncols, nrows, first_line;
    const char *first, *last, *rows;
  } cases[] = {
      {"1.0e+00 -2.5e-01\n3.0e+00  4.0e+00 \n", 0, 2, 2, 1, "1.0e+00", "4.0e+00",
       "lines 1-2, no header"},
      {"# x1 x2\n1 2\n\n# a comment\n3 4\n", 1, 2, 2, 2, "1", "4",
       "lines 2-5, after the header on line 1"},
      {"x1\tx2\n1\t\n", 1, 2, 1, 2, "1", "", "line 2, after the header on line 1"},
      {"# f,g\r\n1.5,nan\r\n", 1, 2, 1, 2, "1.5", "nan", "line 2, after the header on line 1"},
      {",x1\n0,7\n", 1, 2, 1, 2, "0", "7", "line 2, after the header on line 1"},
      {"\n# 1 2\n5\t6\n", 0, 2, 1, 3, "5", "6", "line 3, no header"},
      {"NA 2\n3 4\n", 0, 2, 2, 1, "NA", "4", "lines 1-2, no header"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wsisa_csv *c = NULL;
    wsisa_err e = WSISA_ERR_INIT;
    cr_assert_eq(wsisa_csv_read_table(write_file("t.txt", cases[i].text), NULL, &c, &e), 0,
                 "case %zu: %s", i, e.msg);
    cr_expect_eq(c->has_header, cases[i].header, "case %zu", i);
    cr_expect_eq(c->ncols, cases[i].ncols, "case %zu", i);
    cr_expect_eq(c->nrows, cases[i].nrows, "case %zu", i);
    cr_expect_eq(c->lines[0], cases[i].first_line, "case %zu", i);
    cr_expect_str_eq(wsisa_csv_cell(c, 0, 0), cases[i].first, "case %zu", i);
    cr_expect_str_eq(wsisa_csv_cell(c, c->nrows - 1, c->ncols - 1), cases[i].last, "case %zu", i);
    char rows[128];
    wsisa_csv_rows(c, rows, sizeof rows);
    cr_expect_str_eq(rows, cases[i].rows, "case %zu", i);
    wsisa_csv_free(c);
  }
  /* a row of another width names the first row's, and a field without a header its place */
  wsisa_csv *c = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_csv_read_table(write_file("w.txt", "1 2\n3 4 5\n"), NULL, &c, &e),
               WSISA_EFORMAT);
  cr_expect(strstr(e.msg, "w.txt:2: 3 fields, the first row has 2"), "%s", e.msg);
  cr_assert_eq(wsisa_csv_read_table(write_file("n.txt", "1 2\n3 x\n"), NULL, &c, NULL), 0);
  double v;
  wsisa_err e2 = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_csv_number(c, 1, 1, &v, &e2), WSISA_EFORMAT);
  cr_expect(strstr(e2.msg, "n.txt:2: field 2: 'x' is not a number"), "%s", e2.msg);
  wsisa_csv_free(c);
}

Test(io_csv, malformed_files_are_refused_with_file_and_line) {
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *path = write_file("b.csv", bad[i].text);
    wsisa_csv *c = NULL;
    wsisa_err e = WSISA_ERR_INIT;
    cr_expect_eq(wsisa_csv_read(path, &c, &e), WSISA_EFORMAT, "case %zu", i);
    cr_expect(strstr(e.msg, bad[i].want), "case %zu: '%s' lacks '%s'", i, e.msg, bad[i].want);
    cr_expect_null(c);
  }
  wsisa_csv *c = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_csv_read("/no/such/file.csv", &c, &e), WSISA_EIO);
  cr_expect(strstr(e.msg, "/no/such/file.csv: No such file"), "%s", e.msg);
}

Test(io_csv, run_ids_are_whole_and_unique) {
  const struct {
    const char *text, *want;
  } ids[] = {{"run_id,y\n0,1\n3,1\n0,2\n", "r.csv:4: run_id 0 repeats line 2"},
             {"run_id,y\n-1,1\n", "r.csv:2: run_id '-1' is not a whole number >= 0"},
             {"run_id,y\n1.5,1\n", "r.csv:2: run_id '1.5' is not a whole number"},
             {"run_id,y\n,1\n", "r.csv:2: run_id '' is not a whole number"}};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
    wsisa_csv *c = NULL;
    cr_assert_eq(wsisa_csv_read(write_file("r.csv", ids[i].text), &c, NULL), 0);
    uint64_t out[4];
    wsisa_err e = WSISA_ERR_INIT;
    cr_expect_eq(wsisa_csv_run_ids(c, out, &e), WSISA_EFORMAT);
    cr_expect(strstr(e.msg, ids[i].want), "'%s' lacks '%s'", e.msg, ids[i].want);
    wsisa_csv_free(c);
  }
}

Test(io_csv, written_numbers_and_text_read_back_exactly) {
  const double values[] = {0.1, 1.0 / 3, -2.5, 1e-300, 1e22, 123456789012345678.0, 0, NAN};
  const size_t n = sizeof values / sizeof *values;
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/w.csv", tu_tmpdir("csvw"));
  wsisa_csv_writer *w;
  cr_assert_eq(wsisa_csv_create(path, &w, NULL), 0);
  wsisa_csv_text(w, "run_id");
  wsisa_csv_text(w, "x");
  wsisa_csv_text(w, "label");
  wsisa_csv_end_row(w);
  for (size_t i = 0; i < n; i++) {
    wsisa_csv_uint(w, i);
    wsisa_csv_num(w, values[i]);
    wsisa_csv_text(w, i % 2 ? "say \"hi\", twice" : " edge ");
    wsisa_csv_end_row(w);
  }
  cr_assert_eq(wsisa_csv_close(w, NULL), 0);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read(path, &c, NULL), 0);
  cr_assert_eq(c->nrows, n);
  for (size_t i = 0; i < n; i++) {
    double v;
    cr_assert_eq(wsisa_csv_number(c, i, 1, &v, NULL), 0);
    if (isnan(values[i]))
      cr_expect(isnan(v));
    else
      cr_expect_eq(v, values[i], "row %zu: %.17g read back as %.17g", i, values[i], v);
    cr_expect_str_eq(wsisa_csv_cell(c, i, 2), i % 2 ? "say \"hi\", twice" : " edge ");
  }
  char buf[40];
  wsisa_csv_format(0.1, buf, sizeof buf);
  cr_expect_str_eq(buf, "0.1", "short when short reads back");
  wsisa_csv_free(c);
}

Test(io_csv, staged_files_appear_together_or_not_at_all) {
  const char *dir = tu_tmpdir("stage");
  char a[WSISA_PATH_MAX], b[WSISA_PATH_MAX];
  tu_path(a, "%s/a.txt", dir);
  tu_path(b, "%s/b.txt", dir);
  wsisa_stage s = WSISA_STAGE_INIT;
  const char *ta = wsisa_stage_add(&s, a, NULL), *tb = wsisa_stage_add(&s, b, NULL);
  cr_assert(ta && tb);
  FILE *f = fopen(ta, "w");
  fputs("A", f);
  fclose(f);
  f = fopen(tb, "w");
  fputs("B", f);
  fclose(f);
  cr_expect_neq(access(a, F_OK), 0, "nothing under the final name before commit");
  cr_assert_eq(wsisa_stage_commit(&s, NULL), 0);
  cr_expect_eq(access(a, F_OK), 0);
  cr_expect_eq(access(b, F_OK), 0);

  char c[WSISA_PATH_MAX];
  tu_path(c, "%s/c.txt", dir);
  const char *tc = wsisa_stage_add(&s, c, NULL);
  char temp[WSISA_PATH_MAX];
  tu_path(temp, "%s", tc);
  f = fopen(tc, "w");
  fputs("C", f);
  fclose(f);
  wsisa_stage_abort(&s);
  cr_expect_neq(access(c, F_OK), 0, "abort publishes nothing");
  cr_expect_neq(access(temp, F_OK), 0, "abort removes the temporary file");
}
