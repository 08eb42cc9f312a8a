/* Codelet: colour deconvolution, RGB (u8 × 3) -> haematoxylin, eosin and
 * residual concentrations (three f32 images). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(deconv, 1, WSISA__PLAIN, STARPU_R, STARPU_W, STARPU_W, STARPU_W);

/* skimage's rgb_from_hed H and E rows, and their normalised cross product */
const float wsisa_stains_he[9] = {0.65f,         0.70f,          0.29f,
                                  0.07f,         0.99f,          0.11f,
                                  -0.332116872f, -0.0809347108f, 0.939759552f};

WSISA__CPU_TASK(deconv, wsisa_deconv_consts,
                wsisa_cpu_deconv(WSISA__IMAGE(0, U8), a, WSISA__IMAGE(1, F32),
                                 WSISA__IMAGE(2, F32), WSISA__IMAGE(3, F32)))

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

int wsisa_submit_deconv(starpu_data_handle_t rgb, const float stains[9],
                        starpu_data_handle_t h, starpu_data_handle_t eo,
                        starpu_data_handle_t res) {
  if (wsisa__check_matrices(4, (starpu_data_handle_t[]){rgb, h, eo, res},
                            (size_t[]){3, sizeof(float), sizeof(float), sizeof(float)}))
    return WSISA_EINTERNAL;
  wsisa_deconv_consts k;
  int rc = wsisa_cpu_deconv_setup(stains ? stains : wsisa_stains_he, &k);
  if (rc) return rc;
  return WSISA__SUBMIT(deconv, &k, sizeof k, rgb, h, eo, res);
}
