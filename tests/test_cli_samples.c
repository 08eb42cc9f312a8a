/* `wsisa plan --samples`, `wsisa run --samples` and `wsisa analyze
 * --samples` read a design file with one reader and one set of rules: each
 * file below is accepted by the three, or refused by the three with the same
 * exit status and the same message. The study is a correlation study (any
 * rows suit it, so analyze's check of the method's layout does not enter)
 * over G1 and G2 on a 256x256 tile; what the analysis needs besides (a
 * varying parameter that varies) is the one difference, marked. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/testutil.h"

/* A one-tile correlation study over G1 and G2, and outputs of its 4 runs. */
static const char *write_study(const char *dir) {
  static char path[WSISA_PATH_MAX];
  char outputs[WSISA_PATH_MAX];
  tu_path(path, "%s/study.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {} },\n"
          "  \"method\": { \"name\": \"correlation\", \"samples\": 4 },\n"
          "  \"sampler\": { \"name\": \"lhs\", \"seed\": 1 },\n"
          "  \"metric\": \"dice\" }\n",
          tu_src("tests/data/tile_256.png"));
  fclose(f);
  tu_path(outputs, "%s/y.csv", dir);
  f = fopen(outputs, "w");
  cr_assert_not_null(f);
  fputs("run_id,dice\n0,0.9\n1,0.8\n2,0.7\n3,0.95\n", f);
  fclose(f);
  return path;
}

/* The message after "wsisa plan: " or "wsisa run: ", without the newline. */
static const char *message(char *err) {
  if (!err) return "";
  char *m = strstr(err, ": ");
  m = m ? m + 2 : err;
  size_t n = strlen(m);
  while (n && m[n - 1] == '\n') m[--n] = '\0';
  return m;
}

#define ROWS(a, b, c, d) a "\n" b "\n" c "\n" d "\n"

static const struct {
  const char *name, *csv; /* csv NULL: the file is not there */
  int exit;
  const char *says; /* in the message of a refusal */
  const char *analysis_needs; /* set: the file is read alike, but analyze refuses it so */
} files[] = {
    {"good", "run_id,G1,G2\n" ROWS("0,60,40", "1,70,30", "2,40,20", "3,80,46"), 0, NULL, NULL},
    {"no_id_column", "G1,G2\n" ROWS("60,40", "70,30", "40,20", "80,46"), 0, NULL, NULL},
    {"a_column_in_any_order", "run_id,G2,G1\n" ROWS("0,40,60", "1,30,70", "2,20,40", "3,46,80"),
     0, NULL, NULL},
    {"tab_delimited", "run_id\tG1\tG2\n" ROWS("0\t60\t40", "1\t70\t30", "2\t40\t20", "3\t80\t46"),
     0, NULL, NULL},
    {"numpy_text_without_header", ROWS("60 40", "70 30", "40 20", "80 46"), 0, NULL, NULL},
    /* a segmentation parameter the study leaves at its default, given */
    {"a_parameter_the_study_does_not_list",
     "run_id,G1,G2,T2\n" ROWS("0,60,40,4", "1,70,30,4", "2,40,20,4", "3,80,46,4"), 0, NULL, NULL},
    /* without run_id, a column that is no parameter is warned about */
    {"another_column_without_run_id",
     "G1,G2,note\n" ROWS("60,40,a", "70,30,b", "40,20,c", "80,46,d"), 0, NULL, NULL},
    /* G2 at the study's value in every run: run and plan take it (a
       one-run design of G1 alone is how a study is run once), the analysis
       cannot tell G2's effect */
    {"a_varying_column_absent", "run_id,G1\n" ROWS("0,60", "1,70", "2,40", "3,80"), 0, NULL,
     ":1: no column 'G2': the analysis needs the values of every parameter"},
    {"not_a_parameter", "run_id,G1,G2,G9\n" ROWS("0,60,40,1", "1,70,30,1", "2,40,20,1", "3,80,46,1"),
     1, ":1: column 'G9' is no parameter of", NULL},
    {"outside_the_range", "run_id,G1,G2\n" ROWS("0,60,40", "1,300,30", "2,40,20", "3,80,46"), 1,
     ":3: G1=300", NULL},
    {"not_a_number", "run_id,G1,G2\n" ROWS("0,60,40", "1,eighty,30", "2,40,20", "3,80,46"), 1,
     ":3: column 'G1': 'eighty' is not a number", NULL},
    {"no_value", "run_id,G1,G2\n" ROWS("0,60,40", "1,,30", "2,40,20", "3,80,46"), 1,
     ":3: G1 has no value", NULL},
    {"no_runs", "run_id,G1,G2\n", 1, ": no runs", NULL},
    {"empty", "", 1, "empty.csv", NULL},
    {"a_repeated_run_id", "run_id,G1,G2\n" ROWS("0,60,40", "0,70,30", "2,40,20", "3,80,46"), 1,
     ":3:", NULL},
    {"a_column_too_many_without_header", ROWS("60 40 3", "70 30 3", "40 20 3", "80 46 3"), 1,
     ":1: 3 columns and no header, but a file without one holds the 2 parameters of", NULL},
    {"absent", NULL, 1, "No such file or directory", NULL},
};

