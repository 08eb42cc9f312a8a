/* Grey reconstruction by dilation for one pixel type: Vincent's fast hybrid
 * algorithm ("Morphological grayscale reconstruction in image analysis:
 * applications and efficient algorithms", IEEE TIP 1993) - raster scan,
 * anti-raster scan that seeds a FIFO, FIFO propagation. Included by
 * reconstruct.c once per type, with T (the pixel type), T_LOWEST (at or below
 * every pixel), RECON_PAIRS (scan pairs before the FIFO), RECON_NAME (the
 * framed function), RECON_PLANES (its scratch) and RECON_UP, RECON_FLAG, RECON_SCAN, RECON_IN_ROW, RECON_OUT_ROW,
 * RECON_IMAGES (helpers) defined; RECON_LEVELS (the number of pixel values,
 * integer types only) with RECON_PROPAGATE, RECON_LEVEL_T and
 * RECON_LEVEL_PUSH make the propagation go by levels.
 *
 * The result is unique - at each pixel the largest value min(J(q), min of I
 * along a path from q) over all q and paths - and every step below only
 * selects among input values with min and max, so how the work is split
 * between scans and FIFO changes nothing in the output. */

#define HI(a, b) ((a) > (b) ? (a) : (b))
#define LO(a, b) ((a) < (b) ? (a) : (b))
/* Fixed-length inner loops: GCC's -O2 vectorizer only takes loops whose trip
 * count it knows. */
#define RECON_CHUNK 32

/* c = min(max(c, the neighbours row a holds for each pixel x: a[x] for conn
 * 4, a[x-1..x+1] for conn 8), m): every update of a scan but the one from the
 * pixel before in the row. live[i] = whether chunk i may still have a pixel
 * below its mask, the only kind that pixel before can raise: c <= m, so
 * bytes equal to m's mean none (a -0.0 under +0.0 only costs a needless
 * serial pass). */
static void RECON_UP(T *restrict c, const T *restrict a, const T *restrict m,
                     uint8_t *restrict live, int width, int conn) {
  int x = 0, i = 0;
#define UP8(k) c[k] = LO(HI(HI(c[k], a[k]), HI(a[(k) - 1], a[(k) + 1])), m[k])
#define UP4(k) c[k] = LO(HI(c[k], a[k]), m[k])
#define CHUNKS(UP)                                                          \
  for (; x + RECON_CHUNK <= width; x += RECON_CHUNK, i++) {                  \
    for (int j = 0; j < RECON_CHUNK; j++) UP(x + j);                        \
    live[i] = memcmp(c + x, m + x, RECON_CHUNK * sizeof *c) != 0;           \
  }                                                                         \
  for (; x < width; x++) UP(x);
  if (conn == 8) {
    CHUNKS(UP8)
  } else {
    CHUNKS(UP4)
  }
  live[i] = 1; /* the tail: no chunk of its own */
#undef CHUNKS
#undef UP8
#undef UP4
}

/* flag[x] = 1 when pixel x of row c (mask m) can raise its right neighbour
 * or a neighbour in row a (mask am): J(q) < J(p) and J(q) < I(q). */
static void RECON_FLAG(uint8_t *restrict flag, const T *restrict c, const T *restrict m,
                       const T *restrict a, const T *restrict am, int width, int conn) {
#define LIFT(q, qm) (((q) < v) & ((q) < (qm)))
#define FLAG4(i)                                                         \
  do {                                                                   \
    const T v = c[i];                                                    \
    flag[i] = (uint8_t)(LIFT(c[(i) + 1], m[(i) + 1]) | LIFT(a[i], am[i])); \
  } while (0)
#define FLAG8(i)                                                                  \
  do {                                                                            \
    const T v = c[i];                                                             \
    flag[i] = (uint8_t)(LIFT(c[(i) + 1], m[(i) + 1]) | LIFT(a[i], am[i]) |        \
                        LIFT(a[(i) - 1], am[(i) - 1]) | LIFT(a[(i) + 1], am[(i) + 1])); \
  } while (0)
  int x = 0;
  if (conn == 8) {
    for (; x + RECON_CHUNK <= width; x += RECON_CHUNK)
      for (int j = 0; j < RECON_CHUNK; j++) FLAG8(x + j);
    for (; x < width; x++) FLAG8(x);
  } else {
    for (; x + RECON_CHUNK <= width; x += RECON_CHUNK)
      for (int j = 0; j < RECON_CHUNK; j++) FLAG4(x + j);
    for (; x < width; x++) FLAG4(x);
  }
#undef FLAG4
#undef FLAG8
#undef LIFT
}

