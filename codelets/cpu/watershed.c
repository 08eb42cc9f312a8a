/* Marker watershed with an order-independent flooding rule (docs/workflow.md,
 * level 6), CPU side: hierarchical queues, one per grey level, wave by wave.
 *
 * The rule, shared bit for bit with codelets/cl/watershed.cl:
 * - relief of the edge between 4-neighbours p and q = max over R, G, B of
 *   |p - q|, a pixel whose mask is off reading as black (0, 0, 0), as nscale
 *   copies the tile through the mask before cv::watershed;
 * - labels start as the markers where those are > 0; every other pixel is
 *   unlabelled;
 * - for each level L = 0, 1, ..., 255 in order, waves repeat until one changes
 *   nothing. A wave decides every unlabelled pixel p from the labels (> 0)
 *   its neighbours had before the wave: with R the set of labels of the
 *   neighbours whose edge to p has relief <= L and T the set of labels of all
 *   its labelled neighbours, p stays unlabelled if R is empty, becomes a line
 *   (-1) if T holds two labels or more, and takes the one label otherwise.
 *   Then, as two fronts meeting between two pixels in the same wave would
 *   otherwise touch with no line between them, a pixel that took label d
 *   while its left or upper neighbour took another label in the same wave
 *   becomes a line too. All changes of a wave happen at once;
 * - lines never pass a label on. A pixel no wave reaches (no marker in its
 *   part of the image, or walled in by lines) stays 0.
 * Like cv::watershed, a pixel becomes a line when it meets another region;
 * unlike it, nothing depends on which pixel a queue happens to hold first.
 * cv::watershed also frames the image with lines; here pixels outside the
 * image do not exist.
 *
 * How: hierarchical queues, one per level. When a pixel takes a label at
 * level L, each unlabelled neighbour is offered that label at level
 * e = max(L, relief of the edge); the neighbour keeps the lowest e offered and
 * the labels offered at that e (one label, or "two or more"), and waits in the
 * next wave (e = L) or in the queue of level e. At level e it is decided from
 * what it holds (exactly the rule's set R) and the labels around it (T), then
 * offers its own label in turn. The label image itself records who waits;
 * colours are read only where a label spreads. */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

#define LINE (-1)
/* An unlabelled pixel that was offered label c (> 0), or two labels or more
 * (c = 0), at the level its `level` entry holds. */
#define OFFERED(c) (-2 - (c))
#define OFFER_OF(v) (-2 - (v))

/* Pixels are (y << 16) | x: no division to get coordinates back. */
typedef struct pixel_list {
  uint32_t *at;
  size_t n, cap;
} pixel_list;

static int list_grow(pixel_list *list) {
  size_t cap = list->cap ? 2 * list->cap : 1024;
  uint32_t *grown = realloc(list->at, cap * sizeof *grown);
  if (!grown) return WSISA_ENOMEM;
  list->at = grown;
  list->cap = cap;
  return 0;
}

static inline int list_push(pixel_list *list, uint32_t pixel) {
  if (list->n == list->cap && list_grow(list)) return WSISA_ENOMEM;
  list->at[list->n++] = pixel;
  return 0;
}

typedef struct flood {
  const uint8_t *rgb, *mask;
  uint8_t *mask_out;
  int32_t *label;
  uint8_t *level; /* per pixel, label's row stride: the level of its offers */
  size_t rgb_stride, mask_stride, out_stride; /* bytes */
  size_t ld;                                  /* label stride in elements */
  int width, height;
  pixel_list queue[256], wave, next;
  int32_t *decided;
  size_t decided_cap;
} flood;

static inline size_t index_of(const flood *f, int x, int y) {
  return (size_t)y * f->ld + (size_t)x;
}

/* A pixel's colour packed as 0x00BBGGRR, black where the mask is off; px and
 * on point at the pixel in the RGB and mask images. */
static inline uint32_t colour_at(const uint8_t *px, const uint8_t *on) {
  return (px[0] | (uint32_t)px[1] << 8 | (uint32_t)px[2] << 16) & (0u - (*on != 0));
}

static inline uint32_t colour(const flood *f, int x, int y) {
  return colour_at(f->rgb + (size_t)y * f->rgb_stride + 3 * (size_t)x,
                   f->mask + (size_t)y * f->mask_stride + (size_t)x);
}

static inline int relief(uint32_t a, uint32_t b) {
  int r = abs((int)(a & 0xFF) - (int)(b & 0xFF));
  int g = abs((int)(a >> 8 & 0xFF) - (int)(b >> 8 & 0xFF));
  int bl = abs((int)(a >> 16) - (int)(b >> 16));
  int m = r > g ? r : g;
  return m > bl ? m : bl;
}