Test(cli_samples, plan_run_and_analyze_accept_and_refuse_the_same_files, .timeout = 300) {
  char tmp[WSISA_PATH_MAX]; /* tu_tmpdir's buffers rotate under tu_run */
  tu_path(tmp, "%s", tu_tmpdir("cli_samples"));
  const char *study = write_study(tmp);
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char csv[WSISA_PATH_MAX], out[WSISA_PATH_MAX], analysis[WSISA_PATH_MAX], args[24576];
    tu_path(csv, "%s/%s.csv", tmp, files[i].name);
    tu_path(out, "%s/%s.run", tmp, files[i].name);
    tu_path(analysis, "%s/%s.analysis", tmp, files[i].name);
    cr_assert_eq(mkdir(analysis, 0755), 0);
    if (files[i].csv) {
      FILE *f = fopen(csv, "w");
      cr_assert_not_null(f);
      fputs(files[i].csv, f);
      fclose(f);
    }
    char *plan_err = NULL, *run_err = NULL, *analyze_err = NULL, *stdout_text = NULL;
    snprintf(args, sizeof args, "plan --study '%s' --samples '%s'", study, csv);
    int plan = tu_run(args, NULL, &plan_err);
    snprintf(args, sizeof args, "run --study '%s' --samples '%s' -o '%s'", study, csv, out);
    int run = tu_run(args, &stdout_text, &run_err);
    snprintf(args, sizeof args, "analyze --study '%s' --samples '%s' --outputs '%s/y.csv' -o '%s'",
             study, csv, tmp, analysis);
    int analyze = tu_run(args, NULL, &analyze_err);
    cr_expect_eq(plan, files[i].exit, "%s: plan exits %d: %s", files[i].name, plan,
                 plan_err ? plan_err : "");
    cr_expect_eq(run, plan, "%s: run exits %d, plan %d: %s", files[i].name, run, plan,
                 run_err ? run_err : "");
    if (files[i].analysis_needs) {
      cr_expect_eq(analyze, 1, "%s: analyze exits %d: %s", files[i].name, analyze,
                   analyze_err ? analyze_err : "");
      cr_expect(analyze_err && strstr(analyze_err, files[i].analysis_needs),
                "%s: analyze says %s", files[i].name, analyze_err ? analyze_err : "");
    } else {
      cr_expect_eq(analyze, plan, "%s: analyze exits %d, plan %d: %s", files[i].name, analyze,
                   plan, analyze_err ? analyze_err : "");
    }
    struct stat st;
    if (files[i].exit) {
      const char *pm = message(plan_err), *rm = message(run_err), *am = message(analyze_err);
      cr_expect_str_eq(rm, pm, "%s: run and plan say different things", files[i].name);
      cr_expect_str_eq(am, pm, "%s: analyze and plan say different things", files[i].name);
      cr_expect(strstr(pm, files[i].says) != NULL, "%s: '%s' does not say '%s'", files[i].name,
                pm, files[i].says);
      cr_expect(stat(out, &st) != 0, "%s: a refused run left %s", files[i].name, out);
      cr_expect(!stdout_text || !*stdout_text, "%s: a refused run printed %s", files[i].name,
                stdout_text);
    } else {
      snprintf(args, sizeof args, "%s/outputs.csv", out);
      cr_expect(stat(args, &st) == 0, "%s: the run wrote no outputs.csv", files[i].name);
      snprintf(args, sizeof args, "%s/indices.csv", analysis);
      cr_expect(files[i].analysis_needs || stat(args, &st) == 0,
                "%s: the analysis wrote no indices.csv", files[i].name);
    }
    free(plan_err);
    free(run_err);
    free(analyze_err);
    free(stdout_text);
  }
}
