/* Data-driven CLI cases: every folder of tests/cases/ holds `args` (after
 * `wsisa`; @SRC@ is the source tree, @CASE@ the case folder, @TMP@ a fresh
 * temporary folder, @WSISA@ the program), optionally `env` (VAR=value words put before the command,
 * keys expanded),
 * `setup` (a shell command run first, e.g. to make a device node in @TMP@),
 * `exit` (the expected status), `stderr` (text expected in the error, keys
 * expanded), `stdout` (text expected in the output of a case that succeeds,
 * keys expanded) and
 * `files` (lines "absent P", "exists P", "regular P", "chardev P": what must
 * hold of path P afterwards; "absent" and "exists" take glob patterns). A failing case must print nothing on stdout: no
 * partial output. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/testutil.h"

static void chomp(char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

/* Replace every @KEY@ by its value. */
static void expand(const char *in, char *out, size_t cap, const char *case_dir,
                   const char *tmp) {
  const char *keys[] = {"@SRC@", "@CASE@", "@TMP@", "@WSISA@"};
  const char *vals[] = {WSISA_SOURCE_DIR, case_dir, tmp, WSISA_EXE};
  size_t n = 0;
  while (*in && n + 1 < cap) {
    int hit = 0;
    for (int k = 0; k < 4 && !hit; k++) {
      size_t kl = strlen(keys[k]);
      if (strncmp(in, keys[k], kl) == 0) {
        n += (size_t)snprintf(out + n, cap - n, "%s", vals[k]);
        in += kl;
        hit = 1;
      }
    }
    if (!hit) out[n++] = *in++;
  }
  out[n < cap ? n : cap - 1] = '\0';
}

/* Each line of `files`: a predicate and a path. */
static int check_files(const char *name, const char *spec, const char *case_dir, const char *tmp) {
  int ok = 1;
  char *copy = strdup(spec), *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char what[32], raw[WSISA_PATH_MAX], path[8192];
    if (sscanf(line, "%31s %4095[^\n]", what, raw) != 2) continue;
    expand(raw, path, sizeof path, case_dir, tmp);
    struct stat st;
    int exists = lstat(path, &st) == 0, holds;
    if (!exists && strchr(path, '*')) {
      /* a pattern: does any path match? */
      glob_t g;
      exists = glob(path, 0, NULL, &g) == 0 && g.gl_pathc > 0;
      globfree(&g);
    }
    if (strcmp(what, "absent") == 0) holds = !exists;
    else if (strcmp(what, "exists") == 0) holds = exists;
    else if (strcmp(what, "regular") == 0) holds = exists && S_ISREG(st.st_mode);
    else if (strcmp(what, "chardev") == 0) holds = exists && S_ISCHR(st.st_mode);
    else holds = 0;
    cr_expect(holds, "case %s: files: '%s' does not hold", name, line);
    ok &= holds;
  }
  free(copy);
  return ok;
}

static int run_case(const char *name) {
  char dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX], args[8192], env_line[2048] = "", cmd[12288];
  tu_path(dir, "%s/tests/cases/%s", WSISA_SOURCE_DIR, name);
  tu_path(path, "%s/args", dir);
  char *raw = tu_slurp(path, NULL);
  cr_assert_not_null(raw, "case %s: no args file", name);
  chomp(raw);
  const char *tmp = tu_tmpdir(name);
  expand(raw, args, sizeof args, dir, tmp);
  free(raw);
  tu_path(path, "%s/env", dir);
  char *env = tu_slurp(path, NULL);
  if (env) {
    char expanded_env[2000];
    chomp(env);
    expand(env, expanded_env, sizeof expanded_env, dir, tmp);
    snprintf(env_line, sizeof env_line, "env %s ", expanded_env);
    free(env);
  }
  tu_path(path, "%s/setup", dir);
  char *setup = tu_slurp(path, NULL);
  if (setup) {
    char line[8192];
    chomp(setup);
    expand(setup, line, sizeof line, dir, tmp);
    free(setup);
    int rc = system(line);
    cr_assert_eq(rc, 0, "case %s: setup failed: %s", name, line);
  }
  tu_path(path, "%s/exit", dir);
  char *exit_s = tu_slurp(path, NULL);
  int want_exit = exit_s ? atoi(exit_s) : 0;
  free(exit_s);
  tu_path(path, "%s/stderr", dir);
  char *want_err = tu_slurp(path, NULL);
  if (want_err) {
    chomp(want_err);
    char *expanded = malloc(8192);
    cr_assert_not_null(expanded);
    expand(want_err, expanded, 8192, dir, tmp);
    free(want_err);
    want_err = expanded;
  }

  char *out = NULL, *err = NULL;
  int status;
  if (env_line[0]) {
    snprintf(cmd, sizeof cmd, "%s%s %s", env_line, WSISA_EXE, args);
    status = tu_run_shell(cmd, &out, &err);
  } else {
    status = tu_run(args, &out, &err);
  }
  int ok = 1;
  cr_expect_eq(status, want_exit, "case %s: exit %d, expected %d (stderr: %s)", name, status,
               want_exit, err ? err : "");
  ok &= status == want_exit;
  if (want_err && want_err[0]) {
    int found = err && strstr(err, want_err) != NULL;
    cr_expect(found, "case %s: stderr lacks \"%s\"; it was: %s", name, want_err,
              err ? err : "(none)");
    ok &= found;
  }
  tu_path(path, "%s/stdout", dir);
  char *want_out = tu_slurp(path, NULL);
  if (want_out) {
    char *expanded = malloc(8192);
    cr_assert_not_null(expanded);
    chomp(want_out);
    expand(want_out, expanded, 8192, dir, tmp);
    int found = out && strstr(out, expanded) != NULL;
    cr_expect(found, "case %s: stdout lacks \"%s\"; it was: %s", name, expanded,
              out ? out : "(none)");
    ok &= found;
    free(expanded);
    free(want_out);
  }
  if (want_exit != 0) {
    int quiet = !out || out[0] == '\0';
    cr_expect(quiet, "case %s: failed but wrote to stdout: %s", name, out);
    ok &= quiet;
    /* One clear line: the error is a single line. */
    int lines = 0;
    for (const char *p = err; p && *p; p++) lines += *p == '\n';
    if (want_err && want_err[0] && strncmp(want_err, "usage:", 6) != 0) {
      cr_expect_eq(lines, 1, "case %s: expected one error line, got %d: %s", name, lines, err);
      ok &= lines == 1;
    }
  }
  tu_path(path, "%s/files", dir);
  char *files = tu_slurp(path, NULL);
  if (files) ok &= check_files(name, files, dir, tmp);
  free(files);
  free(out);
  free(err);
  free(want_err);
  return ok;
}

Test(cli, cases) {
  char dir[WSISA_PATH_MAX];
  tu_path(dir, "%s/tests/cases", WSISA_SOURCE_DIR);
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "no tests/cases folder");
  struct dirent *ent;
  int total = 0, passed = 0;
  while ((ent = readdir(d))) {
    if (ent->d_name[0] == '.') continue;
    total++;
    passed += run_case(ent->d_name);
  }
  closedir(d);
  cr_assert_gt(total, 10, "expected the bad-input cases, found %d", total);
  cr_expect_eq(passed, total, "%d of %d cases failed", total - passed, total);
}
