/* Object-level Dice of a segmentation against the reference (Sirinukunwattana
 * et al., the GlaS challenge's object Dice), as two per-tile sums:
 *   sums[0] = Σ_G |G| · Dice(G, S*(G)),  sums[1] = Σ_S |S| · Dice(G*(S), S)
 * over the reference objects G and the run's objects S, where S*(G) is the run
 * object overlapping G most (ties: the smallest label; none: Dice 0) and G*(S)
 * likewise. Summed over tiles and divided by Σ|G| and Σ|S| they give the two
 * halves of the object Dice. Each term is computed in double in one fixed
 * order (|G| · 2o, then / (|G| + |S*|), both exact or correctly rounded) and
 * rounded to the WSISA_OBJECT_MATCH_ONE grid, so sums of integers are the
 * same in any order and on every worker (codelets/cl/object_match.cl). */
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

int wsisa_cpu_object_match(const wsisa_image *ref, const wsisa_image *run, uint64_t sums[2]) {
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
  size_t cap = 2;
  while (cap < 2 * nboth) cap *= 2;
  uint64_t *area_g = calloc((size_t)ng + 1, sizeof *area_g);
  uint64_t *area_s = calloc((size_t)ns + 1, sizeof *area_s);
  uint64_t *best_g = calloc((size_t)ng + 1, sizeof *best_g);
  uint64_t *best_s = calloc((size_t)ns + 1, sizeof *best_s);
  uint64_t *keys = calloc(cap, sizeof *keys);
  uint32_t *count = calloc(cap, sizeof *count);
  int rc = 0;
  if (!area_g || !area_s || !best_g || !best_s || !keys || !count) {
    rc = WSISA_ENOMEM;
    goto done;
  }
  for (int y = 0; y < ref->height; y++) {
    const int32_t *g = wsisa_image_row(ref, y), *s = wsisa_image_row(run, y);
    for (int x = 0; x < ref->width; x++) {
      if (g[x] > 0) area_g[g[x]]++;
      if (s[x] > 0) area_s[s[x]]++;
      if (g[x] <= 0 || s[x] <= 0) continue;
      uint64_t key = pair_key(g[x], s[x]);
      size_t h = pair_slot(key, cap - 1);
      while (keys[h] && keys[h] != key) h = (h + 1) & (cap - 1);
      keys[h] = key;
      count[h]++;
    }
  }
  /* best partner: most overlap, then the smallest label (packed so that one
   * max picks it: overlap high, complemented label low) */
  for (size_t h = 0; h < cap; h++) {
    if (!keys[h]) continue;
    uint32_t g = (uint32_t)(keys[h] >> 32), s = (uint32_t)keys[h];
    uint64_t for_g = (uint64_t)count[h] << 32 | (UINT32_MAX - s);
    uint64_t for_s = (uint64_t)count[h] << 32 | (UINT32_MAX - g);
    if (for_g > best_g[g]) best_g[g] = for_g;
    if (for_s > best_s[s]) best_s[s] = for_s;
  }
  sums[0] = sums[1] = 0;
  for (int32_t g = 1; g <= ng; g++)
    if (best_g[g])
      sums[0] += wsisa_object_match_term(area_g[g], best_g[g] >> 32,
                                         area_s[UINT32_MAX - (uint32_t)best_g[g]]);
  for (int32_t s = 1; s <= ns; s++)
    if (best_s[s])
      sums[1] += wsisa_object_match_term(area_s[s], best_s[s] >> 32,
                                         area_g[UINT32_MAX - (uint32_t)best_s[s]]);
done:
  free(area_g);
  free(area_s);
  free(best_g);
  free(best_s);
  free(keys);
  free(count);
  return rc;
}
