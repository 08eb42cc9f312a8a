/* Codelet: Reinhard colour transfer of the foreground (f32 × 3, u8 mask,
 * statistics vector -> f32 × 3). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void color_transfer_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image lab = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  const double *stats = (const double *)STARPU_VECTOR_GET_PTR(buffers[2]);
  wsisa_image out = wsisa_image_from_buffer(buffers[3], WSISA_F32);
  int rc = wsisa_cpu_color_transfer(&lab, &mask, stats, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void color_transfer_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__color_transfer_program, "wsisa_color_transfer", &kernel,
                   &queue);
  cl_mem k = wsisa__cl_reinhard();
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_arg_vector(kernel, &arg, buffers[2]);
  wsisa__cl_arg(kernel, &arg, sizeof k, &k);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[3]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  clReleaseMemObject(k);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__color_transfer_program;

struct starpu_perfmodel wsisa__color_transfer_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_color_transfer_v1",
};

struct starpu_codelet wsisa__color_transfer_codelet = {
    .name = "color_transfer",
    .where = STARPU_CPU | STARPU_OPENCL,
    .can_execute = wsisa__can_execute_fp64,
    .cpu_funcs = {color_transfer_cpu},
    .opencl_funcs = {color_transfer_opencl},
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__color_transfer_model,
};

int wsisa_submit_color_transfer(starpu_data_handle_t lab, starpu_data_handle_t mask,
                                starpu_data_handle_t stats, starpu_data_handle_t lab_out) {
  if (wsisa__check_matrices(3, (starpu_data_handle_t[]){lab, mask, lab_out},
                            (size_t[]){3 * sizeof(float), 1, 3 * sizeof(float)}) ||
      wsisa__check_vector(stats, WSISA_STATS_N, sizeof(double)))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__color_transfer_codelet, STARPU_R, lab, STARPU_R, mask,
                          STARPU_R, stats, STARPU_W, lab_out, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
