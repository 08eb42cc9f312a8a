/* Codelet: regional minima of an f32 image as a u8 0/255 mask (docs/workflow.md
 * level 6: the watershed markers). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(regional_min, 2, WSISA__BY_ARGS, STARPU_R, STARPU_W);

struct regional_min_args {
  int conn;
};

WSISA__CPU_TASK(regional_min, struct regional_min_args,
                wsisa_cpu_regional_min(WSISA__IMAGE(0, F32), a->conn, WSISA__IMAGE(1, U8)))

static void regional_min_opencl(void *buffers[], void *cl_arg) {
  const struct regional_min_args *a = cl_arg;
  cl_kernel kernel, rows, cols;
  cl_command_queue queue;
  cl_int conn = a->conn;
  cl_uint arg = 0;
  wsisa__cl_kernel(&wsisa__regional_min_program, "wsisa_regional_min_init", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof conn, &conn);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[0]);
  starpu_opencl_release_kernel(kernel);

  wsisa__cl_kernel(&wsisa__regional_min_program, "wsisa_regional_min_rows", &rows, &queue);
  wsisa__cl_kernel(&wsisa__regional_min_program, "wsisa_regional_min_cols", &cols, &queue);
  cl_kernel both[2] = {rows, cols};
  for (int k = 0; k < 2; k++) {
    arg = 0;
    wsisa__cl_arg_matrix(both[k], &arg, buffers[0]);
    wsisa__cl_arg(both[k], &arg, sizeof conn, &conn);
    wsisa__cl_arg_matrix(both[k], &arg, buffers[1]);
  }
  wsisa__cl_sweep(queue, rows, cols, arg, (int)STARPU_MATRIX_GET_NX(buffers[0]),
                  (int)STARPU_MATRIX_GET_NY(buffers[0]));
  starpu_opencl_release_kernel(rows);
  starpu_opencl_release_kernel(cols);
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
