/* codelets: the fine-grain image operations as StarPU codelets (CPU + OpenCL),
 * the registry table that drives program loading and listing, and the helpers
 * that register images as StarPU data. */
#ifndef WSISA_CODELETS_H
#define WSISA_CODELETS_H

#include <starpu.h>

#include "core/core.h"

/* One row per operation (codelets/registry.c). */
typedef struct wsisa_op {
  const char *name;
  struct starpu_codelet *codelet;
  const char *cl_source;                  /* NULL: CPU only */
  struct starpu_opencl_program *program;  /* loaded from cl_source */
  struct starpu_perfmodel *model;
} wsisa_op;

extern const wsisa_op wsisa_ops[];
extern const size_t wsisa_n_ops;
const wsisa_op *wsisa_op_find(const char *name);

/* Build options for every OpenCL program: correctly rounded divide and sqrt,
 * so float results stay close to the CPU kernels. */
#define WSISA_CL_BUILD_OPTIONS "-cl-fp32-correctly-rounded-divide-sqrt"

/* Load / unload every registry program; only meaningful with OpenCL workers. */
int wsisa_codelets_load_opencl(wsisa_err *e);
void wsisa_codelets_unload_opencl(void);

/* Where submitted tasks may run: STARPU_CPU | STARPU_OPENCL by default. Tests
 * force one side to compare CPU and OpenCL outputs. */
void wsisa_codelets_set_where(uint32_t where);
uint32_t wsisa_codelets_where(void);

/* ---- images as StarPU data ---------------------------------------------- */

/* Register an image's memory (home node: main RAM) as a matrix handle whose
 * element is one pixel (channels × dtype size). */
int wsisa_image_register(wsisa_image *img, starpu_data_handle_t *handle,
                         wsisa_err *e);
/* Register an intermediate: no home memory (node -1), StarPU allocates it
 * where it is first written. Release with starpu_data_unregister_submit. */
int wsisa_image_register_tmp(int width, int height, int channels,
                             wsisa_dtype type, starpu_data_handle_t *handle,
                             wsisa_err *e);
/* A view of a matrix buffer inside a CPU codelet. */
wsisa_image wsisa_image_from_buffer(void *buffer, wsisa_dtype type);

/* ---- operations ------------------------------------------------------------ */

/* out(u8, 1 channel) = 255 - in[channel]; in is u8 with 1-4 channels. */
int wsisa_submit_invert(starpu_data_handle_t in, starpu_data_handle_t out,
                        int channel);
/* workflow glue: out(f32) = mask ? -dist : -FLT_MAX. */
int wsisa_submit_neg_dist(starpu_data_handle_t dist, starpu_data_handle_t mask,
                          starpu_data_handle_t out);

#endif
