/* The study-level experiments: reuse strategies (seed 000 Figs. 12-13), memory
 * under RTMA bucket sizes and RMSR active paths (seed 003 Fig. 7), schedulers
 * with and without the OpenCL worker, CPU scaling, and the reuse analysis
 * time; each runs `wsisa run` / `wsisa plan` on generated MOAT studies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "codelets/codelets.h"
#include "io/svg.h"
#include "reuse/reuse.h"

#define MAXSZ 8
#define NAN_ (0.0 / 0.0)

/* ---- reuse ------------------------------------------------------------------ */

/* every strategy, from reuse/'s one table of names */
#define reuse_strategies wsisa_reuse_strategy_names
#define NSTRAT WSISA_REUSE_NSTRATEGIES

/* Each strategy with object reuse off and on (levels 6-7 object by object,
 * units seen before on the tile taken from its store); speedups are over
 * none with it off, no reuse of any kind. */
int bench_reuse(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "reuse", &o, e);
  if (rc) return rc;
  static const int full[] = {2, 4, 8}, quick[] = {2, 4};
  static const char *const objects[] = {"off", "on"};
  const int *sizes = o.quick ? quick : full;
  int nsizes = o.quick ? 2 : 3;
  bench_run res[MAXSZ][NSTRAT][2];
  int have[MAXSZ][NSTRAT] = {{0}};
  char study[WSISA_PATH_MAX], args[96];
  for (int i = 0; i < nsizes; i++) {
    char label[32];
    snprintf(label, sizeof label, "moat_t%d", sizes[i]);
    if ((rc = bench_write_study(&o, label, NULL, sizes[i], NULL, study, e))) return rc;
    for (int s = 0; s < NSTRAT; s++) {
      /* SCA's analysis is the slow one (seed 000 §4.2.2): the smallest design only */
      if (strcmp(reuse_strategies[s], "sca") == 0 && i > 0) continue;
      for (int ob = 0; ob < 2; ob++) {
        fprintf(stderr, "wsisa-bench reuse: %d trajectories, %s, object reuse %s\n", sizes[i],
                reuse_strategies[s], objects[ob]);
        snprintf(args, sizeof args, "--reuse %s --object-reuse %s", reuse_strategies[s],
                 objects[ob]);
        if ((rc = bench_run_wsisa(&o, NULL, study, args, &res[i][s][ob], e))) return rc;
      }
      have[i][s] = 1;
    }
  }
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "reuse",
                           "trajectories,runs,strategy,object_reuse,makespan_s,makespan_min,"
                           "makespan_max,wall_s,wall_min,wall_max,tasks_executed,tasks_no_reuse,"
                           "reuse_pct,objects_seen,objects_reused,buckets,speedup_over_none",
                           &w, e)))
    return rc;
  bench_print_runs_context(&o, &res[0][0][0], NULL);
  printf("# makespan = run.json seconds.execute; speedup = none's median with object reuse off "
         "/ this median;\n# objects: object reuse (levels 6-7 object by object), obj%% = units "
         "of levels 6-7 taken from the store\n");
  printf("%-5s %-6s %-7s %-24s %-24s %13s %7s %6s %8s\n", "traj", "reuse", "objects",
         "makespan s", "wall s", "tasks", "reuse%", "obj%", "speedup");
  double val[2 * NSTRAT][MAXSZ], lo[2 * NSTRAT][MAXSZ], hi[2 * NSTRAT][MAXSZ];
  char labels[MAXSZ][48], names[2 * NSTRAT][24];
  const char *lp[MAXSZ];
  for (int i = 0; i < nsizes; i++) {
    snprintf(labels[i], sizeof labels[i], "%d trajectories (%d runs)", sizes[i], 16 * sizes[i]);
    lp[i] = labels[i];
    for (int s = 0; s < NSTRAT; s++)
      for (int ob = 0; ob < 2; ob++) {
        const int series = 2 * s + ob;
        val[series][i] = lo[series][i] = hi[series][i] = NAN_;
        if (!have[i][s]) continue;
        const bench_run *r = &res[i][s][ob];
        double pct = 100.0 * (1.0 - r->executed / r->no_reuse);
        double obj = r->objects_seen > 0 ? 100.0 * r->objects_reused / r->objects_seen : 0.0;
        double speedup = res[i][0][0].exec.median / r->exec.median;
        char a[64], b[64], t[32];
        snprintf(t, sizeof t, "%.0f/%.0f", r->executed, r->no_reuse);
        printf("%-5d %-6s %-7s %-24s %-24s %13s %7.1f %6.1f %7.2fx\n", sizes[i],
               reuse_strategies[s], objects[ob], bench_fmt(a, sizeof a, r->exec, 1, 2),
               bench_fmt(b, sizeof b, r->wall, 1, 2), t, pct, obj, speedup);
        wsisa_csv_uint(w, (uint64_t)sizes[i]);
        wsisa_csv_uint(w, (uint64_t)(16 * sizes[i]));
        wsisa_csv_text(w, reuse_strategies[s]);
        wsisa_csv_text(w, objects[ob]);
        bench_csv_stats(w, r->exec, 1);
        bench_csv_stats(w, r->wall, 1);
        wsisa_csv_num(w, r->executed);
        wsisa_csv_num(w, r->no_reuse);
        wsisa_csv_num(w, pct);
        wsisa_csv_num(w, r->objects_seen);
        wsisa_csv_num(w, r->objects_reused);
        wsisa_csv_num(w, r->buckets);
        wsisa_csv_num(w, speedup);
        wsisa_csv_end_row(w);
        val[series][i] = r->exec.median;
        lo[series][i] = r->exec.min;
        hi[series][i] = r->exec.max;
      }
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  wsisa_svg_series series[2 * NSTRAT];
  for (int s = 0; s < 2 * NSTRAT; s++) {
    snprintf(names[s], sizeof names[s], "%s%s", reuse_strategies[s / 2], s % 2 ? "+objects" : "");
    series[s] = (wsisa_svg_series){names[s], val[s], lo[s], hi[s]};
  }
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(&o, "reuse", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "Makespan by reuse strategy, object reuse off and on (MOAT, Halton)",
                        "seconds", (size_t)nsizes, lp, 2 * NSTRAT, series, e);
}

