/* Shared-internal helpers of the morphology kernels: framed pixel buffers,
 * their neighbour offsets, a growable FIFO of pixel indices, the scanline flood
 * fill and Vincent's hybrid reconstruction on framed buffers. */
#ifndef WSISA_CODELETS_CPU_MORPH_PRIVATE_H
#define WSISA_CODELETS_CPU_MORPH_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "codelets/cpu/cpu.h"

/* A framed buffer holds a width × height image inside a one-pixel frame, so
 * neighbour loops need no bounds tests: pixel (x, y) is at frame_index. */
static inline size_t wsisa__frame_index(int width, int x, int y) {
  return (size_t)(y + 1) * (size_t)(width + 2) + (size_t)(x + 1);
}
static inline size_t wsisa__frame_size(int width, int height) {
  return (size_t)(width + 2) * (size_t)(height + 2);
}
/* Neighbour offsets in a framed buffer for conn 4 or 8; returns their count.
 * The first half precede the pixel in raster order, the second half follow. */
int wsisa__frame_neighbours(int width, int conn, ptrdiff_t *offsets);

/* Circular FIFO of pixel indices; doubles when full. init takes the calling
 * thread's scratch ring and free hands it back, so one thread holds one FIFO
 * at a time. */
typedef struct wsisa__fifo {
  uint32_t *buf;
  size_t cap, head, count; /* cap is a power of two */
} wsisa__fifo;

int wsisa__fifo_init(wsisa__fifo *q);
void wsisa__fifo_free(wsisa__fifo *q);
int wsisa__fifo_grow(wsisa__fifo *q);

static inline int wsisa__fifo_push(wsisa__fifo *q, uint32_t v) {
  if (q->count == q->cap && wsisa__fifo_grow(q)) return WSISA_ENOMEM;
  q->buf[(q->head + q->count++) & (q->cap - 1)] = v;
  return 0;
}

static inline uint32_t wsisa__fifo_pop(wsisa__fifo *q) {
  uint32_t v = q->buf[q->head];
  q->head = (q->head + 1) & (q->cap - 1);
  q->count--;
  return v;
}

/* Scanline flood fill of a state image (u8, 1 channel): every pixel equal to
 * WSISA__FLOOD_OPEN that is conn-connected through such pixels to the open
 * pixels of row y, columns x0..x1, becomes WSISA__FLOOD_DONE. `stack` is
 * scratch kept between calls (free it with wsisa__flood_free). */
enum { WSISA__FLOOD_OPEN = 1, WSISA__FLOOD_DONE = 2 };
typedef struct wsisa__flood_stack {
  int *spans; /* (y, x0, x1) triples */
  size_t count, cap;
} wsisa__flood_stack;

int wsisa__flood(wsisa_image *state, int conn, int y, int x0, int x1,
                 wsisa__flood_stack *stack);
void wsisa__flood_free(wsisa__flood_stack *stack);

/* Grey reconstruction by dilation (Vincent 1993, hybrid algorithm), in place on
 * two framed planes of the calling thread's scratch: the mask I and the marker
 * J, each wsisa__frame_size(width, height) pixels. wsisa__recon_*_planes hands
 * them out (NULL when out of memory); the caller fills both interiors with
 * J <= I, and wsisa__recon_* sets the frame and turns J into the
 * reconstruction. Returns 0 or WSISA_ENOMEM. */
uint8_t *wsisa__recon_u8_planes(int width, int height);
float *wsisa__recon_f32_planes(int width, int height);
int wsisa__recon_u8(uint8_t *mask, uint8_t *marker, int width, int height, int conn);
int wsisa__recon_f32(float *mask, float *marker, int width, int height, int conn);

#endif
