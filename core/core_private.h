/* Shared-internal pieces of core/. */
#ifndef WSISA_CORE_PRIVATE_H
#define WSISA_CORE_PRIVATE_H

#include <starpu.h>

#include "core/core.h"

/* The pats policy (core/sched_pats.c). */
extern struct starpu_sched_policy wsisa__pats_policy;
/* CPU time over accelerator time; NaN when either is unknown. */
double wsisa__pats_speedup(double cpu_time, double cl_time);
/* Before StarPU starts: a file where STARPU_HOME's folders should be is
 * refused, and a wsisa model file StarPU would assert on is renamed
 * NAME.damaged-<UTC time> with one warning (core/models.c). */
int wsisa__runtime_models_check(wsisa_err *e);
/* StarPU's buffers in main memory of 1 MiB and more kept when freed, up to
 * `limit` bytes, for the next allocation of the same size; released after
 * StarPU stopped (core/buffers.c). The allocation hooks stay: a block is
 * the C library's either way. */
void wsisa__buffers_keep(size_t limit);
void wsisa__buffers_release(void);
/* keep: the C library's allocator told, once per process, to keep freed
 * memory for reuse instead of handing it back to the kernel, unless the user
 * set it (user: the variable that does; core/buffers.c); 0: left as it is.
 * The first call decides; wsisa_runtime_allocator says what holds. */
void wsisa__malloc_keep(int keep, const char *user);

#endif
