/* Task keys from parameter values: a level's key hashes the exact bits of its
 * own parameter values, so equal values (and only those, up to 64-bit hash
 * collisions) mean the same task. */
#include <math.h>
#include <string.h>

#include "reuse/reuse_private.h"

static uint64_t value_bits(double x) {
  if (x == 0) x = 0.0;          /* -0.0 and 0.0 compute the same thing */
  if (isnan(x)) return 0x7ff8000000000000ULL;
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

static uint64_t absorb(uint64_t h, double x) {
  return wsisa__mix64(h ^ value_bits(x)) + 0x2545f4914f6cdd1dULL;
}

#define KEY_SEED 0x6a09e667f3bcc909ULL

uint64_t wsisa_reuse_key_hash(const double *values, size_t count) {
  uint64_t h = KEY_SEED;
  for (size_t i = 0; i < count; i++) h = absorb(h, values[i]);
  return wsisa__mix64(h ^ count);
}

int wsisa_reuse_keys_from_values(const double *values, size_t n, size_t nparams,
                                 const size_t *param_level, size_t k, uint64_t *keys) {
  if (k == 0) return WSISA_EUSAGE;
  for (size_t p = 0; p < nparams; p++)
    if (param_level[p] >= k) return WSISA_EUSAGE;
  /* Same absorption order as wsisa_reuse_key_hash over the level's values, so
   * a caller hashing one level's values by hand gets the same key; the
   * per-level value count is folded in last, as there. */
  for (size_t i = 0; i < n; i++) {
    uint64_t *row = keys + i * k;
    for (size_t l = 0; l < k; l++) row[l] = KEY_SEED;
    for (size_t p = 0; p < nparams; p++)
      row[param_level[p]] = absorb(row[param_level[p]], values[i * nparams + p]);
    for (size_t l = 0; l < k; l++) {
      uint64_t count = 0;
      for (size_t p = 0; p < nparams; p++) count += param_level[p] == l;
      row[l] = wsisa__mix64(row[l] ^ count);
    }
  }
  return 0;
}
