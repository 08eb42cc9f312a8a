/* Codelet: grey threshold mask = grey > t (u8 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(threshold, 2, WSISA__PLAIN, STARPU_R, STARPU_W);

struct threshold_args {
  int t;
};

WSISA__CPU_TASK(threshold, struct threshold_args,
                wsisa_cpu_threshold(WSISA__IMAGE(0, U8), a->t, WSISA__IMAGE(1, U8)))

static void threshold_opencl(void *buffers[], void *cl_arg) {
  const struct threshold_args *a = cl_arg;
  WSISA__CL_IMAGE(threshold, "wsisa_threshold", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_INT(a->t), WSISA__CL_MAT(buffers[1]));
}

int wsisa_submit_threshold(starpu_data_handle_t grey, starpu_data_handle_t mask, int t) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){grey, mask}, (size_t[]){1, 1}))
    return WSISA_EINTERNAL;
  const struct threshold_args a = {t};
  return WSISA__SUBMIT(threshold, &a, sizeof a, grey, mask);
}
