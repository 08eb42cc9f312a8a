/* A results folder that nothing loses and nothing clobbers: journal lines
 * that prove themselves whole (a torn tail cut off, a planted bad line
 * refused), one writer at a time (two runs, two resumes), SIGTERM then
 * --resume to the same bytes, a full disk that says why and resumes to the
 * same bytes, outputs that never replace a device or an input, refusals that
 * leave nothing behind, a 10^7-sample design refused at once. */
#define _XOPEN_SOURCE 700 /* mknod(2) */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "tests/testutil.h"

/* A MOAT study of 2 trajectories x 4 runs over three parameters on `tile`. */
static const char *write_study(const char *dir, const char *tile) {
  static char path[WSISA_PATH_MAX];
  tu_path(path, "%s/study.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"recon_conn\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
          "  \"metric\": [\"dice\", \"nucleus_count\"] }\n",
          tu_src(tile));
  fclose(f);
  return path;
}

static char *file_in(const char *dir, const char *name) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/%s", dir, name);
  return tu_slurp(path, NULL);
}

/* `wsisa run` to completion into a new folder under `tag`. */
static void run_ok(const char *study, const char *flags, char *dir, size_t cap, const char *tag) {
  snprintf(dir, cap, "%s/r", tu_tmpdir(tag));
  char cmd[16000], *err = NULL;
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s run --study '%s' -o '%s' %s", WSISA_EXE,
           study, dir, flags);
  int status = tu_run_shell(cmd, NULL, &err);
  cr_assert_eq(status, 0, "%s: %s", cmd, err ? err : "");
  free(err);
}

/* metrics.csv and outputs.csv of two folders, byte for byte. */
static void expect_same_outputs(const char *a, const char *b) {
  static const char *const names[] = {"metrics.csv", "outputs.csv", "samples.csv"};
  for (int i = 0; i < 3; i++) {
    char *x = file_in(a, names[i]), *y = file_in(b, names[i]);
    cr_assert_not_null(x, "%s/%s missing", a, names[i]);
    cr_assert_not_null(y, "%s/%s missing", b, names[i]);
    cr_expect_str_eq(x, y, "%s differs between %s and %s", names[i], a, b);
    free(x);
    free(y);
  }
}

static int check_folder(const char *dir, char **err) {
  char args[8400];
  snprintf(args, sizeof args, "run --check '%s'", dir);
  return tu_run(args, NULL, err);
}

/* A process started with its stderr into `err_path`. */
static pid_t spawn_err(char *const argv[], const char *err_path) {
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY), err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null >= 0) dup2(null, 1);
    if (err >= 0) dup2(err, 2);
    setenv("STARPU_NCPU", "2", 1);
    setenv("WSISA_LOG", "error", 1); /* no progress lines: stderr is the error alone */
    execv(WSISA_EXE, argv);
    _exit(127);
  }
  return pid;
}

static int exit_status(pid_t pid) {
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void sleep_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL); }

/* A run on tile_1024 interrupted by `sig` once `lines` journal lines are
 * there; its exit status, stderr in *err. */
static int interrupted_run(const char *study, const char *dir, int sig, size_t lines, char **err) {
  char journal[WSISA_PATH_MAX], err_path[WSISA_PATH_MAX];
  tu_path(journal, "%s/journal.csv", dir);
  tu_path(err_path, "%s.stderr", dir);
  char *argv[] = {WSISA_EXE, "run", "--study", (char *)study, "-o", (char *)dir, "--reuse", "none",
                  NULL};
  pid_t pid = spawn_err(argv, err_path);
  for (int i = 0; i < 60000 && tu_count_lines(journal) < lines + 1; i++) sleep_ms(5);
  kill(pid, sig);
  int status = exit_status(pid);
  *err = tu_slurp(err_path, NULL);
  return status;
}

/* ---- journal integrity ---------------------------------------------------------- */

