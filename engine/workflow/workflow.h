/* engine/workflow: the segmentation workflow of docs/workflow.md as StarPU
 * task graphs (the tile stage, the seven reuse-level tasks, the measure
 * against the reference, the feature stage), the tile they run on, the
 * segmentation's parameters, the reuse-level task keys, and the stain check
 * of a slide or image. The
 * lowest room of engine/: it uses codelets/, io/, sa/, reuse/ and core/. */
#ifndef WSISA_ENGINE_WORKFLOW_H
#define WSISA_ENGINE_WORKFLOW_H

#include <stddef.h>
#include <stdint.h>

#include <starpu.h>

#include "codelets/codelets.h"
#include "core/core.h"
#include "io/io.h"

/* The segmentation workflow of docs/workflow.md as StarPU task graphs: the
 * per-tile stage (normalization, and the parameter-free work every parameter
 * set shares) and the seven reuse-level tasks of the segmentation. */

/* The 15 parameters, indexed in canonical order (docs/workflow.md). */
enum {
  WSISA_P_B, WSISA_P_G, WSISA_P_R, WSISA_P_T1, WSISA_P_T2, WSISA_P_G1, WSISA_P_G2,
  WSISA_P_MIN_SIZE, WSISA_P_MAX_SIZE, WSISA_P_MIN_SIZE_PL, WSISA_P_MIN_SIZE_SEG,
  WSISA_P_MAX_SIZE_SEG, WSISA_P_FILL_HOLES_CONN, WSISA_P_RECON_CONN,
  WSISA_P_WATERSHED_CONN, WSISA_SEG_NPARAMS
};
#define WSISA_SEG_LEVELS 7

/* The one rule for background, shared with the tissue detection of `wsisa
 * tiles` (io's WSISA_TISSUE_THRESHOLD): a tile holds tissue when tissue covers
 * at least that share of it (of its core, for a tile read with a halo). The
 * workflow empties the mask of a tile whose pixels off the background
 * (b > B and g > G and r > R) are fewer: background above this share. */
#define WSISA_BACKGROUND_SKIP (1.0 - WSISA_TISSUE_THRESHOLD)

/* Names, defaults and task levels come from the one table of the
 * segmentation's parameters, sa/'s wsisa_sa_seg_params, in this order. */
const char *wsisa_seg_param_name(int index);
/* Task level (1..7) whose identity includes the parameter. */
int wsisa_seg_param_level(int index);
/* The default parameter set (15 values, canonical order). */
const double *wsisa_seg_defaults(void);
/* Parse "name=value,name=value" onto `p` (which holds defaults or earlier
 * values); "@FILE" reads a JSON object of values instead, or the
 * "parameters" object of one (best.json's shape). */
int wsisa_seg_params_parse(const char *text, double *p, wsisa_err *e);

/* The feature stage (seed 000 Fig. 1, Table 2). Its channels are
 * parameter-free, so they belong to the tile stage (computed once per tile and
 * shared by every run); the per-run part labels a final mask and reduces it
 * per nucleus (codelets/codelets.h, WSISA_NF_*). */
#define WSISA_FEATURE_CHANNELS_MAX 8

/* What the whole tile shares: the normalized RGB, and the parameter-free
 * intermediates (rc = 255 - red, its opening by the 19x19 disk). */
typedef struct wsisa_tile_data {
  int width, height;
  /* WSISA_TARGET_MPP over the tile's um/pixel: the parameters' sizes are
   * tuned at 0.5 um/pixel, so at another resolution their areas are scaled
   * by its square and the opening's radius by it (1 at 0.5 um/pixel) */
  double length_scale;
  starpu_data_handle_t rgb;
  starpu_data_handle_t rc;
  starpu_data_handle_t rc_open;
  /* level 2's reconstruction of rc_open under rc, which depends on the tile
   * and recon_conn alone: made once by the tile stage for the connectivities
   * its frame names ([0] 4-connected, [1] 8-connected; NULL: not made, level
   * 2 then makes its own) */
  starpu_data_handle_t recon[2];
  /* the feature stage's channels (f32), when wsisa_workflow_channels_submit
   * made them: H, E, Sobel magnitude of H, filter-bank responses of H */
  int nchannels;
  starpu_data_handle_t channels[WSISA_FEATURE_CHANNELS_MAX];
  /* object reuse: the tile's object store (codelets/codelets.h), or NULL for
   * the fine-grain codelets of levels 6 and 7 (docs/architecture.md) */
  struct wsisa_object_store *objects;
  /* a tile read with a halo (wsisa_workflow_tile_submit_framed): its core
   * [core_x, core_x + core_w) x [core_y, core_y + core_h) in these pixels,
   * and a mask of it; without a halo the core is the whole tile and
   * core_mask is NULL */
  int core_x, core_y, core_w, core_h;
  starpu_data_handle_t core_mask;
} wsisa_tile_data;

