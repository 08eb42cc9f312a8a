/* Codelet: channel ratio mask c_num / (c_den + ε) > T (u8, 1-4 channels -> u8
 * mask). Both workers decide through the same host-made table. */
#include <math.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(ratio_mask, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

struct ratio_mask_args {
  int num_channel, den_channel;
  double threshold;
};

WSISA__CPU_TASK(ratio_mask, struct ratio_mask_args,
                wsisa_cpu_ratio_mask(WSISA__IMAGE(0, U8), a->num_channel, a->den_channel,
                                     a->threshold, WSISA__IMAGE(1, U8)))

static void ratio_mask_opencl(void *buffers[], void *cl_arg) {
  const struct ratio_mask_args *a = cl_arg;
  cl_ushort first[256];
  wsisa_cpu_ratio_table(a->threshold, first);
  cl_mem table = wsisa__cl_buffer(sizeof first, first);
  cl_int channels = (cl_int)STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
  cl_int num = a->num_channel, den = a->den_channel;
  WSISA__CL_IMAGE(ratio_mask, "wsisa_ratio_mask", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_VAL(channels), WSISA__CL_VAL(num), WSISA__CL_VAL(den),
                  WSISA__CL_VAL(table), WSISA__CL_MAT(buffers[1]));
  clReleaseMemObject(table);
}

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
  const struct ratio_mask_args a = {num_channel, den_channel, threshold};
  return WSISA__SUBMIT(ratio_mask, &a, sizeof a, rgb, mask);
}