Test(robust, torn_journal_tail_is_cut_off_and_resumes_identically, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_256.png");
  char ref[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX], *err = NULL;
  run_ok(study, "", ref, sizeof ref, "ref");
  run_ok(study, "", dir, sizeof dir, "torn");
  /* a kill in the middle of the last line, and the outputs not written yet */
  tu_path(path, "%s/journal.csv", dir);
  size_t len = 0;
  char *text = tu_slurp(path, &len);
  cr_assert_not_null(text);
  cr_assert_eq(truncate(path, (off_t)len - 9), 0);
  tu_path(path, "%s/metrics.csv", dir);
  unlink(path);
  tu_path(path, "%s/outputs.csv", dir);
  unlink(path);
  cr_expect_eq(check_folder(dir, &err), 1, "--check took a torn journal as whole");
  cr_expect(err && strstr(err, "journal.csv:9: last line torn"), "--check said: %s", err);
  free(err);
  char cmd[5000];
  snprintf(cmd, sizeof cmd, "env WSISA_LOG=warn %s run --resume '%s'", WSISA_EXE, dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "resume failed: %s", err);
  cr_expect(err && strstr(err, "journal.csv:9: last line cut short: cut off"), "no warning: %s", err);
  free(err);
  expect_same_outputs(ref, dir);
  /* the journal is whole again: the cut line's unit ran again */
  cr_expect_eq(check_folder(dir, &err), 0, "--check after the resume: %s", err);
  free(err);
  /* the text before the torn line is kept as it was */
  char *after = file_in(dir, "journal.csv");
  char *nl = strrchr(text, '\n');
  *nl = '\0';
  nl = strrchr(text, '\n');
  cr_expect(after && strncmp(after, text, (size_t)(nl - text)) == 0, "the whole lines changed");
  free(after);
  free(text);
}

Test(robust, planted_bad_journal_line_is_refused_not_read, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_256.png");
  char dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX], args[TU_LINE_MAX], *err = NULL;
  run_ok(study, "", dir, sizeof dir, "planted");
  tu_path(path, "%s/journal.csv", dir);
  char *text = tu_slurp(path, NULL), *metrics = file_in(dir, "metrics.csv");
  cr_assert_not_null(text);
  /* line 5: its nucleus count 1 less, as a torn write appended to would read */
  char *line = text;
  for (int i = 1; i < 5; i++) line = strchr(line, '\n') + 1;
  char *field = line;
  for (int i = 0; i < 5; i++) field = strchr(field, ',') + 1;
  cr_assert(*field >= '1' && *field <= '9');
  (*field)--;
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  cr_expect_eq(tu_run(args, NULL, &err), 1);
  cr_expect(err && strstr(err, "journal.csv:5: damaged line (checksum does not match)"),
            "resume said: %s", err);
  free(err);
  cr_expect_eq(check_folder(dir, &err), 1);
  cr_expect(err && strstr(err, "journal.csv:5: damaged line"), "--check said: %s", err);
  free(err);
  /* nothing was appended, nothing rewritten */
  char *now = tu_slurp(path, NULL), *metrics_now = file_in(dir, "metrics.csv");
  cr_expect_str_eq(now, text, "the journal changed");
  cr_expect_str_eq(metrics_now, metrics, "metrics.csv changed");
  free(now);
  free(metrics_now);
  free(metrics);
  free(text);
}

/* ---- one writer ------------------------------------------------------------------- */

Test(robust, two_concurrent_runs_on_one_folder, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_256.png");
  char dir[WSISA_PATH_MAX], err_a[WSISA_PATH_MAX], err_b[WSISA_PATH_MAX];
  tu_path(dir, "%s/r", tu_tmpdir("two_runs"));
  tu_path(err_a, "%s.a", dir);
  tu_path(err_b, "%s.b", dir);
  char *argv[] = {WSISA_EXE, "run", "--study", (char *)study, "-o", dir, NULL};
  pid_t a = spawn_err(argv, err_a), b = spawn_err(argv, err_b);
  int sa = exit_status(a), sb = exit_status(b);
  char *ea = tu_slurp(err_a, NULL), *eb = tu_slurp(err_b, NULL);
  cr_log_info("two runs: exit %d (%s) and %d (%s)\n", sa, ea, sb, eb);
  cr_expect((sa == 0) != (sb == 0), "exactly one of two runs must write the folder: %d, %d", sa, sb);
  const char *loser = sa == 0 ? eb : ea;
  pid_t winner = sa == 0 ? a : b;
  char want[64];
  snprintf(want, sizeof want, "(pid %ld)", (long)winner);
  cr_expect(loser && strstr(loser, want), "the refusal does not name the writer %s: %s", want,
            loser);
  cr_expect_eq(sa == 0 ? sb : sa, 2);
  /* one writer's journal: a header and 8 lines, no repeats */
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/journal.csv", dir);
  cr_expect_eq(tu_count_lines(path), 9);
  char *err = NULL;
  cr_expect_eq(check_folder(dir, &err), 0, "%s", err);
  free(err);
  free(ea);
  free(eb);
}

