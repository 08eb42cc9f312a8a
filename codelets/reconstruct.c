/* Codelet: grey reconstruction by dilation of a marker under a mask, u8 or f32
 * (docs/workflow.md level 2). The pixel type follows the handles' element size. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(reconstruct, 2, WSISA__BY_ARGS, STARPU_R, STARPU_R, STARPU_W);

struct reconstruct_args {
  int conn;
  int is_float;
};

static void reconstruct_cpu(void *buffers[], void *cl_arg) {
  const struct reconstruct_args *a = cl_arg;
  const wsisa_dtype type = a->is_float ? WSISA_F32 : WSISA_U8;
  wsisa_image marker = wsisa_image_from_buffer(buffers[0], type);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], type);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], type);
  WSISA__KERNEL(wsisa_cpu_reconstruct(&marker, &mask, a->conn, &out));
}

void wsisa__cl_reconstruct_sweep(wsisa__cl_matrix mask, wsisa__cl_matrix J, int conn,
                                 int is_float, int width, int height) {
  cl_kernel rows, cols;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__reconstruct_program,
                   is_float ? "wsisa_recon_rows_f32" : "wsisa_recon_rows_u8", &rows, &queue);
  wsisa__cl_kernel(&wsisa__reconstruct_program,
                   is_float ? "wsisa_recon_cols_f32" : "wsisa_recon_cols_u8", &cols, &queue);
  cl_kernel both[2] = {rows, cols};
  cl_int c = conn;
  cl_uint arg = 0;
  for (int k = 0; k < 2; k++) {
    arg = 0;
    wsisa__cl_arg_mat(both[k], &arg, mask);
    wsisa__cl_arg_mat(both[k], &arg, J);
    wsisa__cl_arg(both[k], &arg, sizeof c, &c);
  }
  wsisa__cl_sweep(queue, rows, cols, arg, width, height);
  starpu_opencl_release_kernel(rows);
  starpu_opencl_release_kernel(cols);
}

static void reconstruct_opencl(void *buffers[], void *cl_arg) {
  const struct reconstruct_args *a = cl_arg;
  cl_kernel kernel;
  cl_command_queue queue;
  cl_uint arg = 0;
  wsisa__cl_kernel(&wsisa__reconstruct_program,
                   a->is_float ? "wsisa_recon_init_f32" : "wsisa_recon_init_u8", &kernel,
                   &queue);
  for (int i = 0; i < 3; i++) wsisa__cl_arg_matrix(kernel, &arg, buffers[i]);
  wsisa__cl_run_image(kernel, queue, &arg, buffers[1]);
  starpu_opencl_release_kernel(kernel);
  wsisa__cl_reconstruct_sweep(wsisa__cl_matrix_of(buffers[1]), wsisa__cl_matrix_of(buffers[2]),
                              a->conn, a->is_float, (int)STARPU_MATRIX_GET_NX(buffers[1]),
                              (int)STARPU_MATRIX_GET_NY(buffers[1]));
  if (a->is_float) {
    arg = 0;
    wsisa__cl_kernel(&wsisa__reconstruct_program, "wsisa_recon_finish_f32", &kernel, &queue);
    wsisa__cl_arg_matrix(kernel, &arg, buffers[2]);
    wsisa__cl_run_image(kernel, queue, &arg, buffers[2]);
    starpu_opencl_release_kernel(kernel);
  }
}

int wsisa_submit_reconstruct(starpu_data_handle_t marker, starpu_data_handle_t mask,
                             starpu_data_handle_t out, int conn) {
  const starpu_data_handle_t h[] = {marker, mask, out};
  const size_t elem = starpu_matrix_get_elemsize(mask), elems[] = {elem, elem, elem};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if ((elem != 1 && elem != 4) || wsisa__check_matrices(3, h, elems)) return WSISA_EINTERNAL;
  const struct reconstruct_args a = {.conn = conn, .is_float = elem == 4};
  return WSISA__SUBMIT(reconstruct, &a, sizeof a, marker, mask, out);
}
