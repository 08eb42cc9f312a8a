/* OpenCL scratch buffers and the "changed" flag of the iterative operations
 * (labelling, area filter, distance transform, watershed). */
#include "codelets/codelets_private.h"

cl_mem wsisa__cl_buffer_new(size_t bytes) {
  cl_context context;
  starpu_opencl_get_context(starpu_worker_get_devid(starpu_worker_get_id()), &context);
  cl_int err;
  cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &err);
  wsisa__cl_check(err, "scratch buffer");
  return mem;
}

void wsisa__cl_flag_reset(cl_command_queue queue, cl_mem flag, cl_int value) {
  wsisa__cl_check(
      clEnqueueWriteBuffer(queue, flag, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
      "flag reset");
}

cl_int wsisa__cl_flag_read(cl_command_queue queue, cl_mem flag) {
  cl_int value;
  wsisa__cl_check(
      clEnqueueReadBuffer(queue, flag, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
      "flag read");
  return value;
}
