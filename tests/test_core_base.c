/* core basics: the first error sticks, exit codes, images, scheduler names,
 * the workers' binding. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET: the test's own mask */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <starpu.h>

#include "core/core.h"
#include "tests/testutil.h"

Test(error, first_error_sticks) {
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_error(&e, WSISA_EIO, "first %d", 1), WSISA_EIO);
  cr_expect_eq(wsisa_error(&e, WSISA_EUSAGE, "second"), WSISA_EUSAGE);
  cr_expect_eq(e.code, WSISA_EIO);
  cr_expect_str_eq(e.msg, "first 1");
  cr_expect_eq(wsisa_exit_code(WSISA_EUSAGE), 2);
  cr_expect_eq(wsisa_exit_code(WSISA_EIO), 1);
  cr_expect_eq(wsisa_exit_code(WSISA_EFORMAT), 1);
  cr_expect_eq(wsisa_exit_code(0), 0);
}

Test(image, new_clone_view) {
  wsisa_image *a = NULL, *b = NULL;
  cr_assert_eq(wsisa_image_new(5, 3, 3, WSISA_U16, &a, NULL), 0);
  cr_expect_eq(a->stride, 30);
  ((uint16_t *)wsisa_image_row(a, 2))[14] = 777;
  cr_assert_eq(wsisa_image_clone(a, &b, NULL), 0);
  cr_expect_eq(((uint16_t *)wsisa_image_row(b, 2))[14], 777);
  cr_expect_eq(tu_image_diff(a, b), 0);
  ((uint16_t *)wsisa_image_row(b, 0))[0] = 1;
  cr_expect_eq(tu_image_diff(a, b), 1);
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_image *bad = NULL;
  cr_expect_neq(wsisa_image_new(0, 3, 1, WSISA_U8, &bad, &e), 0);
  cr_expect_null(bad);
  wsisa_image_free(a);
  wsisa_image_free(b);
}

Test(runtime, scheduler_names) {
  cr_expect(wsisa_sched_valid("dmda"));
  cr_expect(wsisa_sched_valid("eager"));
  cr_expect(wsisa_sched_valid("lws"));
  cr_expect(wsisa_sched_valid("pats"));
  cr_expect(!wsisa_sched_valid("dmdaa"));
  cr_expect(!wsisa_sched_valid(""));
  cr_expect(strstr(wsisa_sched_names(), "heft") != NULL);
}

Test(runtime, typo_in_scheduler_is_refused) {
  wsisa_runtime_opts opts = {.sched = "dmdaa", .ncpu = 1, .nopencl = 0};
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_runtime_init(&opts, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "dmdaa: unknown scheduler") != NULL, "%s", e.msg);
  cr_expect(!wsisa_runtime_active());
}

/* heteroprio with CPU and OpenCL workers together would abort at the first
 * CPU-only task (its buckets need priorities by kind of worker): refused in
 * one line, StarPU down again; with CPU workers alone it runs. */
Test(runtime, heteroprio_with_both_kinds_is_refused) {
  setenv("STARPU_OPENCL_ON_CPUS", "1", 1);
  wsisa_runtime_opts both = {.sched = "heteroprio", .ncpu = 1, .nopencl = 1};
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_runtime_init(&both, &e), WSISA_EUSAGE, "%s", e.msg);
  cr_expect(strstr(e.msg, "STARPU_SCHED=heteroprio: not with CPU and OpenCL workers together") !=
                NULL,
            "%s", e.msg);
  cr_expect(strstr(e.msg, "dmda, dmdas or pats") != NULL, "%s", e.msg);
  cr_expect(!wsisa_runtime_active());
  wsisa_runtime_opts cpu = {.sched = "heteroprio", .ncpu = 1, .nopencl = 0};
  wsisa_err e2 = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_runtime_init(&cpu, &e2), 0, "%s", e2.msg);
  cr_expect(wsisa_runtime_active());
  wsisa_runtime_shutdown();
}

/* keep_buffers: a block StarPU frees comes back to its next allocation of
 * the same size; another size gets a block of its own. */
