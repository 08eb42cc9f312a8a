/* Reinhard lαβ -> RGB of the foreground: the inverse matrices, ×255, clamp,
 * round half up (docs/workflow.md Normalization step 4; nscale's lab2BGR). */
#include <math.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* The three pow calls per foreground pixel take their argument from all
 * three lαβ floats, which within a tile come from the tile's colours (the
 * colour transfer maps each colour to one lαβ triple), so they repeat as
 * much. As in rgb2lab.c, a direct-mapped cache of the worker thread keyed by
 * the three floats' bits returns the bytes the computation below made for
 * those very bits: the output cannot change. */
#define CACHE_BITS 18
/* As in rgb2lab.c, the entry of the pixel this many to the right is
 * fetched ahead (the table is beyond the core's own caches). */
#define PREFETCH_AHEAD 16

typedef struct rgb_entry {
  uint32_t key[3];
  uint8_t rgb[3];
  uint8_t used;
} rgb_entry;

static void rgb_of(const float *src, const wsisa_reinhard *k, uint8_t *dst) {
  const double *n = k->lab2lms, *m = k->lms2rgb;
  const double l[3] = {src[0], src[1], src[2]};
  double lms[3];
  for (int i = 0; i < 3; i++) {
    lms[i] = pow(10.0, n[3 * i] * l[0] + n[3 * i + 1] * l[1] + n[3 * i + 2] * l[2]);
    if (!isfinite(lms[i])) lms[i] = 0.0; /* nscale: LMS(isnan|inf) = 0 */
  }
  for (int i = 0; i < 3; i++) {
    double c = (m[3 * i] * lms[0] + m[3 * i + 1] * lms[1] + m[3 * i + 2] * lms[2]) * 255.0;
    c = c > 0.0 ? (c < 255.0 ? c : 255.0) : 0.0; /* NaN goes to 0 too */
    /* Round half up (nscale's rndint): floor plus the exact fraction test,
     * not floor(c + 0.5), whose addition can round up below one half. */
    double f = floor(c);
    dst[i] = (uint8_t)(f + (c - f >= 0.5));
  }
}

static uint64_t hash_of(const uint32_t key[3]) {
  return (((uint64_t)key[0] * 0x9e3779b97f4a7c15u + key[1]) * 0xc2b2ae3d27d4eb4fu + key[2]) *
         0x165667b19e3779f9u;
}

int wsisa_cpu_lab2rgb(const wsisa_image *lab, const wsisa_image *mask,
                      const wsisa_image *rgb_in, wsisa_image *rgb_out) {
  if (!wsisa__image_is(lab, lab, 3, WSISA_F32) || !wsisa__image_is(mask, lab, 1, WSISA_U8) ||
      !wsisa__image_is(rgb_in, lab, 3, WSISA_U8) || !wsisa__image_is(rgb_out, lab, 3, WSISA_U8))
    return WSISA_EINTERNAL;
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  /* a new block is zeroed: every entry unused */
  rgb_entry *cache =
      wsisa__scratch(WSISA__SCRATCH_LAB2RGB, sizeof(rgb_entry) << CACHE_BITS);
  if (!cache) return WSISA_ENOMEM;
  for (int y = 0; y < lab->height; y++) {
    const float *src = wsisa_image_row(lab, y);
    const uint8_t *msk = wsisa_image_row(mask, y);
    uint8_t *dst = wsisa_image_row(rgb_out, y);
    memcpy(dst, wsisa_image_row(rgb_in, y), (size_t)lab->width * 3);
    for (int x = 0; x < lab->width; x++) {
      if (x + PREFETCH_AHEAD < lab->width && msk[x + PREFETCH_AHEAD]) {
        uint32_t ahead[3];
        memcpy(ahead, src + 3 * (x + PREFETCH_AHEAD), sizeof ahead);
        __builtin_prefetch(&cache[hash_of(ahead) >> (64 - CACHE_BITS)]);
      }
      if (!msk[x]) continue;
      uint32_t key[3];
      memcpy(key, src + 3 * x, sizeof key);
      rgb_entry *e = &cache[hash_of(key) >> (64 - CACHE_BITS)];
      /* the three words compared one by one (memcmp was a call per pixel) */
      if (!e->used || e->key[0] != key[0] || e->key[1] != key[1] || e->key[2] != key[2]) {
        rgb_of(src + 3 * x, &k, e->rgb);
        memcpy(e->key, key, sizeof key);
        e->used = 1;
      }
      memcpy(dst + 3 * x, e->rgb, 3);
    }
  }
  wsisa__scratch_trim();
  return 0;
}
