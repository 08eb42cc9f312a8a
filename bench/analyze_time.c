/* wsisa-bench analyze: how `wsisa analyze` scales with the design's rows, on
 * designs made elsewhere (a SALib problem file, CSV samples and outputs):
 * correlation and MOAT (Morris) at 10^4, 10^5 and 10^6 rows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "io/svg.h"

#define ANALYZE_K 8 /* parameters */

/* A deterministic model: linear terms of decreasing weight and one interaction. */
static double model(const double *x) {
  double y = 4.0 * x[0] * x[1];
  for (int i = 0; i < ANALYZE_K; i++) y += (double)(ANALYZE_K - i) * x[i];
  return y;
}

/* DIR/samples_M_N.csv and DIR/outputs_M_N.csv for `rows`
 * rows of `method` (correlation: rows of a fixed-seed LCG in [0, 1]; morris:
 * trajectories on a 4-level grid, one parameter moving by 2/3 per step;
 * `rows` a multiple of the trajectory's ANALYZE_K + 1 rows). */
static int write_design(const char *dir, const char *method, long rows,
                        char samples[WSISA_PATH_MAX], char outputs[WSISA_PATH_MAX], wsisa_err *e) {
  const int morris = strcmp(method, "morris") == 0;
  if (wsisa_path_fmt_err(samples, e, "%s/samples_%s_%ld.csv", dir, method, rows) ||
      wsisa_path_fmt_err(outputs, e, "%s/outputs_%s_%ld.csv", dir, method, rows))
    return WSISA_EUSAGE;
  FILE *fs = fopen(samples, "w"), *fo = fopen(outputs, "w");
  if (!fs || !fo) {
    if (fs) fclose(fs);
    if (fo) fclose(fo);
    return wsisa_error(e, WSISA_EIO, "cannot write %s", samples);
  }
  fprintf(fs, "run_id");
  for (int i = 0; i < ANALYZE_K; i++) fprintf(fs, ",x%d", i + 1);
  fprintf(fs, "\n");
  fprintf(fo, "run_id,y\n");
  unsigned long long s = 12345;
  double x[ANALYZE_K];
  for (long r = 0; r < rows; r++) {
    const long step = r % (ANALYZE_K + 1);
    if (!morris || step == 0)
      for (int i = 0; i < ANALYZE_K; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = (double)(s >> 11) / 9007199254740992.0;
        x[i] = morris ? (u < 0.5 ? 0.0 : 1.0 / 3.0) : u;
      }
    else
      x[(step - 1 + r / (ANALYZE_K + 1)) % ANALYZE_K] += 2.0 / 3.0;
    fprintf(fs, "%ld", r);
    for (int i = 0; i < ANALYZE_K; i++) fprintf(fs, ",%.17g", x[i]);
    fprintf(fs, "\n");
    fprintf(fo, "%ld,%.17g\n", r, model(x));
  }
  const int bad = ferror(fs) | ferror(fo);
  if ((fclose(fs) | fclose(fo)) || bad) return wsisa_error(e, WSISA_EIO, "cannot write %s", samples);
  return 0;
}

