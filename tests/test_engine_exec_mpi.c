/* `mpirun -np N wsisa run` on this machine: 1, 2 and 4 ranks give the metrics of
 * the single-process run, feature metrics, object Dice and the metrics
 * against an annotation included, and a whole slide's segmentation gives
 * the same outputs; workers
 * bound their K by the memory limit; a worker killed mid-study costs nothing
 * but time; a killed manager's study finishes with --resume; ranks on hosts
 * of one kind share one calibration. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/exec/exec.h"
#include "tests/synthslide.h"
#include "tests/testutil.h"

/* ---- the unit queue's choice, as ranks ask (engine/exec/units.c) ---------- */

#define TILES 3
#define BUCKETS 6

typedef struct queue_state {
  uint8_t state[TILES * BUCKETS];
  size_t todo[TILES], holders[TILES];
} queue_state;

static void queue_init(queue_state *q) {
  memset(q, 0, sizeof *q);
  for (size_t t = 0; t < TILES; t++) q->todo[t] = BUCKETS;
}

/* Rank (held, back) takes its next unit: "tile.bucket", or "-" for none. */
static const char *take(queue_state *q, size_t *held, int *back) {
  static char buf[48];
  size_t u = wsisa__units_pick(q->state, q->todo, q->holders, TILES, BUCKETS, held, back);
  if (u == SIZE_MAX) return "-";
  q->state[u] = 1;
  q->todo[u / BUCKETS]--;
  snprintf(buf, sizeof buf, "%zu.%zu", u / BUCKETS, u % BUCKETS);
  return buf;
}

/* Two ranks: each keeps its tile, the first done takes the tile no rank
 * holds; the second, with nothing of its own left, takes the first's tile
 * from its last bucket down (with affinity) or its next bucket (without). */
Test(queue, a_rank_keeps_its_tile_and_takes_another_from_its_last_bucket) {
  for (int affinity = 0; affinity < 2; affinity++) {
    queue_state q;
    queue_init(&q);
    size_t a = SIZE_MAX, b = SIZE_MAX;
    int back_a = 0, back_b = 0;
    int *pa = affinity ? &back_a : NULL, *pb = affinity ? &back_b : NULL;
    cr_expect_str_eq(take(&q, &a, pa), "0.0");
    cr_expect_str_eq(take(&q, &b, pb), "1.0");
    for (int i = 1; i < BUCKETS; i++) {
      char want[16];
      snprintf(want, sizeof want, "0.%d", i);
      cr_expect_str_eq(take(&q, &a, pa), want);
    }
    cr_expect_str_eq(take(&q, &a, pa), "2.0", "a tile no rank holds");
    for (int i = 1; i < BUCKETS; i++) take(&q, &b, pb);
    cr_expect_str_eq(take(&q, &b, pb), affinity ? "2.5" : "2.1");
    cr_expect_str_eq(take(&q, &a, pa), affinity ? "2.1" : "2.2", "the holder goes on");
    cr_expect_str_eq(take(&q, &b, pb), affinity ? "2.4" : "2.3");
    cr_expect_eq(q.holders[2], 2);
    take(&q, &a, pa);
    take(&q, &b, pb);
    cr_expect_str_eq(take(&q, &a, pa), "-");
    cr_expect_str_eq(take(&q, &b, pb), "-");
  }
}

/* With affinity, ranks out of work spread over the tiles left: the one with
 * the most units per holder. */
Test(queue, ranks_out_of_work_spread_over_the_tiles_left) {
  queue_state q;
  queue_init(&q);
  size_t held[4] = {SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
  int back[4] = {0, 0, 0, 0};
  cr_expect_str_eq(take(&q, &held[0], &back[0]), "0.0");
  cr_expect_str_eq(take(&q, &held[1], &back[1]), "1.0");
  cr_expect_str_eq(take(&q, &held[2], &back[2]), "2.0");
  /* tile 1 further along than tile 2, tile 0 furthest */
  for (int i = 0; i < 4; i++) take(&q, &held[0], &back[0]);
  take(&q, &held[1], &back[1]);
  cr_expect_str_eq(take(&q, &held[3], &back[3]), "2.5", "the tile with the most left");
  cr_expect_str_eq(take(&q, &held[3], &back[3]), "2.4", "then its own from the back");
  size_t spare = SIZE_MAX;
  int spare_back = 0;
  /* tile 1: 4 left, 1 holder; tile 2: 3 left, 2 holders */
  cr_expect_str_eq(take(&q, &spare, &spare_back), "1.5");
}

#ifdef WSISA_WITH_MPI

/* Ranks share the 2 cores here: one CPU worker each, and no OpenCL worker
 * (PoCL's CPU device is only used with STARPU_OPENCL_ON_CPUS=1). Unbound:
 * mpirun binds rank r to core r, and on a shared machine every job's rank 0
 * would then queue on core 0. */
#define RANK_ENV "STARPU_NCPU=1"
#define MPIRUN "mpirun --oversubscribe --allow-run-as-root --bind-to none"

static void mpi_env(void) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0) cr_skip_test("mpirun is not installed");
#if defined(__SANITIZE_ADDRESS__)
  /* Open MPI keeps allocations until exit and dlcloses its components in
   * MPI_Finalize, so LeakSanitizer reports them from unknown modules that no
   * suppression can name */
  cr_skip_test("ASan build: Open MPI's own leaks cannot be told from wsisa's here");
