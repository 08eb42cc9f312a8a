/* The OpenCL plumbing of the codelets' OpenCL task functions: kernels, their
 * arguments and launches (launch.c), device buffers (buffer.c), the host
 * loops of reductions (loops.c), what a worker's device offers
 * (device.c). Shared-internal to codelets/; it knows nothing of the
 * operations and includes nothing of codelets/ outside this folder. The files
 * use each other one way: launch <- buffer <- loops; device stands alone. */
#ifndef WSISA_CODELETS_OCL_H
#define WSISA_CODELETS_OCL_H

#include <starpu.h>

/* ---- launch.c: kernels, arguments, launches ------------------------------ */

/* A failed OpenCL call is a defect, not a data condition: it aborts through
 * STARPU_OPENCL_REPORT_ERROR, naming `what`. */
void wsisa__cl_check(cl_int err, const char *what);
/* Get kernel `name` of `program` for the calling OpenCL worker. */
void wsisa__cl_kernel(struct starpu_opencl_program *program, const char *name,
                      cl_kernel *kernel, cl_command_queue *queue);
/* Set argument *index (then advance it). */
void wsisa__cl_arg(cl_kernel kernel, cl_uint *index, size_t size, const void *value);
/* A matrix buffer as three arguments: (global pointer, byte offset, byte stride). */
void wsisa__cl_arg_matrix(cl_kernel kernel, cl_uint *index, void *buffer);
/* A vector buffer as two arguments: (global pointer, byte offset). */
void wsisa__cl_arg_vector(cl_kernel kernel, cl_uint *index, void *buffer);
/* A matrix argument held apart from its StarPU buffer (a scratch image, or a
 * buffer's): device memory, byte offset, byte stride; as three arguments. */
typedef struct wsisa__cl_matrix {
  cl_mem mem;
  cl_uint offset, stride;
} wsisa__cl_matrix;
wsisa__cl_matrix wsisa__cl_matrix_of(void *buffer);
void wsisa__cl_arg_mat(cl_kernel kernel, cl_uint *index, wsisa__cl_matrix m);
/* Run over an explicit global size and wait. */
void wsisa__cl_run(cl_kernel kernel, cl_command_queue queue, cl_uint dims,
                   const size_t *global, const size_t *local);
/* At most `want` work-items of `kernel` in one work-group on the calling
 * OpenCL worker's device. */
size_t wsisa__cl_group_items(cl_kernel kernel, size_t want);
/* Append (width, height) of `buffer` as int arguments, run the kernel over that
 * 2-D range (rounded up to the work-group size) and wait for it. */
void wsisa__cl_run_image(cl_kernel kernel, cl_command_queue queue, cl_uint *index,
                         void *buffer);
/* One kernel `name` of `program` over the image of matrix buffer `shape`
 * (wsisa__cl_run_image), its arguments args[0..n-1] then width and height:
 * WSISA__CL_MAT(buffer) a matrix buffer (wsisa__cl_arg_matrix),
 * WSISA__CL_INT(v) an int, WSISA__CL_VAL(x) the bytes of the lvalue x. The
 * codelets call it as WSISA__CL_IMAGE (codelets/codelets_private.h). */
typedef struct wsisa__cl_value {
  void *matrix;
  size_t size;
  const void *value;
} wsisa__cl_value;
#define WSISA__CL_MAT(buffer) ((wsisa__cl_value){(buffer), 0, NULL})
#define WSISA__CL_INT(v) ((wsisa__cl_value){NULL, sizeof(cl_int), &(cl_int){(cl_int)(v)}})
#define WSISA__CL_VAL(x) ((wsisa__cl_value){NULL, sizeof(x), &(x)})
void wsisa__cl_image(struct starpu_opencl_program *program, const char *name, void *shape,
                     int n, const wsisa__cl_value *args);

/* ---- buffer.c: device buffers -------------------------------------------- */

/* A read-write device buffer on the calling OpenCL worker's context, filled
 * from `init` when it is not NULL (an upload of `bytes`; an empty one gets
 * one byte); the caller releases it (clReleaseMemObject). wsisa__cl_zeros:
 * the same, zeroed on the device by a fill (OpenCL 1.2), nothing uploaded;
 * it waits for the fill. */
cl_mem wsisa__cl_buffer(size_t bytes, const void *init);
cl_mem wsisa__cl_zeros(size_t bytes);
/* A packed width × height scratch image of elemsize-byte pixels. */
wsisa__cl_matrix wsisa__cl_scratch(int width, int height, size_t elemsize);
/* The one-int "something changed" flag iterative kernels raise (a
 * wsisa__cl_buffer), read (it waits). */
cl_int wsisa__cl_flag_read(cl_command_queue queue, cl_mem flag);

/* ---- loops.c: host loops over kernels ------------------------------------ */

/* A row-then-total reduction: kernel `rows` gets the matrices buffers[0..n-1],
 * a scratch buffer of `row_bytes` per image row, then (width, height), and runs
 * one work-item per row; kernel `total` gets (scratch, height, the vector
 * buffers[n]) and runs once. Integer reductions done this way are the same in
 * any order. */
void wsisa__cl_reduce_rows(struct starpu_opencl_program *program, const char *rows,
                           const char *total, void *buffers[], int n, size_t row_bytes);

/* ---- device.c: what a worker's device offers ----------------------------- */

/* 1 when `workerid` is not an OpenCL worker or its device lists `extension`. */
int wsisa__cl_worker_has(unsigned workerid, const char *extension);
/* Drop what wsisa__cl_worker_has learnt of the workers (StarPU is stopping). */
void wsisa__cl_worker_forget(void);
/* can_execute of codelets whose OpenCL kernels compute in double: a device
 * without cl_khr_fp64 builds their programs empty and is kept out. */
int wsisa__can_execute_fp64(unsigned workerid, struct starpu_task *task, unsigned nimpl);

#endif
