/* Fill holes of a binary mask as nscale's fillHoles(img, conn) and MATLAB's
 * imfill(bw, conn, 'holes') (docs/workflow.md levels 3, 5 and 7): background pixels
 * reachable from the image border through background pixels with
 * connectivity conn stay background, every other pixel becomes foreground.
 * scipy.ndimage.binary_fill_holes floods the background with its `structure`,
 * so its default (the cross) is conn 4 and a 3×3 square is conn 8. */
#include "codelets/cpu/morph_private.h"

/* Row helpers of their own: GCC vectorises these loops only there. */
static void state_row(uint8_t *restrict o, const uint8_t *restrict m, int width) {
  WSISA__VEC_FOR(x, width, o[x] = m[x] ? 0 : WSISA__FLOOD_OPEN);
}

static void result_row(uint8_t *restrict o, int width) {
  WSISA__VEC_FOR(x, width, o[x] = o[x] == WSISA__FLOOD_DONE ? 0 : 255);
}

int wsisa_cpu_fill_holes(const wsisa_image *mask, int conn, wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  if (mask->type != WSISA_U8 || out->type != WSISA_U8 || mask->channels != 1 ||
      out->channels != 1 || out->width != width || out->height != height ||
      (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  /* out is the flood's state: background open, foreground closed. */
  for (int y = 0; y < height; y++)
    state_row(wsisa_image_row(out, y), wsisa_image_row(mask, y), width);
  wsisa__flood_stack stack = {0};
  int rc = wsisa__flood(out, conn, 0, 0, width - 1, &stack);
  if (!rc && height > 1) rc = wsisa__flood(out, conn, height - 1, 0, width - 1, &stack);
  for (int y = 1; y < height - 1 && !rc; y++) {
    rc = wsisa__flood(out, conn, y, 0, 0, &stack);
    if (!rc && width > 1) rc = wsisa__flood(out, conn, y, width - 1, width - 1, &stack);
  }
  wsisa__flood_free(&stack);
  if (rc) return rc;
  for (int y = 0; y < height; y++) result_row(wsisa_image_row(out, y), width);
  return 0;
}
