/* libwsisa-clcount: counts what a process asks of OpenCL, kernel by kernel.
 *
 * Loaded with LD_PRELOAD in front of the OpenCL library (ocl-icd or a vendor's),
 * it passes every call on unchanged and counts, per kernel name, the
 * clEnqueueNDRangeKernel launches, the transfers back to the host
 * (clEnqueueReadBuffer, clEnqueueReadBufferRect, clEnqueueMapBuffer for
 * reading) and the transfers from the host to the device
 * (clEnqueueWriteBuffer, clEnqueueWriteBufferRect, clEnqueueMapBuffer for
 * writing, clCreateBuffer filled from host memory), with their bytes, each
 * charged to the kernel the calling thread launched last ("-" before any).
 * StarPU's own transfers between main memory and an OpenCL device go through
 * the same calls, so they are counted too. Blocking and non-blocking reads
 * are counted apart: a blocking read is a host round trip the caller waits
 * on.
 *
 * At exit it writes one CSV line per kernel to the file named by
 * WSISA_CLCOUNT (stderr when unset):
 *   kernel,launches,reads,blocking_reads,read_bytes,writes,write_bytes
 * and a line "total,...", then "live,buffers=N,kernels=N,programs=N": the OpenCL
 * memory objects, kernels and programs created or retained and not released
 * by then (0 when the process released all it made). With
 * WSISA_CLCOUNT_TIME=1 it also times each
 * launch: it waits for the queue to finish after the launch (clFinish) and
 * adds two columns, kernel_ms (the wall time from the launch to that finish,
 * summed) and max_ms (the longest one). wsisa's codelets wait on each kernel
 * before they go on, so the wait adds no serialization they do not have; what
 * was queued before the launch on the same queue is charged to it too.
 * wsisa-bench ops and the tests read the file. Only the
 * process that loaded it writes, and only if it asked OpenCL for anything the
 * library counts: a child forked by the OpenCL library (or by anything else)
 * inherits the preload, and so do the programs around the one measured (a
 * `timeout` in front of it, the linker PoCL runs to build a kernel); their
 * exits would otherwise replace the table with their own, empty one.
 *
 * A process it is loaded into may also ask for the running totals, looking
 * wsisa_clcount_totals and wsisa_clcount_bytes up with dlsym(RTLD_DEFAULT,
 * ...): wsisa-bench ops counts each operation that way. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define CLCOUNT_MAX 256

typedef struct {
  char name[64];
  unsigned long launches, reads, blocking_reads, writes;
  unsigned long long read_bytes, write_bytes;
  unsigned long long ns, max_ns; /* launch to finish, WSISA_CLCOUNT_TIME=1 */
} clcount_row;

static clcount_row rows[CLCOUNT_MAX];
static int nrows;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int last_row = -1;
static pid_t owner; /* the process the library was loaded into */
static int timed;   /* WSISA_CLCOUNT_TIME=1: each launch waited on and timed */

__attribute__((constructor)) static void clcount_start(void) {
  owner = getpid();
  const char *t = getenv("WSISA_CLCOUNT_TIME");
  timed = t && strcmp(t, "1") == 0;
}

static unsigned long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* the next definition of a symbol (the OpenCL library's), stored through the object
 * pointer view of a function pointer, as POSIX's dlsym asks */
static void next_symbol(void *fp, const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "libwsisa-clcount: %s not found in the OpenCL library\n", name);
    abort();
  }
  memcpy(fp, &f, sizeof f);
}

/* the row of a kernel name, added on first sight; lock held */
static int row_of(const char *name) {
  for (int i = 0; i < nrows; i++)
    if (strcmp(rows[i].name, name) == 0) return i;
  if (nrows == CLCOUNT_MAX) return CLCOUNT_MAX - 1; /* the last row takes the overflow */
  snprintf(rows[nrows].name, sizeof rows[nrows].name, "%s", name);
  return nrows++;
}

static void count_read(int blocking, size_t bytes) {
  pthread_mutex_lock(&lock);
  int r = last_row >= 0 ? last_row : row_of("-");
  rows[r].reads++;
  rows[r].blocking_reads += blocking != 0;
  rows[r].read_bytes += bytes;
  pthread_mutex_unlock(&lock);
}

