/* Size filter on top of the labelling kernels (label.cl): count each root's
 * pixels, then keep the pixels whose component area is in [min, max). */

__kernel void wsisa_area_filter_zero(__global int *area, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x < width && y < height) area[y * width + x] = 0;
}

__kernel void wsisa_area_filter_count(__global const int *lab, __global int *area,
                                      int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = lab[y * width + x];
  if (l) atomic_inc(&area[l - 1]);
}

__kernel void wsisa_area_filter_keep(__global const int *lab, __global const int *area,
                                     int min_area, int max_area, __global uchar *out,
                                     uint out_off, uint out_stride, int width,
                                     int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = lab[y * width + x];
  int keep = 0;
  if (l) {
    int a = area[l - 1];
    keep = a >= min_area && (max_area <= 0 || a < max_area);
  }
  out[out_off + y * out_stride + x] = keep ? 255 : 0;
}
