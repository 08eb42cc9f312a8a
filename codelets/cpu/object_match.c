/* Object-level metrics of a segmentation against the reference, as per-tile
 * integer sums (the fields of wsisa_match_field, codelets/cpu/cpu.h) that add
 * up over tiles, in any order, to the slide's:
 * - object Dice (Sirinukunwattana et al., the GlaS challenge's):
 *   Σ_G |G| · Dice(G, S*(G)) and Σ_S |S| · Dice(G*(S), S) over the reference
 *   objects G and the run's objects S, where S*(G) is the run object
 *   overlapping G most (ties: the smallest label; none: Dice 0) and G*(S)
 *   likewise, with Σ|G| and Σ|S| to divide them by. Each term is computed in
 *   double in one fixed order (|G| · 2o, then / (|G| + |S*|), both exact or
 *   correctly rounded) and rounded to the WSISA_OBJECT_MATCH_ONE grid;
 * - detection F1 at IoU >= 0.5, with precision and recall: TP, FP, FN. A pair
 *   (G, S) is a candidate when IoU(G, S) >= 0.5, tested exactly as
 *   3 |G ∩ S| >= |G| + |S|. As two run objects are disjoint, G has two
 *   candidates only when they are halves of G covering it exactly (and S
 *   likewise); then each object takes its candidate of smallest label and a
 *   pair is a match when each took the other: one to one, and a largest
 *   matching. TP = matches, FN = reference objects, FP = run objects in none;
 * - the Aggregated Jaccard Index (Kumar et al. 2017, IEEE TMI 36(7)): for each
 *   reference object G, its partner S+(G) is the run object of largest IoU
 *   (ties: the smallest label; IoUs compared exactly, i1 · u2 against
 *   i2 · u1 in 128 bits); Σ_G |G ∩ S+(G)|, Σ_G |G ∪ S+(G)| (|G| for a G that
 *   overlaps nothing), and the area of the run objects no G took as S+.
 *   AJI = intersections / (unions + that area).
 * Objects are the labels > 0 of canonical i32 label images; a label with no
 * pixel is no object. codelets/cl/object_match.cl computes the same sums. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* The pair (g, s) as one 64-bit key, 0 meaning an empty slot. */
static uint64_t pair_key(int32_t g, int32_t s) { return (uint64_t)(uint32_t)g << 32 | (uint32_t)s; }

