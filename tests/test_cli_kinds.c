/* Inputs that are not regular files: a FIFO, a device, a directory given
 * where a file is read whole is refused at once with one line naming it and
 * what it is; no command waits on one (a command that still runs after a few
 * seconds is sent SIGTERM, and must end within a second of it). An output
 * that is a FIFO waits for its reader, a wait SIGTERM ends. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/testutil.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct ended {
  int status;         /* the exit status, or 128 + the signal that ended it */
  int termed;         /* it was still running after the grace and was sent SIGTERM */
  double after_term;  /* seconds from the SIGTERM to its end */
  char *err;
} ended;

/* Run `wsisa args` in `dir`; past `grace` seconds send SIGTERM, past a
 * further 5 s SIGKILL. */
static ended run_bounded(const char *dir, const char *args, double grace) {
  char cmd[8192], err_path[WSISA_PATH_MAX];
  tu_path(err_path, "%s/stderr", dir);
  snprintf(cmd, sizeof cmd, "cd '%s' && exec %s %s > stdout 2> stderr < /dev/null", dir, WSISA_EXE,
           args);
  ended r = {-1, 0, 0, NULL};
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  double start = now(), termed_at = 0;
  int status = 0;
  for (;;) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    double t = now() - start;
    if (!r.termed && t > grace) {
      kill(pid, SIGTERM);
      r.termed = 1;
      termed_at = now();
    } else if (r.termed && now() - termed_at > 5) {
      kill(pid, SIGKILL);
    }
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  if (r.termed) r.after_term = now() - termed_at;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = tu_slurp(err_path, NULL);
  return r;
}

/* The case: refused with `want` on one line, exit `code`, and never waiting
 * (or, sent SIGTERM, gone within a second). */
static void expect_refused(const char *dir, const char *args, const char *want, int code) {
  ended r = run_bounded(dir, args, 20);
  cr_expect(!r.termed || r.after_term < 1.0, "%s: still running %.1f s after SIGTERM", args,
            r.after_term);
  cr_expect(!r.termed, "%s: waited %s", args, "until SIGTERM");
  cr_expect_eq(r.status, code, "%s: exit %d, expected %d (stderr: %s)", args, r.status, code,
               r.err ? r.err : "");
  cr_expect(r.err && strstr(r.err, want), "%s: stderr lacks \"%s\": %s", args, want,
            r.err ? r.err : "(none)");
  int lines = 0;
  for (const char *p = r.err; p && *p; p++) lines += *p == '\n';
  cr_expect_eq(lines, 1, "%s: %d lines on stderr: %s", args, lines, r.err ? r.err : "");
  free(r.err);
}

static const char *fifo_dir(const char *tag) {
  const char *dir = tu_tmpdir(tag);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/p.fifo", dir);
  cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo %s", path);
  return dir;
}

/* The inputs read whole, each given as the FIFO p.fifo (or a device) in a
 * folder of its own: @SRC@ stands for the source tree. */
static const struct {
  const char *tag, *args, *want;
  int code;
} fifo_cases[] = {
    {"kinds_problem", "analyze --problem p.fifo --method morris --samples x.csv --outputs y.csv -o a",
     "p.fifo: a FIFO, not a regular file", 1},
    {"kinds_params", "segment @SRC@/tests/data/tile_256.png --params @p.fifo -o m.png",
     "--params @p.fifo: a FIFO, not a regular file", 2},
    {"kinds_study", "sample --study p.fifo -o s.csv", "p.fifo: a FIFO, not a regular file", 1},
    {"kinds_samples",
     "analyze --study @SRC@/tests/studies/tiny_moat.json --samples p.fifo --outputs y.csv -o a",
     "p.fifo: a FIFO, not a regular file", 1},
    {"kinds_segment", "segment p.fifo -o m.png", "p.fifo: a FIFO, not a regular file", 1},
    {"kinds_segment_dev", "segment /dev/zero -o m.png",
     "/dev/zero: a character device, not a regular file", 1},
    {"kinds_tiles", "tiles p.fifo", "p.fifo: a FIFO, not a regular file", 1},
};