/* ---- memory ----------------------------------------------------------------- */

/* The same study with the C library's allocator as it comes (WSISA_MALLOC=
 * libc) and as wsisa sets it (freed memory kept for reuse), one run of each
 * a round so that a drift of the machine falls on both alike. */
static int allocator_rows(const bench_opts *o, const char *study, wsisa_err *e) {
  static const char *const modes[] = {"libc", "keep"};
  double exec[2][BENCH_MAX_REPEATS], rss[2][BENCH_MAX_REPEATS], faults[2][BENCH_MAX_REPEATS];
  bench_opts once = *o;
  once.repeats = 1;
  bench_run r;
  int rc = 0;
  for (int k = 0; k < o->repeats && !rc; k++)
    for (int m = 0; m < 2 && !rc; m++) {
      char env[32];
      snprintf(env, sizeof env, "WSISA_MALLOC=%s", modes[m]);
      fprintf(stderr, "wsisa-bench memory: %s (round %d of %d)\n", env, k + 1, o->repeats);
      if (!(rc = bench_run_wsisa(&once, env, study, "", &r, e))) {
        exec[m][k] = r.exec.median;
        rss[m][k] = r.rss.median / 1024;
        faults[m][k] = r.faults.median;
      }
    }
  if (rc) return rc;
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(o, "allocator",
                           "allocator,makespan_s,makespan_min,makespan_max,peak_rss_mib,rss_min,"
                           "rss_max,minor_faults,faults_min,faults_max,makespan_over_keep",
                           &w, e)))
    return rc;
  bench_stats st[2][3];
  for (int m = 0; m < 2; m++) {
    st[m][0] = bench_summarize(exec[m], o->repeats);
    st[m][1] = bench_summarize(rss[m], o->repeats);
    st[m][2] = bench_summarize(faults[m], o->repeats);
  }
  printf("# the C library's allocator: libc = as it comes (WSISA_MALLOC=libc), keep = freed "
         "memory kept for reuse (the default); the default strategy; one run of each a round; "
         "minor faults = run.json page_faults.minor, while the units ran\n");
  printf("%-8s %-24s %-26s %-28s %8s\n", "malloc", "makespan s", "peak RSS MiB", "minor faults",
         "/ keep");
  for (int m = 0; m < 2; m++) {
    char a[64], b[64], c[64];
    double ratio = st[m][0].median / st[1][0].median;
    printf("%-8s %-24s %-26s %-28s %8.3f\n", modes[m], bench_fmt(a, sizeof a, st[m][0], 1, 2),
           bench_fmt(b, sizeof b, st[m][1], 1, 1), bench_fmt(c, sizeof c, st[m][2], 1, 0), ratio);
    wsisa_csv_text(w, modes[m]);
    for (int q = 0; q < 3; q++) bench_csv_stats(w, st[m][q], 1);
    wsisa_csv_num(w, ratio);
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

int bench_memory(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "memory", &o, e);
  if (rc) return rc;
  static const int ks[] = {1, 2, 4};
  enum { NK = 3 };
  bench_run small[NK], rmsr[NK];
  char study[WSISA_PATH_MAX], args[128];
  if ((rc = bench_write_study(&o, "moat_t2", NULL, 2, NULL, study, e))) return rc;
  for (int i = 0; i < NK; i++) {
    fprintf(stderr, "wsisa-bench memory: K = %d\n", ks[i]);
    snprintf(args, sizeof args, "--reuse rtma --max-bucket-size %d", ks[i]);
    if ((rc = bench_run_wsisa(&o, NULL, study, args, &small[i], e))) return rc;
    snprintf(args, sizeof args, "--reuse rtma --max-bucket-size 28 --active-paths %d", ks[i]);
    if ((rc = bench_run_wsisa(&o, NULL, study, args, &rmsr[i], e))) return rc;
  }
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "memory",
                           "config,k,max_bucket_size,active_paths,peak_rss_mib,rss_min,rss_max,"
                           "makespan_s,makespan_min,makespan_max,buckets,peak_active_paths,"
                           "tasks_executed",
                           &w, e)))
    return rc;
  bench_print_runs_context(&o, &small[0], NULL);
  printf("# MOAT 2 trajectories (32 runs); rtma-K: bucket size K (active paths = workers); "
         "rmsr-K: bucket size 28, --active-paths K\n");
  printf("%-8s %-26s %-24s %8s %6s %6s\n", "config", "peak RSS MiB", "makespan s", "buckets",
         "paths", "tasks");
  double val[2][NK], lo[2][NK], hi[2][NK];
  char labels[NK][16];
  const char *lp[NK];
  for (int i = 0; i < NK; i++) {
    snprintf(labels[i], sizeof labels[i], "K = %d", ks[i]);
    lp[i] = labels[i];
    const bench_run *rs[2] = {&small[i], &rmsr[i]};
    for (int c = 0; c < 2; c++) {
      const bench_run *r = rs[c];
      char name[16], a[64], b[64];
      snprintf(name, sizeof name, "%s-%d", c ? "rmsr" : "rtma", ks[i]);
      printf("%-8s %-26s %-24s %8.0f %6.0f %6.0f\n", name,
             bench_fmt(a, sizeof a, r->rss, 1.0 / 1024, 1), bench_fmt(b, sizeof b, r->exec, 1, 2),
             r->buckets, r->peak_paths, r->executed);
      wsisa_csv_text(w, c ? "rtma28_rmsr" : "rtma_bucket_k");
      wsisa_csv_uint(w, (uint64_t)ks[i]);
      wsisa_csv_uint(w, (uint64_t)(c ? 28 : ks[i]));
      if (c) wsisa_csv_uint(w, (uint64_t)ks[i]); else wsisa_csv_text(w, "");
      bench_csv_stats(w, r->rss, 1.0 / 1024);
      bench_csv_stats(w, r->exec, 1);
      wsisa_csv_num(w, r->buckets);
      wsisa_csv_num(w, r->peak_paths);
      wsisa_csv_num(w, r->executed);
      wsisa_csv_end_row(w);
      val[c][i] = r->rss.median / 1024;
      lo[c][i] = r->rss.min / 1024;
      hi[c][i] = r->rss.max / 1024;
    }
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  wsisa_svg_series series[2] = {{"RTMA, bucket size K", val[0], lo[0], hi[0]},
                                {"RTMA bucket 28 + RMSR, K active paths", val[1], lo[1], hi[1]}};
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(&o, "memory", path, e)) return WSISA_EUSAGE;
  if ((rc = wsisa_svg_bars(path, "Peak RSS: bucket size against active paths", "MiB", NK, lp, 2,
                           series, e)))
    return rc;
  return allocator_rows(&o, study, e);
}