Test(runtime, freed_buffers_kept) {
  const size_t mib = (size_t)1 << 20;
  wsisa_runtime_opts opts = {.ncpu = 1, .nopencl = 0, .keep_buffers = 3 * mib};
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_runtime_init(&opts, &e), 0, "%s", e.msg);
  void *a = NULL, *b = NULL, *c = NULL;
  cr_assert_eq(starpu_malloc_flags(&a, 2 * mib, 0), 0);
  memset(a, 1, 2 * mib);
  cr_assert_eq(starpu_free_flags(a, 2 * mib, 0), 0);
  cr_assert_eq(starpu_malloc_flags(&b, 2 * mib + 4096, 0), 0);
  cr_expect_neq(b, a);
  cr_assert_eq(starpu_malloc_flags(&c, 2 * mib, 0), 0);
  cr_expect_eq(c, a);
  memset(b, 2, 2 * mib + 4096);
  memset(c, 3, 2 * mib);
  starpu_free_flags(b, 2 * mib + 4096, 0);
  starpu_free_flags(c, 2 * mib, 0);
  wsisa_runtime_shutdown();
}

/* The warning when StarPU starts fewer CPU workers than asked or than the
 * machine's cores: its cause and its way out, from the counts alone. */
static const char *explain_here(int ranks, int asked, int started, int maxcpus, int opencl,
                                int machine, int affinity, int cgroup) {
  static wsisa_runtime_cpus c;
  memset(&c, 0, sizeof c);
  c.ranks_here = ranks;
  c.asked = asked;
  c.started = started;
  c.maxcpus = maxcpus;
  c.opencl = opencl;
  c.cores.machine = machine;
  c.cores.affinity = affinity;
  c.cores.cgroup = cgroup;
  c.cores.offered = machine;
  c.cores.limit = "machine";
  if (affinity < c.cores.offered) {
    c.cores.offered = affinity;
    c.cores.limit = "affinity mask";
  }
  if (cgroup && cgroup < c.cores.offered) {
    c.cores.offered = cgroup;
    c.cores.limit = "cgroup cpu.max";
  }
  wsisa__runtime_cpus_explain(&c);
  return c.warning;
}

static const char *explain(int asked, int started, int maxcpus, int opencl, int machine,
                           int affinity, int cgroup) {
  return explain_here(1, asked, started, maxcpus, opencl, machine, affinity, cgroup);
}

Test(runtime, fewer_cpu_workers_say_why) {
  /* Debian's StarPU on a 16-core node: STARPU_NCPU=16, 4 started */
  const char *w = explain(16, 4, 4, 0, 16, 16, 0);
  cr_expect(strstr(w, "started 4 CPU workers of the 16 asked") != NULL, "%s", w);
  cr_expect(strstr(w, "STARPU_MAXCPUS 4") != NULL, "%s", w);
  cr_expect(strstr(w, "--enable-maxcpus") != NULL && strstr(w, "mpirun") != NULL, "%s", w);
  /* the same StarPU left to its own choice */
  w = explain(-1, 4, 4, 0, 16, 16, 0);
  cr_expect(strstr(w, "on a machine of 16 cores") != NULL, "%s", w);
  cr_expect(strstr(w, "STARPU_MAXCPUS 4") != NULL, "%s", w);
  /* a cpuset of 4 cores on the 16: StarPU sees 4 */
  w = explain(-1, 4, 256, 0, 16, 4, 0);
  cr_expect(strstr(w, "affinity mask") != NULL && strstr(w, "allows 4") != NULL, "%s", w);
  cr_expect(strstr(w, "STARPU_MAXCPUS") == NULL, "%s", w);
  w = explain(-1, 2, 256, 0, 16, 16, 2);
  cr_expect(strstr(w, "cgroup (cpu.max) grants 2") != NULL, "%s", w);
  /* no warning: what was asked, beyond the cores too; every core; a core
   * left to drive an OpenCL device; fewer asked than the cores */
  cr_expect_str_empty(explain(16, 16, 256, 0, 2, 2, 0));
  cr_expect_str_empty(explain(-1, 16, 256, 0, 16, 16, 0));
  cr_expect_str_empty(explain(-1, 15, 256, 1, 16, 16, 0));
  cr_expect_str_empty(explain(1, 1, 256, 0, 16, 16, 0));
  /* a GPU's worker beside a CPU worker on every core: one core runs two */
  w = explain(16, 16, 256, 1, 16, 16, 0);
  cr_expect(strstr(w, "16 CPU workers and 1 OpenCL worker on 16 cores") != NULL, "%s", w);
  cr_expect(strstr(w, "STARPU_NCPU=15") != NULL, "%s", w);
  w = explain(4, 4, 256, 1, 16, 4, 0);
  cr_expect(strstr(w, "on 4 cores") != NULL && strstr(w, "STARPU_NCPU=3") != NULL, "%s", w);
  cr_expect_str_empty(explain(15, 15, 256, 1, 16, 16, 0));
}

