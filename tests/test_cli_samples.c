/* `wsisa plan --samples` and `wsisa run --samples` read a design CSV with one
 * reader: each file below is accepted by both, or refused by both with the
 * same exit status and the same message; and `wsisa analyze --samples`, the
 * same reader, refuses a fault of the file itself with the same words. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/testutil.h"

/* A one-tile MOAT study over G1 and G2. */
static const char *write_study(const char *dir) {
  static char path[4300];
  snprintf(path, sizeof path, "%s/study.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 } }\n",
          tu_src("tests/data/tile_256.png"));
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

static const struct {
  const char *name, *csv;
  int exit;
  const char *says; /* in the message of a refusal */
  int of_the_file;  /* a fault of the file itself, not of a value for the segmentation */
} files[] = {
    {"good", "run_id,G1,G2\n0,80,45\n", 0, NULL, 0},
    {"a_varying_column_absent", "run_id,G1\n0,80\n", 0, NULL, 0},
    {"a_column_in_any_order", "run_id,G2,G1\n3,45,80\n", 0, NULL, 0},
    {"a_parameter_the_study_does_not_list", "run_id,G1,G2,T2\n0,80,45,3\n", 0, NULL, 0},
    {"numpy_text_without_header", "80 45\n60 45\n", 0, NULL, 0},
    {"not_a_parameter", "run_id,G1,G2,G9\n0,80,45,1\n", 1, ":1: column 'G9' is no parameter of",
     1},
    {"outside_the_range", "run_id,G1,G2\n0,80,45\n1,300,45\n", 1, ":3: G1=300", 0},
    {"not_a_number", "run_id,G1,G2\n0,eighty,45\n", 1, ":2: column 'G1': 'eighty' is not a number",
     1},
    {"no_value", "run_id,G1,G2\n0,,45\n", 1, ":2: G1 has no value", 1},
    {"no_runs", "run_id,G1,G2\n", 1, ": no runs", 1},
    {"empty", "", 1, "empty.csv", 1},
    {"a_repeated_run_id", "run_id,G1,G2\n0,80,45\n0,60,45\n", 1, ":3:", 1},
    {"a_column_too_many_without_header", "80 45 3\n", 1,
     ":1: 3 columns and no header, but a file without one holds the 2 parameters of", 1},
};

Test(cli_samples, plan_and_run_accept_and_refuse_the_same_files, .timeout = 300) {
  char tmp[4096]; /* tu_tmpdir's buffers rotate under tu_run */
  snprintf(tmp, sizeof tmp, "%s", tu_tmpdir("cli_samples"));
  const char *study = write_study(tmp);
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char csv[4400], out[4400], args[24576];
    snprintf(csv, sizeof csv, "%s/%s.csv", tmp, files[i].name);
    snprintf(out, sizeof out, "%s/%s.run", tmp, files[i].name);
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fputs(files[i].csv, f);
    fclose(f);
    char *plan_err = NULL, *run_err = NULL, *stdout_text = NULL;
    snprintf(args, sizeof args, "plan --study '%s' --samples '%s'", study, csv);
    int plan = tu_run(args, NULL, &plan_err);
    snprintf(args, sizeof args, "run --study '%s' --samples '%s' -o '%s'", study, csv, out);
    int run = tu_run(args, &stdout_text, &run_err);
    cr_expect_eq(plan, files[i].exit, "%s: plan exits %d: %s", files[i].name, plan,
                 plan_err ? plan_err : "");
    cr_expect_eq(run, plan, "%s: run exits %d, plan %d: %s", files[i].name, run, plan,
                 run_err ? run_err : "");
    struct stat st;
    if (files[i].exit) {
      const char *pm = message(plan_err), *rm = message(run_err);
      cr_expect_str_eq(rm, pm, "%s: run and plan say different things", files[i].name);
      cr_expect(strstr(pm, files[i].says) != NULL, "%s: '%s' does not say '%s'", files[i].name,
                pm, files[i].says);
      cr_expect(stat(out, &st) != 0, "%s: a refused run left %s", files[i].name, out);
      char *analyze_err = NULL;
      snprintf(args, sizeof args, "analyze --study '%s' --samples '%s' --outputs '%s' -o '%s'",
               study, csv, csv, out);
      int analyze = files[i].of_the_file ? tu_run(args, NULL, &analyze_err) : 1;
      cr_expect_eq(analyze, 1, "%s: analyze exits %d", files[i].name, analyze);
      cr_expect(!files[i].of_the_file || strstr(message(analyze_err), files[i].says),
                "%s: analyze says '%s'", files[i].name, message(analyze_err));
      free(analyze_err);
      cr_expect(!stdout_text || !*stdout_text, "%s: a refused run printed %s", files[i].name,
                stdout_text);
    } else {
      snprintf(args, sizeof args, "%s/outputs.csv", out);
      cr_expect(stat(args, &st) == 0, "%s: the run wrote no outputs.csv", files[i].name);
    }
    free(plan_err);
    free(run_err);
    free(stdout_text);
  }
}
