/* Kernels, their arguments and launches (ocl.h). */
#include <stdio.h>

#include "codelets/ocl/ocl.h"

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

void wsisa__cl_arg_vector(cl_kernel kernel, cl_uint *index, void *buffer) {
  cl_mem mem = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffer);
  cl_uint offset = (cl_uint)STARPU_VECTOR_GET_OFFSET(buffer);
  wsisa__cl_arg(kernel, index, sizeof mem, &mem);
  wsisa__cl_arg(kernel, index, sizeof offset, &offset);
}

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

void wsisa__cl_arg_matrix(cl_kernel kernel, cl_uint *index, void *buffer) {
  wsisa__cl_arg_mat(kernel, index, wsisa__cl_matrix_of(buffer));
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

size_t wsisa__cl_group_items(cl_kernel kernel, size_t want) {
  cl_device_id device;
  starpu_opencl_get_device(starpu_worker_get_devid(starpu_worker_get_id()), &device);
  size_t most;
  wsisa__cl_check(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE,
                                           sizeof most, &most, NULL),
                  "work-group size");
  return most < want ? most : want;
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
