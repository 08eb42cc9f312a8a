/* Codelet: binary reconstruction, u8 0/255 (docs/workflow.md levels 1 and 5). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"
#include "codelets/morph_common.h"


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

struct starpu_opencl_program wsisa__bin_reconstruct_program;

struct starpu_perfmodel wsisa__bin_reconstruct_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_bin_reconstruct_v2",
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
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(3, h, elem)) return WSISA_EINTERNAL;
  struct bin_reconstruct_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->conn = conn;
  int ret = WSISA__INSERT(&wsisa__bin_reconstruct_codelet, STARPU_R, seed, STARPU_R, mask,
                          STARPU_W, out, STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
