/* Regional minima, f32 in, u8 0/255 out: a pixel is on when no pixel of its
 * plateau (the conn-connected pixels of its value, from label.cl's
 * union-find) has a strictly lower neighbour. A pixel with a lower neighbour
 * marks its plateau's root; then every pixel whose root is unmarked is on.
 * Comparisons are those of floats, as on the CPU. Matrices come as (buffer,
 * byte offset, byte stride); `lab` and `low` are dense width x height. */

#define VAL(x, y) \
  (*(__global const float *)((__global const uchar *)in + in_off + (size_t)(y) * in_stride + (size_t)(x) * 4))

__kernel void wsisa_regional_min_mark(__global const float *in, uint in_off, uint in_stride,
                                      int conn, __global const int *lab, __global uchar *low,
                                      int width, int height) {
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
  /* Every writer stores the same value. */
  if (lower) low[lab[y * width + x] - 1] = 1;
}

__kernel void wsisa_regional_min_write(__global const int *lab, __global const uchar *low,
                                       __global uchar *out, uint out_off, uint out_stride,
                                       int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  out[out_off + (size_t)y * out_stride + x] = low[lab[y * width + x] - 1] ? 0 : 255;
}