Test(robust, two_concurrent_resumes_on_one_folder, .timeout = 400) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_1024.png");
  char ref[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], err_a[WSISA_PATH_MAX], err_b[WSISA_PATH_MAX],
      *err = NULL;
  run_ok(study, "--reuse none", ref, sizeof ref, "ref");
  tu_path(dir, "%s/r", tu_tmpdir("two_resumes"));
  cr_assert_eq(interrupted_run(study, dir, SIGTERM, 2, &err), 143, "%s", err);
  free(err);
  tu_path(err_a, "%s.a", dir);
  tu_path(err_b, "%s.b", dir);
  char *argv[] = {WSISA_EXE, "run", "--resume", dir, NULL};
  pid_t a = spawn_err(argv, err_a), b = spawn_err(argv, err_b);
  int sa = exit_status(a), sb = exit_status(b);
  char *ea = tu_slurp(err_a, NULL), *eb = tu_slurp(err_b, NULL);
  cr_log_info("two resumes: exit %d (%s) and %d (%s)\n", sa, ea, sb, eb);
  cr_expect((sa == 0) != (sb == 0), "exactly one of two resumes must write: %d, %d", sa, sb);
  char want[64];
  snprintf(want, sizeof want, "(pid %ld)", (long)(sa == 0 ? a : b));
  const char *loser = sa == 0 ? eb : ea;
  cr_expect(loser && strstr(loser, want), "the refusal does not name the writer %s: %s", want,
            loser);
  expect_same_outputs(ref, dir);
  cr_expect_eq(check_folder(dir, &err), 0, "%s", err);
  free(err);
  free(ea);
  free(eb);
}

/* A writer killed outright leaves the lock file, not the lock. */
Test(robust, a_killed_writer_leaves_no_stale_lock, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_1024.png");
  char dir[WSISA_PATH_MAX], args[TU_LINE_MAX], *err = NULL;
  tu_path(dir, "%s/r", tu_tmpdir("stale"));
  cr_assert_eq(interrupted_run(study, dir, SIGKILL, 1, &err), 128 + SIGKILL);
  free(err);
  char *lock = file_in(dir, "lock");
  cr_expect(lock && atol(lock) > 0, "the lock file holds no pid: %s", lock);
  free(lock);
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  cr_expect_eq(tu_run(args, NULL, &err), 0, "%s", err);
  free(err);
}

/* ---- signals -------------------------------------------------------------------------- */

Test(robust, sigterm_then_resume_gives_the_same_bytes, .timeout = 400) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_1024.png");
  char ref[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], args[TU_LINE_MAX], *err = NULL;
  run_ok(study, "--reuse none", ref, sizeof ref, "ref");
  for (int k = 0; k < 2; k++) {
    int sig = k ? SIGINT : SIGTERM;
    tu_path(dir, "%s/r", tu_tmpdir("sig"));
    int status = interrupted_run(study, dir, sig, 2, &err);
    cr_expect_eq(status, 128 + sig, "signal %d: exit %d (%s)", sig, status, err);
    /* one line: how far it got and how to go on */
    char want[TU_LINE_MAX];
    snprintf(want, sizeof want, " of 8 units; continue with `wsisa run --resume %s`\n", dir);
    cr_expect(err && strstr(err, "wsisa run: interrupted after ") && strstr(err, want),
              "signal %d: %s", sig, err);
    size_t lines = 0;
    for (const char *p = err; p && *p; p++) lines += *p == '\n';
    cr_expect_eq(lines, 1, "%s", err);
    free(err);
    /* what is there is whole; only the rest is missing */
    cr_expect_eq(check_folder(dir, &err), 1);
    cr_expect(err && strstr(err, "(run, tile) results in the journal"), "--check said: %s", err);
    cr_expect(err && !strstr(err, "torn"), "an interrupted run tore its journal: %s", err);
    free(err);
    snprintf(args, sizeof args, "run --resume '%s'", dir);
    cr_assert_eq(tu_run(args, NULL, &err), 0, "resume: %s", err);
    free(err);
    expect_same_outputs(ref, dir);
  }
}

/* ---- a full disk -------------------------------------------------------------------- */

