/* Binary reconstruction, u8: the components (conn) of the mask's on pixels
 * that hold an on pixel of the seed. The components come from label.cl's
 * union-find; this marks their roots, label.cl's wsisa_label_keep_marked
 * writes the result. The seed is (buffer, byte offset, byte stride). */

/* A seed pixel on a labelled pixel turns its root's entry negative (every
 * writer stores the same value; a root's own entry is read through abs). */
__kernel void wsisa_bin_reconstruct_mark(__global const uchar *seed, uint s_off,
                                         uint s_stride, __global int *lab, int width,
                                         int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int l = abs(lab[y * width + x]);
  if (l && seed[s_off + (size_t)y * s_stride + x]) lab[l - 1] = -l;
}
