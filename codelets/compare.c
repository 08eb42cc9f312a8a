/* Codelet: comparison counts |A∩B|, |A|, |B| of two masks (u8, u8 -> vector
 * of 3 uint64). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(compare);

static void compare_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image a = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image b = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  uint64_t *counts = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[2]);
  int rc = wsisa_cpu_compare(&a, &b, counts);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void compare_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel rows_kernel, total_kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__compare_program, "wsisa_compare_rows", &rows_kernel, &queue);
  wsisa__cl_kernel(&wsisa__compare_program, "wsisa_compare_total", &total_kernel, &queue);
  cl_int width = (cl_int)STARPU_MATRIX_GET_NX(buffers[0]);
  cl_int height = (cl_int)STARPU_MATRIX_GET_NY(buffers[0]);
  cl_mem rows = wsisa__cl_buffer((size_t)height * 3 * sizeof(cl_ulong), NULL);
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(rows_kernel, &arg, buffers[0]);
  wsisa__cl_arg_matrix(rows_kernel, &arg, buffers[1]);
  wsisa__cl_arg(rows_kernel, &arg, sizeof rows, &rows);
  wsisa__cl_arg(rows_kernel, &arg, sizeof width, &width);
  wsisa__cl_arg(rows_kernel, &arg, sizeof height, &height);
  arg = 0;
  wsisa__cl_arg(total_kernel, &arg, sizeof rows, &rows);
  wsisa__cl_arg(total_kernel, &arg, sizeof height, &height);
  wsisa__cl_arg_vector(total_kernel, &arg, buffers[2]);
  const size_t row_range = (size_t)height, one = 1;
  wsisa__cl_run(rows_kernel, queue, 1, &row_range, NULL);
  wsisa__cl_run(total_kernel, queue, 1, &one, NULL);
  clReleaseMemObject(rows);
  starpu_opencl_release_kernel(rows_kernel);
  starpu_opencl_release_kernel(total_kernel);
}

struct starpu_opencl_program wsisa__compare_program;

struct starpu_perfmodel wsisa__compare_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_compare_v1",
};

struct starpu_codelet wsisa__compare_codelet = {
    .name = "compare",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {compare_cpu},
    .opencl_funcs = {compare_opencl},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__compare_model,
};

int wsisa_submit_compare(starpu_data_handle_t a, starpu_data_handle_t b,
                         starpu_data_handle_t counts) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){a, b}, (size_t[]){1, 1}) ||
      wsisa__check_vector(counts, 3, sizeof(uint64_t)))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__compare_codelet, STARPU_R, a, STARPU_R, b, STARPU_W,
                          counts, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
