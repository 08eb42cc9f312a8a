/* core basics: the first error sticks, exit codes, images, scheduler names. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

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

/* The warning when StarPU starts fewer CPU workers than asked or than the
 * machine's cores: its cause and its way out, from the counts alone. */
static const char *explain(int asked, int started, int maxcpus, int opencl, int machine,
                           int affinity, int cgroup) {
  static wsisa_runtime_cpus c;
  memset(&c, 0, sizeof c);
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
}

Test(runtime, describes_the_starpu_in_use) {
  char text[4600];
  wsisa_runtime_describe(text, sizeof text);
  char limits[128];
  snprintf(limits, sizeof limits, "STARPU_MAXCPUS %d, STARPU_MAXOPENCLDEVS %d", STARPU_MAXCPUS,
           STARPU_MAXOPENCLDEVS);
  cr_expect(strncmp(text, "StarPU 1.3.", 11) == 0, "%s", text);
  cr_expect(strstr(text, "libstarpu-1.3.so") != NULL, "%s", text);
  cr_expect(strstr(text, limits) != NULL, "%s", text);
  cr_expect(strstr(text, "MPI ") != NULL, "%s", text);
}
