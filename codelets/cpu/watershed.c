/* Marker watershed with an order-independent flooding rule (docs/workflow.md,
 * level 6), CPU side: hierarchical queues, one per grey level, wave by wave.
 * Its regions never touch inside the mask, not even at a corner, so the
 * objects of mask_out are the same counted 4- or 8-connected and no two
 * regions share one.
 *
 * The rule, shared bit for bit with codelets/cl/watershed.cl:
 * - relief of the edge between 4-neighbours p and q = max over R, G, B of
 *   |p - q|, a pixel whose mask is off reading as black (0, 0, 0), as nscale
 *   copies the tile through the mask before cv::watershed;
 * - p's earlier neighbours are the four of its 8-neighbours before it in
 *   raster order (left, upper left, up, upper right); two pixels "meet" when
 *   they are 4-neighbours, or diagonal neighbours both in the mask;
 * - labels start as the markers where those are > 0, except that a marker of
 *   the mask that meets an earlier neighbour of the mask holding another
 *   marker starts as a line (-1); every other pixel is unlabelled;
 * - for each level L = 0, 1, ..., 255 in order, waves repeat until one changes
 *   nothing. A wave decides every unlabelled pixel p from the labels (> 0)
 *   around it before the wave: with R the set of labels of its 4-neighbours
 *   whose edge to p has relief <= L, and T the set of labels of the pixels p
 *   meets, p stays unlabelled if R is empty, becomes a line if T holds two
 *   labels or more, and takes the one label otherwise. Then, as two fronts
 *   meeting in the same wave would otherwise touch with no line between them,
 *   a pixel that took label d while an earlier neighbour it meets took
 *   another label in the same wave becomes a line too. All changes of a wave
 *   happen at once;
 * - lines never pass a label on. A pixel no wave reaches (no marker in its
 *   part of the image, or walled in by lines) stays 0;
 * - mask_out keeps the mask's pixels that belong to a region (label > 0).
 * Why regions never touch in the mask: after the markers' rule no two labels
 * meet, and a wave keeps it so, as a pixel labelled by the wave saw every
 * label it meets from before the wave (T), and of two that meet and were
 * labelled differently by the same wave, the later one becomes a line. No
 * labelled pixel is ever taken back, so each region stays connected to its
 * marker through 4-neighbours of its own. Fronts cross 4-neighbour edges only,
 * as in cv::watershed; the diagonals change where lines fall: a line between
 * diagonal fronts is 4-connected (one pixel thicker at each step), where
 * cv::watershed's lines part regions under 4-connectivity only. Pixels off
 * the mask meet only their 4-neighbours, so the line between a nucleus and
 * the background marker around it (off the mask) stays one pixel thin. Like
 * cv::watershed, a pixel becomes a line when it meets another region; unlike
 * it, nothing depends on which pixel a queue happens to hold first.
 * cv::watershed also frames the image with lines; here pixels outside the
 * image do not exist.
 *
 * How: the unknown pixels (those that start unlabelled) fall into parts,
 * each part the unknown pixels 8-connected to one another. A pixel meets
 * only 8-neighbours, and the 8-neighbours of a part's pixel are of that part
 * or labelled from the start, which no wave changes: so each part floods
 * alone, to the same labels as in one flood of the whole image, and any set
 * of parts floods together. One pass down the image copies the markers to
 * the labels (lines where two meet) and the mask to mask_out; each band of
 * rows it leaves behind, the parts that start in the band are gathered (and
 * the pass goes on as far down as they reach) and flooded together, while the
 * rows they touch are still in cache: a part is a nucleus or a few, small
 * beside the tile.
 * A flood: hierarchical queues, one per level. When a pixel takes a label at
 * level L, each unlabelled 4-neighbour is offered that label at level
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
/* An unknown pixel whose part is not gathered yet (gathered, it is 0:
 * unlabelled). Not OFFERED(c) for any label c. */
#define FREE INT32_MIN

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
  /* decided pixels: fewer than the unknown ones when some were never
   * reached, and leave mask_out at the end */
  size_t settled;
  const wsisa_image *markers;
  int seeded;                      /* rows the pass down the image has done */
  int band;                        /* rows of a band */
  pixel_list unknown;              /* unknown pixels, in raster order */
  pixel_list part, edge;           /* the parts gathered; those of their pixels
                                      with a 4-neighbour labelled from the start */
  uint64_t pending[4];             /* levels whose queue holds pixels */
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

