/* Codelet: fill holes of a binary mask, u8 0/255, as nscale's fillHoles(img,
 * conn) (docs/workflow.md levels 3, 5 and 7). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"
#include "codelets/morph_common.h"


struct fill_holes_args {
  int conn;
};

static void fill_holes_cpu(void *buffers[], void *cl_arg) {
  const struct fill_holes_args *a = cl_arg;
  wsisa_image mask = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_fill_holes(&mask, a->conn, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

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

struct starpu_opencl_program wsisa__fill_holes_program;

struct starpu_perfmodel wsisa__fill_holes_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_fill_holes_v2",
    .footprint = wsisa__footprint_args,
};

struct starpu_codelet wsisa__fill_holes_codelet = {
    .name = "fill_holes",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {fill_holes_cpu},
    .opencl_funcs = {fill_holes_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__fill_holes_model,
};

int wsisa_submit_fill_holes(starpu_data_handle_t mask, starpu_data_handle_t out, int conn) {
  const starpu_data_handle_t h[] = {mask, out};
  const size_t elem[] = {1, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem)) return WSISA_EINTERNAL;
  struct fill_holes_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->conn = conn;
  int ret = WSISA__INSERT(&wsisa__fill_holes_codelet, STARPU_R, mask, STARPU_W, out,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
