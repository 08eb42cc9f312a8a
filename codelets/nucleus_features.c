/* Codelet: the per-nucleus reduction of the feature stage (labels i32 and up
 * to WSISA_NF_MAX_CHANNELS f32 channels -> a vector of one row of doubles per
 * nucleus; codelets/cpu/nucleus_features.c has the definitions).
 *
 * Both implementations reduce each object to the same exact integer sums and,
 * per channel, double sums taken in raster order and the exact median by the
 * same selection (codelets/cl/nucleus_features.cl does the pixel and
 * per-object work on the device); the few formulas after that (square roots,
 * atan2, divisions) are one host function, wsisa__nf_finish, so the rows are
 * the same bytes on either worker. The vector's length, n rows, is the object
 * count, which the caller learns (count_labels) before it registers the
 * output. */
#include <string.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET_ANY(nucleus_features, 2, WSISA__FP64);

typedef struct nucleus_features_args {
  int nchannels;
} nucleus_features_args;

static void nucleus_features_cpu(void *buffers[], void *cl_arg) {
  const nucleus_features_args *a = cl_arg;
  wsisa_image labels = wsisa_image_from_buffer(buffers[0], WSISA_I32);
  wsisa_image channels[WSISA_NF_MAX_CHANNELS];
  const wsisa_image *views[WSISA_NF_MAX_CHANNELS];
  for (int c = 0; c < a->nchannels; c++) {
    channels[c] = wsisa_image_from_buffer(buffers[1 + c], WSISA_F32);
    views[c] = &channels[c];
  }
  void *out = buffers[1 + a->nchannels];
  int32_t n = (int32_t)(STARPU_VECTOR_GET_NX(out) / WSISA_NF_ROW(a->nchannels));
  WSISA__KERNEL(wsisa_cpu_nucleus_features(&labels, n, views, a->nchannels,
                                           (double *)STARPU_VECTOR_GET_PTR(out)));
}

static void download(cl_command_queue queue, cl_mem m, size_t bytes, void *host) {
  wsisa__cl_check(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL),
                  "nucleus features download");
}

/* Buffers as arguments *arg, *arg + 1, ... (then advances *arg). */
static void buffer_args(cl_kernel k, cl_uint *arg, int count, const cl_mem *mems) {
  for (int i = 0; i < count; i++) wsisa__cl_arg(k, arg, sizeof mems[i], &mems[i]);
}

/* A kernel taking (labels matrix, buffers..., width, height), one work-item
 * per image row. */
static void run_rows(cl_kernel k, cl_command_queue queue, void *labels, int count,
                     const cl_mem *mems) {
  cl_int width = (cl_int)STARPU_MATRIX_GET_NX(labels);
  cl_int height = (cl_int)STARPU_MATRIX_GET_NY(labels);
  const size_t range = (size_t)height;
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(k, &arg, labels);
  buffer_args(k, &arg, count, mems);
  wsisa__cl_arg(k, &arg, sizeof width, &width);
  wsisa__cl_arg(k, &arg, sizeof height, &height);
  wsisa__cl_run(k, queue, 1, &range, NULL);
}

enum { K_EXTENT, K_BORDER, K_ROWS, K_OBJECTS, K_SCATTER, K_GATHER, K_STATS, K_HULL, K_N };
static const char *const kernel_names[K_N] = {
    "wsisa_nf_extent",  "wsisa_nf_border", "wsisa_nf_rows",  "wsisa_nf_objects",
    "wsisa_nf_scatter", "wsisa_nf_gather", "wsisa_nf_stats", "wsisa_nf_hull"};

/* Device passes (codelets/cl/nucleus_features.cl): row extents of the objects,
 * whose prefix sum on the host lays out one entry per (object, row); per-row
 * counts, extremes, moments and perimeter classes; per-object sums; a prefix
 * sum of areas on the host giving each object a slice; the raster-order
 * scatter of pixel indices into the slices; per channel a gather and the
 * per-object statistics; per-object hulls. The host finishes the rows. */
