/* Codelet: saturating difference out = max(a − b, 0) (u8, u8 -> u8). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(sub_sat, 2, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(sub_sat, void,
                wsisa_cpu_sub_sat(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8),
                                  WSISA__IMAGE(2, U8)))

static void sub_sat_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  WSISA__CL_IMAGE(sub_sat, "wsisa_sub_sat", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_MAT(buffers[1]), WSISA__CL_MAT(buffers[2]));
}

int wsisa_submit_sub_sat(starpu_data_handle_t a, starpu_data_handle_t b,
                         starpu_data_handle_t out) {
  if (wsisa__check_matrices(3, (starpu_data_handle_t[]){a, b, out}, (size_t[]){1, 1, 1}))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(sub_sat, NULL, 0, a, b, out);
}