/* Offer label `lab` at level e to pixel i, p = (y << 16) | x, holding v
 * (unlabelled when the offer counts); now is the level being flooded
 * (e == now: the next wave). */
static inline int offer_at(flood *f, size_t i, uint32_t p, int32_t v, int32_t lab, int e,
                           int now) {
  if (v > 0 || v == LINE) return 0;
  if (v != 0 && e >= f->level[i]) {
    if (e == f->level[i] && OFFER_OF(v) != lab) f->label[i] = OFFERED(0);
    return 0;
  }
  f->label[i] = OFFERED(lab);
  f->level[i] = (uint8_t)e;
  if (e == now) return list_push(&f->next, p);
  f->pending[e >> 6] |= 1ULL << (e & 63);
  return list_push(&f->queue[e], p);
}

static inline int offer(flood *f, int x, int y, int32_t lab, int e, int now) {
  const size_t i = index_of(f, x, y);
  return offer_at(f, i, (uint32_t)y << 16 | (uint32_t)x, f->label[i], lab, e, now);
}

static inline int mask_on(const flood *f, int x, int y) {
  return f->mask[(size_t)y * f->mask_stride + (size_t)x] != 0;
}

/* Does the diagonal neighbour (x + dx, y + dy) hold a label other than d,
 * and does the mask hold it and (x, y) both? */
static inline int diagonal_other(const flood *f, const int32_t *row, int x, int y, int dx,
                                 int dy, int32_t d) {
  const int32_t v = row[dy * (ptrdiff_t)f->ld + dx];
  return v > 0 && v != d && mask_on(f, x + dx, y + dy) && mask_on(f, x, y);
}

/* Is v a label (> 0) other than d? */
static inline int other_label(int32_t v, int32_t d) { return (v > 0) & (v != d); }

/* The labels other than d among the 4 at p, lane by lane (-1: yes, 0: no). */
typedef int32_t labels4 __attribute__((vector_size(16)));
static inline labels4 others4(const int32_t *p, labels4 d) {
  labels4 v;
  memcpy(&v, p, sizeof v);
  return (v > 0) & (v != d);
}

/* The rule's first step for (x, y), which holds its offers: the one label
 * reached, unless two were, or another label touches it. Inside the image
 * all eight labels are read without a branch (almost always none is
 * another), the mask only when a diagonal one is. */
static inline int32_t decide(const flood *f, int x, int y) {
  const int32_t *row = f->label + index_of(f, x, y);
  const int32_t reached = OFFER_OF(row[0]);
  if (reached == 0) return LINE;
  const ptrdiff_t ld = (ptrdiff_t)f->ld;
  const int left = x > 0, right = x + 1 < f->width, up = y > 0, down = y + 1 < f->height;
  int diagonal;
  if (left & up & down & (x + 2 < f->width)) {
    /* Columns x - 1 .. x + 2 of the three rows, the last one unused: lanes
     * 0 and 2 of the rows above and below are the diagonal neighbours. */
    const labels4 d = {reached, reached, reached, reached};
    const labels4 above = others4(row - ld - 1, d), here = others4(row - 1, d),
                  below = others4(row + ld - 1, d);
    const labels4 any = above | here | below;
    if (!(any[0] | any[1] | any[2])) return reached;
    if (above[1] | here[0] | here[2] | below[1]) return LINE;
    diagonal = 1;
  } else {
    if ((left && other_label(row[-1], reached)) || (right && other_label(row[1], reached)) ||
        (up && other_label(row[-ld], reached)) || (down && other_label(row[ld], reached)))
      return LINE;
    diagonal = (up && left && other_label(row[-ld - 1], reached)) ||
               (up && right && other_label(row[-ld + 1], reached)) ||
               (down && left && other_label(row[ld - 1], reached)) ||
               (down && right && other_label(row[ld + 1], reached));
  }
  if (!diagonal) return reached;
  if ((up && ((left && diagonal_other(f, row, x, y, -1, -1, reached)) ||
              (right && diagonal_other(f, row, x, y, 1, -1, reached)))) ||
      (down && ((left && diagonal_other(f, row, x, y, -1, 1, reached)) ||
                (right && diagonal_other(f, row, x, y, 1, 1, reached)))))
    return LINE;
  return reached;
}

