/* Codelet: binary reconstruction, u8 0/255 (docs/workflow.md levels 1 and 5). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(bin_reconstruct, 4, WSISA__BY_ARGS, STARPU_R, STARPU_R, STARPU_W);

struct bin_reconstruct_args {
  int conn;
};

WSISA__CPU_TASK(bin_reconstruct, struct bin_reconstruct_args,
                wsisa_cpu_bin_reconstruct(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8), a->conn,
                                          WSISA__IMAGE(2, U8)))

/* The mask's components that hold a seed pixel: union-find labels, the
 * roots under a seed marked, those components kept. */
static void bin_reconstruct_opencl(void *buffers[], void *cl_arg) {
  const struct bin_reconstruct_args *a = cl_arg;
  cl_mem lab = wsisa__cl_label_roots(buffers[1], a->conn, 0);
  WSISA__CL_IMAGE(bin_reconstruct, "wsisa_bin_reconstruct_mark", buffers[2],
                  WSISA__CL_MAT(buffers[0]), WSISA__CL_VAL(lab));
  wsisa__cl_label_keep_marked(lab, 0, buffers[2]);
  clReleaseMemObject(lab);
}

int wsisa_submit_bin_reconstruct(starpu_data_handle_t seed, starpu_data_handle_t mask,
                                 starpu_data_handle_t out, int conn) {
  const starpu_data_handle_t h[] = {seed, mask, out};
  const size_t elem[] = {1, 1, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(3, h, elem)) return WSISA_EINTERNAL;
  const struct bin_reconstruct_args a = {.conn = conn};
  return WSISA__SUBMIT(bin_reconstruct, &a, sizeof a, seed, mask, out);
}
