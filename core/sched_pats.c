/* The pats scheduling policy (seed 000 §2.2, PATS): ready tasks are ordered by
 * their measured speedup on the accelerator; an idle OpenCL worker takes the
 * ready task with the highest speedup, an idle CPU worker the one with the
 * lowest. A task not yet calibrated on the asking worker's kind goes first, so
 * the history models gather their measurements. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include <starpu.h>

#include "core/core_private.h"

typedef struct pats_data {
  pthread_mutex_t lock;
  struct starpu_task_list ready;
  /* a representative performance arch of each worker kind (NULL: none) */
  struct starpu_perfmodel_arch *cpu_arch, *cl_arch;
} pats_data;

static void pats_init(unsigned ctx) {
  pats_data *d = calloc(1, sizeof *d);
  STARPU_ASSERT(d);
  pthread_mutex_init(&d->lock, NULL);
  starpu_task_list_init(&d->ready);
  starpu_sched_ctx_set_policy_data(ctx, d);
}

static void pats_deinit(unsigned ctx) {
  pats_data *d = starpu_sched_ctx_get_policy_data(ctx);
  pthread_mutex_destroy(&d->lock);
  free(d);
}

static void pats_add_workers(unsigned ctx, int *ids, unsigned n) {
  pats_data *d = starpu_sched_ctx_get_policy_data(ctx);
  for (unsigned i = 0; i < n; i++) {
    enum starpu_worker_archtype type = starpu_worker_get_type(ids[i]);
    struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(ids[i], ctx);
    if (type == STARPU_CPU_WORKER && !d->cpu_arch) d->cpu_arch = arch;
    if (type == STARPU_OPENCL_WORKER && !d->cl_arch) d->cl_arch = arch;
  }
}

static void pats_remove_workers(unsigned ctx, int *ids, unsigned n) {
  (void)ctx;
  (void)ids;
  (void)n;
}

/* Every worker of the context may want the new task: wake them all. */
static int pats_push(struct starpu_task *task) {
  unsigned ctx = task->sched_ctx;
  pats_data *d = starpu_sched_ctx_get_policy_data(ctx);
  pthread_mutex_lock(&d->lock);
  starpu_task_list_push_back(&d->ready, task);
  pthread_mutex_unlock(&d->lock);
  starpu_push_task_end(task);
  struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(ctx);
  struct starpu_sched_ctx_iterator it;
  workers->init_iterator(workers, &it);
  while (workers->has_next(workers, &it)) starpu_wake_worker_relax_light(workers->get_next(workers, &it));
  return 0;
}

static double expected(struct starpu_task *task, struct starpu_perfmodel_arch *arch) {
  if (!arch) return NAN;
  double t = starpu_task_expected_length(task, arch, 0);
  return isfinite(t) && t > 0 ? t : NAN;
}

/* CPU time over OpenCL time: above 1, the accelerator is the better place. */
double wsisa__pats_speedup(double cpu_time, double cl_time) {
  if (!isfinite(cpu_time) || !isfinite(cl_time) || cl_time <= 0) return NAN;
  return cpu_time / cl_time;
}

static struct starpu_task *pats_pop(unsigned ctx) {
  pats_data *d = starpu_sched_ctx_get_policy_data(ctx);
  int worker = starpu_worker_get_id();
  int accel = starpu_worker_get_type(worker) == STARPU_OPENCL_WORKER;
  struct starpu_perfmodel_arch *mine = accel ? d->cl_arch : d->cpu_arch;
  struct starpu_task *best = NULL, *t;
  double best_speedup = 0;
  unsigned nimpl;
  pthread_mutex_lock(&d->lock);
  for (t = starpu_task_list_begin(&d->ready); t != starpu_task_list_end(&d->ready);
       t = starpu_task_list_next(t)) {
    if (!starpu_worker_can_execute_task_first_impl((unsigned)worker, t, &nimpl)) continue;
    if (!isfinite(expected(t, mine))) { /* calibrate first */
      best = t;
      break;
    }
    double s = wsisa__pats_speedup(expected(t, d->cpu_arch), expected(t, d->cl_arch));
    if (!isfinite(s)) s = 1.0; /* only one kind can run it, or its other side is unknown */
    if (!best || (accel ? s > best_speedup : s < best_speedup)) {
      best = t;
      best_speedup = s;
    }
  }
  if (best) starpu_task_list_erase(&d->ready, best);
  pthread_mutex_unlock(&d->lock);
  return best;
}

struct starpu_sched_policy wsisa__pats_policy = {
    .init_sched = pats_init,
    .deinit_sched = pats_deinit,
    .add_workers = pats_add_workers,
    .remove_workers = pats_remove_workers,
    .push_task = pats_push,
    .pop_task = pats_pop,
    .policy_name = "pats",
    .policy_description = "speedup-ordered: accelerators take the tasks they speed up most",
    .worker_type = STARPU_WORKER_LIST,
};
