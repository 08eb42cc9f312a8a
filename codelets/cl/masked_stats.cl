/* Masked l-alpha-beta statistics in the order of codelets/cpu/masked_stats.c: one
 * work-item sums a row left to right, one work-item sums the rows top to
 * bottom; pass 0 gives count and mean, pass 1 the standard deviation. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* stats: count, mean[3], std[3]; rows: 4 doubles a row. */
__kernel void wsisa_masked_stats_rows(__global const uchar *lab, uint lab_off,
                                      uint lab_stride, __global const uchar *mask,
                                      uint mask_off, uint mask_stride,
                                      __global const uchar *stats_base, uint stats_off,
                                      __global double *rows, int pass, int width,
                                      int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  __global const float *v = (__global const float *)(lab + lab_off + y * lab_stride);
  __global const uchar *m = mask + mask_off + y * mask_stride;
  __global const double *mean = (__global const double *)(stats_base + stats_off) + 1;
  double count = 0, row[3] = {0, 0, 0};
  for (int x = 0; x < width; x++, v += 3) {
    if (!m[x]) continue;
    count += 1;
    for (int c = 0; c < 3; c++) {
      if (pass == 0) {
        row[c] += v[c];
      } else {
        double d = v[c] - mean[c];
        row[c] += d * d;
      }
    }
  }
  rows[4 * y] = count;
  for (int c = 0; c < 3; c++) rows[4 * y + 1 + c] = row[c];
}

__kernel void wsisa_masked_stats_total(__global const double *rows, int height,
                                       __global uchar *stats_base, uint stats_off,
                                       int pass) {
  if (get_global_id(0) != 0) return;
  __global double *stats = (__global double *)(stats_base + stats_off);
  ulong count = 0;
  double sum[3] = {0, 0, 0};
  for (int y = 0; y < height; y++) {
    count += (ulong)rows[4 * y];
    for (int c = 0; c < 3; c++) sum[c] += rows[4 * y + 1 + c];
  }
  if (pass == 0) {
    stats[0] = (double)count;
    for (int c = 0; c < 3; c++) stats[1 + c] = count ? sum[c] / (double)count : 0.0;
  } else {
    for (int c = 0; c < 3; c++) stats[4 + c] = count ? sqrt(sum[c] / (double)count) : 0.0;
  }
}

#endif
