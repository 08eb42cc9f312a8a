/* wsisa-bench: the papers' experiments on this machine, as medians and ratios
 * measured in one run. Each experiment is a subcommand. */
#ifndef WSISA_BENCH_H
#define WSISA_BENCH_H

#include <stdio.h>

#include "core/core.h"

typedef struct bench_stats {
  double median, min, max;
} bench_stats;

/* Median, min and max of n samples (sorts them). */
bench_stats bench_summarize(double *samples, int n);
double bench_now(void);
/* The machine, StarPU version, scheduler and workers, printed with each table. */
void bench_print_context(FILE *f);

int bench_ops(int argc, char **argv, wsisa_err *e);

#endif
