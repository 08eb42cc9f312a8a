/* The pure CPU kernels: plain C on wsisa_image, no StarPU, testable alone.
 * Each returns 0 or a negative WSISA_E* code for a shape mismatch; they never
 * print and never allocate beyond what they document. */
#ifndef WSISA_CODELETS_CPU_H
#define WSISA_CODELETS_CPU_H

#include <stdint.h>
#include <string.h>

#include "codelets/cpu/published.h"
#include "core/core.h"

/* The first x in [x, width) where row[x] is not 0, else width. Masks and
 * flags are mostly zero: zero bytes are skipped eight at a time. */
static inline int wsisa__skip_zeros(const uint8_t *row, int x, int width) {
  for (uint64_t word; x + 8 <= width; x += 8) {
    memcpy(&word, row + x, sizeof word);
    if (word) break;
  }
  while (x < width && !row[x]) x++;
  return x;
}

/* out[x] = 255 where on[x] is not 0, else 0 (the other way round with
 * `invert`), eight bytes at a time. */
static inline void wsisa__binary_row(const uint8_t *on, uint8_t *out, int n, int invert) {
  const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL, flip = invert ? ~low7 : 0;
  int x = 0;
  for (; x + 8 <= n; x += 8) {
    uint64_t v;
    memcpy(&v, on + x, 8);
    /* a byte's top bit: the byte is not 0 (is 0, with `invert`) */
    const uint64_t high = ((((v & low7) + low7) | v) & ~low7) ^ flip;
    v = (high >> 7) * 0xFF;
    memcpy(out + x, &v, 8);
  }
  for (; x < n; x++) out[x] = (on[x] != 0) != (invert != 0) ? 255 : 0;
}

/* for (int i = 0; i < n; i++) BODY, the bulk in chunks of a fixed 32
 * iterations: GCC's -O2 vectoriser (the "very cheap" cost model) only takes
 * loops whose trip count it knows. BODY must not depend on earlier i, and
 * the loop must be a function's own, on restrict parameters: inside an outer
 * loop GCC 12 does not vectorise it. */
#define WSISA__VEC_FOR(i, n, ...)                                             \
  do {                                                                        \
    const int wsisa__n = (n);                                                 \
    int wsisa__base = 0;                                                      \
    for (; wsisa__base + 32 <= wsisa__n; wsisa__base += 32)                   \
      for (int wsisa__j = 0; wsisa__j < 32; wsisa__j++) {                     \
        const int i = wsisa__base + wsisa__j;                                 \
        __VA_ARGS__;                                                          \
      }                                                                       \
    for (int i = wsisa__base; i < wsisa__n; i++) {                            \
      __VA_ARGS__;                                                            \
    }                                                                         \
  } while (0)

/* ---- per-thread scratch (codelets/cpu/scratch.c) ------------------------- */

/* What a kernel keeps between calls on one thread: StarPU runs one task at a
 * time per worker thread, so a slot is never used by two calls at once. */
typedef enum {
  WSISA__SCRATCH_PLANES,  /* tile-sized planes (reconstruction) */
  WSISA__SCRATCH_ROWS,    /* a few image rows */
  WSISA__SCRATCH_FIFO,    /* the pixel FIFO's ring (morph_private.h) */
  WSISA__SCRATCH_RGB2LAB, /* colour caches: contents kept between calls */
  WSISA__SCRATCH_LAB2RGB,
  WSISA__SCRATCH_N
} wsisa__scratch_slot;
/* The calling thread's block of `slot`, at least `bytes` long, contents as
 * the last call left them (a new block is all zero bytes, which the colour
 * caches take as empty). NULL when out of memory. */
void *wsisa__scratch(wsisa__scratch_slot slot, size_t bytes);
/* Take the block out of its slot (the caller owns it), or hand one back. */
void *wsisa__scratch_take(wsisa__scratch_slot slot, size_t *bytes);
void wsisa__scratch_adopt(wsisa__scratch_slot slot, void *p, size_t bytes);
/* At the end of a kernel: free blocks until the thread keeps at most a
 * bounded total (scratch.c), so a rare huge image does not stay resident. */
void wsisa__scratch_trim(void);

/* out(u8, 1ch) = 255 - in[channel]. */
int wsisa_cpu_invert(const wsisa_image *in, int channel, wsisa_image *out);

