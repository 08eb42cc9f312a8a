/* Codelet: object count of a canonical label image (i32 -> vector of 1 uint64). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(count_labels);

static void count_labels_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image labels = wsisa_image_from_buffer(buffers[0], WSISA_I32);
  uint64_t *count = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[1]);
  int rc = wsisa_cpu_count_labels(&labels, count);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void count_labels_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel rows_kernel, total_kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__count_labels_program, "wsisa_count_labels_rows", &rows_kernel, &queue);
  wsisa__cl_kernel(&wsisa__count_labels_program, "wsisa_count_labels_total", &total_kernel,
                   &queue);
  cl_int width = (cl_int)STARPU_MATRIX_GET_NX(buffers[0]);
  cl_int height = (cl_int)STARPU_MATRIX_GET_NY(buffers[0]);
  cl_mem rows = wsisa__cl_buffer((size_t)height * sizeof(cl_int), NULL);
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(rows_kernel, &arg, buffers[0]);
  wsisa__cl_arg(rows_kernel, &arg, sizeof rows, &rows);
  wsisa__cl_arg(rows_kernel, &arg, sizeof width, &width);
  wsisa__cl_arg(rows_kernel, &arg, sizeof height, &height);
  arg = 0;
  wsisa__cl_arg(total_kernel, &arg, sizeof rows, &rows);
  wsisa__cl_arg(total_kernel, &arg, sizeof height, &height);
  wsisa__cl_arg_vector(total_kernel, &arg, buffers[1]);
  const size_t row_range = (size_t)height, one = 1;
  wsisa__cl_run(rows_kernel, queue, 1, &row_range, NULL);
  wsisa__cl_run(total_kernel, queue, 1, &one, NULL);
  clReleaseMemObject(rows);
  starpu_opencl_release_kernel(rows_kernel);
  starpu_opencl_release_kernel(total_kernel);
}

struct starpu_opencl_program wsisa__count_labels_program;

struct starpu_perfmodel wsisa__count_labels_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_count_labels_v1",
};

struct starpu_codelet wsisa__count_labels_codelet = {
    .name = "count_labels",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {count_labels_cpu},
    .opencl_funcs = {count_labels_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__count_labels_model,
};

int wsisa_submit_count_labels(starpu_data_handle_t labels, starpu_data_handle_t count) {
  if (wsisa__check_matrices(1, (starpu_data_handle_t[]){labels}, (size_t[]){4}) ||
      wsisa__check_vector(count, 1, sizeof(uint64_t)))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__count_labels_codelet, STARPU_R, labels, STARPU_W, count, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
