/* Codelet: comparison counts |A∩B|, |A|, |B| of two masks (u8, u8 -> vector
 * of 3 uint64). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


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
  wsisa__cl_reduce_rows(&wsisa__compare_program, "wsisa_compare_rows", "wsisa_compare_total", buffers, 2,
                        3 * sizeof(cl_ulong));
}

struct starpu_opencl_program wsisa__compare_program;

struct starpu_perfmodel wsisa__compare_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_compare_v2",
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
