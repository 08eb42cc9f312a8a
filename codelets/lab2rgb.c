/* Codelet: Reinhard lαβ -> RGB of the foreground, the rest copied from the
 * original (f32 × 3, u8 mask, u8 × 3 -> u8 × 3). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void lab2rgb_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image lab = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image rgb_in = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  wsisa_image rgb_out = wsisa_image_from_buffer(buffers[3], WSISA_U8);
  int rc = wsisa_cpu_lab2rgb(&lab, &mask, &rgb_in, &rgb_out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void lab2rgb_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__lab2rgb_program, "wsisa_lab2rgb", &kernel, &queue);
  cl_mem k = wsisa__cl_reinhard();
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[2]);
  wsisa__cl_arg(kernel, &arg, sizeof k, &k);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[3]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  clReleaseMemObject(k);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__lab2rgb_program;

struct starpu_perfmodel wsisa__lab2rgb_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_lab2rgb_v2",
};

struct starpu_codelet wsisa__lab2rgb_codelet = {
    .name = "lab2rgb",
    .where = STARPU_CPU | STARPU_OPENCL,
    .can_execute = wsisa__can_execute_fp64,
    .cpu_funcs = {lab2rgb_cpu},
    .opencl_funcs = {lab2rgb_opencl},
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__lab2rgb_model,
};

int wsisa_submit_lab2rgb(starpu_data_handle_t lab, starpu_data_handle_t mask,
                         starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out) {
  if (wsisa__check_matrices(4, (starpu_data_handle_t[]){lab, mask, rgb_in, rgb_out},
                            (size_t[]){3 * sizeof(float), 1, 3, 3}))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__lab2rgb_codelet, STARPU_R, lab, STARPU_R, mask, STARPU_R,
                          rgb_in, STARPU_W, rgb_out, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
