/* Connected components by label equivalence (Kalentev et al. 2011): every on
 * pixel starts as its own raster index + 1; scan links each label's root to
 * the smallest label next to it, resolve follows links to the roots; repeated
 * until stable, every component carries the index + 1 of its first pixel.
 * Canonical renumbering then counts those first pixels in raster order.
 * `lab` is a dense width x height scratch array; matrices are (buffer, byte
 * offset, byte stride). The area filter and the object hole filling reuse
 * these kernels. */

/* The pixels labelled: those on, or with `off` those off. */
__kernel void wsisa_label_init(__global const uchar *mask, uint mask_off,
                               uint mask_stride, __global int *lab, int off, int width,
                               int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  lab[i] = (mask[mask_off + y * mask_stride + x] != 0) != (off != 0) ? i + 1 : 0;
}

__kernel void wsisa_label_scan(__global int *lab, int conn, __global int *changed,
                               int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  int l = lab[i];
  if (!l) return;
  int m = l;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0)) continue;
      int nx = x + dx, ny = y + dy;
      if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
      int n = lab[ny * width + nx];
      if (n && n < m) m = n;
    }
  if (m < l) {
    /* Labels only decrease and always name a pixel of the same component. */
    atomic_min(&lab[l - 1], m);
    *changed = 1;
  }
}

__kernel void wsisa_label_resolve(__global int *lab, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  int l = lab[i];
  if (!l) return;
  int root = l;
  while (lab[root - 1] != root) root = lab[root - 1];
  if (root != l) lab[i] = root;
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
