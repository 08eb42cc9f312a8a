/* Codelet: Sobel gradient magnitude (f32 -> f32), edge pixels repeated. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(sobel, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

WSISA__CPU_TASK(sobel, void, wsisa_cpu_sobel(WSISA__IMAGE(0, F32), WSISA__IMAGE(1, F32)))

static void sobel_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  WSISA__CL_IMAGE(sobel, "wsisa_sobel", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_MAT(buffers[1]));
}

int wsisa_submit_sobel(starpu_data_handle_t in, starpu_data_handle_t mag) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){in, mag},
                            (size_t[]){sizeof(float), sizeof(float)}))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(sobel, NULL, 0, in, mag);
}
