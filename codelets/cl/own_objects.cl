/* Ownership of a tile's objects by their centroid (codelets/cpu/own_objects.c):
 * the largest label (each work-group's, then theirs by an atomic), the sums
 * per label (pixels, x, y: integers, so the same verdicts as the CPU
 * kernel's) gathered run by run along rows into 32-bit atomics, a sum's
 * carries into its upper word, then each label's verdict, then the mask, one
 * work-item per pixel. The whole image at once: no work-item walks it alone. */

#define LABEL(x, y) (((__global const int *)(labels + off + (y) * stride))[x])

/* One work-group of `local` items (a power of two, at most 256); the
 * work-items stride over the image. */
__kernel void wsisa_own_objects_max(__global const uchar *labels, uint off, uint stride,
                                    __global int *max_out, int width, int height) {
  __local int best[256];
  const size_t lid = get_local_id(0), n = (size_t)width * (size_t)height;
  int m = 0;
  for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
    m = max(m, LABEL((int)(i % (size_t)width), (int)(i / (size_t)width)));
  best[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
    if (lid < s) best[lid] = max(best[lid], best[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) atomic_max(max_out, best[0]);
}

/* acc: five words a label: pixels, then x's and y's sums, each low word then
 * high word. */
void add_wide(__global uint *lo, uint v) {
  const uint old = atomic_add(lo, v);
  if (old + v < old) atomic_inc(lo + 1);
}

void add_run(__global uint *acc, int l, int nlabels, uint count, uint sum_x, int y) {
  if (l <= 0 || l > nlabels || !count) return;
  __global uint *a = acc + 5 * (size_t)l;
  atomic_add(a, count);
  add_wide(a + 1, sum_x);
  add_wide(a + 3, count * (uint)y);
}

/* One work-item per 32 pixels of a row: x = 32 * get_global_id(0). */
__kernel void wsisa_own_objects_sums(__global const uchar *labels, uint off, uint stride,
                                     __global uint *acc, int nlabels, int width, int height) {
  const int y = get_global_id(1);
  int x = 32 * (int)get_global_id(0);
  if (x >= width || y >= height) return;
  const int end = min(x + 32, width);
  int cur = 0;
  uint count = 0, sum_x = 0;
  for (; x < end; x++) {
    const int l = LABEL(x, y);
    if (l != cur) {
      add_run(acc, cur, nlabels, count, sum_x, y);
      cur = l, count = 0, sum_x = 0;
    }
    count++, sum_x += (uint)x;
  }
  add_run(acc, cur, nlabels, count, sum_x, y);
}

/* One work-item per label 0..nlabels: kept when its centroid lies in the
 * core [x0, x1) x [y0, y1). */
__kernel void wsisa_own_objects_keep(__global const uint *acc, int nlabels, int x0, int y0,
                                     int x1, int y1, __global uchar *keep) {
  const int l = get_global_id(0);
  if (l > nlabels) return;
  __global const uint *a = acc + 5 * (size_t)l;
  const ulong n = a[0], sx = a[1] | (ulong)a[2] << 32, sy = a[3] | (ulong)a[4] << 32;
  keep[l] = l > 0 && n && (ulong)x0 * n <= sx && sx < (ulong)x1 * n && (ulong)y0 * n <= sy &&
            sy < (ulong)y1 * n;
}

__kernel void wsisa_own_objects_mask(__global const uchar *labels, uint off, uint stride,
                                     __global const uchar *keep, int nlabels,
                                     __global uchar *out, uint ooff, uint ostride, int width,
                                     int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = LABEL(x, y);
  out[ooff + y * ostride + x] = l > 0 && l <= nlabels && keep[l] ? 255 : 0;
}