#endif
  setenv("STARPU_NCPU", "1", 1);
  unsetenv("STARPU_OPENCL_ON_CPUS");
}

/* `metrics`: the study's metric list, JSON strings. */
static const char *write_study(const char *tile2, const char *metrics) {
  static char path[WSISA_PATH_MAX];
  tu_path(path, "%s/study.json", tu_tmpdir("mpi_study"));
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\", \"%s\"] },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"T1\": {}, \"recon_conn\": {},\n"
          "                    \"min_size_pl\": {}, \"watershed_conn\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
          "  \"metric\": [%s] }\n",
          tu_src("tests/data/tile_256.png"), tu_src(tile2), metrics);
  fclose(f);
  return path;
}

static char *metrics_of(const char *dir) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/metrics.csv", dir);
  char *m = tu_slurp(path, NULL);
  cr_assert_not_null(m, "no %s", path);
  return m;
}

#define DICE "\"dice\", \"jaccard\""

/* `launch wsisa run --study S -o DIR ARGS`; launch is "" or an mpirun line.
 * Its stderr goes to *err_out when asked. */
static char *run(const char *launch, const char *study, const char *args, char *dir, size_t cap,
                 char **err_out) {
  snprintf(dir, cap, "%s/results", tu_tmpdir("mpi_run"));
  char cmd[16384], *err = NULL;
  snprintf(cmd, sizeof cmd, "env " RANK_ENV " %s %s run --study '%s' -o '%s' %s", launch,
           WSISA_EXE, study, dir, args);
  int status = tu_run_shell(cmd, NULL, &err);
  cr_assert_eq(status, 0, "%s failed: %s", cmd, err ? err : "");
  if (err_out) *err_out = err;
  else free(err);
  return metrics_of(dir);
}

/* The pid of rank `rank` of the job writing to `dir`, or -1. */
static pid_t find_rank(const char *dir, int rank) {
  DIR *d = opendir("/proc");
  struct dirent *ent;
  pid_t found = -1;
  char want[64];
  snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
  while (d && (ent = readdir(d)) && found < 0) {
    char path[WSISA_PATH_MAX];
    tu_path(path, "/proc/%s/comm", ent->d_name);
    char *comm = tu_slurp(path, NULL);
    int is_wsisa = comm && strncmp(comm, "wsisa\n", 6) == 0;
    free(comm);
    if (!is_wsisa) continue;
    size_t n = 0;
    tu_path(path, "/proc/%s/cmdline", ent->d_name);
    char *cmdline = tu_slurp(path, &n), *mine = NULL;
    for (size_t i = 0; cmdline && i < n; i += strlen(cmdline + i) + 1)
      if (strstr(cmdline + i, dir)) mine = cmdline;
    tu_path(path, "/proc/%s/environ", ent->d_name);
    char *env = mine ? tu_slurp(path, &n) : NULL;
    for (size_t i = 0; env && i < n; i += strlen(env + i) + 1)
      if (strcmp(env + i, want) == 0) found = (pid_t)atoi(ent->d_name);
    free(env);
    free(cmdline);
  }
  if (d) closedir(d);
  return found;
}

/* mpirun in the background, its stderr into `err_path` (NULL: ours): its
 * pid. */