static void count_write(size_t bytes) {
  pthread_mutex_lock(&lock);
  int r = last_row >= 0 ? last_row : row_of("-");
  rows[r].writes++;
  rows[r].write_bytes += bytes;
  pthread_mutex_unlock(&lock);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                              const size_t *gws, const size_t *lws, cl_uint nw,
                              const cl_event *wl, cl_event *ev) {
  static cl_int (*next)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                        const size_t *, cl_uint, const cl_event *, cl_event *);
  static cl_int (*info)(cl_kernel, cl_kernel_info, size_t, void *, size_t *);
  static cl_int (*finish)(cl_command_queue);
  if (!next) {
    next_symbol(&next, "clEnqueueNDRangeKernel");
    next_symbol(&info, "clGetKernelInfo");
    next_symbol(&finish, "clFinish");
  }
  char name[64] = "?";
  if (info(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) != CL_SUCCESS) strcpy(name, "?");
  pthread_mutex_lock(&lock);
  last_row = row_of(name);
  const int row = last_row;
  rows[row].launches++;
  pthread_mutex_unlock(&lock);
  if (!timed) return next(q, k, dim, off, gws, lws, nw, wl, ev);
  const unsigned long long t0 = now_ns();
  cl_int rc = next(q, k, dim, off, gws, lws, nw, wl, ev);
  if (rc == CL_SUCCESS) finish(q);
  const unsigned long long dt = now_ns() - t0;
  pthread_mutex_lock(&lock);
  rows[row].ns += dt;
  if (dt > rows[row].max_ns) rows[row].max_ns = dt;
  pthread_mutex_unlock(&lock);
  return rc;
}

cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t n,
                           void *p, cl_uint nw, const cl_event *wl, cl_event *ev) {
  static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                        const cl_event *, cl_event *);
  if (!next) next_symbol(&next, "clEnqueueReadBuffer");
  count_read(blocking, n);
  return next(q, b, blocking, off, n, p, nw, wl, ev);
}

cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *bo,
                               const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                               size_t hrp, size_t hsp, void *p, cl_uint nw, const cl_event *wl,
                               cl_event *ev) {
  static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                        const size_t *, size_t, size_t, size_t, size_t, void *, cl_uint,
                        const cl_event *, cl_event *);
  if (!next) next_symbol(&next, "clEnqueueReadBufferRect");
  count_read(blocking, region[0] * region[1] * region[2]);
  return next(q, b, blocking, bo, ho, region, brp, bsp, hrp, hsp, p, nw, wl, ev);
}

cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t off,
                            size_t n, const void *p, cl_uint nw, const cl_event *wl,
                            cl_event *ev) {
  static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                        const cl_event *, cl_event *);
  if (!next) next_symbol(&next, "clEnqueueWriteBuffer");
  count_write(n);
  return next(q, b, blocking, off, n, p, nw, wl, ev);
}

cl_int clEnqueueWriteBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *bo,
                                const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                                size_t hrp, size_t hsp, const void *p, cl_uint nw,
                                const cl_event *wl, cl_event *ev) {
  static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                        const size_t *, size_t, size_t, size_t, size_t, const void *, cl_uint,
                        const cl_event *, cl_event *);
  if (!next) next_symbol(&next, "clEnqueueWriteBufferRect");
  count_write(region[0] * region[1] * region[2]);
  return next(q, b, blocking, bo, ho, region, brp, bsp, hrp, hsp, p, nw, wl, ev);
}

/* A map for reading brings the bytes to the host; one for writing (not
 * invalidating) sends them back to the device when unmapped. */
void *clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags fl,
                         size_t off, size_t n, cl_uint nw, const cl_event *wl, cl_event *ev,
                         cl_int *err) {
  static void *(*next)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,
                       const cl_event *, cl_event *, cl_int *);
  if (!next) next_symbol(&next, "clEnqueueMapBuffer");
  if (fl & CL_MAP_READ) count_read(blocking, n);
  if (fl & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) count_write(n);
  return next(q, b, blocking, fl, off, n, nw, wl, ev, err);
}

/* OpenCL objects alive: created or retained, less released. */
enum { LIVE_BUFFERS, LIVE_KERNELS, LIVE_PROGRAMS, LIVE_KINDS };
static long live[LIVE_KINDS];

static void count_live(int kind, int by, const void *object) {
  if (!object) return;
  pthread_mutex_lock(&lock);
  live[kind] += by;
  pthread_mutex_unlock(&lock);
}

/* A buffer created from host memory is a transfer to the device. */
cl_mem clCreateBuffer(cl_context c, cl_mem_flags fl, size_t n, void *p, cl_int *err) {
  static cl_mem (*next)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
  if (!next) next_symbol(&next, "clCreateBuffer");
  if (fl & CL_MEM_COPY_HOST_PTR) count_write(n);
  cl_mem b = next(c, fl, n, p, err);
  count_live(LIVE_BUFFERS, 1, b);
  return b;
}

cl_mem clCreateSubBuffer(cl_mem b, cl_mem_flags fl, cl_buffer_create_type t, const void *info,
                         cl_int *err) {
  static cl_mem (*next)(cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *);
  if (!next) next_symbol(&next, "clCreateSubBuffer");
  cl_mem sub = next(b, fl, t, info, err);
  count_live(LIVE_BUFFERS, 1, sub);
  return sub;
}

cl_kernel clCreateKernel(cl_program p, const char *name, cl_int *err) {
  static cl_kernel (*next)(cl_program, const char *, cl_int *);
  if (!next) next_symbol(&next, "clCreateKernel");
  cl_kernel k = next(p, name, err);
  count_live(LIVE_KERNELS, 1, k);
  return k;
}

