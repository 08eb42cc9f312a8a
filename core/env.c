/* The one place wsisa reads its environment. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

void wsisa_env_read(wsisa_env *env) {
  const char *s = getenv("STARPU_SCHED");
  env->sched = (s && *s) ? s : NULL;
  env->starpu_home = getenv("STARPU_HOME");
  env->log = getenv("WSISA_LOG");
  s = getenv("STARPU_OPENCL_ON_CPUS");
  env->opencl_on_cpus = s && strcmp(s, "1") == 0;
  env->cache_home = getenv("XDG_CACHE_HOME");
  env->home = getenv("HOME");
  s = getenv("OMPI_COMM_WORLD_SIZE");
  env->mpi_world_size = s ? atoi(s) : 0;
  s = getenv("WSISA_UNIT_TIMEOUT");
  env->unit_timeout = (s && *s) ? s : NULL;
  env->starpu_binding = getenv("STARPU_WORKERS_CPUID") || getenv("STARPU_WORKERS_GETBIND") ||
                        getenv("STARPU_WORKERS_NOBIND");
  s = getenv("STARPU_CALIBRATE");
  env->calibrate = (s && *s) ? atoi(s) : -1;
  s = getenv("STARPU_CALIBRATE_MINIMUM");
  env->calibrate_minimum = (s && *s) ? atoi(s) : -1;
  env->history_max_error = getenv("STARPU_HISTORY_MAX_ERROR") != NULL;
}