/* workflow glue: out = mask ? -dist : -FLT_MAX (f32). */
int wsisa_cpu_neg_dist(const wsisa_image *dist, const wsisa_image *mask, wsisa_image *out);
/* ---- morph: mathematical morphology (docs/workflow.md levels 2, 3, 5, 6) ---------- */

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
/* u8 0/255: holes as fill holes', each filled only when the mask's pixels
 * around it form one (12 - conn)-connected object (codelets/cpu/fill_object_holes.c).
 * Sides up to 65535. */
int wsisa_cpu_fill_object_holes(const wsisa_image *mask, int conn, wsisa_image *out);
/* f32: h-minima transform, reconstruction by erosion of in + h over in; h >= 0.
 * f32 outputs of these kernels hold no -0.0. */
int wsisa_cpu_hmin(const wsisa_image *in, float h, int conn, wsisa_image *out);
/* f32 in (no NaN), u8 0/255 out: pixels of the regional minima (conn). */
int wsisa_cpu_regional_min(const wsisa_image *in, int conn, wsisa_image *out);
/* ---- pixel group: normalization (docs/workflow.md, Reinhard colour transfer as in
 * nscale) and the per-pixel segmentation operations ---------------------- */

/* Does img have like's width and height, `channels` channels of `type`? */
static inline int wsisa__image_is(const wsisa_image *img, const wsisa_image *like,
                                  int channels, wsisa_dtype type) {
  return img->width == like->width && img->height == like->height &&
         img->channels == channels && img->type == type;
}

/* The constants of the Reinhard lαβ transform (docs/workflow.md Normalization), made
 * in one place for the CPU kernels and uploaded as is for the OpenCL kernels:
 * only doubles, no padding, and the .cl files index it by this member order. */
typedef struct wsisa_reinhard {
  double rgb2lms[9];  /* RGB/255 -> LMS, row-major */
  double lms2lab[9];  /* log10 LMS -> lαβ: diag(1/√3, 1/√6, 1/√2)·[1 1 1; 1 1 −2; 1 −1 0] */
  double lab2lms[9];  /* exact inverse of lms2lab */
  double lms2rgb[9];  /* inverse of rgb2lms, computed in double */
  double lms_floor;   /* log10 of an LMS component is taken at least at this */
  double mean_target[3], std_target[3]; /* the template's lαβ statistics */
} wsisa_reinhard;
void wsisa_cpu_reinhard(wsisa_reinhard *k);

/* Fisher's discriminant rows M1, M2 (docs/workflow.md) in thousandths of a unit. */
extern const int wsisa__fisher_m1[4], wsisa__fisher_m2[4];

/* mask(u8) = 255 where M1·(R,G,B,1) < M2·(R,G,B,1); rgb is u8 × 3. */
int wsisa_cpu_fisher_fg(const wsisa_image *rgb, wsisa_image *mask);
/* lab(f32 × 3) = Reinhard lαβ of rgb(u8 × 3). */
int wsisa_cpu_rgb2lab(const wsisa_image *rgb, wsisa_image *lab);
/* Statistics of lab(f32 × 3) over the pixels where mask(u8) is non-zero. */
int wsisa_cpu_masked_stats(const wsisa_image *lab, const wsisa_image *mask,
                           double stats[WSISA_STATS_N]);
/* out = (lab − mean)·stdT/std + meanT where mask is on, lab elsewhere. */
int wsisa_cpu_color_transfer(const wsisa_image *lab, const wsisa_image *mask,
                             const double stats[WSISA_STATS_N], wsisa_image *out);
/* rgb_out = RGB of lab where mask is on, rgb_in elsewhere (u8 × 3). */
int wsisa_cpu_lab2rgb(const wsisa_image *lab, const wsisa_image *mask,
                      const wsisa_image *rgb_in, wsisa_image *rgb_out);
/* mask = (b > blue) & (g > green) & (r > red) on rgb(u8 × 3). */
int wsisa_cpu_background(const wsisa_image *rgb, int blue, int green, int red,
                         wsisa_image *mask);
/* first[d] = the least numerator n in 0..255 with n / (d + FLT_EPSILON) >
 * threshold in double, 256 when none: a ratio mask is then num >= first[den]. */