/* A small tmpfs, filled so the results folder can be made but run.json
 * cannot: the run ends saying why, and once room is made --resume gives the
 * same bytes. Needs mount(2) (root in a container that allows it). */
Test(robust, full_disk_says_why_and_resumes_identically, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_256.png");
  char ref[WSISA_PATH_MAX], mnt[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], filler[WSISA_PATH_MAX],
      args[TU_LINE_MAX], *err = NULL;
  run_ok(study, "", ref, sizeof ref, "ref");
  tu_path(mnt, "%s", tu_tmpdir("disk"));
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") != 0)
    cr_skip_test("cannot mount a tmpfs here (%s)", strerror(errno));
  /* 64 pages of 4 KiB; the folder takes 4 (lock, study.json, samples.csv,
   * journal.csv): leave just those */
  tu_path(filler, "%s/filler", mnt);
  FILE *f = fopen(filler, "w");
  cr_assert_not_null(f);
  static char block[4096];
  for (int i = 0; i < 60; i++) fwrite(block, 1, sizeof block, f);
  int full = fclose(f);
  tu_path(dir, "%s/r", mnt);
  char cmd[5000];
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s run --study '%s' -o '%s'", WSISA_EXE, study, dir);
  int status = tu_run_shell(cmd, NULL, &err);
  cr_log_info("full disk (filler %s): exit %d: %s\n", full ? "short" : "written", status, err);
  cr_expect_eq(status, 1);
  char want[TU_LINE_MAX];
  snprintf(want, sizeof want, "%s/run.json: No space left on device", dir);
  cr_expect(err && strstr(err, want), "no reason: %s", err);
  snprintf(want, sizeof want, "`wsisa run --resume %s`", dir);
  cr_expect(err && strstr(err, want), "no way on: %s", err);
  free(err);
  /* no temporary file left behind */
  DIR *d = opendir(dir);
  struct dirent *ent;
  while (d && (ent = readdir(d)))
    cr_expect(!strstr(ent->d_name, ".tmp"), "%s left behind", ent->d_name);
  if (d) closedir(d);
  unlink(filler);
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  cr_expect_eq(tu_run(args, NULL, &err), 0, "resume: %s", err);
  free(err);
  expect_same_outputs(ref, dir);
  cr_expect_eq(check_folder(dir, &err), 0, "%s", err);
  free(err);
  umount(mnt);
}

/* The disk fills while the journal grows (the test fills the tmpfs as soon
 * as the folder exists): the journal's last line may be torn; the run says
 * why, and once room is made --resume cuts the torn line off and ends with
 * the same bytes as a run that never failed. */
Test(robust, full_disk_mid_journal_resumes_identically, .timeout = 400) {
  const char *tmp = tu_tmpdir("study");
  char study[WSISA_PATH_MAX], ref[WSISA_PATH_MAX], mnt[WSISA_PATH_MAX], dir[WSISA_PATH_MAX],
      filler[WSISA_PATH_MAX], journal[WSISA_PATH_MAX], errs[TU_LINE_MAX];
  char args[TU_LINE_MAX], *err = NULL;
  tu_path(study, "%s/study.json", tmp);
  FILE *f = fopen(study, "w");
  cr_assert_not_null(f);
  /* 160 runs: the journal outgrows its first 4 KiB page */
  fprintf(f, "{ \"inputs\": { \"images\": [\"%s\"] },\n"
             "  \"method\": { \"name\": \"moat\", \"trajectories\": 10, \"levels\": 4 },\n"
             "  \"metric\": [\"dice\"] }\n", tu_src("tests/data/tile_256.png"));
  fclose(f);
  run_ok(study, "", ref, sizeof ref, "ref");
  tu_path(mnt, "%s", tu_tmpdir("disk"));
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=512k") != 0)
    cr_skip_test("cannot mount a tmpfs here (%s)", strerror(errno));
  tu_path(dir, "%s/r", mnt);
  tu_path(journal, "%s/journal.csv", dir);
  tu_path(filler, "%s/filler", mnt);
  snprintf(errs, sizeof errs, "%s.stderr", tmp);
  char *argv[] = {WSISA_EXE, "run", "--study", study, "-o", dir, NULL};
  pid_t pid = spawn_err(argv, errs);
  for (int i = 0; i < 60000 && access(journal, F_OK) != 0; i++) sleep_ms(2);
  size_t at_fill = tu_count_lines(journal);
  f = fopen(filler, "w");
  static char block[4096];
  while (f && fwrite(block, 1, sizeof block, f) == sizeof block && fflush(f) == 0) {
  }
  if (f) fclose(f);
  int status = exit_status(pid);
  err = tu_slurp(errs, NULL);
  cr_log_info("disk filled at %zu journal lines; exit %d: %s\n", at_fill, status, err);
  cr_expect_eq(status, 1);
  char want[TU_LINE_MAX];
  snprintf(want, sizeof want, "%s/journal.csv: No space left on device", dir);
  cr_expect(err && strstr(err, want), "no reason: %s", err);
  free(err);
  char *found = NULL;
  check_folder(dir, &found);
  cr_log_info("--check on the full disk's folder: %s\n", found);
  free(found);
  unlink(filler);
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  cr_expect_eq(tu_run(args, NULL, &err), 0, "resume: %s", err);
  free(err);
  expect_same_outputs(ref, dir);
  cr_expect_eq(check_folder(dir, &err), 0, "%s", err);
  free(err);
  umount(mnt);
}

