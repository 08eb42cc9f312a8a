/* Helpers shared by the morphology codelets (see morph_common.h). */
#include "codelets/morph_common.h"

wsisa__cl_matrix wsisa__cl_matrix_of(void *buffer) {
  wsisa__cl_matrix m = {
      (cl_mem)STARPU_MATRIX_GET_DEV_HANDLE(buffer),
      (cl_uint)STARPU_MATRIX_GET_OFFSET(buffer),
      (cl_uint)(STARPU_MATRIX_GET_LD(buffer) * STARPU_MATRIX_GET_ELEMSIZE(buffer))};
  return m;
}

void wsisa__cl_arg_mat(cl_kernel kernel, cl_uint *index, wsisa__cl_matrix m) {
  wsisa__cl_arg(kernel, index, sizeof m.mem, &m.mem);
  wsisa__cl_arg(kernel, index, sizeof m.offset, &m.offset);
  wsisa__cl_arg(kernel, index, sizeof m.stride, &m.stride);
}

wsisa__cl_matrix wsisa__cl_scratch(int width, int height, size_t elemsize) {
  wsisa__cl_matrix m = {wsisa__cl_buffer((size_t)width * (size_t)height * elemsize, NULL),
                        0, (cl_uint)((size_t)width * elemsize)};
  return m;
}

void wsisa__cl_sweep(cl_command_queue queue, cl_kernel rows, cl_kernel cols,
                     cl_uint nargs, int width, int height) {
  cl_mem changed = wsisa__cl_buffer(sizeof(cl_int), NULL);
  cl_kernel kernels[2] = {rows, cols};
  for (int k = 0; k < 2; k++) {
    cl_uint arg = nargs;
    cl_int w = width, h = height;
    wsisa__cl_arg(kernels[k], &arg, sizeof changed, &changed);
    wsisa__cl_arg(kernels[k], &arg, sizeof w, &w);
    wsisa__cl_arg(kernels[k], &arg, sizeof h, &h);
  }
  const size_t lines[2] = {(size_t)height, (size_t)width};
  cl_int flag;
  do {
    flag = 0;
    wsisa__cl_check(clEnqueueWriteBuffer(queue, changed, CL_TRUE, 0, sizeof flag, &flag,
                                         0, NULL, NULL),
                    "changed flag reset");
    for (int k = 0; k < 2; k++) wsisa__cl_run(kernels[k], queue, 1, &lines[k], NULL);
    wsisa__cl_check(clEnqueueReadBuffer(queue, changed, CL_TRUE, 0, sizeof flag, &flag, 0,
                                        NULL, NULL),
                    "changed flag read");
  } while (flag);
  clReleaseMemObject(changed);
}
