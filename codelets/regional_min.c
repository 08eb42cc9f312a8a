/* Codelet: regional minima of an f32 image as a u8 0/255 mask (docs/workflow.md
 * level 6: the watershed markers). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(regional_min, 4, WSISA__BY_ARGS, STARPU_R, STARPU_W);

struct regional_min_args {
  int conn;
};

WSISA__CPU_TASK(regional_min, struct regional_min_args,
                wsisa_cpu_regional_min(WSISA__IMAGE(0, F32), a->conn, WSISA__IMAGE(1, U8)))

/* The plateaus by union-find, the roots of those with a lower neighbour
 * marked, the rest on: five launches, no host round trip. */
static void regional_min_opencl(void *buffers[], void *cl_arg) {
  const struct regional_min_args *a = cl_arg;
  const size_t pixels = STARPU_MATRIX_GET_NX(buffers[0]) * STARPU_MATRIX_GET_NY(buffers[0]);
  cl_mem lab = wsisa__cl_plateau_roots(buffers[0], a->conn);
  cl_mem low = wsisa__cl_zeros(pixels);
  WSISA__CL_IMAGE(regional_min, "wsisa_regional_min_mark", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_INT(a->conn), WSISA__CL_VAL(lab), WSISA__CL_VAL(low));
  WSISA__CL_IMAGE(regional_min, "wsisa_regional_min_write", buffers[0], WSISA__CL_VAL(lab),
                  WSISA__CL_VAL(low), WSISA__CL_MAT(buffers[1]));
  clReleaseMemObject(low);
  clReleaseMemObject(lab);
}

int wsisa_submit_regional_min(starpu_data_handle_t in, starpu_data_handle_t mask_out,
                              int conn) {
  const starpu_data_handle_t h[] = {in, mask_out};
  const size_t elem[] = {4, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem)) return WSISA_EINTERNAL;
  const struct regional_min_args a = {.conn = conn};
  return WSISA__SUBMIT(regional_min, &a, sizeof a, in, mask_out);
}
