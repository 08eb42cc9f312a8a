/* Grey reconstruction by dilation for one pixel type: Vincent's fast hybrid
 * algorithm ("Morphological grayscale reconstruction in image analysis:
 * applications and efficient algorithms", IEEE TIP 1993) - raster scan,
 * anti-raster scan that seeds a FIFO, FIFO propagation. Included by
 * reconstruct.c once per type, with T (the pixel type), T_LOWEST (at or below
 * every pixel), RECON_NAME (the framed function), RECON_SCAN and RECON_IMAGES
 * (its helpers) defined. */

#define HI(a, b) ((a) > (b) ? (a) : (b))
#define LO(a, b) ((a) < (b) ? (a) : (b))
/* Mask I and marker J of framed pixel p sit side by side: the propagation's
 * random accesses then cost one cache miss per neighbour, not two. */
#define I(p) f[2 * (p)]
#define J(p) f[2 * (p) + 1]

/* One raster (dir 1) or anti-raster (dir -1) scan: J(p) = min(I(p), max of J
 * over p and its neighbours already visited). With a FIFO, the anti-raster
 * scan queues each pixel a later neighbour q could still rise from:
 * J(q) < J(p) and J(q) < I(q). */
static int RECON_SCAN(T *f, int width, int height, int conn, int dir, wsisa__fifo *fifo) {
  const ptrdiff_t pw = width + 2;
  const ptrdiff_t side = -dir, back = -dir * pw; /* previous pixel, previous row */
  for (int k = 0; k < height; k++) {
    const int y = dir > 0 ? 1 + k : height - k;
    for (int n = 0; n < width; n++) {
      const ptrdiff_t p = (ptrdiff_t)y * pw + (dir > 0 ? 1 + n : width - n);
      T m = HI(J(p), J(p + side));
      m = HI(m, J(p + back));
      if (conn == 8) m = HI(m, HI(J(p + back - 1), J(p + back + 1)));
      const T v = J(p) = LO(m, I(p));
      if (!fifo) continue;
      int lift = (J(p + side) < v && J(p + side) < I(p + side)) ||
                 (J(p + back) < v && J(p + back) < I(p + back));
      if (conn == 8)
        lift = lift || (J(p + back - 1) < v && J(p + back - 1) < I(p + back - 1)) ||
               (J(p + back + 1) < v && J(p + back + 1) < I(p + back + 1));
      if (lift && wsisa__fifo_push(fifo, (uint32_t)p)) return WSISA_ENOMEM;
    }
  }
  return 0;
}

int RECON_NAME(T *f, int width, int height, int conn) {
  const ptrdiff_t pw = width + 2, size = (ptrdiff_t)wsisa__frame_size(width, height);
  /* The frame equals its mask, so it never rises and never propagates. */
  for (ptrdiff_t x = 0; x < pw; x++) {
    I(x) = J(x) = T_LOWEST;
    I(size - 1 - x) = J(size - 1 - x) = T_LOWEST;
  }
  for (ptrdiff_t y = 1; y <= height; y++) {
    I(y * pw) = J(y * pw) = T_LOWEST;
    I(y * pw + width + 1) = J(y * pw + width + 1) = T_LOWEST;
  }
  /* A second raster/anti-raster pair is cheap (sequential) and on stained
   * tissue leaves the FIFO about half the work. */
  wsisa__fifo fifo;
  if (wsisa__fifo_init(&fifo)) return WSISA_ENOMEM;
  RECON_SCAN(f, width, height, conn, 1, NULL);
  RECON_SCAN(f, width, height, conn, -1, NULL);
  RECON_SCAN(f, width, height, conn, 1, NULL);
  int rc = RECON_SCAN(f, width, height, conn, -1, &fifo);

  /* Propagation: a popped pixel raises every neighbour below it, as far as
   * that neighbour's mask allows. */
  ptrdiff_t off[8];
  const int nb = wsisa__frame_neighbours(width, conn, off);
  while (fifo.count && !rc) {
    const ptrdiff_t p = wsisa__fifo_pop(&fifo);
    const T jp = J(p);
    for (int k = 0; k < nb; k++) {
      const ptrdiff_t q = p + off[k];
      if (J(q) < jp && I(q) != J(q)) {
        J(q) = LO(jp, I(q));
        if (wsisa__fifo_push(&fifo, (uint32_t)q)) rc = WSISA_ENOMEM;
      }
    }
  }
  wsisa__fifo_free(&fifo);
  return rc;
}

/* min(marker, mask) reconstructed under mask, on images of type T. */
static int RECON_IMAGES(const wsisa_image *marker, const wsisa_image *mask, int conn,
                        wsisa_image *out) {
  const int width = mask->width, height = mask->height;
  T *f = malloc(2 * wsisa__frame_size(width, height) * sizeof *f);
  if (!f) return WSISA_ENOMEM;
  for (int y = 0; y < height; y++) {
    const T *m = wsisa_image_row(marker, y), *k = wsisa_image_row(mask, y);
    const ptrdiff_t p = (ptrdiff_t)wsisa__frame_index(width, 0, y);
    for (int x = 0; x < width; x++) {
      I(p + x) = k[x];
      J(p + x) = LO(m[x], k[x]);
    }
  }
  int rc = RECON_NAME(f, width, height, conn);
  /* "+ 0" turns a float -0.0 into +0.0: with both zeros in the input, which
   * one a pixel ends with depends on the propagation order, and the CPU and
   * OpenCL workers must agree bit for bit. */
  for (int y = 0; y < height && !rc; y++) {
    T *o = wsisa_image_row(out, y);
    const ptrdiff_t p = (ptrdiff_t)wsisa__frame_index(width, 0, y);
    for (int x = 0; x < width; x++) o[x] = (T)(J(p + x) + 0);
  }
  free(f);
  return rc;
}

#undef HI
#undef LO
#undef I
#undef J
