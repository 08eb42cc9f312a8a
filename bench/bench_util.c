/* Timing and reporting helpers shared by the experiments. */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <starpu.h>

#include "bench/bench.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

bench_stats bench_summarize(double *samples, int n) {
  bench_stats s = {0, 0, 0};
  if (n <= 0) return s;
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  s.min = samples[0];
  s.max = samples[n - 1];
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return s;
}

void bench_print_context(FILE *f) {
  struct utsname u;
  uname(&u);
  wsisa_machine m;
  wsisa_machine_read(&m);
  int major, minor, release;
  starpu_get_version(&major, &minor, &release);
  fprintf(f, "# machine: %s, %d cores (%d hardware threads), %.1f GiB, %s %s\n", m.cpu_model,
          m.cores, m.pus, (double)m.memory_total / 1073741824.0, u.sysname, u.release);
  fprintf(f, "# wsisa %s, StarPU %d.%d.%d", WSISA_VERSION, major, minor, release);
  if (wsisa_runtime_active())
    fprintf(f, ", scheduler %s, workers: %d CPU + %d OpenCL", wsisa_runtime_sched(),
            wsisa_runtime_ncpu(), wsisa_runtime_nopencl());
  fprintf(f, "\n");
}
