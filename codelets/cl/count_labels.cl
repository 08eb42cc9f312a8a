/* Largest label: one work-item per row, then one over the rows. */
__kernel void wsisa_count_labels_rows(__global const uchar *labels, uint off, uint stride,
                                      __global int *rows, int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  __global const int *row = (__global const int *)(labels + off + y * stride);
  int m = 0;
  for (int x = 0; x < width; x++) m = max(m, row[x]);
  rows[y] = m;
}

__kernel void wsisa_count_labels_total(__global const int *rows, int height,
                                       __global uchar *count_base, uint count_off) {
  if (get_global_id(0) != 0) return;
  int m = 0;
  for (int y = 0; y < height; y++) m = max(m, rows[y]);
  *(__global ulong *)(count_base + count_off) = (ulong)m;
}
