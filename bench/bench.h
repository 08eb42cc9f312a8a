/* wsisa-bench: the papers' experiments on this machine, as medians and ratios
 * measured in one run. Each experiment is a subcommand. */
#ifndef WSISA_BENCH_H
#define WSISA_BENCH_H

#include <stdio.h>

#include <jansson.h>

#include "core/core.h"
#include "io/csv.h"

typedef struct bench_stats {
  double median, min, max;
} bench_stats;

/* Median, min and max of n samples (left in their order). */
bench_stats bench_summarize(const double *samples, int n);
/* CPU seconds (user + system) of the children waited for so far, theirs and
 * their own children's (a shell waits for its command, mpirun for its ranks). */
double bench_children_cpu(void);
/* The machine, StarPU version, scheduler and workers, printed with each table. */
void bench_print_context(FILE *f);

int bench_ops(int argc, char **argv, wsisa_err *e);
int bench_kernels(int argc, char **argv, wsisa_err *e);
int bench_reuse(int argc, char **argv, wsisa_err *e);
int bench_memory(int argc, char **argv, wsisa_err *e);
int bench_sched(int argc, char **argv, wsisa_err *e);
int bench_scale(int argc, char **argv, wsisa_err *e);
int bench_algo(int argc, char **argv, wsisa_err *e);
int bench_predict(int argc, char **argv, wsisa_err *e);
int bench_balance(int argc, char **argv, wsisa_err *e);
int bench_ranks(int argc, char **argv, wsisa_err *e);
int bench_analyze(int argc, char **argv, wsisa_err *e);
int bench_wholeslide(int argc, char **argv, wsisa_err *e);
int bench_tilesample(int argc, char **argv, wsisa_err *e);
int bench_all(int argc, char **argv, wsisa_err *e);

/* ---- study-level experiments: `wsisa run` / `wsisa plan` as subprocesses ---- */

#define BENCH_MAX_REPEATS 64
/* A shell command or an environment setting that names up to four paths
 * (WSISA_PATH_MAX each) with its words around them. */
#define BENCH_CMD_MAX (4 * WSISA_PATH_MAX + 1024)

typedef struct bench_opts {
  int quick, repeats, no_opencl;
  char dir[WSISA_PATH_MAX];
} bench_opts;

/* One configuration's figures over the repeats; counts are from the last run
 * (they do not vary between runs). */
typedef struct bench_run {
  bench_stats wall, exec, rss; /* seconds, seconds, KiB */
  bench_stats faults; /* run.json page_faults.minor: while the units ran */
  /* CPU seconds (user + system) of the command and every process it started
   * (mpirun's ranks too), start-up and exit included */
  bench_stats cpu;
  double execute, executed, no_reuse, buckets, rss_kib, peak_paths, minor_faults;
  double objects_seen, objects_reused; /* run.json objects: units of levels 6-7 */
  /* run.json placement: with CPU and OpenCL workers, the placement in force
   * ("" with one kind), the units per kind, and MB (10^6 bytes) to and from
   * the device by StarPU's bus profiling (NaN without STARPU_PROFILING=1) */
  char placement[8];
  double units_cpu, units_opencl, to_device_mb, from_device_mb;
  int ncpu, nopencl;
  char sched[32];
  /* run.json's estimate, made at the run's start (NaN without one) */
  double pred_makespan, pred_rss_kib, uncalibrated, interpolated;
} bench_run;

/* The wsisa executable the experiments run: the one beside wsisa-bench
 * (build/bin, or an installed PREFIX/bin), else the one this build made. */
const char *bench_wsisa_exe(void);
/* --quick, --repeats N (default 3, 1 with --quick), -o DIR (default
 * bench-results/NAME, created with a studies/ folder), --no-opencl. */
int bench_parse(int argc, char **argv, const char *name, bench_opts *o, wsisa_err *e);
/* DIR/studies/LABEL.json: a MOAT (Halton) study with `trajectories`, on the
 * tests/data/IMAGE if given, else tile_1024.png with --quick or the sample
 * slide's tissue tiles at 1024; `reuse` is a JSON object text or NULL. */
int bench_write_study(const bench_opts *o, const char *label, const char *image, int trajectories,
                      const char *reuse, char path[WSISA_PATH_MAX], wsisa_err *e);
/* `env ENV wsisa run --study STUDY -o DIR/run ARGS`, o->repeats times; wall
 * time around the subprocess, the rest from its run.json. */
int bench_run_wsisa(const bench_opts *o, const char *env, const char *study, const char *args,
                    bench_run *r, wsisa_err *e);
/* `wsisa plan --study STUDY --json`, parsed. */
int bench_plan_json(const char *study, json_t **out, wsisa_err *e);
/* `env ENV wsisa ARGS >LOG 2>&1` (CPU workers only unless ENV says
 * otherwise); an error naming LOG when it fails. */
int bench_wsisa(const char *env, const char *args, const char *log, wsisa_err *e);
/* `env ENV wsisa plan --study STUDY --estimate --json ARGS`, parsed. */
int bench_estimate_json(const char *env, const char *study, const char *args, json_t **out,
                        wsisa_err *e);
/* A number at root.obj.key (obj NULL: root.key); NaN when absent. */
double bench_json_num(json_t *root, const char *obj, const char *key);
/* The machine context and what the runs were (IMAGE as for bench_write_study). */
void bench_print_runs_context(const bench_opts *o, const bench_run *r, const char *image);
/* "median (min..max)" of s * scale. */
char *bench_fmt(char *buf, size_t cap, bench_stats s, double scale, int decimals);
/* DIR/NAME.csv with a header given as "a,b,c". */
int bench_csv_open(const bench_opts *o, const char *name, const char *header,
                   wsisa_csv_writer **w, wsisa_err *e);
/* Three cells: median, min, max of s * scale. */
void bench_csv_stats(wsisa_csv_writer *w, bench_stats s, double scale);
int bench_svg_path(const bench_opts *o, const char *name, char path[WSISA_PATH_MAX], wsisa_err *e);

#endif