/* Under mpirun with several ranks on the node, the node's cores against the
 * ranks times each one's workers. */
Test(runtime, ranks_on_a_node_are_counted_together) {
  /* mpirun -np 2 --bind-to core on 2 cores: one worker each, every core */
  cr_expect_str_empty(explain_here(2, -1, 1, 256, 0, 2, 1, 0));
  /* STARPU_NCPU=1 asked: the user's choice */
  cr_expect_str_empty(explain_here(4, 1, 1, 256, 0, 16, 16, 0));
  /* 4 ranks bound to a core each on 16 cores: 4 in use */
  const char *w = explain_here(4, -1, 1, 256, 0, 16, 1, 0);
  cr_expect(strstr(w, "4 ranks on this node of 16 cores, 1 CPU worker each use 4") != NULL, "%s",
            w);
  cr_expect(strstr(w, "ppr:4:node:PE=4") != NULL && strstr(w, "--cpus-per-task=4") != NULL,
            "%s", w);
  cr_expect(strstr(w, "more processes") == NULL, "%s", w);
  /* unbound ranks each starting a worker per core: 2 x 16 on 16 */
  w = explain_here(2, -1, 16, 256, 0, 16, 16, 0);
  cr_expect(strstr(w, "2 ranks on this node of 16 cores, 16 CPU workers each run 32 workers on "
                      "16 cores") != NULL,
            "%s", w);
  cr_expect(strstr(w, "STARPU_NCPU=8") != NULL, "%s", w);
  /* a capped StarPU: more ranks per node, not more processes */
  w = explain_here(2, 16, 4, 4, 0, 32, 32, 0);
  cr_expect(strstr(w, "4 CPU workers each of the 16 asked") != NULL, "%s", w);
  cr_expect(strstr(w, "STARPU_MAXCPUS 4") != NULL && strstr(w, "more ranks per node") != NULL,
            "%s", w);
  w = explain_here(2, -1, 4, 4, 0, 32, 32, 0);
  cr_expect(strstr(w, "of the 32 cores each rank may use: this StarPU was built with "
                      "STARPU_MAXCPUS 4") != NULL,
            "%s", w);
}

Test(runtime, describes_the_starpu_in_use) {
  char text[WSISA_NOTE_MAX];
  wsisa_runtime_describe(text, sizeof text);
  char limits[128];
  snprintf(limits, sizeof limits, "STARPU_MAXCPUS %d, STARPU_MAXOPENCLDEVS %d", STARPU_MAXCPUS,
           STARPU_MAXOPENCLDEVS);
  cr_expect(strncmp(text, "StarPU 1.3.", 11) == 0, "%s", text);
  cr_expect(strstr(text, "libstarpu-1.3.so") != NULL, "%s", text);
  cr_expect(strstr(text, limits) != NULL, "%s", text);
  cr_expect(strstr(text, "MPI ") != NULL, "%s", text);
  /* how an idle worker waits, from the headers built against */
#ifdef STARPU_NON_BLOCKING_DRIVERS
  cr_expect(strstr(text, ", idle workers poll a core each") != NULL, "%s", text);
  cr_expect_eq(wsisa_runtime_blocking_drivers(), 0);
  cr_expect_eq(wsisa_runtime_last_worker_sleeps(), 0);
#elif defined(WSISA_STARPU_LAST_WORKER_SLEEPS)
  cr_expect(strstr(text, ", idle workers sleep (blocking drivers, the last awake one too)") != NULL,
            "%s", text);
  cr_expect_eq(wsisa_runtime_blocking_drivers(), 1);
  cr_expect_eq(wsisa_runtime_last_worker_sleeps(), 1);
#else
  cr_expect(strstr(text, ", idle workers sleep (blocking drivers) but the last awake one polls") !=
                NULL,
            "%s", text);
  cr_expect_eq(wsisa_runtime_blocking_drivers(), 1);
  cr_expect_eq(wsisa_runtime_last_worker_sleeps(), 0);
#endif
}

