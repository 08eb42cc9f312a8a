/* The pure CPU kernels: plain C on wsisa_image, no StarPU, testable alone.
 * Each returns 0 or a negative WSISA_E* code for a shape mismatch; they never
 * print and never allocate beyond what they document. */
#ifndef WSISA_CODELETS_CPU_H
#define WSISA_CODELETS_CPU_H

#include "core/core.h"

/* out(u8, 1ch) = 255 - in[channel]. */
int wsisa_cpu_invert(const wsisa_image *in, int channel, wsisa_image *out);

/* workflow glue: out = mask ? -dist : -FLT_MAX (f32). */
int wsisa_cpu_neg_dist(const wsisa_image *dist, const wsisa_image *mask, wsisa_image *out);

#endif
