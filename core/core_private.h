/* Shared-internal pieces of core/. */
#ifndef WSISA_CORE_PRIVATE_H
#define WSISA_CORE_PRIVATE_H

#include <starpu.h>

#include "core/core.h"

/* The pats policy (core/sched_pats.c). */
extern struct starpu_sched_policy wsisa__pats_policy;
/* CPU time over accelerator time; NaN when either is unknown. */
double wsisa__pats_speedup(double cpu_time, double cl_time);

#endif
