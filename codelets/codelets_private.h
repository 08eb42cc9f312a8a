/* Shared-internal helpers of the codelet files: OpenCL launch plumbing. */
#ifndef WSISA_CODELETS_PRIVATE_H
#define WSISA_CODELETS_PRIVATE_H

#include <stdlib.h>

#include "codelets/codelets.h"

/* What each codelet file exports to the registry. */
#define WSISA__OP_DECLARE(op)                               \
  extern struct starpu_codelet wsisa__##op##_codelet;        \
  extern struct starpu_opencl_program wsisa__##op##_program; \
  extern struct starpu_perfmodel wsisa__##op##_model;        \
  extern const char wsisa_cl_##op[]

/* Get kernel `name` of `program` for the calling OpenCL worker. A kernel that
 * cannot be loaded is a build defect, not a data condition: it aborts through
 * STARPU_OPENCL_REPORT_ERROR. */
void wsisa__cl_kernel(struct starpu_opencl_program *program, const char *name,
                      cl_kernel *kernel, cl_command_queue *queue);
/* Set argument *index (then advance it). */
void wsisa__cl_arg(cl_kernel kernel, cl_uint *index, size_t size, const void *value);
/* A matrix buffer as three arguments: (global pointer, byte offset, byte stride). */
void wsisa__cl_arg_matrix(cl_kernel kernel, cl_uint *index, void *buffer);
/* Append (width, height) of `buffer` as int arguments, run the kernel over that
 * 2-D range (rounded up to the work-group size) and wait for it. */
void wsisa__cl_run_image(cl_kernel kernel, cl_command_queue queue, cl_uint *index,
                         void *buffer);
/* Run over an explicit global size and wait. */
void wsisa__cl_run(cl_kernel kernel, cl_command_queue queue, cl_uint dims,
                   const size_t *global, const size_t *local);
void wsisa__cl_check(cl_int err, const char *what);

/* Insert a task honouring wsisa_codelets_where(); the variadic tail follows
 * starpu_task_insert and must end with 0. During a dry run
 * (wsisa_codelets_record) the task is built and recorded, never submitted. */
extern wsisa_codelets_recorder wsisa__recorder;
int wsisa__record(struct starpu_task *task);
#define WSISA__INSERT(codelet, ...)                                                      \
  (wsisa__recorder                                                                       \
       ? wsisa__record(starpu_task_build((codelet), STARPU_EXECUTE_WHERE,                \
                                         (unsigned long long)wsisa_codelets_where(),     \
                                         __VA_ARGS__))                                   \
       : starpu_task_insert((codelet), STARPU_EXECUTE_WHERE,                             \
                            (unsigned long long)wsisa_codelets_where(), __VA_ARGS__))

/* ---- pixel group: helpers of the normalization and per-pixel codelets ---- */
/* 0 when each h[i] is a matrix of h[0]'s width and height whose pixel is
 * elemsize[i] bytes; WSISA_EINTERNAL otherwise (a wiring mistake). */
int wsisa__check_matrices(int n, const starpu_data_handle_t *h, const size_t *elemsize);
/* 0 when h is a vector of n elements of elemsize bytes, else WSISA_EINTERNAL. */
int wsisa__check_vector(starpu_data_handle_t h, uint32_t n, size_t elemsize);
/* A vector buffer as two arguments: (global pointer, byte offset). */
void wsisa__cl_arg_vector(cl_kernel kernel, cl_uint *index, void *buffer);
/* A read-write device buffer on the calling OpenCL worker's context, filled
 * from `init` when it is not NULL (an empty one gets one byte); the caller
 * releases it (clReleaseMemObject). wsisa__cl_zeros: the same, zeroed. */
cl_mem wsisa__cl_buffer(size_t bytes, const void *init);
cl_mem wsisa__cl_zeros(size_t bytes);
/* The Reinhard constants (wsisa_reinhard, codelets/cpu/cpu.h) uploaded. */
cl_mem wsisa__cl_reinhard(void);
/* can_execute of codelets whose OpenCL kernels compute in double: a device
 * without cl_khr_fp64 builds their programs empty and is kept out. */
int wsisa__can_execute_fp64(unsigned workerid, struct starpu_task *task, unsigned nimpl);
/* 1 when `workerid` is not an OpenCL worker or its device lists `extension`. */
int wsisa__cl_worker_has(unsigned workerid, const char *extension);
/* Drop what wsisa__cl_worker_has learnt of the workers (StarPU is stopping). */
void wsisa__cl_worker_forget(void);
/* ---- objects: labelling, size filters, distance transform, watershed ---- */

/* The one-int "something changed" flag iterative kernels raise (a
 * wsisa__cl_buffer): reset, then read (both wait). */
void wsisa__cl_flag_reset(cl_command_queue queue, cl_mem flag, cl_int value);
cl_int wsisa__cl_flag_read(cl_command_queue queue, cl_mem flag);
/* Label equivalence on the calling OpenCL worker (codelets/label.c): a new
 * dense width x height int buffer in which every on pixel of `mask_buffer`
 * (every off pixel with `off`) holds the raster index + 1 of its component's
 * first pixel, 0 elsewhere. */
cl_mem wsisa__cl_label_roots(void *mask_buffer, int conn, int off);

/* A row-then-total reduction: kernel `rows` gets the matrices buffers[0..n-1],
 * a scratch buffer of `row_bytes` per image row, then (width, height), and runs
 * one work-item per row; kernel `total` gets (scratch, height, the vector
 * buffers[n]) and runs once. Integer reductions done this way are the same in
 * any order. */
void wsisa__cl_reduce_rows(struct starpu_opencl_program *program, const char *rows,
                           const char *total, void *buffers[], int n, size_t row_bytes);

#endif