static pid_t launch(const char *const *argv, const char *err_path) {
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    if (err_path) freopen(err_path, "w", stderr);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* Wait for `lines` journal lines, then SIGKILL rank `rank`; returns the lines
 * there were at the kill (0: the job ended first). */
static size_t kill_rank_after(pid_t job, const char *dir, size_t lines, int rank) {
  char journal[WSISA_PATH_MAX];
  tu_path(journal, "%s/journal.csv", dir);
  for (int i = 0; i < 24000; i++) {
    nanosleep(&(struct timespec){0, 5000000}, NULL);
    if (waitpid(job, NULL, WNOHANG) == job) return 0;
    size_t n = tu_count_lines(journal);
    pid_t victim = n >= lines ? find_rank(dir, rank) : -1;
    if (victim > 0) {
      kill(victim, SIGKILL);
      return n;
    }
  }
  return 0;
}

/* The integer at run.json's SECTION.KEY (.SUB when given). */
static long long run_count(const char *dir, const char *section, const char *key,
                           const char *sub) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/run.json", dir);
  json_t *root = json_load_file(path, 0, NULL);
  cr_assert_not_null(root, "%s", path);
  json_t *v = json_object_get(json_object_get(root, section), key);
  if (sub) v = json_object_get(v, sub);
  cr_assert(json_is_integer(v), "run.json: %s.%s%s%s missing", section, key, sub ? "." : "",
            sub ? sub : "");
  long long n = json_integer_value(v);
  json_decref(root);
  return n;
}

Test(mpi, one_two_and_four_ranks_give_the_single_process_metrics, .timeout = 300) {
  mpi_env();
  const char *study = write_study("tests/data/tile_256_b.png", DICE);
  char dir[WSISA_PATH_MAX];
  char *base = run("", study, "", dir, sizeof dir, NULL);
  size_t lines = 0;
  for (const char *p = base; *p; p++) lines += *p == '\n';
  cr_expect_eq(lines, 15, "a header and 2 trajectories x 7 runs");
  /* tile affinity on (the default) and off: the same metrics */
  static const char *const ranks[] = {"1", "2", "4", "4"};
  static const char *const affinity[] = {"on", "on", "on", "off"};
  for (size_t i = 0; i < 4; i++) {
    char launch_cmd[128];
    snprintf(launch_cmd, sizeof launch_cmd, "WSISA_TILE_AFFINITY=%s " MPIRUN " -np %s",
             affinity[i], ranks[i]);
    char *m = run(launch_cmd, study, "", dir, sizeof dir, NULL);
    cr_expect_str_eq(m, base, "%s ranks, affinity %s: metrics differ", ranks[i], affinity[i]);
    free(m);
    char path[WSISA_PATH_MAX];
    tu_path(path, "%s/run.json", dir);
    char *prov = tu_slurp(path, NULL), want[64];
    snprintf(want, sizeof want, "\"ranks\": %s,", ranks[i]);
    cr_expect(prov && strstr(prov, want), "%s ranks: run.json lacks %s", ranks[i], want);
    free(prov);
    /* the spread: a stage away from a tile's first rank is opened for a unit
     * moved there; every tile opened once at its first; 4 ranks on 2 tiles of
     * 2 units each: with affinity a rank that would idle takes one (without,
     * the first two ranks queue both units of their tiles) */
    long long moved = run_count(dir, "mpi", "units_moved", NULL),
              stages_moved = run_count(dir, "mpi", "tile_stages_moved", NULL),
              stages = run_count(dir, "tasks", "tile_stages", NULL);
    cr_expect_geq(moved, stages_moved, "%s ranks", ranks[i]);
    cr_expect_geq(stages, 2 + stages_moved, "%s ranks", ranks[i]);
    cr_expect_leq(run_count(dir, "mpi", "objects_moved", "reused"),
                  run_count(dir, "mpi", "objects_moved", "seen"));
    if (strcmp(ranks[i], "4") == 0 && strcmp(affinity[i], "on") == 0)
      cr_expect_eq(stages_moved, 2, "4 ranks on 2 tiles");
    if (strcmp(ranks[i], "1") == 0) cr_expect_eq(moved, 0);
  }
  /* a worker never writes into the results folder: only the manager's files */
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  struct dirent *ent;
  while ((ent = readdir(d)))
    cr_expect(!strstr(ent->d_name, ".tmp"), "stray file %s", ent->d_name);
  closedir(d);
  free(base);
}

/* Workers read a slide's tiles as the manager laid them out: the 40x
 * synthetic slide (0.25 um) at 0.5 um is level 0 averaged 2 x 2, and the job
 * message carries that scale with each tile. */
/* The core rank r's StarPU bound its CPU workers to, from its log line
 * ("wsisa[r] info runtime: StarPU up: ... bound to cores C (...)"); -1 if
 * none. */
static int bound_core(const char *err, int rank) {
  char tag[64];
  snprintf(tag, sizeof tag, "wsisa[%d] info runtime: StarPU up", rank);
  const char *line = err ? strstr(err, tag) : NULL;
  const char *end = line ? strchr(line, '\n') : NULL;
  const char *at = line ? strstr(line, "bound to cores ") : NULL;
  return at && (!end || at < end) ? atoi(at + strlen("bound to cores ")) : -1;
}

