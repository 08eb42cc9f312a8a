/* Codelet: colour deconvolution, RGB (u8 × 3) -> haematoxylin, eosin and
 * residual concentrations (three f32 images). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


/* skimage's rgb_from_hed H and E rows, and their normalised cross product */
const float wsisa_stains_he[9] = {0.65f,         0.70f,          0.29f,
                                  0.07f,         0.99f,          0.11f,
                                  -0.332116872f, -0.0809347108f, 0.939759552f};

static void deconv_cpu(void *buffers[], void *cl_arg) {
  const wsisa_deconv_consts *k = cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image h = wsisa_image_from_buffer(buffers[1], WSISA_F32);
  wsisa_image eo = wsisa_image_from_buffer(buffers[2], WSISA_F32);
  wsisa_image res = wsisa_image_from_buffer(buffers[3], WSISA_F32);
  int rc = wsisa_cpu_deconv(&rgb, k, &h, &eo, &res);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void deconv_opencl(void *buffers[], void *cl_arg) {
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__deconv_program, "wsisa_deconv", &kernel, &queue);
  cl_mem k = wsisa__cl_buffer(sizeof(wsisa_deconv_consts), cl_arg);
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof k, &k);
  for (int i = 1; i <= 3; i++) wsisa__cl_arg_matrix(kernel, &arg, buffers[i]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  clReleaseMemObject(k);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__deconv_program;

struct starpu_perfmodel wsisa__deconv_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_deconv_v1",
};

struct starpu_codelet wsisa__deconv_codelet = {
    .name = "deconv",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {deconv_cpu},
    .opencl_funcs = {deconv_opencl},
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_W, STARPU_W, STARPU_W},
    .model = &wsisa__deconv_model,
};

int wsisa_submit_deconv(starpu_data_handle_t rgb, const float stains[9],
                        starpu_data_handle_t h, starpu_data_handle_t eo,
                        starpu_data_handle_t res) {
  if (wsisa__check_matrices(4, (starpu_data_handle_t[]){rgb, h, eo, res},
                            (size_t[]){3, sizeof(float), sizeof(float), sizeof(float)}))
    return WSISA_EINTERNAL;
  wsisa_deconv_consts *k = malloc(sizeof *k);
  if (!k) return WSISA_ENOMEM;
  int rc = wsisa_cpu_deconv_setup(stains ? stains : wsisa_stains_he, k);
  if (rc) {
    free(k);
    return rc;
  }
  int ret = WSISA__INSERT(&wsisa__deconv_codelet, STARPU_R, rgb, STARPU_W, h, STARPU_W, eo,
                          STARPU_W, res, STARPU_CL_ARGS, k, sizeof *k, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
