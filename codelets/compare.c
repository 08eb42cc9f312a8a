/* Codelet: comparison counts |A∩B|, |A|, |B| of two masks (u8, u8 -> vector
 * of 3 uint64). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(compare, 2, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(compare, void,
                wsisa_cpu_compare(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8),
                                  WSISA__VECTOR(2, uint64_t)))

static void compare_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa__cl_reduce_rows(&wsisa__compare_program, "wsisa_compare_rows", "wsisa_compare_total",
                        buffers, 2, 3 * sizeof(cl_ulong));
}

int wsisa_submit_compare(starpu_data_handle_t a, starpu_data_handle_t b,
                         starpu_data_handle_t counts) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){a, b}, (size_t[]){1, 1}) ||
      wsisa__check_vector(counts, 3, sizeof(uint64_t)))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(compare, NULL, 0, a, b, counts);
}
