/* Codelet: object count of a canonical label image (i32 -> vector of 1 uint64). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


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
  wsisa__cl_reduce_rows(&wsisa__count_labels_program, "wsisa_count_labels_rows", "wsisa_count_labels_total", buffers, 1,
                        sizeof(cl_int));
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