cl_program clCreateProgramWithSource(cl_context c, cl_uint n, const char **src, const size_t *len,
                                     cl_int *err) {
  static cl_program (*next)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
  if (!next) next_symbol(&next, "clCreateProgramWithSource");
  cl_program p = next(c, n, src, len, err);
  count_live(LIVE_PROGRAMS, 1, p);
  return p;
}

cl_program clCreateProgramWithBinary(cl_context c, cl_uint n, const cl_device_id *d,
                                     const size_t *len, const unsigned char **bin,
                                     cl_int *status, cl_int *err) {
  static cl_program (*next)(cl_context, cl_uint, const cl_device_id *, const size_t *,
                            const unsigned char **, cl_int *, cl_int *);
  if (!next) next_symbol(&next, "clCreateProgramWithBinary");
  cl_program p = next(c, n, d, len, bin, status, err);
  count_live(LIVE_PROGRAMS, 1, p);
  return p;
}

/* clRetain* and clRelease* of one kind of object: passed on, and counted
 * when they succeed */
#define COUNTED_REFERENCE(fn, type, kind, by)                                                      \
  cl_int fn(type x) {                                                                              \
    static cl_int (*next)(type);                                                                   \
    if (!next) next_symbol(&next, #fn);                                                            \
    cl_int rc = next(x);                                                                           \
    if (rc == CL_SUCCESS) count_live(kind, by, x);                                                 \
    return rc;                                                                                     \
  }
COUNTED_REFERENCE(clRetainMemObject, cl_mem, LIVE_BUFFERS, 1)
COUNTED_REFERENCE(clReleaseMemObject, cl_mem, LIVE_BUFFERS, -1)
COUNTED_REFERENCE(clRetainKernel, cl_kernel, LIVE_KERNELS, 1)
COUNTED_REFERENCE(clReleaseKernel, cl_kernel, LIVE_KERNELS, -1)
COUNTED_REFERENCE(clRetainProgram, cl_program, LIVE_PROGRAMS, 1)
COUNTED_REFERENCE(clReleaseProgram, cl_program, LIVE_PROGRAMS, -1)

/* The totals so far: launches, reads, blocking reads. */
void wsisa_clcount_totals(unsigned long out[3]);
void wsisa_clcount_totals(unsigned long out[3]) {
  out[0] = out[1] = out[2] = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nrows; i++) {
    out[0] += rows[i].launches;
    out[1] += rows[i].reads;
    out[2] += rows[i].blocking_reads;
  }
  pthread_mutex_unlock(&lock);
}

/* The transfers so far: reads back to the host, their bytes, writes to the
 * device, their bytes. */
void wsisa_clcount_bytes(unsigned long long out[4]);
void wsisa_clcount_bytes(unsigned long long out[4]) {
  out[0] = out[1] = out[2] = out[3] = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nrows; i++) {
    out[0] += rows[i].reads;
    out[1] += rows[i].read_bytes;
    out[2] += rows[i].writes;
    out[3] += rows[i].write_bytes;
  }
  pthread_mutex_unlock(&lock);
}

__attribute__((destructor)) static void clcount_report(void) {
  if (getpid() != owner || nrows == 0) return;
  const char *path = getenv("WSISA_CLCOUNT");
  FILE *f = path && *path ? fopen(path, "w") : stderr;
  if (!f) f = stderr;
  clcount_row t = {.name = "total"};
  pthread_mutex_lock(&lock);
  fprintf(f, "kernel,launches,reads,blocking_reads,read_bytes,writes,write_bytes%s\n",
          timed ? ",kernel_ms,max_ms" : "");
  for (int i = 0; i < nrows; i++) {
    fprintf(f, "%s,%lu,%lu,%lu,%llu,%lu,%llu", rows[i].name, rows[i].launches, rows[i].reads,
            rows[i].blocking_reads, rows[i].read_bytes, rows[i].writes, rows[i].write_bytes);
    if (timed) fprintf(f, ",%.3f,%.3f", rows[i].ns / 1e6, rows[i].max_ns / 1e6);
    fputc('\n', f);
    t.ns += rows[i].ns;
    if (rows[i].max_ns > t.max_ns) t.max_ns = rows[i].max_ns;
    t.launches += rows[i].launches;
    t.reads += rows[i].reads;
    t.blocking_reads += rows[i].blocking_reads;
    t.read_bytes += rows[i].read_bytes;
    t.writes += rows[i].writes;
    t.write_bytes += rows[i].write_bytes;
  }
  fprintf(f, "total,%lu,%lu,%lu,%llu,%lu,%llu", t.launches, t.reads, t.blocking_reads,
          t.read_bytes, t.writes, t.write_bytes);
  if (timed) fprintf(f, ",%.3f,%.3f", t.ns / 1e6, t.max_ns / 1e6);
  fputc('\n', f);
  fprintf(f, "live,buffers=%ld,kernels=%ld,programs=%ld\n", live[LIVE_BUFFERS],
          live[LIVE_KERNELS], live[LIVE_PROGRAMS]);
  pthread_mutex_unlock(&lock);
  if (f != stderr) fclose(f);
}
