/* core: the image type, errors, logging, progress and the StarPU runtime.
 * Every other folder builds on this header; it compiles on its own. */
#ifndef WSISA_CORE_H
#define WSISA_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define WSISA_VERSION "0.1.0"

/* ---- errors ------------------------------------------------------------ */

/* A function that can fail returns 0 or one of these (negative). */
enum {
  WSISA_OK = 0,
  WSISA_EUSAGE = -1,   /* bad flag, parameter value or study field: exit 2 */
  WSISA_EIO = -2,      /* a file cannot be read or written: exit 1 */
  WSISA_EFORMAT = -3,  /* a file is not what it claims to be: exit 1 */
  WSISA_ENOMEM = -4,
  WSISA_ERUNTIME = -5, /* StarPU, OpenCL or MPI failed */
  WSISA_EINTERNAL = -6,
  WSISA_EINTERRUPTED = -7 /* stopped by SIGINT or SIGTERM: exit 128 + the signal */
};

/* An error context keeps the first error and its message; later errors are
 * ignored so the message names the root cause. */
typedef struct wsisa_err {
  int code;
  char msg[1024];
} wsisa_err;

#define WSISA_ERR_INIT {0, {0}}

/* Record an error (if none is recorded yet) and return `code`. `e` may be NULL. */
int wsisa_error(wsisa_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void wsisa_err_clear(wsisa_err *e);
/* Name where a relative `path` was looked for: a message of e's that starts
 * with it ("x.svs: No such file or directory") gets the folder it was
 * resolved from ("x.svs (from /home/u): No such file or directory").
 * Returns `code`. */
int wsisa_error_where(wsisa_err *e, int code, const char *path);
/* Process exit status for an error code: 2 for usage errors, 1 otherwise. */
int wsisa_exit_code(int code);
const char *wsisa_strerror(int code);

/* ---- paths (core/path.c) ------------------------------------------------ */

/* The size of every path buffer: Linux's PATH_MAX (4096 bytes with the NUL,
 * the longest path the kernel takes or getcwd and readlink give) plus 512
 * for what wsisa appends to a path it was given: a folder's and a file's
 * name (NAME_MAX, 255 bytes, each at most). A path that still does not fit
 * is refused, never cut. */
#define WSISA_PATH_MAX 4608
/* The size of a text that names a path and says something of it (a warning
 * kept to be logged later, where in a file a value was read, the StarPU
 * library in use): the path and a few lines of words. Not a path. */
#define WSISA_NOTE_MAX (WSISA_PATH_MAX + 1024)

/* Format a path into out; 0, or -1 with errno ENAMETOOLONG (out holds "")
 * when it does not fit. */
int wsisa_path_fmt(char out[WSISA_PATH_MAX], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same, recording a refusal in e as one line that names the path by its
 * first and last 300 bytes (the folder it was meant for, the file):
 * "START...END: path too long (N bytes, at most 4607)". Returns 0 or
 * WSISA_EUSAGE: the path is too long for the folder a user named, who can
 * name a shorter one (exit 2, as for a bad flag value). */
int wsisa_path_fmt_err(char out[WSISA_PATH_MAX], wsisa_err *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- logging ------------------------------------------------------------ */

typedef enum {
  WSISA_LOG_ERROR = 0,
  WSISA_LOG_WARN = 1,
  WSISA_LOG_INFO = 2,
  WSISA_LOG_DEBUG = 3
} wsisa_log_level;

/* Level from WSISA_LOG (error|warn|info|debug, default warn). Every line
 * starts with the local time (ISO 8601) and, under MPI, the rank. */
void wsisa_log(wsisa_log_level level, const char *domain, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int wsisa_log_enabled(wsisa_log_level level);
/* Progress of long work as an info line, shown at the default level too (only
 * WSISA_LOG=error hides it): it is what a batch job's log is read for. */
void wsisa_log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Under MPI every line carries the rank; -1 (the default) prints none. */
void wsisa_log_set_rank(int rank);

/* ---- images -------------------------------------------------------------- */

typedef enum { WSISA_U8 = 0, WSISA_U16, WSISA_I32, WSISA_F32 } wsisa_dtype;

/* A 2-D image of 1-4 interleaved channels. `stride` is in bytes. The struct is
 * a view: it may own its pixels (created by wsisa_image_new) or borrow them
 * (wrapped around a StarPU buffer, say). */
typedef struct wsisa_image {
  int width;
  int height;
  int channels;
  wsisa_dtype type;
  size_t stride;
  void *data;
  int owns_data;
} wsisa_image;

size_t wsisa_dtype_size(wsisa_dtype type);
const char *wsisa_dtype_name(wsisa_dtype type);
/* Allocate a zeroed image with a tightly packed row stride. */
int wsisa_image_new(int width, int height, int channels, wsisa_dtype type,
                    wsisa_image **out, wsisa_err *e);
/* Wrap borrowed memory; the view does not free it. */
wsisa_image wsisa_image_view(void *data, int width, int height, int channels,
                             wsisa_dtype type, size_t stride);
int wsisa_image_clone(const wsisa_image *src, wsisa_image **out, wsisa_err *e);
void wsisa_image_free(wsisa_image *img);
size_t wsisa_image_pixel_bytes(const wsisa_image *img);

/* splitmix64's finaliser: a cheap bijective mix for hash keys. */
static inline uint64_t wsisa_mix64(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static inline void *wsisa_image_row(const wsisa_image *img, int y) {
  return (char *)img->data + (size_t)y * img->stride;
}

/* ---- progress ------------------------------------------------------------ */

/* A bar with ETA when stderr is a terminal; a plain log line every few seconds
 * otherwise. Quiet when WSISA_LOG is error. */
/* Seconds on a monotonic clock: for durations, not dates. */
double wsisa_now(void);
/* Seconds on a clock (a thread's CPU clock: its work, whatever else runs). */
double wsisa_clock_seconds(clockid_t clock);
/* qsort's ascending order of doubles (the medians of timings and values). */
int wsisa_compare_doubles(const void *a, const void *b);
/* The median of v[0..n) (sorted in place; n > 0). */
double wsisa_median(double *v, size_t n);
/* An array p of *cap elements of `size` bytes with room for `need`: p, or
 * p moved (*cap doubled from `first` until it fits), or NULL with p and *cap
 * as they were (out of memory). */
void *wsisa_grow(void *p, size_t *cap, size_t need, size_t size, size_t first);

typedef struct wsisa_progress wsisa_progress;
wsisa_progress *wsisa_progress_start(const char *label, uint64_t total);
void wsisa_progress_advance(wsisa_progress *p, uint64_t done_increment);
/* `done` of the total were done before (a resume): counted, but the ETA
 * follows the pace of this process's own. */
void wsisa_progress_resume(wsisa_progress *p, uint64_t done);
void wsisa_progress_finish(wsisa_progress *p);

/* ---- configuration -------------------------------------------------------- */

/* Every environment variable wsisa reads, read once, here. */
typedef struct wsisa_env {
  const char *sched;        /* STARPU_SCHED, NULL when unset */
  const char *starpu_home;  /* STARPU_HOME */
  const char *log;          /* WSISA_LOG */
  int opencl_on_cpus;       /* STARPU_OPENCL_ON_CPUS=1 */
  const char *cache_home;   /* XDG_CACHE_HOME */
  const char *home;         /* HOME */
  int mpi_world_size;       /* OMPI_COMM_WORLD_SIZE: set by Open MPI's mpirun; 0 when unset */
  int mpi_rank;             /* OMPI_COMM_WORLD_RANK; -1 when unset */
  int mpi_local_size;       /* OMPI_COMM_WORLD_LOCAL_SIZE: the job's ranks on this node; 0 when unset */
  const char *unit_timeout; /* WSISA_UNIT_TIMEOUT: seconds, overrides --unit-timeout */
  int starpu_binding;       /* STARPU_WORKERS_CPUID, _GETBIND or _NOBIND is set */
  int calibrate;            /* STARPU_CALIBRATE; -1 when unset */
  int calibrate_minimum;    /* STARPU_CALIBRATE_MINIMUM; -1 when unset (StarPU: 10) */
  int history_max_error;    /* STARPU_HISTORY_MAX_ERROR is set */
  int ncpu;                 /* STARPU_NCPU; -1 when unset */
  const char *tile_affinity_set; /* WSISA_TILE_AFFINITY as set; NULL when unset */
  int tile_affinity;        /* under mpirun, a tile's units stay with its rank: 1 (on, the
                             * default), 0 (off), -1 (another value) */
  const char *malloc;       /* WSISA_MALLOC as set; NULL when unset */
  int malloc_keep;          /* 1: keep (the default), 0: libc, -1: another value */
  const char *malloc_user;  /* the variable that sets the C library's allocator
                             * (GLIBC_TUNABLES with glibc.malloc.*, MALLOC_*_); NULL: none */
} wsisa_env;

void wsisa_env_read(wsisa_env *env);

/* The folder of the running executable (from /proc/self/exe); -1 when unknown. */
int wsisa_exe_dir(char *buf, size_t cap);
/* A data file shipped with wsisa (the sample slide, test tiles): installed
 * beside the executable, EXE_DIR/../share/wsisa/NAME, when that is readable
 * (`cmake --install`), else FALLBACK_DIR/NAME (the source tree, for a build
 * run where it was built). -1 when the path does not fit. */
int wsisa_data_file(const char *name, const char *fallback_dir, char *buf, size_t cap);

/* The machine, read with hwloc (core/machine.c). */
typedef struct wsisa_machine {
  int cores, pus, numa_nodes;
  uint64_t memory_total;     /* installed, bytes */
  uint64_t memory_available; /* available now (MemAvailable), bytes */
  char cpu_model[128];
} wsisa_machine;

void wsisa_machine_read(wsisa_machine *m);

/* The cores this process may run on: the machine's cores (hwloc), those with
 * a CPU in the calling thread's affinity mask (taskset, a cgroup's cpuset;
 * read it before StarPU binds threads) and the CPUs its
 * cgroup's cpu.max quota grants, rounded up. `offered` is the smallest and
 * `limit` names it: "machine", "affinity mask" or "cgroup cpu.max". */
typedef struct wsisa_machine_cores {
  int machine, affinity;
  int cgroup; /* 0: no quota */
  int offered;
  const char *limit;
} wsisa_machine_cores;

void wsisa_machine_cores_read(wsisa_machine_cores *c);
/* The processing units as StarPU numbers them (hwloc's logical index, in a
 * topology of the PUs this process is allowed: a cgroup's cpuset narrows it,
 * an affinity mask does not) and the calling thread's affinity mask in those
 * numbers: one PU per core of the mask, the first of the core that the mask
 * holds. Read it before StarPU binds threads. */
#define WSISA_MACHINE_MAX_PUS 1024
typedef struct wsisa_machine_pus {
  int cores, pus;                      /* the topology's */
  int os[WSISA_MACHINE_MAX_PUS];       /* the OS index (taskset's) of each PU */
  int nmask;                           /* cores with a PU in the mask; 0: unknown */
  unsigned mask[WSISA_MACHINE_MAX_PUS]; /* the logical index of a PU of each */
} wsisa_machine_pus;

void wsisa_machine_pus_read(wsisa_machine_pus *p);
/* Bytes available now (MemAvailable of /proc/meminfo; 0 when unknown): cheap,
 * without hwloc. */
uint64_t wsisa_memory_available(void);
/* This process's resident set now, in bytes (0 when unknown). */
uint64_t wsisa_rss_now(void);
/* A size for a message, in the largest binary unit that keeps it at least 1
 * ("4 KiB", "512 MiB", "1.5 GiB", "7 bytes"): a limit of a few KiB must not
 * read "0.0 GiB". Returns buf. */
const char *wsisa_bytes_text(double bytes, char *buf, size_t cap);

/* ---- whole text files (core/textfile.c) ---------------------------------- */

/* Bounds on inputs read whole: a file over its bound is refused before it is
 * read (or as soon as one that grows while read passes it). */
#define WSISA_TEXT_MAX_STUDY ((uint64_t)16 << 20)
#define WSISA_TEXT_MAX_PARAMS ((uint64_t)1 << 20)
#define WSISA_TEXT_MAX_TABLE ((uint64_t)2 << 30)
#define WSISA_TEXT_MAX_GEOJSON ((uint64_t)1 << 30)

/* Inputs are regular files: a FIFO, socket, directory or device given as one
 * is refused with one line naming it and what it is ("p.fifo: a FIFO, not a
 * regular file") instead of an open or a read that blocks or never ends.
 * wsisa_file_check looks at the path (for libraries that open it
 * themselves); wsisa_file_open opens it for reading, never blocking on the
 * open, and checks what it opened (blocking reads after); wsisa_file_fopen
 * gives it as a stream. */
int wsisa_file_check(const char *path, wsisa_err *e);
int wsisa_file_open(const char *path, int *fd_out, wsisa_err *e);
int wsisa_file_fopen(const char *path, FILE **out, wsisa_err *e);

/* Read the text file at `path` whole, NUL-terminated, into a new *text
 * (freed by the caller). Refused, with one line naming the file: anything
 * but a regular file, more than `limit` bytes, a zero byte (not text; `what`
 * says what it should have been, e.g. "a study file"), and a read the stop
 * test set by wsisa_text_read_stop asks to end (WSISA_EINTERRUPTED). */
int wsisa_text_read(const char *path, uint64_t limit, const char *what, char **text,
                    size_t *len, wsisa_err *e);
/* The test a long read asks between blocks whether it should give up (a
 * signal's flag); NULL: none. */
void wsisa_text_read_stop(int (*stop)(void));
/* Whether that test asks to stop now (0 without one). */
int wsisa_text_read_stopped(void);

/* ---- StarPU runtime ------------------------------------------------------- */

/* Where a start's scheduling policy came from. */
typedef enum wsisa_sched_from {
  WSISA_SCHED_SETTING, /* the caller's: a study's execution.scheduler */
  WSISA_SCHED_ENV,     /* STARPU_SCHED */
  WSISA_SCHED_DEFAULT, /* the caller's default, else StarPU's (lws) */
} wsisa_sched_from;

/* A scheduling policy and where it came from. */
typedef struct wsisa_sched {
  const char *name; /* NULL: StarPU's default (lws) */
  wsisa_sched_from from;
} wsisa_sched;

/* The scheduling policy of a start, decided here only: `setting` (a study's
 * execution.scheduler; NULL: none), else STARPU_SCHED, else `fallback`
 * (NULL: StarPU's default). An unknown name is refused, naming where it came
 * from: "WHERE: execution.scheduler" (`where`, the study's path, may be
 * NULL) or STARPU_SCHED. */
int wsisa_sched_resolve(const char *setting, const char *where, const char *fallback,
                        wsisa_sched *out, wsisa_err *e);
/* "execution.scheduler", "STARPU_SCHED" or "default", as run.json records it. */
const char *wsisa_sched_from_name(wsisa_sched_from from);

typedef struct wsisa_runtime_opts {
  /* the policy asked for, resolved by wsisa_sched_resolve at start-up
     (NULL: STARPU_SCHED, else sched_default, else StarPU's default) */
  const char *sched;
  const char *sched_default;
  /* a policy resolved already (the runner's, checked before it writes
     anything): used as it is, sched and sched_default ignored */
  const wsisa_sched *resolved;
  int ncpu;            /* -1: StarPU's choice */
  int nopencl;         /* -1: StarPU's choice */
  /* OpenCL programs to load once StarPU runs (with OpenCL workers only) and
   * to unload before it stops; core knows no operation, so the layer that
   * owns them passes them in (codelets/: wsisa_codelets_start). */
  int (*load_programs)(wsisa_err *e);
  void (*unload_programs)(void);
  /* 1: measure every task into the performance models (StarPU's calibrate
   * flag) unless STARPU_CALIBRATE says otherwise; 2: the same, and keep
   * every sample (no STARPU_HISTORY_MAX_ERROR outlier rejection unless set:
   * a codelet whose time depends on its data, not only on its footprint,
   * would otherwise never gather its minimum); 0: StarPU's default */
  int calibrate;
  /* bytes of StarPU's freed buffers kept for the next allocation of the
   * same size until shutdown (0: none); a process that runs one tile's
   * graph (`wsisa segment`) allocates the same few sizes over and over */
  size_t keep_buffers;
} wsisa_runtime_opts;

/* Is `name` a StarPU policy or one of wsisa's own (pats)? */
int wsisa_sched_valid(const char *name);
/* Comma-separated list of the accepted names, for messages and --help. */
const char *wsisa_sched_names(void);

/* Set STARPU_HOME to wsisa's folder for the performance models
 * ($XDG_CACHE_HOME/wsisa or ~/.cache/wsisa) unless the user set it; StarPU
 * start-up does it too. */
void wsisa_runtime_default_home(void);
/* The environment the runtime reads (env, as wsisa_env_read gives it),
 * checked (WSISA_MALLOC); init checks it too, a command may ask before it
 * does any work. */
int wsisa_runtime_env_check(const wsisa_env *env, wsisa_err *e);
/* Start StarPU (validating the scheduler, which StarPU does not) and load the
 * OpenCL programs of opts. One call per process. */
int wsisa_runtime_init(const wsisa_runtime_opts *opts, wsisa_err *e);
/* Wait for every task, unload the OpenCL programs, then shut StarPU down. */
void wsisa_runtime_shutdown(void);
int wsisa_runtime_active(void);
/* Worker counts after init. */
int wsisa_runtime_ncpu(void);
int wsisa_runtime_nopencl(void);
const char *wsisa_runtime_sched(void);
/* Where it came from (wsisa_sched_from_name), after init. */
const char *wsisa_runtime_sched_from(void);

/* What crossed the bus between main memory and the OpenCL devices' memories
 * (StarPU's transfers for its handles) since StarPU started or since the
 * last call, by StarPU's bus profiling. */
typedef struct wsisa_bus_traffic {
  uint64_t to_device_bytes, from_device_bytes;
  uint64_t to_device_transfers, from_device_transfers;
} wsisa_bus_traffic;
/* 0 with *t filled; -1 (and *t zeroed) when StarPU's profiling is off
 * (STARPU_PROFILING=1 turns it on) or StarPU is not running. */
int wsisa_runtime_bus_traffic(wsisa_bus_traffic *t);

/* The CPU workers StarPU started against those asked and the cores offered,
 * read at start-up; `warning` says why it started fewer and what to do
 * (empty when it started what was asked, or every offered core). */
typedef struct wsisa_runtime_cpus {
  int asked;   /* the caller's count, else STARPU_NCPU; -1: StarPU's choice */
  int started; /* CPU workers */
  int maxcpus; /* STARPU_MAXCPUS of the StarPU wsisa is built against */
  int opencl;  /* OpenCL workers */
  /* the ranks of an mpirun on this node, each taken to start as many
   * workers as this one (1: one process) */
  int ranks_here;
  wsisa_machine_cores cores;
  /* where the CPU workers run: "affinity mask" (wsisa bound them to the
   * cores of a mask narrower than the machine), "StarPU" (StarPU's own
   * binding over the machine's cores), "STARPU_WORKERS_CPUID" or
   * "STARPU_WORKERS_GETBIND" (the user's), "none" (STARPU_WORKERS_NOBIND) */
  const char *binding;
  int nbound;                    /* CPU workers bound: bound[i] is worker i's core */
  int bound[WSISA_MACHINE_MAX_PUS]; /* OS index of the PU (taskset's numbering) */
  char warning[640];
} wsisa_runtime_cpus;

/* After wsisa_runtime_init: what it started (zeros before). */
const wsisa_runtime_cpus *wsisa_runtime_cpus_started(void);
/* The warning of `c` from its counts, into c->warning (shared-internal: the
 * runtime and its tests). */
void wsisa__runtime_cpus_explain(wsisa_runtime_cpus *c);
/* 1 when the StarPU wsisa is built against has blocking drivers (its
 * starpu_config.h leaves STARPU_NON_BLOCKING_DRIVERS undefined: an idle
 * worker sleeps); 0 when its idle workers poll their queues on a core. */
int wsisa_runtime_blocking_drivers(void);
/* 1 when, besides, the last awake worker of a context sleeps too (the StarPU
 * scripts/starpu.sh builds, patched: its starpu_config.h defines
 * WSISA_STARPU_LAST_WORKER_SLEEPS); 0 when StarPU keeps that one polling, so
 * a process of one worker polls whenever it has nothing to run. */
int wsisa_runtime_last_worker_sleeps(void);
/* "StarPU 1.3.10 (LIBRARY): STARPU_MAXCPUS 256, STARPU_MAXOPENCLDEVS 8, MPI
 * yes (starpumpi), idle workers sleep (blocking drivers, the last awake one
 * too)": the StarPU in use and the limits it was built with. */
void wsisa_runtime_describe(char *buf, size_t cap);
/* How the C library's allocator is set for this process, in words (set at
 * the first start: freed memory kept for reuse unless WSISA_MALLOC=libc or
 * the user's own GLIBC_TUNABLES / MALLOC_*_ setting); "" before. */
const char *wsisa_runtime_allocator(void);
/* The StarPU version in use (StarPU's starpu_get_version). */
void wsisa_runtime_version(int *major, int *minor, int *release);

#endif
