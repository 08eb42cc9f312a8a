/* Codelet: object count of a canonical label image (i32 -> vector of 1 uint64). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(count_labels, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

WSISA__CPU_TASK(count_labels, void,
                wsisa_cpu_count_labels(WSISA__IMAGE(0, I32), WSISA__VECTOR(1, uint64_t)))

static void count_labels_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa__cl_reduce_rows(&wsisa__count_labels_program, "wsisa_count_labels_rows",
                        "wsisa_count_labels_total", buffers, 1, sizeof(cl_int));
}

int wsisa_submit_count_labels(starpu_data_handle_t labels, starpu_data_handle_t count) {
  if (wsisa__check_matrices(1, (starpu_data_handle_t[]){labels}, (size_t[]){4}) ||
      wsisa__check_vector(count, 1, sizeof(uint64_t)))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(count_labels, NULL, 0, labels, count);
}