/* How many times `needle` occurs in `hay`. */
static int occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* mpirun --bind-to core: each rank's workers run on its own core (StarPU
 * 1.3 alone binds every rank's first worker to core 0), and the metrics are
 * those of the unbound job. A rank per core uses the node's cores: no
 * warning; unbound ranks that each start a worker per core are told so once,
 * by rank 0, in terms of ranks per node and workers per rank. */
Test(mpi, ranks_bound_to_cores_keep_their_workers_there, .timeout = 300) {
  mpi_env();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) cr_skip_test("one CPU: no two cores to bind to");
  const char *study = write_study("tests/data/tile_256_b.png", DICE);
  char dir[WSISA_PATH_MAX], *err = NULL;
  char *base = run(MPIRUN " -np 2", study, "", dir, sizeof dir, NULL);
  char *m = run("WSISA_LOG=info mpirun --allow-run-as-root --bind-to core -np 2", study, "", dir,
                sizeof dir, &err);
  cr_expect_str_eq(m, base);
  int c0 = bound_core(err, 0), c1 = bound_core(err, 1);
  cr_expect(c0 >= 0 && c1 >= 0 && c0 != c1, "ranks bound to cores %d and %d: %s", c0, c1,
            err ? err : "");
  if (sysconf(_SC_NPROCESSORS_ONLN) == 2)
    cr_expect_eq(occurrences(err, "warn runtime:"), 0, "%s", err ? err : "");
  free(err);
  free(m);
  m = run("env -u STARPU_NCPU WSISA_LOG=warn " MPIRUN " -np 2", study, "", dir, sizeof dir, &err);
  cr_expect_str_eq(m, base);
  cr_expect_eq(occurrences(err, "warn runtime:"), 1, "%s", err ? err : "");
  cr_expect(strstr(err, "wsisa[0] warn runtime: 2 ranks on this node of ") != NULL, "%s", err);
  free(err);
  free(m);
  free(base);
}

Test(mpi, a_resampled_slide_reads_alike_on_every_rank, .timeout = 300) {
  mpi_env();
  char slide[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  tu_path(slide, "%s/svs40.svs", tu_tmpdir("mpi_slide"));
  cr_assert_eq(tu_synth_svs40(slide, 1), 0);
  tu_path(path, "%s/study.json", tu_tmpdir("mpi_slide_study"));
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 256 },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"T1\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"metric\": [" DICE "] }\n",
          slide);
  fclose(f);
  char dir[WSISA_PATH_MAX];
  char *base = run("", path, "", dir, sizeof dir, NULL);
  char json[WSISA_PATH_MAX];
  tu_path(json, "%s/run.json", dir);
  char *prov = tu_slurp(json, NULL);
  cr_expect(prov && strstr(prov, "\"factor\": 2.0"), "not resampled: %s", prov);
  free(prov);
  char *m = run(MPIRUN " -np 2", path, "", dir, sizeof dir, NULL);
  cr_expect_str_eq(m, base, "2 ranks: metrics differ");
  free(m);
  free(base);
  unlink(slide);
}

/* A file's lines, sorted: ranks finish units in another order. */
static char *sorted_lines(const char *dir, const char *name) {
  char cmd[TU_LINE_MAX], *out = NULL;
  snprintf(cmd, sizeof cmd, "LC_ALL=C sort '%s/%s'", dir, name);
  cr_assert_eq(tu_run_shell(cmd, &out, NULL), 0, "%s", cmd);
  return out;
}

