/* Codelet: saturating difference out = max(a − b, 0) (u8, u8 -> u8). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(sub_sat);

static void sub_sat_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image a = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image b = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  int rc = wsisa_cpu_sub_sat(&a, &b, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void sub_sat_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__sub_sat_program, "wsisa_sub_sat", &kernel, &queue);
  cl_uint arg = 0;
  for (int i = 0; i < 3; i++) wsisa__cl_arg_matrix(kernel, &arg, buffers[i]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__sub_sat_program;

struct starpu_perfmodel wsisa__sub_sat_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_sub_sat_v2",
};

struct starpu_codelet wsisa__sub_sat_codelet = {
    .name = "sub_sat",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {sub_sat_cpu},
    .opencl_funcs = {sub_sat_opencl},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__sub_sat_model,
};

int wsisa_submit_sub_sat(starpu_data_handle_t a, starpu_data_handle_t b,
                         starpu_data_handle_t out) {
  if (wsisa__check_matrices(3, (starpu_data_handle_t[]){a, b, out}, (size_t[]){1, 1, 1}))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__sub_sat_codelet, STARPU_R, a, STARPU_R, b, STARPU_W, out, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
