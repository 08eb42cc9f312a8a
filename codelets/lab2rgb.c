/* Codelet: Reinhard lαβ -> RGB of the foreground, the rest copied from the
 * original (f32 × 3, u8 mask, u8 × 3 -> u8 × 3). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(lab2rgb, 2, WSISA__FP64, STARPU_R, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(lab2rgb, void,
                wsisa_cpu_lab2rgb(WSISA__IMAGE(0, F32), WSISA__IMAGE(1, U8),
                                  WSISA__IMAGE(2, U8), WSISA__IMAGE(3, U8)))

static void lab2rgb_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_mem k = wsisa__cl_reinhard();
  WSISA__CL_IMAGE(lab2rgb, "wsisa_lab2rgb", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_MAT(buffers[1]), WSISA__CL_MAT(buffers[2]), WSISA__CL_VAL(k),
                  WSISA__CL_MAT(buffers[3]));
  clReleaseMemObject(k);
}

int wsisa_submit_lab2rgb(starpu_data_handle_t lab, starpu_data_handle_t mask,
                         starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out) {
  if (wsisa__check_matrices(4, (starpu_data_handle_t[]){lab, mask, rgb_in, rgb_out},
                            (size_t[]){3 * sizeof(float), 1, 3, 3}))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(lab2rgb, NULL, 0, lab, mask, rgb_in, rgb_out);
}
