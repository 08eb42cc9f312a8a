/* Codelet: binary mask logic AND / OR / AND NOT (u8, u8 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


/* The kernels take the operation as this integer. */
_Static_assert(WSISA_MASK_AND == 0 && WSISA_MASK_OR == 1 && WSISA_MASK_ANDNOT == 2,
               "codelets/cpu/mask_logic.c and cl/mask_logic.cl number the ops so");

struct mask_logic_args {
  int op;
};

static void mask_logic_cpu(void *buffers[], void *cl_arg) {
  const struct mask_logic_args *a = cl_arg;
  wsisa_image in_a = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image in_b = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  int rc = wsisa_cpu_mask_logic(&in_a, &in_b, a->op, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void mask_logic_opencl(void *buffers[], void *cl_arg) {
  const struct mask_logic_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__mask_logic_program, "wsisa_mask_logic", &kernel, &queue);
  cl_int op = a->op;
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_arg(kernel, &arg, sizeof op, &op);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[2]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__mask_logic_program;

struct starpu_perfmodel wsisa__mask_logic_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_mask_logic_v2",
};

struct starpu_codelet wsisa__mask_logic_codelet = {
    .name = "mask_logic",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {mask_logic_cpu},
    .opencl_funcs = {mask_logic_opencl},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__mask_logic_model,
};

int wsisa_submit_mask_logic(starpu_data_handle_t a, starpu_data_handle_t b,
                            starpu_data_handle_t out, wsisa_mask_op op) {
  if (wsisa__check_matrices(3, (starpu_data_handle_t[]){a, b, out}, (size_t[]){1, 1, 1}))
    return WSISA_EINTERNAL;
  if (op != WSISA_MASK_AND && op != WSISA_MASK_OR && op != WSISA_MASK_ANDNOT)
    return WSISA_EUSAGE;
  struct mask_logic_args *args = malloc(sizeof *args);
  if (!args) return WSISA_ENOMEM;
  args->op = (int)op;
  int ret = WSISA__INSERT(&wsisa__mask_logic_codelet, STARPU_R, a, STARPU_R, b, STARPU_W,
                          out, STARPU_CL_ARGS, args, sizeof *args, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
