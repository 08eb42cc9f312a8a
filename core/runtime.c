/* StarPU start-up and shutdown in one place: the scheduler name is validated
 * (StarPU silently falls back to its default on a typo) and the caller's
 * OpenCL programs are loaded after init and unloaded before shutdown. */
#include <stdlib.h>
#include <string.h>

#include <starpu.h>

#include "core/core.h"
#include "core/core_private.h"

/* wsisa's own policies, on top of StarPU's predefined ones. */
static const char *const own_policies[] = {"pats"};

static int active;
static char sched_name[64];
/* the caller's OpenCL programs: loaded after init, unloaded before shutdown */
static void (*unload_programs)(void);

int wsisa_sched_valid(const char *name) {
  if (!name || !*name) return 0;
  for (size_t i = 0; i < sizeof own_policies / sizeof *own_policies; i++)
    if (strcmp(name, own_policies[i]) == 0) return 1;
  struct starpu_sched_policy **policies = starpu_sched_get_predefined_policies();
  for (; policies && *policies; policies++)
    if ((*policies)->policy_name && strcmp(name, (*policies)->policy_name) == 0)
      return 1;
  return 0;
}

const char *wsisa_sched_names(void) {
  static char names[1024];
  if (names[0]) return names;
  size_t n = 0;
  struct starpu_sched_policy **policies = starpu_sched_get_predefined_policies();
  for (; policies && *policies; policies++) {
    int w = snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
                     (*policies)->policy_name);
    if (w < 0 || (size_t)w >= sizeof names - n) break;
    n += (size_t)w;
  }
  for (size_t i = 0; i < sizeof own_policies / sizeof *own_policies; i++) {
    int w = snprintf(names + n, sizeof names - n, ", %s", own_policies[i]);
    if (w < 0 || (size_t)w >= sizeof names - n) break;
    n += (size_t)w;
  }
  return names;
}

void wsisa_runtime_default_home(void) {
  wsisa_env env;
  wsisa_env_read(&env);
  /* Calibrated models are kept in a wsisa-owned folder unless the user names
   * one; StarPU keys them by host and by worker architecture inside it. */
  if (env.starpu_home) return;
  const char *cache = env.cache_home, *home = env.home;
  char dir[4096];
  if (cache && *cache) snprintf(dir, sizeof dir, "%s/wsisa", cache);
  else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/wsisa", home);
  else dir[0] = '\0';
  if (dir[0]) setenv("STARPU_HOME", dir, 0);
}

int wsisa_runtime_init(const wsisa_runtime_opts *opts, wsisa_err *e) {
  if (active) return wsisa_error(e, WSISA_EINTERNAL, "StarPU is already running");
  wsisa_env env;
  wsisa_env_read(&env);
  const char *sched = opts && opts->sched ? opts->sched : env.sched;
  if (sched && !wsisa_sched_valid(sched))
    return wsisa_error(e, WSISA_EUSAGE, "STARPU_SCHED=%s: unknown scheduler (one of: %s)",
                       sched, wsisa_sched_names());

  wsisa_runtime_default_home();
  int rc = wsisa__runtime_models_check(e);
  if (rc) return rc;
  /* StarPU's own chatter (model recalibration notes) only when debugging */
  if (!wsisa_log_enabled(WSISA_LOG_DEBUG)) setenv("STARPU_SILENT", "1", 0);
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  if (sched && strcmp(sched, "pats") == 0) {
    /* starpu_conf_init took STARPU_SCHED=pats as a policy name it does not know */
    conf.sched_policy_name = NULL;
    conf.sched_policy = &wsisa__pats_policy;
    unsetenv("STARPU_SCHED");
  } else if (sched) {
    conf.sched_policy_name = sched;
  }
  if (opts && opts->ncpu >= 0) conf.ncpus = opts->ncpu;
  if (opts && opts->nopencl >= 0) conf.nopencl = opts->nopencl;
  /* seed 004's loop: every finished task feeds the performance database */
  if (opts && opts->calibrate && env.calibrate < 0) conf.calibrate = 1;
  if (opts && opts->calibrate == 2 && !env.history_max_error)
    setenv("STARPU_HISTORY_MAX_ERROR", "1000000000", 1);
  conf.ncuda = 0;
  int ret = starpu_init(&conf);
  if (ret == -ENODEV)
    return wsisa_error(e, WSISA_ERUNTIME, "StarPU found no worker to run on");
  if (ret != 0)
    return wsisa_error(e, WSISA_ERUNTIME, "StarPU failed to start (%s)", strerror(-ret));
  active = 1;
  snprintf(sched_name, sizeof sched_name, "%s", sched ? sched : "lws");
  if (starpu_opencl_worker_get_count() > 0 && opts && opts->load_programs) {
    if (opts->load_programs(e)) {
      wsisa_runtime_shutdown();
      return e && e->code ? e->code : WSISA_ERUNTIME;
    }
    unload_programs = opts->unload_programs;
  }
  wsisa_log(WSISA_LOG_INFO, "runtime", "StarPU up: scheduler %s, %u CPU, %u OpenCL workers",
            sched_name, starpu_cpu_worker_get_count(), starpu_opencl_worker_get_count());
  return 0;
}

void wsisa_runtime_shutdown(void) {
  if (!active) return;
  starpu_task_wait_for_all();
  if (unload_programs) unload_programs();
  unload_programs = NULL;
  starpu_shutdown();
  active = 0;
}

int wsisa_runtime_active(void) { return active; }
int wsisa_runtime_ncpu(void) { return active ? (int)starpu_cpu_worker_get_count() : 0; }
int wsisa_runtime_nopencl(void) {
  return active ? (int)starpu_opencl_worker_get_count() : 0;
}
const char *wsisa_runtime_sched(void) { return sched_name; }
