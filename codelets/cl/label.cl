/* Connected components by a parallel union-find (Playne and Hawick 2018):
 * every labelled pixel starts as its own raster index + 1 (a root) and is
 * merged with its labelled neighbours before it (left, up, and with conn 8
 * the two upper diagonals) by linking the larger of the two roots under the
 * smaller with atomic_min, retried until they share a root. Two launches
 * merge: the first gives each LTILE x LTILE block to one work-group, which
 * labels its pixels and merges the pairs inside the block in local memory,
 * then writes each pixel its block root's index + 1 (a tree one link deep
 * per block's piece); the second merges only the pairs across block borders
 * in global memory, halving the paths it walks. A third launch points every
 * pixel at its root. Links only ever go to a smaller index of the same
 * component, so each component's root is its first pixel in raster order,
 * whatever order the work-items ran in, and no launch needs to be repeated;
 * a plateau as large as the image is a chain of block roots, not of pixels.
 * Canonical renumbering then counts those first pixels in raster order.
 * `lab` is a dense width x height scratch array; matrices are (buffer, byte
 * offset, byte stride). The area filter, the hole filling, the binary
 * reconstruction and the regional minima reuse these kernels. */

/* The blocks' side. */
#define LTILE 32

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

/* The root of pixel i, each pixel passed pointed at its grandparent on the
 * way (path halving): the link only moves nearer the root of the same
 * component, and atomic_min keeps a smaller link another work-item wrote.
 * The same in local memory, where entries are local indices without + 1. */
#define UF_FIND_HALVING(name, space, one)                          \
  static int name(volatile space int *lab, int i) {                \
    for (;;) {                                                     \
      int p = lab[i] - (one);                                      \
      if (p == i) return i;                                        \
      int g = lab[p] - (one);                                      \
      if (g == p) return p;                                        \
      atomic_min(&lab[i], g + (one));                              \
      i = g;                                                       \
    }                                                              \
  }
UF_FIND_HALVING(uf_find_halving, __global, 1)
UF_FIND_HALVING(uf_find_local, __local, 0)

/* Join the components of pixels a and b (uf_union_local: in local memory). */
#define UF_UNION(name, space, find, one)                                      \
  static void name(volatile space int *lab, int a, int b) {                   \
    for (;;) {                                                                \
      a = find(lab, a);                                                       \
      b = find(lab, b);                                                       \
      if (a == b) return;                                                     \
      if (a > b) {                                                            \
        int t = a;                                                            \
        a = b;                                                                \
        b = t;                                                                \
      }                                                                       \
      /* Link root b under a, unless b stopped being a root meanwhile: then   \
       * go on from where it points. */                                       \
      int old = atomic_min(&lab[b], a + (one)) - (one);                       \
      if (old == b) return;                                                   \
      b = old;                                                                \
    }                                                                         \
  }
UF_UNION(uf_union, __global, uf_find_halving, 1)
UF_UNION(uf_union_local, __local, uf_find_local, 0)

/* The neighbours before (x, y) that `conn` joins: left, up, up-left, up-right. */
#define BEFORE(conn, k, x, y, nx, ny)                                  \
  int nx = (x) + ((k) == 0 ? -1 : (k) == 1 ? 0 : (k) == 2 ? -1 : 1); \
  int ny = (y) - ((k) != 0);                                         \
  if ((k) >= 2 && (conn) == 4) break;                                \
  if (nx < 0 || ny < 0 || nx >= width) continue

/* One work-group per block (raster order): ON(x, y) says whether a pixel is
 * labelled, JOIN(x, y, nx, ny) whether two labelled neighbours join. */
#define LABEL_BLOCK(name, ON, JOIN, ...)                                             \
  __kernel void name(__VA_ARGS__, __global int *lab, int conn, int width, int height) { \
    __local int l[LTILE * LTILE];                                                    \
    const int lid = get_local_id(0), items = get_local_size(0);                      \
    const int blocks_x = (width + LTILE - 1) / LTILE, b = get_group_id(0);           \
    const int x0 = b % blocks_x * LTILE, y0 = b / blocks_x * LTILE;                  \
    const int tw = min(LTILE, width - x0), th = min(LTILE, height - y0);             \
    for (int p = lid; p < tw * th; p += items)                                       \
      l[p] = ON(x0 + p % tw, y0 + p / tw) ? p : -1;                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    for (int p = lid; p < tw * th; p += items) {                                     \
      if (l[p] < 0) continue;                                                        \
      const int lx = p % tw, ly = p / tw;                                            \
      for (int k = 0; k < 4; k++) {                                                  \
        BEFORE(conn, k, lx, ly, nlx, nly);                                           \
        if (nlx >= tw) continue;                                                     \
        const int q = nly * tw + nlx;                                                \
        if (l[q] >= 0 && JOIN(x0 + lx, y0 + ly, x0 + nlx, y0 + nly))                 \
          uf_union_local(l, p, q);                                                   \
      }                                                                              \
    }                                                                                \
    barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    for (int p = lid; p < tw * th; p += items) {                                     \
      const int r = l[p] < 0 ? -1 : uf_find_local(l, p);                            \
      lab[(y0 + p / tw) * width + x0 + p % tw] =                                     \
          r < 0 ? 0 : (y0 + r / tw) * width + x0 + r % tw + 1;                       \
    }                                                                                \
  }

/* The pixels labelled: those on, or with `off` those off. */
#define MASK_ON(x, y) ((mask[mask_off + (y) * mask_stride + (x)] != 0) != (off != 0))
#define BOTH(x, y, nx, ny) 1
LABEL_BLOCK(wsisa_label_block, MASK_ON, BOTH, __global const uchar *mask, uint mask_off,
            uint mask_stride, int off)

/* Every pixel labelled, neighbours of equal value of an f32 image joined:
 * its plateaus (the regional minima's). */
#define IN(x, y) \
  (*(__global const float *)((__global const uchar *)in + in_off + (size_t)(y) * in_stride + (size_t)(x) * 4))
#define ALL(x, y) 1
#define EQUAL(x, y, nx, ny) (IN(x, y) == IN(nx, ny))
LABEL_BLOCK(wsisa_label_block_equal, ALL, EQUAL, __global const float *in, uint in_off,
            uint in_stride)

/* The pairs across block borders (a pixel and a neighbour before it in
 * another block): only the blocks' first row and first and last columns (the
 * up-right diagonal) have any. */
#define AWAY(x, y) ((x) % LTILE && (x) % LTILE != LTILE - 1 && (y) % LTILE)
#define ACROSS(x, y, nx, ny) ((nx) / LTILE != (x) / LTILE || (ny) / LTILE != (y) / LTILE)

__kernel void wsisa_label_merge(__global int *lab, int conn, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height || AWAY(x, y)) return;
  int i = y * width + x;
  if (!lab[i]) return;
  for (int k = 0; k < 4; k++) {
    BEFORE(conn, k, x, y, nx, ny);
    int n = ny * width + nx;
    if (ACROSS(x, y, nx, ny) && lab[n]) uf_union(lab, i, n);
  }
}

__kernel void wsisa_label_merge_equal(__global const float *in, uint in_off, uint in_stride,
                                      __global int *lab, int conn, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height || AWAY(x, y)) return;
  for (int k = 0; k < 4; k++) {
    BEFORE(conn, k, x, y, nx, ny);
    if (ACROSS(x, y, nx, ny) && EQUAL(x, y, nx, ny))
      uf_union(lab, y * width + x, ny * width + nx);
  }
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
