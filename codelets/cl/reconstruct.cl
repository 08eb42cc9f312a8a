/* Grey reconstruction by dilation, u8 and f32: J = min(marker, mask), then
 * row and column sweeps that raise J in place under the mask until a whole
 * round changes nothing. The result is the unique fixpoint (every value stays
 * at or below the reconstruction, and a round without change checked every
 * neighbour pair), so the sweep order and the in-place reads of neighbouring
 * columns being updated meanwhile cannot change it. Matrices come as (buffer,
 * byte offset, byte stride). */

#define AT(T, buf, off, stride, x, y) \
  (*(__global T *)((__global uchar *)(buf) + (off) + (size_t)(y) * (stride) + (size_t)(x) * sizeof(T)))
#define HI(a, b) ((a) > (b) ? (a) : (b))
#define LO(a, b) ((a) < (b) ? (a) : (b))
/* Raise J(x, y) towards v as far as the mask allows; note any change. */
#define RAISE(T, x, y, v)                                       \
  do {                                                          \
    T j_ = AT(T, J, j_off, j_stride, x, y), v_ = (v);           \
    if (v_ > j_) {                                              \
      T n_ = LO(v_, AT(T, mask, k_off, k_stride, x, y));        \
      if (n_ > j_) {                                            \
        AT(T, J, j_off, j_stride, x, y) = n_;                   \
        moved = 1;                                              \
      }                                                         \
    }                                                           \
  } while (0)

#define RECON_KERNELS(T, SUF)                                                            \
  __kernel void wsisa_recon_init_##SUF(                                                  \
      __global const T *marker, uint m_off, uint m_stride, __global const T *mask,       \
      uint k_off, uint k_stride, __global T *out, uint o_off, uint o_stride, int width,  \
      int height) {                                                                      \
    int x = get_global_id(0), y = get_global_id(1);                                      \
    if (x >= width || y >= height) return;                                               \
    T m = AT(T, marker, m_off, m_stride, x, y), k = AT(T, mask, k_off, k_stride, x, y);  \
    AT(T, out, o_off, o_stride, x, y) = LO(m, k);                                        \
  }                                                                                      \
  /* One work-item per row: left to right, then right to left. */                       \
  __kernel void wsisa_recon_rows_##SUF(__global const T *mask, uint k_off, uint k_stride, \
                                       __global T *J, uint j_off, uint j_stride,         \
                                       int conn, __global int *changed, int width,       \
                                       int height) {                                     \
    int y = get_global_id(0);                                                            \
    if (y >= height) return;                                                             \
    int moved = 0;                                                                       \
    for (int pass = 0; pass < 2; pass++)                                                 \
      for (int n = 1; n < width; n++) {                                                  \
        int x = pass ? width - 1 - n : n, from = pass ? x + 1 : x - 1;                   \
        RAISE(T, x, y, AT(T, J, j_off, j_stride, from, y));                              \
      }                                                                                  \
    if (moved) *changed = 1;                                                             \
  }                                                                                      \
  /* One work-item per column: top to bottom, then bottom to top; with conn 8 the     \
   * diagonal neighbours of the previous row count too. */                             \
  __kernel void wsisa_recon_cols_##SUF(__global const T *mask, uint k_off, uint k_stride, \
                                       __global T *J, uint j_off, uint j_stride,         \
                                       int conn, __global int *changed, int width,       \
                                       int height) {                                     \
    int x = get_global_id(0);                                                            \
    if (x >= width) return;                                                              \
    int moved = 0;                                                                       \
    for (int pass = 0; pass < 2; pass++)                                                 \
      for (int n = 1; n < height; n++) {                                                 \
        int y = pass ? height - 1 - n : n, from = pass ? y + 1 : y - 1;                  \
        T v = AT(T, J, j_off, j_stride, x, from);                                        \
        if (conn == 8) {                                                                 \
          if (x > 0) v = HI(v, AT(T, J, j_off, j_stride, x - 1, from));                  \
          if (x + 1 < width) v = HI(v, AT(T, J, j_off, j_stride, x + 1, from));          \
        }                                                                                \
        RAISE(T, x, y, v);                                                               \
      }                                                                                  \
    if (moved) *changed = 1;                                                             \
  }

RECON_KERNELS(uchar, u8)
RECON_KERNELS(float, f32)

/* x + 0.0f turns -0.0 into +0.0, as the CPU kernel does: with both zeros in
 * the input, which one a pixel ends with depends on the propagation order. */
__kernel void wsisa_recon_finish_f32(__global float *J, uint j_off, uint j_stride,
                                     int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  AT(float, J, j_off, j_stride, x, y) += 0.0f;
}
