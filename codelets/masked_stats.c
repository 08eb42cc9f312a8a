/* Codelet: lαβ statistics over a mask (f32 × 3, u8 -> vector of 7 doubles:
 * count, mean[3], std[3]). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


static void masked_stats_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image lab = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  double *stats = (double *)STARPU_VECTOR_GET_PTR(buffers[2]);
  int rc = wsisa_cpu_masked_stats(&lab, &mask, stats);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

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

struct starpu_opencl_program wsisa__masked_stats_program;

struct starpu_perfmodel wsisa__masked_stats_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_masked_stats_v1",
};

struct starpu_codelet wsisa__masked_stats_codelet = {
    .name = "masked_stats",
    .where = STARPU_CPU | STARPU_OPENCL,
    .can_execute = wsisa__can_execute_fp64,
    .cpu_funcs = {masked_stats_cpu},
    .opencl_funcs = {masked_stats_opencl},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__masked_stats_model,
};

int wsisa_submit_masked_stats(starpu_data_handle_t lab, starpu_data_handle_t mask,
                              starpu_data_handle_t stats) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){lab, mask},
                            (size_t[]){3 * sizeof(float), 1}) ||
      wsisa__check_vector(stats, WSISA_STATS_N, sizeof(double)))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__masked_stats_codelet, STARPU_R, lab, STARPU_R, mask,
                          STARPU_W, stats, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
