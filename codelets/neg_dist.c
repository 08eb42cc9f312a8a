/* Codelet: negated distance inside a mask, -FLT_MAX outside (f32, u8 -> f32). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void neg_dist_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image dist = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], WSISA_F32);
  int rc = wsisa_cpu_neg_dist(&dist, &mask, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void neg_dist_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__neg_dist_program, "wsisa_neg_dist", &kernel, &queue);
  cl_uint arg = 0;
  for (int i = 0; i < 3; i++) wsisa__cl_arg_matrix(kernel, &arg, buffers[i]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__neg_dist_program;

struct starpu_perfmodel wsisa__neg_dist_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_neg_dist_v1",
};

struct starpu_codelet wsisa__neg_dist_codelet = {
    .name = "neg_dist",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {neg_dist_cpu},
    .opencl_funcs = {neg_dist_opencl},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__neg_dist_model,
};

int wsisa_submit_neg_dist(starpu_data_handle_t dist, starpu_data_handle_t mask,
                          starpu_data_handle_t out) {
  int ret = WSISA__INSERT(&wsisa__neg_dist_codelet, STARPU_R, dist, STARPU_R, mask,
                          STARPU_W, out, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
