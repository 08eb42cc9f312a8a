/* Grey erosion, dilation, opening and closing of u8 images by OpenCV's elliptic
 * structuring element (docs/workflow.md: the 19×19 opening of level 2, the 3×3 ones
 * of levels 5 and 6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

void wsisa_cpu_ellipse_rows(int size, int *half) {
  /* OpenCV's getStructuringElement(MORPH_ELLIPSE): the same double arithmetic
   * and cvRound (round half to even, as lrint in the default mode), so the
   * rasterization matches it bit for bit. For a square element the clipping
   * to [0, size) never bites: c * sqrt(q) <= c for q <= 1. */
  int r = size / 2, c = size / 2;
  double inv_r2 = r ? 1.0 / ((double)r * r) : 0.0;
  for (int i = 0; i < size; i++) {
    int dy = i - r;
    half[i] = (int)lrint(c * sqrt((r * r - dy * dy) * inv_r2));
  }
}

/* Row helpers in fixed 32-byte chunks: GCC's -O2 vectorizer only takes loops
 * whose trip count it knows, so the chunk body becomes pminub/pmaxub. */
#define CHUNK 32
#define PICK_MIN(u, v) ((u) < (v) ? (u) : (v))
#define PICK_MAX(u, v) ((u) > (v) ? (u) : (v))
#define ROW_OPS(suffix, pick)                                                   \
  /* d = pick(a, b) */                                                         \
  static void row_##suffix(uint8_t *restrict d, const uint8_t *restrict a,     \
                           const uint8_t *restrict b, int n) {                 \
    int i = 0;                                                                 \
    for (; i + CHUNK <= n; i += CHUNK)                                         \
      for (int j = 0; j < CHUNK; j++) d[i + j] = pick(a[i + j], b[i + j]);     \
    for (; i < n; i++) d[i] = pick(a[i], b[i]);                                \
  }                                                                            \
  /* d = pick(a, b, c) */                                                      \
  static void row3_##suffix(uint8_t *restrict d, const uint8_t *restrict a,    \
                            const uint8_t *restrict b,                         \
                            const uint8_t *restrict c, int n) {                \
    int i = 0;                                                                 \
    for (; i + CHUNK <= n; i += CHUNK)                                         \
      for (int j = 0; j < CHUNK; j++)                                          \
        d[i + j] = pick(a[i + j], pick(b[i + j], c[i + j]));                   \
    for (; i < n; i++) d[i] = pick(a[i], pick(b[i], c[i]));                    \
  }                                                                            \
  /* d = pick of the cross around c: u above, v below */                     \
  static void cross_##suffix(uint8_t *restrict d, const uint8_t *restrict u,   \
                             const uint8_t *restrict c,                        \
                             const uint8_t *restrict v, int n) {               \
    if (n == 1) {                                                              \
      d[0] = pick(c[0], pick(u[0], v[0]));                                     \
      return;                                                                  \
    }                                                                          \
    d[0] = pick(pick(c[0], c[1]), pick(u[0], v[0]));                           \
    d[n - 1] = pick(pick(c[n - 1], c[n - 2]), pick(u[n - 1], v[n - 1]));       \
    int i = 1;                                                                 \
    for (; i + CHUNK <= n - 1; i += CHUNK)                                     \
      for (int j = 0; j < CHUNK; j++)                                          \
        d[i + j] = pick(pick(pick(c[i + j - 1], c[i + j]), c[i + j + 1]),      \
                        pick(u[i + j], v[i + j]));                             \
    for (; i < n - 1; i++)                                                     \
      d[i] = pick(pick(pick(c[i - 1], c[i]), c[i + 1]), pick(u[i], v[i]));     \
  }                                                                            \
  /* d = pick(d, a, b) */                                                      \
  static void acc_##suffix(uint8_t *restrict d, const uint8_t *restrict a,     \
                           const uint8_t *restrict b, int n) {                 \
    int i = 0;                                                                 \
    for (; i + CHUNK <= n; i += CHUNK)                                         \
      for (int j = 0; j < CHUNK; j++)                                          \
        d[i + j] = pick(d[i + j], pick(a[i + j], b[i + j]));                   \
    for (; i < n; i++) d[i] = pick(d[i], pick(a[i], b[i]));                    \
  }
ROW_OPS(min, PICK_MIN)
ROW_OPS(max, PICK_MAX)