/* The rule's second step, with the wave's first-step results in place: every
 * labelled neighbour from before the wave already carries d, so another
 * label on an earlier neighbour was taken in this wave. */
static inline int meets_earlier(const flood *f, int x, int y, int32_t d) {
  const int32_t *row = f->label + index_of(f, x, y);
  const ptrdiff_t ld = (ptrdiff_t)f->ld;
  const int left = x > 0, right = x + 1 < f->width;
  if (left && other_label(row[-1], d)) return 1;
  if (y == 0) return 0;
  if (other_label(row[-ld], d)) return 1;
  if (!((left && other_label(row[-ld - 1], d)) | (right && other_label(row[-ld + 1], d))))
    return 0;
  return (left && diagonal_other(f, row, x, y, -1, -1, d)) ||
         (right && diagonal_other(f, row, x, y, 1, -1, d));
}

/* Would an offer of lab at level now or above change pixel i, offered and
 * holding v? Not when it already waits at now holding lab or "two or
 * more": then the colours need not be read at all. */
static inline int offer_moot(const flood *f, size_t i, int32_t v, int32_t lab, int now) {
  return f->level[i] == now && (OFFER_OF(v) == lab || OFFER_OF(v) == 0);
}

/* (x, y) took label lab at level now: offer it around. */
static int spread(flood *f, int x, int y, int32_t lab, int now) {
  const uint8_t *px = f->rgb + (size_t)y * f->rgb_stride + 3 * (size_t)x;
  const uint8_t *on = f->mask + (size_t)y * f->mask_stride + (size_t)x;
  const uint32_t c = colour_at(px, on);
  const size_t i = index_of(f, x, y);
  const uint32_t p = (uint32_t)y << 16 | (uint32_t)x;
  const ptrdiff_t rgb_row = (ptrdiff_t)f->rgb_stride, mask_row = (ptrdiff_t)f->mask_stride;
  int rc = 0;
#define OFFER_TO(inside, step, pixel_step, rgb_step, mask_step)                  \
  if (inside) {                                                                  \
    const size_t j = i + (size_t)(step);                                         \
    const int32_t v = f->label[j];                                               \
    if (v <= 0 && v != LINE && (v == 0 || !offer_moot(f, j, v, lab, now))) {    \
      const int r = relief(c, colour_at(px + (rgb_step), on + (mask_step)));     \
      rc |= offer_at(f, j, p + (uint32_t)(pixel_step), v, lab, r > now ? r : now, now); \
    }                                                                            \
  }
  OFFER_TO(x > 0, -1, -1, -3, -1)
  OFFER_TO(x + 1 < f->width, 1, 1, 3, 1)
  OFFER_TO(y > 0, -(ptrdiff_t)f->ld, -65536, -rgb_row, -mask_row)
  OFFER_TO(y + 1 < f->height, f->ld, 65536, rgb_row, mask_row)
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

/* Is any of the 16 bytes at p non-zero? */
static inline int any16(const uint8_t *p) {
  uint64_t a, b;
  memcpy(&a, p, 8);
  memcpy(&b, p + 8, 8);
  return (a | b) != 0;
}

/* Is v another marker than d (both taken as markers only when > 0)? */
static inline int other_marker(int32_t v, int32_t d) { return v > 0 && v != d; }

/* The label marker (x, y) starts with (m: its row of markers, above: the
 * row over it, NULL on the first row): the marker, or 0 when it is none or
 * the mask holds it and an earlier neighbour holding another marker, which
 * makes it a line. */
static inline __attribute__((always_inline)) int32_t marker_kept(const flood *f,
                                                                 const int32_t *m,
                                                                 const int32_t *above, int x,
                                                                 int y) {
  const int32_t d = m[x];
  if (d <= 0 || !mask_on(f, x, y)) return d > 0 ? d : 0;
  const int meets = (x > 0 && other_marker(m[x - 1], d) && mask_on(f, x - 1, y)) ||
                    (above && ((x > 0 && other_marker(above[x - 1], d) && mask_on(f, x - 1, y - 1)) ||
                               (other_marker(above[x], d) && mask_on(f, x, y - 1)) ||
                               (x + 1 < f->width && other_marker(above[x + 1], d) &&
                                mask_on(f, x + 1, y - 1))));
  return meets ? 0 : d;
}

/* Unknown pixel (x, y), the rows around it seeded: the labels next to it
 * offer themselves. */
static int seed_pixel(flood *f, int x, int y) {
  const int32_t *lab = f->label + index_of(f, x, y);
  const ptrdiff_t ld = (ptrdiff_t)f->ld;
  const int32_t left = x > 0 ? lab[-1] : 0, above = y > 0 ? lab[-ld] : 0;
  const int32_t right = x + 1 < f->width ? lab[1] : 0, below = y + 1 < f->height ? lab[ld] : 0;
  if (left <= 0 && right <= 0 && above <= 0 && below <= 0) return 0;
  const uint32_t c = colour(f, x, y);
  int rc = 0;
  if (left > 0) rc |= offer(f, x, y, left, relief(c, colour(f, x - 1, y)), -1);
  if (right > 0) rc |= offer(f, x, y, right, relief(c, colour(f, x + 1, y)), -1);
  if (above > 0) rc |= offer(f, x, y, above, relief(c, colour(f, x, y - 1)), -1);
  if (below > 0) rc |= offer(f, x, y, below, relief(c, colour(f, x, y + 1)), -1);
  return rc;
}

/* Marker (x, y) starts as a line when it meets another (marker_kept). */
static void marker_start(flood *f, const int32_t *m, const int32_t *up, int x, int y) {
  if (marker_kept(f, m, up, x, y)) return;
  f->label[index_of(f, x, y)] = LINE;
  f->mask_out[(size_t)y * f->out_stride + (size_t)x] = 0;
}

/* Row y of the pass down the image: labels from the markers (lines where two
 * meet, FREE where there is none), mask_out from the mask (lines clear it
 * later), the unknown pixels listed. */
static int seed_row(flood *f, int y) {
  enum { BLOCK = 16 }; /* block_copy_odd */
  const int width = f->width;
  const int32_t *restrict m = wsisa_image_row(f->markers, y);
  const int32_t *up = y > 0 ? wsisa_image_row(f->markers, y - 1) : NULL;
  int32_t *restrict lab = f->label + index_of(f, 0, y);
  wsisa__binary_row(f->mask + (size_t)y * f->mask_stride,
                    f->mask_out + (size_t)y * f->out_stride, width, 0);
  const uint8_t *out = f->mask_out + (size_t)y * f->out_stride;
  /* Copy and look for anything but a plain marker a block at a time: most
   * pixels are markers (the background is one), and off the mask, where
   * markers never meet. */
  for (int x0 = 0; x0 < width; x0 += BLOCK) {
    const int n = width - x0 < BLOCK ? width - x0 : BLOCK;
    uint32_t odd = 0;
    if (n == BLOCK) {
      odd = block_copy_odd(m + x0, lab + x0);
    } else {
      for (int k = 0; k < n; k++) {
        lab[x0 + k] = m[x0 + k];
        odd |= marker_odd(m[x0 + k]);
      }
    }
    if (!(odd >> 31)) {
      if (n < BLOCK || any16(out + x0))
        for (int x = x0; x < x0 + n; x++) marker_start(f, m, up, x, y);
      continue;
    }
    for (int x = x0; x < x0 + n; x++) {
      if (!(marker_odd(m[x]) >> 31)) {
        if (out[x]) marker_start(f, m, up, x, y);
        continue;
      }
      if (m[x] > 0) return WSISA_EINTERNAL; /* above WSISA_WATERSHED_MAX_LABEL */
      lab[x] = FREE;
      if (list_push(&f->unknown, (uint32_t)y << 16 | (uint32_t)x)) return WSISA_ENOMEM;
    }
  }
  return 0;
}

/* The pass down the image goes on to row `rows` (excluded). */
static int seed_to(flood *f, int rows) {
  if (rows > f->height) rows = f->height;
  for (; f->seeded < rows; f->seeded++) {
    int rc = seed_row(f, f->seeded);
    if (rc) return rc;
  }
  return 0;
}

enum { AHEAD = 8 };

/* A pixel's decision and spread touch three rows of four arrays, not all in
 * cache when a part is large: ask for them a few pixels ahead. */
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
  f->settled += wave->n;
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
  queue->n = 0;
  int rc = 0;
  while (f->wave.n && !rc) rc = run_wave(f, level);
  return rc;
}

