/* wsisa-bench ranks: tile affinity across MPI ranks. The MOAT of G1 and G2
 * (8 trajectories, 24 runs; --quick: 4, 12 runs) with TRTMA (6 buckets a
 * tile, what 2 workers get by default, for every row: the same plan, so the
 * rows differ only in ranks and affinity) on the sample slide's tissue tiles
 * at 1024, run by one process of 2 CPU workers, then by
 * 2 and 4 ranks of one CPU worker under mpirun with tile affinity off
 * (WSISA_TILE_AFFINITY=off: a rank with nothing left of its tiles takes
 * another rank's next bucket) and on (the default: from that tile's last
 * bucket down). The repeats go in rounds, every configuration once per round,
 * so the machine's drift falls on all alike. Each row: makespan, against the
 * one process, tile stages, units and stages away from their tile's first
 * rank, objects reused in all and in the moved stages' stores, and whether
 * the metrics are the one process's. */
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "io/svg.h"

#define MPIRUN "mpirun --oversubscribe --allow-run-as-root --bind-to none"

typedef struct config {
  const char *label;
  int ranks; /* 0: one process, no mpirun */
  int workers, affinity;
} config;

static const config configs[] = {
    {"1 process x 2 CPU", 0, 2, 1},
#ifdef WSISA_WITH_MPI
    {"2 ranks x 1, affinity off", 2, 1, 0},
    {"2 ranks x 1, affinity on", 2, 1, 1},
    {"4 ranks x 1*, affinity off", 4, 1, 0},
    {"4 ranks x 1*, affinity on", 4, 1, 1},
#endif
};
#define NCONFIGS (sizeof configs / sizeof *configs)

/* What each run's run.json counts, by its keys (the CSV's columns in this
 * order); each a median over the rounds, as they move with the order units
 * end in. */
enum { STAGES, UNITS_MOVED, STAGES_MOVED, SEEN, REUSED, SEEN_MOVED, REUSED_MOVED, NCOUNTS };
static const char *const count_keys[NCOUNTS][3] = {
    {"tasks", "tile_stages", NULL},     {"mpi", "units_moved", NULL},
    {"mpi", "tile_stages_moved", NULL}, {"objects", "seen", NULL},
    {"objects", "reused", NULL},        {"mpi", "objects_moved", "seen"},
    {"mpi", "objects_moved", "reused"}};

static int read_counts(const char *path, double counts[NCOUNTS], wsisa_err *e) {
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  if (!root) return wsisa_error(e, WSISA_EIO, "%s: %s", path, je.text);
  for (int k = 0; k < NCOUNTS; k++) {
    json_t *v = json_object_get(json_object_get(root, count_keys[k][0]), count_keys[k][1]);
    if (count_keys[k][2]) v = json_object_get(v, count_keys[k][2]);
    counts[k] = json_is_number(v) ? json_number_value(v) : 0.0 / 0.0;
  }
  json_decref(root);
  return 0;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsisa-bench ranks [--quick] [--repeats N] [-o DIR]\n"
          "\n"
          "Tile affinity across MPI ranks on a MOAT of G1 and G2 (8 trajectories, 24\n"
          "runs; --quick: 4, 12 runs), TRTMA with 6 buckets a tile (the default for 2\n"
          "workers, kept for every row so that the plan is the same), on the sample\n"
          "slide's 6 tissue tiles at 1024: one process of 2 CPU workers, then 2 and 4\n"
          "ranks of one CPU worker under mpirun (4 oversubscribed on 2 cores),\n"
          "WSISA_TILE_AFFINITY off and on.\n"
          "The repeats run in rounds, every configuration once a round. The load\n"
          "average is printed before and after.\n"
          "ranks.csv: config, ranks, workers_per_rank, affinity (0 | 1, empty for one\n"
          "process), makespan_s, makespan_min, makespan_max, over_one_process (its\n"
          "makespan / this one), cpu_s, cpu_min, cpu_max (user + system of the whole\n"
          "command, every rank), tile_stages, units_moved, tile_stages_moved (away from\n"
          "their tile's first rank), objects_seen, objects_reused, moved_seen,\n"
          "moved_reused (in the moved stages' stores), same_metrics (0 | 1: metrics.csv\n"
          "as the one process's, every round); ranks.svg: the makespans.\n");
}

/* The 1-minute load average now (-1: unknown). */
static double load_now(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f && fscanf(f, "%lf", &l) != 1) l = -1;
  if (f) fclose(f);
  return l;
}

