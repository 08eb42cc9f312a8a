/* Comparison counts |A&B|, |A|, |B|: one work-item counts a row, one adds the
 * rows up (integers: any order gives the same sums, no atomics needed). */
__kernel void wsisa_compare_rows(__global const uchar *a, uint a_off, uint a_stride,
                                 __global const uchar *b, uint b_off, uint b_stride,
                                 __global ulong *rows, int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  __global const uchar *pa = a + a_off + y * a_stride, *pb = b + b_off + y * b_stride;
  ulong both = 0, in_a = 0, in_b = 0;
  for (int x = 0; x < width; x++) {
    int on_a = pa[x] != 0, on_b = pb[x] != 0;
    both += on_a & on_b;
    in_a += on_a;
    in_b += on_b;
  }
  rows[3 * y] = both;
  rows[3 * y + 1] = in_a;
  rows[3 * y + 2] = in_b;
}

__kernel void wsisa_compare_total(__global const ulong *rows, int height,
                                  __global uchar *counts_base, uint counts_off) {
  if (get_global_id(0) != 0) return;
  __global ulong *counts = (__global ulong *)(counts_base + counts_off);
  ulong sum[3] = {0, 0, 0};
  for (int y = 0; y < height; y++)
    for (int i = 0; i < 3; i++) sum[i] += rows[3 * y + i];
  for (int i = 0; i < 3; i++) counts[i] = sum[i];
}
