/* Running the `wsisa` executable on generated study files and reading its
 * run.json: what the study-level experiments share. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bench/bench.h"
#include "cli/cli.h"

int bench_parse(int argc, char **argv, const char *name, bench_opts *o, wsisa_err *e) {
  static const struct option longopts[] = {{"quick", no_argument, 0, 'q'},
                                           {"repeats", required_argument, 0, 'r'},
                                           {"output", required_argument, 0, 'o'},
                                           {"no-opencl", no_argument, 0, 'n'},
                                           {0, 0, 0, 0}};
  long repeats = 0;
  int repeats_given = 0;
  int opt, rc;
  memset(o, 0, sizeof *o);
  snprintf(o->dir, sizeof o->dir, "bench-results/%s", name);
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
    switch (opt) {
      case 'q': o->quick = 1; break;
      case 'r':
        if ((rc = wsisa_cli_long("--repeats", optarg, &repeats, e))) return rc;
        repeats_given = 1;
        break;
      case 'o': snprintf(o->dir, sizeof o->dir, "%s", optarg); break;
      case 'n': o->no_opencl = 1; break;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (!repeats_given) repeats = o->quick ? 1 : 3;
  if (repeats < 1 || repeats > BENCH_MAX_REPEATS)
    return wsisa_error(e, WSISA_EUSAGE, "--repeats %ld: must be in 1..%d", repeats,
                       BENCH_MAX_REPEATS);
  o->repeats = (int)repeats;
  char cmd[BENCH_CMD_MAX];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/studies'", o->dir);
  if (system(cmd) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot create", o->dir);
  return 0;
}

/* The wsisa beside this wsisa-bench (build/bin, or an installed PREFIX/bin),
 * else the one this build made. */
const char *bench_wsisa_exe(void) {
  static char path[WSISA_PATH_MAX];
  if (!path[0]) {
    char dir[WSISA_PATH_MAX];
    if (wsisa_exe_dir(dir, sizeof dir) == 0) {
      if (wsisa_path_fmt(path, "%s/wsisa", dir) != 0 || access(path, X_OK) != 0) path[0] = '\0';
    }
    if (!path[0]) snprintf(path, sizeof path, "%s", WSISA_EXE);
  }
  return path;
}

int bench_write_study(const bench_opts *o, const char *label, const char *image, int trajectories,
                      const char *reuse, char path[WSISA_PATH_MAX], wsisa_err *e) {
  int rc = wsisa_path_fmt_err(path, e, "%s/studies/%s.json", o->dir, label);
  if (rc) return rc;
  FILE *f = fopen(path, "w");
  if (!f) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  /* --quick: one 1024x1024 tile; otherwise the sample's tissue tiles at 1024;
   * installed beside wsisa-bench, or in the source tree */
  char data[WSISA_PATH_MAX];
  if (image || o->quick) {
    wsisa_data_file(image ? image : "tile_1024.png", WSISA_SOURCE_DIR "/tests/data", data,
                    sizeof data);
    fprintf(f, "{\n  \"inputs\": { \"images\": [\"%s\"] },\n", data);
  } else {
    wsisa_data_file("CMU-1-Small-Region.svs", WSISA_SOURCE_DIR "/tests/data", data, sizeof data);
    fprintf(f, "{\n  \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 1024 },\n", data);
  }
  fprintf(f,
          "  \"method\": { \"name\": \"moat\", \"trajectories\": %d, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
          "  \"metric\": \"dice\"%s%s\n}\n",
          trajectories, reuse ? ",\n  \"reuse\": " : "", reuse ? reuse : "");
  if (fclose(f) != 0) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  return 0;
}

double bench_json_num(json_t *root, const char *obj, const char *key) {
  json_t *v = obj ? json_object_get(json_object_get(root, obj), key) : json_object_get(root, key);
  return json_is_number(v) ? json_number_value(v) : 0.0 / 0.0;
}
#define num bench_json_num

