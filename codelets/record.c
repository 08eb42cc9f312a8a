/* Dry runs: while a recorder is set, the submit helpers build their tasks and
 * hand them to it instead of submitting them (codelets.h,
 * wsisa_codelets_record). The estimator (engine/estimate.c) learns this way
 * which codelets a piece of the workflow submits, with the data sizes,
 * arguments and footprints StarPU's performance models would see. */
#include <errno.h>

#include "codelets/codelets_private.h"

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
