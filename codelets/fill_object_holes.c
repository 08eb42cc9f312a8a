/* Codelet: fill the holes of each object, u8 0/255 (docs/workflow.md, level 7; the
 * definition: codelets/cpu/fill_object_holes.c). */
#include <stdlib.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(fill_object_holes, 3, WSISA__BY_ARGS, STARPU_R, STARPU_W);

struct fill_object_holes_args {
  int conn;
};

WSISA__CPU_TASK(fill_object_holes, struct fill_object_holes_args,
                wsisa_cpu_fill_object_holes(WSISA__IMAGE(0, U8), a->conn,
                                            WSISA__IMAGE(1, U8)))

static void fill_object_holes_opencl(void *buffers[], void *cl_arg) {
  const struct fill_object_holes_args *a = cl_arg;
  void *mask = buffers[0], *out = buffers[1];
  const cl_int width = (cl_int)STARPU_MATRIX_GET_NX(mask);
  const cl_int height = (cl_int)STARPU_MATRIX_GET_NY(mask);
  const size_t bytes = (size_t)width * (size_t)height * sizeof(cl_int);
  cl_mem objects = wsisa__cl_label_roots(mask, 12 - a->conn, 0);
  cl_mem holes = wsisa__cl_label_roots(mask, a->conn, 1);
  cl_mem lo = wsisa__cl_buffer(bytes, NULL), hi = wsisa__cl_buffer(bytes, NULL);
  cl_mem border = wsisa__cl_buffer(bytes, NULL);
  cl_kernel init, around, finish;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__fill_object_holes_program, "wsisa_fill_object_holes_init", &init,
                   &queue);
  wsisa__cl_kernel(&wsisa__fill_object_holes_program, "wsisa_fill_object_holes_around",
                   &around, &queue);
  wsisa__cl_kernel(&wsisa__fill_object_holes_program, "wsisa_fill_object_holes_finish",
                   &finish, &queue);
  cl_uint arg = 0;
  wsisa__cl_arg(init, &arg, sizeof lo, &lo);
  wsisa__cl_arg(init, &arg, sizeof hi, &hi);
  wsisa__cl_arg(init, &arg, sizeof border, &border);
  wsisa__cl_run_image(init, queue, &arg, mask);
  arg = 0;
  wsisa__cl_arg(around, &arg, sizeof objects, &objects);
  wsisa__cl_arg(around, &arg, sizeof holes, &holes);
  wsisa__cl_arg(around, &arg, sizeof lo, &lo);
  wsisa__cl_arg(around, &arg, sizeof hi, &hi);
  wsisa__cl_arg(around, &arg, sizeof border, &border);
  wsisa__cl_run_image(around, queue, &arg, mask);
  arg = 0;
  wsisa__cl_arg_matrix(finish, &arg, mask);
  wsisa__cl_arg_matrix(finish, &arg, out);
  wsisa__cl_arg(finish, &arg, sizeof holes, &holes);
  wsisa__cl_arg(finish, &arg, sizeof lo, &lo);
  wsisa__cl_arg(finish, &arg, sizeof hi, &hi);
  wsisa__cl_arg(finish, &arg, sizeof border, &border);
  wsisa__cl_run_image(finish, queue, &arg, mask);
  starpu_opencl_release_kernel(init);
  starpu_opencl_release_kernel(around);
  starpu_opencl_release_kernel(finish);
  cl_mem all[] = {objects, holes, lo, hi, border};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) clReleaseMemObject(all[i]);
}

int wsisa_submit_fill_object_holes(starpu_data_handle_t mask, starpu_data_handle_t out,
                                   int conn) {
  const starpu_data_handle_t h[] = {mask, out};
  const size_t elem[] = {1, 1};
  if (wsisa__check_conn(conn)) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem) || starpu_matrix_get_nx(mask) > 65535 ||
      starpu_matrix_get_ny(mask) > 65535)
    return WSISA_EINTERNAL;
  const struct fill_object_holes_args a = {.conn = conn};
  return WSISA__SUBMIT(fill_object_holes, &a, sizeof a, mask, out);
}
