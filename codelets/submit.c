/* Submitting an operation's task: the checks its submit helper makes first,
 * the insertion with the modes of its declaration, the argument footprint;
 * and dry runs: while a recorder is set, the submit helpers build their tasks
 * and hand them to it instead of submitting them (codelets.h,
 * wsisa_codelets_record). The estimator (engine/estimate/costs.c) learns this way
 * which codelets a piece of the workflow submits, with the data sizes,
 * arguments and footprints StarPU's performance models would see. */
#include <errno.h>
#include <string.h>

#include "codelets/codelets_private.h"

int wsisa__check_conn(int conn) { return conn == 4 || conn == 8 ? 0 : WSISA_EUSAGE; }

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

uint32_t wsisa__footprint_args(struct starpu_task *task) {
  return starpu_hash_crc32c_be_n(task->cl_arg, task->cl_arg_size,
                                 starpu_task_data_footprint(task));
}

/* Insert (or, during a dry run, build and record) a task of `codelet`; the
 * variadic tail follows starpu_task_insert and ends with 0. A CPU-only
 * codelet runs on a CPU worker whatever wsisa_codelets_where() says: there is
 * no other. Under a placement scope the task is counted when it ends. */
#define INSERT(codelet, ...)                                                              \
  (wsisa__recorder                                                                        \
       ? wsisa__record(starpu_task_build((codelet), STARPU_EXECUTE_WHERE, where_of(codelet), \
                                         __VA_ARGS__))                                      \
       : starpu_task_insert((codelet), STARPU_EXECUTE_WHERE, where_of(codelet),            \
                            STARPU_CALLBACK_WITH_ARG_NFREE, ended_of(codelet), (void *)scope, \
                            STARPU_PROLOGUE_CALLBACK_POP, taken_of(codelet), __VA_ARGS__))

wsisa_codelets_recorder wsisa__recorder;
static void *recorder_ctx;

void wsisa_codelets_record(wsisa_codelets_recorder fn, void *ctx) {
  wsisa__recorder = fn;
  recorder_ctx = ctx;
}

int wsisa__record(struct starpu_task *task) {
  if (!task) return -ENOMEM;
  wsisa__recorder(recorder_ctx, task);
  /* never submitted: destroying it frees its STARPU_CL_ARGS as well (a task
   * built to be submitted would destroy itself once done) */
  task->destroy = 0;
  starpu_task_destroy(task);
  return 0;
}

/* The submitting thread's placement scope (codelets.h). */
static _Thread_local wsisa_codelets_scope *scope;

wsisa_codelets_scope *wsisa_codelets_scope_set(wsisa_codelets_scope *to) {
  wsisa_codelets_scope *was = scope;
  scope = to;
  return was;
}

/* The scope's kinds, when the process lets the codelet run there; NULL when
 * the codelet has one place only. */
static const wsisa_codelets_scope *placed(const struct starpu_codelet *codelet) {
  return scope && codelet->opencl_funcs[0] && (wsisa_codelets_where() & scope->where) ? scope
                                                                                      : NULL;
}

static unsigned long long where_of(const struct starpu_codelet *codelet) {
  if (!codelet->opencl_funcs[0]) return STARPU_CPU;
  const wsisa_codelets_scope *s = placed(codelet);
  return s ? wsisa_codelets_where() & s->where : wsisa_codelets_where();
}

/* When the calling worker took its task (a worker runs one task at a time:
 * taken, run, ended, all on its thread). */
static _Thread_local double taken_at;

static void taken(void *arg) {
  (void)arg;
  taken_at = starpu_timing_now();
}

/* A task under a scope has ended, on the calling worker. */
static void ended_placed(void *arg) {
  wsisa_codelets_scope *s = arg;
  const int id = starpu_worker_get_id();
  const int opencl = id >= 0 && starpu_worker_get_type(id) == STARPU_OPENCL_WORKER;
  const double us = starpu_timing_now() - taken_at;
  atomic_fetch_add(opencl ? &s->on_opencl : &s->on_cpu, 1);
  if (us > 0) atomic_fetch_add(opencl ? &s->ns_on_opencl : &s->ns_on_cpu, (uint64_t)(us * 1e3));
  if (!(s->where & (opencl ? STARPU_OPENCL : STARPU_CPU))) atomic_fetch_add(&s->astray, 1);
  atomic_fetch_add(&s->ended, 1);
}

static void ended_fixed(void *arg) {
  wsisa_codelets_scope *s = arg;
  atomic_fetch_add(&s->fixed, 1);
  atomic_fetch_add(&s->ended, 1);
}

/* The callback counting a task under the thread's scope (NULL: none), the
 * task counted as submitted. */
static void (*ended_of(const struct starpu_codelet *codelet))(void *) {
  if (!scope) return NULL;
  atomic_fetch_add(&scope->submitted, 1);
  if (!placed(codelet)) return ended_fixed;
  atomic_fetch_add(&scope->placed, 1);
  return ended_placed;
}

/* The callback stamping when a worker takes a task of the thread's scope
 * whose kind of worker is chosen (NULL: none). */
static void (*taken_of(const struct starpu_codelet *codelet))(void *) {
  return placed(codelet) ? taken : NULL;
}

/* A heap copy of the arguments, which StarPU frees with the task. */
static int copy_args(const void *args, size_t size, void **copy) {
  *copy = NULL;
  if (!size) return 0;
  if (!(*copy = malloc(size))) return WSISA_ENOMEM;
  memcpy(*copy, args, size);
  return 0;
}

int wsisa__submit(struct starpu_codelet *codelet, const starpu_data_handle_t *h, int n,
                  const void *args, size_t size) {
  STARPU_ASSERT(n == codelet->nbuffers);
  void *copy;
  if (copy_args(args, size, &copy)) return WSISA_ENOMEM;
  int ret = copy ? INSERT(codelet, STARPU_DATA_ARRAY, (starpu_data_handle_t *)h, n,
                          STARPU_CL_ARGS, copy, size, 0)
                 : INSERT(codelet, STARPU_DATA_ARRAY, (starpu_data_handle_t *)h, n, 0);
  return ret ? WSISA_ERUNTIME : 0;
}

int wsisa__submit_descr(struct starpu_codelet *codelet, struct starpu_data_descr *descr,
                        int n, const void *args, size_t size) {
  void *copy;
  if (copy_args(args, size, &copy)) return WSISA_ENOMEM;
  int ret = copy ? INSERT(codelet, STARPU_DATA_MODE_ARRAY, descr, n, STARPU_CL_ARGS, copy,
                          size, 0)
                 : INSERT(codelet, STARPU_DATA_MODE_ARRAY, descr, n, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
