/* Codelet: fill holes of a binary mask, u8 0/255, as nscale's fillHoles(img,
 * conn) (docs/workflow.md levels 3, 5 and 7). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(fill_holes, 5, WSISA__BY_ARGS, STARPU_R, STARPU_W);

struct fill_holes_args {
  int conn;
};

WSISA__CPU_TASK(fill_holes, struct fill_holes_args,
                wsisa_cpu_fill_holes(WSISA__IMAGE(0, U8), a->conn, WSISA__IMAGE(1, U8)))

/* The background's components: union-find labels, the roots of those on
 * the image border marked; every pixel but theirs is foreground. */
static void fill_holes_opencl(void *buffers[], void *cl_arg) {
  const struct fill_holes_args *a = cl_arg;
  cl_mem lab = wsisa__cl_label_roots(buffers[0], a->conn, 1);
  WSISA__CL_IMAGE(fill_holes, "wsisa_fill_holes_mark", buffers[1], WSISA__CL_VAL(lab));
  wsisa__cl_label_keep_marked(lab, 1, buffers[1]);
  clReleaseMemObject(lab);
}

int wsisa_submit_fill_holes(starpu_data_handle_t mask, starpu_data_handle_t out, int conn) {
  const starpu_data_handle_t h[] = {mask, out};
  const size_t elem[] = {1, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem)) return WSISA_EINTERNAL;
  const struct fill_holes_args a = {.conn = conn};
  return WSISA__SUBMIT(fill_holes, &a, sizeof a, mask, out);
}