Test(mpi, feature_metrics_and_object_dice_match_the_single_process_run, .timeout = 300) {
  mpi_env();
  const char *study = write_study("tests/data/tile_1024.png",
                                  "\"mean_haematoxylin\", \"wasserstein:area\", "
                                  "\"wasserstein:fb_s2_mean\", \"object_dice\"");
  char base_dir[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  char *base = run("", study, "", base_dir, sizeof base_dir, NULL);
  cr_assert(strstr(base, "mean_haematoxylin") && strstr(base, "object_dice"), "%s", base);
  /* The limit bounds each whole process: about 80 MiB before the first unit,
   * about 170 MiB for the 1024 x 1024 tile (two open at once) and its running
   * task (counted twice) with the feature stage, a quarter of what is over
   * the baseline for the object store, then 11 MiB per path. 360 MiB leaves
   * every rank a few paths, fewer than the 9 asked: each rank lowers K by its
   * own memory. */
  setenv("WSISA_LOG", "info", 1);
  char *m = run(MPIRUN " -np 2 -x WSISA_LOG", study, "--active-paths 9 --memory-limit 360M", dir,
                sizeof dir, &err);
  unsetenv("WSISA_LOG");
  cr_expect_str_eq(m, base, "2 ranks: metrics differ");
  static const char *const rank_k[] = {"wsisa[0] info run: K = ", "wsisa[1] info mpi: K = "};
  for (int r = 0; r < 2; r++) {
    const char *at = err ? strstr(err, rank_k[r]) : NULL;
    long k = at ? atol(at + strlen(rank_k[r])) : 0;
    cr_expect(k >= 1 && k < 9, "rank %d: K = %ld is not bounded by the memory limit: %s", r, k,
              err ? err : "");
  }
  /* the journal of feature values, which --resume reads back, holds the same doubles */
  char *want = sorted_lines(base_dir, "feature_values.csv"),
       *got = sorted_lines(dir, "feature_values.csv");
  cr_expect_str_eq(got, want, "feature_values.csv differs");
  free(want);
  free(got);
  free(err);
  free(m);
  free(base);
}

/* Against an annotation: each rank reads the GeoJSON itself and rasterises
 * its tiles; F1, AJI and best.json are those of one process. */
Test(mpi, annotation_metrics_match_the_single_process_run, .timeout = 300) {
  mpi_env();
  char study[WSISA_PATH_MAX];
  tu_path(study, "%s/study.json", tu_tmpdir("mpi_annot"));
  const char *slide = tu_src("tests/data/CMU-1-Small-Region.svs");
  FILE *f = fopen(study, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 256,\n"
          "    \"reference\": { \"%s\": { \"geojson\": \"%s\" } } },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"watershed_conn\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"metric\": [\"object_f1\", \"aji\", \"object_recall\", \"dice\", "
          "\"wasserstein:area\"] }\n",
          slide, slide, tu_src("tests/data/CMU-1-Small-Region.nuclei.geojson"));
  fclose(f);
  char base_dir[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  char *base = run("", study, "--reuse none", base_dir, sizeof base_dir, NULL);
  cr_assert(strstr(base, "object_f1") && strstr(base, "aji"), "%s", base);
  char *m = run(MPIRUN " -np 3", study, "--reuse none", dir, sizeof dir, NULL);
  cr_expect_str_eq(m, base, "3 ranks: metrics differ");
  tu_path(path, "%s/best.json", base_dir);
  char *want = tu_slurp(path, NULL);
  tu_path(path, "%s/best.json", dir);
  char *got = tu_slurp(path, NULL);
  cr_expect(want && got && strcmp(want, got) == 0, "best.json differs");
  free(want);
  free(got);
  free(m);
  free(base);
}

/* The study in `dir` has the single process's metrics `ref`, one rank lost. */
static void expect_one_rank_lost(const char *dir, const char *ref) {
  char *m = metrics_of(dir);
  cr_expect_str_eq(m, ref, "metrics differ after a worker died");
  free(m);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/run.json", dir);
  char *prov = tu_slurp(path, NULL);
  cr_expect(prov && strstr(prov, "\"ranks_lost\": 1"), "run.json: %s", prov ? prov : "missing");
  free(prov);
}

Test(mpi, a_killed_worker_costs_only_its_units, .timeout = 300) {
  mpi_env();
  /* one unit per run and tile, large enough to be caught in flight */
  const char *study = write_study("tests/data/tile_1024.png", DICE);
  char ref_dir[WSISA_PATH_MAX], dir[WSISA_PATH_MAX];
  char *ref = run("", study, "--reuse none", ref_dir, sizeof ref_dir, NULL);
  tu_path(dir, "%s/results", tu_tmpdir("mpi_killed"));
  setenv("WSISA_UNIT_TIMEOUT", "10", 1);
  const char *argv[] = {"mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                        "--enable-recovery", "-np", "3", WSISA_EXE, "run", "--study", study, "-o",
                        dir, "--reuse", "none", NULL};
  pid_t job = launch(argv, NULL);
  size_t at_kill = kill_rank_after(job, dir, 4, 2);
  cr_assert_gt(at_kill, 0, "the study ended before a worker could be killed");
  cr_log_info("journal lines at the kill: %zu of 29\n", at_kill);
  int status = 0;
  waitpid(job, &status, 0);
  unsetenv("WSISA_UNIT_TIMEOUT");
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "mpirun status %d", status);
  expect_one_rank_lost(dir, ref);
  free(ref);
}

/* Seconds on the monotonic clock. */
static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The study of the 1024 tile on `ranks` ranks under --enable-recovery, with
 * the unit timeout at its 600 s and warnings into `err_path`; the single
 * process's metrics in *ref. Returns mpirun's pid. */
static pid_t recovering_job(const char *tag, const char *ranks, char *dir, char *err_path,
                            char **ref) {
  mpi_env();
  const char *study = write_study("tests/data/tile_1024.png", DICE);
  char ref_dir[WSISA_PATH_MAX];
  *ref = run("", study, "--reuse none", ref_dir, sizeof ref_dir, NULL);
  const char *tmp = tu_tmpdir(tag);
  snprintf(dir, 4300, "%s/results", tmp);
  snprintf(err_path, 4400, "%s/stderr", tmp);
  unsetenv("WSISA_UNIT_TIMEOUT");
  setenv("WSISA_LOG", "warn", 1);
  const char *argv[] = {"mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                        "--enable-recovery", "-np", ranks, WSISA_EXE, "run", "--study", study, "-o",
                        dir, "--reuse", "none", "--unit-timeout", "600", NULL};
  return launch(argv, err_path);
}

/* With the unit timeout at its 600 s, a worker killed mid-study is noticed
 * by its missing heartbeat (Open MPI 4.1 reports nothing): its units run
 * elsewhere at once, the study ends within seconds of the kill with the
 * single process's metrics, and one line names the rank. */
Test(mpi, a_killed_worker_is_noticed_by_its_silence, .timeout = 420) {
  char dir[WSISA_PATH_MAX], err_path[WSISA_PATH_MAX], *ref = NULL;
  pid_t job = recovering_job("mpi_silent", "3", dir, err_path, &ref);
  size_t at_kill = kill_rank_after(job, dir, 4, 2);
  cr_assert_gt(at_kill, 0, "the study ended before a worker could be killed");
  double killed = seconds();
  int status = 0;
  waitpid(job, &status, 0);
  double after = seconds() - killed;
  setenv("WSISA_LOG", "error", 1);
  cr_log_info("journal lines at the kill: %zu of 29; the job ended %.1f s after it\n", at_kill,
              after);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "mpirun status %d", status);
  /* the 10 s of silence, not the 600 s of the unit timeout */
  cr_expect_lt(after, 120, "the job ended %.0f s after the kill", after);
  char *err = tu_slurp(err_path, NULL);
  cr_expect(err && strstr(err, "rank 2 sent nothing for ") && strstr(err, "not even its heartbeat"),
            "%s", err ? err : "no stderr");
  cr_expect(err && !strstr(err, "sent no result for 600 s"), "%s", err ? err : "");
  free(err);
  expect_one_rank_lost(dir, ref);
  free(ref);
}