/* One raster (dir 1) or anti-raster (dir -1) scan: J(p) = min(I(p), max of J
 * over p and its neighbours already visited). Row by row: the neighbours in
 * the row done before enter in one vectorised pass, then the one serial
 * dependency, the pixel just before in the row, in a second pass. With a FIFO,
 * the anti-raster scan queues each pixel p that a neighbour q visited before
 * it could still rise from: J(q) < J(p) and J(q) < I(q). Row y and the row
 * before are final in this scan once row y is done, so that test waits for
 * the row's end and is vectorised too. */
static int RECON_SCAN(T *mask, T *marker, uint8_t *flag, uint8_t *live, int width,
                      int height, int conn, int dir, wsisa__fifo *fifo) {
  const ptrdiff_t pw = width + 2;
  for (int k = 0; k < height; k++) {
    const int y = dir > 0 ? 1 + k : height - k;
    T *c = marker + (ptrdiff_t)y * pw + 1;
    const T *m = mask + (ptrdiff_t)y * pw + 1;
    RECON_UP(c, c - dir * pw, m, live, width, conn);
    /* The pixel before: c is already at most m, and min(max(c, prev), m)
     * only differs from c where c < m, so chunks without such a pixel only
     * pass their last pixel on. */
    const int nchunks = width / RECON_CHUNK;
    if (dir > 0) {
      T prev = c[-1];
      for (int i = 0; i <= nchunks; i++) {
        const int x0 = i * RECON_CHUNK, x1 = i < nchunks ? x0 + RECON_CHUNK : width;
        if (live[i])
          for (int x = x0; x < x1; x++) prev = c[x] = LO(HI(c[x], prev), m[x]);
        else
          prev = c[x1 - 1];
      }
    } else {
      T prev = c[width];
      for (int i = nchunks; i >= 0; i--) {
        const int x0 = i * RECON_CHUNK, x1 = i < nchunks ? x0 + RECON_CHUNK : width;
        if (live[i])
          for (int x = x1 - 1; x >= x0; x--) prev = c[x] = LO(HI(c[x], prev), m[x]);
        else if (x1 > x0)
          prev = c[x0];
      }
    }
    if (!fifo) continue;
    RECON_FLAG(flag, c, m, c - dir * pw, m - dir * pw, width, conn);
    const ptrdiff_t p0 = (ptrdiff_t)y * pw + 1;
    for (int x = wsisa__skip_zeros(flag, 0, width); x < width;
         x = wsisa__skip_zeros(flag, x + 1, width))
      if (wsisa__fifo_push(fifo, (uint32_t)(p0 + x))) return WSISA_ENOMEM;
  }
  return 0;
}

#ifdef RECON_LEVELS
/* The propagation by levels, highest first (a hierarchical queue): a pixel
 * raised to v is final, since every pixel still to be popped lies at or below
 * v, so each pixel rises at most once. A FIFO raises a pixel once per wave
 * that reaches it higher than the last: on level 2's reconstruction of the
 * tests' 1024² tile, 1.45 million pops with 4-connectivity (a million pixels)
 * and 271 thousand with 8, against 354 and 128 thousand by levels, each pop a
 * random visit of the two planes. The FIFO brings the seeds and is left
 * empty. A level's pixels go last in, first out: the neighbours just raised
 * are still in cache. */
typedef struct {
  uint32_t *pixel;
  size_t count, cap;
} RECON_LEVEL_T;

static int RECON_LEVEL_PUSH(RECON_LEVEL_T *level, uint32_t p) {
  if (level->count == level->cap) {
    const size_t cap = level->cap ? 2 * level->cap : 1024;
    uint32_t *pixel = realloc(level->pixel, cap * sizeof *pixel);
    if (!pixel) return WSISA_ENOMEM;
    level->pixel = pixel;
    level->cap = cap;
  }
  level->pixel[level->count++] = p;
  return 0;
}

static int RECON_PROPAGATE(const T *mask, T *marker, wsisa__fifo *seeds, const ptrdiff_t *off,
                           int nb) {
  RECON_LEVEL_T level[RECON_LEVELS] = {{0}};
  int rc = 0;
  while (seeds->count && !rc) {
    const uint32_t p = wsisa__fifo_pop(seeds);
    rc = RECON_LEVEL_PUSH(&level[marker[p]], p);
  }
  /* level 0 raises nothing */
  for (int v = RECON_LEVELS - 1; v > 0 && !rc; v--) {
    RECON_LEVEL_T *l = &level[v];
    while (l->count && !rc) {
      const ptrdiff_t p = l->pixel[--l->count];
      if (marker[p] != v) continue; /* raised since, and popped at its new level */
      for (int k = 0; k < nb; k++) {
        const ptrdiff_t q = p + off[k];
        if (marker[q] < v && marker[q] < mask[q]) {
          marker[q] = LO((T)v, mask[q]);
          rc = RECON_LEVEL_PUSH(&level[marker[q]], (uint32_t)q);
          if (rc) break;
        }
      }
    }
  }
  for (int v = 0; v < RECON_LEVELS; v++) free(level[v].pixel);
  seeds->count = 0;
  return rc;
}
#endif

