/* Device buffers: scratch, uploads, zeroed, and the "changed" flag of the
 * iterative operations (ocl.h). */
/* clEnqueueFillBuffer is OpenCL 1.2's (StarPU's header asks for 1.0) */
#define CL_TARGET_OPENCL_VERSION 120
#include <stdlib.h>

#include "codelets/ocl/ocl.h"

cl_mem wsisa__cl_buffer(size_t bytes, const void *init) {
  cl_context context;
  starpu_opencl_get_context(starpu_worker_get_devid(starpu_worker_get_id()), &context);
  cl_int err;
  /* OpenCL refuses empty buffers: an empty one holds a byte nobody reads */
  cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE | (init && bytes ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 1, init && bytes ? (void *)init : NULL, &err);
  wsisa__cl_check(err, "buffer creation");
  return mem;
}

/* Zeroed on the device: nothing crosses the bus (a buffer filled from a
 * zeroed host copy sent its every byte). */
cl_mem wsisa__cl_zeros(size_t bytes) {
  cl_mem mem = wsisa__cl_buffer(bytes, NULL);
  cl_command_queue queue;
  starpu_opencl_get_current_queue(&queue);
  const cl_uchar zero = 0;
  cl_event ev;
  wsisa__cl_check(clEnqueueFillBuffer(queue, mem, &zero, sizeof zero, 0, bytes ? bytes : 1, 0,
                                      NULL, &ev),
                  "buffer fill");
  wsisa__cl_check(clWaitForEvents(1, &ev), "buffer fill wait");
  clReleaseEvent(ev);
  return mem;
}

wsisa__cl_matrix wsisa__cl_scratch(int width, int height, size_t elemsize) {
  wsisa__cl_matrix m = {wsisa__cl_buffer((size_t)width * (size_t)height * elemsize, NULL),
                        0, (cl_uint)((size_t)width * elemsize)};
  return m;
}

cl_int wsisa__cl_flag_read(cl_command_queue queue, cl_mem flag) {
  cl_int value;
  wsisa__cl_check(
      clEnqueueReadBuffer(queue, flag, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
      "flag read");
  return value;
}