/* The 8-neighbours as (dx, dy); bit n of a neighbourhood mask is NEAR[n]. */
static const int8_t NEAR[8][2] = {{-1, -1}, {0, -1}, {1, -1}, {-1, 0},
                                  {1, 0},   {-1, 1}, {0, 1},  {1, 1}};

/* A part this large is most likely much of the image (a mask with few
 * markers): searching it out pixel by pixel would cost more than flooding
 * all that is left as one. */
#define GIANT ((size_t)1 << 20)

/* Has pixel q = (y << 16) | x a labelled 4-neighbour? */
static int labelled_next(const flood *f, uint32_t q) {
  const int x = (int)(q & 0xFFFF), y = (int)(q >> 16);
  const int32_t *c = f->label + index_of(f, x, y);
  const ptrdiff_t ld = (ptrdiff_t)f->ld;
  return (x > 0 && c[-1] > 0) || (x + 1 < f->width && c[1] > 0) || (y > 0 && c[-ld] > 0) ||
         (y + 1 < f->height && c[ld] > 0);
}

/* A gathered pixel with a labelled 4-neighbour goes to f->edge. */
static int edge_check(flood *f, uint32_t q) {
  return labelled_next(f, q) ? list_push(&f->edge, q) : 0;
}

/* Gather every pixel still FREE, in raster order, with the pixels of
 * f->part from `from` on, which are gathered but not yet checked. */