void wsisa_cpu_ratio_table(double threshold, uint16_t first[256]);
/* mask = img[num] / (img[den] + FLT_EPSILON) > threshold; img is u8, 1-4 ch. */
int wsisa_cpu_ratio_mask(const wsisa_image *img, int num_channel, int den_channel,
                         double threshold, wsisa_image *mask);
/* mask = grey > t (u8). */
int wsisa_cpu_threshold(const wsisa_image *grey, int t, wsisa_image *mask);
/* out = max(a − b, 0) (u8). */
int wsisa_cpu_sub_sat(const wsisa_image *a, const wsisa_image *b, wsisa_image *out);
/* out = a op b on masks; op is a wsisa_mask_op (codelets/codelets.h). */
int wsisa_cpu_mask_logic(const wsisa_image *a, const wsisa_image *b, int op,
                         wsisa_image *out);
/* counts = |A∩B|, |A|, |B| for masks a and b (non-zero = on). */
int wsisa_cpu_compare(const wsisa_image *a, const wsisa_image *b, uint64_t counts[3]);
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
/* The same for the runs of off pixels (mask 0): the components of the
 * background, conn-connected. */
int wsisa__cpu_runs_find_off(const wsisa_image *mask, int conn, wsisa__runs *runs);
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

/* ---- levels 6 and 7 object group by object group, with object reuse ---- */


/* Where the units a store does not hold are computed: NULL, crop by crop
 * with the kernels here; or, once for the call when any unit misses, by
 * `compute`, which sets out (u8 0/255, the tile's size) to the level's
 * tile-wide result - the fine-grain kernels' on the whole input, wherever
 * they run (codelets/separate.c: on the OpenCL device) - and returns 0 or a
 * WSISA_E*. Each missed unit's part of it is then stored, so the store
 * holds what the crops would have given (the argument at the top of
 * codelets/cpu/separate.c). */
typedef struct wsisa_object_whole {
  int (*compute)(void *ctx, wsisa_image *out);
  void *ctx;
} wsisa_object_whole;

/* Level 6 of docs/workflow.md from its dilated mask on, cluster by cluster:
 * out(u8 0/255) = the separated nuclei (the watershed's mask) of a tile whose
 * components >= min_size_pl, dilated, are `mask` (u8) and whose normalized
 * RGB is `rgb` (u8 x 3; may be NULL with `whole`); the same bits as the tile-wide kernels (edt,
 * neg_dist, hmin, regional_min, label, watershed). With a store (may be
 * NULL), a cluster seen before on this tile is taken from it. *tally (may be
 * NULL) gets this call's counts; `whole` (may be NULL) as above. Sides up
 * to WSISA_EDT_MAX_SIDE. */
int wsisa_cpu_separate(const wsisa_image *rgb, const wsisa_image *mask, int watershed_conn,
                       wsisa_object_store *store, const wsisa_object_whole *whole,
                       wsisa_object_tally *tally, wsisa_image *out);
/* Level 7 group by group: out(u8 0/255) = the 4-connected components of the
 * separated mask with min_size_seg <= area < max_size_seg (max <= 0: no
 * bound), their holes filled object by object (fill_holes_conn); the same
 * bits as area_filter then fill_object_holes. Store, whole and tally as
 * above. Sides up to 65535. */
int wsisa_cpu_final_size(const wsisa_image *mask, int min_size_seg, int max_size_seg,
                         int fill_holes_conn, wsisa_object_store *store,
                         const wsisa_object_whole *whole, wsisa_object_tally *tally,
                         wsisa_image *out);

/* study metrics: the object count of a canonical label image (its largest label). */
int wsisa_cpu_count_labels(const wsisa_image *labels, uint64_t *count);
/* out(u8 0/255) = the objects of labels(i32) whose centroid lies in the core
 * [x0, x1) x [y0, y1) (a tile read with a halo keeps what it owns). */
int wsisa_cpu_own_objects(const wsisa_image *labels, int x0, int y0, int x1, int y1,
                          wsisa_image *out);

/* ---- nucleus features: the per-nucleus reduction of the feature stage ---- */

/* rows (n x WSISA_NF_ROW(nchannels) doubles) = the features of objects 1..n of
 * labels (i32, every value in 0..n); channels are f32 images of the same
 * shape. Definitions: codelets/cpu/nucleus_features.c. */
