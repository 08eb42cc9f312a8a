/* Fill holes, u8: the components (conn) of the background, from label.cl's
 * union-find; those with a pixel on the image border stay background, every
 * other pixel is foreground (label.cl's wsisa_label_keep_marked, inverted). */

/* A labelled pixel on the border turns its root's entry negative (every
 * writer stores the same value; a root's own entry is read through abs). */
__kernel void wsisa_fill_holes_mark(__global int *lab, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  if (x != 0 && y != 0 && x != width - 1 && y != height - 1) return;
  int l = abs(lab[y * width + x]);
  if (l) lab[l - 1] = -l;
}
