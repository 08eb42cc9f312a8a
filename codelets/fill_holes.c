/* Codelet: fill holes of a binary mask, u8 0/255, as nscale's fillHoles(img,
 * conn) (docs/workflow.md levels 3, 5 and 7). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(fill_holes, 2, WSISA__BY_ARGS, STARPU_R, STARPU_W);

struct fill_holes_args {
  int conn;
};

WSISA__CPU_TASK(fill_holes, struct fill_holes_args,
                wsisa_cpu_fill_holes(WSISA__IMAGE(0, U8), a->conn, WSISA__IMAGE(1, U8)))

static void fill_holes_opencl(void *buffers[], void *cl_arg) {
  const struct fill_holes_args *a = cl_arg;
  const int width = (int)STARPU_MATRIX_GET_NX(buffers[1]);
  const int height = (int)STARPU_MATRIX_GET_NY(buffers[1]);
  wsisa__cl_matrix background = wsisa__cl_scratch(width, height, 1);
  cl_kernel kernel;
  cl_command_queue queue;
  cl_uint arg = 0;
  wsisa__cl_kernel(&wsisa__fill_holes_program, "wsisa_fill_holes_init", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg_mat(kernel, &arg, background);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[1]);
  starpu_opencl_release_kernel(kernel);
  /* The background reachable from the border: a reconstruction of 0/255
   * images, so the grey sweeps serve. */
  wsisa__cl_reconstruct_sweep(background, wsisa__cl_matrix_of(buffers[1]), a->conn, 0,
                              width, height);
  arg = 0;
  wsisa__cl_kernel(&wsisa__fill_holes_program, "wsisa_fill_holes_finish", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[1]);
  starpu_opencl_release_kernel(kernel);
  clReleaseMemObject(background.mem);
}

int wsisa_submit_fill_holes(starpu_data_handle_t mask, starpu_data_handle_t out, int conn) {
  const starpu_data_handle_t h[] = {mask, out};
  const size_t elem[] = {1, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem)) return WSISA_EINTERNAL;
  const struct fill_holes_args a = {.conn = conn};
  return WSISA__SUBMIT(fill_holes, &a, sizeof a, mask, out);
}