/* ---- outputs -------------------------------------------------------------------------- */

Test(robust, a_device_output_stays_a_device) {
  const char *dir = tu_tmpdir("dev");
  char null_path[WSISA_PATH_MAX], full_path[WSISA_PATH_MAX], args[9000], *err = NULL;
  tu_path(null_path, "%s/null.csv", dir);
  tu_path(full_path, "%s/full.csv", dir);
  if (mknod(null_path, S_IFCHR | 0666, makedev(1, 3)) != 0)
    cr_skip_test("cannot make a device node here (%s)", strerror(errno));
  cr_assert_eq(mknod(full_path, S_IFCHR | 0666, makedev(1, 7)), 0);
  snprintf(args, sizeof args, "sample --study %s -o '%s'", tu_src("tests/studies/ishigami.json"),
           null_path);
  cr_expect_eq(tu_run(args, NULL, &err), 0, "%s", err);
  free(err);
  snprintf(args, sizeof args, "sample --study %s -o '%s'", tu_src("tests/studies/ishigami.json"),
           full_path);
  cr_expect_eq(tu_run(args, NULL, &err), 1);
  cr_expect(err && strstr(err, "full.csv: No space left on device"), "%s", err);
  free(err);
  const char *paths[] = {null_path, full_path};
  for (int i = 0; i < 2; i++) {
    struct stat st;
    cr_assert_eq(stat(paths[i], &st), 0);
    cr_expect(S_ISCHR(st.st_mode), "%s is no longer a character device", paths[i]);
    cr_expect_eq(major(st.st_rdev), 1);
  }
  /* standard output on a full device: the command says so */
  snprintf(args, sizeof args, "(%s sample --study %s -o '%s' > /dev/full)", WSISA_EXE,
           tu_src("tests/studies/ishigami.json"), null_path);
  cr_expect_eq(tu_run_shell(args, NULL, &err), 1);
  cr_expect(err && strstr(err, "standard output: No space left on device"), "%s", err);
  free(err);
  /* and nothing else appeared beside them */
  DIR *d = opendir(dir);
  struct dirent *ent;
  int n = 0;
  while (d && (ent = readdir(d))) n += ent->d_name[0] != '.';
  if (d) closedir(d);
  cr_expect_eq(n, 2);
}

Test(robust, an_output_that_is_an_input_is_refused) {
  const char *dir = tu_tmpdir("inout");
  char tile[WSISA_PATH_MAX], link[WSISA_PATH_MAX], study[WSISA_PATH_MAX], args[20000], *err = NULL;
  tu_path(tile, "%s/t.png", dir);
  tu_path(link, "%s/link.png", dir);
  tu_path(study, "%s/s.json", dir);
  snprintf(args, sizeof args, "cp %s %s && cp %s %s && ln -s t.png %s",
           tu_src("tests/data/tile_256.png"), tile, tu_src("tests/studies/ishigami.json"), study,
           link);
  cr_assert_eq(system(args), 0);
  char *before = tu_slurp(tile, NULL), *study_before = tu_slurp(study, NULL);
  const char *outs[] = {tile, link};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, "segment '%s' -o '%s'", tile, outs[i]);
    cr_expect_eq(tu_run(args, NULL, &err), 2, "%s", err);
    cr_expect(err && strstr(err, "the same file as the input"), "%s", err);
    free(err);
  }
  snprintf(args, sizeof args, "sample --study '%s' -o '%s'", study, study);
  cr_expect_eq(tu_run(args, NULL, &err), 2, "%s", err);
  free(err);
  char *after = tu_slurp(tile, NULL), *study_after = tu_slurp(study, NULL);
  cr_expect(after && memcmp(before, after, 100) == 0, "the input image changed");
  cr_expect_str_eq(study_after, study_before, "the study changed");
  struct stat st;
  cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the symlink was replaced");
  free(before);
  free(after);
  free(study_before);
  free(study_after);
}