static int read_run_json(const char *path, bench_run *r, wsisa_err *e) {
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  if (!root) return wsisa_error(e, WSISA_EIO, "%s: %s", path, je.text);
  r->execute = num(root, "seconds", "execute");
  r->minor_faults = num(root, "page_faults", "minor");
  r->executed = num(root, "tasks", "executed");
  r->no_reuse = num(root, "tasks", "no_reuse");
  r->buckets = num(root, "reuse", "buckets");
  r->rss_kib = num(root, NULL, "peak_rss_kib");
  r->peak_paths = num(root, NULL, "peak_active_paths");
  r->objects_seen = num(root, "objects", "seen");
  r->objects_reused = num(root, "objects", "reused");
  r->ncpu = (int)num(root, "workers", "cpu");
  r->nopencl = (int)num(root, "workers", "opencl");
  json_t *est = json_object_get(root, "estimate");
  r->pred_makespan = num(est, "predicted", "makespan_s");
  r->pred_rss_kib = num(est, "predicted", "peak_rss_bytes") / 1024.0;
  r->uncalibrated = num(est, "predicted", "uncalibrated_share");
  json_t *pl = json_object_get(root, "placement");
  const char *in_force = json_string_value(json_object_get(pl, "in_force"));
  snprintf(r->placement, sizeof r->placement, "%s", in_force ? in_force : "");
  r->units_cpu = num(pl, "units", "cpu");
  r->units_opencl = num(pl, "units", "opencl");
  r->to_device_mb = num(pl, "bus", "to_device_bytes") / 1e6;
  r->from_device_mb = num(pl, "bus", "from_device_bytes") / 1e6;
  r->interpolated = num(est, "predicted", "interpolated_share");
  const char *s = json_string_value(json_object_get(root, "scheduler"));
  snprintf(r->sched, sizeof r->sched, "%s", s ? s : "?");
  json_decref(root);
  return 0;
}