/* ---- sched ------------------------------------------------------------------ */

/* The OpenCL device a hybrid run gets, probed by starting StarPU with one
 * OpenCL worker and none on the CPU: a GPU (or another device that is not a
 * CPU) first, else an OpenCL CPU device (PoCL, with STARPU_OPENCL_ON_CPUS=1).
 * Each probe runs in a child process of its own, as StarPU looks for OpenCL
 * devices once per process. Returns 1 for a GPU, 2 for a CPU device, 0 for
 * none. */
static int sched_opencl_device(void) {
  for (int on_cpus = 0; on_cpus <= 1; on_cpus++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
      setenv("STARPU_OPENCL_ON_CPUS", on_cpus ? "1" : "0", 1);
      setenv("STARPU_SILENT", "1", 1);
      wsisa_runtime_opts ropts = {.ncpu = 0, .nopencl = 1};
      wsisa_err probe = WSISA_ERR_INIT;
      int found = 0;
      if (wsisa_codelets_start(&ropts, &probe) == 0) {
        found = wsisa_runtime_nopencl() > 0;
        wsisa_runtime_shutdown();
      }
      _exit(found ? 0 : 1);
    }
    int status;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      return on_cpus ? 2 : 1;
  }
  return 0;
}

/* --cpus N out of argv (bench_parse knows only the common flags); *cpus
 * stays as it is when absent. */
static int sched_cpus(int *argc, char **argv, long *cpus, wsisa_err *e) {
  for (int i = 1; i < *argc; i++) {
    const char *v;
    int take;
    if (strcmp(argv[i], "--cpus") == 0 && i + 1 < *argc) {
      v = argv[i + 1];
      take = 2;
    } else if (strncmp(argv[i], "--cpus=", 7) == 0) {
      v = argv[i] + 7;
      take = 1;
    } else {
      continue;
    }
    int rc = wsisa_cli_long("--cpus", v, cpus, e);
    if (rc) return rc;
    if (*cpus < 1 || *cpus > 255)
      return wsisa_error(e, WSISA_EUSAGE, "--cpus %ld: must be in 1..255", *cpus);
    memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take) * sizeof *argv);
    *argc -= take;
    i--;
  }
  return 0;
}

