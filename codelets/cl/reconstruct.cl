/* Grey reconstruction by dilation, u8 and f32: J = min(marker, mask), raised
 * in place under the mask until no pixel can rise. The result is the unique
 * fixpoint (every value stays at or below the reconstruction, and at the end
 * every neighbour pair was checked), so neither the order of the updates nor
 * reads of a neighbour being raised meanwhile can change it. Two phases,
 * no host round trip per step:
 * 1. blocks (wsisa_recon_block): one work-group per TILE x TILE block loads
 *    the block's J and mask and the ring of J around it into local memory,
 *    sweeps rows then columns there with barriers between them until a round
 *    moves nothing, and writes back what rose; a side of the block that rose
 *    wakes the blocks beyond it (their entry in `active` set to the next
 *    launch, `pending` to the last launch any block was woken for). The host
 *    runs these launches in batches and reads `pending` once a batch: when
 *    no block waits for a launch not yet run, J is the fixpoint (inside each
 *    block every pair was checked against the ring as loaded, and a ring
 *    that changed afterwards woke the block again). A block neither woken
 *    nor in the first launch returns at once;
 * 2. what still can rise after the batches (a corridor crossing blocks more
 *    often than the launches allowed) is finished by queues: the seed kernel
 *    queues every pixel some neighbour can still raise, then one work-group
 *    runs waves (wsisa_recon_queue): each queued pixel takes the largest of
 *    its neighbours under its mask, and a pixel that rose queues the
 *    neighbours it can raise for the next wave, until a wave queues nothing.
 *    A pixel enters a wave's queue once (its stamp holds the last wave that
 *    queued it), so only the work-item it was handed to writes it in a wave.
 *    Queue lengths are read and reset by atomics, as they are counted: no
 *    cache of the compute unit can hold a stale one.
 * Matrices come as (buffer, byte offset, byte stride); `active` has an int
 * per block (raster order), `stamp` is dense width x height, `queue` two
 * dense halves of width x height (odd and even waves), `counts` the two
 * halves' lengths. */

#define AT(T, buf, off, stride, x, y) \
  (*(__global T *)((__global uchar *)(buf) + (off) + (size_t)(y) * (stride) + (size_t)(x) * sizeof(T)))
#define HI(a, b) ((a) > (b) ? (a) : (b))
#define LO(a, b) ((a) < (b) ? (a) : (b))
/* The largest J among the conn neighbours of (x, y), or J(x, y) itself. */
#define NEIGHBOURS_HI(T, x, y, v)                                                 \
  do {                                                                            \
    v = AT(T, J, j_off, j_stride, x, y);                                          \
    for (int dy_ = -1; dy_ <= 1; dy_++)                                           \
      for (int dx_ = -1; dx_ <= 1; dx_++) {                                       \
        int nx_ = (x) + dx_, ny_ = (y) + dy_;                                     \
        if ((conn == 4 && dx_ != 0 && dy_ != 0) || nx_ < 0 || ny_ < 0 ||          \
            nx_ >= width || ny_ >= height)                                        \
          continue;                                                               \
        v = HI(v, AT(T, J, j_off, j_stride, nx_, ny_));                           \
      }                                                                           \
  } while (0)

/* The blocks' side; the ring's pixels in local memory around the block's. */
#define TILE 64
#define LJ(lx, ly) lj[((ly) + 1) * (TILE + 2) + (lx) + 1]
#define LK(lx, ly) lk[(ly) * TILE + (lx)]
/* Raise local J(lx, ly) towards v as far as the mask allows, noting that
 * something moved. */