int wsisa_cpu_nucleus_features(const wsisa_image *labels, int32_t n,
                               const wsisa_image *const *channels, int nchannels,
                               double *rows);
/* What both implementations of the per-nucleus reduction reduce an object to:
 * exact integer sums, then per channel (sum, sum of squares, sum of squared
 * deviations from the mean, median) in doubles summed in raster order. One
 * host function finishes the row from them (square roots, atan2, divisions),
 * so the CPU and OpenCL rows are the same bytes. perim counts border pixels
 * weighing 1, √2 and (1+√2)/2. The OpenCL kernels write this very layout. */
typedef struct wsisa_nf_sums {
  int64_t area, sx, sy, sxx, sxy, syy;
  int64_t x0, y0, x1, y1; /* bbox, inclusive */
  int64_t perim[3];
  int64_t convex;
} wsisa_nf_sums;
enum { WSISA_NF_RAW_SUM, WSISA_NF_RAW_SQ, WSISA_NF_RAW_DEV, WSISA_NF_RAW_MEDIAN, WSISA_NF_RAW };
/* row (WSISA_NF_ROW(nchannels) doubles) of object `id` from its sums and its
 * nchannels x WSISA_NF_RAW channel values; a zero row but the label when the
 * object has no pixel. */
void wsisa__nf_finish(const wsisa_nf_sums *o, int32_t id, const double *raw, int nchannels,
                      double *row);
/* The object match of ref and run (the fields: codelets/cpu/published.h). */
int wsisa_cpu_object_match(const wsisa_image *ref, const wsisa_image *run,
                           uint64_t sums[WSISA_MATCH_FIELDS]);
/* One object's Dice term: round(area · 2·overlap / (area + other_area) · ONE). */
uint64_t wsisa_object_match_term(uint64_t area, uint64_t overlap, uint64_t other_area);
/* ---- features, pixel half: per-tile channels (colour deconvolution, Sobel,
 * filter bank) ---------------------------------------------------------------- */

/* rgb(u8 × 3) -> h, eo, res (f32, 1 channel each). */
int wsisa_cpu_deconv(const wsisa_image *rgb, const wsisa_deconv_consts *k,
                     wsisa_image *h, wsisa_image *eo, wsisa_image *res);
/* mag(f32) = sqrt(gx² + gy²), unnormalised 3×3 Sobel on in(f32); outside
 * pixels repeat the nearest edge pixel (scipy's 'nearest', equal to its
 * 'reflect' for a 3×3 kernel). */
int wsisa_cpu_sobel(const wsisa_image *in, wsisa_image *mag);

/* Filter bank: scale-normalised Laplacian of Gaussian σ²·(Gxx + Gyy) at each
 * σ, scipy.ndimage.gaussian_laplace's sampled kernel (truncate 4), outside
 * pixels mirrored (scipy's 'reflect': d c b a | a b c d | d c b a). */
#define WSISA_FILTER_BANK_MAX_SCALES 7
#define WSISA_FILTER_BANK_MAX_SIGMA 32.0f
/* Radius of the σ kernel: (int)(4σ + 0.5). */
int wsisa_cpu_log_radius(float sigma);
/* The 2r + 1 taps (x = -r..r) of the normalised sampled Gaussian g and of
 * σ²·g'' = (x²/σ² − 1)·g, so the kernel is g2(x)·g(y) + g(x)·g2(y). */
void wsisa_cpu_log_taps(float sigma, float *g, float *g2);
/* Index i of a line of n pixels mirrored into 0..n-1 (any i, any n >= 1). */
int wsisa_cpu_reflect(int i, int n);
/* out[s](f32) = response at sigmas[s] of in(f32), s < nscales; in the
 * frequency domain with FFTW, plans made once per padded size (thread-safe).
 * sigmas in (0, WSISA_FILTER_BANK_MAX_SIGMA]. */
int wsisa_cpu_filter_bank(const wsisa_image *in, const float *sigmas, int nscales,
                          wsisa_image *const *out);
/* How many FFTW plans the filter bank has made in this process (tests). */
unsigned long wsisa__cpu_filter_bank_plans_made(void);

#endif
