/* Codelet: the per-nucleus reduction of the feature stage (labels i32 and up
 * to WSISA_NF_MAX_CHANNELS f32 channels -> a vector of one row of doubles per
 * nucleus; codelets/cpu/nucleus_features.c has the definitions).
 *
 * CPU only: the exact median needs each object's values sorted, and the
 * convex area a hull per object; both are irregular per-object work of sizes
 * only known from the data. An OpenCL version could at best accumulate the
 * moments and sums, and would still have to download the labels and channels
 * for the rest: the task would cost more, not less. The vector's length, n
 * rows, is the object count, which the caller learns (count_labels) before it
 * registers the output. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

struct starpu_opencl_program wsisa__nucleus_features_program;

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
  int rc = wsisa_cpu_nucleus_features(&labels, n, views, a->nchannels,
                                      (double *)STARPU_VECTOR_GET_PTR(out));
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

struct starpu_perfmodel wsisa__nucleus_features_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_nucleus_features_v1",
};

struct starpu_codelet wsisa__nucleus_features_codelet = {
    .name = "nucleus_features",
    .where = STARPU_CPU,
    .cpu_funcs = {nucleus_features_cpu},
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &wsisa__nucleus_features_model,
};

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
  nucleus_features_args *args = malloc(sizeof *args);
  if (!args) return WSISA_ENOMEM;
  args->nchannels = nchannels;
  int ret = starpu_task_insert(&wsisa__nucleus_features_codelet, STARPU_DATA_MODE_ARRAY,
                               descr, 2 + nchannels, STARPU_CL_ARGS, args, sizeof *args, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
