/* Host loops over kernels: row-then-total reductions (ocl.h). */
#include "codelets/ocl/ocl.h"

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
