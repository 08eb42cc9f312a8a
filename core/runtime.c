/* StarPU start-up and shutdown in one place: the scheduler name is validated
 * (StarPU silently falls back to its default on a typo), the caller's
 * OpenCL programs are loaded after init and unloaded before shutdown, and the
 * CPU workers started are weighed against those asked and the cores offered
 * (StarPU, kept silent, would not say why it started fewer). */
#define _GNU_SOURCE /* dladdr: which libstarpu this process runs */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starpu.h>

#include "core/core.h"
#include "core/core_private.h"

/* wsisa's own policies, on top of StarPU's predefined ones. */
static const char *const own_policies[] = {"pats"};

static int active;
static char sched_name[64];
static wsisa_sched_from sched_from = WSISA_SCHED_DEFAULT;
/* the caller's OpenCL programs: loaded after init, unloaded before shutdown */
static void (*unload_programs)(void);
static wsisa_runtime_cpus cpus;

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

int wsisa_sched_resolve(const char *setting, const char *where, const char *fallback,
                        wsisa_sched *out, wsisa_err *e) {
  wsisa_env env;
  wsisa_env_read(&env);
  if (setting) *out = (wsisa_sched){setting, WSISA_SCHED_SETTING};
  else if (env.sched) *out = (wsisa_sched){env.sched, WSISA_SCHED_ENV};
  else *out = (wsisa_sched){fallback, WSISA_SCHED_DEFAULT};
  if (!out->name || wsisa_sched_valid(out->name)) return 0;
  if (out->from == WSISA_SCHED_ENV)
    return wsisa_error(e, WSISA_EUSAGE, "STARPU_SCHED=%s: unknown scheduler (one of: %s)",
                       out->name, wsisa_sched_names());
  return wsisa_error(e, WSISA_EUSAGE, "%s%sexecution.scheduler: %s: unknown scheduler (one of: %s)",
                     where ? where : "", where ? ": " : "", out->name, wsisa_sched_names());
}

const char *wsisa_sched_from_name(wsisa_sched_from from) {
  return from == WSISA_SCHED_SETTING ? "execution.scheduler"
         : from == WSISA_SCHED_ENV   ? "STARPU_SCHED"
                                     : "default";
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
  char dir[WSISA_PATH_MAX];
  int rc = -1;
  if (cache && *cache)
    rc = wsisa_path_fmt(dir, "%s/wsisa", cache);
  else if (home && *home)
    rc = wsisa_path_fmt(dir, "%s/.cache/wsisa", home);
  else
    return;
  if (rc == 0)
    setenv("STARPU_HOME", dir, 0);
  else
    wsisa_log(WSISA_LOG_WARN, "runtime",
              "%s: path too long for the performance models' folder; StarPU keeps them in "
              "its own default (set STARPU_HOME)",
              cache && *cache ? "XDG_CACHE_HOME" : "HOME");
}

/* Where StarPU binds the CPU workers. StarPU 1.3 binds worker i to the
 * machine's i-th core whatever the process's affinity mask, so every process
 * on a node (mpirun ranks, taskset, a Slurm cpuset on the whole node) would
 * pile its workers onto the first cores: unless the user chose a binding,
 * a mask narrower than the machine gets the workers, bound round-robin to
 * its cores, and StarPU's default worker count counts its cores only. Under
 * mpirun with no mask, the workers stay unbound (ranks share the node).
 * Returns the binding's name for wsisa_runtime_cpus. */
static const char *bind_workers(struct starpu_conf *conf, const wsisa_env *env,
                                const wsisa_machine_pus *pus) {
  const char *v;
  if ((v = getenv("STARPU_WORKERS_NOBIND")) && atoi(v) > 0) return "none";
  if (getenv("STARPU_WORKERS_CPUID")) return "STARPU_WORKERS_CPUID";
  if (getenv("STARPU_WORKERS_GETBIND")) return "STARPU_WORKERS_GETBIND";
  if (env->starpu_binding) return "StarPU";
  if (pus->nmask > 0 && pus->nmask < pus->cores) {
    conf->use_explicit_workers_bindid = 1;
    for (int i = 0; i < STARPU_NMAXWORKERS; i++)
      conf->workers_bindid[i] = pus->mask[i % pus->nmask];
    /* StarPU's count without STARPU_NCPU: the machine's cores less one per
     * accelerator it drives, less those reserved */
    if (conf->ncpus < 0)
      conf->reserve_ncpus = (conf->reserve_ncpus > 0 ? conf->reserve_ncpus : 0) +
                            (pus->cores - pus->nmask);
    return "affinity mask";
  }
  if (env->mpi_world_size > 1) {
    setenv("STARPU_WORKERS_NOBIND", "1", 1);
    return "none";
  }
  return "StarPU";
}

