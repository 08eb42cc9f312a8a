/* Codelet: RGB -> Reinhard lαβ (u8 × 3 -> f32 × 3). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(rgb2lab, 2, WSISA__FP64, STARPU_R, STARPU_W);

WSISA__CPU_TASK(rgb2lab, void, wsisa_cpu_rgb2lab(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, F32)))

static void rgb2lab_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_mem k = wsisa__cl_reinhard();
  WSISA__CL_IMAGE(rgb2lab, "wsisa_rgb2lab", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_VAL(k), WSISA__CL_MAT(buffers[1]));
  clReleaseMemObject(k);
}

int wsisa_submit_rgb2lab(starpu_data_handle_t rgb, starpu_data_handle_t lab) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, lab},
                            (size_t[]){3, 3 * sizeof(float)}))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(rgb2lab, NULL, 0, rgb, lab);
}

cl_mem wsisa__cl_reinhard(void) {
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  return wsisa__cl_buffer(sizeof k, &k);
}
