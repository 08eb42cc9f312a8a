/* Fill the holes of each object (codelets/cpu/fill_object_holes.c has the
 * definition). With the objects and the background's components labelled by
 * their first pixel (label.cl's kernels), every background pixel reports to
 * its component's entry whether it lies on the image border and the smallest
 * and largest object next to it; a component off the border whose two agree
 * is a hole of one object and is filled. Order-free: atomics of min, max and
 * a flag. lo, hi and border are dense width x height, indexed by a
 * component's first pixel; the mask and out are (buffer, byte offset, byte
 * stride). */

__kernel void wsisa_fill_object_holes_init(__global int *lo, __global int *hi,
                                           __global int *border, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int i = y * width + x;
  lo[i] = INT_MAX;
  hi[i] = 0;
  border[i] = 0;
}

__kernel void wsisa_fill_object_holes_around(__global const int *objects,
                                             __global const int *holes, __global int *lo,
                                             __global int *hi, __global int *border,
                                             int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int r = holes[y * width + x];
  if (!r) return;
  if (x == 0 || y == 0 || x == width - 1 || y == height - 1) atomic_max(&border[r - 1], 1);
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int qx = x + dx, qy = y + dy;
      if (qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
      int o = objects[qy * width + qx];
      if (!o) continue;
      atomic_min(&lo[r - 1], o);
      atomic_max(&hi[r - 1], o);
    }
}

__kernel void wsisa_fill_object_holes_finish(__global const uchar *mask, uint m_off,
                                             uint m_stride, __global uchar *out, uint o_off,
                                             uint o_stride, __global const int *holes,
                                             __global const int *lo, __global const int *hi,
                                             __global const int *border, int width,
                                             int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int r = holes[y * width + x];
  int on = mask[m_off + y * m_stride + x] != 0 ||
           (r && !border[r - 1] && lo[r - 1] == hi[r - 1]);
  out[o_off + y * o_stride + x] = on ? 255 : 0;
}