int bench_ranks(int argc, char **argv, wsisa_err *e) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
  bench_opts o;
  int rc = bench_parse(argc, argv, "ranks", &o, e);
  if (rc) return rc;
  const int traj = o.quick ? 4 : 8, rounds = o.repeats;
  char slide[WSISA_PATH_MAX], study[WSISA_PATH_MAX], path[WSISA_PATH_MAX], env[512];
  wsisa_data_file("CMU-1-Small-Region.svs", WSISA_SOURCE_DIR "/tests/data", slide, sizeof slide);
  if ((rc = wsisa_path_fmt_err(study, e, "%s/studies/ranks_g1_g2.json", o.dir))) return rc;
  FILE *f = fopen(study, "w");
  if (!f) return wsisa_error(e, WSISA_EIO, "%s: cannot write", study);
  fprintf(f,
          "{\n  \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 1024 },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": %d, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
          "  \"metric\": \"dice\",\n"
          "  \"reuse\": { \"strategy\": \"trtma\", \"max_buckets\": 6 }\n}\n",
          slide, traj);
  if (fclose(f) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot write", study);

  double exec[NCONFIGS][BENCH_MAX_REPEATS], cpu[NCONFIGS][BENCH_MAX_REPEATS];
  bench_run last[NCONFIGS];
  double counts[NCONFIGS][NCOUNTS][BENCH_MAX_REPEATS];
  int same[NCONFIGS];
  char *base = NULL;
  bench_opts once = o;
  once.repeats = 1;
  const double load_before = load_now();
  for (int round = 0; round < rounds && !rc; round++)
    for (size_t c = 0; c < NCONFIGS && !rc; c++) {
      const config *k = &configs[c];
      fprintf(stderr, "wsisa-bench ranks: round %d of %d, %s\n", round + 1, rounds, k->label);
      int n = snprintf(env, sizeof env, "STARPU_NCPU=%d WSISA_TILE_AFFINITY=%s", k->workers,
                       k->affinity ? "on" : "off");
      if (k->ranks) snprintf(env + n, sizeof env - (size_t)n, " " MPIRUN " -np %d", k->ranks);
      if ((rc = bench_run_wsisa(&once, env, study, NULL, &last[c], e))) break;
      exec[c][round] = last[c].exec.median;
      cpu[c][round] = last[c].cpu.median;
      double now[NCOUNTS];
      if ((rc = wsisa_path_fmt_err(path, e, "%s/run/run.json", o.dir)) ||
          (rc = read_counts(path, now, e)))
        break;
      for (int i = 0; i < NCOUNTS; i++) counts[c][i][round] = now[i];
      if ((rc = wsisa_path_fmt_err(path, e, "%s/run/metrics.csv", o.dir))) break;
      char *m = NULL;
      if ((rc = wsisa_text_read(path, WSISA_TEXT_MAX_TABLE, "a metrics table", &m, NULL, e)))
        break;
      if (c == 0 && !base) {
        base = m;
        continue;
      }
      if (round == 0) same[c] = 1;
      same[c] &= base && strcmp(m, base) == 0;
      free(m);
    }
  const double load_after = load_now();
  same[0] = 1;
  if (rc) {
    free(base);
    return rc;
  }
  free(base);

  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "ranks",
                           "config,ranks,workers_per_rank,affinity,makespan_s,makespan_min,"
                           "makespan_max,over_one_process,cpu_s,cpu_min,cpu_max,tile_stages,"
                           "units_moved,tile_stages_moved,objects_seen,objects_reused,"
                           "moved_seen,moved_reused,same_metrics",
                           &w, e)))
    return rc;
  bench_print_context(stdout);
  printf("# runs: wsisa run (scheduler %s) on the tissue tiles of CMU-1-Small-Region.svs at "
         "1024: a MOAT of G1 and G2, %d trajectories (%d runs), TRTMA with 6 buckets a tile; "
         "ranks of 1 CPU worker "
         "under mpirun, * oversubscribed; rounds of every configuration, median of %d (min..max); "
         "load average %.2f before, %.2f after\n",
         last[0].sched, traj, 3 * traj, rounds, load_before, load_after);
  printf("# moved: units, and the tile stages they opened, on a rank other than their tile's "
         "first; their stores' objects reused of seen; counts: medians over the rounds\n");
  printf("# CPU s: user + system of the whole command, every rank, start-up and exit included\n");
  printf("%-27s %-20s %7s %-20s %6s %11s %17s %15s %5s\n", "configuration", "makespan s",
         "vs 1 pr", "CPU s", "stages", "units moved", "objects reused", "moved reused", "same");
  double val[NCONFIGS], lo[NCONFIGS], hi[NCONFIGS];
  const char *lp[NCONFIGS];
  for (size_t c = 0; c < NCONFIGS; c++) {
    const config *k = &configs[c];
    bench_stats s = bench_summarize(exec[c], rounds), cs = bench_summarize(cpu[c], rounds);
    const bench_stats one = bench_summarize(exec[0], rounds);
    char a[64], b[64], objs[48], moved[48];
    double m[NCOUNTS];
    for (int i = 0; i < NCOUNTS; i++) m[i] = bench_summarize(counts[c][i], rounds).median;
    snprintf(objs, sizeof objs, "%.0f of %.0f", m[REUSED], m[SEEN]);
    snprintf(moved, sizeof moved, "%.0f of %.0f", m[REUSED_MOVED], m[SEEN_MOVED]);
    printf("%-27s %-20s %6.2fx %-20s %6.0f %5.0f (%3.0f) %17s %15s %5s\n", k->label,
           bench_fmt(a, sizeof a, s, 1, 2), one.median / s.median, bench_fmt(b, sizeof b, cs, 1, 2),
           m[STAGES], m[UNITS_MOVED], m[STAGES_MOVED], objs, moved, same[c] ? "yes" : "NO");
    wsisa_csv_text(w, k->label);
    wsisa_csv_uint(w, (uint64_t)k->ranks);
    wsisa_csv_uint(w, (uint64_t)k->workers);
    if (k->ranks) wsisa_csv_uint(w, (uint64_t)k->affinity);
    else wsisa_csv_text(w, "");
    bench_csv_stats(w, s, 1);
    wsisa_csv_num(w, one.median / s.median);
    bench_csv_stats(w, cs, 1);
    for (int i = 0; i < NCOUNTS; i++) wsisa_csv_num(w, m[i]);
    wsisa_csv_uint(w, (uint64_t)same[c]);
    wsisa_csv_end_row(w);
    val[c] = s.median;
    lo[c] = s.min;
    hi[c] = s.max;
    lp[c] = k->label;
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  wsisa_svg_series series = {"makespan", val, lo, hi};
  if (bench_svg_path(&o, "ranks", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "Makespan by MPI ranks and tile affinity", "seconds", NCONFIGS, lp,
                        1, &series, e);
}