/* How a tile was read: its core inside the pixels read (a halo around it),
 * and the colour statistics to normalize it with. */
typedef struct wsisa_tile_frame {
  int core_x, core_y, core_w, core_h; /* core_w = 0: the whole tile, no halo */
  /* NULL: each tile's own statistics (the papers' behaviour); else the
   * WSISA_STATS_N doubles of masked_stats over the slide's tissue
   * (wsisa_slide_stats), copied at submission */
  const double *stats;
  /* the level-2 reconstructions the tile stage makes (bit 0: 4-connected,
   * bit 1: 8-connected; wsisa_workflow_recon_conns); 0: none */
  int recon_conns;
} wsisa_tile_frame;

/* The level-2 reconstructions a study's tile stage makes for `nruns`
 * parameter sets (rows of WSISA_SEG_NPARAMS) and its reference (the
 * defaults), as wsisa_tile_frame.recon_conns. */
int wsisa_workflow_recon_conns(const double *p, size_t nruns);

/* The halo (target pixels) a tile is read with so that what it keeps of its
 * core does not depend on the tiling, for the parameter sets `p` (nruns rows
 * of WSISA_SEG_NPARAMS, their largest): docs/workflow.md, Tiles. */
int wsisa_workflow_halo(const double *p, size_t nruns);
/* The halo a slide's tiles are read with by default ("auto", inputs.halo of a
 * study, `segment --halo`): wsisa_workflow_halo over the defaults (the
 * reference) and the parameter sets `p` (nruns rows, may be 0), in pixels of
 * target_mpp um (0: WSISA_TARGET_MPP), where the size parameters follow the
 * resolution; rounded up to 16 pixels. */
int wsisa_workflow_halo_at(const double *p, size_t nruns, double target_mpp);
/* The factor over the operations' bounded reach (wsisa_workflow_halo) that
 * covers what the reconstructions see. */
#define WSISA_HALO_MARGIN 2.0

/* What the tasks on one root-to-node path of a task tree have produced; a task
 * reads its ancestors' outputs, not only its parent's. */
typedef struct wsisa_task_data {
  starpu_data_handle_t rbc;   /* level 1: red blood cells */
  starpu_data_handle_t diff;  /* level 2: rc - reconstruction (saturating) */
  starpu_data_handle_t cand;  /* level 3: candidates, holes filled */
  starpu_data_handle_t sized; /* level 4: candidates within the size range */
  starpu_data_handle_t hyst;  /* level 5: hysteresis result */
  starpu_data_handle_t sep;   /* level 6: separated nuclei */
  starpu_data_handle_t final; /* level 7: the segmentation mask */
  /* level 6's watershed regions (i32, -1 on lines), written only into an
   * image the caller registered here before level 6; none by default */
  starpu_data_handle_t basins;
} wsisa_task_data;

/* The tile stage's opening radius at WSISA_TARGET_MPP (a 19x19 disk). */
#define WSISA_OPENING_RADIUS 9

/* Submit the tile stage of a tile at WSISA_TARGET_MPP, the resolution the
 * parameters are tuned for: `rgb_in` is normalized into a new intermediate
 * (or used as is when `normalize` is 0, in which case the caller keeps it
 * registered until wsisa_workflow_tile_release). */
int wsisa_workflow_tile_submit(starpu_data_handle_t rgb_in, int width, int height,
                               int normalize, wsisa_tile_data *tile, wsisa_err *e);
/* The same for a tile whose pixels are target_mpp um wide (the size
 * parameters and the opening follow: wsisa_tile_data.length_scale), read
 * with a halo, or normalized with a slide's statistics (`frame`, may be
 * NULL: the whole tile, its own statistics). The segmentation then keeps
 * the objects whose centroid lies in the core (wsisa_workflow_own_submit),
 * and the background rule looks at the core only. */
