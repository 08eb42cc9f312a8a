/* Codelet: Fisher foreground of the normalization (u8 × 3 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void fisher_fg_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_fisher_fg(&rgb, &mask);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void fisher_fg_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__fisher_fg_program, "wsisa_fisher_fg", &kernel, &queue);
  cl_int4 d;
  for (int i = 0; i < 4; i++) d.s[i] = wsisa__fisher_m2[i] - wsisa__fisher_m1[i];
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof d, &d);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__fisher_fg_program;

struct starpu_perfmodel wsisa__fisher_fg_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_fisher_fg_v1",
};

struct starpu_codelet wsisa__fisher_fg_codelet = {
    .name = "fisher_fg",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {fisher_fg_cpu},
    .opencl_funcs = {fisher_fg_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__fisher_fg_model,
};

int wsisa_submit_fisher_fg(starpu_data_handle_t rgb, starpu_data_handle_t fg_mask) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, fg_mask}, (size_t[]){3, 1}))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__fisher_fg_codelet, STARPU_R, rgb, STARPU_W, fg_mask, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