/* A worker's thread: its CPU clock, to read from the main thread. */
static void record_clock(void *buffers[], void *arg) {
  (void)buffers;
  pthread_getcpuclockid(pthread_self(), (clockid_t *)arg);
}

static double thread_cpu_s(clockid_t c) {
  struct timespec t;
  cr_assert_eq(clock_gettime(c, &t), 0);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A process of one CPU worker (each rank of mpirun -np R with STARPU_NCPU=1):
 * with nothing to run, its worker sleeps, though it is the last one awake,
 * where StarPU unpatched keeps that one spinning on its core. */
Test(runtime, a_lone_idle_worker_sleeps) {
#if !defined(WSISA_STARPU_LAST_WORKER_SLEEPS) || defined(STARPU_NON_BLOCKING_DRIVERS)
  cr_skip_test("this StarPU keeps its last awake worker polling (not scripts/starpu.sh's)");
#else
  unsetenv("STARPU_NCPU");
  wsisa_runtime_opts opts = {.ncpu = 1, .nopencl = 0};
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_runtime_init(&opts, &e), 0, "%s", e.msg);
  cr_assert_eq(wsisa_runtime_ncpu(), 1);
  static struct starpu_codelet cl = {.cpu_funcs = {record_clock}, .nbuffers = 0};
  clockid_t worker;
  struct starpu_task *t = starpu_task_create();
  t->cl = &cl;
  t->cl_arg = &worker;
  t->synchronous = 1;
  cr_assert_eq(starpu_task_submit(t), 0);
  const double before = thread_cpu_s(worker);
  nanosleep(&(struct timespec){0, 500000000}, NULL);
  const double idle = thread_cpu_s(worker) - before;
  wsisa_runtime_shutdown();
  cr_expect_lt(idle, 0.1, "the idle worker used %.3f CPU-s in 0.5 s", idle);
#endif
}

/* Where a worker runs: its thread's affinity mask, as the kernel has it. */
static void record_mask(void *buffers[], void *arg) {
  (void)buffers;
  cpu_set_t *set = arg;
  CPU_ZERO(set);
  sched_getaffinity(0, sizeof *set, set);
}

/* A process bound to one core (taskset -c 1, an mpirun rank) starts one CPU
 * worker by default and binds it there, not on core 0 where StarPU 1.3 puts
 * its first worker whatever the mask; asked more, they all share that core. */
Test(runtime, workers_bound_to_the_affinity_mask) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) cr_skip_test("one CPU: no narrower mask");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(1, &one);
  cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
  unsetenv("STARPU_NCPU");
  unsetenv("STARPU_WORKERS_CPUID");
  unsetenv("STARPU_WORKERS_NOBIND");
  unsetenv("STARPU_WORKERS_GETBIND");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  for (int asked = -1; asked <= 3; asked += 4) {
    wsisa_runtime_opts opts = {.ncpu = asked, .nopencl = 0};
    wsisa_err e = WSISA_ERR_INIT;
    cr_assert_eq(wsisa_runtime_init(&opts, &e), 0, "%s", e.msg);
    const wsisa_runtime_cpus *c = wsisa_runtime_cpus_started();
    int n = asked < 0 ? 1 : asked;
    cr_expect_eq(c->started, n);
    cr_expect_str_eq(c->binding, "affinity mask");
    cr_expect_eq(c->nbound, n);
    for (int i = 0; i < c->nbound; i++) cr_expect_eq(c->bound[i], 1, "worker %d on %d", i, c->bound[i]);
    /* each worker's thread, as the kernel binds it */
    static struct starpu_codelet cl = {.cpu_funcs = {record_mask}, .nbuffers = 0};
    for (int w = 0; w < n; w++) {
      cpu_set_t seen;
      struct starpu_task *t = starpu_task_create();
      t->cl = &cl;
      t->cl_arg = &seen;
      t->synchronous = 1;
      t->execute_on_a_specific_worker = 1;
      t->workerid = (unsigned)starpu_worker_get_by_type(STARPU_CPU_WORKER, w);
      cr_assert_eq(starpu_task_submit(t), 0);
      cr_expect(CPU_COUNT(&seen) == 1 && CPU_ISSET(1, &seen), "worker %d: %d CPUs in its mask", w,
                CPU_COUNT(&seen));
    }
    wsisa_runtime_shutdown();
  }
}
