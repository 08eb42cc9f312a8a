/* Codelet: marker watershed with an order-independent flooding rule whose
 * regions never touch inside the mask, not even at a corner
 * (docs/workflow.md, level 6; the rule: codelets/cpu/watershed.c). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(watershed, 5, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_W);

WSISA__CPU_TASK(watershed, void,
                wsisa_cpu_watershed(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, I32),
                                    WSISA__IMAGE(2, U8), WSISA__IMAGE(3, I32),
                                    WSISA__IMAGE(4, U8)))

/* The flood's two launches: parts of fewer than BIG_PART pixels by
 * FLOOD_GROUPS work-groups of FLOOD_GROUP items, each taking parts until none
 * is left, so a few per compute unit keep them all busy; the larger parts by
 * BIG_GROUPS work-groups of up to BIG_GROUP items (what the device runs of
 * the kernel): a large part's front and waves hold thousands of pixels at a
 * step, and its one work-group is the flood's longest path (PoCL builds a
 * kernel anew for every work-group size it is given: fixed ones). */
enum {
  FLOOD_GROUP = 64,
  FLOOD_GROUPS = 1024,
  BIG_PART = 2048,
  BIG_GROUP = 1024,
  BIG_GROUPS = 64
};

/* Kernel arguments mems[0..n-1], then width and height; run over the image of
 * matrix buffer `shape` and wait. */
static void run_mems(cl_kernel kernel, cl_command_queue queue, void *shape, int n,
                     const cl_mem *mems) {
  cl_uint a = 0;
  for (int i = 0; i < n; i++) wsisa__cl_arg(kernel, &a, sizeof mems[i], &mems[i]);
  wsisa__cl_run_image(kernel, queue, &a, shape);
}

static void watershed_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  void *rgb = buffers[0], *markers = buffers[1], *mask = buffers[2];
  const cl_int width = (cl_int)STARPU_MATRIX_GET_NX(mask);
  const cl_int height = (cl_int)STARPU_MATRIX_GET_NY(mask);
  const size_t bytes = (size_t)width * (size_t)height * sizeof(cl_int);
  /* parent and size serve the search for parts, then the flood's wave lists;
   * front marks the pixels its parts' fronts list */
  cl_mem lab = wsisa__cl_buffer(bytes, NULL), next = wsisa__cl_buffer(bytes, NULL);
  cl_mem stamp = wsisa__cl_buffer(bytes, NULL), parent = wsisa__cl_buffer(bytes, NULL);
  cl_mem size = wsisa__cl_zeros(bytes), parts = wsisa__cl_buffer(2 * bytes, NULL);
  cl_mem pixels = wsisa__cl_buffer(bytes, NULL), spare = wsisa__cl_buffer(bytes, NULL);
  cl_mem front = wsisa__cl_buffer(bytes, NULL), counters = wsisa__cl_zeros(4 * sizeof(cl_int));
  cl_command_queue queue;
  /* the flood's two launches on two kernel objects, each run at one size
   * (PoCL keeps what it builds for a kernel object's second size past the
   * object's release) */
  enum { INIT, UNION, COUNT, PLACE, LIST, FLOOD, FLOOD_LARGE, FINISH, NKERNELS };
  static const char *const names[NKERNELS] = {
      "wsisa_watershed_init",  "wsisa_watershed_union", "wsisa_watershed_count",
      "wsisa_watershed_place", "wsisa_watershed_list",  "wsisa_watershed_flood",
      "wsisa_watershed_flood", "wsisa_watershed_finish"};
  cl_kernel k[NKERNELS];
  for (int i = 0; i < NKERNELS; i++)
    wsisa__cl_kernel(&wsisa__watershed_program, names[i], &k[i], &queue);
  /* the flood's arguments after the images, and every work buffer */
  const cl_mem work[] = {lab, next, stamp, parts, counters, pixels, spare, parent, size, front};
  enum { NWORK = sizeof work / sizeof work[0] };
  cl_uint a = 0;
#define ARG(kernel, mem) wsisa__cl_arg(kernel, &a, sizeof(cl_mem), &(mem))

  wsisa__cl_arg_matrix(k[INIT], &a, markers);
  wsisa__cl_arg_matrix(k[INIT], &a, mask);
  for (int i = 0; i < 3; i++) ARG(k[INIT], ((cl_mem[]){lab, next, parent})[i]);
  wsisa__cl_run_image(k[INIT], queue, &a, mask);

  run_mems(k[UNION], queue, mask, 2, (cl_mem[]){lab, parent});
  run_mems(k[COUNT], queue, mask, 3, (cl_mem[]){lab, parent, size});
  run_mems(k[PLACE], queue, mask, 5, (cl_mem[]){lab, parent, size, parts, counters});
  run_mems(k[LIST], queue, mask, 4, (cl_mem[]){lab, parent, size, pixels});

  const cl_int big_from = BIG_PART;
  for (cl_int big = 0; big <= 1; big++) {
    cl_kernel flood = k[big ? FLOOD_LARGE : FLOOD];
    a = 0;
    wsisa__cl_arg_matrix(flood, &a, rgb);
    wsisa__cl_arg_matrix(flood, &a, mask);
    for (int i = 0; i < NWORK; i++) ARG(flood, work[i]);
    wsisa__cl_arg(flood, &a, sizeof big_from, &big_from);
    wsisa__cl_arg(flood, &a, sizeof big, &big);
    wsisa__cl_arg(flood, &a, sizeof width, &width);
    wsisa__cl_arg(flood, &a, sizeof height, &height);
    const size_t items = big ? wsisa__cl_group_items(flood, BIG_GROUP) : FLOOD_GROUP;
    const size_t global[1] = {items * (big ? BIG_GROUPS : FLOOD_GROUPS)}, local[1] = {items};
    wsisa__cl_run(flood, queue, 1, global, local);
  }

  a = 0;
  ARG(k[FINISH], lab);
  wsisa__cl_arg_matrix(k[FINISH], &a, mask);
  wsisa__cl_arg_matrix(k[FINISH], &a, buffers[3]);
  wsisa__cl_arg_matrix(k[FINISH], &a, buffers[4]);
  wsisa__cl_run_image(k[FINISH], queue, &a, mask);
#undef ARG
  for (int i = 0; i < NKERNELS; i++) starpu_opencl_release_kernel(k[i]);
  for (int i = 0; i < NWORK; i++) clReleaseMemObject(work[i]);
}

int wsisa_submit_watershed(starpu_data_handle_t rgb, starpu_data_handle_t markers,
                           starpu_data_handle_t mask, starpu_data_handle_t labels_out,
                           starpu_data_handle_t mask_out) {
  if (starpu_matrix_get_nx(mask) > WSISA_WATERSHED_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_WATERSHED_MAX_SIDE)
    return WSISA_EUSAGE;
  return WSISA__SUBMIT(watershed, NULL, 0, rgb, markers, mask, labels_out, mask_out);
}