static void nucleus_features_opencl(void *buffers[], void *cl_arg) {
  const nucleus_features_args *a = cl_arg;
  const int nch = a->nchannels, stride = WSISA_NF_ROW(nch);
  void *lab = buffers[0], *out = buffers[1 + nch];
  const cl_int n = (cl_int)(STARPU_VECTOR_GET_NX(out) / (uint32_t)stride);
  if (n == 0) return;
  const cl_int width = (cl_int)STARPU_MATRIX_GET_NX(lab);
  const cl_int height = (cl_int)STARPU_MATRIX_GET_NY(lab);
  cl_kernel k[K_N];
  cl_command_queue queue;
  for (int i = 0; i < K_N; i++)
    wsisa__cl_kernel(&wsisa__nucleus_features_program, kernel_names[i], &k[i], &queue);
  const size_t objects_range = (size_t)n;

  /* 1: the rows each object spans */
  int32_t *lo = malloc((size_t)n * sizeof *lo), *hi = malloc((size_t)n * sizeof *hi);
  int32_t *first = malloc((size_t)n * sizeof *first);
  wsisa_nf_sums *sums = malloc((size_t)n * sizeof *sums);
  double *raw = calloc((size_t)n * (nch ? nch : 1) * WSISA_NF_RAW, sizeof *raw);
  double *rows = malloc((size_t)n * stride * sizeof *rows);
  STARPU_ASSERT(lo && hi && first && sums && raw && rows);
  for (cl_int i = 0; i < n; i++) lo[i] = INT32_MAX, hi[i] = -1;
  cl_int bad = 0;
  cl_mem d_lo = wsisa__cl_buffer((size_t)n * sizeof *lo, lo);
  cl_mem d_hi = wsisa__cl_buffer((size_t)n * sizeof *hi, hi);
  cl_mem d_bad = wsisa__cl_buffer(sizeof bad, &bad), d_n = wsisa__cl_buffer(sizeof n, &n);
  run_rows(k[K_EXTENT], queue, lab, 4, (cl_mem[]){d_n, d_lo, d_hi, d_bad});
  download(queue, d_lo, (size_t)n * sizeof *lo, lo);
  download(queue, d_hi, (size_t)n * sizeof *hi, hi);
  download(queue, d_bad, sizeof bad, &bad);
  STARPU_ASSERT_MSG(!bad, "nucleus features: a label outside 0..n");
  cl_uint arg;
  size_t nrows = 0;
  for (cl_int i = 0; i < n; i++) {
    first[i] = (int32_t)nrows;
    nrows += hi[i] >= lo[i] ? (size_t)(hi[i] - lo[i] + 1) : 0;
  }
  STARPU_ASSERT(nrows < INT32_MAX / 6);

  /* 2: per (object, row) entries, then per-object sums */
  cl_int *ri = malloc((nrows ? nrows : 1) * 6 * sizeof *ri);
  STARPU_ASSERT(ri);
  for (size_t r = 0; r < nrows; r++)
    ri[6 * r] = 0, ri[6 * r + 1] = INT32_MAX, ri[6 * r + 2] = -1,
    ri[6 * r + 3] = ri[6 * r + 4] = ri[6 * r + 5] = 0;
  cl_mem d_first = wsisa__cl_buffer((size_t)n * sizeof *first, first);
  cl_mem d_ri = wsisa__cl_buffer(nrows * 6 * sizeof *ri, ri);
  free(ri);
  cl_mem d_rl = wsisa__cl_zeros(nrows * 2 * sizeof(cl_long));
  cl_mem d_border = wsisa__cl_buffer((size_t)width * height, NULL);
  cl_mem d_roff = wsisa__cl_buffer(nrows * sizeof(cl_int), NULL);
  cl_mem d_sums = wsisa__cl_buffer((size_t)n * sizeof *sums, NULL);
  arg = 0;
  wsisa__cl_arg_matrix(k[K_BORDER], &arg, lab);
  wsisa__cl_arg(k[K_BORDER], &arg, sizeof d_border, &d_border);
  wsisa__cl_run_image(k[K_BORDER], queue, &arg, lab);
  run_rows(k[K_ROWS], queue, lab, 5, (cl_mem[]){d_border, d_first, d_lo, d_ri, d_rl});
  arg = 0;
  buffer_args(k[K_OBJECTS], &arg, 7,
              (cl_mem[]){d_first, d_lo, d_hi, d_ri, d_rl, d_roff, d_sums});
  wsisa__cl_arg(k[K_OBJECTS], &arg, sizeof n, &n);
  wsisa__cl_run(k[K_OBJECTS], queue, 1, &objects_range, NULL);
  download(queue, d_sums, (size_t)n * sizeof *sums, sums);

  /* 3: each object's slice of pixel indices, in raster order */
  cl_int fg = 0;
  for (cl_int i = 0; i < n; i++) {
    first[i] = fg;
    fg += (cl_int)sums[i].area;
  }
  cl_mem d_fval = wsisa__cl_buffer((size_t)n * sizeof *first, first);
  cl_mem d_index = wsisa__cl_buffer((size_t)fg * sizeof(cl_int), NULL);
  cl_mem d_values = wsisa__cl_buffer((size_t)fg * sizeof(float), NULL);
  cl_mem d_raw = wsisa__cl_buffer((size_t)n * nch * WSISA_NF_RAW * sizeof *raw, raw);
  run_rows(k[K_SCATTER], queue, lab, 5, (cl_mem[]){d_first, d_lo, d_fval, d_roff, d_index});

  /* 4: per channel, its values into the slices and the statistics */
  const size_t fg_range = (size_t)(fg ? fg : 1);
  for (cl_int c = 0; c < nch && fg; c++) {
    arg = 0;
    wsisa__cl_arg_matrix(k[K_GATHER], &arg, buffers[1 + c]);
    buffer_args(k[K_GATHER], &arg, 2, (cl_mem[]){d_index, d_values});
    wsisa__cl_arg(k[K_GATHER], &arg, sizeof fg, &fg);
    wsisa__cl_arg(k[K_GATHER], &arg, sizeof width, &width);
    wsisa__cl_run(k[K_GATHER], queue, 1, &fg_range, NULL);
    arg = 0;
    buffer_args(k[K_STATS], &arg, 4, (cl_mem[]){d_values, d_fval, d_sums, d_raw});
    wsisa__cl_arg(k[K_STATS], &arg, sizeof n, &n);
    wsisa__cl_arg(k[K_STATS], &arg, sizeof nch, &nch);
    wsisa__cl_arg(k[K_STATS], &arg, sizeof c, &c);
    wsisa__cl_run(k[K_STATS], queue, 1, &objects_range, NULL);
  }

  /* 5: convex areas */
  cl_mem d_pts = wsisa__cl_buffer(6 * nrows * sizeof(cl_int2), NULL);
  cl_mem d_hull = wsisa__cl_buffer((6 * nrows + 2 * (size_t)n) * sizeof(cl_int2), NULL);
  arg = 0;
  buffer_args(k[K_HULL], &arg, 5, (cl_mem[]){d_first, d_ri, d_pts, d_hull, d_sums});
  wsisa__cl_arg(k[K_HULL], &arg, sizeof n, &n);
  wsisa__cl_run(k[K_HULL], queue, 1, &objects_range, NULL);
  download(queue, d_sums, (size_t)n * sizeof *sums, sums);
  if (nch) download(queue, d_raw, (size_t)n * nch * WSISA_NF_RAW * sizeof *raw, raw);

  for (cl_int i = 0; i < n; i++)
    wsisa__nf_finish(&sums[i], i + 1, raw + (size_t)i * nch * WSISA_NF_RAW, nch,
                     rows + (size_t)i * stride);
  wsisa__cl_check(clEnqueueWriteBuffer(queue, (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(out),
                                       CL_TRUE, STARPU_VECTOR_GET_OFFSET(out),
                                       (size_t)n * stride * sizeof *rows, rows, 0, NULL, NULL),
                  "nucleus features rows");
  cl_mem scratch[] = {d_n,    d_lo,   d_hi,    d_bad,    d_first, d_ri,  d_rl,   d_border,
                      d_roff, d_sums, d_fval, d_index, d_values, d_raw, d_pts, d_hull};
  for (size_t i = 0; i < sizeof scratch / sizeof *scratch; i++) clReleaseMemObject(scratch[i]);
  for (int i = 0; i < K_N; i++) starpu_opencl_release_kernel(k[i]);
  free(lo);
  free(hi);
  free(first);
  free(sums);
  free(raw);
  free(rows);
}

int wsisa_submit_nucleus_features(starpu_data_handle_t labels,
                                  const starpu_data_handle_t *channels, int nchannels,
                                  starpu_data_handle_t rows) {
  if (nchannels < 0 || nchannels > WSISA_NF_MAX_CHANNELS) return WSISA_EINTERNAL;
  starpu_data_handle_t matrices[1 + WSISA_NF_MAX_CHANNELS];
  size_t sizes[1 + WSISA_NF_MAX_CHANNELS];
  struct starpu_data_descr descr[2 + WSISA_NF_MAX_CHANNELS];
  matrices[0] = labels;
  sizes[0] = sizeof(int32_t);
  descr[0] = (struct starpu_data_descr){labels, STARPU_R};
  for (int c = 0; c < nchannels; c++) {
    matrices[1 + c] = channels[c];
    sizes[1 + c] = sizeof(float);
    descr[1 + c] = (struct starpu_data_descr){channels[c], STARPU_R};
  }
  descr[1 + nchannels] = (struct starpu_data_descr){rows, STARPU_W};
  if (wsisa__check_matrices(1 + nchannels, matrices, sizes) ||
      starpu_data_get_interface_id(rows) != STARPU_VECTOR_INTERFACE_ID ||
      starpu_vector_get_elemsize(rows) != sizeof(double) ||
      starpu_vector_get_nx(rows) % WSISA_NF_ROW(nchannels))
    return WSISA_EINTERNAL;
  /* no object, nothing to write (and no zero-size buffer for a device) */
  if (starpu_vector_get_nx(rows) == 0) return 0;
  const nucleus_features_args a = {nchannels};
  return wsisa__submit_descr(&wsisa__nucleus_features_codelet, descr, 2 + nchannels, &a,
                             sizeof a);
}
