/* Codelet: connected-component labelling, u8 mask -> i32 canonical labels
 * (docs/workflow.md, levels 4, 6, 7). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(label, 3, WSISA__PLAIN, STARPU_R, STARPU_W);

struct label_args {
  int conn;
};

WSISA__CPU_TASK(label, struct label_args,
                wsisa_cpu_label(WSISA__IMAGE(0, U8), a->conn, WSISA__IMAGE(1, I32)))

/* label.cl's LTILE, and the work-items of a block's work-group. */
#define LABEL_TILE 32
#define LABEL_BLOCK_ITEMS 256

/* wsisa__cl_label_roots, or with `plateaus` wsisa__cl_plateau_roots: the
 * blocks, the pairs across their borders, compress; three launches, no wait
 * on the host between them. */
static cl_mem label_components(void *buffer, int conn, int off, int plateaus) {
  const size_t width = STARPU_MATRIX_GET_NX(buffer);
  const size_t height = STARPU_MATRIX_GET_NY(buffer);
  cl_mem lab = wsisa__cl_buffer(width * height * sizeof(cl_int), NULL);
  cl_kernel block, merge, compress;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__label_program,
                   plateaus ? "wsisa_label_block_equal" : "wsisa_label_block", &block, &queue);
  wsisa__cl_kernel(&wsisa__label_program,
                   plateaus ? "wsisa_label_merge_equal" : "wsisa_label_merge", &merge, &queue);
  wsisa__cl_kernel(&wsisa__label_program, "wsisa_label_compress", &compress, &queue);
  cl_uint arg = 0;
  const cl_int off_arg = off, conn_arg = conn, width_arg = (cl_int)width,
               height_arg = (cl_int)height;
  wsisa__cl_arg_matrix(block, &arg, buffer);
  if (!plateaus) wsisa__cl_arg(block, &arg, sizeof off_arg, &off_arg);
  wsisa__cl_arg(block, &arg, sizeof lab, &lab);
  wsisa__cl_arg(block, &arg, sizeof conn_arg, &conn_arg);
  wsisa__cl_arg(block, &arg, sizeof width_arg, &width_arg);
  wsisa__cl_arg(block, &arg, sizeof height_arg, &height_arg);
  const size_t blocks = (width + LABEL_TILE - 1) / LABEL_TILE *
                        ((height + LABEL_TILE - 1) / LABEL_TILE);
  const size_t items = wsisa__cl_group_items(block, LABEL_BLOCK_ITEMS);
  const size_t global = blocks * items;
  wsisa__cl_run(block, queue, 1, &global, &items);
  arg = 0;
  if (plateaus) wsisa__cl_arg_matrix(merge, &arg, buffer);
  wsisa__cl_arg(merge, &arg, sizeof lab, &lab);
  wsisa__cl_arg(merge, &arg, sizeof conn_arg, &conn_arg);
  wsisa__cl_run_image(merge, queue, &arg, buffer);
  arg = 0;
  wsisa__cl_arg(compress, &arg, sizeof lab, &lab);
  wsisa__cl_run_image(compress, queue, &arg, buffer);
  starpu_opencl_release_kernel(block);
  starpu_opencl_release_kernel(merge);
  starpu_opencl_release_kernel(compress);
  return lab;
}

cl_mem wsisa__cl_label_roots(void *mask_buffer, int conn, int off) {
  return label_components(mask_buffer, conn, off, 0);
}

cl_mem wsisa__cl_plateau_roots(void *in_buffer, int conn) {
  return label_components(in_buffer, conn, 0, 1);
}

void wsisa__cl_label_keep_marked(cl_mem lab, int invert, void *out_buffer) {
  cl_kernel keep;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__label_program, "wsisa_label_keep_marked", &keep, &queue);
  cl_uint arg = 0;
  cl_int invert_arg = invert;
  wsisa__cl_arg(keep, &arg, sizeof lab, &lab);
  wsisa__cl_arg(keep, &arg, sizeof invert_arg, &invert_arg);
  wsisa__cl_arg_matrix(keep, &arg, out_buffer);
  wsisa__cl_run_image(keep, queue, &arg, out_buffer);
  starpu_opencl_release_kernel(keep);
}

static void label_opencl(void *buffers[], void *cl_arg) {
  const struct label_args *a = cl_arg;
  void *mask = buffers[0], *out = buffers[1];
  const size_t height = STARPU_MATRIX_GET_NY(mask);
  cl_int width_arg = (cl_int)STARPU_MATRIX_GET_NX(mask), height_arg = (cl_int)height;
  cl_mem lab = wsisa__cl_label_roots(mask, a->conn, 0);
  cl_mem row_roots = wsisa__cl_buffer(height * sizeof(cl_int), NULL);
  cl_kernel count, prefix, number, write;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__label_program, "wsisa_label_count_roots", &count, &queue);
  wsisa__cl_kernel(&wsisa__label_program, "wsisa_label_prefix", &prefix, &queue);
  wsisa__cl_kernel(&wsisa__label_program, "wsisa_label_number_roots", &number, &queue);
  wsisa__cl_kernel(&wsisa__label_program, "wsisa_label_write", &write, &queue);
  const size_t rows[1] = {height}, one[1] = {1};
  cl_uint arg = 0;
  wsisa__cl_arg(count, &arg, sizeof lab, &lab);
  wsisa__cl_arg(count, &arg, sizeof row_roots, &row_roots);
  wsisa__cl_arg(count, &arg, sizeof width_arg, &width_arg);
  wsisa__cl_arg(count, &arg, sizeof height_arg, &height_arg);
  wsisa__cl_run(count, queue, 1, rows, NULL);
  arg = 0;
  wsisa__cl_arg(prefix, &arg, sizeof row_roots, &row_roots);
  wsisa__cl_arg(prefix, &arg, sizeof height_arg, &height_arg);
  wsisa__cl_run(prefix, queue, 1, one, NULL);
  arg = 0;
  wsisa__cl_arg(number, &arg, sizeof lab, &lab);
  wsisa__cl_arg(number, &arg, sizeof row_roots, &row_roots);
  wsisa__cl_arg_matrix(number, &arg, out);
  wsisa__cl_arg(number, &arg, sizeof width_arg, &width_arg);
  wsisa__cl_arg(number, &arg, sizeof height_arg, &height_arg);
  wsisa__cl_run(number, queue, 1, rows, NULL);
  arg = 0;
  wsisa__cl_arg(write, &arg, sizeof lab, &lab);
  wsisa__cl_arg_matrix(write, &arg, out);
  wsisa__cl_run_image(write, queue, &arg, mask);
  starpu_opencl_release_kernel(count);
  starpu_opencl_release_kernel(prefix);
  starpu_opencl_release_kernel(number);
  starpu_opencl_release_kernel(write);
  clReleaseMemObject(row_roots);
  clReleaseMemObject(lab);
}

int wsisa_submit_label(starpu_data_handle_t mask, starpu_data_handle_t labels, int conn) {
  if (conn != 4 && conn != 8) return WSISA_EUSAGE;
  const struct label_args a = {.conn = conn};
  return WSISA__SUBMIT(label, &a, sizeof a, mask, labels);
}
