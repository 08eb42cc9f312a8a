/* Codelet: negated distance inside a mask, -FLT_MAX outside (f32, u8 -> f32). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(neg_dist, 1, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(neg_dist, void,
                wsisa_cpu_neg_dist(WSISA__IMAGE(0, F32), WSISA__IMAGE(1, U8),
                                   WSISA__IMAGE(2, F32)))

static void neg_dist_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  WSISA__CL_IMAGE(neg_dist, "wsisa_neg_dist", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_MAT(buffers[1]), WSISA__CL_MAT(buffers[2]));
}

int wsisa_submit_neg_dist(starpu_data_handle_t dist, starpu_data_handle_t mask,
                          starpu_data_handle_t out) {
  return WSISA__SUBMIT(neg_dist, NULL, 0, dist, mask, out);
}
