/* Codelet: channel ratio mask c_num / (c_den + ε) > T (u8, 1-4 channels -> u8
 * mask). Both workers decide through the same host-made table. */
#include <math.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


struct ratio_mask_args {
  int num_channel, den_channel;
  double threshold;
};

static void ratio_mask_cpu(void *buffers[], void *cl_arg) {
  const struct ratio_mask_args *a = cl_arg;
  wsisa_image img = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_ratio_mask(&img, a->num_channel, a->den_channel, a->threshold, &mask);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void ratio_mask_opencl(void *buffers[], void *cl_arg) {
  const struct ratio_mask_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__ratio_mask_program, "wsisa_ratio_mask", &kernel, &queue);
  cl_ushort first[256];
  wsisa_cpu_ratio_table(a->threshold, first);
  cl_mem table = wsisa__cl_buffer(sizeof first, first);
  cl_int channels = (cl_int)STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
  cl_int num = a->num_channel, den = a->den_channel;
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof channels, &channels);
  wsisa__cl_arg(kernel, &arg, sizeof num, &num);
  wsisa__cl_arg(kernel, &arg, sizeof den, &den);
  wsisa__cl_arg(kernel, &arg, sizeof table, &table);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  clReleaseMemObject(table);
  starpu_opencl_release_kernel(kernel);
}

struct starpu_opencl_program wsisa__ratio_mask_program;

struct starpu_perfmodel wsisa__ratio_mask_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_ratio_mask_v1",
};

struct starpu_codelet wsisa__ratio_mask_codelet = {
    .name = "ratio_mask",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {ratio_mask_cpu},
    .opencl_funcs = {ratio_mask_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__ratio_mask_model,
};

int wsisa_submit_ratio_mask(starpu_data_handle_t rgb, starpu_data_handle_t mask,
                            int num_channel, int den_channel, double threshold) {
  if (!rgb || starpu_data_get_interface_id(rgb) != STARPU_MATRIX_INTERFACE_ID)
    return WSISA_EINTERNAL;
  const int channels = (int)starpu_matrix_get_elemsize(rgb);
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb, mask},
                            (size_t[]){(size_t)channels, 1}) ||
      channels > 4)
    return WSISA_EINTERNAL;
  if (num_channel < 0 || num_channel >= channels || den_channel < 0 ||
      den_channel >= channels || isnan(threshold))
    return WSISA_EUSAGE;
  struct ratio_mask_args *a = malloc(sizeof *a);
  if (!a) return WSISA_ENOMEM;
  *a = (struct ratio_mask_args){num_channel, den_channel, threshold};
  int ret = WSISA__INSERT(&wsisa__ratio_mask_codelet, STARPU_R, rgb, STARPU_W, mask,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
