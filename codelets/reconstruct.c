/* Codelet: grey reconstruction by dilation of a marker under a mask, u8 or f32
 * (docs/workflow.md level 2). The pixel type follows the handles' element size. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(reconstruct, 3, WSISA__BY_ARGS, STARPU_R, STARPU_R, STARPU_W);

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

/* Sweep rounds before the queues (reconstruct.cl's phase 1), u8 and f32: on
 * the workflow's 2048² inputs under PoCL, level 2 (u8) is fastest with two
 * (0: 2.4x the time, 1: 1.2x, 3: 1.2x), the h-minima's relief (f32) needs
 * the queues for little after one (0: 0.9x the time of 1, 2: 1.5x); one
 * keeps the single work-group of the queues short on a GPU. */
#define RECON_ROUNDS(is_float) ((is_float) ? 1 : 2)
/* The most work-items of the one work-group that runs the queues. */
#define RECON_QUEUE_ITEMS 512

void wsisa__cl_reconstruct_run(wsisa__cl_matrix mask, wsisa__cl_matrix J, int conn,
                               int is_float, int width, int height) {
  static const char *names[2][4] = {
      {"wsisa_recon_rows_u8", "wsisa_recon_cols_u8", "wsisa_recon_seed_u8",
       "wsisa_recon_queue_u8"},
      {"wsisa_recon_rows_f32", "wsisa_recon_cols_f32", "wsisa_recon_seed_f32",
       "wsisa_recon_queue_f32"}};
  const size_t pixels = (size_t)width * (size_t)height;
  cl_mem stamp = wsisa__cl_buffer(pixels * sizeof(cl_int), NULL);
  cl_mem queue_mem = wsisa__cl_buffer(2 * pixels * sizeof(cl_int), NULL);
  const cl_int zero[2] = {0, 0};
  cl_mem counts = wsisa__cl_buffer(sizeof zero, zero);
  cl_kernel k[4];
  cl_command_queue queue;
  const cl_int c = conn, w = width, h = height;
  for (int i = 0; i < 4; i++) {
    wsisa__cl_kernel(&wsisa__reconstruct_program, names[is_float][i], &k[i], &queue);
    cl_uint arg = 0;
    wsisa__cl_arg_mat(k[i], &arg, mask);
    wsisa__cl_arg_mat(k[i], &arg, J);
    wsisa__cl_arg(k[i], &arg, sizeof c, &c);
    if (i >= 2) {
      wsisa__cl_arg(k[i], &arg, sizeof stamp, &stamp);
      wsisa__cl_arg(k[i], &arg, sizeof queue_mem, &queue_mem);
      wsisa__cl_arg(k[i], &arg, sizeof counts, &counts);
    }
    wsisa__cl_arg(k[i], &arg, sizeof w, &w);
    wsisa__cl_arg(k[i], &arg, sizeof h, &h);
  }
  const size_t rows = (size_t)height, cols = (size_t)width;
  for (int round = 0; round < RECON_ROUNDS(is_float); round++) {
    wsisa__cl_run(k[0], queue, 1, &rows, NULL);
    wsisa__cl_run(k[1], queue, 1, &cols, NULL);
  }
  const size_t local[2] = {16, 16};
  const size_t global[2] = {(cols + 15) / 16 * 16, (rows + 15) / 16 * 16};
  wsisa__cl_run(k[2], queue, 2, global, local);
  size_t items = RECON_QUEUE_ITEMS;
  cl_device_id device;
  starpu_opencl_get_device(starpu_worker_get_devid(starpu_worker_get_id()), &device);
  size_t most;
  wsisa__cl_check(clGetKernelWorkGroupInfo(k[3], device, CL_KERNEL_WORK_GROUP_SIZE,
                                           sizeof most, &most, NULL),
                  "work-group size");
  if (most < items) items = most;
  wsisa__cl_run(k[3], queue, 1, &items, &items);
  for (int i = 0; i < 4; i++) starpu_opencl_release_kernel(k[i]);
  clReleaseMemObject(counts);
  clReleaseMemObject(queue_mem);
  clReleaseMemObject(stamp);
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
  wsisa__cl_reconstruct_run(wsisa__cl_matrix_of(buffers[1]), wsisa__cl_matrix_of(buffers[2]),
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
