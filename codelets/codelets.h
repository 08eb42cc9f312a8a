/* codelets: the fine-grain image operations as StarPU codelets (CPU + OpenCL),
 * the registry table that drives program loading and listing, and the helpers
 * that register images as StarPU data. The one header of codelets/ for the
 * rest of the program: with it come the layouts and host functions of the
 * kernels that callers use (codelets/cpu/published.h: statistics vector,
 * feature-row columns, object store, match fields and metrics, stain
 * constants). */
#ifndef WSISA_CODELETS_H
#define WSISA_CODELETS_H

#include <stdatomic.h>

#include <starpu.h>

#include "codelets/cpu/published.h"
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

/* Build options for every OpenCL program: correctly rounded divide and sqrt,
 * so float results stay close to the CPU kernels. */
#define WSISA_CL_BUILD_OPTIONS "-cl-fp32-correctly-rounded-divide-sqrt"

/* Load / unload every registry program; only meaningful with OpenCL workers. */
int wsisa_codelets_load_opencl(wsisa_err *e);
void wsisa_codelets_unload_opencl(void);
/* Start StarPU (wsisa_runtime_init with `opts`, NULL for the defaults) with
 * every registry program loaded; wsisa_runtime_shutdown unloads them. */
int wsisa_codelets_start(const wsisa_runtime_opts *opts, wsisa_err *e);

/* Where submitted tasks may run: STARPU_CPU | STARPU_OPENCL by default. Tests
 * force one side to compare CPU and OpenCL outputs. */
void wsisa_codelets_set_where(uint32_t where);
uint32_t wsisa_codelets_where(void);

/* A placement scope (the executor's unit placement, docs/architecture.md):
 * while one is set on a thread, the tasks that thread submits of codelets
 * with an OpenCL implementation run on the workers of scope->where (a task
 * wsisa_codelets_where() pins outside it stays pinned: there is no other
 * place for it), and every task submitted under it is counted when it ends,
 * by the kind of worker that ran it. The counters are atomic (tasks end on
 * the workers' threads); a scope outlives every task submitted under it. */
typedef struct wsisa_codelets_scope {
  uint32_t where; /* STARPU_CPU, STARPU_OPENCL, or both */
  atomic_uint_fast64_t submitted, ended;
  /* tasks of codelets with both implementations, by the kind of worker that
   * ran them, and those of them that ran outside `where` */
  atomic_uint_fast64_t on_cpu, on_opencl, astray;
  /* tasks with one place only: CPU-only codelets, and tasks pinned there */
  atomic_uint_fast64_t fixed;
  /* tasks of codelets with both implementations submitted, and the
   * nanoseconds those that ended took on each kind of worker (from the worker
   * taking the task to its end) */
  atomic_uint_fast64_t placed, ns_on_cpu, ns_on_opencl;
} wsisa_codelets_scope;
/* Set the calling thread's scope (NULL: none); returns the one it replaces. */
wsisa_codelets_scope *wsisa_codelets_scope_set(wsisa_codelets_scope *scope);

/* Dry runs: while a recorder is set, every submit helper builds its task and
 * hands it to `fn` instead of submitting it, then destroys it; nothing runs
 * and no data is touched. The caller learns which codelets a piece of the
 * workflow submits, with the data, arguments and footprints StarPU's
 * performance models see (engine/estimate/costs.c). Set it, and clear it with NULL,
 * on the submitting thread while no other thread submits. */
typedef void (*wsisa_codelets_recorder)(void *ctx, struct starpu_task *task);
void wsisa_codelets_record(wsisa_codelets_recorder fn, void *ctx);
/* The registry row of a task's codelet; NULL when it is none of ours. */
const wsisa_op *wsisa_op_of(const struct starpu_codelet *codelet);

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

/* ---- morph: mathematical morphology (docs/workflow.md levels 2, 3, 5, 6) ---------- */
/* A connectivity other than 4 or 8 or a bad parameter value is refused with
 * WSISA_EUSAGE, handles of mismatched shapes or pixel types with
 * WSISA_EINTERNAL, before anything is submitted. */

