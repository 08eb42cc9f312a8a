/* Connected components by a parallel union-find (Playne and Hawick 2018):
 * every labelled pixel starts as its own raster index + 1 (a root); one
 * launch merges every pixel with its labelled neighbours before it (left,
 * up, and with conn 8 the two upper diagonals) by linking the larger of the
 * two roots under the smaller with atomic_min, retried until they share a
 * root; a second launch points every pixel at its root. Links only ever go to
 * a smaller index of the same component, so each component's root is its
 * first pixel in raster order, whatever order the work-items ran in, and no
 * launch needs to be repeated. Canonical renumbering then counts those first
 * pixels in raster order. `lab` is a dense width x height scratch array;
 * matrices are (buffer, byte offset, byte stride). The area filter, the
 * hole filling, the binary reconstruction and the regional minima reuse
 * these kernels. */

/* The root (0-based) of pixel i: follow the links; a link read while another
 * work-item moves it is still a pixel of the same component nearer the root. */
static int uf_find(volatile __global int *lab, int i) {
  int p = lab[i] - 1;
  while (p != i) {
    i = p;
    p = lab[i] - 1;
  }
  return i;
}

/* Join the components of pixels a and b. */
static void uf_union(volatile __global int *lab, int a, int b) {
  for (;;) {
    a = uf_find(lab, a);
    b = uf_find(lab, b);
    if (a == b) return;
    if (a > b) {
      int t = a;
      a = b;
      b = t;
    }
    /* Link root b under a, unless b stopped being a root meanwhile: then go
     * on from where it points. */
    int old = atomic_min((volatile __global int *)&lab[b], a + 1) - 1;
    if (old == b) return;
    b = old;
  }
}

/* The pixels labelled: those on, or with `off` those off. */
__kernel void wsisa_label_init(__global const uchar *mask, uint mask_off,
                               uint mask_stride, __global int *lab, int off, int width,
                               int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  lab[i] = (mask[mask_off + y * mask_stride + x] != 0) != (off != 0) ? i + 1 : 0;
}

/* Every pixel labelled (the regional minima's plateaus). */
__kernel void wsisa_label_init_all(__global int *lab, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x < width && y < height) lab[y * width + x] = y * width + x + 1;
}

/* The neighbours before (x, y) that `conn` joins: left, up, up-left, up-right. */
#define BEFORE(conn, k, x, y, nx, ny)                                  \
  int nx = (x) + ((k) == 0 ? -1 : (k) == 1 ? 0 : (k) == 2 ? -1 : 1); \
  int ny = (y) - ((k) != 0);                                         \
  if ((k) >= 2 && (conn) == 4) break;                                \
  if (nx < 0 || ny < 0 || nx >= width) continue

__kernel void wsisa_label_merge(__global int *lab, int conn, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  if (!lab[i]) return;
  for (int k = 0; k < 4; k++) {
    BEFORE(conn, k, x, y, nx, ny);
    int n = ny * width + nx;
    if (lab[n]) uf_union(lab, i, n);
  }
}

/* The same over pixels of equal value of an f32 image: its plateaus. */
__kernel void wsisa_label_merge_equal(__global const float *in, uint in_off, uint in_stride,
                                      __global int *lab, int conn, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
#define IN(x, y) \
  (*(__global const float *)((__global const uchar *)in + in_off + (size_t)(y) * in_stride + (size_t)(x) * 4))
  float v = IN(x, y);
  for (int k = 0; k < 4; k++) {
    BEFORE(conn, k, x, y, nx, ny);
    if (IN(nx, ny) == v) uf_union(lab, y * width + x, ny * width + nx);
  }
#undef IN
}

/* Every labelled pixel to its root's index + 1. */
__kernel void wsisa_label_compress(__global int *lab, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  if (lab[i]) lab[i] = uf_find(lab, i) + 1;
}

/* One work-item per row: how many first pixels (roots) the row holds. */
__kernel void wsisa_label_count_roots(__global const int *lab, __global int *row_roots,
                                      int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  int n = 0;
  for (int x = 0; x < width; x++) {
    int i = y * width + x;
    n += lab[i] == i + 1;
  }
  row_roots[y] = n;
}

/* One work-item: row counts to the number of roots before each row. */
__kernel void wsisa_label_prefix(__global int *row_roots, int height) {
  if (get_global_id(0) != 0) return;
  int before = 0;
  for (int y = 0; y < height; y++) {
    int n = row_roots[y];
    row_roots[y] = before;
    before += n;
  }
}

/* One work-item per row: canonical ids at the roots. */
__kernel void wsisa_label_number_roots(__global const int *lab,
                                       __global const int *row_roots,
                                       __global uchar *out, uint out_off,
                                       uint out_stride, int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  __global int *row = (__global int *)(out + out_off + y * out_stride);
  int id = row_roots[y];
  for (int x = 0; x < width; x++) {
    int i = y * width + x;
    if (lab[i] == i + 1) row[x] = ++id;
  }
}

/* Every other pixel copies its root's id (roots are not written here). */
__kernel void wsisa_label_write(__global const int *lab, __global uchar *out,
                                uint out_off, uint out_stride, int width,
                                int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x, l = lab[i];
  __global int *px = (__global int *)(out + out_off + y * out_stride) + x;
  if (!l) {
    *px = 0;
  } else if (l != i + 1) {
    int r = l - 1;
    *px = *((__global const int *)(out + out_off + (r / width) * out_stride) + r % width);
  }
}

/* After a marking kernel (the binary reconstruction's seeds, the hole
 * filling's border) turned the entry of some roots negative: 255 where a
 * labelled pixel's root is marked, 0 elsewhere; with `invert` the reverse. */
__kernel void wsisa_label_keep_marked(__global const int *lab, int invert, __global uchar *out,
                                      uint out_off, uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = abs(lab[y * width + x]);
  int marked = l && lab[l - 1] < 0;
  out[out_off + y * out_stride + x] = marked != (invert != 0) ? 255 : 0;
}
