/* Helpers shared by the morphology kernels: neighbour offsets in framed
 * buffers, the pixel FIFO and the scanline flood fill. */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/morph_private.h"

int wsisa__frame_neighbours(int width, int conn, ptrdiff_t *offsets) {
  const ptrdiff_t pw = width + 2;
  static const int dx8[] = {-1, 0, 1, -1}, dy8[] = {-1, -1, -1, 0};
  static const int dx4[] = {0, -1}, dy4[] = {-1, 0};
  const int half = conn == 8 ? 4 : 2;
  const int *dx = conn == 8 ? dx8 : dx4, *dy = conn == 8 ? dy8 : dy4;
  for (int k = 0; k < half; k++) {
    offsets[k] = dy[k] * pw + dx[k];
    offsets[2 * half - 1 - k] = -offsets[k];
  }
  return 2 * half;
}

/* The ring is the thread's scratch FIFO: it keeps the size the last call
 * grew it to, so a worker stops regrowing it task after task. */
int wsisa__fifo_init(wsisa__fifo *q) {
  size_t bytes;
  q->head = q->count = 0;
  q->buf = wsisa__scratch_take(WSISA__SCRATCH_FIFO, &bytes);
  q->cap = bytes / sizeof *q->buf;
  if (q->buf && q->cap >= 4096 && (q->cap & (q->cap - 1)) == 0) return 0;
  free(q->buf);
  q->cap = 4096;
  q->buf = malloc(q->cap * sizeof *q->buf);
  return q->buf ? 0 : WSISA_ENOMEM;
}

void wsisa__fifo_free(wsisa__fifo *q) {
  if (q->buf) wsisa__scratch_adopt(WSISA__SCRATCH_FIFO, q->buf, q->cap * sizeof *q->buf);
  q->buf = NULL;
}

int wsisa__fifo_grow(wsisa__fifo *q) {
  uint32_t *buf = malloc(2 * q->cap * sizeof *buf);
  if (!buf) return WSISA_ENOMEM;
  /* Unroll the ring into the start of the new buffer. */
  size_t first = q->cap - q->head < q->count ? q->cap - q->head : q->count;
  memcpy(buf, q->buf + q->head, first * sizeof *buf);
  memcpy(buf + first, q->buf, (q->count - first) * sizeof *buf);
  free(q->buf);
  q->buf = buf;
  q->head = 0;
  q->cap *= 2;
  return 0;
}

static int push_span(wsisa__flood_stack *s, int y, int x0, int x1) {
  if (s->count + 3 > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 3 * 1024;
    int *spans = realloc(s->spans, cap * sizeof *spans);
    if (!spans) return WSISA_ENOMEM;
    s->spans = spans;
    s->cap = cap;
  }
  s->spans[s->count++] = y;
  s->spans[s->count++] = x0;
  s->spans[s->count++] = x1;
  return 0;
}

/* Bytes of the state image, eight at a time: a word of open pixels, and
 * whether a word holds an open pixel at all (the classic zero-byte test on
 * word ^ OPEN...). */
#define ONES 0x0101010101010101u
static int all_open(const uint8_t *p) {
  uint64_t word;
  memcpy(&word, p, sizeof word);
  return word == ONES * WSISA__FLOOD_OPEN;
}
static int any_open(const uint8_t *p) {
  uint64_t word;
  memcpy(&word, p, sizeof word);
  word ^= ONES * WSISA__FLOOD_OPEN;
  return ((word - ONES) & ~word & (ONES << 7)) != 0;
}

/* Span-based: each popped span fills whole runs of open pixels and pushes the
 * column range they touch in the rows above and below, so the work is a few
 * sequential scans per row rather than a push per pixel. */
int wsisa__flood(wsisa_image *state, int conn, int y, int x0, int x1,
                 wsisa__flood_stack *stack) {
  const int width = state->width, height = state->height, reach = conn == 8;
  stack->count = 0;
  if (push_span(stack, y, x0, x1)) return WSISA_ENOMEM;
  while (stack->count) {
    stack->count -= 3;
    const int sy = stack->spans[stack->count];
    int x = stack->spans[stack->count + 1];
    const int end = stack->spans[stack->count + 2];
    uint8_t *row = wsisa_image_row(state, sy);
    while (x <= end) {
      if (row[x] != WSISA__FLOOD_OPEN) {
        x++;
        while (x + 8 <= end + 1 && !any_open(row + x)) x += 8;
        continue;
      }
      int a = x, b = x;
      while (a > 0 && row[a - 1] == WSISA__FLOOD_OPEN) a--;
      while (b + 9 <= width && all_open(row + b + 1)) b += 8;
      while (b + 1 < width && row[b + 1] == WSISA__FLOOD_OPEN) b++;
      memset(row + a, WSISA__FLOOD_DONE, (size_t)(b - a + 1));
      /* 8-connected runs also touch the diagonal neighbours of their ends. */
      int lo = a - reach < 0 ? 0 : a - reach;
      int hi = b + reach >= width ? width - 1 : b + reach;
      if (sy > 0 && push_span(stack, sy - 1, lo, hi)) return WSISA_ENOMEM;
      if (sy + 1 < height && push_span(stack, sy + 1, lo, hi)) return WSISA_ENOMEM;
      x = b + 2;
    }
  }
  return 0;
}

void wsisa__flood_free(wsisa__flood_stack *stack) {
  free(stack->spans);
  stack->spans = NULL;
  stack->count = stack->cap = 0;
}