/* The cores the CPU workers were bound to, in the OS's numbering. */
static void bound_read(wsisa_runtime_cpus *c, const wsisa_machine_pus *pus) {
  c->nbound = 0;
  if (strcmp(c->binding, "none") == 0) return;
  int ids[STARPU_NMAXWORKERS];
  int n = (int)starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, STARPU_NMAXWORKERS);
  for (int i = 0; i < n && c->nbound < WSISA_MACHINE_MAX_PUS; i++) {
    int id = starpu_worker_get_bindid(ids[i]);
    c->bound[c->nbound++] = id >= 0 && id < pus->pus ? pus->os[id] : -1;
  }
}

/* "CPU workers bound to cores 4,5,6,7 (affinity mask)", or "unbound". */
static void bound_text(const wsisa_runtime_cpus *c, char *buf, size_t cap) {
  if (!c->nbound) {
    snprintf(buf, cap, "CPU workers unbound (%s)", c->binding);
    return;
  }
  int n = snprintf(buf, cap, "CPU workers bound to cores ");
  for (int i = 0; i < c->nbound && n > 0 && (size_t)n < cap; i++)
    n += snprintf(buf + n, cap - (size_t)n, "%s%d", i ? "," : "", c->bound[i]);
  if (n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, " (%s)", c->binding);
}

int wsisa_runtime_env_check(const wsisa_env *env, wsisa_err *e) {
  if (env->malloc_keep < 0)
    return wsisa_error(e, WSISA_EUSAGE,
                       "WSISA_MALLOC=%s: unknown (keep: freed memory kept for reuse, the "
                       "default; libc: the C library's own handling)",
                       env->malloc);
  if (env->tile_affinity < 0)
    return wsisa_error(e, WSISA_EUSAGE,
                       "WSISA_TILE_AFFINITY=%s: unknown (on: a tile's units stay with the rank "
                       "that holds it, the default; off: another rank's next unit)",
                       env->tile_affinity_set);
  return 0;
}

