/* OpenCL plumbing shared by every codelet: kernels, arguments, launches, and
 * loading the registry's programs. */
#include <string.h>

#include "codelets/codelets_private.h"

void wsisa__cl_check(cl_int err, const char *what) {
  if (err != CL_SUCCESS) {
    fprintf(stderr, "wsisa: OpenCL failure in %s\n", what);
    STARPU_OPENCL_REPORT_ERROR(err);
  }
}

void wsisa__cl_kernel(struct starpu_opencl_program *program, const char *name,
                      cl_kernel *kernel, cl_command_queue *queue) {
  int devid = starpu_worker_get_devid(starpu_worker_get_id());
  cl_int err = starpu_opencl_load_kernel(kernel, queue, program, name, devid);
  wsisa__cl_check(err, name);
}

void wsisa__cl_arg(cl_kernel kernel, cl_uint *index, size_t size, const void *value) {
  wsisa__cl_check(clSetKernelArg(kernel, *index, size, value), "kernel argument");
  (*index)++;
}

void wsisa__cl_arg_matrix(cl_kernel kernel, cl_uint *index, void *buffer) {
  cl_mem mem = (cl_mem)STARPU_MATRIX_GET_DEV_HANDLE(buffer);
  cl_uint offset = (cl_uint)STARPU_MATRIX_GET_OFFSET(buffer);
  cl_uint stride =
      (cl_uint)(STARPU_MATRIX_GET_LD(buffer) * STARPU_MATRIX_GET_ELEMSIZE(buffer));
  wsisa__cl_arg(kernel, index, sizeof mem, &mem);
  wsisa__cl_arg(kernel, index, sizeof offset, &offset);
  wsisa__cl_arg(kernel, index, sizeof stride, &stride);
}

void wsisa__cl_run(cl_kernel kernel, cl_command_queue queue, cl_uint dims,
                   const size_t *global, const size_t *local) {
  cl_event ev;
  wsisa__cl_check(clEnqueueNDRangeKernel(queue, kernel, dims, NULL, global, local, 0,
                                         NULL, &ev),
                  "kernel launch");
  wsisa__cl_check(clWaitForEvents(1, &ev), "kernel wait");
  clReleaseEvent(ev);
}

void wsisa__cl_run_image(cl_kernel kernel, cl_command_queue queue, cl_uint *index,
                         void *buffer) {
  cl_int width = (cl_int)STARPU_MATRIX_GET_NX(buffer);
  cl_int height = (cl_int)STARPU_MATRIX_GET_NY(buffer);
  wsisa__cl_arg(kernel, index, sizeof width, &width);
  wsisa__cl_arg(kernel, index, sizeof height, &height);
  const size_t local[2] = {16, 16};
  const size_t global[2] = {((size_t)width + 15) / 16 * 16,
                            ((size_t)height + 15) / 16 * 16};
  wsisa__cl_run(kernel, queue, 2, global, local);
}

void wsisa__cl_image(struct starpu_opencl_program *program, const char *name, void *shape,
                     int n, const wsisa__cl_value *args) {
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(program, name, &kernel, &queue);
  cl_uint arg = 0;
  for (int i = 0; i < n; i++) {
    if (args[i].matrix) wsisa__cl_arg_matrix(kernel, &arg, args[i].matrix);
    else wsisa__cl_arg(kernel, &arg, args[i].size, args[i].value);
  }
  wsisa__cl_run_image(kernel, queue, &arg, shape);
  starpu_opencl_release_kernel(kernel);
}

void wsisa__cl_reduce_rows(struct starpu_opencl_program *program, const char *rows,
                           const char *total, void *buffers[], int n, size_t row_bytes) {
  cl_kernel rows_kernel, total_kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(program, rows, &rows_kernel, &queue);
  wsisa__cl_kernel(program, total, &total_kernel, &queue);
  cl_int width = (cl_int)STARPU_MATRIX_GET_NX(buffers[0]);
  cl_int height = (cl_int)STARPU_MATRIX_GET_NY(buffers[0]);
  cl_mem scratch = wsisa__cl_buffer((size_t)height * row_bytes, NULL);
  cl_uint arg = 0;
  for (int i = 0; i < n; i++) wsisa__cl_arg_matrix(rows_kernel, &arg, buffers[i]);
  wsisa__cl_arg(rows_kernel, &arg, sizeof scratch, &scratch);
  wsisa__cl_arg(rows_kernel, &arg, sizeof width, &width);
  wsisa__cl_arg(rows_kernel, &arg, sizeof height, &height);
  arg = 0;
  wsisa__cl_arg(total_kernel, &arg, sizeof scratch, &scratch);
  wsisa__cl_arg(total_kernel, &arg, sizeof height, &height);
  wsisa__cl_arg_vector(total_kernel, &arg, buffers[n]);
  const size_t row_range = (size_t)height, one = 1;
  wsisa__cl_run(rows_kernel, queue, 1, &row_range, NULL);
  wsisa__cl_run(total_kernel, queue, 1, &one, NULL);
  clReleaseMemObject(scratch);
  starpu_opencl_release_kernel(rows_kernel);
  starpu_opencl_release_kernel(total_kernel);
}

int wsisa_codelets_load_opencl(wsisa_err *e) {
  for (size_t i = 0; i < wsisa_n_ops; i++) {
    const wsisa_op *op = &wsisa_ops[i];
    if (!op->cl_source) continue;
    int ret = starpu_opencl_load_opencl_from_string(op->cl_source, op->program,
                                                    WSISA_CL_BUILD_OPTIONS);
    if (ret) {
      for (size_t j = 0; j < i; j++)
        if (wsisa_ops[j].cl_source) starpu_opencl_unload_opencl(wsisa_ops[j].program);
      return wsisa_error(e, WSISA_ERUNTIME,
                         "OpenCL program of operation '%s' failed to build", op->name);
    }
  }
  return 0;
}

void wsisa_codelets_unload_opencl(void) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (wsisa_ops[i].cl_source) starpu_opencl_unload_opencl(wsisa_ops[i].program);
  /* the next StarPU may number its workers differently */
  wsisa__cl_worker_forget();
}

int wsisa_codelets_start(const wsisa_runtime_opts *opts, wsisa_err *e) {
  wsisa_runtime_opts o = {NULL, -1, -1, NULL, NULL, 0};
  if (opts) o = *opts;
  o.load_programs = wsisa_codelets_load_opencl;
  o.unload_programs = wsisa_codelets_unload_opencl;
  return wsisa_runtime_init(&o, e);
}
