/* Codelet: size filter, keep the components with min_area <= area < max_area
 * (docs/workflow.md, levels 4, 6, 7). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"


struct area_filter_args {
  int conn, min_area, max_area;
};

static void area_filter_cpu(void *buffers[], void *cl_arg) {
  const struct area_filter_args *a = cl_arg;
  wsisa_image mask = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_area_filter(&mask, a->conn, a->min_area, a->max_area, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

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

struct starpu_opencl_program wsisa__area_filter_program;

struct starpu_perfmodel wsisa__area_filter_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_area_filter_v1",
};

struct starpu_codelet wsisa__area_filter_codelet = {
    .name = "area_filter",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {area_filter_cpu},
    .opencl_funcs = {area_filter_opencl},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__area_filter_model,
};

int wsisa_submit_area_filter(starpu_data_handle_t mask, starpu_data_handle_t out,
                             int conn, int min_area, int max_area) {
  if (conn != 4 && conn != 8) return WSISA_EUSAGE;
  struct area_filter_args *a = malloc(sizeof *a);
  if (!a) return WSISA_ENOMEM;
  *a = (struct area_filter_args){conn, min_area, max_area};
  int ret = WSISA__INSERT(&wsisa__area_filter_codelet, STARPU_R, mask, STARPU_W, out,
                          STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