int wsisa_runtime_init(const wsisa_runtime_opts *opts, wsisa_err *e) {
  if (active) return wsisa_error(e, WSISA_EINTERNAL, "StarPU is already running");
  wsisa_env env;
  wsisa_env_read(&env);
  wsisa_sched choice;
  int rc = 0;
  if (opts && opts->resolved) choice = *opts->resolved;
  else
    rc = wsisa_sched_resolve(opts ? opts->sched : NULL, NULL, opts ? opts->sched_default : NULL,
                             &choice, e);
  if (rc) return rc;
  const char *sched = choice.name;
  rc = wsisa_runtime_env_check(&env, e);
  if (rc) return rc;
  wsisa_runtime_default_home();
  rc = wsisa__runtime_models_check(e);
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
  /* starpu_conf_init has read the environment into conf already; StarPU
   * reads STARPU_NCPU, STARPU_NOPENCL, ... once more at starpu_init and,
   * unless told otherwise, lets them win over what the caller set: a worker
   * set asked for here (calibrate's one-CPU-worker probe) must hold under a
   * user's STARPU_NCPU=4 STARPU_NOPENCL=1 */
  if (opts && (opts->ncpu >= 0 || opts->nopencl >= 0))
    conf.precedence_over_environment_variables = 1;
  /* seed 004's loop: every finished task feeds the performance database */
  if (opts && opts->calibrate && env.calibrate < 0) conf.calibrate = 1;
  if (opts && opts->calibrate == 2 && !env.history_max_error)
    setenv("STARPU_HISTORY_MAX_ERROR", "1000000000", 1);
  conf.ncuda = 0;
  /* before StarPU binds any thread (the main one too, at an earlier start in
   * this process): the affinity mask this process was given */
  static wsisa_machine_cores cores;
  static wsisa_machine_pus pus;
  if (!cores.machine) wsisa_machine_cores_read(&cores), wsisa_machine_pus_read(&pus);
  memset(&cpus, 0, sizeof cpus);
  cpus.cores = cores;
  cpus.binding = bind_workers(&conf, &env, &pus);
  wsisa__malloc_keep(env.malloc_keep, env.malloc_user);
  if (opts && opts->keep_buffers) wsisa__buffers_keep(opts->keep_buffers);
  int ret = starpu_init(&conf);
  if (ret) wsisa__buffers_release();
  if (ret == -ENODEV)
    return wsisa_error(e, WSISA_ERUNTIME, "StarPU found no worker to run on");
  if (ret != 0)
    return wsisa_error(e, WSISA_ERUNTIME, "StarPU failed to start (%s)", strerror(-ret));
  active = 1;
  /* heteroprio puts each task in a bucket by its priority, and asserts that
   * every kind of worker of that bucket can run it: wsisa's tasks have no
   * priorities and some run on CPU workers only, so with both kinds StarPU
   * would abort at the first such push */
  if (sched && strcmp(sched, "heteroprio") == 0 && starpu_cpu_worker_get_count() > 0 &&
      starpu_opencl_worker_get_count() > 0) {
    wsisa_runtime_shutdown();
    return wsisa_error(e, WSISA_EUSAGE,
                       "STARPU_SCHED=heteroprio: not with CPU and OpenCL workers together (its "
                       "buckets need task priorities by kind of worker); use dmda, dmdas or "
                       "pats, or heteroprio with one kind of worker");
  }
  snprintf(sched_name, sizeof sched_name, "%s", sched ? sched : "lws");
  sched_from = choice.from;
  cpus.asked = opts && opts->ncpu >= 0 ? opts->ncpu : env.ncpu;
  cpus.started = (int)starpu_cpu_worker_get_count();
  cpus.opencl = (int)starpu_opencl_worker_get_count();
  cpus.maxcpus = STARPU_MAXCPUS;
  cpus.ranks_here = env.mpi_world_size > 1 && env.mpi_local_size > 1 ? env.mpi_local_size : 1;
  bound_read(&cpus, &pus);
  wsisa__runtime_cpus_explain(&cpus);
  /* under mpirun the job's rank 0 speaks for every rank: they start alike */
  if (cpus.warning[0] && env.mpi_rank <= 0) wsisa_log(WSISA_LOG_WARN, "runtime", "%s", cpus.warning);
  if (starpu_opencl_worker_get_count() > 0 && opts && opts->load_programs) {
    /* no task can run before the programs are built: the workers wait
     * asleep meanwhile, not polling beside the OpenCL compiler (a StarPU
     * other than scripts/starpu.sh's keeps one awake and polling otherwise,
     * even with blocking drivers) */
    starpu_pause();
    int failed = opts->load_programs(e);
    starpu_resume();
    if (failed) {
      wsisa_runtime_shutdown();
      return e && e->code ? e->code : WSISA_ERUNTIME;
    }
    unload_programs = opts->unload_programs;
  }
  char where[512];
  bound_text(&cpus, where, sizeof where);
  wsisa_log(WSISA_LOG_INFO, "runtime", "StarPU up: scheduler %s, %u CPU, %u OpenCL workers; %s",
            sched_name, starpu_cpu_worker_get_count(), starpu_opencl_worker_get_count(), where);
  return 0;
}

void wsisa_runtime_shutdown(void) {
  if (!active) return;
  starpu_task_wait_for_all();
  if (unload_programs) unload_programs();
  unload_programs = NULL;
  starpu_shutdown();
  wsisa__buffers_release();
  active = 0;
}

int wsisa_runtime_active(void) { return active; }
int wsisa_runtime_ncpu(void) { return active ? (int)starpu_cpu_worker_get_count() : 0; }
int wsisa_runtime_nopencl(void) {
  return active ? (int)starpu_opencl_worker_get_count() : 0;
}
const char *wsisa_runtime_sched(void) { return sched_name; }
const char *wsisa_runtime_sched_from(void) { return wsisa_sched_from_name(sched_from); }

