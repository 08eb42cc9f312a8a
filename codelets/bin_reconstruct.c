/* Codelet: binary reconstruction, u8 0/255 (docs/workflow.md levels 1 and 5). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(bin_reconstruct, 2, WSISA__BY_ARGS, STARPU_R, STARPU_R, STARPU_W);

struct bin_reconstruct_args {
  int conn;
};

WSISA__CPU_TASK(bin_reconstruct, struct bin_reconstruct_args,
                wsisa_cpu_bin_reconstruct(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8), a->conn,
                                          WSISA__IMAGE(2, U8)))

static void bin_reconstruct_opencl(void *buffers[], void *cl_arg) {
  const struct bin_reconstruct_args *a = cl_arg;
  const int width = (int)STARPU_MATRIX_GET_NX(buffers[2]);
  const int height = (int)STARPU_MATRIX_GET_NY(buffers[2]);
  wsisa__cl_matrix bin = wsisa__cl_scratch(width, height, 1);
  cl_kernel kernel;
  cl_command_queue queue;
  cl_uint arg = 0;
  wsisa__cl_kernel(&wsisa__bin_reconstruct_program, "wsisa_bin_reconstruct_init", &kernel,
                   &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_arg_mat(kernel, &arg, bin);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[2]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[2]);
  starpu_opencl_release_kernel(kernel);
  /* On 0/255 images the grey reconstruction is the binary one. */
  wsisa__cl_reconstruct_sweep(bin, wsisa__cl_matrix_of(buffers[2]), a->conn, 0, width,
                              height);
  clReleaseMemObject(bin.mem);
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