static int gather_rest(flood *f, size_t from) {
  int rc = seed_to(f, f->height);
  for (size_t k = from; k < f->part.n && !rc; k++) rc = edge_check(f, f->part.at[k]);
  for (size_t k = 0; k < f->unknown.n && !rc; k++) {
    const uint32_t q = f->unknown.at[k];
    int32_t *c = f->label + index_of(f, (int)(q & 0xFFFF), (int)(q >> 16));
    if (*c != FREE) continue;
    *c = 0;
    rc = edge_check(f, q);
  }
  return rc;
}

/* Add the part of FREE pixel p to f->part (its pixels, no longer FREE: 0)
 * and those of its pixels with a labelled 4-neighbour to f->edge. The pass
 * down the image keeps two rows ahead of the pixels gathered. */
static int gather(flood *f, uint32_t p) {
  pixel_list *part = &f->part;
  const ptrdiff_t ld = (ptrdiff_t)f->ld;
  const size_t first = part->n;
  f->label[index_of(f, (int)(p & 0xFFFF), (int)(p >> 16))] = 0;
  if (list_push(part, p)) return WSISA_ENOMEM;
  for (size_t k = first; k < part->n; k++) {
    if (part->n - first > GIANT) return gather_rest(f, k);
    const uint32_t q = part->at[k];
    const int x = (int)(q & 0xFFFF), y = (int)(q >> 16);
    int rc = seed_to(f, y + 3);
    if (rc) return rc;
    int32_t *c = f->label + index_of(f, x, y);
    unsigned free8 = 0, edge;
    if (x > 0 && y > 0 && x + 2 < f->width && y + 1 < f->height) {
      /* columns x - 1 .. x + 2 of the three rows, as in decide */
      const labels4 none = {FREE, FREE, FREE, FREE};
      labels4 above, here, below;
      memcpy(&above, c - ld - 1, sizeof above);
      memcpy(&here, c - 1, sizeof here);
      memcpy(&below, c + ld - 1, sizeof below);
      const labels4 fa = above == none, fh = here == none, fb = below == none;
      const labels4 any = fa | fh | fb;
      if (any[0] | any[1] | any[2])
        free8 = (fa[0] & 1) | (fa[1] & 2) | (fa[2] & 4) | (fh[0] & 8) | (fh[2] & 16) |
                (fb[0] & 32) | (fb[1] & 64) | (fb[2] & 128);
      edge = (above[1] > 0) | (here[0] > 0) | (here[2] > 0) | (below[1] > 0);
    } else { /* near the image's edge */
      edge = labelled_next(f, q);
      for (int n = 0; n < 8; n++) {
        const int xx = x + NEAR[n][0], yy = y + NEAR[n][1];
        if (xx >= 0 && yy >= 0 && xx < f->width && yy < f->height &&
            f->label[index_of(f, xx, yy)] == FREE)
          free8 |= 1u << n;
      }
    }
    if (edge && list_push(&f->edge, q)) return WSISA_ENOMEM;
    for (; free8; free8 &= free8 - 1) {
      const int n = __builtin_ctz(free8);
      c[NEAR[n][1] * ld + NEAR[n][0]] = 0;
      /* in the image, so neither field of (y << 16) | x overflows */
      if (list_push(part, q + (uint32_t)(NEAR[n][1] * 65536 + NEAR[n][0])))
        return WSISA_ENOMEM;
    }
  }
  return 0;
}

