/* Codelet: grey threshold mask = grey > t (u8 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(threshold);

struct threshold_args {
  int t;
};

static void threshold_cpu(void *buffers[], void *cl_arg) {
  const struct threshold_args *a = cl_arg;
  wsisa_image grey = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_threshold(&grey, a->t, &mask);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void threshold_opencl(void *buffers[], void *cl_arg) {
  const struct threshold_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__threshold_program, "wsisa_threshold", &kernel, &queue);
  cl_int t = a->t;
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof t, &t);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__threshold_program;

struct starpu_perfmodel wsisa__threshold_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_threshold_v2",
};

struct starpu_codelet wsisa__threshold_codelet = {
    .name = "threshold",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {threshold_cpu},
    .opencl_funcs = {threshold_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__threshold_model,
};

int wsisa_submit_threshold(starpu_data_handle_t grey, starpu_data_handle_t mask, int t) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){grey, mask}, (size_t[]){1, 1}))
    return WSISA_EINTERNAL;
  struct threshold_args *a = malloc(sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->t = t;
  int ret = WSISA__INSERT(&wsisa__threshold_codelet, STARPU_R, grey, STARPU_W, mask,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