typedef enum { WSISA_MORPH_ERODE, WSISA_MORPH_DILATE, WSISA_MORPH_OPEN, WSISA_MORPH_CLOSE } wsisa_morph_op;
/* u8 grey (or 0/255 mask) by OpenCV's getStructuringElement(MORPH_ELLIPSE,
 * se_size × se_size), odd se_size in 3..255 (3 is the cross, 19 the workflow's
 * radius-10 disk); outside pixels are neutral, as OpenCV's default border. */
int wsisa_submit_morph(starpu_data_handle_t in, starpu_data_handle_t out, wsisa_morph_op op, int se_size);
/* Grey reconstruction by dilation of min(marker, mask) under mask; all three u8
 * or all three f32 (no NaN). */
int wsisa_submit_reconstruct(starpu_data_handle_t marker, starpu_data_handle_t mask, starpu_data_handle_t out, int conn);
/* u8 0/255: the mask pixels conn-connected within mask to a pixel of seed AND mask. */
int wsisa_submit_bin_reconstruct(starpu_data_handle_t seed, starpu_data_handle_t mask, starpu_data_handle_t out, int conn);
/* u8 0/255: nscale's fillHoles — background not conn-connected through
 * background to the image border becomes foreground (scipy's
 * binary_fill_holes with the cross is conn 4, with the 3×3 square conn 8). */
int wsisa_submit_fill_holes(starpu_data_handle_t mask, starpu_data_handle_t out, int conn);
/* u8 0/255: fill holes of each object — a hole (as fill holes') is filled only
 * when the mask around it is one object ((12 - conn)-connected), never when it
 * also holds an object inside it: objects are not joined. Sides up to 65535. */
int wsisa_submit_fill_object_holes(starpu_data_handle_t mask, starpu_data_handle_t out, int conn);
/* f32: h-minima transform, reconstruction by erosion of in + h over in; finite
 * h >= 0. -FLT_MAX + h stays -FLT_MAX in float, so such a background stays. */
int wsisa_submit_hmin(starpu_data_handle_t in, starpu_data_handle_t out, float h, int conn);
/* f32 in (no NaN), u8 0/255 out: the pixels of regional minima, plateaus
 * (conn) whose every outside neighbour is strictly higher. */
int wsisa_submit_regional_min(starpu_data_handle_t in, starpu_data_handle_t mask_out, int conn);
/* ---- pixel group: normalization and per-pixel operations (docs/workflow.md) ----- */

/* Normalization (Reinhard colour transfer as in nscale), step by step.
 * fg_mask(u8) = 255 where M1·(R,G,B,1) < M2·(R,G,B,1) on rgb(u8 × 3). */
int wsisa_submit_fisher_fg(starpu_data_handle_t rgb, starpu_data_handle_t fg_mask);
/* lab(f32 × 3) = Reinhard lαβ of rgb(u8 × 3) (log10 of LMS floored at 1e-6). */
int wsisa_submit_rgb2lab(starpu_data_handle_t rgb, starpu_data_handle_t lab);
/* stats = vector of 7 doubles: count, mean[3], std[3] (population) of lab over
 * the pixels where mask is non-zero (all 0 when there are none). */
int wsisa_submit_masked_stats(starpu_data_handle_t lab, starpu_data_handle_t mask,
                              starpu_data_handle_t stats);
/* lab_out = (lab − mean)·stdT/std + meanT (docs/workflow.md, the template) where mask is on;
 * elsewhere, and for a channel with std 0 or no pixel counted, lab unchanged. */
int wsisa_submit_color_transfer(starpu_data_handle_t lab, starpu_data_handle_t mask,
                                starpu_data_handle_t stats, starpu_data_handle_t lab_out);
