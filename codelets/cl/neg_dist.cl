/* out = mask ? -dist : -FLT_MAX (see codelets/cpu/neg_dist.c). */
__kernel void wsisa_neg_dist(__global const uchar *dist, uint dist_off, uint dist_stride,
                             __global const uchar *mask, uint mask_off, uint mask_stride,
                             __global uchar *out, uint out_off, uint out_stride,
                             int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float d = ((__global const float *)(dist + dist_off + y * dist_stride))[x];
  uchar m = mask[mask_off + y * mask_stride + x];
  ((__global float *)(out + out_off + y * out_stride))[x] = m ? -d : -FLT_MAX;
}