/* Task placement's rows beside unit placement's: every policy, or with
 * --quick those whose models place tasks by their expected end. */
static int sched_task_row(const bench_opts *o, const char *policy) {
  return !o->quick || strcmp(policy, "dmda") == 0 || strcmp(policy, "dmdas") == 0;
}

int bench_sched(int argc, char **argv, wsisa_err *e) {
  long n = 1;
  int rc = sched_cpus(&argc, argv, &n, e);
  if (rc) return rc;
  bench_opts o;
  if ((rc = bench_parse(argc, argv, "sched", &o, e))) return rc;
  static const char *const policies[] = {"eager", "lws", "dmda", "dmdas", "modular-heft", "pats"};
  /* N CPU, N + 1 CPU, N CPU + 1 OpenCL worker with unit placement, and with
   * task placement (docs/architecture.md, Execution) */
  enum { NP = 6, NS = 4, HYBRID = 2 };
  const int device = o.no_opencl ? 0 : sched_opencl_device();
  const char *skipped = o.no_opencl ? "--no-opencl" : "no OpenCL device (GPU or PoCL) found";
  const int nset = device ? NS : HYBRID;
  char settings[NS][160], names[NS][40];
  snprintf(settings[0], sizeof settings[0],
           "STARPU_NCPU=%ld STARPU_NOPENCL=0 STARPU_OPENCL_ON_CPUS=0", n);
  snprintf(settings[1], sizeof settings[1],
           "STARPU_NCPU=%ld STARPU_NOPENCL=0 STARPU_OPENCL_ON_CPUS=0", n + 1);
  snprintf(names[0], sizeof names[0], "%ld CPU", n);
  snprintf(names[1], sizeof names[1], "%ld CPU", n + 1);
  static const char *const keys[NS] = {"cpu", "cpu_plus_one", "hybrid", "hybrid"};
  static const char *const placement[NS] = {"", "", "unit", "task"};
  /* the bytes across the bus come from StarPU's bus profiling */
  for (int h = HYBRID; h < NS; h++) {
    snprintf(settings[h], sizeof settings[h],
             "STARPU_NCPU=%ld STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=%d STARPU_PROFILING=1", n,
             device == 2);
    snprintf(names[h], sizeof names[h], "%ld CPU + 1 %s, %s", n,
             device == 2 ? "PoCL" : device ? "GPU" : "OpenCL", placement[h]);
  }
  /* OpenCL on PoCL is slow: a small study, one tile */
  const char *image = "tile_1024.png";
  char study[WSISA_PATH_MAX], env[768], args[64];
  if ((rc = bench_write_study(&o, "moat_t2_tile", image, 2, NULL, study, e))) return rc;
  bench_run res[NP][NS];
  int ran[NP][NS];
  for (int p = 0; p < NP; p++)
    for (int s = 0; s < NS; s++) {
      ran[p][s] = s < nset && (s != NS - 1 || sched_task_row(&o, policies[p]));
      if (!ran[p][s]) continue;
      fprintf(stderr, "wsisa-bench sched: %s, %s\n", policies[p], names[s]);
      snprintf(env, sizeof env, "STARPU_SCHED=%s %s", policies[p], settings[s]);
      snprintf(args, sizeof args, "%s%s", placement[s][0] ? "--placement " : "", placement[s]);
      if ((rc = bench_run_wsisa(&o, env, study, args, &res[p][s], e))) return rc;
    }
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "sched",
                           "policy,setting,placement,cpu_workers,opencl_workers,makespan_s,"
                           "makespan_min,makespan_max,wall_s,wall_min,wall_max,hybrid_over_cpu,"
                           "hybrid_over_cpu_plus_one,units_cpu,units_opencl,to_device_mb,"
                           "from_device_mb",
                           &w, e)))
    return rc;
  bench_print_runs_context(&o, &res[0][0], image);
  printf("# MOAT 2 trajectories (32 runs) on tests/data/%s; per policy: %s (%s), %s (%s), "
         "%ld CPU + 1 OpenCL worker (%s) with unit placement (each unit on one kind of "
         "worker) and with task placement (StarPU places each task%s); hybrid over N CPU "
         "(N+1 CPU) = their makespan / the hybrid makespan; units CPU/OpenCL under unit "
         "placement; MB to / from the device by StarPU's bus profiling\n",
         image, names[0], settings[0], names[1], settings[1], n,
         device ? settings[HYBRID] : skipped, o.quick ? "; dmda and dmdas only with --quick" : "");
  printf("%-12s %-22s %-24s %-24s %8s %8s %9s %15s\n", "policy", "workers", "makespan s",
         "wall s", "over N", "over N+1", "units", "MB to / from");
  double val[NS][NP], lo[NS][NP], hi[NS][NP];
  for (int p = 0; p < NP; p++)
    for (int s = 0; s < NS; s++) {
      val[s][p] = lo[s][p] = hi[s][p] = NAN_;
      if (!ran[p][s]) {
        if (s < HYBRID || s == HYBRID || !device || o.no_opencl)
          printf("%-12s %-22s skipped: %s\n", policies[p], names[s], skipped);
        continue;
      }
      const bench_run *r = &res[p][s];
      double over[2] = {NAN_, NAN_};
      char a[64], b[64], sp[2][16] = {"", ""}, units[32] = "", bus[48] = "";
      for (int k = 0; k < 2 && s >= HYBRID; k++) {
        over[k] = res[p][k].exec.median / r->exec.median;
        snprintf(sp[k], sizeof sp[k], "%.2fx", over[k]);
      }
      if (s >= HYBRID && strcmp(r->placement, "unit") == 0)
        snprintf(units, sizeof units, "%.0f/%.0f", r->units_cpu, r->units_opencl);
      if (s >= HYBRID && r->to_device_mb == r->to_device_mb)
        snprintf(bus, sizeof bus, "%.1f / %.1f", r->to_device_mb, r->from_device_mb);
      printf("%-12s %-22s %-24s %-24s %8s %8s %9s %15s\n", policies[p], names[s],
             bench_fmt(a, sizeof a, r->exec, 1, 2), bench_fmt(b, sizeof b, r->wall, 1, 2), sp[0],
             sp[1], units, bus);
      wsisa_csv_text(w, policies[p]);
      wsisa_csv_text(w, keys[s]);
      wsisa_csv_text(w, placement[s]);
      wsisa_csv_uint(w, (uint64_t)r->ncpu);
      wsisa_csv_uint(w, (uint64_t)r->nopencl);
      bench_csv_stats(w, r->exec, 1);
      bench_csv_stats(w, r->wall, 1);
      wsisa_csv_num(w, over[0]);
      wsisa_csv_num(w, over[1]);
      const int unit = s >= HYBRID && strcmp(r->placement, "unit") == 0;
      wsisa_csv_num(w, unit ? r->units_cpu : NAN_);
      wsisa_csv_num(w, unit ? r->units_opencl : NAN_);
      wsisa_csv_num(w, s >= HYBRID ? r->to_device_mb : NAN_);
      wsisa_csv_num(w, s >= HYBRID ? r->from_device_mb : NAN_);
      wsisa_csv_end_row(w);
      val[s][p] = r->exec.median;
      lo[s][p] = r->exec.min;
      hi[s][p] = r->exec.max;
    }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  wsisa_svg_series series[NS];
  for (int s = 0; s < NS; s++) series[s] = (wsisa_svg_series){names[s], val[s], lo[s], hi[s]};
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(&o, "sched", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "Makespan by scheduling policy", "seconds", NP, policies,
                        (size_t)nset, series, e);
}