typedef void (*row_fn)(uint8_t *restrict, const uint8_t *restrict,
                       const uint8_t *restrict, int);
typedef void (*row3_fn)(uint8_t *restrict, const uint8_t *restrict,
                        const uint8_t *restrict, const uint8_t *restrict, int);

/* The operation's row helpers and the value outside the image. */
typedef struct morph_ops {
  uint8_t neutral;
  row_fn pick, acc;
  row3_fn pick3, cross;
} morph_ops;

static const morph_ops erode_ops = {255, row_min, acc_min, row3_min, cross_min};
static const morph_ops dilate_ops = {0, row_max, acc_max, row3_max, cross_max};

/* The element as a union of centred horizontal segments: row dy of the element
 * uses half-width half[dy + r]; the few distinct half-widths are computed once
 * per image row and shared by every element row that uses them. */
typedef struct se_plan {
  int size, r;
  int half[WSISA_CPU_SE_MAX];
  int nlen, len[WSISA_CPU_SE_MAX]; /* distinct half-widths */
  int slot[WSISA_CPU_SE_MAX];      /* element row -> index into len */
  int levels;                      /* sparse-table levels the lengths need */
} se_plan;

/* Sparse-table level of a window of w pixels: 2^level <= w < 2^(level+1). */
static int window_level(int w) {
  int k = 0;
  while ((2 << k) <= w) k++;
  return k;
}

static void plan_make(int size, se_plan *p) {
  p->size = size;
  p->r = size / 2;
  wsisa_cpu_ellipse_rows(size, p->half);
  p->nlen = 0;
  p->levels = 1;
  for (int i = 0; i < size; i++) {
    int k = 0;
    while (k < p->nlen && p->len[k] != p->half[i]) k++;
    if (k == p->nlen) {
      p->len[p->nlen++] = p->half[i];
      int w = 2 * p->half[i] + 1;
      if (window_level(w) + 1 > p->levels) p->levels = window_level(w) + 1;
    }
    p->slot[i] = k;
  }
}

/* One erosion or dilation, producing its output row by row. Its source is an
 * image or an upstream stage, so an opening or closing streams rows from one
 * stage into the next and never holds the intermediate image. */
typedef struct stage {
  const se_plan *plan;
  const morph_ops *ops;
  int width, height;
  const wsisa_image *in;  /* source image, or NULL when `up` feeds this stage */
  struct stage *up;
  uint8_t *table;         /* levels × (width + 2r): level k = min/max of 2^k pixels */
  uint8_t *segs;          /* ring of size source rows × nlen segment results */
  uint8_t *rows;          /* ring of size output rows, when a stage reads them */
  int done;               /* source rows [0, done) have their segments */
} stage;

static int stage_init(stage *s, const se_plan *plan, const morph_ops *ops,
                      const wsisa_image *in, stage *up, int width, int height,
                      int feeds_stage) {
  *s = (stage){plan, ops, width, height, in, up, NULL, NULL, NULL, 0};
  size_t row = (size_t)width + 2 * (size_t)plan->r;
  s->table = malloc((size_t)plan->levels * row);
  s->segs = malloc((size_t)plan->size * (size_t)plan->nlen * (size_t)width);
  if (feeds_stage) s->rows = malloc((size_t)plan->size * (size_t)width);
  if (!s->table || !s->segs || (feeds_stage && !s->rows)) return WSISA_ENOMEM;
  return 0;
}

static void stage_free(stage *s) {
  free(s->table);
  free(s->segs);
  free(s->rows);
}

static uint8_t *ring_row(const stage *s, int y) {
  return s->rows + (size_t)(y % s->plan->size) * (size_t)s->width;
}

static const uint8_t *source_row(const stage *s, int y) {
  return s->up ? ring_row(s->up, y) : (const uint8_t *)wsisa_image_row(s->in, y);
}

/* Every distinct segment of source row `src` into `dst` (nlen rows): with the
 * sparse table a window of w pixels is the min of two overlapping windows of
 * 2^floor(log2 w), so all lengths cost about log2(size) + nlen row passes of
 * 16-byte vector operations (van Herk/Gil-Werman's three passes per length,
 * with a serial scan along the row, lose to that). Length 0 is the source
 * row itself and is not copied. */
