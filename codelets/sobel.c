/* Codelet: Sobel gradient magnitude (f32 -> f32), edge pixels repeated. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void sobel_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image in = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image mag = wsisa_image_from_buffer(buffers[1], WSISA_F32);
  int rc = wsisa_cpu_sobel(&in, &mag);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void sobel_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__sobel_program, "wsisa_sobel", &kernel, &queue);
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__sobel_program;

struct starpu_perfmodel wsisa__sobel_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_sobel_v1",
};

struct starpu_codelet wsisa__sobel_codelet = {
    .name = "sobel",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {sobel_cpu},
    .opencl_funcs = {sobel_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__sobel_model,
};

int wsisa_submit_sobel(starpu_data_handle_t in, starpu_data_handle_t mag) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){in, mag},
                            (size_t[]){sizeof(float), sizeof(float)}))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__sobel_codelet, STARPU_R, in, STARPU_W, mag, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