/* ---- scale ------------------------------------------------------------------ */

/* One process with 1, 2, 4, ... CPU workers up to the cores present (or
 * --workers LIST); then, built with Open MPI, 2, 4, ... ranks of each of those
 * worker counts under mpirun, as long as the job's workers stay within the
 * largest count asked or the cores. Efficiency = T1 / (p x Tp), T1 the
 * makespan of one process with one worker, p the CPU workers over all ranks;
 * a row whose p exceeds the cores is marked oversubscribed. */
#define SCALE_MAX_ROWS 64
#define SCALE_MAX_WORKERS 16

typedef struct scale_row {
  int ranks, cpus; /* ranks 0: no mpirun; cpus: per rank */
  char label[48];
} scale_row;

static void scale_usage(FILE *f) {
  fprintf(f,
          "usage: wsisa-bench scale [--workers LIST] [--quick] [--repeats N] [-o DIR]\n"
          "\n"
          "A MOAT study (4 trajectories, 64 runs, on the sample slide's tissue tiles;\n"
          "--quick: 2 trajectories on tests/data/tile_1024.png), CPU workers only:\n"
          "  one process with 1, 2, 4, ... CPU workers up to the cores present\n"
          "  (STARPU_NCPU), or the counts of --workers LIST (e.g. 1,2,8,16; 1 is\n"
          "  always run: it is the baseline);\n"
          "  built with Open MPI, 2, 4, ... ranks x each of those counts under mpirun,\n"
          "  while ranks x workers stays within the largest count or the cores.\n"
          "Efficiency = T1 / (p x Tp): T1 one process with one worker, p the CPU\n"
          "workers over all ranks. Rows whose p exceeds the cores present (the\n"
          "machine's, or fewer by the affinity mask or cgroup quota) are marked\n"
          "oversubscribed: their efficiency measures sharing, not scaling. `started`\n"
          "is the CPU workers StarPU started per rank (run.json workers.cpu): fewer\n"
          "than asked means a capped StarPU (STARPU_MAXCPUS, see wsisa --version).\n"
          "scale.csv: ranks (0: one process, no mpirun), workers_per_rank,\n"
          "cpu_workers (over all ranks), started_per_rank, makespan_s, makespan_min,\n"
          "makespan_max, wall_s, wall_min, wall_max, speedup, efficiency,\n"
          "oversubscribed (0 | 1), cpu_s, cpu_min, cpu_max (CPU seconds, user +\n"
          "system, of the whole command: every rank, start-up and exit included;\n"
          "idle workers that poll their queues show here); scale.svg: the makespans.\n");
}

