/* Codelet: background mask b > B & g > G & r > R (u8 × 3 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


struct background_args {
  int blue, green, red;
};

static void background_cpu(void *buffers[], void *cl_arg) {
  const struct background_args *a = cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_background(&rgb, a->blue, a->green, a->red, &mask);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void background_opencl(void *buffers[], void *cl_arg) {
  const struct background_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__background_program, "wsisa_background", &kernel, &queue);
  cl_int blue = a->blue, green = a->green, red = a->red;
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof blue, &blue);
  wsisa__cl_arg(kernel, &arg, sizeof green, &green);
  wsisa__cl_arg(kernel, &arg, sizeof red, &red);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__background_program;

struct starpu_perfmodel wsisa__background_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_background_v1",
};

struct starpu_codelet wsisa__background_codelet = {
    .name = "background",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {background_cpu},
    .opencl_funcs = {background_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__background_model,
};

int wsisa_submit_background(starpu_data_handle_t rgb, starpu_data_handle_t mask, int B,
                            int G, int R) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, mask}, (size_t[]){3, 1}))
    return WSISA_EINTERNAL;
  struct background_args *a = malloc(sizeof *a);
  if (!a) return WSISA_ENOMEM;
  *a = (struct background_args){B, G, R};
  int ret = WSISA__INSERT(&wsisa__background_codelet, STARPU_R, rgb, STARPU_W, mask,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
