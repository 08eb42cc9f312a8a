/* The pure CPU kernels: plain C on wsisa_image, no StarPU, testable alone.
 * Each returns 0 or a negative WSISA_E* code for a shape mismatch; they never
 * print and never allocate beyond what they document. */
#ifndef WSISA_CODELETS_CPU_H
#define WSISA_CODELETS_CPU_H

#include "core/core.h"

/* out(u8, 1ch) = 255 - in[channel]. */
int wsisa_cpu_invert(const wsisa_image *in, int channel, wsisa_image *out);

/* ---- objects: labelling, size filters, distance transform, watershed ---- */

/* The connected components of a binary mask as horizontal runs [x0, x1) of on
 * pixels, raster order; id is the run's component, 1..n numbered in raster
 * order of each component's first pixel. Shared by labelling and size filters. */
typedef struct wsisa__run {
  int32_t x0, x1, id;
} wsisa__run;
typedef struct wsisa__runs {
  wsisa__run *run;
  int32_t *row; /* runs of row y: run[row[y]] .. run[row[y + 1] - 1] */
  int32_t n;    /* components */
} wsisa__runs;
/* conn is 4 or 8. On success the caller frees with wsisa__cpu_runs_free. */
int wsisa__cpu_runs_find(const wsisa_image *mask, int conn, wsisa__runs *runs);
void wsisa__cpu_runs_free(wsisa__runs *runs);

/* labels(i32) = component id of each on pixel of mask(u8), 0 on background;
 * ids 1..n in raster order of each component's first pixel. */
int wsisa_cpu_label(const wsisa_image *mask, int conn, wsisa_image *labels);
/* out(u8 0/255) = the components whose area a has min_area <= a < max_area
 * (max_area <= 0: no upper bound). */
int wsisa_cpu_area_filter(const wsisa_image *mask, int conn, int min_area,
                          int max_area, wsisa_image *out);
/* dist(f32) = Euclidean distance of each on pixel to the nearest off pixel of
 * the image (0 on off pixels), as cv::distanceTransform(DIST_L2, precise):
 * nothing lies outside the image, and with no off pixel at all every pixel is
 * WSISA_EDT_NONE. Sides up to WSISA_EDT_MAX_SIDE. */
#define WSISA_EDT_NONE 31622776.0f /* sqrtf(1e15f): OpenCV's "infinity" */
#define WSISA_EDT_MAX_SIDE 32767
int wsisa_cpu_edt(const wsisa_image *mask, wsisa_image *dist);
/* Marker watershed (see codelets/cpu/watershed.c for the flooding rule):
 * rgb u8x3 read as black where mask is off; markers i32 (> 0: seed label,
 * otherwise unknown); labels i32 (region, -1 on lines, 0 if never reached);
 * mask_out u8 0/255 = mask and not a line. Sides up to WSISA_WATERSHED_MAX_SIDE,
 * marker labels up to WSISA_WATERSHED_MAX_LABEL. */
#define WSISA_WATERSHED_MAX_SIDE 65535
#define WSISA_WATERSHED_MAX_LABEL (INT32_MAX - 2)
int wsisa_cpu_watershed(const wsisa_image *rgb, const wsisa_image *markers,
                        const wsisa_image *mask, wsisa_image *labels,
                        wsisa_image *mask_out);

#endif