Test(mpi, a_killed_manager_resumes_to_the_same_metrics, .timeout = 300) {
  mpi_env();
  const char *study = write_study("tests/data/tile_1024.png", DICE);
  char ref_dir[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], journal[WSISA_PATH_MAX];
  char *ref = run("", study, "--reuse none", ref_dir, sizeof ref_dir, NULL);
  tu_path(dir, "%s/results", tu_tmpdir("mpi_manager"));
  tu_path(journal, "%s/journal.csv", dir);
  /* without --enable-recovery, mpirun ends the whole job with its manager */
  const char *argv[] = {"mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                        "-np", "2", WSISA_EXE, "run", "--study", study, "-o", dir, "--reuse",
                        "none", NULL};
  pid_t job = launch(argv, NULL);
  size_t at_kill = kill_rank_after(job, dir, 4, 0);
  cr_assert_gt(at_kill, 0, "the study ended before the manager could be killed");
  waitpid(job, NULL, 0);
  size_t kept = tu_count_lines(journal);
  cr_expect_lt(kept, 29, "the journal is complete: nothing left to resume");
  char cmd[9000], *err = NULL;
  snprintf(cmd, sizeof cmd, "env " RANK_ENV " " MPIRUN " -np 2 %s run --resume '%s'", WSISA_EXE,
           dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "resume failed: %s", err ? err : "");
  free(err);
  char *m = metrics_of(dir);
  cr_expect_str_eq(m, ref, "metrics differ after the resume");
  free(m);
  free(ref);
}

/* Files in `dir` whose names contain `part`. */
static int files_named(const char *dir, const char *part) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  int n = 0;
  while (d && (ent = readdir(d)))
    n += strstr(ent->d_name, part) != NULL;
  if (d) closedir(d);
  return n;
}

