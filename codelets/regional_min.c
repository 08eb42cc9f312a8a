/* Codelet: regional minima of an f32 image as a u8 0/255 mask (docs/workflow.md
 * level 6: the watershed markers). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"
#include "codelets/morph_common.h"


struct regional_min_args {
  int conn;
};

static void regional_min_cpu(void *buffers[], void *cl_arg) {
  const struct regional_min_args *a = cl_arg;
  wsisa_image in = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image out = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_regional_min(&in, a->conn, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

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

struct starpu_opencl_program wsisa__regional_min_program;

struct starpu_perfmodel wsisa__regional_min_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_regional_min_v2",
    .footprint = wsisa__footprint_args,
};

struct starpu_codelet wsisa__regional_min_codelet = {
    .name = "regional_min",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {regional_min_cpu},
    .opencl_funcs = {regional_min_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__regional_min_model,
};

int wsisa_submit_regional_min(starpu_data_handle_t in, starpu_data_handle_t mask_out,
                              int conn) {
  const starpu_data_handle_t h[] = {in, mask_out};
  const size_t elem[] = {4, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem)) return WSISA_EINTERNAL;
  struct regional_min_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->conn = conn;
  int ret = WSISA__INSERT(&wsisa__regional_min_codelet, STARPU_R, in, STARPU_W, mask_out,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
