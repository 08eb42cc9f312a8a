/* Marker watershed with an order-independent flooding rule (DESIGN §3,
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
 * How: when a pixel gets a label at level L, each unlabelled neighbour joins
 * the next wave if the edge relief r <= L, and the queue of level r
 * otherwise (unless already queued at a lower level); the first wave of
 * level L is that queue. So each wave holds exactly the pixels the rule
 * names. The label image itself records who waits where. */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

#define LINE (-1)
#define IN_WAVE (-2)               /* unlabelled, listed in the coming wave */
#define QUEUED(level) (-3 - (level)) /* unlabelled, waiting in that level's queue */

/* Pixels are (y << 16) | x: no division to get coordinates back. */
typedef struct pixel_list {
  uint32_t *at;
  size_t n, cap;
} pixel_list;

static int list_push(pixel_list *list, uint32_t pixel) {
  if (list->n == list->cap) {
    size_t cap = list->cap ? 2 * list->cap : 1024;
    uint32_t *grown = realloc(list->at, cap * sizeof *grown);
    if (!grown) return WSISA_ENOMEM;
    list->at = grown;
    list->cap = cap;
  }
  list->at[list->n++] = pixel;
  return 0;
}

typedef struct flood {
  const uint8_t *rgb, *mask;
  uint8_t *mask_out;
  int32_t *label;
  size_t rgb_stride, mask_stride, out_stride; /* bytes */
  size_t ld;                                  /* label stride in elements */
  int width, height;
  pixel_list queue[256], wave, next;
  int32_t *decided;
  size_t decided_cap;
} flood;

static inline int32_t *label_at(const flood *f, int x, int y) {
  return f->label + (size_t)y * f->ld + (size_t)x;
}

/* The pixel's colour packed as 0x00BBGGRR, black where the mask is off. */
static inline uint32_t colour(const flood *f, int x, int y) {
  const uint8_t *px = f->rgb + (size_t)y * f->rgb_stride + 3 * (size_t)x;
  uint32_t on = f->mask[(size_t)y * f->mask_stride + (size_t)x] != 0;
  return (px[0] | (uint32_t)px[1] << 8 | (uint32_t)px[2] << 16) & (0u - on);
}

static inline int relief(uint32_t a, uint32_t b) {
  int m = 0;
  for (int shift = 0; shift < 24; shift += 8) {
    int d = abs((int)(a >> shift & 0xFF) - (int)(b >> shift & 0xFF));
    m = d > m ? d : m;
  }
  return m;
}

/* The flood is bound by memory latency: each pixel it visits touches three
 * rows of three images. Ask for them a few pixels ahead. */
static void prefetch_around(const flood *f, uint32_t p) {
  int x = (int)(p & 0xFFFF), y = (int)(p >> 16);
  for (int dy = -1; dy <= 1; dy++) {
    int yy = y + dy;
    if (yy < 0 || yy >= f->height) continue;
    __builtin_prefetch(label_at(f, x, yy));
    __builtin_prefetch(f->rgb + (size_t)yy * f->rgb_stride + 3 * (size_t)x);
    __builtin_prefetch(f->mask + (size_t)yy * f->mask_stride + (size_t)x);
  }
}

/* The 4 neighbours of (x, y) inside the image. */
typedef struct neighbours {
  int n, x[4], y[4];
} neighbours;

static inline void neighbours_of(const flood *f, int x, int y, neighbours *nb) {
  nb->n = 0;
  if (x > 0) nb->x[nb->n] = x - 1, nb->y[nb->n++] = y;
  if (x + 1 < f->width) nb->x[nb->n] = x + 1, nb->y[nb->n++] = y;
  if (y > 0) nb->x[nb->n] = x, nb->y[nb->n++] = y - 1;
  if (y + 1 < f->height) nb->x[nb->n] = x, nb->y[nb->n++] = y + 1;
}

/* The rule's first step for unlabelled (x, y) at level L, from the state
 * before the wave. */
static int32_t decide(const flood *f, int x, int y, int level) {
  const uint32_t c = colour(f, x, y);
  neighbours nb;
  neighbours_of(f, x, y, &nb);
  int32_t reached = 0, touching = 0;
  for (int k = 0; k < nb.n; k++) {
    int32_t lab = *label_at(f, nb.x[k], nb.y[k]);
    if (lab <= 0) continue;
    if (touching == 0) touching = lab;
    else if (lab != touching) touching = LINE;
    if (relief(c, colour(f, nb.x[k], nb.y[k])) > level) continue;
    if (reached == 0) reached = lab;
    else if (lab != reached) reached = LINE;
  }
  return reached > 0 && touching != reached ? LINE : reached;
}

/* The rule's second step, with the wave's first-step results in place: every
 * labelled neighbour from before the wave already carries d, so another
 * label to the left or above was taken in this wave. */
static int meets_earlier(const flood *f, int x, int y, int32_t d) {
  int32_t left = x > 0 ? *label_at(f, x - 1, y) : 0;
  int32_t up = y > 0 ? *label_at(f, x, y - 1) : 0;
  return (left > 0 && left != d) || (up > 0 && up != d);
}

