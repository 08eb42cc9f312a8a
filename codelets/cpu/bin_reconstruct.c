/* Binary reconstruction (MATLAB imreconstruct on binary images, scipy's
 * binary_propagation): the mask pixels connected within the mask to a pixel
 * of seed AND mask (docs/workflow.md levels 1 and 5). */
#include <string.h>

#include "codelets/cpu/morph_private.h"

/* Row helpers of their own: GCC vectorises these loops only there. */
static void state_row(uint8_t *restrict o, const uint8_t *restrict m, int width) {
  WSISA__VEC_FOR(x, width, o[x] = m[x] ? WSISA__FLOOD_OPEN : 0);
}

static void result_row(uint8_t *restrict o, int width) {
  WSISA__VEC_FOR(x, width, o[x] = o[x] == WSISA__FLOOD_DONE ? 255 : 0);
}

int wsisa_cpu_bin_reconstruct(const wsisa_image *seed, const wsisa_image *mask, int conn,
                              wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  if (seed->type != WSISA_U8 || mask->type != WSISA_U8 || out->type != WSISA_U8 ||
      seed->channels != 1 || mask->channels != 1 || out->channels != 1 ||
      seed->width != width || seed->height != height || out->width != width ||
      out->height != height || (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  /* out is the flood's state: mask pixels open, the rest closed. */
  for (int y = 0; y < height; y++)
    state_row(wsisa_image_row(out, y), wsisa_image_row(mask, y), width);
  /* Each run of open seed pixels starts a flood; runs an earlier flood
   * reached are already done and cost one scan. */
  wsisa__flood_stack stack = {0};
  int rc = 0;
  for (int y = 0; y < height && !rc; y++) {
    const uint8_t *s = wsisa_image_row(seed, y);
    const uint8_t *o = wsisa_image_row(out, y);
    /* seeds are sparse */
    for (int x = wsisa__skip_zeros(s, 0, width); x < width && !rc;
         x = wsisa__skip_zeros(s, x + 1, width)) {
      if (o[x] != WSISA__FLOOD_OPEN) continue;
      int end = x;
      while (end + 1 < width && s[end + 1] && o[end + 1] == WSISA__FLOOD_OPEN) end++;
      rc = wsisa__flood(out, conn, y, x, end, &stack);
      x = end;
    }
  }
  wsisa__flood_free(&stack);
  if (rc) return rc;
  for (int y = 0; y < height; y++) result_row(wsisa_image_row(out, y), width);
  return 0;
}