int wsisa_workflow_tile_submit_framed(starpu_data_handle_t rgb_in, int width, int height,
                                      double target_mpp, int normalize,
                                      const wsisa_tile_frame *frame, wsisa_tile_data *tile,
                                      wsisa_err *e);
void wsisa_workflow_tile_release(wsisa_tile_data *tile, int release_rgb);

/* The background share for (B, G, R) of `p`: submits the background mask and
 * its count, waits for them, and sets *skip when the tile's mask is empty by
 * the 90 % rule. Blocks the calling thread, never a worker. */
int wsisa_workflow_background_skip(const wsisa_tile_data *tile, const double *p, int *skip,
                                   wsisa_err *e);
/* The same in two steps, so the counts can be submitted ahead: submit the
 * background mask and its count into counts[3] (registered as *h); then
 * wait for *h (unregistered, set to NULL) and decide. */
int wsisa_workflow_background_submit(const wsisa_tile_data *tile, const double *p,
                                     uint64_t counts[3], starpu_data_handle_t *h, wsisa_err *e);
int wsisa_workflow_background_wait(const wsisa_tile_data *tile, const uint64_t counts[3],
                                   starpu_data_handle_t *h);
/* Tissue pixels of the tile's core by the counts of wsisa_workflow_background_submit
 * (once waited for): the core's pixels off the background. */
uint64_t wsisa_workflow_tissue(const wsisa_tile_data *tile, const uint64_t counts[3]);
/* The background decision and the tissue it saw, in one call (blocking, as
 * wsisa_workflow_background_skip). */
int wsisa_workflow_background_tissue(const wsisa_tile_data *tile, const double *p, int *skip,
                                     uint64_t *tissue, wsisa_err *e);

/* Submit task `level` (1..7) with the parameters `p`, reading its ancestors'
 * outputs from `path` and storing its own there. Level 7 writes into
 * `final_out` when given (a registered mask), else into an intermediate.
 * With tile->objects, levels 6 and 7 run object by object and reuse what
 * the tile's store holds (level 6 only when path->basins is not asked for):
 * the same masks. */
int wsisa_workflow_task_submit(int level, const double *p, const wsisa_tile_data *tile,
                               wsisa_task_data *path, starpu_data_handle_t final_out,
                               wsisa_err *e);
/* Release what task `level` produced, once its last consumer is submitted. */
void wsisa_workflow_task_release(int level, wsisa_task_data *path);

/* What the tile keeps of a final mask: *owned = the 4-connected objects of
 * `mask` whose centroid lies in the tile's core (own_objects), a new
 * intermediate the caller releases; without a halo *owned = mask, nothing
 * submitted. */
int wsisa_workflow_own_submit(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                              starpu_data_handle_t *owned, wsisa_err *e);

/* What to measure of a mask against the reference. */
typedef struct wsisa_measure {
  starpu_data_handle_t counts;      /* vector of 3 uint64: |mask ∩ ref|, |mask|, |ref| */
  starpu_data_handle_t nuclei;      /* vector of 1 uint64: 4-connected objects of mask
                                       (the final size filter's connectivity) */
  starpu_data_handle_t match;       /* NULL, or vector of WSISA_MATCH_FIELDS uint64:
                                       mask's objects matched with ref_labels'
                                       (object_match, codelets/codelets.h) */
  starpu_data_handle_t ref_labels;  /* the reference's labels, read when match is set */
  starpu_data_handle_t *labels_out; /* NULL, or receives mask's labels (the caller
                                       unregisters them) */
} wsisa_measure;

int wsisa_workflow_measure_submit(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                  starpu_data_handle_t ref, const wsisa_measure *m,
                                  wsisa_err *e);

/* The whole segmentation of one tile with one parameter set into `mask_out`
 * (u8 0/255, registered by the caller): for a tile read with a halo, the
 * objects its core owns. An empty mask when the background rule applies. */
int wsisa_workflow_segment_submit(const wsisa_tile_data *tile, const double *p,
                                  starpu_data_handle_t mask_out, wsisa_err *e);
/* The same once the background rule's verdict for p's (B, G, R) is known
 * (`empty`: wsisa_workflow_background_skip's *skip, or what
 * wsisa_workflow_background_wait returned): the background is not counted
 * again. */
int wsisa_workflow_segment_submit_decided(const wsisa_tile_data *tile, const double *p,
                                          int empty, starpu_data_handle_t mask_out,
                                          wsisa_err *e);

