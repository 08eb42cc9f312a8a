/* Codelet: h-minima transform of an f32 image (docs/workflow.md level 6). */
#include <math.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(hmin, 4, WSISA__BY_ARGS, STARPU_R, STARPU_W);

struct hmin_args {
  float h;
  int conn;
};

WSISA__CPU_TASK(hmin, struct hmin_args,
                wsisa_cpu_hmin(WSISA__IMAGE(0, F32), a->h, a->conn, WSISA__IMAGE(1, F32)))

static void hmin_opencl(void *buffers[], void *cl_arg) {
  const struct hmin_args *a = cl_arg;
  const int width = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  const int height = (int)STARPU_MATRIX_GET_NY(buffers[0]);
  wsisa__cl_matrix mask = wsisa__cl_scratch(width, height, sizeof(float));
  cl_kernel kernel;
  cl_command_queue queue;
  cl_uint arg = 0;
  cl_float h = a->h;
  wsisa__cl_kernel(&wsisa__hmin_program, "wsisa_hmin_init", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[0]);
  wsisa__cl_arg(kernel, &arg, sizeof h, &h);
  wsisa__cl_arg_mat(kernel, &arg, mask);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[1]);
  starpu_opencl_release_kernel(kernel);
  /* Reconstruction by erosion of in + h over in = the negation of the
   * reconstruction by dilation of -(in + h) under -in. */
  wsisa__cl_reconstruct_run(mask, wsisa__cl_matrix_of(buffers[1]), a->conn, 1, width, height);
  arg = 0;
  wsisa__cl_kernel(&wsisa__hmin_program, "wsisa_hmin_finish", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[1]);
  starpu_opencl_release_kernel(kernel);
  clReleaseMemObject(mask.mem);
}

int wsisa_submit_hmin(starpu_data_handle_t in, starpu_data_handle_t out, float h, int conn) {
  const starpu_data_handle_t hs[] = {in, out};
  const size_t elem[] = {4, 4};
  if (!(h >= 0) || isinf(h) || wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, hs, elem)) return WSISA_EINTERNAL;
  const struct hmin_args a = {.h = h, .conn = conn};
  return WSISA__SUBMIT(hmin, &a, sizeof a, in, out);
}
