/* Grey reconstruction by dilation of a marker under a mask, u8 or f32
 * (docs/workflow.md level 2: rc_recon from rc_open under rc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/morph_private.h"

/* Scan pairs before the propagation, by instruction counts on the workflow's
 * 4096² inputs: level 2 (u8, rc_open under rc) leaves long winding paths to
 * the FIFO, and a second pair saves more FIFO work than it costs (a third does
 * not); on level 6 (f32, h-minima of the distance relief) one pair leaves the
 * FIFO almost nothing. Level 2's propagation goes by levels (RECON_LEVELS),
 * and two pairs stay the fastest there (the tests' 1024² tile, conn 4 and 8:
 * 13.0, 11.1, 13.3 ms for one, two, three pairs with 4-connectivity). */
#define T uint8_t
#define T_LOWEST 0
#define RECON_LEVELS 256
#define RECON_PROPAGATE recon_propagate_u8
#define RECON_LEVEL_T recon_level_u8
#define RECON_LEVEL_PUSH recon_level_push_u8
#define RECON_PAIRS 2
#define RECON_NAME wsisa__recon_u8
#define RECON_PLANES wsisa__recon_u8_planes
#define RECON_IMAGES recon_images_u8
#define RECON_SCAN recon_scan_u8
#define RECON_UP recon_up_u8
#define RECON_FLAG recon_flag_u8
#define RECON_IN_ROW recon_in_row_u8
#define RECON_OUT_ROW recon_out_row_u8
#include "codelets/cpu/recon_hybrid.h"
#undef T
#undef T_LOWEST
#undef RECON_LEVELS
#undef RECON_PROPAGATE
#undef RECON_LEVEL_T
#undef RECON_LEVEL_PUSH
#undef RECON_PAIRS
#undef RECON_NAME
#undef RECON_PLANES
#undef RECON_IMAGES
#undef RECON_SCAN
#undef RECON_UP
#undef RECON_FLAG
#undef RECON_IN_ROW
#undef RECON_OUT_ROW

#define T float
#define T_LOWEST (-INFINITY)
#define RECON_PAIRS 1
#define RECON_NAME wsisa__recon_f32
#define RECON_PLANES wsisa__recon_f32_planes
#define RECON_IMAGES recon_images_f32
#define RECON_SCAN recon_scan_f32
#define RECON_UP recon_up_f32
#define RECON_FLAG recon_flag_f32
#define RECON_IN_ROW recon_in_row_f32
#define RECON_OUT_ROW recon_out_row_f32
#include "codelets/cpu/recon_hybrid.h"
#undef T
#undef T_LOWEST
#undef RECON_PAIRS
#undef RECON_NAME
#undef RECON_PLANES
#undef RECON_IMAGES
#undef RECON_SCAN
#undef RECON_UP
#undef RECON_FLAG
#undef RECON_IN_ROW
#undef RECON_OUT_ROW

int wsisa_cpu_reconstruct(const wsisa_image *marker, const wsisa_image *mask, int conn,
                          wsisa_image *out) {
  const wsisa_dtype type = mask->type;
  const int width = mask->width, height = mask->height;
  if ((type != WSISA_U8 && type != WSISA_F32) || marker->type != type ||
      out->type != type || marker->channels != 1 || mask->channels != 1 ||
      out->channels != 1 || marker->width != width || marker->height != height ||
      out->width != width || out->height != height || (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  return type == WSISA_U8 ? recon_images_u8(marker, mask, conn, out)
                          : recon_images_f32(marker, mask, conn, out);
}