/* rgb_out = RGB of lab (×255, clamped, rounded half up) where mask is on,
 * rgb_in elsewhere. */
int wsisa_submit_lab2rgb(starpu_data_handle_t lab, starpu_data_handle_t mask,
                         starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out);
/* The whole chain, rgb_in -> rgb_out (u8 × 3, width × height); intermediates
 * have no home node and are released once their last consumer is submitted. */
int wsisa_normalize_submit(starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out,
                           int width, int height);
/* The same with the statistics given (a vector of WSISA_STATS_N doubles, as
 * masked_stats makes them: a whole slide's), not the tile's own; NULL: the
 * tile's own, as wsisa_normalize_submit. */
int wsisa_normalize_submit_stats(starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out,
                                 int width, int height, starpu_data_handle_t stats);

/* mask = (b > B) & (g > G) & (r > R), strict, on rgb(u8 × 3). */
int wsisa_submit_background(starpu_data_handle_t rgb, starpu_data_handle_t mask, int B,
                            int G, int R);
/* mask = c_num / (c_den + FLT_EPSILON) > threshold, evaluated in double; rgb is
 * u8 with 1-4 channels. Channels out of range or a NaN threshold: WSISA_EUSAGE. */
int wsisa_submit_ratio_mask(starpu_data_handle_t rgb, starpu_data_handle_t mask,
                            int num_channel, int den_channel, double threshold);
/* mask = grey > t (u8). */
int wsisa_submit_threshold(starpu_data_handle_t grey, starpu_data_handle_t mask, int t);
/* out = max(a − b, 0) (u8). */
int wsisa_submit_sub_sat(starpu_data_handle_t a, starpu_data_handle_t b,
                         starpu_data_handle_t out);
typedef enum { WSISA_MASK_AND, WSISA_MASK_OR, WSISA_MASK_ANDNOT } wsisa_mask_op;
/* out = a op b on masks (non-zero = on; ANDNOT = a & !b); an unknown op is
 * WSISA_EUSAGE. */
int wsisa_submit_mask_logic(starpu_data_handle_t a, starpu_data_handle_t b,
                            starpu_data_handle_t out, wsisa_mask_op op);
/* counts = vector of 3 uint64: |A∩B|, |A|, |B| (masks: non-zero = on). */
int wsisa_submit_compare(starpu_data_handle_t a, starpu_data_handle_t b,
                         starpu_data_handle_t counts);

/* ---- objects: labelling, size filters, distance transform, watershed ----
 * conn is 4 or 8 (anything else: WSISA_EUSAGE). */

/* labels(i32) = connected components of mask(u8), 0 on background, ids 1..n
 * in raster order of each component's first pixel (same ids on every worker). */
int wsisa_submit_label(starpu_data_handle_t mask, starpu_data_handle_t labels, int conn);
/* mask(u8 0/255) = the objects of labels(i32) whose centroid (the mean of
 * their pixel indices) lies in [x0, x1) x [y0, y1): what a tile read with a
 * halo owns of what it segmented, so that an object crossing a tile border
 * is kept by exactly one tile. */
int wsisa_submit_own_objects(starpu_data_handle_t labels, starpu_data_handle_t mask, int x0,
                             int y0, int x1, int y1);
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

/* Object reuse (codelets/cpu/separate.c): levels 6 and 7 object by object,
 * the same bits as the fine-grain codelets, units seen before on the tile
 * taken from `store` (the tile's; NULL: none). CPU workers only.
 * separate: out(u8) = level 6's separated nuclei from mask(u8: components >=
 * min_size_pl, dilated) and the tile's normalized rgb(u8x3).
 * final_size: out(u8) = level 7's final mask from the separated mask. */
int wsisa_submit_separate(starpu_data_handle_t rgb, starpu_data_handle_t mask,
                          starpu_data_handle_t out, int watershed_conn,
                          wsisa_object_store *store);