int bench_analyze(int argc, char **argv, wsisa_err *e) {
  bench_opts o;
  int rc = bench_parse(argc, argv, "analyze", &o, e);
  if (rc) return rc;
  static const long sizes[] = {10000, 100000, 1000000};
  static const char *const methods[] = {"correlation", "morris"};
  const int nsizes = o.quick ? 2 : 3;
  char problem[WSISA_PATH_MAX];
  if ((rc = wsisa_path_fmt_err(problem, e, "%s/studies/problem.json", o.dir))) return rc;
  FILE *f = fopen(problem, "w");
  if (!f) return wsisa_error(e, WSISA_EIO, "cannot write %s", problem);
  fprintf(f, "{ \"num_vars\": %d, \"names\": [", ANALYZE_K);
  for (int i = 0; i < ANALYZE_K; i++) fprintf(f, "%s\"x%d\"", i ? ", " : "", i + 1);
  fprintf(f, "], \"bounds\": [");
  for (int i = 0; i < ANALYZE_K; i++) fprintf(f, "%s[0, 1]", i ? ", " : "");
  fprintf(f, "] }\n");
  if (fclose(f)) return wsisa_error(e, WSISA_EIO, "cannot write %s", problem);
  wsisa_csv_writer *w;
  if ((rc = bench_csv_open(&o, "analyze", "method,rows,wall_s,wall_min,wall_max,cpu_s,cpu_min,cpu_max",
                           &w, e)))
    return rc;
  bench_print_context(stdout);
  printf("# wsisa analyze --problem P --method M on designs made elsewhere (%d parameters), "
         "median of %d (min..max); cpu = user + system of the process\n",
         ANALYZE_K, o.repeats);
  printf("%-12s %9s %-26s %-26s\n", "method", "rows", "wall s", "cpu s");
  double val[2][3], lo[2][3], hi[2][3];
  for (int m = 0; m < 2; m++)
    for (int n = 0; n < nsizes; n++) {
      char samples[WSISA_PATH_MAX], outputs[WSISA_PATH_MAX], log[WSISA_PATH_MAX],
          out[WSISA_PATH_MAX];
      char args[4 * WSISA_PATH_MAX + 256]; /* the command's four paths and its flags */
      /* MOAT: whole trajectories */
      const long rows = m == 1 ? sizes[n] - sizes[n] % (ANALYZE_K + 1) : sizes[n];
      if ((rc = write_design(o.dir, methods[m], rows, samples, outputs, e)) ||
          (rc = wsisa_path_fmt_err(out, e, "%s/indices_%s_%ld", o.dir, methods[m], rows)) ||
          (rc = wsisa_path_fmt_err(log, e, "%s/analyze_%s_%ld.log", o.dir, methods[m], rows)))
        goto fail;
      snprintf(args, sizeof args,
               "analyze --problem '%s' --method %s --samples '%s' --outputs '%s' -o '%s'",
               problem, methods[m], samples, outputs, out);
      double wall[BENCH_MAX_REPEATS], cpu[BENCH_MAX_REPEATS];
      for (int r = 0; r < o.repeats; r++) {
        const double t0 = wsisa_now(), c0 = bench_children_cpu();
        if ((rc = bench_wsisa(NULL, args, log, e))) goto fail;
        wall[r] = wsisa_now() - t0;
        cpu[r] = bench_children_cpu() - c0;
      }
      bench_stats sw = bench_summarize(wall, o.repeats), sc = bench_summarize(cpu, o.repeats);
      char a[64], b[64];
      printf("%-12s %9ld %-26s %-26s\n", methods[m], rows, bench_fmt(a, sizeof a, sw, 1, 3),
             bench_fmt(b, sizeof b, sc, 1, 3));
      wsisa_csv_text(w, methods[m]);
      wsisa_csv_uint(w, (uint64_t)rows);
      bench_csv_stats(w, sw, 1);
      bench_csv_stats(w, sc, 1);
      wsisa_csv_end_row(w);
      val[m][n] = sw.median, lo[m][n] = sw.min, hi[m][n] = sw.max;
      remove(samples);
      remove(outputs);
    }
  if ((rc = wsisa_csv_close(w, e))) return rc;
  char labels[3][24];
  const char *lp[3];
  for (int n = 0; n < nsizes; n++) {
    snprintf(labels[n], sizeof labels[n], "%ld rows", sizes[n]);
    lp[n] = labels[n];
  }
  wsisa_svg_series series[2] = {{"correlation", val[0], lo[0], hi[0]},
                                {"morris", val[1], lo[1], hi[1]}};
  char path[WSISA_PATH_MAX];
  if (bench_svg_path(&o, "analyze", path, e)) return WSISA_EUSAGE;
  return wsisa_svg_bars(path, "wsisa analyze by the design's rows", "seconds", (size_t)nsizes, lp,
                        2, series, e);
fail:
  wsisa_csv_close(w, e);
  return rc;
}
