/* Codelet: RGB -> Reinhard lαβ (u8 × 3 -> f32 × 3). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void rgb2lab_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image lab = wsisa_image_from_buffer(buffers[1], WSISA_F32);
  int rc = wsisa_cpu_rgb2lab(&rgb, &lab);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void rgb2lab_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__rgb2lab_program, "wsisa_rgb2lab", &kernel, &queue);
  cl_mem k = wsisa__cl_reinhard();
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof k, &k);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  clReleaseMemObject(k);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__rgb2lab_program;

struct starpu_perfmodel wsisa__rgb2lab_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_rgb2lab_v2",
};

struct starpu_codelet wsisa__rgb2lab_codelet = {
    .name = "rgb2lab",
    .where = STARPU_CPU | STARPU_OPENCL,
    .can_execute = wsisa__can_execute_fp64,
    .cpu_funcs = {rgb2lab_cpu},
    .opencl_funcs = {rgb2lab_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__rgb2lab_model,
};

int wsisa_submit_rgb2lab(starpu_data_handle_t rgb, starpu_data_handle_t lab) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, lab},
                            (size_t[]){3, 3 * sizeof(float)}))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__rgb2lab_codelet, STARPU_R, rgb, STARPU_W, lab, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