static void make_line(flood *f, int x, int y) {
  *label_at(f, x, y) = LINE;
  f->mask_out[(size_t)y * f->out_stride + (size_t)x] = 0;
}

/* Unlabelled (x, y) touches a label over an edge of relief r, at level L. */
static int wake(flood *f, int x, int y, int r, int level) {
  int32_t *lab = label_at(f, x, y);
  uint32_t p = (uint32_t)y << 16 | (uint32_t)x;
  if (r <= level) {
    *lab = IN_WAVE;
    return list_push(&f->next, p);
  }
  if (*lab != 0 && *lab >= QUEUED(r)) return 0; /* already waits at or below r */
  *lab = QUEUED(r);
  return list_push(&f->queue[r], p);
}

/* (x, y) just got a label at level L: its unlabelled neighbours wait. */
static int spread(flood *f, int x, int y, int level) {
  const uint32_t c = colour(f, x, y);
  neighbours nb;
  neighbours_of(f, x, y, &nb);
  for (int k = 0; k < nb.n; k++) {
    int32_t lab = *label_at(f, nb.x[k], nb.y[k]);
    if (lab != 0 && lab > QUEUED(0)) continue; /* labelled, line or in wave */
    if (wake(f, nb.x[k], nb.y[k], relief(c, colour(f, nb.x[k], nb.y[k])), level))
      return WSISA_ENOMEM;
  }
  return 0;
}

/* One pass over the image: labels from the markers, mask_out from the mask
 * (lines clear it later), and every unknown pixel next to a marker queued at
 * its lowest edge relief to one. */
static int seed(flood *f, const wsisa_image *markers) {
  for (int y = 0; y < f->height; y++) {
    const int32_t *m = wsisa_image_row(markers, y);
    const int32_t *up = y > 0 ? wsisa_image_row(markers, y - 1) : NULL;
    const int32_t *down = y + 1 < f->height ? wsisa_image_row(markers, y + 1) : NULL;
    const uint8_t *on = f->mask + (size_t)y * f->mask_stride;
    uint8_t *out = f->mask_out + (size_t)y * f->out_stride;
    int32_t *lab = label_at(f, 0, y);
    for (int x = 0; x < f->width; x++) {
      out[x] = on[x] ? 255 : 0;
      if (m[x] > 0) {
        lab[x] = m[x];
        continue;
      }
      lab[x] = 0;
      if (!((x > 0 && m[x - 1] > 0) || (x + 1 < f->width && m[x + 1] > 0) ||
            (up && up[x] > 0) || (down && down[x] > 0)))
        continue;
      const uint32_t c = colour(f, x, y);
      int lowest = 256;
      if (x > 0 && m[x - 1] > 0) lowest = relief(c, colour(f, x - 1, y));
      if (x + 1 < f->width && m[x + 1] > 0) {
        int r = relief(c, colour(f, x + 1, y));
        lowest = r < lowest ? r : lowest;
      }
      if (up && up[x] > 0) {
        int r = relief(c, colour(f, x, y - 1));
        lowest = r < lowest ? r : lowest;
      }
      if (down && down[x] > 0) {
        int r = relief(c, colour(f, x, y + 1));
        lowest = r < lowest ? r : lowest;
      }
      lab[x] = QUEUED(lowest);
      if (list_push(&f->queue[lowest], (uint32_t)y << 16 | (uint32_t)x))
        return WSISA_ENOMEM;
    }
  }
  return 0;
}

enum { AHEAD = 8 };

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
    f->decided[i] = decide(f, (int)(p & 0xFFFF), (int)(p >> 16), level);
  }
  for (size_t i = 0; i < wave->n; i++) {
    uint32_t p = wave->at[i];
    *label_at(f, (int)(p & 0xFFFF), (int)(p >> 16)) = f->decided[i];
  }
  /* Lines found here are written after the pass: meets_earlier must see the
   * first-step labels of the whole wave. */
  f->next.n = 0;
  for (size_t i = 0; i < wave->n; i++) {
    uint32_t p = wave->at[i];
    int x = (int)(p & 0xFFFF), y = (int)(p >> 16);
    if (f->decided[i] <= 0) continue;
    if (meets_earlier(f, x, y, f->decided[i])) f->decided[i] = LINE;
    else if (spread(f, x, y, level)) return WSISA_ENOMEM;
  }
  for (size_t i = 0; i < wave->n; i++)
    if (f->decided[i] == LINE)
      make_line(f, (int)(wave->at[i] & 0xFFFF), (int)(wave->at[i] >> 16));
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
      __builtin_prefetch(label_at(f, (int)(ahead & 0xFFFF), (int)(ahead >> 16)));
    }
    uint32_t p = queue->at[i];
    int32_t *lab = label_at(f, (int)(p & 0xFFFF), (int)(p >> 16));
    if (*lab != QUEUED(level)) continue; /* labelled since, or requeued lower */
    *lab = IN_WAVE;
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
  int rc = seed(f, markers);
  for (int level = 0; level < 256 && !rc; level++) rc = flood_level(f, level);
  for (int level = 0; level < 256; level++) free(f->queue[level].at);
  free(f->wave.at);
  free(f->next.at);
  free(f->decided);
  free(f);
  return rc;
}