int wsisa_submit_final_size(starpu_data_handle_t mask, starpu_data_handle_t out,
                            int min_size_seg, int max_size_seg, int fill_holes_conn,
                            wsisa_object_store *store);

/* study metrics: count = the largest label of a canonical i32 label image
 * (a vector of 1 uint64). */
int wsisa_submit_count_labels(starpu_data_handle_t labels, starpu_data_handle_t count);

/* ---- features, nucleus half: the per-nucleus reduction -------------------- */
/* rows (vector of n × WSISA_NF_ROW(nchannels) doubles, codelets/cpu/published.h) =
 * shape and per-channel statistics of objects 1..n of the canonical label
 * image labels (i32); channels are f32 of the labels' shape. n is the object
 * count (wsisa_submit_count_labels), known before `rows` is registered; with
 * n = 0 there is nothing to write and no task. The CPU and OpenCL rows are the
 * same bytes (codelets/nucleus_features.c says how). */
int wsisa_submit_nucleus_features(starpu_data_handle_t labels,
                                  const starpu_data_handle_t *channels, int nchannels,
                                  starpu_data_handle_t rows);
/* study metrics: sums = vector of WSISA_MATCH_FIELDS uint64, the fields of
 * wsisa_match_field (codelets/cpu/published.h) for run_labels against ref_labels
 * (canonical i32): object Dice sums, TP/FP/FN at IoU >= 0.5, AJI sums. A
 * slide's are the sums of its tiles'; wsisa_object_metrics_of turns them into
 * object Dice, precision, recall, F1 and AJI. */
int wsisa_submit_object_match(starpu_data_handle_t ref_labels, starpu_data_handle_t run_labels,
                              starpu_data_handle_t sums);
/* ---- features, pixel half: per-tile channels (colour deconvolution, Sobel,
 * filter bank) ---------------------------------------------------------------- */

/* The standard H&E stain rows (RGB optical densities): skimage's rgb_from_hed
 * H and E rows, then their normalised cross product as the residual. */
extern const float wsisa_stains_he[9];
/* Ruifrok–Johnston colour deconvolution: rgb(u8 × 3) -> h, eo, res (f32), the
 * amounts of the stains whose rows (H, E, residual; NULL: wsisa_stains_he) are
 * given, in optical-density units: od_c = log10(255 / v_c) (6 for v_c = 0),
 * then (h, eo, res) = od · stains⁻¹, not clipped. A non-finite or (nearly)
 * singular stain matrix is WSISA_EUSAGE. Bit-identical on CPU and OpenCL. */
int wsisa_submit_deconv(starpu_data_handle_t rgb, const float stains[9],
                        starpu_data_handle_t h, starpu_data_handle_t eo,
                        starpu_data_handle_t res);
/* mag(f32) = Sobel gradient magnitude sqrt(gx² + gy²) of in(f32), the
 * unnormalised 3×3 kernels of scipy.ndimage.sobel; outside pixels repeat the
 * nearest edge pixel. Bit-identical on CPU and OpenCL. */
int wsisa_submit_sobel(starpu_data_handle_t in, starpu_data_handle_t mag);

/* The filter bank: out[s](f32) = scale-normalised Laplacian of Gaussian
 * σ²·(Gxx + Gyy) of in(f32) at σ = sigmas[s], s < nscales (1..7, σ in
 * (0, 32], else WSISA_EUSAGE), with scipy.ndimage.gaussian_laplace's sampled
 * kernel (radius (int)(4σ + 0.5)) and mirrored borders (scipy's 'reflect').
 * The CPU computes it with FFTW (plans made once per size, wisdom kept in
 * $STARPU_HOME/wsisa), OpenCL as a direct convolution: they agree to float
 * rounding, not bit for bit. */
#define WSISA_FILTER_BANK_DEFAULT_SCALES {1.0f, 2.0f, 4.0f}
int wsisa_submit_filter_bank(starpu_data_handle_t in, const float *sigmas, int nscales,
                             starpu_data_handle_t *out);

#endif
