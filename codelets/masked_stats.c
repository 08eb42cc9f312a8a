/* Codelet: lαβ statistics over a mask (f32 × 3, u8 -> vector of 7 doubles:
 * count, mean[3], std[3]). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(masked_stats, 1, WSISA__FP64, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(masked_stats, void,
                wsisa_cpu_masked_stats(WSISA__IMAGE(0, F32), WSISA__IMAGE(1, U8),
                                       WSISA__VECTOR(2, double)))

/* Row sums, then their total, twice (mean first, deviations second): the
 * summation order of the CPU kernel, so the bits match. */
static void masked_stats_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel rows_kernel, total_kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__masked_stats_program, "wsisa_masked_stats_rows", &rows_kernel,
                   &queue);
  wsisa__cl_kernel(&wsisa__masked_stats_program, "wsisa_masked_stats_total",
                   &total_kernel, &queue);
  cl_int width = (cl_int)STARPU_MATRIX_GET_NX(buffers[0]);
  cl_int height = (cl_int)STARPU_MATRIX_GET_NY(buffers[0]);
  cl_mem rows = wsisa__cl_buffer((size_t)height * 4 * sizeof(cl_double), NULL);
  cl_uint rows_arg = 0, total_arg = 0;
  wsisa__cl_arg_matrix(rows_kernel, &rows_arg, buffers[0]);
  wsisa__cl_arg_matrix(rows_kernel, &rows_arg, buffers[1]);
  wsisa__cl_arg_vector(rows_kernel, &rows_arg, buffers[2]);
  wsisa__cl_arg(rows_kernel, &rows_arg, sizeof rows, &rows);
  const cl_uint rows_pass = rows_arg++;
  wsisa__cl_arg(rows_kernel, &rows_arg, sizeof width, &width);
  wsisa__cl_arg(rows_kernel, &rows_arg, sizeof height, &height);
  wsisa__cl_arg(total_kernel, &total_arg, sizeof rows, &rows);
  wsisa__cl_arg(total_kernel, &total_arg, sizeof height, &height);
  wsisa__cl_arg_vector(total_kernel, &total_arg, buffers[2]);
  const cl_uint total_pass = total_arg;
  const size_t row_range = (size_t)height, one = 1;
  for (cl_int pass = 0; pass < 2; pass++) {
    cl_uint i = rows_pass, j = total_pass;
    wsisa__cl_arg(rows_kernel, &i, sizeof pass, &pass);
    wsisa__cl_arg(total_kernel, &j, sizeof pass, &pass);
    wsisa__cl_run(rows_kernel, queue, 1, &row_range, NULL);
    wsisa__cl_run(total_kernel, queue, 1, &one, NULL);
  }
  clReleaseMemObject(rows);
  starpu_opencl_release_kernel(rows_kernel);
  starpu_opencl_release_kernel(total_kernel);
}

int wsisa_submit_masked_stats(starpu_data_handle_t lab, starpu_data_handle_t mask,
                              starpu_data_handle_t stats) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){lab, mask},
                            (size_t[]){3 * sizeof(float), 1}) ||
      wsisa__check_vector(stats, WSISA_STATS_N, sizeof(double)))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(masked_stats, NULL, 0, lab, mask, stats);
}