/* The stain check (engine/workflow/stain.c) of one RGB u8 image: 0 when it is
 * bright-field H&E or has too little tissue to say, with `warning` (cap
 * bytes; may be NULL) "" or one line naming `name`, what may be wrong and
 * `override`, also logged as a warning; else WSISA_EUSAGE with one line
 * naming `name`, what was seen, and `override` (how to run it anyway).
 * `dark_background`: the image is a region of a slide whose background io's
 * tissue detection found dark; said in a refusal, not a reason for one. */
int wsisa_stain_check_image(const wsisa_image *rgb, int dark_background, const char *name,
                            const char *override, char *warning, size_t cap, wsisa_err *e);

/* ---- the feature stage ------------------------------------------------------ */

/* Channel names in the order wsisa_workflow_channels_submit makes them: "h",
 * "e", "grad" (Sobel magnitude of H), "fb_s<σ>" (filter bank on H, at
 * WSISA_FILTER_BANK_DEFAULT_SCALES). */
int wsisa_workflow_channel_count(void);
const char *wsisa_workflow_channel_name(int channel);
/* Submit the tile's channels (from its normalized RGB) into tile->channels;
 * released with the tile. filter_bank_on_cpu pins the filter bank to CPU
 * workers (its CPU and OpenCL versions agree only to rounding). */
int wsisa_workflow_channels_submit(wsisa_tile_data *tile, int filter_bank_on_cpu,
                                   wsisa_err *e);
/* Columns of a feature row (WSISA_NF_ROW(tile channels) of them): the shape
 * names, then <channel>_<statistic> ("h_mean", "grad_std", ...). Writes the
 * name of column `col` into buf; -1 when col is out of range. */
int wsisa_workflow_feature_column(int col, char *buf, size_t cap);
/* The column named `name`, -1 when none is. */
int wsisa_workflow_feature_find(const char *name);
/* The first half of the per-run part: labels (i32, registered by the caller)
 * = 4-connected objects of `mask` (the final size filter's connectivity), and
 * `count` (vector of 1 uint64) their number. */
int wsisa_workflow_objects_submit(starpu_data_handle_t mask, starpu_data_handle_t labels,
                                  starpu_data_handle_t count, wsisa_err *e);
/* The second half, once the count n > 0 is known: rows (vector of
 * n × WSISA_NF_ROW(tile->nchannels) doubles) = the nuclei's features. */
int wsisa_workflow_reduce_submit(const wsisa_tile_data *tile, starpu_data_handle_t labels,
                                 starpu_data_handle_t rows, wsisa_err *e);
/* The second half for labels whose count n is known, waiting on the calling
 * thread (never a worker): *rows (malloc'd, NULL when n is 0). */
int wsisa_workflow_rows_compute(const wsisa_tile_data *tile, starpu_data_handle_t labels,
                                size_t n, double **rows, wsisa_err *e);
/* Both halves for one mask, waiting on the calling thread (never a worker):
 * *rows (malloc'd, NULL when there is no nucleus) holds *n rows. */
int wsisa_workflow_features_compute(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                    double **rows, size_t *n, wsisa_err *e);

/* ---- a tile ----------------------------------------------------------------- */

/* One tile of the study, as every rank reads it: a rectangle of a slide at
 * the study's target resolution, or a whole image file (resampled when the
 * study gives its MPP). Plain data, sent whole to MPI ranks. */
typedef struct wsisa_tile_ref {
  const char *path;
  wsisa_input_kind kind; /* which backend of io/ reads it */
  /* how the slide or image is read: level, factor, MPP (wsisa_scale_choose,
   * wsisa_scale_for_image) */
  wsisa_scale scale;
  int64_t x, y;       /* origin in target pixels (0, 0 for an image) */
  int width, height;  /* in target pixels */
  wsisa_rect level0;  /* the same rectangle in level-0 pixels of the slide or image */
  /* the reference: NULL, the segmentation with the default parameters; else
   * the annotation of the tile's slide (io/annotation.c), rasterised onto the
   * tile (the tile is annotated: the study runs no other) */
  const wsisa_annot_spec *annot;
  /* colour normalization: has_stats, with the slide's statistics (masked_stats'
   * WSISA_STATS_N doubles over its tissue, wsisa_slide_stats); 0, each tile's
   * own (the papers' behaviour) */
  int has_stats;
  double stats[WSISA_STATS_N];
} wsisa_tile_ref;