static size_t pair_slot(uint64_t key, size_t mask) {
  /* a 64-bit multiplicative mix; the device kernel uses the same one */
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

uint64_t wsisa_object_match_term(uint64_t area, uint64_t overlap, uint64_t other_area) {
  double x = (double)area * (double)(2 * overlap) / (double)(area + other_area);
  return (uint64_t)llrint(x * (double)WSISA_OBJECT_MATCH_ONE);
}

/* The high 64 bits of a · b (OpenCL's mul_hi). */
static uint64_t mul_hi(uint64_t a, uint64_t b) {
  const uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
  const uint64_t mid = (a0 * b0 >> 32) + (uint32_t)(a1 * b0) + (uint32_t)(a0 * b1);
  return a1 * b1 + (a1 * b0 >> 32) + (a0 * b1 >> 32) + (mid >> 32);
}

/* Is overlap o1 with union u1 a larger IoU than o2 with u2? */
static int iou_above(uint64_t o1, uint64_t u1, uint64_t o2, uint64_t u2) {
  const uint64_t hi1 = mul_hi(o1, u2), hi2 = mul_hi(o2, u1);
  return hi1 > hi2 || (hi1 == hi2 && o1 * u2 > o2 * u1);
}

typedef struct pair_table {
  uint64_t *keys;
  uint32_t *count;
  size_t cap;
  uint64_t *area_g, *area_s;
} pair_table;

/* Slot h's IoU beats slot k's for the same reference object, or ties with a
 * smaller run label. */
static int partner_above(const pair_table *t, size_t h, size_t k) {
  const uint32_t g = (uint32_t)(t->keys[h] >> 32), sh = (uint32_t)t->keys[h],
                 sk = (uint32_t)t->keys[k];
  const uint64_t oh = t->count[h], ok = t->count[k];
  const uint64_t uh = t->area_g[g] + t->area_s[sh] - oh, uk = t->area_g[g] + t->area_s[sk] - ok;
  if (iou_above(oh, uh, ok, uk)) return 1;
  return !iou_above(ok, uk, oh, uh) && sh < sk;
}

int wsisa_cpu_object_match(const wsisa_image *ref, const wsisa_image *run,
                           uint64_t sums[WSISA_MATCH_FIELDS]) {
  if (!wsisa__image_is(ref, ref, 1, WSISA_I32) || !wsisa__image_is(run, ref, 1, WSISA_I32))
    return WSISA_EINTERNAL;
  int32_t ng = 0, ns = 0;
  size_t nboth = 0;
  for (int y = 0; y < ref->height; y++) {
    const int32_t *g = wsisa_image_row(ref, y), *s = wsisa_image_row(run, y);
    for (int x = 0; x < ref->width; x++) {
      ng = g[x] > ng ? g[x] : ng;
      ns = s[x] > ns ? s[x] : ns;
      nboth += g[x] > 0 && s[x] > 0;
    }
  }
  pair_table t = {NULL, NULL, 2, NULL, NULL};
  while (t.cap < 2 * nboth) t.cap *= 2;
  t.area_g = calloc((size_t)ng + 1, sizeof *t.area_g);
  t.area_s = calloc((size_t)ns + 1, sizeof *t.area_s);
  t.keys = calloc(t.cap, sizeof *t.keys);
  t.count = calloc(t.cap, sizeof *t.count);
  /* per object: best Dice partner (overlap high, complemented label low),
   * smallest IoU >= 0.5 candidate (complemented: 0 is none), best IoU
   * partner (its slot + 1), whether some G took it as S+ */
  uint64_t *best_g = calloc((size_t)ng + 1, sizeof *best_g);
  uint64_t *best_s = calloc((size_t)ns + 1, sizeof *best_s);
  uint32_t *cand_g = calloc((size_t)ng + 1, sizeof *cand_g);
  uint32_t *cand_s = calloc((size_t)ns + 1, sizeof *cand_s);
  size_t *partner = calloc((size_t)ng + 1, sizeof *partner);
  uint8_t *taken = calloc((size_t)ns + 1, 1);
  int rc = 0;
  if (!t.area_g || !t.area_s || !t.keys || !t.count || !best_g || !best_s || !cand_g ||
      !cand_s || !partner || !taken) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  for (int y = 0; y < ref->height; y++) {
    const int32_t *g = wsisa_image_row(ref, y), *s = wsisa_image_row(run, y);
    for (int x = 0; x < ref->width; x++) {
      if (g[x] > 0) t.area_g[g[x]]++;
      if (s[x] > 0) t.area_s[s[x]]++;
      if (g[x] <= 0 || s[x] <= 0) continue;
      uint64_t key = pair_key(g[x], s[x]);
      size_t h = pair_slot(key, t.cap - 1);
      while (t.keys[h] && t.keys[h] != key) h = (h + 1) & (t.cap - 1);
      t.keys[h] = key;
      t.count[h]++;
    }
  }
  for (size_t h = 0; h < t.cap; h++) {
    if (!t.keys[h]) continue;
    uint32_t g = (uint32_t)(t.keys[h] >> 32), s = (uint32_t)t.keys[h];
    uint64_t for_g = (uint64_t)t.count[h] << 32 | (UINT32_MAX - s);
    uint64_t for_s = (uint64_t)t.count[h] << 32 | (UINT32_MAX - g);
    if (for_g > best_g[g]) best_g[g] = for_g;
    if (for_s > best_s[s]) best_s[s] = for_s;
    if (3 * (uint64_t)t.count[h] >= t.area_g[g] + t.area_s[s]) {
      if (~s > cand_g[g]) cand_g[g] = ~s;
      if (~g > cand_s[s]) cand_s[s] = ~g;
    }
    if (!partner[g] || partner_above(&t, h, partner[g] - 1)) partner[g] = h + 1;
  }
  memset(sums, 0, WSISA_MATCH_FIELDS * sizeof *sums);
  for (int32_t g = 1; g <= ng; g++) {
    if (!t.area_g[g]) continue;
    sums[WSISA_MATCH_AREA_REF] += t.area_g[g];
    if (best_g[g])
      sums[WSISA_MATCH_DICE_REF] += wsisa_object_match_term(
          t.area_g[g], best_g[g] >> 32, t.area_s[UINT32_MAX - (uint32_t)best_g[g]]);
    const uint32_t c = cand_g[g];
    if (c && cand_s[~c] == ~(uint32_t)g) sums[WSISA_MATCH_TP]++;
    else sums[WSISA_MATCH_FN]++;
    if (partner[g]) {
      const size_t h = partner[g] - 1;
      const uint32_t s = (uint32_t)t.keys[h];
      sums[WSISA_MATCH_AJI_INTER] += t.count[h];
      sums[WSISA_MATCH_AJI_UNION] += t.area_g[g] + t.area_s[s] - t.count[h];
      taken[s] = 1;
    } else {
      sums[WSISA_MATCH_AJI_UNION] += t.area_g[g];
    }
  }
  for (int32_t s = 1; s <= ns; s++) {
    if (!t.area_s[s]) continue;
    sums[WSISA_MATCH_AREA_RUN] += t.area_s[s];
    if (best_s[s])
      sums[WSISA_MATCH_DICE_RUN] += wsisa_object_match_term(
          t.area_s[s], best_s[s] >> 32, t.area_g[UINT32_MAX - (uint32_t)best_s[s]]);
    const uint32_t c = cand_s[s];
    if (!(c && cand_g[~c] == ~(uint32_t)s)) sums[WSISA_MATCH_FP]++;
    if (!taken[s]) sums[WSISA_MATCH_AJI_UNUSED] += t.area_s[s];
  }
done:
  free(t.area_g);
  free(t.area_s);
  free(t.keys);
  free(t.count);
  free(best_g);
  free(best_s);
  free(cand_g);
  free(cand_s);
  free(partner);
  free(taken);
  return rc;
}

void wsisa_object_metrics_of(const uint64_t sums[WSISA_MATCH_FIELDS], wsisa_object_metrics *m) {
  const double one = WSISA_OBJECT_MATCH_ONE;
  const uint64_t *v = sums;
  const double ref_area = (double)v[WSISA_MATCH_AREA_REF], run_area = (double)v[WSISA_MATCH_AREA_RUN];
  const double tp = (double)v[WSISA_MATCH_TP], fp = (double)v[WSISA_MATCH_FP],
               fn = (double)v[WSISA_MATCH_FN];
  const double aji_den = (double)v[WSISA_MATCH_AJI_UNION] + (double)v[WSISA_MATCH_AJI_UNUSED];
  /* an empty side scores as a perfect match of nothing only against
   * nothing: 1 when both are empty, 0 when one is */
  const int nothing = ref_area == 0 && run_area == 0;
  m->object_dice = nothing ? 1.0
                           : 0.5 * ((ref_area > 0 ? (double)v[WSISA_MATCH_DICE_REF] / one / ref_area : 0) +
                                    (run_area > 0 ? (double)v[WSISA_MATCH_DICE_RUN] / one / run_area : 0));
  m->precision = tp + fp > 0 ? tp / (tp + fp) : (nothing ? 1.0 : 0.0);
  m->recall = tp + fn > 0 ? tp / (tp + fn) : (nothing ? 1.0 : 0.0);
  m->f1 = 2 * tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 1.0;
  m->aji = aji_den > 0 ? (double)v[WSISA_MATCH_AJI_INTER] / aji_den : 1.0;
}
