/* Codelet: exact Euclidean distance transform, u8 mask -> f32 distances
 * (docs/workflow.md, level 6). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(edt, 2, WSISA__PLAIN, STARPU_R, STARPU_W);

WSISA__CPU_TASK(edt, void, wsisa_cpu_edt(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, F32)))

static void edt_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  void *mask = buffers[0], *dist = buffers[1];
  const size_t width = STARPU_MATRIX_GET_NX(mask), height = STARPU_MATRIX_GET_NY(mask);
  const size_t bytes = width * height * sizeof(cl_int);
  cl_mem g = wsisa__cl_buffer(bytes, NULL), s = wsisa__cl_buffer(bytes, NULL),
         t = wsisa__cl_buffer(bytes, NULL);
  cl_kernel columns, rows;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__edt_program, "wsisa_edt_columns", &columns, &queue);
  wsisa__cl_kernel(&wsisa__edt_program, "wsisa_edt_rows", &rows, &queue);
  cl_int width_arg = (cl_int)width, height_arg = (cl_int)height;
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(columns, &arg, mask);
  wsisa__cl_arg(columns, &arg, sizeof g, &g);
  wsisa__cl_arg(columns, &arg, sizeof width_arg, &width_arg);
  wsisa__cl_arg(columns, &arg, sizeof height_arg, &height_arg);
  wsisa__cl_run(columns, queue, 1, &width, NULL);
  arg = 0;
  wsisa__cl_arg(rows, &arg, sizeof g, &g);
  wsisa__cl_arg(rows, &arg, sizeof s, &s);
  wsisa__cl_arg(rows, &arg, sizeof t, &t);
  wsisa__cl_arg_matrix(rows, &arg, dist);
  wsisa__cl_arg(rows, &arg, sizeof width_arg, &width_arg);
  wsisa__cl_arg(rows, &arg, sizeof height_arg, &height_arg);
  wsisa__cl_run(rows, queue, 1, &height, NULL);
  starpu_opencl_release_kernel(columns);
  starpu_opencl_release_kernel(rows);
  clReleaseMemObject(g);
  clReleaseMemObject(s);
  clReleaseMemObject(t);
}

int wsisa_submit_edt(starpu_data_handle_t mask, starpu_data_handle_t dist) {
  if (starpu_matrix_get_nx(mask) > WSISA_EDT_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_EDT_MAX_SIDE)
    return WSISA_EUSAGE;
  return WSISA__SUBMIT(edt, NULL, 0, mask, dist);
}
