/* Codelet: Reinhard colour transfer of the foreground (f32 × 3, u8 mask,
 * statistics vector -> f32 × 3). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(color_transfer, 1, WSISA__FP64, STARPU_R, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(color_transfer, void,
                wsisa_cpu_color_transfer(WSISA__IMAGE(0, F32), WSISA__IMAGE(1, U8),
                                         WSISA__VECTOR(2, const double),
                                         WSISA__IMAGE(3, F32)))

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

int wsisa_submit_color_transfer(starpu_data_handle_t lab, starpu_data_handle_t mask,
                                starpu_data_handle_t stats, starpu_data_handle_t lab_out) {
  if (wsisa__check_matrices(3, (starpu_data_handle_t[]){lab, mask, lab_out},
                            (size_t[]){3 * sizeof(float), 1, 3 * sizeof(float)}) ||
      wsisa__check_vector(stats, WSISA_STATS_N, sizeof(double)))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(color_transfer, NULL, 0, lab, mask, stats, lab_out);
}
