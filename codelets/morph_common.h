/* Shared-internal helpers of the morphology codelets: a perf-model footprint
 * that tells apart tasks with different arguments, device scratch images and
 * the host loop of the sweep-until-stable kernels. */
#ifndef WSISA_CODELETS_MORPH_COMMON_H
#define WSISA_CODELETS_MORPH_COMMON_H

#include "codelets/codelets_private.h"

/* A matrix argument: buffer, byte offset, byte stride. */
typedef struct wsisa__cl_matrix {
  cl_mem mem;
  cl_uint offset, stride;
} wsisa__cl_matrix;

wsisa__cl_matrix wsisa__cl_matrix_of(void *buffer);
void wsisa__cl_arg_mat(cl_kernel kernel, cl_uint *index, wsisa__cl_matrix m);

/* A packed width × height scratch image of elemsize-byte pixels. */
wsisa__cl_matrix wsisa__cl_scratch(int width, int height, size_t elemsize);

/* Run `rows` (one work-item per row) and `cols` (one per column) in turn until
 * a round changes nothing. Both kernels have `nargs` arguments set already;
 * the changed flag, width and height are appended here. */
void wsisa__cl_sweep(cl_command_queue queue, cl_kernel rows, cl_kernel cols,
                     cl_uint nargs, int width, int height);

/* reconstruct.c's sweeps, shared with hmin, bin_reconstruct and fill_holes:
 * raise J in place under mask until stable (u8 or f32). */
void wsisa__cl_reconstruct_sweep(wsisa__cl_matrix mask, wsisa__cl_matrix J, int conn,
                                 int is_float, int width, int height);
#endif