#define RAISE_L(T, lx, ly, v)                                   \
  do {                                                          \
    T j_ = LJ(lx, ly), v_ = (v);                                \
    if (v_ > j_) {                                              \
      T n_ = LO(v_, LK(lx, ly));                                \
      if (n_ > j_) {                                            \
        LJ(lx, ly) = n_;                                        \
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
  /* One work-group per TILE x TILE block whose entry in `active` is at least      \
   * `launch` (the file's comment, phase 1). */                                      \
  __kernel void wsisa_recon_block_##SUF(__global const T *mask, uint k_off,              \
                                        uint k_stride, __global T *J, uint j_off,        \
                                        uint j_stride, int conn, __global int *active,   \
                                        __global int *pending, int launch, int width,    \
                                        int height) {                                    \
    __local T lj[(TILE + 2) * (TILE + 2)], lk[TILE * TILE];                              \
    __local int changed, sides[4], run;                                                  \
    const int lid = get_local_id(0), items = get_local_size(0);                          \
    const int blocks_x = (width + TILE - 1) / TILE, b = get_group_id(0);                 \
    /* One read for the whole group: a neighbour may wake the block meanwhile,  \
     * and every work-item must leave or stay together. */                           \
    if (lid == 0) run = active[b] >= launch;                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    if (!run) return;                                                                    \
    const int x0 = b % blocks_x * TILE, y0 = b / blocks_x * TILE;                        \
    const int tw = LO(TILE, width - x0), th = LO(TILE, height - y0);                     \
    /* The block and the ring around it inside the image. */                            \
    for (int p = lid; p < (tw + 2) * (th + 2); p += items) {                             \
      int lx = p % (tw + 2) - 1, ly = p / (tw + 2) - 1, x = x0 + lx, y = y0 + ly;        \
      if (x < 0 || y < 0 || x >= width || y >= height) continue;                         \
      LJ(lx, ly) = AT(T, J, j_off, j_stride, x, y);                                      \
      if (lx >= 0 && ly >= 0 && lx < tw && ly < th)                                      \
        LK(lx, ly) = AT(T, mask, k_off, k_stride, x, y);                                 \
    }                                                                                    \
    if (lid < 4) sides[lid] = 0;                                                         \
    if (lid == 0) changed = 0;                                                           \
    /* The ring's pixels outside the image are never read: each step checks the      \
     * neighbour's image coordinates. */                                                 \
    const int left = x0 > 0, right = x0 + tw < width, top = y0 > 0;                      \
    const int bottom = y0 + th < height;                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    for (;;) {                                                                           \
      int moved = 0;                                                                     \
      for (int ly = lid; ly < th; ly += items)                                           \
        for (int pass = 0; pass < 2; pass++)                                             \
          for (int n = 0; n < tw; n++) {                                                 \
            int lx = pass ? tw - 1 - n : n, from = pass ? lx + 1 : lx - 1;               \
            if (from < 0 ? !left : from >= tw ? !right : 0) continue;                    \
            RAISE_L(T, lx, ly, LJ(from, ly));                                            \
          }                                                                              \
      barrier(CLK_LOCAL_MEM_FENCE);                                                      \
      for (int lx = lid; lx < tw; lx += items) {                                         \
        const int l = lx > 0 || left, r = lx + 1 < tw || right;                          \
        for (int pass = 0; pass < 2; pass++)                                             \
          for (int n = 0; n < th; n++) {                                                 \
            int ly = pass ? th - 1 - n : n, from = pass ? ly + 1 : ly - 1;               \
            if (from < 0 ? !top : from >= th ? !bottom : 0) continue;                    \
            T v = LJ(lx, from);                                                          \
            if (conn == 8) {                                                             \
              if (l) v = HI(v, LJ(lx - 1, from));                                        \
              if (r) v = HI(v, LJ(lx + 1, from));                                        \
            }                                                                            \
            RAISE_L(T, lx, ly, v);                                                       \
          }                                                                              \
      }                                                                                  \
      if (moved) changed = 1;                                                            \
      barrier(CLK_LOCAL_MEM_FENCE);                                                      \
      const int again = changed;                                                         \
      barrier(CLK_LOCAL_MEM_FENCE);                                                      \
      if (!again) break;                                                                 \
      if (lid == 0) changed = 0;                                                         \
    }                                                                                    \
    /* Back to J what rose; a side that rose wakes the blocks beyond it. */             \
    for (int p = lid; p < tw * th; p += items) {                                         \
      int lx = p % tw, ly = p / tw;                                                      \
      T v = LJ(lx, ly);                                                                  \
      if (!(v > AT(T, J, j_off, j_stride, x0 + lx, y0 + ly))) continue;                  \
      AT(T, J, j_off, j_stride, x0 + lx, y0 + ly) = v;                                   \
      if (lx == 0) sides[0] = 1;                                                         \
      if (lx == tw - 1) sides[1] = 1;                                                    \
      if (ly == 0) sides[2] = 1;                                                         \
      if (ly == th - 1) sides[3] = 1;                                                    \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    if (lid != 0) return;                                                                \
    for (int dy = -1; dy <= 1; dy++)                                                     \
      for (int dx = -1; dx <= 1; dx++) {                                                 \
        const int sx = dx < 0 ? sides[0] : dx > 0 ? sides[1] : 1;                        \
        const int sy = dy < 0 ? sides[2] : dy > 0 ? sides[3] : 1;                        \
        const int bx = b % blocks_x + dx, by = b / blocks_x + dy;                        \
        if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0) || !sx || !sy ||   \
            bx < 0 || by < 0 || bx >= blocks_x || by * TILE >= height)                   \
          continue;                                                                      \
        atomic_max(&active[by * blocks_x + bx], launch + 1);                             \
        atomic_max(pending, launch + 1);                                                 \
      }                                                                                  \
  }                                                                                      \
  /* Every pixel a neighbour can still raise into the queue of wave 1; every     \
   * other pixel's stamp to 0. */                                                        \
  __kernel void wsisa_recon_seed_##SUF(__global const T *mask, uint k_off, uint k_stride, \
                                       __global T *J, uint j_off, uint j_stride,         \
                                       int conn, __global int *stamp,                    \
                                       __global int *queue, __global int *counts,        \
                                       int width, int height) {                          \
    int x = get_global_id(0), y = get_global_id(1);                                      \
    if (x >= width || y >= height) return;                                               \
    T v, j = AT(T, J, j_off, j_stride, x, y);                                            \
    NEIGHBOURS_HI(T, x, y, v);                                                           \
    int i = y * width + x, rises = LO(v, AT(T, mask, k_off, k_stride, x, y)) > j;        \
    stamp[i] = rises;                                                                    \
    if (rises) queue[width * height + atomic_inc(&counts[1])] = i;                       \
  }                                                                                      \
  /* One work-group: the waves (the file's comment). */                                 \
  __kernel void wsisa_recon_queue_##SUF(__global const T *mask, uint k_off,              \
                                        uint k_stride, __global T *J, uint j_off,        \
                                        uint j_stride, int conn, __global int *stamp,    \
                                        __global int *queue, __global int *counts,       \
                                        int width, int height) {                         \
    __local int n;                                                                       \
    const int lid = get_local_id(0), items = get_local_size(0);                          \
    const size_t pixels = (size_t)width * height;                                        \
    for (int wave = 1;; wave++) {                                                        \
      if (lid == 0) n = atomic_or(&counts[wave & 1], 0);                                 \
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                               \
      const int len = n;                                                                 \
      if (len == 0) break;                                                               \
      __global const int *cur = queue + (wave & 1) * pixels;                             \
      __global int *next = queue + ((wave + 1) & 1) * pixels;                            \
      for (int k = lid; k < len; k += items) {                                           \
        int i = cur[k], x = i % width, y = i / width;                                    \
        T v, j = AT(T, J, j_off, j_stride, x, y);                                        \
        NEIGHBOURS_HI(T, x, y, v);                                                       \
        v = LO(v, AT(T, mask, k_off, k_stride, x, y));                                   \
        if (!(v > j)) continue;                                                          \
        AT(T, J, j_off, j_stride, x, y) = v;                                             \
        for (int dy = -1; dy <= 1; dy++)                                                 \
          for (int dx = -1; dx <= 1; dx++) {                                             \
            int nx = x + dx, ny = y + dy;                                                \
            if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0) || nx < 0 ||   \
                ny < 0 || nx >= width || ny >= height)                                   \
              continue;                                                                  \
            T r = AT(T, J, j_off, j_stride, nx, ny);                                     \
            if (!(LO(v, AT(T, mask, k_off, k_stride, nx, ny)) > r)) continue;            \
            int q = ny * width + nx;                                                     \
            if (atomic_xchg(&stamp[q], wave + 1) != wave + 1)                            \
              next[atomic_inc(&counts[(wave + 1) & 1])] = q;                             \
          }                                                                              \
      }                                                                                  \
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                               \
      if (lid == 0) atomic_xchg(&counts[wave & 1], 0);                                   \
    }                                                                                    \
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
