/* Object matching sums (codelets/cpu/object_match.c has the definitions): a
 * scan for the label ranges, per-object areas and a table of (reference, run)
 * label pairs with their overlaps built with atomics; per pair, the best
 * Dice partner of each object by one 64-bit atomic max, the smallest IoU >=
 * 0.5 candidate by an atomic max of the complemented label, and each
 * reference object's best IoU partner by a compare-and-swap loop under a
 * total order (IoU exactly, then the label): all the same in any order. Then
 * per object the terms, added as integers (any order, same sum); the Dice
 * terms in double exactly as on the CPU. Needs fp64 and 64-bit atomics;
 * without them the program is empty and the codelet keeps off this device. */
#pragma OPENCL FP_CONTRACT OFF
#if defined(cl_khr_fp64) && defined(cl_khr_int64_base_atomics) && \
    defined(cl_khr_int64_extended_atomics)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define LABEL(base, off, stride, x, y) \
  (((__global const int *)((base) + (off) + (y) * (stride)))[x])

/* The output's fields, in the order of wsisa_match_field (codelets/cpu/cpu.h). */
enum {
  DICE_REF, DICE_RUN, AREA_REF, AREA_RUN, TP, FP, FN, AJI_INTER, AJI_UNION, AJI_UNUSED, FIELDS
};

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

/* Is overlap o1 with union u1 a larger IoU than o2 with u2 (exactly)? */
static int iou_above(ulong o1, ulong u1, ulong o2, ulong u2) {
  ulong hi1 = mul_hi(o1, u2), hi2 = mul_hi(o2, u1);
  return hi1 > hi2 || (hi1 == hi2 && o1 * u2 > o2 * u1);
}

/* Slot h's IoU beats slot k's for the same reference object g, or ties with
 * a smaller run label. */
static int partner_above(__global const ulong *keys, __global const uint *count,
                         __global const uint *area_g, __global const uint *area_s, uint g,
                         uint h, uint k) {
  uint sh = (uint)keys[h], sk = (uint)keys[k];
  ulong oh = count[h], ok = count[k];
  ulong uh = (ulong)area_g[g] + area_s[sh] - oh, uk = (ulong)area_g[g] + area_s[sk] - ok;
  if (iou_above(oh, uh, ok, uk)) return 1;
  return !iou_above(ok, uk, oh, uh) && sh < sk;
}

__kernel void wsisa_object_match_best(__global const ulong *keys, __global const uint *count,
                                      __global const uint *area_g,
                                      __global const uint *area_s, __global ulong *best_g,
                                      __global ulong *best_s, __global uint *cand_g,
                                      __global uint *cand_s, __global uint *partner,
                                      ulong cap) {
  ulong h = get_global_id(0);
  if (h >= cap || keys[h] == 0) return;
  uint a = (uint)(keys[h] >> 32), b = (uint)keys[h];
  atom_max(&best_g[a], (ulong)count[h] << 32 | (0xFFFFFFFFu - b));
  atom_max(&best_s[b], (ulong)count[h] << 32 | (0xFFFFFFFFu - a));
  if (3 * (ulong)count[h] >= (ulong)area_g[a] + area_s[b]) {
    atomic_max(&cand_g[a], ~b);
    atomic_max(&cand_s[b], ~a);
  }
  uint mine = (uint)h + 1, old = partner[a];
  while (old == 0 || partner_above(keys, count, area_g, area_s, a, (uint)h, old - 1)) {
    uint seen = atomic_cmpxchg(&partner[a], old, mine);
    if (seen == old) break;
    old = seen;
  }
}

static ulong term(ulong area, ulong overlap, ulong other) {
  double x = (double)area * (double)(2 * overlap) / (double)(area + other);
  return convert_ulong_rte(x * 1048576.0);
}

/* The reference objects' terms; marks the run objects taken as partners. */
__kernel void wsisa_object_match_ref_terms(__global const ulong *keys,
                                           __global const uint *count,
                                           __global const uint *area_g,
                                           __global const uint *area_s,
                                           __global const ulong *best_g,
                                           __global const uint *cand_g,
                                           __global const uint *cand_s,
                                           __global const uint *partner,
                                           __global uint *taken, int ng,
                                           __global ulong *sums) {
  int g = get_global_id(0) + 1;
  if (g > ng || !area_g[g]) return;
  atom_add(&sums[AREA_REF], (ulong)area_g[g]);
  if (best_g[g])
    atom_add(&sums[DICE_REF], term(area_g[g], best_g[g] >> 32, area_s[0xFFFFFFFFu - (uint)best_g[g]]));
  uint c = cand_g[g];
  atom_add(&sums[c && cand_s[~c] == ~(uint)g ? TP : FN], 1UL);
  if (partner[g]) {
    uint h = partner[g] - 1, s = (uint)keys[h];
    atom_add(&sums[AJI_INTER], (ulong)count[h]);
    atom_add(&sums[AJI_UNION], (ulong)area_g[g] + area_s[s] - count[h]);
    taken[s] = 1;
  } else {
    atom_add(&sums[AJI_UNION], (ulong)area_g[g]);
  }
}

__kernel void wsisa_object_match_run_terms(__global const uint *area_g,
                                           __global const uint *area_s,
                                           __global const ulong *best_s,
                                           __global const uint *cand_g,
                                           __global const uint *cand_s,
                                           __global const uint *taken, int ns,
                                           __global ulong *sums) {
  int s = get_global_id(0) + 1;
  if (s > ns || !area_s[s]) return;
  atom_add(&sums[AREA_RUN], (ulong)area_s[s]);
  if (best_s[s])
    atom_add(&sums[DICE_RUN], term(area_s[s], best_s[s] >> 32, area_g[0xFFFFFFFFu - (uint)best_s[s]]));
  uint c = cand_s[s];
  if (!(c && cand_g[~c] == ~(uint)s)) atom_add(&sums[FP], 1UL);
  if (!taken[s]) atom_add(&sums[AJI_UNUSED], (ulong)area_s[s]);
}
#endif
