/* Codelet: Fisher foreground of the normalization (u8 × 3 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(fisher_fg, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

WSISA__CPU_TASK(fisher_fg, void,
                wsisa_cpu_fisher_fg(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8)))

static void fisher_fg_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_int4 d;
  for (int i = 0; i < 4; i++) d.s[i] = wsisa__fisher_m2[i] - wsisa__fisher_m1[i];
  WSISA__CL_IMAGE(fisher_fg, "wsisa_fisher_fg", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_VAL(d), WSISA__CL_MAT(buffers[1]));
}

int wsisa_submit_fisher_fg(starpu_data_handle_t rgb, starpu_data_handle_t fg_mask) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, fg_mask}, (size_t[]){3, 1}))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(fisher_fg, NULL, 0, rgb, fg_mask);
}
