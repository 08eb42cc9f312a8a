/* Timing and reporting helpers shared by the experiments. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <starpu.h>

#include "bench/bench.h"

bench_stats bench_summarize(double *samples, int n) {
  bench_stats s = {0, 0, 0};
  if (n <= 0) return s;
  qsort(samples, (size_t)n, sizeof *samples, wsisa_compare_doubles);
  s.min = samples[0];
  s.max = samples[n - 1];
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
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
