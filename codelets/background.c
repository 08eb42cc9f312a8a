/* Codelet: background mask b > B & g > G & r > R (u8 × 3 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(background, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

struct background_args {
  int blue, green, red;
};

WSISA__CPU_TASK(background, struct background_args,
                wsisa_cpu_background(WSISA__IMAGE(0, U8), a->blue, a->green, a->red,
                                     WSISA__IMAGE(1, U8)))

static void background_opencl(void *buffers[], void *cl_arg) {
  const struct background_args *a = cl_arg;
  cl_int blue = a->blue, green = a->green, red = a->red;
  WSISA__CL_IMAGE(background, "wsisa_background", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_VAL(blue), WSISA__CL_VAL(green), WSISA__CL_VAL(red),
                  WSISA__CL_MAT(buffers[1]));
}

int wsisa_submit_background(starpu_data_handle_t rgb, starpu_data_handle_t mask, int B,
                            int G, int R) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, mask}, (size_t[]){3, 1}))
    return WSISA_EINTERNAL;
  const struct background_args a = {B, G, R};
  return WSISA__SUBMIT(background, &a, sizeof a, rgb, mask);
}
