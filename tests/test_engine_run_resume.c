/* A journal line edited and its CRC made again proves itself whole (the CRC
 * guards against torn and partial writes, not a deliberate edit): --check
 * finds the outputs disagree with it, and --resume, which writes them again
 * from the journal, says which files it rewrites and why, on stderr and in
 * run.json, never silently. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study.h"
#include "tests/testutil.h"

/* Line `lineno` of `path`: its sixth field (nuclei) raised by 7 and its
 * CRC-32 made again, as a deliberate edit would. */
static void edit_line(const char *path, int lineno) {
  size_t len = 0;
  char *text = tu_slurp(path, &len), *line = text;
  cr_assert_not_null(text);
  for (int i = 1; i < lineno; i++) line = strchr(line, '\n') + 1;
  char *end = strchr(line, '\n'), *field = line;
  for (int i = 0; i < 5; i++) field = strchr(field, ',') + 1;
  char *after = strchr(field, ','), *last = end;
  while (last[-1] != ',') last--;
  char body[1024], edited[1100];
  snprintf(body, sizeof body, "%.*s%ld%.*s", (int)(field - line), line, strtol(field, NULL, 10) + 7,
           (int)(last - 1 - after), after);
  snprintf(edited, sizeof edited, "%s,%08x", body, (unsigned)wsisa__crc32(body, strlen(body)));
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "%.*s%s%s", (int)(line - text), text, edited, end);
  fclose(f);
  free(text);
}

Test(resume, outputs_that_disagree_with_the_journal_are_named_when_rewritten) {
  const char *dir = tu_tmpdir("resume_report");
  char cmd[8192], journal[WSISA_PATH_MAX], run_json[WSISA_PATH_MAX], *err = NULL;
  snprintf(cmd, sizeof cmd, "%s %s %s %s/r", tu_src("tests/make_results.sh"), WSISA_EXE,
           WSISA_SOURCE_DIR, dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, NULL), 0, "%s", cmd);
  tu_path(journal, "%s/r/journal.csv", dir);
  edit_line(journal, 3);
  snprintf(cmd, sizeof cmd, "run --check %s/r", dir);
  cr_expect_eq(tu_run(cmd, NULL, &err), 1, "--check passed an edited journal: %s", err);
  cr_expect(err && strstr(err, "metrics.csv:") && strstr(err, "not what the journal gives"), "%s",
            err ? err : "");
  free(err);
  /* warnings shown, as by default (the suites run with WSISA_LOG=error) */
  snprintf(cmd, sizeof cmd, "env WSISA_LOG=warn %s run --resume %s/r", WSISA_EXE, dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s", err ? err : "");
  cr_expect(err && strstr(err, "metrics.csv:") && strstr(err, "rewritten from the journal"),
            "--resume said nothing of the files it rewrote: %s", err ? err : "");
  cr_expect(err && strstr(err, "outputs.csv:"), "%s", err ? err : "");
  free(err);
  tu_path(run_json, "%s/r/run.json", dir);
  json_t *root = json_load_file(run_json, 0, NULL);
  json_t *resumes = json_object_get(root, "resumes");
  json_t *rewritten = json_object_get(json_array_get(resumes, json_array_size(resumes) - 1),
                                      "rewritten");
  cr_expect_eq(json_array_size(rewritten), 2, "run.json: the resume lists %zu rewritten files",
               json_array_size(rewritten));
  cr_expect_str_eq(json_string_value(json_object_get(json_array_get(rewritten, 0), "file")),
                   "metrics.csv");
  json_decref(root);
  /* the outputs are the journal's now: the folder is whole again */
  snprintf(cmd, sizeof cmd, "run --check %s/r", dir);
  cr_expect_eq(tu_run(cmd, NULL, NULL), 0);
}

Test(resume, a_resume_of_a_folder_that_agrees_names_nothing) {
  const char *dir = tu_tmpdir("resume_quiet");
  char cmd[8192], *err = NULL;
  snprintf(cmd, sizeof cmd, "%s %s %s %s/r", tu_src("tests/make_results.sh"), WSISA_EXE,
           WSISA_SOURCE_DIR, dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, NULL), 0, "%s", cmd);
  snprintf(cmd, sizeof cmd, "env WSISA_LOG=warn %s run --resume %s/r", WSISA_EXE, dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s", err ? err : "");
  cr_expect(!err || !strstr(err, "rewritten"), "%s", err);
  free(err);
}
