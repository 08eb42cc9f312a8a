/* Codelet: grey erosion, dilation, opening and closing (u8) by OpenCV's
 * elliptic structuring element (docs/workflow.md levels 2, 5, 6). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(morph, 1, WSISA__BY_ARGS, STARPU_R, STARPU_W);

_Static_assert(WSISA_MORPH_ERODE == 0 && WSISA_MORPH_DILATE == 1 &&
                   WSISA_MORPH_OPEN == 2 && WSISA_MORPH_CLOSE == 3,
               "wsisa_cpu_morph numbers the operations as wsisa_morph_op");

struct morph_args {
  int op;
  int se_size;
};

WSISA__CPU_TASK(morph, struct morph_args,
                wsisa_cpu_morph(WSISA__IMAGE(0, U8), a->op, a->se_size,
                                WSISA__IMAGE(1, U8)))

/* One erosion or dilation: the segments pass into `segs`, then the rows pass. */
static void erode_dilate_cl(void *shape, wsisa__cl_matrix src,
                            wsisa__cl_matrix dst, int dilate, cl_mem segs, cl_mem lens,
                            cl_int nlen, cl_mem slot, cl_int r) {
  cl_kernel kernel;
  cl_command_queue queue;
  cl_uint arg = 0;
  wsisa__cl_kernel(&wsisa__morph_program, "wsisa_morph_segments", &kernel, &queue);
  wsisa__cl_arg_mat(kernel, &arg, src);
  wsisa__cl_arg(kernel, &arg, sizeof segs, &segs);
  wsisa__cl_arg(kernel, &arg, sizeof lens, &lens);
  wsisa__cl_arg(kernel, &arg, sizeof nlen, &nlen);
  wsisa__cl_arg(kernel, &arg, sizeof dilate, &dilate);
  wsisa__cl_run_image(kernel, queue, &arg, shape);
  starpu_opencl_release_kernel(kernel);

  arg = 0;
  wsisa__cl_kernel(&wsisa__morph_program, "wsisa_morph_rows", &kernel, &queue);
  wsisa__cl_arg(kernel, &arg, sizeof segs, &segs);
  wsisa__cl_arg(kernel, &arg, sizeof slot, &slot);
  wsisa__cl_arg(kernel, &arg, sizeof r, &r);
  wsisa__cl_arg(kernel, &arg, sizeof dilate, &dilate);
  wsisa__cl_arg_mat(kernel, &arg, dst);
  wsisa__cl_run_image(kernel, queue, &arg, shape);
  starpu_opencl_release_kernel(kernel);
}

static void morph_opencl(void *buffers[], void *cl_arg) {
  const struct morph_args *a = cl_arg;
  const int width = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  const int height = (int)STARPU_MATRIX_GET_NY(buffers[0]);
  /* The element's distinct half-widths, ascending, and each row's plane. */
  int half[WSISA_CPU_SE_MAX], lens[WSISA_CPU_SE_MAX], slot[WSISA_CPU_SE_MAX];
  cl_int nlen = 0;
  wsisa_cpu_ellipse_rows(a->se_size, half);
  for (int l = 0; l <= a->se_size / 2; l++)
    for (int i = 0; i < a->se_size; i++)
      if (half[i] == l) {
        lens[nlen++] = l;
        break;
      }
  for (int i = 0; i < a->se_size; i++)
    for (int j = 0; j < nlen; j++)
      if (lens[j] == half[i]) slot[i] = j;
  cl_mem lens_buf = wsisa__cl_buffer((size_t)nlen * sizeof *lens, lens);
  cl_mem slot_buf = wsisa__cl_buffer((size_t)a->se_size * sizeof *slot, slot);
  cl_mem segs = wsisa__cl_buffer((size_t)nlen * (size_t)width * (size_t)height, NULL);

  /* Opening = dilation of the erosion; closing = erosion of the dilation. */
  const int first_dilate = a->op == WSISA_MORPH_DILATE || a->op == WSISA_MORPH_CLOSE;
  const int two = a->op == WSISA_MORPH_OPEN || a->op == WSISA_MORPH_CLOSE;
  wsisa__cl_matrix in = wsisa__cl_matrix_of(buffers[0]), out = wsisa__cl_matrix_of(buffers[1]);
  wsisa__cl_matrix mid = two ? wsisa__cl_scratch(width, height, 1) : out;
  erode_dilate_cl(buffers[0], in, mid, first_dilate, segs, lens_buf, nlen, slot_buf,
                  a->se_size / 2);
  if (two) {
    erode_dilate_cl(buffers[0], mid, out, !first_dilate, segs, lens_buf, nlen, slot_buf,
                    a->se_size / 2);
    clReleaseMemObject(mid.mem);
  }
  clReleaseMemObject(segs);
  clReleaseMemObject(slot_buf);
  clReleaseMemObject(lens_buf);
}

int wsisa_submit_morph(starpu_data_handle_t in, starpu_data_handle_t out,
                       wsisa_morph_op op, int se_size) {
  const starpu_data_handle_t h[] = {in, out};
  const size_t elem[] = {1, 1};
  if (op < WSISA_MORPH_ERODE || op > WSISA_MORPH_CLOSE || se_size < 3 ||
      se_size > WSISA_CPU_SE_MAX || se_size % 2 == 0)
    return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem)) return WSISA_EINTERNAL;
  const struct morph_args a = {.op = (int)op, .se_size = se_size};
  return WSISA__SUBMIT(morph, &a, sizeof a, in, out);
}