static void segments_row(stage *s, const uint8_t *src, uint8_t *dst) {
  const se_plan *p = s->plan;
  const morph_ops *ops = s->ops;
  const int width = s->width, pad = p->r, row = width + 2 * pad;
  uint8_t *t0 = s->table;
  memset(t0, ops->neutral, (size_t)pad);
  memcpy(t0 + pad, src, (size_t)width);
  memset(t0 + pad + width, ops->neutral, (size_t)pad);
  for (int k = 1; k < p->levels; k++) {
    const uint8_t *prev = s->table + (size_t)(k - 1) * row;
    int step = 1 << (k - 1);
    ops->pick(s->table + (size_t)k * row, prev, prev + step, row - step);
  }
  for (int j = 0; j < p->nlen; j++) {
    int len = p->len[j], w = 2 * len + 1, k = window_level(w);
    uint8_t *d = dst + (size_t)j * width;
    if (len == 0) continue;
    const uint8_t *level = s->table + (size_t)k * row + (pad - len);
    ops->pick(d, level, level + (w - (1 << k)), width);
  }
}

/* Output row y: the min (max) over the element's rows of their segments;
 * rows outside the image are left out, which is the neutral border. */
static void stage_row(stage *s, int y, uint8_t *dst) {
  const se_plan *p = s->plan;
  const int width = s->width, r = p->r;
  const size_t seg_row = (size_t)p->nlen * (size_t)width;
  int y0 = y - r < 0 ? 0 : y - r, y1 = y + r >= s->height ? s->height - 1 : y + r;
  for (; s->done <= y1; s->done++) {
    if (s->up) stage_row(s->up, s->done, ring_row(s->up, s->done));
    if (p->size > 3)
      segments_row(s, source_row(s, s->done),
                   s->segs + (size_t)(s->done % p->size) * seg_row);
  }
  if (p->size == 3) {
    /* OpenCV's 3x3 ellipse is the cross: one pass over three source rows,
     * a missing row above or below standing in as the centre row. */
    const uint8_t *c = source_row(s, y);
    s->ops->cross(dst, y > 0 ? source_row(s, y - 1) : c, c,
                  y + 1 < s->height ? source_row(s, y + 1) : c, width);
    return;
  }
  const uint8_t *seg[WSISA_CPU_SE_MAX];
  int nseg = 0;
  for (int sy = y0; sy <= y1; sy++) {
    int j = p->slot[sy - y + r];
    seg[nseg++] = p->len[j] == 0 ? source_row(s, sy)
                                 : s->segs + (size_t)(sy % p->size) * seg_row +
                                       (size_t)j * width;
  }
  /* Two or three rows per pass over dst: the combine is load-bound. */
  int i = nseg == 1 ? 1 : nseg % 2 ? 3 : 2;
  if (i == 1)
    memcpy(dst, seg[0], (size_t)width);
  else if (i == 3)
    s->ops->pick3(dst, seg[0], seg[1], seg[2], width);
  else
    s->ops->pick(dst, seg[0], seg[1], width);
  for (; i < nseg; i += 2) s->ops->acc(dst, seg[i], seg[i + 1], width);
}

int wsisa_cpu_morph(const wsisa_image *in, int op, int se_size, wsisa_image *out) {
  if (in->type != WSISA_U8 || out->type != WSISA_U8 || in->channels != 1 ||
      out->channels != 1 || in->width != out->width || in->height != out->height ||
      se_size < 1 || se_size > WSISA_CPU_SE_MAX || se_size % 2 == 0 || op < 0 ||
      op > 3 || in->data == out->data)
    return WSISA_EINTERNAL;
  /* Opening = dilation of the erosion; closing = erosion of the dilation. */
  static const morph_ops *const first[] = {&erode_ops, &dilate_ops, &erode_ops,
                                           &dilate_ops};
  static const morph_ops *const second[] = {NULL, NULL, &dilate_ops, &erode_ops};
  se_plan plan;
  plan_make(se_size, &plan);
  stage a, b, *last = &a;
  int rc = stage_init(&a, &plan, first[op], in, NULL, in->width, in->height,
                      second[op] != NULL);
  if (!rc && second[op]) {
    rc = stage_init(&b, &plan, second[op], NULL, &a, in->width, in->height, 0);
    last = &b;
  }
  if (!rc)
    for (int y = 0; y < in->height; y++) stage_row(last, y, wsisa_image_row(out, y));
  stage_free(&a);
  if (second[op]) stage_free(&b);
  return rc;
}