/* Offer label `lab` to unlabelled (x, y) at level e; now is the level being
 * flooded (e == now: the next wave). */
static inline int offer(flood *f, int x, int y, int32_t lab, int e, int now) {
  const size_t i = index_of(f, x, y);
  const int32_t v = f->label[i];
  if (v > 0 || v == LINE) return 0;
  if (v != 0 && e >= f->level[i]) {
    if (e == f->level[i] && OFFER_OF(v) != lab) f->label[i] = OFFERED(0);
    return 0;
  }
  f->label[i] = OFFERED(lab);
  f->level[i] = (uint8_t)e;
  uint32_t p = (uint32_t)y << 16 | (uint32_t)x;
  return list_push(e == now ? &f->next : &f->queue[e], p);
}

/* The rule's first step for (x, y), which holds its offers: the one label
 * reached, unless two were, or another label touches it. */
static inline int32_t decide(const flood *f, int x, int y) {
  const int32_t *row = f->label + index_of(f, x, y);
  const int32_t reached = OFFER_OF(row[0]);
  if (reached == 0) return LINE;
  int32_t v;
  if (x > 0 && (v = row[-1]) > 0 && v != reached) return LINE;
  if (x + 1 < f->width && (v = row[1]) > 0 && v != reached) return LINE;
  if (y > 0 && (v = row[-(ptrdiff_t)f->ld]) > 0 && v != reached) return LINE;
  if (y + 1 < f->height && (v = row[f->ld]) > 0 && v != reached) return LINE;
  return reached;
}

/* The rule's second step, with the wave's first-step results in place: every
 * labelled neighbour from before the wave already carries d, so another
 * label to the left or above was taken in this wave. */
static inline int meets_earlier(const flood *f, int x, int y, int32_t d) {
  const int32_t *row = f->label + index_of(f, x, y);
  int32_t left = x > 0 ? row[-1] : 0;
  int32_t up = y > 0 ? row[-(ptrdiff_t)f->ld] : 0;
  return (left > 0 && left != d) || (up > 0 && up != d);
}

/* Would an offer of lab at level now or above change the offered pixel
 * (x, y) holding v? Not when it already waits at now holding lab or "two or
 * more": then the colours need not be read at all. */
static inline int offer_moot(const flood *f, int x, int y, int32_t v, int32_t lab, int now) {
  return v != 0 && f->level[index_of(f, x, y)] == now &&
         (OFFER_OF(v) == lab || OFFER_OF(v) == 0);
}

/* (x, y) took label lab at level now: offer it around. */
static int spread(flood *f, int x, int y, int32_t lab, int now) {
  const uint8_t *px = f->rgb + (size_t)y * f->rgb_stride + 3 * (size_t)x;
  const uint8_t *on = f->mask + (size_t)y * f->mask_stride + (size_t)x;
  const uint32_t c = colour_at(px, on);
  const int32_t *row = f->label + index_of(f, x, y);
  const ptrdiff_t rgb_row = (ptrdiff_t)f->rgb_stride, mask_row = (ptrdiff_t)f->mask_stride;
  int rc = 0;
#define OFFER_TO(inside, v, dx, dy, rgb_step, mask_step)                         \
  if ((inside) && (v) <= 0 && (v) != LINE &&                                     \
      !offer_moot(f, x + (dx), y + (dy), v, lab, now)) {                         \
    int r = relief(c, colour_at(px + (rgb_step), on + (mask_step)));             \
    rc |= offer(f, x + (dx), y + (dy), lab, r > now ? r : now, now);            \
  }
  OFFER_TO(x > 0, row[-1], -1, 0, -3, -1)
  OFFER_TO(x + 1 < f->width, row[1], 1, 0, 3, 1)
  OFFER_TO(y > 0, row[-(ptrdiff_t)f->ld], 0, -1, -rgb_row, -mask_row)
  OFFER_TO(y + 1 < f->height, row[f->ld], 0, 1, rgb_row, mask_row)
#undef OFFER_TO
  return rc;
}

/* Not a plain marker: unknown (<= 0) or a label too large for OFFERED. The
 * sign bit of (m - 1) | (m + 2) says so, and ORs over a block. */
static inline uint32_t marker_odd(int32_t m) {
  return ((uint32_t)m - 1u) | ((uint32_t)m + 2u);
}

/* Copy 16 markers, and OR their marker_odd values, four lanes at a time
 * (GCC vector extension: SSE2 on x86-64, NEON on ARM, plain code elsewhere). */