int bench_run_wsisa(const bench_opts *o, const char *env, const char *study, const char *args,
                    bench_run *r, wsisa_err *e) {
  double wall[BENCH_MAX_REPEATS], exec[BENCH_MAX_REPEATS], rss[BENCH_MAX_REPEATS];
  double cpu[BENCH_MAX_REPEATS], faults[BENCH_MAX_REPEATS];
  char out[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  char cmd[BENCH_CMD_MAX + 4 * WSISA_PATH_MAX]; /* the environment, then the command */
  int rc = wsisa_path_fmt_err(out, e, "%s/run", o->dir);
  if (rc) return rc;
  for (int i = 0; i < o->repeats; i++) {
    /* a fresh results folder each time: `wsisa run` refuses another study's */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    if (system(cmd) != 0) return wsisa_error(e, WSISA_EIO, "%s: cannot remove", out);
    /* CPU workers only unless `env` says otherwise: `ops` turns on the OpenCL
     * CPU device in this process, and its environment would leak into wsisa */
    snprintf(cmd, sizeof cmd,
             "env STARPU_OPENCL_ON_CPUS=0 STARPU_NOPENCL=0 %s '%s' run --study '%s' -o '%s' %s "
             ">'%s.log' 2>&1",
             env ? env : "", bench_wsisa_exe(), study, out, args ? args : "", out);
    double t0 = wsisa_now(), c0 = bench_children_cpu();
    int st = system(cmd);
    wall[i] = wsisa_now() - t0;
    cpu[i] = bench_children_cpu() - c0;
    if (st != 0)
      return wsisa_error(e, WSISA_ERUNTIME, "%s failed (see %s.log)", cmd, out);
    if ((rc = wsisa_path_fmt_err(path, e, "%s/run.json", out))) return rc;
    rc = read_run_json(path, r, e);
    if (rc) return rc;
    exec[i] = r->execute;
    rss[i] = r->rss_kib;
    faults[i] = r->minor_faults;
  }
  r->wall = bench_summarize(wall, o->repeats);
  r->exec = bench_summarize(exec, o->repeats);
  r->rss = bench_summarize(rss, o->repeats);
  r->cpu = bench_summarize(cpu, o->repeats);
  r->faults = bench_summarize(faults, o->repeats);
  return 0;
}

/* The JSON a command prints on stdout. */
static int json_of_command(const char *cmd, json_t **out, wsisa_err *e) {
  FILE *p = popen(cmd, "r");
  if (!p) return wsisa_error(e, WSISA_ERUNTIME, "%s: cannot start", cmd);
  json_error_t je;
  json_t *root = json_loadf(p, 0, &je);
  int st = pclose(p);
  if (!root || st != 0) {
    json_decref(root);
    return wsisa_error(e, WSISA_ERUNTIME, "%s failed (%s)", cmd, root ? "exit status" : je.text);
  }
  *out = root;
  return 0;
}

int bench_plan_json(const char *study, json_t **out, wsisa_err *e) {
  char cmd[BENCH_CMD_MAX];
  snprintf(cmd, sizeof cmd, "'%s' plan --study '%s' --json 2>/dev/null", bench_wsisa_exe(), study);
  return json_of_command(cmd, out, e);
}

void bench_print_runs_context(const bench_opts *o, const bench_run *r, const char *image) {
  char what[128];
  if (image || o->quick)
    snprintf(what, sizeof what, "tests/data/%s", image ? image : "tile_1024.png");
  else
    snprintf(what, sizeof what, "the tissue tiles of CMU-1-Small-Region.svs at 1024");
  bench_print_context(stdout);
  printf("# runs: wsisa run (scheduler %s, %d CPU + %d OpenCL workers unless stated) on %s; "
         "median of %d (min..max)\n",
         r->sched, r->ncpu, r->nopencl,
         what,
         o->repeats);
}

char *bench_fmt(char *buf, size_t cap, bench_stats s, double scale, int decimals) {
  snprintf(buf, cap, "%.*f (%.*f..%.*f)", decimals, s.median * scale, decimals, s.min * scale,
           decimals, s.max * scale);
  return buf;
}

void bench_csv_stats(wsisa_csv_writer *w, bench_stats s, double scale) {
  wsisa_csv_num(w, s.median * scale);
  wsisa_csv_num(w, s.min * scale);
  wsisa_csv_num(w, s.max * scale);
}

int bench_csv_open(const bench_opts *o, const char *name, const char *header,
                   wsisa_csv_writer **w, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc = wsisa_path_fmt_err(path, e, "%s/%s.csv", o->dir, name);
  if (!rc) rc = wsisa_csv_create(path, w, e);
  if (rc) return rc;
  /* the header is one comma-separated string for readability at the call site */
  char *copy = strdup(header), *save = NULL;
  if (!copy) {
    wsisa_csv_close(*w, e);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
    wsisa_csv_text(*w, t);
  wsisa_csv_end_row(*w);
  free(copy);
  return 0;
}

int bench_svg_path(const bench_opts *o, const char *name, char path[WSISA_PATH_MAX], wsisa_err *e) {
  return wsisa_path_fmt_err(path, e, "%s/%s.svg", o->dir, name);
}

int bench_wsisa(const char *env, const char *args, const char *log, wsisa_err *e) {
  char cmd[BENCH_CMD_MAX];
  snprintf(cmd, sizeof cmd, "env STARPU_OPENCL_ON_CPUS=0 STARPU_NOPENCL=0 %s '%s' %s >'%s' 2>&1",
           env ? env : "", bench_wsisa_exe(), args, log);
  if (system(cmd) != 0) return wsisa_error(e, WSISA_ERUNTIME, "%s failed (see %s)", cmd, log);
  return 0;
}

int bench_estimate_json(const char *env, const char *study, const char *args, json_t **out,
                        wsisa_err *e) {
  char cmd[BENCH_CMD_MAX];
  snprintf(cmd, sizeof cmd,
           "env STARPU_OPENCL_ON_CPUS=0 STARPU_NOPENCL=0 %s '%s' plan --study '%s' --estimate "
           "--json %s 2>/dev/null",
           env ? env : "", bench_wsisa_exe(), study, args ? args : "");
  return json_of_command(cmd, out, e);
}
