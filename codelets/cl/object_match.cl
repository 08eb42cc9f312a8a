/* Object Dice sums (codelets/cpu/object_match.c has the definition): a scan
 * for the label ranges, per-object areas and a table of (reference, run)
 * label pairs with their overlaps built with atomics, the best partner of
 * each object by one 64-bit atomic max, then the per-object terms computed
 * in double exactly as on the CPU and added as integers (any order, same sum).
 * Needs fp64 and 64-bit atomics; without them the program is empty and the
 * codelet keeps off this device. */
#pragma OPENCL FP_CONTRACT OFF
#if defined(cl_khr_fp64) && defined(cl_khr_int64_base_atomics) && \
    defined(cl_khr_int64_extended_atomics)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define LABEL(base, off, stride, x, y) \
  (((__global const int *)((base) + (off) + (y) * (stride)))[x])

/* st: largest reference label, largest run label, pixels in both */
__kernel void wsisa_object_match_scan(__global const uchar *g, uint g_off, uint g_stride,
                                      __global const uchar *s, uint s_off, uint s_stride,
                                      __global int *st, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int a = LABEL(g, g_off, g_stride, x, y), b = LABEL(s, s_off, s_stride, x, y);
  if (a > 0) atomic_max(&st[0], a);
  if (b > 0) atomic_max(&st[1], b);
  if (a > 0 && b > 0) atomic_inc(&st[2]);
}

__kernel void wsisa_object_match_pairs(__global const uchar *g, uint g_off, uint g_stride,
                                       __global const uchar *s, uint s_off, uint s_stride,
                                       __global uint *area_g, __global uint *area_s,
                                       __global ulong *keys, __global uint *count,
                                       ulong mask, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int a = LABEL(g, g_off, g_stride, x, y), b = LABEL(s, s_off, s_stride, x, y);
  if (a > 0) atomic_inc(&area_g[a]);
  if (b > 0) atomic_inc(&area_s[b]);
  if (a <= 0 || b <= 0) return;
  ulong key = (ulong)(uint)a << 32 | (uint)b;
  ulong h = ((key * 0x9E3779B97F4A7C15UL) >> 32) & mask;
  for (;;) {
    ulong old = atom_cmpxchg(&keys[h], 0UL, key);
    if (old == 0 || old == key) break;
    h = (h + 1) & mask;
  }
  atomic_inc(&count[h]);
}

__kernel void wsisa_object_match_best(__global const ulong *keys, __global const uint *count,
                                      __global ulong *best_g, __global ulong *best_s,
                                      ulong cap) {
  ulong h = get_global_id(0);
  if (h >= cap || keys[h] == 0) return;
  uint a = (uint)(keys[h] >> 32), b = (uint)keys[h];
  atom_max(&best_g[a], (ulong)count[h] << 32 | (0xFFFFFFFFu - b));
  atom_max(&best_s[b], (ulong)count[h] << 32 | (0xFFFFFFFFu - a));
}

static ulong term(ulong area, ulong overlap, ulong other) {
  double x = (double)area * (double)(2 * overlap) / (double)(area + other);
  return convert_ulong_rte(x * 1048576.0);
}

__kernel void wsisa_object_match_terms(__global const uint *area_g, __global const uint *area_s,
                                       __global const ulong *best_g,
                                       __global const ulong *best_s, int ng, int ns,
                                       __global ulong *sums) {
  int i = get_global_id(0) + 1;
  if (i <= ng && best_g[i])
    atom_add(&sums[0], term(area_g[i], best_g[i] >> 32, area_s[0xFFFFFFFFu - (uint)best_g[i]]));
  if (i <= ns && best_s[i])
    atom_add(&sums[1], term(area_s[i], best_s[i] >> 32, area_g[0xFFFFFFFFu - (uint)best_s[i]]));
}
#endif