typedef uint32_t lanes4 __attribute__((vector_size(16)));
static inline uint32_t block_copy_odd(const int32_t *from, int32_t *to) {
  lanes4 odd = {0, 0, 0, 0};
  for (int k = 0; k < 16; k += 4) {
    lanes4 v;
    memcpy(&v, from + k, sizeof v);
    memcpy(to + k, &v, sizeof v);
    odd |= (v - 1u) | (v + 2u);
  }
  return odd[0] | odd[1] | odd[2] | odd[3];
}

/* out = 255 where on is non-zero, 0 elsewhere, eight bytes at a time. */
static void binary_copy(const uint8_t *on, uint8_t *out, int n) {
  const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
  int x = 0;
  for (; x + 8 <= n; x += 8) {
    uint64_t v;
    memcpy(&v, on + x, 8);
    uint64_t high = (((v & low7) + low7) | v) & ~low7; /* byte's top bit: non-zero */
    v = (high >> 7) * 0xFF;
    memcpy(out + x, &v, 8);
  }
  for (; x < n; x++) out[x] = on[x] ? 255 : 0;
}

/* Unknown pixel (x, y) of the marker rows m (up, down: the rows around it,
 * NULL at the image edge): the markers next to it offer their labels.
 * Read the markers, not the labels: the row below is not copied yet. */
static int seed_pixel(flood *f, const int32_t *m, const int32_t *up, const int32_t *down,
                      int x, int y) {
  f->label[index_of(f, x, y)] = 0;
  const int left = x > 0 && m[x - 1] > 0, right = x + 1 < f->width && m[x + 1] > 0;
  const int above = up && up[x] > 0, below = down && down[x] > 0;
  if (!(left | right | above | below)) return 0;
  const uint32_t c = colour(f, x, y);
  int rc = 0;
  if (left) rc |= offer(f, x, y, m[x - 1], relief(c, colour(f, x - 1, y)), -1);
  if (right) rc |= offer(f, x, y, m[x + 1], relief(c, colour(f, x + 1, y)), -1);
  if (above) rc |= offer(f, x, y, up[x], relief(c, colour(f, x, y - 1)), -1);
  if (below) rc |= offer(f, x, y, down[x], relief(c, colour(f, x, y + 1)), -1);
  return rc;
}

/* One pass over the image: labels from the markers, mask_out from the mask
 * (lines clear it later), and the markers' offers to their unknown
 * neighbours. */
static int seed(flood *f, const wsisa_image *markers) {
  enum { BLOCK = 16 }; /* block_copy_odd */
  for (int y = 0; y < f->height; y++) {
    const int32_t *restrict m = wsisa_image_row(markers, y);
    const int32_t *up = y > 0 ? wsisa_image_row(markers, y - 1) : NULL;
    const int32_t *down = y + 1 < f->height ? wsisa_image_row(markers, y + 1) : NULL;
    int32_t *restrict lab = f->label + index_of(f, 0, y);
    binary_copy(f->mask + (size_t)y * f->mask_stride,
                f->mask_out + (size_t)y * f->out_stride, f->width);
    /* Copy and look for anything but a plain marker a block at a time: most
     * pixels are markers (the background is one). */
    for (int x0 = 0; x0 < f->width; x0 += BLOCK) {
      const int n = f->width - x0 < BLOCK ? f->width - x0 : BLOCK;
      uint32_t odd = 0;
      if (n == BLOCK) {
        odd = block_copy_odd(m + x0, lab + x0);
      } else {
        for (int k = 0; k < n; k++) {
          lab[x0 + k] = m[x0 + k];
          odd |= marker_odd(m[x0 + k]);
        }
      }
      if (!(odd >> 31)) continue;
      for (int x = x0; x < x0 + n; x++) {
        if (!(marker_odd(m[x]) >> 31)) continue;
        if (m[x] > 0) return WSISA_EINTERNAL; /* above WSISA_WATERSHED_MAX_LABEL */
        if (seed_pixel(f, m, up, down, x, y)) return WSISA_ENOMEM;
      }
    }
  }
  return 0;
}

enum { AHEAD = 8 };

/* The flood is bound by memory latency: a pixel's decision and spread touch
 * three rows of four arrays. Ask for them a few pixels ahead. */
static void prefetch_around(const flood *f, uint32_t p) {
  const int x = (int)(p & 0xFFFF), y = (int)(p >> 16);
  for (int yy = y > 0 ? y - 1 : y; yy <= y + 1 && yy < f->height; yy++) {
    __builtin_prefetch(f->label + index_of(f, x, yy));
    __builtin_prefetch(f->level + index_of(f, x, yy));
    __builtin_prefetch(f->rgb + (size_t)yy * f->rgb_stride + 3 * (size_t)x);
    __builtin_prefetch(f->mask + (size_t)yy * f->mask_stride + (size_t)x);
  }
}

