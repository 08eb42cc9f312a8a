/* Samplers of the unit cube: Monte Carlo, Latin hypercube, Halton, Hammersley
 * and Sobol' (seed 000 §3 lists the first four; Sobol' drives VBD designs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"
#include "sa/sobol_table.h"

static const char *const sampler_names[WSISA_SA_NSAMPLERS] = {
    "mc", "lhs", "halton", "hammersley", "sobol", "sobol_owen"};

const char *wsisa_sa_sampler_name(wsisa_sa_sampler sampler) {
  return (unsigned)sampler < WSISA_SA_NSAMPLERS ? sampler_names[sampler] : "?";
}

int wsisa_sa_sampler_from_name(const char *name) {
  for (int i = 0; i < WSISA_SA_NSAMPLERS; i++)
    if (strcmp(name, sampler_names[i]) == 0) return i;
  return -1;
}

/* ---- Halton and Hammersley (Halton 1964) ------------------------------------ */

double wsisa_sa_radical_inverse(uint64_t index, unsigned base) {
  /* Mirror the digits into an integer over base^m so the common case is one
   * correctly rounded division; digits beyond 2^53 only add tiny terms. */
  uint64_t num = 0, den = 1;
  while (index && den <= (UINT64_C(1) << 53) / base) {
    num = num * base + index % base;
    den *= base;
    index /= base;
  }
  double r = (double)num / (double)den;
  double scale = 1.0 / (double)den;
  while (index) {
    scale /= base;
    r += (double)(index % base) * scale;
    index /= base;
  }
  return r;
}

static int is_prime(unsigned n) {
  if (n < 2) return 0;
  for (unsigned q = 2; q * q <= n; q++)
    if (n % q == 0) return 0;
  return 1;
}

/* First d primes into `out`. */
static void primes(size_t d, unsigned *out) {
  unsigned n = 1;
  for (size_t i = 0; i < d; i++) {
    do n++;
    while (!is_prime(n));
    out[i] = n;
  }
}

unsigned wsisa_sa_prime(size_t d) {
  unsigned n = 1;
  for (size_t i = 0; i <= d; i++) {
    do n++;
    while (!is_prime(n));
  }
  return n;
}

static int halton(size_t n, size_t d, int hammersley, double *out, wsisa_err *e) {
  unsigned *bases = wsisa__sa_calloc(d, sizeof *bases, e);
  if (!bases) return WSISA_ENOMEM;
  size_t first = hammersley ? 1 : 0;
  primes(d, bases);
  for (size_t j = 0; j < n; j++) {
    double *row = out + j * d;
    if (hammersley && d > 0) row[0] = ((double)j + 0.5) / (double)n;
    for (size_t i = first; i < d; i++)
      row[i] = wsisa_sa_radical_inverse((uint64_t)j + 1, bases[i - first]);
  }
  free(bases);
  return 0;
}

/* ---- Sobol' (Sobol' 1967; Joe & Kuo 2008; Antonov & Saleev 1979) --------------- */

size_t wsisa_sa_sobol_max_dims(void) { return WSISA__SOBOL_ROWS + 1; }

/* Direction numbers v_1..v_32 of dimension `dim` (0-based), scaled to 32 bits. */
static void sobol_directions(size_t dim, uint32_t v[32]) {
  uint32_t m[33];
  if (dim == 0) {
    for (int k = 1; k <= 32; k++) m[k] = 1;
  } else {
    const wsisa__sobol_row *row = &wsisa__sobol_rows[dim - 1];
    int s = row->s;
    for (int k = 1; k <= s && k <= 32; k++) m[k] = row->m[k - 1];
    /* m_k = 2 a_1 m_{k-1} ^ 4 a_2 m_{k-2} ^ ... ^ 2^s m_{k-s} ^ m_{k-s} */
    for (int k = s + 1; k <= 32; k++) {
      uint32_t x = m[k - s] ^ (m[k - s] << s);
      for (int j = 1; j < s; j++)
        if ((row->a >> (s - 1 - j)) & 1u) x ^= m[k - j] << j;
      m[k] = x;
    }
  }
  for (int k = 1; k <= 32; k++) v[k - 1] = m[k] << (32 - k);
}

