/* Fill the holes of each object (docs/workflow.md, level 7, after the watershed has
 * separated the nuclei): as fill holes, background pixels reachable from the
 * image border through background pixels with connectivity conn stay
 * background; each other conn-connected set of background pixels, a hole, is
 * filled only when every pixel of the mask around it (its pixels'
 * 8-neighbours) belongs to one object, a (12 - conn)-connected component of
 * the mask. A hole that also holds another object (one lying inside it) stays
 * open, so no two objects are joined, as they would be by filling their
 * holes all at once. Without such holes the result is fill holes'. */
#include <stdlib.h>

#include "codelets/cpu/morph_private.h"

/* State of out's pixels while it is worked on (fill holes' flood values,
 * then a hole's pixels while it is walked). */
enum { OBJECT = 0, WALKED = 3 };

typedef struct hole_walk {
  uint32_t *at; /* the hole's pixels, (y << 16 | x) */
  size_t n, cap;
} hole_walk;

static int walk_push(hole_walk *w, int x, int y) {
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 256;
    uint32_t *grown = realloc(w->at, cap * sizeof *grown);
    if (!grown) return WSISA_ENOMEM;
    w->at = grown;
    w->cap = cap;
  }
  w->at[w->n++] = (uint32_t)y << 16 | (uint32_t)x;
  return 0;
}

/* Walk the hole holding (x0, y0) (state WSISA__FLOOD_OPEN), then mark it
 * filled (255) or kept open (WSISA__FLOOD_DONE). */
static int fill_hole(wsisa_image *state, const wsisa_image *objects, int conn, int x0, int y0,
                     hole_walk *w) {
  const int width = state->width, height = state->height;
  int32_t lo = INT32_MAX, hi = 0;
  w->n = 0;
  ((uint8_t *)wsisa_image_row(state, y0))[x0] = WALKED;
  if (walk_push(w, x0, y0)) return WSISA_ENOMEM;
  for (size_t k = 0; k < w->n; k++) {
    const int x = (int)(w->at[k] & 0xFFFF), y = (int)(w->at[k] >> 16);
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        const int qx = x + dx, qy = y + dy;
        if ((!dx && !dy) || qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
        uint8_t *s = (uint8_t *)wsisa_image_row(state, qy) + qx;
        if (*s == OBJECT) {
          const int32_t o = ((const int32_t *)wsisa_image_row(objects, qy))[qx];
          lo = o < lo ? o : lo;
          hi = o > hi ? o : hi;
        } else if (*s == WSISA__FLOOD_OPEN && (conn == 8 || !dx || !dy)) {
          *s = WALKED;
          if (walk_push(w, qx, qy)) return WSISA_ENOMEM;
        }
      }
  }
  const uint8_t mark = lo == hi ? 255 : WSISA__FLOOD_DONE;
  for (size_t k = 0; k < w->n; k++)
    ((uint8_t *)wsisa_image_row(state, (int)(w->at[k] >> 16)))[w->at[k] & 0xFFFF] = mark;
  return 0;
}

int wsisa_cpu_fill_object_holes(const wsisa_image *mask, int conn, wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  if (mask->type != WSISA_U8 || out->type != WSISA_U8 || mask->channels != 1 ||
      out->channels != 1 || out->width != width || out->height != height ||
      (conn != 4 && conn != 8) || width > 65535 || height > 65535)
    return WSISA_EINTERNAL;
  wsisa_image *objects = NULL;
  int rc = wsisa_image_new(width, height, 1, WSISA_I32, &objects, NULL);
  if (rc) return WSISA_ENOMEM;
  rc = wsisa_cpu_label(mask, 12 - conn, objects);
  /* out is the flood's state: objects closed, background open until the
   * flood from the border or a hole's walk settles it. */
  for (int y = 0; y < height && !rc; y++) {
    const uint8_t *m = wsisa_image_row(mask, y);
    uint8_t *o = wsisa_image_row(out, y);
    for (int x = 0; x < width; x++) o[x] = m[x] ? OBJECT : WSISA__FLOOD_OPEN;
  }
  wsisa__flood_stack stack = {0};
  if (!rc) rc = wsisa__flood(out, conn, 0, 0, width - 1, &stack);
  if (!rc && height > 1) rc = wsisa__flood(out, conn, height - 1, 0, width - 1, &stack);
  for (int y = 1; y < height - 1 && !rc; y++) {
    rc = wsisa__flood(out, conn, y, 0, 0, &stack);
    if (!rc && width > 1) rc = wsisa__flood(out, conn, y, width - 1, width - 1, &stack);
  }
  wsisa__flood_free(&stack);
  hole_walk walk = {0};
  for (int y = 1; y < height - 1 && !rc; y++) {
    const uint8_t *o = wsisa_image_row(out, y);
    for (int x = 1; x < width - 1 && !rc; x++)
      if (o[x] == WSISA__FLOOD_OPEN) rc = fill_hole(out, objects, conn, x, y, &walk);
  }
  free(walk.at);
  wsisa_image_free(objects);
  if (rc) return rc;
  for (int y = 0; y < height; y++) {
    uint8_t *o = wsisa_image_row(out, y);
    for (int x = 0; x < width; x++) o[x] = o[x] == OBJECT || o[x] == 255 ? 255 : 0;
  }
  return 0;
}
