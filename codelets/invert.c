/* Codelet: channel invert (u8, any channel count -> u8, 1 channel). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(invert);

struct invert_args {
  int channel;
};

static void invert_cpu(void *buffers[], void *cl_arg) {
  const struct invert_args *a = cl_arg;
  wsisa_image in = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_invert(&in, a->channel, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void invert_opencl(void *buffers[], void *cl_arg) {
  const struct invert_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__invert_program, "wsisa_invert", &kernel, &queue);
  cl_uint arg = 0;
  cl_int channels = (cl_int)STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
  cl_int channel = a->channel;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof channels, &channels);
  wsisa__cl_arg(kernel, &arg, sizeof channel, &channel);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__invert_program;

struct starpu_perfmodel wsisa__invert_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_invert_v1",
};

struct starpu_codelet wsisa__invert_codelet = {
    .name = "invert",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {invert_cpu},
    .opencl_funcs = {invert_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__invert_model,
};

int wsisa_submit_invert(starpu_data_handle_t in, starpu_data_handle_t out,
                        int channel) {
  struct invert_args *a = malloc(sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->channel = channel;
  int ret = WSISA__INSERT(&wsisa__invert_codelet, STARPU_R, in, STARPU_W, out,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
