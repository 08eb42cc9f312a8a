/* Codelet: the objects of a tile read with a halo that its core owns, by
 * their centroid (i32 labels -> u8 mask; codelets/cpu/own_objects.c). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(own_objects, 2, WSISA__BY_ARGS, STARPU_R, STARPU_W);

/* the core [x0, x1) x [y0, y1) in the labels' pixels */
struct own_objects_args {
  int x0, y0, x1, y1;
};

WSISA__CPU_TASK(own_objects, struct own_objects_args,
                wsisa_cpu_own_objects(WSISA__IMAGE(0, I32), a->x0, a->y0, a->x1, a->y1,
                                      WSISA__IMAGE(1, U8)))

static void own_objects_opencl(void *buffers[], void *cl_arg) {
  const struct own_objects_args *a = cl_arg;
  enum { MAX, SUMS, KEEP, MASK, NKERNELS };
  static const char *const names[NKERNELS] = {"wsisa_own_objects_max", "wsisa_own_objects_sums",
                                              "wsisa_own_objects_keep",
                                              "wsisa_own_objects_mask"};
  cl_kernel k[NKERNELS];
  cl_command_queue queue;
  for (int i = 0; i < NKERNELS; i++)
    wsisa__cl_kernel(&wsisa__own_objects_program, names[i], &k[i], &queue);
  const cl_int width = (cl_int)STARPU_MATRIX_GET_NX(buffers[0]);
  const cl_int height = (cl_int)STARPU_MATRIX_GET_NY(buffers[0]);
  const size_t pixels = (size_t)width * (size_t)height;
  /* the largest label: work-groups of a power of two items, at most 256 */
  const size_t items = wsisa__cl_group_items(k[MAX], 256);
  size_t local = 256;
  while (local > items) local /= 2;
  size_t groups = (pixels + local - 1) / local;
  if (groups > 1024) groups = 1024;
  const size_t global = groups * local;
  cl_mem mx = wsisa__cl_zeros(sizeof(cl_int));
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(k[MAX], &arg, buffers[0]);
  wsisa__cl_arg(k[MAX], &arg, sizeof mx, &mx);
  wsisa__cl_arg(k[MAX], &arg, sizeof width, &width);
  wsisa__cl_arg(k[MAX], &arg, sizeof height, &height);
  wsisa__cl_run(k[MAX], queue, 1, &global, &local);
  cl_int n = 0;
  wsisa__cl_check(clEnqueueReadBuffer(queue, mx, CL_TRUE, 0, sizeof n, &n, 0, NULL, NULL),
                  "largest label");
  /* five words a label (own_objects.cl) */
  cl_mem acc = wsisa__cl_zeros(5 * ((size_t)n + 1) * sizeof(cl_uint));
  cl_mem keep = wsisa__cl_buffer((size_t)n + 1, NULL);
  arg = 0;
  wsisa__cl_arg_matrix(k[SUMS], &arg, buffers[0]);
  wsisa__cl_arg(k[SUMS], &arg, sizeof acc, &acc);
  wsisa__cl_arg(k[SUMS], &arg, sizeof n, &n);
  wsisa__cl_arg(k[SUMS], &arg, sizeof width, &width);
  wsisa__cl_arg(k[SUMS], &arg, sizeof height, &height);
  const size_t chunks = ((size_t)width + 31) / 32;
  const size_t sums_local[2] = {16, 16};
  const size_t sums_global[2] = {(chunks + 15) / 16 * 16, ((size_t)height + 15) / 16 * 16};
  wsisa__cl_run(k[SUMS], queue, 2, sums_global, sums_local);
  const cl_int core[4] = {a->x0, a->y0, a->x1, a->y1};
  arg = 0;
  wsisa__cl_arg(k[KEEP], &arg, sizeof acc, &acc);
  wsisa__cl_arg(k[KEEP], &arg, sizeof n, &n);
  for (int i = 0; i < 4; i++) wsisa__cl_arg(k[KEEP], &arg, sizeof core[i], &core[i]);
  wsisa__cl_arg(k[KEEP], &arg, sizeof keep, &keep);
  const size_t keep_local = 64, keep_global = ((size_t)n + 1 + 63) / 64 * 64;
  wsisa__cl_run(k[KEEP], queue, 1, &keep_global, &keep_local);
  arg = 0;
  wsisa__cl_arg_matrix(k[MASK], &arg, buffers[0]);
  wsisa__cl_arg(k[MASK], &arg, sizeof keep, &keep);
  wsisa__cl_arg(k[MASK], &arg, sizeof n, &n);
  wsisa__cl_arg_matrix(k[MASK], &arg, buffers[1]);
  wsisa__cl_run_image(k[MASK], queue, &arg, buffers[0]);
  clReleaseMemObject(mx);
  clReleaseMemObject(acc);
  clReleaseMemObject(keep);
  for (int i = 0; i < NKERNELS; i++) starpu_opencl_release_kernel(k[i]);
}

int wsisa_submit_own_objects(starpu_data_handle_t labels, starpu_data_handle_t mask, int x0,
                             int y0, int x1, int y1) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){labels, mask}, (size_t[]){4, 1}) ||
      x0 < 0 || y0 < 0 || x1 < x0 || y1 < y0)
    return WSISA_EINTERNAL;
  const struct own_objects_args a = {x0, y0, x1, y1};
  return WSISA__SUBMIT(own_objects, &a, sizeof a, labels, mask);
}
