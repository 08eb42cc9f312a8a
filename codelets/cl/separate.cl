/* Level 6 object by object (codelets/separate.c) computes with the kernels
 * of edt, neg_dist, hmin, regional_min, label and watershed on the whole
 * tile. Its own kernels, which level 7's codelet uses too, carry a mask
 * across the bus packed 8 pixels to a byte (the store is on the host): byte
 * y * ceil(width / 8) + x / 8, bit x % 8, set where the mask is on
 * (non-zero); unpacked, a set bit is 255, a clear one 0. */

/* One work-item per 8 pixels of a row: those whose x is a multiple of 8. */
__kernel void wsisa_separate_pack(__global const uchar *m, uint m_off, uint m_stride,
                                  __global uchar *bits, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height || x % 8) return;
  uchar b = 0;
  for (int i = 0; i < 8 && x + i < width; i++)
    if (m[m_off + y * m_stride + x + i]) b |= (uchar)(1 << i);
  bits[y * ((width + 7) / 8) + x / 8] = b;
}

__kernel void wsisa_separate_unpack(__global const uchar *bits, __global uchar *m, uint m_off,
                                    uint m_stride, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  m[m_off + y * m_stride + x] = (bits[y * ((width + 7) / 8) + x / 8] >> (x % 8)) & 1 ? 255 : 0;
}
