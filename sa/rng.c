/* xoshiro256** (Blackman & Vigna 2018) seeded through splitmix64: small, fast,
 * and identical on every platform, so a seed names a design for good. */
#include "sa/sa.h"

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void wsisa_sa_rng_seed(wsisa_sa_rng *rng, uint64_t seed, uint64_t stream) {
  /* Mix the stream in through a second splitmix step so nearby (seed, stream)
   * pairs give unrelated states. */
  uint64_t st = seed;
  uint64_t base = splitmix64(&st);
  st = base ^ (stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL);
  for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&st);
}

uint64_t wsisa_sa_rng_next(wsisa_sa_rng *rng) {
  uint64_t *s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double wsisa_sa_rng_uniform(wsisa_sa_rng *rng) {
  return (double)(wsisa_sa_rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t wsisa_sa_rng_below(wsisa_sa_rng *rng, uint64_t n) {
  /* Rejection of the short tail keeps every residue equally likely. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = wsisa_sa_rng_next(rng);
  while (x >= limit);
  return x % n;
}
