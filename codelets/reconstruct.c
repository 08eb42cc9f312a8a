/* Codelet: grey reconstruction by dilation of a marker under a mask, u8 or f32
 * (docs/workflow.md level 2). The pixel type follows the handles' element size. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(reconstruct, 5, WSISA__BY_ARGS, STARPU_R, STARPU_R, STARPU_W);

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

/* reconstruct.cl's TILE: the side of the blocks of phase 1. */
#define RECON_TILE 64
/* The work-items of a block's work-group, and the most of the one work-group
 * that runs the queues (phase 2). */
#define RECON_BLOCK_ITEMS 256
#define RECON_QUEUE_ITEMS 512
/* Phase 1's launches between two reads of whether a block is still to run:
 * batches of 4, 4, 8, 16, 32 and 64; after the last, phase 2 finishes. On
 * the sample's 2048² segmentation both reconstructions are done within 16
 * launches. Sweeps of whole rows and columns before the blocks (one
 * work-item per line) did not save launches there: a GPU runs such a sweep as
 * a few thousand long chains of dependent memory accesses, well under 1 % of
 * its work-items. */
#define RECON_BATCHES 6
#define RECON_BATCH(i) ((i) < 2 ? 4 : 4 << ((i) - 1))

/* Phase 2 (reconstruct.cl): the seed kernel queues what can still rise, one
 * work-group drains the queues. */
static void reconstruct_queues(wsisa__cl_matrix mask, wsisa__cl_matrix J, int conn,
                               int is_float, int width, int height) {
  static const char *names[2][2] = {{"wsisa_recon_seed_u8", "wsisa_recon_queue_u8"},
                                    {"wsisa_recon_seed_f32", "wsisa_recon_queue_f32"}};
  const size_t pixels = (size_t)width * (size_t)height;
  cl_mem stamp = wsisa__cl_buffer(pixels * sizeof(cl_int), NULL);
  cl_mem queue_mem = wsisa__cl_buffer(2 * pixels * sizeof(cl_int), NULL);
  cl_mem counts = wsisa__cl_zeros(2 * sizeof(cl_int));
  cl_kernel k[2];
  cl_command_queue queue;
  const cl_int c = conn, w = width, h = height;
  for (int i = 0; i < 2; i++) {
    wsisa__cl_kernel(&wsisa__reconstruct_program, names[is_float][i], &k[i], &queue);
    cl_uint arg = 0;
    wsisa__cl_arg_mat(k[i], &arg, mask);
    wsisa__cl_arg_mat(k[i], &arg, J);
    wsisa__cl_arg(k[i], &arg, sizeof c, &c);
    wsisa__cl_arg(k[i], &arg, sizeof stamp, &stamp);
    wsisa__cl_arg(k[i], &arg, sizeof queue_mem, &queue_mem);
    wsisa__cl_arg(k[i], &arg, sizeof counts, &counts);
    wsisa__cl_arg(k[i], &arg, sizeof w, &w);
    wsisa__cl_arg(k[i], &arg, sizeof h, &h);
  }
  const size_t local[2] = {16, 16};
  const size_t global[2] = {((size_t)width + 15) / 16 * 16, ((size_t)height + 15) / 16 * 16};
  wsisa__cl_run(k[0], queue, 2, global, local);
  size_t items = wsisa__cl_group_items(k[1], RECON_QUEUE_ITEMS);
  wsisa__cl_run(k[1], queue, 1, &items, &items);
  for (int i = 0; i < 2; i++) starpu_opencl_release_kernel(k[i]);
  clReleaseMemObject(counts);
  clReleaseMemObject(queue_mem);
  clReleaseMemObject(stamp);
}

void wsisa__cl_reconstruct_run(wsisa__cl_matrix mask, wsisa__cl_matrix J, int conn,
                               int is_float, int width, int height) {
  static const char *names[2] = {"wsisa_recon_block_u8", "wsisa_recon_block_f32"};
  const size_t blocks_x = ((size_t)width + RECON_TILE - 1) / RECON_TILE;
  const size_t blocks = blocks_x * (((size_t)height + RECON_TILE - 1) / RECON_TILE);
  cl_mem active = wsisa__cl_zeros(blocks * sizeof(cl_int));
  cl_mem pending = wsisa__cl_zeros(sizeof(cl_int));
  cl_kernel k;
  cl_command_queue queue;
  const cl_int c = conn, w = width, h = height;
  wsisa__cl_kernel(&wsisa__reconstruct_program, names[is_float], &k, &queue);
  cl_uint arg = 0;
  wsisa__cl_arg_mat(k, &arg, mask);
  wsisa__cl_arg_mat(k, &arg, J);
  wsisa__cl_arg(k, &arg, sizeof c, &c);
  wsisa__cl_arg(k, &arg, sizeof active, &active);
  wsisa__cl_arg(k, &arg, sizeof pending, &pending);
  const cl_uint launch_arg = arg++;
  wsisa__cl_arg(k, &arg, sizeof w, &w);
  wsisa__cl_arg(k, &arg, sizeof h, &h);
  const size_t items = wsisa__cl_group_items(k, RECON_BLOCK_ITEMS), global = blocks * items;
  cl_int launch = 0, stable = 0;
  for (int batch = 0; batch < RECON_BATCHES && !stable; batch++) {
    for (int i = 0; i < RECON_BATCH(batch); i++, launch++) {
      arg = launch_arg;
      wsisa__cl_arg(k, &arg, sizeof launch, &launch);
      wsisa__cl_run(k, queue, 1, &global, &items);
    }
    /* The last launch a block was woken for; stable when it has run. */
    stable = wsisa__cl_flag_read(queue, pending) < launch;
  }
  starpu_opencl_release_kernel(k);
  clReleaseMemObject(pending);
  clReleaseMemObject(active);
  if (!stable) reconstruct_queues(mask, J, conn, is_float, width, height);
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
