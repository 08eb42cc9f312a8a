/* The one place wsisa reads its environment, and finds the files installed
 * beside its executables. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  s = getenv("OMPI_COMM_WORLD_RANK");
  env->mpi_rank = s ? atoi(s) : -1;
  s = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  env->mpi_local_size = s ? atoi(s) : 0;
  s = getenv("WSISA_UNIT_TIMEOUT");
  env->unit_timeout = (s && *s) ? s : NULL;
  s = getenv("WSISA_MALLOC");
  env->malloc = (s && *s) ? s : NULL;
  env->malloc_keep = !env->malloc || strcmp(s, "keep") == 0 ? 1 : strcmp(s, "libc") == 0 ? 0 : -1;
  static const char *const vars[] = {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
                                     "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_", "MALLOC_ARENA_MAX"};
  s = getenv("GLIBC_TUNABLES");
  env->malloc_user = s && strstr(s, "glibc.malloc.") ? "GLIBC_TUNABLES" : NULL;
  for (size_t i = 0; i < sizeof vars / sizeof *vars && !env->malloc_user; i++)
    if (getenv(vars[i])) env->malloc_user = vars[i];
  env->starpu_binding = getenv("STARPU_WORKERS_CPUID") || getenv("STARPU_WORKERS_GETBIND") ||
                        getenv("STARPU_WORKERS_NOBIND");
  s = getenv("STARPU_CALIBRATE");
  env->calibrate = (s && *s) ? atoi(s) : -1;
  s = getenv("STARPU_CALIBRATE_MINIMUM");
  env->calibrate_minimum = (s && *s) ? atoi(s) : -1;
  env->history_max_error = getenv("STARPU_HISTORY_MAX_ERROR") != NULL;
  s = getenv("STARPU_NCPU");
  env->ncpu = (s && *s) ? atoi(s) : -1;
  env->tile_affinity_set = getenv("WSISA_TILE_AFFINITY");
  s = env->tile_affinity_set;
  env->tile_affinity = !s || !*s || strcmp(s, "on") == 0 ? 1 : strcmp(s, "off") == 0 ? 0 : -1;
}

int wsisa_exe_dir(char *buf, size_t cap) {
  char path[WSISA_PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return -1;
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  if (!slash) return -1;
  *slash = '\0';
  int w = snprintf(buf, cap, "%s", slash == path ? "/" : path);
  return w < 0 || (size_t)w >= cap ? -1 : 0;
}

int wsisa_data_file(const char *name, const char *fallback_dir, char *buf, size_t cap) {
  char dir[WSISA_PATH_MAX];
  /* installed: PREFIX/bin/wsisa and PREFIX/share/wsisa/NAME */
  if (wsisa_exe_dir(dir, sizeof dir) == 0) {
    int w = snprintf(buf, cap, "%s/../share/wsisa/%s", dir, name);
    if (w > 0 && (size_t)w < cap && access(buf, R_OK) == 0) return 0;
  }
  int w = snprintf(buf, cap, "%s/%s", fallback_dir, name);
  return w < 0 || (size_t)w >= cap ? -1 : 0;
}
