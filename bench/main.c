/* wsisa-bench: a table of experiments; each writes CSV, an SVG plot and a
 * short text summary. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

typedef struct experiment {
  const char *name;
  int (*run)(int argc, char **argv, wsisa_err *e);
  const char *what;
} experiment;

static const experiment experiments[] = {
    {"ops", bench_ops,
     "per-operation times on a 4096x4096 tile: CPU kernel (1 core), OpenCL worker, OpenCV "
     "and scikit-image peers; whole-workflow time"},
};
#define NEXPERIMENTS (sizeof experiments / sizeof *experiments)

static void usage(FILE *f) {
  fprintf(f, "usage: wsisa-bench EXPERIMENT [--quick] [--repeats N] [-o DIR]\n\nexperiments:\n");
  for (size_t i = 0; i < NEXPERIMENTS; i++)
    fprintf(f, "  %-8s %s\n", experiments[i].name, experiments[i].what);
  fprintf(f,
          "\nEvery figure is the median of --repeats runs (min and max shown); ratios are\n"
          "measured in the same run. CSV columns of `ops`: op, ours_cpu_ms, ours_cpu_min,\n"
          "ours_cpu_max, ours_opencl_ms, peer, peer_ms, peer_min, peer_max, peer_over_ours.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < NEXPERIMENTS; i++) {
    if (strcmp(argv[1], experiments[i].name) != 0) continue;
    wsisa_err e = WSISA_ERR_INIT;
    int rc = experiments[i].run(argc - 1, argv + 1, &e);
    if (rc) fprintf(stderr, "wsisa-bench %s: %s\n", argv[1], e.msg[0] ? e.msg : wsisa_strerror(rc));
    return wsisa_exit_code(rc);
  }
  fprintf(stderr, "wsisa-bench: '%s' is not an experiment (see wsisa-bench --help)\n", argv[1]);
  return 2;
}
