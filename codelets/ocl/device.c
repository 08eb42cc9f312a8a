/* What a worker's device offers: its extensions, read once (ocl.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/ocl/ocl.h"

/* The schedulers ask can_execute for every task and worker: each OpenCL
 * worker's extension list is read from its device once. */
static char *worker_extensions[STARPU_NMAXWORKERS];
static pthread_mutex_t extensions_lock = PTHREAD_MUTEX_INITIALIZER;

int wsisa__cl_worker_has(unsigned workerid, const char *extension) {
  if (starpu_worker_get_type((int)workerid) != STARPU_OPENCL_WORKER) return 1;
  if (workerid >= STARPU_NMAXWORKERS) return 0;
  pthread_mutex_lock(&extensions_lock);
  char *list = worker_extensions[workerid];
  if (!list) {
    cl_device_id device;
    starpu_opencl_get_device(starpu_worker_get_devid((int)workerid), &device);
    size_t size = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) == CL_SUCCESS &&
        (list = calloc(1, size + 1)) &&
        clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, list, NULL) != CL_SUCCESS) {
      free(list);
      list = NULL;
    }
    worker_extensions[workerid] = list;
  }
  pthread_mutex_unlock(&extensions_lock);
  return list && strstr(list, extension) != NULL;
}

void wsisa__cl_worker_forget(void) {
  pthread_mutex_lock(&extensions_lock);
  for (size_t i = 0; i < STARPU_NMAXWORKERS; i++) {
    free(worker_extensions[i]);
    worker_extensions[i] = NULL;
  }
  pthread_mutex_unlock(&extensions_lock);
}

int wsisa__can_execute_fp64(unsigned workerid, struct starpu_task *task, unsigned nimpl) {
  (void)task;
  (void)nimpl;
  /* The same test as the kernels' #ifdef cl_khr_fp64. */
  return wsisa__cl_worker_has(workerid, "cl_khr_fp64");
}