/* ---- the task keys ---------------------------------------------------------- */

/* The reuse-level task keys (WSISA_SEG_LEVELS per run) of runs given as rows
 * of `nparams` values whose task level (1..7) `level` names per column: what
 * reuse/ merges and the executor's peers agree on. */
int wsisa_workflow_keys(const double *values, size_t nruns, size_t nparams, const int *level,
                        uint64_t *keys);

/* ---- the stain check's measures, summed over the tiles seen ------------------ */

/* Bins of the tissue pixels' optical-density chromaticity (red and green
 * shares, each in WSISA_STAIN_CHROMA steps), and of their mean optical
 * density per channel (0.01 steps, the last holding the rest). */
#define WSISA_STAIN_CHROMA 64
#define WSISA_STAIN_OD_BINS 256
/* Fewer tissue pixels leave the check undecided (passed); under
 * WSISA_STAIN_NO_TISSUE of at least WSISA_STAIN_MIN_PIXELS pixels is no
 * tissue (refused). */
#define WSISA_STAIN_MIN_TISSUE 4096
#define WSISA_STAIN_MIN_PIXELS 65536
#define WSISA_STAIN_NO_TISSUE 0.005

/* What the check sums over the tiles it sees: tissue pixels (summed optical
 * density over R, G, B of 0.3 or more) and all pixels by brightness. Sums
 * and histograms only, so tiles add in any grouping to the same figures. */
typedef struct wsisa__stain {
  size_t tiles;
  uint64_t pixels, tissue;    /* pixels seen; tissue pixels */
  uint64_t colourless;        /* tissue pixels whose channels differ by at most 6 */
  double od_sum;              /* their mean optical density per channel, summed */
  double moment[6];           /* their optical densities' second moments: rr rg rb gg gb bb */
  uint64_t chroma[WSISA_STAIN_CHROMA * WSISA_STAIN_CHROMA]; /* by OD chromaticity (r, g) */
  uint64_t od_bins[WSISA_STAIN_OD_BINS];                   /* by mean OD per channel */
  uint64_t level[256];        /* all pixels by (R + G + B) / 3 ... */
  double level_grey[256];     /* ... and their weakest over strongest channel, summed */
  double stained_od;          /* summed OD of the pixels of 0.6 or more ... */
  double brown_od;            /* ... and of those among them absorbing blue most */
  int dark_background;        /* io's tissue detection took the slide as dark field */
} wsisa__stain;

/* The measures the verdict rests on (run.json's `stain`). */
typedef struct wsisa__stain_measures {
  size_t tiles;
  uint64_t pixels, tissue;
  double tissue_share;        /* tissue pixels over pixels */
  double mean_od;             /* mean optical density per channel of tissue */
  double dark_od;             /* its 95th percentile: the darkest stain */
  double colourless;          /* share of tissue pixels without colour */
  double white;               /* the brightest 1 %: weakest over strongest channel ... */
  double light;               /* ... and their mean level, (R + G + B) / 3 */
  double brown;               /* share of stained OD in pixels absorbing blue most */
  int dark_background;
  int vectors;                /* the slide's stain vectors were estimated: */
  double haematoxylin[3], eosin[3]; /* unit OD vectors (R, G, B); eosin: the greener */
  double residual;            /* OD energy off their plane */
  double eosin_green;         /* eosin's green over its larger of red and blue */
  double eosin_minor;         /* its smaller of red and blue over green */
  int eosin_found;            /* both as eosin's */
  double swap;                /* (eosin B - R) + (haematoxylin R - B): H&E above 0 */
} wsisa__stain_measures;

/* Add the pixels of an RGB u8 tile. */
void wsisa__stain_add(wsisa__stain *st, const wsisa_image *rgb);
/* A few of the grid's tissue tiles, spread over the slide, and its background. */
int wsisa__stain_sample(wsisa_input *in, const wsisa_grid *g, wsisa__stain *st,
                        wsisa_err *e);
/* The measures of what was seen. */
void wsisa__stain_measure(const wsisa__stain *st, wsisa__stain_measures *m);
/* wsisa_stain_check_image's verdict on what was seen. */
int wsisa__stain_verdict(const wsisa__stain *st, const char *name, const char *override,
                         char *warning, size_t cap, wsisa_err *e);

#endif