/* Flood the parts gathered: their edge pixels take the offers of the labels
 * next to them, then the queues run level by level. */
static int flood_gathered(flood *f) {
  const pixel_list *edge = &f->edge;
  int rc = 0;
  for (size_t j = 0; j < edge->n && !rc; j++) {
    if (j + AHEAD < edge->n) { /* colours are read here first */
      const uint32_t q = edge->at[j + AHEAD];
      const int x = (int)(q & 0xFFFF), y = (int)(q >> 16);
      for (int yy = y > 0 ? y - 1 : y; yy <= y + 1 && yy < f->height; yy++) {
        __builtin_prefetch(f->rgb + (size_t)yy * f->rgb_stride + 3 * (size_t)x);
        __builtin_prefetch(f->mask + (size_t)yy * f->mask_stride + (size_t)x);
      }
    }
    rc = seed_pixel(f, (int)(edge->at[j] & 0xFFFF), (int)(edge->at[j] >> 16));
  }
  /* offers go to levels at or above the one flooded: lowest pending first */
  for (int w = 0; w < 4 && !rc; w++)
    while (f->pending[w] && !rc) {
      const int bit = __builtin_ctzll(f->pending[w]);
      f->pending[w] &= f->pending[w] - 1;
      rc = flood_level(f, w * 64 + bit);
    }
  f->part.n = 0;
  f->edge.n = 0;
  return rc;
}

/* The pass down the image, and band by band behind it the parts that start
 * in the band. */
static int flood_parts(flood *f) {
  size_t k = 0;
  for (int y0 = 0; y0 < f->height; y0 += f->band) {
    const int y1 = y0 + f->band;
    int rc = seed_to(f, y1);
    while (!rc && k < f->unknown.n && (int)(f->unknown.at[k] >> 16) < y1) {
      const uint32_t p = f->unknown.at[k++];
      if (f->label[index_of(f, (int)(p & 0xFFFF), (int)(p >> 16))] == FREE) rc = gather(f, p);
    }
    if (!rc) rc = flood_gathered(f);
    if (rc) return rc;
  }
  return 0;
}

/* Pixels no wave reached (walled in by lines, or no marker in their part of
 * the image) belong to no region: they leave mask_out. */
static void clear_unreached(flood *f) {
  for (int y = 0; y < f->height; y++) {
    const int32_t *lab = f->label + index_of(f, 0, y);
    uint8_t *out = f->mask_out + (size_t)y * f->out_stride;
    for (int x = 0; x < f->width; x++)
      if (lab[x] == 0) out[x] = 0;
  }
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
  f->markers = markers;
  /* bands of 2^16 pixels, 4 rows at least: 16 rows of a 4096-wide tile, so
   * the rows a band's parts touch are still in cache when they flood (at that
   * width 16 rows ran faster than 64, and 64 than 256) */
  f->band = (1 << 16) / width;
  if (f->band < 4) f->band = 4;
  int rc = f->level ? flood_parts(f) : WSISA_ENOMEM;
  if (!rc && f->settled < f->unknown.n) clear_unreached(f);
  for (int level = 0; level < 256; level++) free(f->queue[level].at);
  free(f->wave.at);
  free(f->unknown.at);
  free(f->part.at);
  free(f->edge.at);
  free(f->next.at);
  free(f->decided);
  free(f->level);
  free(f);
  return rc;
}