/* --workers LIST out of argv (bench_parse knows only the common flags):
 * the counts, ascending and unique, 1 first; 0 counts when absent. */
static int scale_workers(int *argc, char **argv, int *counts, int *n, wsisa_err *e) {
  *n = 0;
  for (int i = 1; i < *argc; i++) {
    const char *list = NULL;
    int take = 0;
    if (strcmp(argv[i], "--workers") == 0) {
      if (i + 1 >= *argc) return wsisa_error(e, WSISA_EUSAGE, "--workers: needs a list, e.g. 1,2,4");
      list = argv[i + 1];
      take = 2;
    } else if (strncmp(argv[i], "--workers=", 10) == 0) {
      list = argv[i] + 10;
      take = 1;
    } else {
      continue;
    }
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    counts[(*n)++] = 1;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
      long v;
      int rc = wsisa_cli_long("--workers", tok, &v, e);
      if (rc) return rc;
      if (v < 1 || v > 256)
        return wsisa_error(e, WSISA_EUSAGE, "--workers %s: each count must be in 1..256", list);
      int seen = 0;
      for (int k = 0; k < *n; k++) seen |= counts[k] == v;
      if (seen) continue;
      if (*n == SCALE_MAX_WORKERS)
        return wsisa_error(e, WSISA_EUSAGE, "--workers %s: at most %d counts", list,
                           SCALE_MAX_WORKERS);
      counts[(*n)++] = (int)v;
    }
    /* ascending: insertion sort of a handful */
    for (int a = 1; a < *n; a++)
      for (int b = a; b > 0 && counts[b] < counts[b - 1]; b--) {
        int t = counts[b];
        counts[b] = counts[b - 1];
        counts[b - 1] = t;
      }
    memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take) * sizeof *argv);
    *argc -= take;
    i--;
  }
  return 0;
}

int bench_scale(int argc, char **argv, wsisa_err *e) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      scale_usage(stdout);
      return 0;
    }
  int counts[SCALE_MAX_WORKERS + 1], ncounts;
  int rc = scale_workers(&argc, argv, counts, &ncounts, e);
  if (rc) return rc;
  bench_opts o;
  if ((rc = bench_parse(argc, argv, "scale", &o, e))) return rc;
  wsisa_machine_cores cores;
  wsisa_machine_cores_read(&cores);
  if (!ncounts) /* 1, 2, 4, ... up to the cores, and the cores themselves */
    for (int w = 1;; w *= 2) {
      counts[ncounts++] = w < cores.offered ? w : cores.offered;
      if (w >= cores.offered || ncounts == SCALE_MAX_WORKERS) break;
    }
  int most = counts[ncounts - 1] > cores.offered ? counts[ncounts - 1] : cores.offered;
  scale_row rows[SCALE_MAX_ROWS];
  int nr = 0;
  for (int c = 0; c < ncounts; c++) {
    rows[nr] = (scale_row){0, counts[c], ""};
    snprintf(rows[nr].label, sizeof rows[nr].label, "%d CPU worker%s", counts[c],
             counts[c] == 1 ? "" : "s");
    nr++;
  }
#ifdef WSISA_WITH_MPI
  for (int c = 0; c < ncounts; c++)
    for (int r = 2; r * counts[c] <= most && nr < SCALE_MAX_ROWS; r *= 2) {
      rows[nr] = (scale_row){r, counts[c], ""};
      snprintf(rows[nr].label, sizeof rows[nr].label, "%d ranks x %d CPU%s", r, counts[c],
               counts[c] == 1 ? "" : "s");
      nr++;
    }
