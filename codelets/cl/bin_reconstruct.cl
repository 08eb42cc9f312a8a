/* Binary reconstruction, u8 0/255, as a flood of a state image in place: mask
 * pixels start open (1), seeds reached (255), the rest closed (0); row and
 * column sweeps turn open pixels next to reached ones into reached until a
 * round changes nothing. The flood kernels take the open and reached values,
 * so fill holes (fill_holes.cl) floods with them too. Matrices come as
 * (buffer, byte offset, byte stride). */

#define S(x, y) s[off + (size_t)(y) * stride + (x)]

__kernel void wsisa_bin_reconstruct_init(__global const uchar *seed, uint s_off,
                                         uint s_stride, __global const uchar *mask,
                                         uint m_off, uint m_stride, __global uchar *out,
                                         uint o_off, uint o_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  uchar m = mask[m_off + (size_t)y * m_stride + x];
  uchar sd = seed[s_off + (size_t)y * s_stride + x];
  out[o_off + (size_t)y * o_stride + x] = !m ? 0 : sd ? 255 : 1;
}

/* One work-item per row: left to right, then right to left. */
__kernel void wsisa_flood_rows(__global uchar *s, uint off, uint stride, uchar open,
                               uchar reached, int conn, __global int *changed, int width,
                               int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  int moved = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int n = 1; n < width; n++) {
      int x = pass ? width - 1 - n : n, from = pass ? x + 1 : x - 1;
      if (S(x, y) == open && S(from, y) == reached) {
        S(x, y) = reached;
        moved = 1;
      }
    }
  if (moved) *changed = 1;
}

/* One work-item per column: top to bottom, then bottom to top; with conn 8 the
 * diagonal neighbours of the previous row count too. */
__kernel void wsisa_flood_cols(__global uchar *s, uint off, uint stride, uchar open,
                               uchar reached, int conn, __global int *changed, int width,
                               int height) {
  int x = get_global_id(0);
  if (x >= width) return;
  int moved = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int n = 1; n < height; n++) {
      int y = pass ? height - 1 - n : n, from = pass ? y + 1 : y - 1;
      if (S(x, y) != open) continue;
      int reach = S(x, from) == reached;
      if (conn == 8)
        reach = reach || (x > 0 && S(x - 1, from) == reached) ||
                (x + 1 < width && S(x + 1, from) == reached);
      if (reach) {
        S(x, y) = reached;
        moved = 1;
      }
    }
  if (moved) *changed = 1;
}

/* Every pixel still `from` becomes `to`. */
__kernel void wsisa_flood_finish(__global uchar *s, uint off, uint stride, uchar from,
                                 uchar to, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  if (S(x, y) == from) S(x, y) = to;
}
