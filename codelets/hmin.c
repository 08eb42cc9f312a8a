/* Codelet: h-minima transform of an f32 image (docs/workflow.md level 6). */
#include <math.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"
#include "codelets/morph_common.h"


struct hmin_args {
  float h;
  int conn;
};

static void hmin_cpu(void *buffers[], void *cl_arg) {
  const struct hmin_args *a = cl_arg;
  wsisa_image in = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image out = wsisa_image_from_buffer(buffers[1], WSISA_F32);
  int rc = wsisa_cpu_hmin(&in, a->h, a->conn, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

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
  wsisa__cl_reconstruct_sweep(mask, wsisa__cl_matrix_of(buffers[1]), a->conn, 1, width,
                              height);
  arg = 0;
  wsisa__cl_kernel(&wsisa__hmin_program, "wsisa_hmin_finish", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, buffers[1]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[1]);
  starpu_opencl_release_kernel(kernel);
  clReleaseMemObject(mask.mem);
}

struct starpu_opencl_program wsisa__hmin_program;

struct starpu_perfmodel wsisa__hmin_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_hmin_v2",
    .footprint = wsisa__footprint_args,
};

struct starpu_codelet wsisa__hmin_codelet = {
    .name = "hmin",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {hmin_cpu},
    .opencl_funcs = {hmin_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__hmin_model,
};

int wsisa_submit_hmin(starpu_data_handle_t in, starpu_data_handle_t out, float h, int conn) {
  const starpu_data_handle_t hs[] = {in, out};
  const size_t elem[] = {4, 4};
  if (!(h >= 0) || isinf(h) || wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, hs, elem)) return WSISA_EINTERNAL;
  struct hmin_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->h = h;
  a->conn = conn;
  int ret = WSISA__INSERT(&wsisa__hmin_codelet, STARPU_R, in, STARPU_W, out, STARPU_CL_ARGS,
                          a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
