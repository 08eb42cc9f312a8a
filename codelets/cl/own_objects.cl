/* Ownership of a tile's objects by their centroid (codelets/cpu/own_objects.c):
 * the largest label, then the sums per label in one work-item (integers: the
 * same verdicts as the CPU kernel's), then the mask, one work-item per pixel. */
__kernel void wsisa_own_objects_max(__global const uchar *labels, uint off, uint stride,
                                    __global int *max_out, int width, int height) {
  if (get_global_id(0) != 0) return;
  int m = 0;
  for (int y = 0; y < height; y++) {
    __global const int *row = (__global const int *)(labels + off + y * stride);
    for (int x = 0; x < width; x++) m = max(m, row[x]);
  }
  *max_out = m;
}

__kernel void wsisa_own_objects_sums(__global const uchar *labels, uint off, uint stride,
                                     __global ulong *acc, int nlabels, int x0, int y0,
                                     int x1, int y1, __global uchar *keep, int width,
                                     int height) {
  if (get_global_id(0) != 0) return;
  for (int y = 0; y < height; y++) {
    __global const int *row = (__global const int *)(labels + off + y * stride);
    for (int x = 0; x < width; x++) {
      int l = row[x];
      if (l > 0 && l <= nlabels) {
        acc[3 * l] += 1;
        acc[3 * l + 1] += (ulong)x;
        acc[3 * l + 2] += (ulong)y;
      }
    }
  }
  for (int l = 0; l <= nlabels; l++) {
    ulong n = acc[3 * l], sx = acc[3 * l + 1], sy = acc[3 * l + 2];
    keep[l] = l > 0 && n && (ulong)x0 * n <= sx && sx < (ulong)x1 * n && (ulong)y0 * n <= sy &&
              sy < (ulong)y1 * n;
  }
}

__kernel void wsisa_own_objects_mask(__global const uchar *labels, uint loff, uint lstride,
                                     __global const uchar *keep, int nlabels,
                                     __global uchar *out, uint ooff, uint ostride, int width,
                                     int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = ((__global const int *)(labels + loff + y * lstride))[x];
  out[ooff + y * ostride + x] = l > 0 && l <= nlabels && keep[l] ? 255 : 0;
}