T *RECON_PLANES(int width, int height) {
  return wsisa__scratch(WSISA__SCRATCH_PLANES,
                        2 * wsisa__frame_size(width, height) * sizeof(T));
}

int RECON_NAME(T *mask, T *marker, int width, int height, int conn) {
  const ptrdiff_t pw = width + 2, size = (ptrdiff_t)wsisa__frame_size(width, height);
  /* The frame equals its mask, so it never rises and never propagates. */
  for (ptrdiff_t x = 0; x < pw; x++) {
    mask[x] = marker[x] = T_LOWEST;
    mask[size - 1 - x] = marker[size - 1 - x] = T_LOWEST;
  }
  for (ptrdiff_t y = 1; y <= height; y++) {
    mask[y * pw] = marker[y * pw] = T_LOWEST;
    mask[y * pw + width + 1] = marker[y * pw + width + 1] = T_LOWEST;
  }
  /* a row of FIFO flags, then the live flags of its chunks */
  uint8_t *flag = wsisa__scratch(WSISA__SCRATCH_ROWS, 2 * (size_t)width + 1);
  uint8_t *live = flag + width;
  wsisa__fifo fifo;
  if (!flag || wsisa__fifo_init(&fifo)) return WSISA_ENOMEM;
  /* RECON_PAIRS raster/anti-raster pairs, the last one seeding the FIFO. */
  for (int pair = 1; pair < RECON_PAIRS; pair++) {
    RECON_SCAN(mask, marker, NULL, live, width, height, conn, 1, NULL);
    RECON_SCAN(mask, marker, NULL, live, width, height, conn, -1, NULL);
  }
  RECON_SCAN(mask, marker, NULL, live, width, height, conn, 1, NULL);
  int rc = RECON_SCAN(mask, marker, flag, live, width, height, conn, -1, &fifo);

  /* Propagation: a popped pixel raises every neighbour below it, as far as
   * that neighbour's mask allows. */
  ptrdiff_t off[8];
  const int nb = wsisa__frame_neighbours(width, conn, off);
#ifdef RECON_LEVELS
  if (!rc) rc = RECON_PROPAGATE(mask, marker, &fifo, off, nb);
#endif
  while (fifo.count && !rc) {
    const ptrdiff_t p = wsisa__fifo_pop(&fifo);
    const T jp = marker[p];
    for (int k = 0; k < nb; k++) {
      const ptrdiff_t q = p + off[k];
      if (marker[q] < jp && marker[q] < mask[q]) {
        marker[q] = LO(jp, mask[q]);
        if (wsisa__fifo_push(&fifo, (uint32_t)q)) rc = WSISA_ENOMEM;
      }
    }
  }
  wsisa__fifo_free(&fifo);
  return rc;
}

/* One row in: the mask, and the marker under it. */
static void RECON_IN_ROW(T *restrict pi, T *restrict pj, const T *restrict mask,
                         const T *restrict marker, int width) {
  WSISA__VEC_FOR(x, width, pi[x] = mask[x]; pj[x] = LO(marker[x], mask[x]));
}

/* One row out. "+ 0" turns a float -0.0 into +0.0: with both zeros in the
 * input, which one a pixel ends with depends on the propagation order, and
 * the CPU and OpenCL workers must agree bit for bit. */
static void RECON_OUT_ROW(T *restrict out, const T *restrict pj, int width) {
  WSISA__VEC_FOR(x, width, out[x] = (T)(pj[x] + (T)0));
}

/* min(marker, mask) reconstructed under mask, on images of type T. */
static int RECON_IMAGES(const wsisa_image *marker, const wsisa_image *mask, int conn,
                        wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  T *planes = RECON_PLANES(width, height);
  if (!planes) return WSISA_ENOMEM;
  T *pi = planes, *pj = planes + wsisa__frame_size(width, height);
  for (int y = 0; y < height; y++) {
    const size_t p = wsisa__frame_index(width, 0, y);
    RECON_IN_ROW(pi + p, pj + p, wsisa_image_row(mask, y), wsisa_image_row(marker, y), width);
  }
  int rc = RECON_NAME(pi, pj, width, height, conn);
  for (int y = 0; y < height && !rc; y++)
    RECON_OUT_ROW(wsisa_image_row(out, y), pj + wsisa__frame_index(width, 0, y), width);
  wsisa__scratch_trim();
  return rc;
}

#undef HI
#undef LO
#undef RECON_CHUNK