static int run_wave(flood *f, int level) {
  pixel_list *wave = &f->wave;
  if (wave->n > f->decided_cap) {
    free(f->decided);
    f->decided_cap = wave->cap;
    f->decided = malloc(f->decided_cap * sizeof *f->decided);
    if (!f->decided) return WSISA_ENOMEM;
  }
  for (size_t i = 0; i < wave->n; i++) {
    if (i + AHEAD < wave->n) prefetch_around(f, wave->at[i + AHEAD]);
    uint32_t p = wave->at[i];
    f->decided[i] = decide(f, (int)(p & 0xFFFF), (int)(p >> 16));
  }
  for (size_t i = 0; i < wave->n; i++) {
    uint32_t p = wave->at[i];
    f->label[index_of(f, (int)(p & 0xFFFF), (int)(p >> 16))] = f->decided[i];
  }
  /* Lines found here are written after the pass: meets_earlier must see the
   * first-step labels of the whole wave. */
  f->next.n = 0;
  for (size_t i = 0; i < wave->n; i++) {
    uint32_t p = wave->at[i];
    int x = (int)(p & 0xFFFF), y = (int)(p >> 16);
    if (f->decided[i] <= 0) continue;
    if (meets_earlier(f, x, y, f->decided[i])) f->decided[i] = LINE;
    else if (spread(f, x, y, f->decided[i], level)) return WSISA_ENOMEM;
  }
  for (size_t i = 0; i < wave->n; i++) {
    if (f->decided[i] != LINE) continue;
    uint32_t p = wave->at[i];
    int x = (int)(p & 0xFFFF), y = (int)(p >> 16);
    f->label[index_of(f, x, y)] = LINE;
    f->mask_out[(size_t)y * f->out_stride + (size_t)x] = 0;
  }
  pixel_list done = f->wave;
  f->wave = f->next;
  f->next = done;
  return 0;
}

static int flood_level(flood *f, int level) {
  pixel_list *queue = &f->queue[level];
  f->wave.n = 0;
  for (size_t i = 0; i < queue->n; i++) {
    if (i + AHEAD < queue->n) {
      uint32_t ahead = queue->at[i + AHEAD];
      size_t j = index_of(f, (int)(ahead & 0xFFFF), (int)(ahead >> 16));
      __builtin_prefetch(f->label + j);
      __builtin_prefetch(f->level + j);
    }
    uint32_t p = queue->at[i];
    size_t j = index_of(f, (int)(p & 0xFFFF), (int)(p >> 16));
    /* Stale entries: labelled since, or offered again at a lower level. */
    if (f->label[j] >= LINE || f->level[j] != level) continue;
    if (list_push(&f->wave, p)) return WSISA_ENOMEM;
  }
  free(queue->at);
  *queue = (pixel_list){0};
  int rc = 0;
  while (f->wave.n && !rc) rc = run_wave(f, level);
  return rc;
}

int wsisa_cpu_watershed(const wsisa_image *rgb, const wsisa_image *markers,
                        const wsisa_image *mask, wsisa_image *labels,
                        wsisa_image *mask_out) {
  const int width = mask->width, height = mask->height;
  if (rgb->type != WSISA_U8 || rgb->channels != 3 || markers->type != WSISA_I32 ||
      markers->channels != 1 || mask->type != WSISA_U8 || mask->channels != 1 ||
      labels->type != WSISA_I32 || labels->channels != 1 ||
      mask_out->type != WSISA_U8 || mask_out->channels != 1 ||
      width > WSISA_WATERSHED_MAX_SIDE || height > WSISA_WATERSHED_MAX_SIDE)
    return WSISA_EINTERNAL;
  const wsisa_image *all[] = {rgb, markers, labels, mask_out};
  for (int i = 0; i < 4; i++)
    if (all[i]->width != width || all[i]->height != height) return WSISA_EINTERNAL;
  flood *f = calloc(1, sizeof *f);
  if (!f) return WSISA_ENOMEM;
  *f = (flood){.rgb = rgb->data,
               .mask = mask->data,
               .mask_out = mask_out->data,
               .label = labels->data,
               .rgb_stride = rgb->stride,
               .mask_stride = mask->stride,
               .out_stride = mask_out->stride,
               .ld = labels->stride / sizeof(int32_t),
               .width = width,
               .height = height};
  f->level = malloc((size_t)height * f->ld);
  int rc = f->level ? seed(f, markers) : WSISA_ENOMEM;
  for (int level = 0; level < 256 && !rc; level++) rc = flood_level(f, level);
  for (int level = 0; level < 256; level++) free(f->queue[level].at);
  free(f->wave.at);
  free(f->next.at);
  free(f->decided);
  free(f->level);
  free(f);
  return rc;
}
