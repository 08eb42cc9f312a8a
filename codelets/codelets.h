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

/* ---- objects: labelling, size filters, distance transform, watershed ----
 * conn is 4 or 8 (anything else: WSISA_EUSAGE). */

/* labels(i32) = connected components of mask(u8), 0 on background, ids 1..n
 * in raster order of each component's first pixel (same ids on every worker). */
int wsisa_submit_label(starpu_data_handle_t mask, starpu_data_handle_t labels, int conn);
/* out(u8 0/255) = components of mask with min_area <= area < max_area
 * (max_area <= 0: no upper bound). */
int wsisa_submit_area_filter(starpu_data_handle_t mask, starpu_data_handle_t out,
                             int conn, int min_area, int max_area);
/* dist(f32) = Euclidean distance of each on pixel of mask(u8) to the nearest
 * off pixel, as cv::distanceTransform(DIST_L2, DIST_MASK_PRECISE). */
int wsisa_submit_edt(starpu_data_handle_t mask, starpu_data_handle_t dist);
/* Marker watershed of rgb(u8x3) read as black where mask(u8) is off, from
 * markers(i32, > 0 = seed): labels_out(i32, -1 on lines), mask_out(u8) = mask
 * and not a line. The flooding rule: codelets/cpu/watershed.c. */
int wsisa_submit_watershed(starpu_data_handle_t rgb, starpu_data_handle_t markers,
                           starpu_data_handle_t mask, starpu_data_handle_t labels_out,
                           starpu_data_handle_t mask_out);

#endif