int wsisa_sa_sobol_points(uint64_t first, size_t n, size_t d, double *out, wsisa_err *e) {
  if (d > wsisa_sa_sobol_max_dims())
    return wsisa_error(e, WSISA_EUSAGE,
                       "the Sobol' sampler covers %zu dimensions; this design needs %zu",
                       wsisa_sa_sobol_max_dims(), d);
  if (first > UINT32_MAX || n > UINT32_MAX - first + 1)
    return wsisa_error(e, WSISA_EUSAGE, "the Sobol' sampler gives at most 2^32 - 1 points");
  if (n == 0 || d == 0) return 0;
  uint32_t(*v)[32] = wsisa__sa_calloc(d, sizeof *v, e);
  uint32_t *x = wsisa__sa_calloc(d, sizeof *x, e);
  if (!v || !x) {
    free(v);
    free(x);
    return WSISA_ENOMEM;
  }
  for (size_t i = 0; i < d; i++) sobol_directions(i, v[i]);
  /* Point `first` directly from its Gray code, then one XOR per point. */
  uint64_t gray = first ^ (first >> 1);
  for (int b = 0; b < 32; b++)
    if ((gray >> b) & 1)
      for (size_t i = 0; i < d; i++) x[i] ^= v[i][b];
  for (size_t j = 0; j < n; j++) {
    if (j > 0) {
      uint64_t index = first + j;
      int c = 0;
      while (!((index >> c) & 1)) c++;
      for (size_t i = 0; i < d; i++) x[i] ^= v[i][c];
    }
    for (size_t i = 0; i < d; i++) out[j * d + i] = (double)x[i] * 0x1.0p-32;
  }
  free(v);
  free(x);
  return 0;
}

static uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Owen's scrambling of one 32-bit coordinate of dimension `dim` (sa.h): bit b
 * (0 the most significant) flips when the hash of the b bits above it is odd. */
static uint32_t owen_scramble(uint32_t x, uint64_t dim_key) {
  uint32_t out = x;
  for (int b = 0; b < 32; b++) {
    uint64_t above = b ? x >> (32 - b) : 0;
    if (mix64(dim_key ^ mix64(((uint64_t)b << 32) | above)) & 1) out ^= UINT32_C(1) << (31 - b);
  }
  return out;
}

/* Sobol' points 0..n-1 scrambled with the seed; no origin skipped (sa.h). */
static int sobol_owen(size_t n, size_t d, uint64_t seed, double *out, wsisa_err *e) {
  int rc = wsisa_sa_sobol_points(0, n, d, out, e);
  if (rc) return rc;
  for (size_t i = 0; i < d; i++) {
    uint64_t key = mix64(mix64(seed) ^ (uint64_t)i);
    for (size_t j = 0; j < n; j++) {
      double *u = &out[j * d + i];
      *u = (double)owen_scramble((uint32_t)(*u * 0x1.0p32), key) * 0x1.0p-32;
    }
  }
  return 0;
}

/* ---- random designs ------------------------------------------------------------ */

/* Streams of the study seed, one per use, so changing how many numbers one use
 * draws never shifts another's. */
enum { STREAM_MC = 1, STREAM_LHS = 2 };

static int latin_hypercube(size_t n, size_t d, uint64_t seed, double *out, wsisa_err *e) {
  size_t *perm = wsisa__sa_calloc(n, sizeof *perm, e);
  if (!perm) return WSISA_ENOMEM;
  wsisa_sa_rng rng;
  wsisa_sa_rng_seed(&rng, seed, STREAM_LHS);
  for (size_t i = 0; i < d; i++) {
    for (size_t j = 0; j < n; j++) perm[j] = j;
    for (size_t j = n; j > 1; j--) {
      size_t k = (size_t)wsisa_sa_rng_below(&rng, j);
      size_t t = perm[j - 1];
      perm[j - 1] = perm[k];
      perm[k] = t;
    }
    for (size_t j = 0; j < n; j++)
      out[j * d + i] = ((double)perm[j] + wsisa_sa_rng_uniform(&rng)) / (double)n;
  }
  free(perm);
  return 0;
}

int wsisa_sa_unit_sample(wsisa_sa_sampler sampler, size_t n, size_t d, uint64_t seed,
                         double *out, wsisa_err *e) {
  if (n == 0 || d == 0) return 0;
  switch (sampler) {
    case WSISA_SA_MC: {
      wsisa_sa_rng rng;
      wsisa_sa_rng_seed(&rng, seed, STREAM_MC);
      for (size_t j = 0; j < n * d; j++) out[j] = wsisa_sa_rng_uniform(&rng);
      return 0;
    }
    case WSISA_SA_LHS: return latin_hypercube(n, d, seed, out, e);
    case WSISA_SA_HALTON: return halton(n, d, 0, out, e);
    case WSISA_SA_HAMMERSLEY: return halton(n, d, 1, out, e);
    case WSISA_SA_SOBOL: return wsisa_sa_sobol_points(1, n, d, out, e);
    case WSISA_SA_SOBOL_OWEN: return sobol_owen(n, d, seed, out, e);
  }
  return wsisa_error(e, WSISA_EINTERNAL, "unknown sampler %d", (int)sampler);
}
