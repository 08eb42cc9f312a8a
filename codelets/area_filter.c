/* Codelet: size filter, keep the components with min_area <= area < max_area
 * (docs/workflow.md, levels 4, 6, 7). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(area_filter, 3, WSISA__PLAIN, STARPU_R, STARPU_W);

struct area_filter_args {
  int conn, min_area, max_area;
};

WSISA__CPU_TASK(area_filter, struct area_filter_args,
                wsisa_cpu_area_filter(WSISA__IMAGE(0, U8), a->conn, a->min_area,
                                      a->max_area, WSISA__IMAGE(1, U8)))

static void area_filter_opencl(void *buffers[], void *cl_arg) {
  const struct area_filter_args *a = cl_arg;
  void *mask = buffers[0], *out = buffers[1];
  const size_t pixels = STARPU_MATRIX_GET_NX(mask) * STARPU_MATRIX_GET_NY(mask);
  cl_mem lab = wsisa__cl_label_roots(mask, a->conn, 0);
  cl_mem area = wsisa__cl_buffer(pixels * sizeof(cl_int), NULL);
  cl_kernel zero, count, keep;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__area_filter_program, "wsisa_area_filter_zero", &zero, &queue);
  wsisa__cl_kernel(&wsisa__area_filter_program, "wsisa_area_filter_count", &count, &queue);
  wsisa__cl_kernel(&wsisa__area_filter_program, "wsisa_area_filter_keep", &keep, &queue);
  cl_uint arg = 0;
  wsisa__cl_arg(zero, &arg, sizeof area, &area);
  wsisa__cl_run_image(zero, queue, &arg, mask);
  arg = 0;
  wsisa__cl_arg(count, &arg, sizeof lab, &lab);
  wsisa__cl_arg(count, &arg, sizeof area, &area);
  wsisa__cl_run_image(count, queue, &arg, mask);
  cl_int min_area = a->min_area, max_area = a->max_area;
  arg = 0;
  wsisa__cl_arg(keep, &arg, sizeof lab, &lab);
  wsisa__cl_arg(keep, &arg, sizeof area, &area);
  wsisa__cl_arg(keep, &arg, sizeof min_area, &min_area);
  wsisa__cl_arg(keep, &arg, sizeof max_area, &max_area);
  wsisa__cl_arg_matrix(keep, &arg, out);
  wsisa__cl_run_image(keep, queue, &arg, mask);
  starpu_opencl_release_kernel(zero);
  starpu_opencl_release_kernel(count);
  starpu_opencl_release_kernel(keep);
  clReleaseMemObject(area);
  clReleaseMemObject(lab);
}

int wsisa_submit_area_filter(starpu_data_handle_t mask, starpu_data_handle_t out,
                             int conn, int min_area, int max_area) {
  if (conn != 4 && conn != 8) return WSISA_EUSAGE;
  const struct area_filter_args a = {conn, min_area, max_area};
  return WSISA__SUBMIT(area_filter, &a, sizeof a, mask, out);
}