int wsisa_runtime_bus_traffic(wsisa_bus_traffic *t) {
  memset(t, 0, sizeof *t);
  if (!active || !starpu_profiling_status_get()) return -1;
  for (int b = 0; b < starpu_bus_get_count(); b++) {
    struct starpu_profiling_bus_info info;
    if (starpu_bus_get_profiling_info(b, &info)) continue;
    const int to = starpu_node_get_kind((unsigned)starpu_bus_get_dst(b)) == STARPU_OPENCL_RAM;
    const int from = starpu_node_get_kind((unsigned)starpu_bus_get_src(b)) == STARPU_OPENCL_RAM;
    if (to == from) continue; /* device to device, or host to host */
    *(to ? &t->to_device_bytes : &t->from_device_bytes) += (uint64_t)info.transferred_bytes;
    *(to ? &t->to_device_transfers : &t->from_device_transfers) += (uint64_t)info.transfer_count;
  }
  return 0;
}

const wsisa_runtime_cpus *wsisa_runtime_cpus_started(void) { return &cpus; }

/* Several ranks of an mpirun on this node, each with this rank's workers:
 * the node's cores against theirs. A shortfall the user asked for (STARPU_NCPU
 * under the cores) is theirs to choose. */
static void explain_ranks(wsisa_runtime_cpus *c) {
  const wsisa_machine_cores *k = &c->cores;
  char *w = c->warning;
  const size_t cap = sizeof c->warning;
  const int r = c->ranks_here, workers = c->started + c->opencl, used = r * workers;
  const int share = k->machine / r > 1 ? k->machine / r : 1;
  char head[192];
  snprintf(head, sizeof head, "%d ranks on this node of %d cores, %d CPU worker%s each", r,
           k->machine, c->started, c->started == 1 ? "" : "s");
  /* asked, or StarPU's own count: a worker per core of the rank's mask */
  const int want = c->asked >= 0 ? c->asked : k->offered - c->opencl;
  if (c->started < want) {
    char why[160];
    if (c->started >= c->maxcpus)
      snprintf(why, sizeof why, "this StarPU was built with STARPU_MAXCPUS %d; rebuild StarPU "
               "with a higher --enable-maxcpus (maxcpus in scripts/starpu.sh)", c->maxcpus);
    else
      snprintf(why, sizeof why, "StarPU kept the other cores (STARPU_RESERVE_NCPU, driver "
               "threads)");
    snprintf(w, cap, "%s of the %d %s: %s, or run more ranks per node (mpirun --map-by "
             "ppr:N:node)", head, want, c->asked >= 0 ? "asked" : "cores each rank may use", why);
  } else if (c->asked < 0 && used < k->machine) {
    snprintf(w, cap,
             "%s use %d of the cores: each rank's affinity mask (mpirun's --bind-to and "
             "--map-by, a batch system's cpuset) allows %d; give each rank %d (mpirun "
             "--map-by ppr:%d:node:PE=%d --bind-to core, Slurm's --cpus-per-task=%d)",
             head, used, k->offered, share, r, share, share);
  } else if (c->asked < 0 && used > k->machine) {
    snprintf(w, cap,
             "%s run %d workers on %d cores: give each rank its own cores (mpirun --map-by "
             "ppr:%d:node:PE=%d --bind-to core) or STARPU_NCPU=%d (mpirun -x STARPU_NCPU)",
             head, used, k->machine, r, share, share);
  }
}