Test(kinds, a_fifo_or_a_device_as_an_input_read_whole) {
  for (size_t i = 0; i < sizeof fifo_cases / sizeof *fifo_cases; i++) {
    char args[TU_LINE_MAX];
    const char *at = strstr(fifo_cases[i].args, "@SRC@");
    if (at)
      snprintf(args, sizeof args, "%.*s%s%s", (int)(at - fifo_cases[i].args), fifo_cases[i].args,
               WSISA_SOURCE_DIR, at + 5);
    else
      snprintf(args, sizeof args, "%s", fifo_cases[i].args);
    expect_refused(fifo_dir(fifo_cases[i].tag), args, fifo_cases[i].want, fifo_cases[i].code);
  }
}

Test(kinds, a_fifo_as_a_reference) {
  const char *dir = fifo_dir("kinds_reference");
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/s.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  const char *slide = tu_src("tests/data/CMU-1-Small-Region.svs");
  fprintf(f,
          "{ \"inputs\": { \"slides\": [\"%s\"], \"reference\": { \"%s\": { \"geojson\": "
          "\"%s/p.fifo\" } } }, \"method\": { \"name\": \"moat\" }, \"metric\": \"object_f1\" }",
          slide, slide, dir);
  fclose(f);
  char want[TU_LINE_MAX];
  snprintf(want, sizeof want, "%s/p.fifo: a FIFO, not a regular file", dir);
  expect_refused(dir, "run --study s.json -o r", want, 1);
  tu_path(path, "%s/r", dir);
  struct stat st;
  cr_expect_neq(stat(path, &st), 0, "%s: made for a refused study", path);
}

/* A finished results folder whose `name` was replaced by what `make` makes
 * of it ("mkfifo", "ln -s /dev/zero"). */
static const char *results_with(const char *tag, const char *name, const char *make) {
  const char *dir = tu_tmpdir(tag);
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "%s %s %s %s/r > /dev/null 2>&1 && rm -f %s/r/%s && %s %s/r/%s", tu_src("tests/make_results.sh"),
           WSISA_EXE, WSISA_SOURCE_DIR, dir, dir, name, make, dir, name);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  return dir;
}

Test(kinds, a_fifo_as_the_journal) {
  const char *dir = results_with("kinds_journal", "journal.csv", "mkfifo");
  expect_refused(dir, "run --check r", "r/journal.csv: a FIFO, not a regular file", 1);
  expect_refused(dir, "run --resume r", "r/journal.csv: a FIFO, not a regular file", 1);
}

Test(kinds, the_journal_a_link_to_dev_zero) {
  const char *dir = results_with("kinds_journal_zero", "journal.csv", "ln -s /dev/zero");
  expect_refused(dir, "run --check r", "r/journal.csv: a character device, not a regular file",
                 1);
  expect_refused(dir, "run --resume r", "r/journal.csv: a character device, not a regular file",
                 1);
}

Test(kinds, a_fifo_as_the_lock) {
  const char *dir = results_with("kinds_lock", "lock", "mkfifo");
  expect_refused(dir, "run --check r", "r/lock: a FIFO, not a regular file", 1);
  expect_refused(dir, "run --resume r", "r/lock: a FIFO, not a regular file", 1);
}

/* An output that is a FIFO is written in place once a reader comes; while
 * none does, `segment --all` (which catches SIGTERM to journal its tiles)
 * still ends within a second of SIGTERM, saying what it waited for. */
Test(kinds, sigterm_ends_a_wait_for_a_fifo_output_reader) {
  const char *dir = tu_tmpdir("kinds_fifo_output");
  char path[WSISA_PATH_MAX], args[TU_LINE_MAX];
  tu_path(path, "%s/n.geojson", dir);
  cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo %s", path);
  snprintf(args, sizeof args, "segment %s --all --region 0,0,300,300 --geojson n.geojson",
           tu_src("tests/data/CMU-1-Small-Region.svs"));
  /* one tile: segmented well within the grace, then the wait */
  ended r = run_bounded(dir, args, 20);
  cr_expect(r.termed, "ended before SIGTERM: %d (%s)", r.status, r.err ? r.err : "");
  cr_expect(r.after_term < 1.0, "still running %.1f s after SIGTERM", r.after_term);
  cr_expect_eq(r.status, 128 + SIGTERM, "exit %d (%s)", r.status, r.err ? r.err : "");
  cr_expect(r.err && strstr(r.err, "n.geojson: interrupted while waiting for a reader"), "%s",
            r.err ? r.err : "(none)");
  free(r.err);
}
