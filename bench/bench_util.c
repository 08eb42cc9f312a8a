/* Timing and reporting helpers shared by the experiments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <starpu.h>

#include "bench/bench.h"

bench_stats bench_summarize(const double *samples, int n) {
  bench_stats s = {0, 0, 0};
  if (n <= 0) return s;
  double *v = malloc((size_t)n * sizeof *v);
  if (!v) return (bench_stats){NAN, NAN, NAN};
  memcpy(v, samples, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, wsisa_compare_doubles);
  s.min = v[0];
  s.max = v[n - 1];
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  free(v);
  return s;
}

double bench_children_cpu(void) {
  struct rusage u;
  if (getrusage(RUSAGE_CHILDREN, &u)) return 0;
  return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
         (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
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
