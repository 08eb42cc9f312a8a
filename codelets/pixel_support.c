/* Helpers shared by the normalization and per-pixel codelets: handle shape
 * checks at submit time, small device buffers, the fp64 device test. */
#include <string.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

int wsisa__check_matrices(int n, const starpu_data_handle_t *h, const size_t *elemsize) {
  for (int i = 0; i < n; i++) {
    if (!h[i] || starpu_data_get_interface_id(h[i]) != STARPU_MATRIX_INTERFACE_ID ||
        starpu_matrix_get_nx(h[i]) != starpu_matrix_get_nx(h[0]) ||
        starpu_matrix_get_ny(h[i]) != starpu_matrix_get_ny(h[0]) ||
        starpu_matrix_get_elemsize(h[i]) != elemsize[i])
      return WSISA_EINTERNAL;
  }
  return 0;
}

int wsisa__check_vector(starpu_data_handle_t h, uint32_t n, size_t elemsize) {
  if (!h || starpu_data_get_interface_id(h) != STARPU_VECTOR_INTERFACE_ID ||
      starpu_vector_get_nx(h) != n || starpu_vector_get_elemsize(h) != elemsize)
    return WSISA_EINTERNAL;
  return 0;
}

void wsisa__cl_arg_vector(cl_kernel kernel, cl_uint *index, void *buffer) {
  cl_mem mem = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffer);
  cl_uint offset = (cl_uint)STARPU_VECTOR_GET_OFFSET(buffer);
  wsisa__cl_arg(kernel, index, sizeof mem, &mem);
  wsisa__cl_arg(kernel, index, sizeof offset, &offset);
}

cl_mem wsisa__cl_reinhard(void) {
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  return wsisa__cl_buffer(sizeof k, &k);
}

int wsisa__cl_worker_has(unsigned workerid, const char *extension) {
  if (starpu_worker_get_type((int)workerid) != STARPU_OPENCL_WORKER) return 1;
  cl_device_id device;
  starpu_opencl_get_device(starpu_worker_get_devid((int)workerid), &device);
  char extensions[4096];
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof extensions, extensions, NULL) !=
      CL_SUCCESS)
    return 0;
  return strstr(extensions, extension) != NULL;
}

int wsisa__can_execute_fp64(unsigned workerid, struct starpu_task *task, unsigned nimpl) {
  (void)task;
  (void)nimpl;
  /* The same test as the kernels' #ifdef cl_khr_fp64. */
  return wsisa__cl_worker_has(workerid, "cl_khr_fp64");
}
