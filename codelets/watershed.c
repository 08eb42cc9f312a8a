/* Codelet: marker watershed with an order-independent flooding rule whose
 * regions never touch inside the mask, not even at a corner
 * (docs/workflow.md, level 6; the rule: codelets/cpu/watershed.c). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(watershed, 4, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_W);

WSISA__CPU_TASK(watershed, void,
                wsisa_cpu_watershed(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, I32),
                                    WSISA__IMAGE(2, U8), WSISA__IMAGE(3, I32),
                                    WSISA__IMAGE(4, U8)))

/* Kernel arguments set one after another. */
typedef struct cl_args {
  cl_kernel kernel;
  cl_uint next;
} cl_args;

static void arg(cl_args *a, size_t size, const void *value) {
  wsisa__cl_arg(a->kernel, &a->next, size, value);
}

static void arg_mem(cl_args *a, cl_mem mem) { arg(a, sizeof mem, &mem); }

static void arg_int(cl_args *a, cl_int value) { arg(a, sizeof value, &value); }

/* Queue a kernel over the n entries of a pixel list, without waiting: the
 * queue runs in order and the count read after a wave waits for it. A fixed
 * work-group size, as PoCL builds a kernel anew for every size it is given. */
static void enqueue_list(cl_kernel kernel, cl_command_queue queue, cl_int n) {
  const size_t global[1] = {((size_t)(n > 0 ? n : 1) + 63) / 64 * 64}, local[1] = {64};
  wsisa__cl_check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, global, local, 0, NULL, NULL),
                  "watershed wave");
}

static void watershed_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  void *rgb = buffers[0], *markers = buffers[1], *mask = buffers[2];
  const cl_int width = (cl_int)STARPU_MATRIX_GET_NX(mask);
  const cl_int height = (cl_int)STARPU_MATRIX_GET_NY(mask);
  const size_t bytes = (size_t)width * (size_t)height * sizeof(cl_int);
  cl_mem lab = wsisa__cl_buffer(bytes, NULL), next = wsisa__cl_buffer(bytes, NULL);
  cl_mem stamp = wsisa__cl_buffer(bytes, NULL);
  cl_mem list[2] = {wsisa__cl_buffer(bytes, NULL), wsisa__cl_buffer(bytes, NULL)};
  cl_mem count = wsisa__cl_buffer(sizeof(cl_int), NULL);
  cl_command_queue queue;
  enum { INIT, FRONTIER, GATHER, DECIDE, SETTLE, FINISH, NKERNELS };
  static const char *const names[NKERNELS] = {
      "wsisa_watershed_init",   "wsisa_watershed_frontier", "wsisa_watershed_gather",
      "wsisa_watershed_decide", "wsisa_watershed_settle",   "wsisa_watershed_finish"};
  cl_kernel k[NKERNELS];
  for (int i = 0; i < NKERNELS; i++)
    wsisa__cl_kernel(&wsisa__watershed_program, names[i], &k[i], &queue);

  cl_args a = {k[INIT], 0};
  wsisa__cl_arg_matrix(a.kernel, &a.next, markers);
  wsisa__cl_arg_matrix(a.kernel, &a.next, mask);
  arg_mem(&a, lab);
  arg_mem(&a, next);
  arg_mem(&a, stamp);
  wsisa__cl_run_image(a.kernel, queue, &a.next, mask);

  /* Arguments that never change; the per-level and per-wave ones follow. */
  cl_args frontier = {k[FRONTIER], 0}, gather = {k[GATHER], 0}, decide = {k[DECIDE], 0},
          settle = {k[SETTLE], 0};
  cl_args *with_image[] = {&frontier, &gather, &decide, &settle};
  for (int i = 0; i < 4; i++) {
    wsisa__cl_arg_matrix(with_image[i]->kernel, &with_image[i]->next, rgb);
    wsisa__cl_arg_matrix(with_image[i]->kernel, &with_image[i]->next, mask);
    arg_mem(with_image[i], lab);
  }
  arg_mem(&frontier, count);
  const cl_uint frontier_args = frontier.next, gather_args = gather.next;
  arg_mem(&decide, next);
  const cl_uint decide_args = decide.next;
  arg_mem(&settle, next);
  const cl_uint settle_args = settle.next;

  /* The pixels of the last wave, whose `next` entries the coming decide
   * settles. */
  int side = 0;
  cl_int previous = 0, wave = 0;
  for (;;) {
    /* The lowest relief on the frontier: levels below it hold nothing. */
    wsisa__cl_flag_reset(queue, count, 256);
    frontier.next = frontier_args;
    wsisa__cl_run_image(frontier.kernel, queue, &frontier.next, mask);
    const cl_int level = wsisa__cl_flag_read(queue, count);
    if (level >= 256) break;
    /* The first wave goes to the list the last settle filled (with nothing):
     * the other one still holds the last wave, for decide to settle. */
    wsisa__cl_flag_reset(queue, count, 0);
    gather.next = gather_args;
    arg_int(&gather, level);
    arg_mem(&gather, list[side]);
    arg_mem(&gather, count);
    arg_mem(&gather, stamp);
    arg_int(&gather, wave++);
    wsisa__cl_run_image(gather.kernel, queue, &gather.next, mask);
    for (cl_int n = wsisa__cl_flag_read(queue, count); n > 0;) {
      decide.next = decide_args;
      arg_int(&decide, level);
      arg_mem(&decide, list[side]);
      arg_int(&decide, n);
      arg_mem(&decide, list[side ^ 1]);
      arg_int(&decide, previous);
      arg_mem(&decide, count);
      arg_int(&decide, width);
      arg_int(&decide, height);
      enqueue_list(decide.kernel, queue, n > previous ? n : previous);
      settle.next = settle_args;
      arg_int(&settle, level);
      arg_mem(&settle, list[side]);
      arg_int(&settle, n);
      arg_mem(&settle, list[side ^ 1]);
      arg_mem(&settle, count);
      arg_mem(&settle, stamp);
      arg_int(&settle, wave++);
      arg_int(&settle, width);
      arg_int(&settle, height);
      enqueue_list(settle.kernel, queue, n);
      previous = n;
      side ^= 1;
      n = wsisa__cl_flag_read(queue, count);
    }
  }

  a = (cl_args){k[FINISH], 0};
  arg_mem(&a, lab);
  wsisa__cl_arg_matrix(a.kernel, &a.next, mask);
  wsisa__cl_arg_matrix(a.kernel, &a.next, buffers[3]);
  wsisa__cl_arg_matrix(a.kernel, &a.next, buffers[4]);
  wsisa__cl_run_image(a.kernel, queue, &a.next, mask);
  for (int i = 0; i < NKERNELS; i++) starpu_opencl_release_kernel(k[i]);
  cl_mem all[] = {lab, next, stamp, list[0], list[1], count};
  for (int i = 0; i < 6; i++) clReleaseMemObject(all[i]);
}

int wsisa_submit_watershed(starpu_data_handle_t rgb, starpu_data_handle_t markers,
                           starpu_data_handle_t mask, starpu_data_handle_t labels_out,
                           starpu_data_handle_t mask_out) {
  if (starpu_matrix_get_nx(mask) > WSISA_WATERSHED_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_WATERSHED_MAX_SIDE)
    return WSISA_EUSAGE;
  return WSISA__SUBMIT(watershed, NULL, 0, rgb, markers, mask, labels_out, mask_out);
}
