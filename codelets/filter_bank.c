/* Codelet: the filter bank, f32 -> one f32 response per σ (scale-normalised
 * Laplacian of Gaussian): FFTW on the CPU, a direct separable convolution with
 * the same sampled kernel on OpenCL; the two agree to float rounding. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

/* the cost grows with the σ (OpenCL) and the count of scales */
WSISA__CODELET_ANY(filter_bank, 1, WSISA__BY_ARGS);

/* No padding, every member set: the perf model hashes its bytes. */
struct filter_bank_args {
  int nscales;
  float sigmas[WSISA_FILTER_BANK_MAX_SCALES];
};

static void filter_bank_cpu(void *buffers[], void *cl_arg) {
  const struct filter_bank_args *a = cl_arg;
  wsisa_image in = wsisa_image_from_buffer(buffers[0], WSISA_F32);
  wsisa_image views[WSISA_FILTER_BANK_MAX_SCALES], *out[WSISA_FILTER_BANK_MAX_SCALES];
  for (int s = 0; s < a->nscales; s++) {
    views[s] = wsisa_image_from_buffer(buffers[1 + s], WSISA_F32);
    out[s] = &views[s];
  }
  WSISA__KERNEL(wsisa_cpu_filter_bank(&in, a->sigmas, a->nscales, out));
}

static void filter_bank_opencl(void *buffers[], void *cl_arg) {
  const struct filter_bank_args *a = cl_arg;
  cl_kernel rows, cols;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__filter_bank_program, "wsisa_filter_bank_rows", &rows, &queue);
  wsisa__cl_kernel(&wsisa__filter_bank_program, "wsisa_filter_bank_cols", &cols, &queue);
  const size_t pixels = STARPU_MATRIX_GET_NX(buffers[0]) * STARPU_MATRIX_GET_NY(buffers[0]);
  cl_mem smooth = wsisa__cl_buffer(pixels * sizeof(float), NULL);
  cl_mem curved = wsisa__cl_buffer(pixels * sizeof(float), NULL);
  float taps[2 * (2 * (int)(4 * WSISA_FILTER_BANK_MAX_SIGMA + 0.5f) + 1)];
  for (int s = 0; s < a->nscales; s++) {
    cl_int radius = wsisa_cpu_log_radius(a->sigmas[s]);
    wsisa_cpu_log_taps(a->sigmas[s], taps, taps + 2 * radius + 1);
    cl_mem k = wsisa__cl_buffer(sizeof(float) * 2 * (2 * radius + 1), taps);
    cl_uint arg = 0;
    wsisa__cl_arg_matrix(rows, &arg, buffers[0]);
    wsisa__cl_arg(rows, &arg, sizeof k, &k);
    wsisa__cl_arg(rows, &arg, sizeof radius, &radius);
    wsisa__cl_arg(rows, &arg, sizeof smooth, &smooth);
    wsisa__cl_arg(rows, &arg, sizeof curved, &curved);
    wsisa__cl_run_image(rows, queue, &arg, buffers[0]);
    arg = 0;
    wsisa__cl_arg(cols, &arg, sizeof smooth, &smooth);
    wsisa__cl_arg(cols, &arg, sizeof curved, &curved);
    wsisa__cl_arg(cols, &arg, sizeof k, &k);
    wsisa__cl_arg(cols, &arg, sizeof radius, &radius);
    wsisa__cl_arg_matrix(cols, &arg, buffers[1 + s]);
    wsisa__cl_run_image(cols, queue, &arg, buffers[0]);
    clReleaseMemObject(k);
  }
  clReleaseMemObject(smooth);
  clReleaseMemObject(curved);
  starpu_opencl_release_kernel(rows);
  starpu_opencl_release_kernel(cols);
}

int wsisa_submit_filter_bank(starpu_data_handle_t in, const float *sigmas, int nscales,
                             starpu_data_handle_t *out) {
  if (nscales < 1 || nscales > WSISA_FILTER_BANK_MAX_SCALES || !sigmas) return WSISA_EUSAGE;
  for (int s = 0; s < nscales; s++)
    if (!(sigmas[s] > 0 && sigmas[s] <= WSISA_FILTER_BANK_MAX_SIGMA)) return WSISA_EUSAGE;
  starpu_data_handle_t handles[1 + WSISA_FILTER_BANK_MAX_SCALES] = {in};
  size_t elemsize[1 + WSISA_FILTER_BANK_MAX_SCALES];
  struct starpu_data_descr descr[1 + WSISA_FILTER_BANK_MAX_SCALES];
  for (int i = 0; i <= nscales; i++) {
    if (i > 0) handles[i] = out[i - 1];
    elemsize[i] = sizeof(float);
    descr[i].handle = handles[i];
    descr[i].mode = i ? STARPU_W : STARPU_R;
  }
  if (wsisa__check_matrices(1 + nscales, handles, elemsize)) return WSISA_EINTERNAL;
  struct filter_bank_args a = {.nscales = nscales};
  for (int s = 0; s < nscales; s++) a.sigmas[s] = sigmas[s];
  return wsisa__submit_descr(&wsisa__filter_bank_codelet, descr, 1 + nscales, &a, sizeof a);
}
