/* Codelet: binary reconstruction, u8 0/255 (DESIGN §3 levels 1 and 5). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"
#include "codelets/morph_common.h"

WSISA__OP_DECLARE(bin_reconstruct);

struct bin_reconstruct_args {
  int conn;
};

static void bin_reconstruct_cpu(void *buffers[], void *cl_arg) {
  const struct bin_reconstruct_args *a = cl_arg;
  wsisa_image seed = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  int rc = wsisa_cpu_bin_reconstruct(&seed, &mask, a->conn, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

void wsisa__cl_flood(void *state, int conn, cl_uchar open, cl_uchar reached,
                     cl_uchar still_open) {
  cl_kernel rows, cols, kernel;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__bin_reconstruct_program, "wsisa_flood_rows", &rows, &queue);
  wsisa__cl_kernel(&wsisa__bin_reconstruct_program, "wsisa_flood_cols", &cols, &queue);
  cl_kernel both[2] = {rows, cols};
  cl_int c = conn;
  cl_uint arg = 0;
  for (int k = 0; k < 2; k++) {
    arg = 0;
    wsisa__cl_arg_matrix(both[k], &arg, state);
    wsisa__cl_arg(both[k], &arg, sizeof open, &open);
    wsisa__cl_arg(both[k], &arg, sizeof reached, &reached);
    wsisa__cl_arg(both[k], &arg, sizeof c, &c);
  }
  wsisa__cl_sweep(queue, rows, cols, arg, (int)STARPU_MATRIX_GET_NX(state),
                  (int)STARPU_MATRIX_GET_NY(state));
  starpu_opencl_release_kernel(rows);
  starpu_opencl_release_kernel(cols);

  arg = 0;
  wsisa__cl_kernel(&wsisa__bin_reconstruct_program, "wsisa_flood_finish", &kernel, &queue);
  wsisa__cl_arg_matrix(kernel, &arg, state);
  wsisa__cl_arg(kernel, &arg, sizeof open, &open);
  wsisa__cl_arg(kernel, &arg, sizeof still_open, &still_open);
  wsisa__cl_run_image(kernel, queue, &arg, state);
  starpu_opencl_release_kernel(kernel);
}

static void bin_reconstruct_opencl(void *buffers[], void *cl_arg) {
  const struct bin_reconstruct_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  cl_uint arg = 0;
  wsisa__cl_kernel(&wsisa__bin_reconstruct_program, "wsisa_bin_reconstruct_init", &kernel,
                   &queue);
  for (int i = 0; i < 3; i++) wsisa__cl_arg_matrix(kernel, &arg, buffers[i]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[2]);
  starpu_opencl_release_kernel(kernel);
  /* Mask pixels start open (1), seeds reached (255); unreached ones end off. */
  wsisa__cl_flood(buffers[2], a->conn, 1, 255, 0);
}

struct starpu_opencl_program wsisa__bin_reconstruct_program;

struct starpu_perfmodel wsisa__bin_reconstruct_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_bin_reconstruct_v1",
    .footprint = wsisa__footprint_args,
};

struct starpu_codelet wsisa__bin_reconstruct_codelet = {
    .name = "bin_reconstruct",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {bin_reconstruct_cpu},
    .opencl_funcs = {bin_reconstruct_opencl},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__bin_reconstruct_model,
};

int wsisa_submit_bin_reconstruct(starpu_data_handle_t seed, starpu_data_handle_t mask,
                                 starpu_data_handle_t out, int conn) {
  const starpu_data_handle_t h[] = {seed, mask, out};
  const size_t elem[] = {1, 1, 1};
  if (wsisa__check_images(h, elem, 3) || wsisa__check_conn(conn)) return WSISA_EUSAGE;
  struct bin_reconstruct_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->conn = conn;
  int ret = WSISA__INSERT(&wsisa__bin_reconstruct_codelet, STARPU_R, seed, STARPU_R, mask,
                          STARPU_W, out, STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