#endif
  bench_run res[SCALE_MAX_ROWS];
  int traj = o.quick ? 2 : 4;
  char study[WSISA_PATH_MAX], env[256], label[32];
  snprintf(label, sizeof label, "moat_t%d", traj);
  if ((rc = bench_write_study(&o, label, NULL, traj, NULL, study, e))) return rc;
  for (int c = 0; c < nr; c++) {
    fprintf(stderr, "wsisa-bench scale: %s\n", rows[c].label);
    /* `env VAR=... mpirun ... wsisa run`: every rank inherits the variables */
    int n = snprintf(env, sizeof env, "STARPU_NCPU=%d STARPU_NOPENCL=0 STARPU_OPENCL_ON_CPUS=0",
                     rows[c].cpus);
    if (rows[c].ranks)
      snprintf(env + n, sizeof env - (size_t)n,
               " mpirun --oversubscribe --allow-run-as-root -np %d", rows[c].ranks);
    if ((rc = bench_run_wsisa(&o, env, study, NULL, &res[c], e))) return rc;
  }
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "scale",
                           "ranks,workers_per_rank,cpu_workers,started_per_rank,makespan_s,"
                           "makespan_min,makespan_max,wall_s,wall_min,wall_max,speedup,"
                           "efficiency,oversubscribed,cpu_s,cpu_min,cpu_max",
                           &w, e)))
    return rc;
  bench_print_runs_context(&o, &res[0], NULL);
  printf("# MOAT %d trajectories (%d runs), CPU only; efficiency = T1 / (p x Tp), T1 = 1 CPU "
         "worker, p = CPU workers over all ranks; %d cores here (limited by the %s)\n",
         traj, 16 * traj, cores.offered, cores.limit);
  printf("%-24s %7s %-24s %-24s %-24s %8s %10s\n", "configuration", "started", "makespan s",
         "wall s", "CPU s", "speedup", "efficiency");
  double val[SCALE_MAX_ROWS], lo[SCALE_MAX_ROWS], hi[SCALE_MAX_ROWS];
  const char *lp[SCALE_MAX_ROWS];
  for (int c = 0; c < nr; c++) {
    const bench_run *r = &res[c];
    int p = (rows[c].ranks ? rows[c].ranks : 1) * rows[c].cpus;
    int over = p > cores.offered;
    double speedup = res[0].exec.median / r->exec.median, eff = speedup / p;
    char a[64], b[64], d[64];
    printf("%-24s %7d %-24s %-24s %-24s %7.2fx %10.2f%s\n", rows[c].label, r->ncpu,
           bench_fmt(a, sizeof a, r->exec, 1, 2), bench_fmt(b, sizeof b, r->wall, 1, 2),
           bench_fmt(d, sizeof d, r->cpu, 1, 2), speedup, eff, over ? "  oversubscribed" : "");
    wsisa_csv_uint(w, (uint64_t)rows[c].ranks);
    wsisa_csv_uint(w, (uint64_t)rows[c].cpus);
    wsisa_csv_uint(w, (uint64_t)p);
    wsisa_csv_uint(w, (uint64_t)r->ncpu);
    bench_csv_stats(w, r->exec, 1);
    bench_csv_stats(w, r->wall, 1);
    wsisa_csv_num(w, speedup);
    wsisa_csv_num(w, eff);
    wsisa_csv_uint(w, (uint64_t)over);
    bench_csv_stats(w, r->cpu, 1);
    wsisa_csv_end_row(w);
    val[c] = r->exec.median;
    lo[c] = r->exec.min;
    hi[c] = r->exec.max;
    lp[c] = rows[c].label;
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  wsisa_svg_series series = {"makespan", val, lo, hi};
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(&o, "scale", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "Makespan by CPU workers and MPI ranks", "seconds", (size_t)nr, lp, 1,
                        &series, e);
}

/* ---- algo ------------------------------------------------------------------- */

static const char *const plan_strategies[] = {"stage", "naive", "sca", "rtma", "trtma"};
#define NPLAN 5

/* analysis_ms and the figures of each strategy in one `wsisa plan` report */
static void plan_figures(json_t *root, double ms[NPLAN], double buckets[NPLAN],
                         double reuse[NPLAN]) {
  for (int s = 0; s < NPLAN; s++) ms[s] = buckets[s] = reuse[s] = NAN_;
  size_t i;
  json_t *st;
  json_array_foreach(json_object_get(root, "strategies"), i, st) {
    const char *name = json_string_value(json_object_get(st, "strategy"));
    for (int s = 0; s < NPLAN && name; s++)
      if (strcmp(name, plan_strategies[s]) == 0) {
        ms[s] = json_number_value(json_object_get(st, "analysis_ms"));
        buckets[s] = json_number_value(json_object_get(st, "buckets"));
        reuse[s] = json_number_value(json_object_get(st, "reuse_pct"));
      }
  }
}

