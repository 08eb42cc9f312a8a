/* RGB -> Reinhard lαβ (not CIELAB): RGB/255 -> LMS -> log10 -> lαβ (docs/workflow.md
 * Normalization step 2; Reinhard et al. 2001 §2). */
#include <math.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* The three log10 calls per pixel were most of the normalization's time, but
 * their argument mixes all three channels, so no 256-entry table per channel
 * can stand in for them. A tissue tile repeats its colours (a 4096² tile of
 * the sample has about 690 000 distinct ones among 16.8 million pixels), so
 * the lαβ of a colour is kept in a direct-mapped cache of the worker thread,
 * keyed by the whole colour: a hit returns the very floats the computation
 * below made for that colour, so the output bits cannot change. The cache
 * stays valid across calls: the transform's constants are fixed. */
#define CACHE_BITS 18
/* key: the colour with bit 24 set, so a zeroed (new) entry matches none */
#define KEY_USED (1u << 24)
/* The 4 MiB table lives beyond the core's own caches, and nearly all the
 * time was the wait for each pixel's entry: the entry of the pixel this
 * many to the right is fetched ahead. */
#define PREFETCH_AHEAD 16

typedef struct lab_entry {
  uint32_t key;
  float lab[3];
} lab_entry;

/* Double throughout, one rounding to float at the end: the OpenCL kernel
 * repeats these operations in this order (no contraction on either side). */
static void lab_of(const uint8_t *src, const wsisa_reinhard *k, float *dst) {
  const double *m = k->rgb2lms, *n = k->lms2lab;
  const double r = src[0] / 255.0, g = src[1] / 255.0, b = src[2] / 255.0;
  double lg[3];
  for (int i = 0; i < 3; i++) {
    double lms = m[3 * i] * r + m[3 * i + 1] * g + m[3 * i + 2] * b;
    lg[i] = log10(lms > k->lms_floor ? lms : k->lms_floor);
  }
  for (int i = 0; i < 3; i++)
    dst[i] = (float)(n[3 * i] * lg[0] + n[3 * i + 1] * lg[1] + n[3 * i + 2] * lg[2]);
}

static uint32_t key_of(const uint8_t *src) {
  return KEY_USED | (uint32_t)src[0] << 16 | (uint32_t)src[1] << 8 | src[2];
}

static uint32_t slot_of(uint32_t key) { return (key * 2654435761u) >> (32 - CACHE_BITS); }

int wsisa_cpu_rgb2lab(const wsisa_image *rgb, wsisa_image *lab) {
  if (!wsisa__image_is(rgb, rgb, 3, WSISA_U8) || !wsisa__image_is(lab, rgb, 3, WSISA_F32))
    return WSISA_EINTERNAL;
  wsisa_reinhard k;
  wsisa_cpu_reinhard(&k);
  lab_entry *cache =
      wsisa__scratch(WSISA__SCRATCH_RGB2LAB, sizeof(lab_entry) << CACHE_BITS);
  if (!cache) return WSISA_ENOMEM;
  for (int y = 0; y < rgb->height; y++) {
    const uint8_t *src = wsisa_image_row(rgb, y);
    float *dst = wsisa_image_row(lab, y);
    for (int x = 0; x < rgb->width; x++, src += 3, dst += 3) {
      if (x + PREFETCH_AHEAD < rgb->width)
        __builtin_prefetch(&cache[slot_of(key_of(src + 3 * PREFETCH_AHEAD))]);
      const uint32_t key = key_of(src);
      lab_entry *e = &cache[slot_of(key)];
      if (e->key != key) {
        lab_of(src, &k, e->lab);
        e->key = key;
      }
      memcpy(dst, e->lab, sizeof e->lab);
    }
  }
  wsisa__scratch_trim();
  return 0;
}
