/* Codelet: channel invert (u8, any channel count -> u8, 1 channel). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(invert, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

struct invert_args {
  int channel;
};

WSISA__CPU_TASK(invert, struct invert_args,
                wsisa_cpu_invert(WSISA__IMAGE(0, U8), a->channel, WSISA__IMAGE(1, U8)))

static void invert_opencl(void *buffers[], void *cl_arg) {
  const struct invert_args *a = cl_arg;
  WSISA__CL_IMAGE(invert, "wsisa_invert", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_INT(STARPU_MATRIX_GET_ELEMSIZE(buffers[0])),
                  WSISA__CL_INT(a->channel), WSISA__CL_MAT(buffers[1]));
}

int wsisa_submit_invert(starpu_data_handle_t in, starpu_data_handle_t out, int channel) {
  const struct invert_args a = {channel};
  return WSISA__SUBMIT(invert, &a, sizeof a, in, out);
}