int bench_algo(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "algo", &o, e);
  if (rc) return rc;
  static const int full_t[] = {2, 4, 8, 16, 32, 64}, quick_t[] = {2, 4, 8, 16};
  static const int bks[] = {2, 6, 12};
  enum { NB = 3 };
  const int *traj = o.quick ? quick_t : full_t;
  int nt = o.quick ? 4 : 6;
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "algo",
                           "trajectories,runs,max_buckets,strategy,analysis_ms,analysis_min,"
                           "analysis_max,buckets,reuse_pct",
                           &w, e)))
    return rc;
  bench_print_context(stdout);
  printf("# wsisa plan --study S --json on MOAT (Halton) designs, analysis_ms per strategy, "
         "median of %d (min..max)\n", o.repeats);
  printf("%-5s %-5s", "runs", "maxb");
  for (int s = 0; s < NPLAN; s++) printf(" %-22s", plan_strategies[s]);
  printf("\n");
  double val[NB + 3][MAXSZ], lo[NB + 3][MAXSZ], hi[NB + 3][MAXSZ];
  char labels[MAXSZ][16];
  const char *lp[MAXSZ];
  for (int t = 0; t < nt; t++) {
    snprintf(labels[t], sizeof labels[t], "n = %d", 16 * traj[t]);
    lp[t] = labels[t];
    for (int b = 0; b < NB; b++) {
      char study[WSISA_PATH_MAX], label[48], reuse[96];
      snprintf(label, sizeof label, "plan_t%d_b%d", traj[t], bks[b]);
      snprintf(reuse, sizeof reuse, "{ \"strategy\": \"trtma\", \"max_buckets\": %d }", bks[b]);
      if ((rc = bench_write_study(&o, label, NULL, traj[t], reuse, study, e))) goto fail;
      double samples[NPLAN][BENCH_MAX_REPEATS], buckets[NPLAN], pct[NPLAN];
      for (int r = 0; r < o.repeats; r++) {
        json_t *root;
        if ((rc = bench_plan_json(study, &root, e))) goto fail;
        double ms[NPLAN];
        plan_figures(root, ms, buckets, pct);
        json_decref(root);
        for (int s = 0; s < NPLAN; s++) samples[s][r] = ms[s];
      }
      printf("%-5d %-5d", 16 * traj[t], bks[b]);
      for (int s = 0; s < NPLAN; s++) {
        bench_stats st = bench_summarize(samples[s], o.repeats);
        char a[64];
        printf(" %-22s", bench_fmt(a, sizeof a, st, 1, 3));
        wsisa_csv_uint(w, (uint64_t)traj[t]);
        wsisa_csv_uint(w, (uint64_t)(16 * traj[t]));
        wsisa_csv_uint(w, (uint64_t)bks[b]);
        wsisa_csv_text(w, plan_strategies[s]);
        bench_csv_stats(w, st, 1);
        wsisa_csv_num(w, buckets[s]);
        wsisa_csv_num(w, pct[s]);
        wsisa_csv_end_row(w);
        /* plotted: naive, sca, rtma (they do not use MaxBuckets) and trtma per MaxBuckets */
        int series = s == 4 ? 3 + b : (b == 0 && s >= 1 && s <= 3 ? s - 1 : -1);
        if (series >= 0) {
          val[series][t] = st.median;
          lo[series][t] = st.min;
          hi[series][t] = st.max;
        }
      }
      printf("\n");
    }
  }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  char names[NB][32];
  wsisa_svg_series series[NB + 3];
  for (int s = 0; s < 3; s++)
    series[s] = (wsisa_svg_series){plan_strategies[s + 1], val[s], lo[s], hi[s]};
  for (int b = 0; b < NB; b++) {
    snprintf(names[b], sizeof names[b], "trtma, MaxBuckets %d", bks[b]);
    series[3 + b] = (wsisa_svg_series){names[b], val[3 + b], lo[3 + b], hi[3 + b]};
  }
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(&o, "algo", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "Reuse analysis time (wsisa plan)", "ms", (size_t)nt, lp, NB + 3,
                        series, e);
fail:
  wsisa_csv_close(w, e);
  return rc;
}

/* ---- all -------------------------------------------------------------------- */

int bench_all(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "all", &o, e);
  if (rc) return rc;
  static const char *const names[] = {"ops",     "reuse",     "memory",     "sched",
                                      "scale",   "algo",      "predict",    "balance",
                                      "ranks",   "analyze",   "wholeslide", "tilesample"};
  int (*const fns[])(int, char **, wsisa_err *) = {
      bench_ops,     bench_reuse,   bench_memory,     bench_sched,
      bench_scale,   bench_algo,    bench_predict,    bench_balance,
      bench_ranks,   bench_analyze, bench_wholeslide, bench_tilesample};
  double t0 = wsisa_now();
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char dir[WSISA_PATH_MAX], rep[16];
    if (wsisa_path_fmt_err(dir, e, "%s/%s", o.dir, names[i])) return WSISA_EUSAGE;
    snprintf(rep, sizeof rep, "%d", o.repeats);
    char *av[12];
    int ac = 0;
    av[ac++] = (char *)names[i];
    av[ac++] = "-o";
    av[ac++] = dir;
    av[ac++] = "--repeats";
    av[ac++] = rep;
    if (strcmp(names[i], "ops") == 0) {
      av[ac++] = "--no-opencl";
      /* the smallest size that still shows the operations' costs */
      if (o.quick) { av[ac++] = "--size"; av[ac++] = "2048"; }
    } else {
      if (o.quick) av[ac++] = "--quick";
      if (o.no_opencl) av[ac++] = "--no-opencl";
    }
    av[ac] = NULL;
    printf("\n## wsisa-bench %s\n", names[i]);
    fflush(stdout);
    double t1 = wsisa_now();
    if ((rc = fns[i](ac, av, e))) return rc;
    printf("# %s took %.0f s\n", names[i], wsisa_now() - t1);
    fflush(stdout);
  }
  printf("\n# all%s took %.0f s\n", o.quick ? " --quick" : "", wsisa_now() - t0);
  return 0;
}
