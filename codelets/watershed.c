/* Codelet: marker watershed with an order-independent flooding rule
 * (DESIGN §3, level 6; the rule: codelets/cpu/watershed.c). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(watershed);

static void watershed_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image markers = wsisa_image_from_buffer(buffers[1], WSISA_I32);
  wsisa_image mask = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  wsisa_image labels = wsisa_image_from_buffer(buffers[3], WSISA_I32);
  wsisa_image mask_out = wsisa_image_from_buffer(buffers[4], WSISA_U8);
  int rc = wsisa_cpu_watershed(&rgb, &markers, &mask, &labels, &mask_out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

/* The lowest relief on the frontier; 256 when nothing is left to flood. */
static cl_int frontier_level(cl_kernel frontier, cl_command_queue queue, cl_uint arg,
                             cl_mem lowest, void *shape) {
  wsisa__cl_flag_reset(queue, lowest, 256);
  wsisa__cl_run_image(frontier, queue, &arg, shape);
  return wsisa__cl_flag_read(queue, lowest);
}

static void watershed_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  void *rgb = buffers[0], *markers = buffers[1], *mask = buffers[2];
  const size_t pixels = STARPU_MATRIX_GET_NX(mask) * STARPU_MATRIX_GET_NY(mask);
  cl_mem lab = wsisa__cl_buffer_new(pixels * sizeof(cl_int));
  cl_mem next = wsisa__cl_buffer_new(pixels * sizeof(cl_int));
  cl_mem flag = wsisa__cl_buffer_new(sizeof(cl_int));
  cl_kernel init, wave, resolve, frontier, finish;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__watershed_program, "wsisa_watershed_init", &init, &queue);
  wsisa__cl_kernel(&wsisa__watershed_program, "wsisa_watershed_wave", &wave, &queue);
  wsisa__cl_kernel(&wsisa__watershed_program, "wsisa_watershed_resolve", &resolve, &queue);
  wsisa__cl_kernel(&wsisa__watershed_program, "wsisa_watershed_frontier", &frontier, &queue);
  wsisa__cl_kernel(&wsisa__watershed_program, "wsisa_watershed_finish", &finish, &queue);

  cl_uint arg = 0;
  wsisa__cl_arg_matrix(init, &arg, markers);
  wsisa__cl_arg(init, &arg, sizeof lab, &lab);
  wsisa__cl_run_image(init, queue, &arg, mask);

  cl_uint wave_level = 0;
  arg = 0;
  wsisa__cl_arg_matrix(wave, &arg, rgb);
  wsisa__cl_arg_matrix(wave, &arg, mask);
  wsisa__cl_arg(wave, &arg, sizeof lab, &lab);
  wsisa__cl_arg(wave, &arg, sizeof next, &next);
  wave_level = arg++;
  wsisa__cl_arg(wave, &arg, sizeof flag, &flag);
  const cl_uint wave_args = arg;
  arg = 0;
  wsisa__cl_arg(resolve, &arg, sizeof lab, &lab);
  wsisa__cl_arg(resolve, &arg, sizeof next, &next);
  const cl_uint resolve_args = arg;
  arg = 0;
  wsisa__cl_arg_matrix(frontier, &arg, rgb);
  wsisa__cl_arg_matrix(frontier, &arg, mask);
  wsisa__cl_arg(frontier, &arg, sizeof lab, &lab);
  wsisa__cl_arg(frontier, &arg, sizeof flag, &flag);
  const cl_uint frontier_args = arg;

  /* Levels with nothing on the frontier are skipped: the rule does nothing
   * there. */
  for (cl_int level = frontier_level(frontier, queue, frontier_args, flag, mask);
       level < 256; level = frontier_level(frontier, queue, frontier_args, flag, mask)) {
    cl_uint index = wave_level;
    wsisa__cl_arg(wave, &index, sizeof level, &level);
    for (;;) {
      wsisa__cl_flag_reset(queue, flag, 0);
      cl_uint a = wave_args, b = resolve_args;
      wsisa__cl_run_image(wave, queue, &a, mask);
      if (!wsisa__cl_flag_read(queue, flag)) break;
      wsisa__cl_run_image(resolve, queue, &b, mask);
    }
  }

  arg = 0;
  wsisa__cl_arg(finish, &arg, sizeof lab, &lab);
  wsisa__cl_arg_matrix(finish, &arg, mask);
  wsisa__cl_arg_matrix(finish, &arg, buffers[3]);
  wsisa__cl_arg_matrix(finish, &arg, buffers[4]);
  wsisa__cl_run_image(finish, queue, &arg, mask);
  starpu_opencl_release_kernel(init);
  starpu_opencl_release_kernel(wave);
  starpu_opencl_release_kernel(resolve);
  starpu_opencl_release_kernel(frontier);
  starpu_opencl_release_kernel(finish);
  clReleaseMemObject(flag);
  clReleaseMemObject(next);
  clReleaseMemObject(lab);
}

struct starpu_opencl_program wsisa__watershed_program;

struct starpu_perfmodel wsisa__watershed_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_watershed_v1",
};

struct starpu_codelet wsisa__watershed_codelet = {
    .name = "watershed",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {watershed_cpu},
    .opencl_funcs = {watershed_opencl},
    .nbuffers = 5,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_W},
    .model = &wsisa__watershed_model,
};

int wsisa_submit_watershed(starpu_data_handle_t rgb, starpu_data_handle_t markers,
                           starpu_data_handle_t mask, starpu_data_handle_t labels_out,
                           starpu_data_handle_t mask_out) {
  if (starpu_matrix_get_nx(mask) > WSISA_WATERSHED_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_WATERSHED_MAX_SIDE)
    return WSISA_EUSAGE;
  return WSISA__INSERT(&wsisa__watershed_codelet, STARPU_R, rgb, STARPU_R, markers,
                       STARPU_R, mask, STARPU_W, labels_out, STARPU_W, mask_out, 0)
             ? WSISA_ERUNTIME
             : 0;
}
