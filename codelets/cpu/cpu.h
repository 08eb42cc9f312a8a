/* The pure CPU kernels: plain C on wsisa_image, no StarPU, testable alone.
 * Each returns 0 or a negative WSISA_E* code for a shape mismatch; they never
 * print and never allocate beyond what they document. */
#ifndef WSISA_CODELETS_CPU_H
#define WSISA_CODELETS_CPU_H

#include "core/core.h"

/* out(u8, 1ch) = 255 - in[channel]. */
int wsisa_cpu_invert(const wsisa_image *in, int channel, wsisa_image *out);

/* ---- morph: mathematical morphology (DESIGN §3 levels 2, 3, 5, 6) ---------- */

/* Largest structuring element side the morphology kernels accept. */
#define WSISA_CPU_SE_MAX 255
/* OpenCV's getStructuringElement(MORPH_ELLIPSE, size × size) row by row: row i
 * covers columns size/2 - half[i] .. size/2 + half[i]; `half` holds size ints. */
void wsisa_cpu_ellipse_rows(int size, int *half);
/* u8 1ch: op 0 erode, 1 dilate, 2 open, 3 close (wsisa_morph_op's order) by the
 * ellipse of odd se_size in 1..WSISA_CPU_SE_MAX; outside pixels are neutral.
 * in and out must be distinct. */
int wsisa_cpu_morph(const wsisa_image *in, int op, int se_size, wsisa_image *out);
/* Grey reconstruction by dilation of min(marker, mask) under mask, conn 4 or 8;
 * all three u8 or all three f32 (no NaN), 1 channel. */
int wsisa_cpu_reconstruct(const wsisa_image *marker, const wsisa_image *mask, int conn,
                          wsisa_image *out);
/* u8 0/255 (any non-zero is on): the pixels of mask conn-connected within mask
 * to a pixel of seed AND mask. out is distinct from seed and mask. */
int wsisa_cpu_bin_reconstruct(const wsisa_image *seed, const wsisa_image *mask, int conn,
                              wsisa_image *out);
/* u8 0/255: holes (background not conn-connected through background to the
 * image border) become foreground, as nscale's fillHoles(img, conn). */
int wsisa_cpu_fill_holes(const wsisa_image *mask, int conn, wsisa_image *out);
/* f32: h-minima transform, reconstruction by erosion of in + h over in; h >= 0.
 * f32 outputs of these kernels hold no -0.0. */
int wsisa_cpu_hmin(const wsisa_image *in, float h, int conn, wsisa_image *out);
/* f32 in (no NaN), u8 0/255 out: pixels of the regional minima (conn). */
int wsisa_cpu_regional_min(const wsisa_image *in, int conn, wsisa_image *out);

#endif