void wsisa__runtime_cpus_explain(wsisa_runtime_cpus *c) {
  const wsisa_machine_cores *k = &c->cores;
  char *w = c->warning;
  const size_t cap = sizeof c->warning;
  w[0] = '\0';
  if (c->ranks_here > 1) {
    explain_ranks(c);
    return;
  }
  /* asked: fewer than asked is the shortfall. Not asked: StarPU starts one
   * worker per core it sees, less one per accelerator it drives, so the
   * machine's cores are the yardstick. */
  int want = c->asked >= 0 ? c->asked : k->machine - c->opencl;
  if (c->started >= want) {
    /* enough CPU workers, but with the OpenCL workers beyond the cores: an
     * OpenCL worker's thread drives its device and waits on it, on a core */
    const int ask = k->offered - c->opencl > 0 ? k->offered - c->opencl : 1;
    if (c->opencl > 0 && c->started + c->opencl > k->offered)
      snprintf(w, cap,
               "%d CPU worker%s and %d OpenCL worker%s on %d cores: each OpenCL worker's "
               "thread needs a core of its own, so a core runs two workers; ask for %d CPU "
               "workers (STARPU_NCPU=%d, or leave STARPU_NCPU unset: StarPU leaves a core per "
               "device)",
               c->started, c->started == 1 ? "" : "s", c->opencl, c->opencl == 1 ? "" : "s",
               k->offered, ask, ask);
    return;
  }
  int n = c->asked >= 0
              ? snprintf(w, cap, "StarPU started %d CPU worker%s of the %d asked: ", c->started,
                         c->started == 1 ? "" : "s", c->asked)
              : snprintf(w, cap, "StarPU started %d CPU worker%s on a machine of %d cores: ",
                         c->started, c->started == 1 ? "" : "s", k->machine);
  if (n < 0 || (size_t)n >= cap) return;
  const char *ranks = "or run more processes, mpirun -np R wsisa run ..., each with its own workers";
  if (c->started >= c->maxcpus)
    snprintf(w + n, cap - (size_t)n,
             "this StarPU was built with STARPU_MAXCPUS %d; rebuild StarPU with a higher "
             "--enable-maxcpus (maxcpus in scripts/starpu.sh), %s",
             c->maxcpus, ranks);
  else if (c->asked < 0 && k->offered < k->machine && c->started >= k->offered - c->opencl)
    snprintf(w + n, cap - (size_t)n,
             strcmp(k->limit, "cgroup cpu.max") == 0
                 ? "this process's cgroup (cpu.max) grants %d of them; raise its CPU quota "
                   "(docker --cpus, systemd CPUQuota=), %s on other nodes"
                 : "this process's affinity mask (taskset, a cpuset) allows %d of them; widen "
                   "it, %s on the other cores",
             k->offered, ranks);
  else
    snprintf(w + n, cap - (size_t)n,
             "StarPU kept the other cores (STARPU_NCPU, STARPU_RESERVE_NCPU, driver threads); "
             "set STARPU_NCPU, %s",
             ranks);
}

int wsisa_runtime_blocking_drivers(void) {
#ifdef STARPU_NON_BLOCKING_DRIVERS
  return 0;
#else
  return 1;
#endif
}

int wsisa_runtime_last_worker_sleeps(void) {
#if defined(WSISA_STARPU_LAST_WORKER_SLEEPS) && !defined(STARPU_NON_BLOCKING_DRIVERS)
  return 1;
#else
  return 0;
#endif
}

void wsisa_runtime_version(int *major, int *minor, int *release) {
  starpu_get_version(major, minor, release);
}

void wsisa_runtime_describe(char *buf, size_t cap) {
  int major, minor, release;
  starpu_get_version(&major, &minor, &release);
  /* the library that holds starpu_get_version (a function's address as an
   * object pointer: ISO C has no cast for it, POSIX's dladdr needs one) */
  void (*fn)(int *, int *, int *) = starpu_get_version;
  void *addr;
  memcpy(&addr, &fn, sizeof addr);
  Dl_info info;
  const char *library = dladdr(addr, &info) && info.dli_fname
                            ? info.dli_fname
                            : "library unknown";
#ifdef STARPU_USE_MPI
  const char *mpi = "yes (starpumpi)";
#else
  const char *mpi = "no";
#endif
  snprintf(buf, cap,
           "StarPU %d.%d.%d (%s): STARPU_MAXCPUS %d, STARPU_MAXOPENCLDEVS %d, MPI %s, %s", major,
           minor, release, library, STARPU_MAXCPUS, STARPU_MAXOPENCLDEVS, mpi,
           !wsisa_runtime_blocking_drivers()
               ? "idle workers poll a core each (built without --enable-blocking-drivers)"
           : wsisa_runtime_last_worker_sleeps()
               ? "idle workers sleep (blocking drivers, the last awake one too)"
               : "idle workers sleep (blocking drivers) but the last awake one polls a core");
}
