/* Regional minima, f32 in, u8 0/255 out: a pixel starts on when no neighbour
 * is lower, then "off" spreads through equal neighbours by row and column
 * sweeps in place until a round changes nothing (the result is the unique
 * fixpoint, so the sweep order cannot change it). Matrices come as (buffer,
 * byte offset, byte stride). */

#define VAL(x, y) \
  (*(__global const float *)((__global const uchar *)in + in_off + (size_t)(y) * in_stride + (size_t)(x) * 4))
#define ON(x, y) out[out_off + (size_t)(y) * out_stride + (x)]

__kernel void wsisa_regional_min_init(__global const float *in, uint in_off, uint in_stride,
                                      int conn, __global uchar *out, uint out_off,
                                      uint out_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float v = VAL(x, y);
  int lower = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int nx = x + dx, ny = y + dy;
      if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0) || nx < 0 ||
          ny < 0 || nx >= width || ny >= height)
        continue;
      lower |= VAL(nx, ny) < v;
    }
  ON(x, y) = lower ? 0 : 255;
}

/* One work-item per row: left to right, then right to left. */
__kernel void wsisa_regional_min_rows(__global const float *in, uint in_off, uint in_stride,
                                      int conn, __global uchar *out, uint out_off,
                                      uint out_stride, __global int *changed, int width,
                                      int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  int moved = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int n = 1; n < width; n++) {
      int x = pass ? width - 1 - n : n, from = pass ? x + 1 : x - 1;
      if (ON(x, y) && !ON(from, y) && VAL(from, y) == VAL(x, y)) {
        ON(x, y) = 0;
        moved = 1;
      }
    }
  if (moved) *changed = 1;
}

/* One work-item per column: top to bottom, then bottom to top; with conn 8 the
 * diagonal neighbours of the previous row count too. */
__kernel void wsisa_regional_min_cols(__global const float *in, uint in_off, uint in_stride,
                                      int conn, __global uchar *out, uint out_off,
                                      uint out_stride, __global int *changed, int width,
                                      int height) {
  int x = get_global_id(0);
  if (x >= width) return;
  int moved = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int n = 1; n < height; n++) {
      int y = pass ? height - 1 - n : n, from = pass ? y + 1 : y - 1;
      if (!ON(x, y)) continue;
      float v = VAL(x, y);
      int off = !ON(x, from) && VAL(x, from) == v;
      if (conn == 8) {
        off = off || (x > 0 && !ON(x - 1, from) && VAL(x - 1, from) == v);
        off = off || (x + 1 < width && !ON(x + 1, from) && VAL(x + 1, from) == v);
      }
      if (off) {
        ON(x, y) = 0;
        moved = 1;
      }
    }
  if (moved) *changed = 1;
}