/* run.json's estimate.predicted.uncalibrated_share; -1 without an estimate. */
static double uncalibrated_share(const char *dir) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/run.json", dir);
  json_t *root = json_load_file(path, 0, NULL);
  cr_assert_not_null(root, "%s", path);
  json_t *v = json_object_get(json_object_get(json_object_get(root, "estimate"), "predicted"),
                              "uncalibrated_share");
  double share = json_is_number(v) ? json_number_value(v) : -1;
  json_decref(root);
  return share;
}

/* StarPU names its model files by host (STARPU_HOSTNAME, else the host's
 * name): `wsisa calibrate` on one node of a kind, then ranks on other nodes of
 * that kind (each rank in a UTS namespace of its own, named node-R) and a plan
 * from a login node find that calibration in one shared STARPU_HOME when the
 * job gives them the kind's name; without it each rank measures the bus for
 * its own name and rank 0 finds no model to estimate with. */
Test(mpi, ranks_on_hosts_of_one_kind_share_one_calibration, .timeout = 300) {
  mpi_env();
  if (system("unshare -u true >/dev/null 2>&1") != 0)
    cr_skip_test("no UTS namespace here (unshare -u needs root): hosts cannot be named apart");
  const char *tmp = tu_tmpdir("mpi_kind");
  char home[WSISA_PATH_MAX], bus[WSISA_PATH_MAX], codelets[WSISA_PATH_MAX], study[WSISA_PATH_MAX],
      cmd[16384], *err = NULL, *out = NULL;
  tu_path(home, "%s/models", tmp);
  tu_path(bus, "%s/.starpu/sampling/bus", home);
  tu_path(codelets, "%s/.starpu/sampling/codelets/45", home);
  tu_path(study, "%s/study.json", tmp);
  FILE *f = fopen(study, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\", \"%s\"] },\n"
          "  \"parameters\": { \"G1\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"metric\": \"dice\" }\n",
          tu_src("tests/data/tile_256.png"), tu_src("tests/data/tile_256_b.png"));
  fclose(f);
  snprintf(cmd, sizeof cmd, "STARPU_HOME='%s' STARPU_HOSTNAME=kind-a %s calibrate --study '%s'",
           home, WSISA_EXE, study);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "calibrate: %s", err ? err : "");
  free(err);
  cr_assert_gt(files_named(codelets, ".kind-a"), 0, "no model of kind-a in %s", codelets);
  /* each rank under a host name of its own */
  static const char *const as_node =
      "unshare -u sh -c 'hostname node-$OMPI_COMM_WORLD_RANK && exec \"$@\"' sh";
  char dir[WSISA_PATH_MAX], launch_cmd[9000];
  snprintf(launch_cmd, sizeof launch_cmd,
           "STARPU_HOME='%s' STARPU_HOSTNAME=kind-a STARPU_CALIBRATE=0 " MPIRUN " -np 2 %s", home,
           as_node);
  char *m = run(launch_cmd, study, "", dir, sizeof dir, NULL);
  cr_expect_float_eq(uncalibrated_share(dir), 0, 1e-12, "rank 0 found the kind's models");
  cr_expect_eq(files_named(bus, "node-"), 0, "a rank measured the bus for its own name");
  cr_expect_eq(files_named(codelets, "node-"), 0, "a rank wrote models under its own name");
  free(m);
  /* a login node's plan for 2 ranks, by the kind's name */
  snprintf(cmd, sizeof cmd,
           "STARPU_HOME='%s' STARPU_HOSTNAME=kind-a unshare -u sh -c 'hostname login && exec "
           "\"$@\"' sh %s plan --study '%s' --estimate --ranks 2 --workers 1 --json",
           home, WSISA_EXE, study);
  cr_assert_eq(tu_run_shell(cmd, &out, &err), 0, "plan --estimate: %s", err ? err : "");
  json_t *plan = json_loads(out ? out : "", 0, NULL);
  cr_assert_not_null(plan, "%s", out ? out : "");
  json_t *share = json_object_get(json_object_get(plan, "estimate"), "uncalibrated_share");
  cr_expect(json_is_number(share) && json_number_value(share) == 0, "%s", out);
  json_decref(plan);
  free(out);
  free(err);
  /* without the kind's name: each rank's own */
  snprintf(launch_cmd, sizeof launch_cmd,
           "STARPU_HOME='%s' STARPU_CALIBRATE=0 " MPIRUN " -np 2 %s", home, as_node);
  m = run(launch_cmd, study, "", dir, sizeof dir, NULL);
  cr_expect_eq(uncalibrated_share(dir), -1, "rank 0 (node-0) has no model to estimate with");
  cr_expect_gt(files_named(bus, "node-0."), 0, "rank 0 did not measure its bus as node-0");
  cr_expect_gt(files_named(bus, "node-1."), 0, "rank 1 did not measure its bus as node-1");
  free(m);
}