/* Every refusal of `wsisa run` comes before the folder exists. */
Test(robust, a_refused_run_leaves_nothing, .timeout = 200) {
  const char *dir = tu_tmpdir("refused");
  char study[WSISA_PATH_MAX], big[WSISA_PATH_MAX], lvl[WSISA_PATH_MAX], args[9000];
  tu_path(study, "%s", write_study(dir, "tests/data/tile_1024.png"));
  tu_path(big, "%s/big.json", dir);
  tu_path(lvl, "%s/lvl.json", dir);
  FILE *f = fopen(big, "w");
  fprintf(f, "{ \"inputs\": { \"images\": [\"%s\"] }, \"method\": { \"name\": \"vbd\", "
             "\"samples\": 10000000 } }\n", tu_src("tests/data/tile_256.png"));
  fclose(f);
  f = fopen(lvl, "w");
  fprintf(f, "{ \"inputs\": { \"slides\": [\"%s\"], \"level\": 2 }, \"method\": { \"name\": "
             "\"moat\" } }\n", tu_src("tests/data/CMU-1-Small-Region.svs"));
  fclose(f);
  const char *const refusals[][3] = {
      {"", study, "--memory-limit 10M"},          {"STARPU_SCHED=nosuch", study, ""},
      {"", big, ""},                               {"", lvl, ""},
      {"", study, "--reuse none --max-buckets 0"}, {"", study, "--samples /no/such.csv"}};
  for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
    char out[WSISA_PATH_MAX], *err = NULL;
    tu_path(out, "%s/out", tu_tmpdir("refused_out"));
    snprintf(args, sizeof args, "env %s %s run --study '%s' -o '%s' %s",
             refusals[i][0][0] ? refusals[i][0] : "A=1", WSISA_EXE, refusals[i][1], out,
             refusals[i][2]);
    int status = tu_run_shell(args, NULL, &err);
    cr_expect_neq(status, 0, "%s ran", args);
    /* the folder of -o is empty: no results folder, no temporary one */
    char *slash = strrchr(out, '/');
    *slash = '\0';
    DIR *d = opendir(out);
    struct dirent *ent;
    int n = 0;
    while (d && (ent = readdir(d))) n += ent->d_name[0] != '.';
    if (d) closedir(d);
    cr_expect_eq(n, 0, "%s (%s) left %d entries", args, err, n);
    free(err);
  }
}

/* ---- limits up front ------------------------------------------------------------------ */

Test(robust, a_design_of_1e7_samples_is_refused_at_once) {
  const char *dir = tu_tmpdir("big");
  char study[WSISA_PATH_MAX], args[9000], *err = NULL;
  tu_path(study, "%s/vbd.json", dir);
  FILE *f = fopen(study, "w");
  fprintf(f, "{ \"inputs\": { \"slides\": [\"%s\"] }, \"method\": { \"name\": \"vbd\", "
             "\"samples\": 10000000 } }\n", tu_src("tests/data/CMU-1-Small-Region.svs"));
  fclose(f);
  const char *const commands[] = {"plan --study '%s'", "run --study '%s' -o '%s/r'",
                                  "sample --study '%s' -o '%s/s.csv'", "plan --force --study '%s'"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(args, sizeof args, commands[i], study, dir);
    double t0 = wsisa_now();
    int status = tu_run(args, NULL, &err);
    /* a time, printed for the record: timing belongs to the benchmarks */
    cr_log_info("%s: refused in %.3f s\n", args, wsisa_now() - t0);
    cr_expect_eq(status, 2, "%s: %s", args, err);
    cr_expect(err && strstr(err, "vbd.json: method.samples: the design"), "%s: %s", args, err);
    cr_expect(err && strstr(err, "170000000 runs"), "%s: %s", args, err);
    free(err);
  }
}
