/* The segmentation workflow of DESIGN.md §3 as StarPU task graphs: the
 * per-tile stage (normalization, and the parameter-free work every parameter
 * set shares) and the seven reuse-level tasks of the segmentation. */
#ifndef WSISA_WORKFLOW_H
#define WSISA_WORKFLOW_H

#include <starpu.h>

#include "core/core.h"

/* The 15 parameters, indexed in canonical order (DESIGN.md §3). */
enum {
  WSISA_P_B, WSISA_P_G, WSISA_P_R, WSISA_P_T1, WSISA_P_T2, WSISA_P_G1, WSISA_P_G2,
  WSISA_P_MIN_SIZE, WSISA_P_MAX_SIZE, WSISA_P_MIN_SIZE_PL, WSISA_P_MIN_SIZE_SEG,
  WSISA_P_MAX_SIZE_SEG, WSISA_P_FILL_HOLES_CONN, WSISA_P_RECON_CONN,
  WSISA_P_WATERSHED_CONN, WSISA_SEG_NPARAMS
};
#define WSISA_SEG_LEVELS 7

/* Share of background pixels at or above which a tile's mask is empty. */
#define WSISA_BACKGROUND_SKIP 0.9

/* Names, defaults and task levels come from the one table of the
 * segmentation's parameters, sa/'s wsisa_sa_seg_params, in this order. */
const char *wsisa_seg_param_name(int index);
/* Task level (1..7) whose identity includes the parameter. */
int wsisa_seg_param_level(int index);
/* The default parameter set (15 values, canonical order). */
const double *wsisa_seg_defaults(void);
/* Parse "name=value,name=value" onto `p` (which holds defaults or earlier values). */
int wsisa_seg_params_parse(const char *text, double *p, wsisa_err *e);

/* What the whole tile shares: the normalized RGB, and the parameter-free
 * intermediates (rc = 255 - red, its opening by the 19x19 disk). */
typedef struct wsisa_tile_data {
  int width, height;
  starpu_data_handle_t rgb;
  starpu_data_handle_t rc;
  starpu_data_handle_t rc_open;
} wsisa_tile_data;

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
} wsisa_task_data;

/* Submit the tile stage: `rgb_in` is normalized into a new intermediate (or
 * used as is when `normalize` is 0, in which case the caller keeps it
 * registered until wsisa_workflow_tile_release). */
int wsisa_workflow_tile_submit(starpu_data_handle_t rgb_in, int width, int height,
                               int normalize, wsisa_tile_data *tile, wsisa_err *e);
void wsisa_workflow_tile_release(wsisa_tile_data *tile, int release_rgb);

/* The background share for (B, G, R) of `p`: submits the background mask and
 * its count, waits for them, and sets *skip when the tile's mask is empty by
 * the 90 % rule. Blocks the calling thread, never a worker. */
int wsisa_workflow_background_skip(const wsisa_tile_data *tile, const double *p, int *skip,
                                   wsisa_err *e);

/* Submit task `level` (1..7) with the parameters `p`, reading its ancestors'
 * outputs from `path` and storing its own there. Level 7 writes into
 * `final_out` when given (a registered mask), else into an intermediate. */
int wsisa_workflow_task_submit(int level, const double *p, const wsisa_tile_data *tile,
                               wsisa_task_data *path, starpu_data_handle_t final_out,
                               wsisa_err *e);
/* Release what task `level` produced, once its last consumer is submitted. */
void wsisa_workflow_task_release(int level, wsisa_task_data *path);

/* What to measure of a mask against the reference. */
typedef struct wsisa_measure {
  starpu_data_handle_t counts;      /* vector of 3 uint64: |mask ∩ ref|, |mask|, |ref| */
  starpu_data_handle_t nuclei;      /* vector of 1 uint64: 4-connected objects of mask
                                       (the final size filter's connectivity) */
  starpu_data_handle_t match;       /* NULL, or vector of 2 uint64: object Dice sums of
                                       mask's objects against ref_labels' (object_match) */
  starpu_data_handle_t ref_labels;  /* the reference's labels, read when match is set */
  starpu_data_handle_t *labels_out; /* NULL, or receives mask's labels (the caller
                                       unregisters them) */
} wsisa_measure;

int wsisa_workflow_measure_submit(const wsisa_tile_data *tile, starpu_data_handle_t mask,
                                  starpu_data_handle_t ref, const wsisa_measure *m,
                                  wsisa_err *e);

/* The whole segmentation of one tile with one parameter set into `mask_out`
 * (u8 0/255, registered by the caller). An empty mask when the background rule
 * applies. */
int wsisa_workflow_segment_submit(const wsisa_tile_data *tile, const double *p,
                                  starpu_data_handle_t mask_out, wsisa_err *e);

#endif