/* `mpirun -np 2 wsisa segment SLIDE --all`: the manager hands tiles to the
 * worker rank and itself, the nuclei come home as spans, and every output is
 * the single process's, byte for byte. */
Test(mpi, a_whole_slide_segmented_on_two_ranks_gives_the_same_outputs, .timeout = 300) {
  mpi_env();
  char slide[WSISA_PATH_MAX], one[WSISA_PATH_MAX], two[WSISA_PATH_MAX], cmd[16384];
  tu_path(slide, "%s/mosaic.tiff", tu_tmpdir("mpi_mosaic"));
  cr_assert_eq(tu_synth_mosaic(slide, 2, 2), 0);
  tu_path(one, "%s", tu_tmpdir("mpi_slide_one"));
  tu_path(two, "%s", tu_tmpdir("mpi_slide_two"));
  const char *dirs[2] = {one, two}, *launch_with[2] = {"", MPIRUN " -np 2"};
  for (int i = 0; i < 2; i++) {
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && env " RANK_ENV " %s '%s' segment '%s' --all --tile-size 512 "
             "--geojson n.geojson --features f.csv --summary s.csv -o l.tif",
             dirs[i], launch_with[i], WSISA_EXE, slide);
    cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s: %s", cmd, err ? err : "");
    free(err);
  }
  static const char *const names[] = {"n.geojson", "f.csv", "s.csv", "l.tif"};
  for (int k = 0; k < 4; k++) {
    char a[WSISA_PATH_MAX], b[WSISA_PATH_MAX];
    tu_path(a, "%s/%s", one, names[k]);
    tu_path(b, "%s/%s", two, names[k]);
    size_t la = 0, lb = 0;
    char *x = tu_slurp(a, &la), *y = tu_slurp(b, &lb);
    cr_expect(x && y && la == lb && memcmp(x, y, la) == 0, "%s differs on two ranks", names[k]);
    free(x);
    free(y);
  }
}

#else

Test(mpi, not_built) {
  cr_skip_test("wsisa was built without Open MPI (WSISA_WITH_MPI=OFF): no MPI test to run");
}

#endif

/* Threads of process `pid`, 0 if gone. */
static int threads_of(pid_t pid) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "/proc/%d/status", (int)pid);
  char *status = tu_slurp(path, NULL), *at = status ? strstr(status, "Threads:") : NULL;
  int n = at ? atoi(at + 8) : 0;
  free(status);
  return n;
}

/* A worker killed at its start, past MPI_Init (which Open MPI itself does
 * not survive a rank's death in) but before it is ready and before the
 * study reaches it: given up on within the heartbeat's silence or three
 * times the manager's own start, not the 600 s of the unit timeout; rank 0
 * does the work and the metrics are the single process's. */
Test(mpi, a_worker_killed_at_start_is_noticed_by_its_silence, .timeout = 420) {
  char dir[WSISA_PATH_MAX], err_path[WSISA_PATH_MAX], *ref = NULL;
  pid_t job = recovering_job("mpi_killed_at_start", "2", dir, err_path, &ref);
  /* rank 0 past MPI_Init starts StarPU, whose threads show it; rank 1 then
   * waits for the manager's first word and has not started its own */
  pid_t manager = -1, victim = -1;
  for (int i = 0; i < 12000 && victim < 0; i++) {
    nanosleep(&(struct timespec){0, 5000000}, NULL);
    if (manager < 0) manager = find_rank(dir, 0);
    if (manager > 0 && threads_of(manager) > 4) victim = find_rank(dir, 1);
  }
  cr_assert_gt(victim, 0, "the manager never started StarPU");
  kill(victim, SIGKILL);
  double killed = seconds();
  int status = 0;
  waitpid(job, &status, 0);
  double after = seconds() - killed;
  setenv("WSISA_LOG", "error", 1);
  cr_log_info("the job ended %.1f s after rank 1 was killed at its start\n", after);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "mpirun status %d", status);
  cr_expect_lt(after, 120, "the job ended %.0f s after the kill", after);
  char *err = tu_slurp(err_path, NULL);
  cr_expect(err && strstr(err, "rank 1 "), "%s", err ? err : "no stderr");
  cr_expect(err && !strstr(err, "600 s"), "%s", err ? err : "");
  free(err);
  expect_one_rank_lost(dir, ref);
  free(ref);
}
