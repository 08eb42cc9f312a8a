/* Designs made elsewhere (another SA tool, a hand-made table): parameter
 * values in, a wsisa_sa_design out, its layout checked for the method that
 * will analyse it. Correlation takes any rows; MOAT needs trajectories (G + 1
 * rows, one factor moving per step, each once: G = k parameters, or the
 * groups, a group moving all its parameters at once); VBD needs Saltelli's
 * grouping per base sample, A, AB_1..AB_G, [BA_1..BA_G], B (the order of sa.h,
 * which SALib's saltelli sampler also writes). Unit coordinates are the
 * sampling map read backwards: (v - lo) / (hi - lo) for a continuous
 * parameter (its CDF under a non-uniform dist), k / (K - 1) for the k-th of K
 * values, as MOAT's grid places them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"

/* Index of v among a finite parameter's values, or -1. */
static long value_index(const wsisa_sa_param *p, double v) {
  size_t count = wsisa_sa_param_count(p);
  for (size_t k = 0; k < count; k++) {
    double at = wsisa_sa_param_at(p, k);
    if (fabs(at - v) <= 1e-9 * fmax(1, fabs(at))) return (long)k;
  }
  return -1;
}

static int to_unit(const wsisa_sa_param *p, double v, double *u) {
  if (!wsisa_sa_param_contains(p, v)) return -1;
  if (p->kind == WSISA_SA_CONTINUOUS) {
    /* a value an ulp past an end (contains() allows it) is at the end; a
     * non-uniform dist's value is at its CDF (quantile space) */
    *u = p->dist != WSISA_SA_UNIF ? wsisa_sa_param_cdf(p, v)
                                  : fmin(1, fmax(0, (v - p->lo) / (p->hi - p->lo)));
    return 0;
  }
  size_t count = wsisa_sa_param_count(p);
  long k = value_index(p, v);
  if (k < 0) return -1;
  *u = count > 1 ? (double)k / (double)(count - 1) : 0;
  return 0;
}

typedef struct row_hash {
  uint64_t hash;
  size_t row;
} row_hash;

static int by_hash(const void *a, const void *b) {
  const row_hash *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Rows equal to an earlier row: hashed, sorted, equal hashes compared. */
static size_t count_duplicates(const double *values, size_t nrows, size_t ncols) {
  row_hash *h = malloc((nrows ? nrows : 1) * sizeof *h);
  if (!h) return 0;
  for (size_t r = 0; r < nrows; r++) {
    uint64_t x = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)(values + r * ncols);
    for (size_t i = 0; i < ncols * sizeof *values; i++) x = (x ^ b[i]) * 1099511628211ull;
    h[r] = (row_hash){x, r};
  }
  qsort(h, nrows, sizeof *h, by_hash);
  size_t dup = 0;
  for (size_t i = 1; i < nrows; i++)
    for (size_t j = i; j-- > 0 && h[j].hash == h[i].hash;)
      if (!memcmp(values + h[i].row * ncols, values + h[j].row * ncols, ncols * sizeof *values)) {
        dup++;
        break;
      }
  free(h);
  return dup;
}

/* The one factor (parameter or group) rows a and b differ in, all of its
 * parameters and no other; -1 when none, -2 when several or part of a group. */
static long moved_factor(const wsisa_sa_design *d, size_t a, size_t b) {
  long moved = -1;
  for (size_t i = 0; i < d->ndims; i++)
    if (d->unit[a * d->ndims + i] != d->unit[b * d->ndims + i]) {
      if (moved >= 0 && (size_t)moved != d->factor[i]) return -2;
      moved = (long)d->factor[i];
    }
  for (size_t i = 0; moved >= 0 && i < d->ndims; i++)
    if (d->factor[i] == (size_t)moved && d->unit[a * d->ndims + i] == d->unit[b * d->ndims + i])
      return -2;
  return moved;
}

/* A design written with few digits (SALib's files carry 9 significant
 * ones) puts its grid levels a little off k/(p - 1), by 10^-9 of a value's
 * size over its range: more than a strict comparison of steps allows, less
 * than this. */
#define GRID_TOL 1e-5

/* When every step of a MOAT design is one Delta = p/(2(p - 1)) of an even p
 * and every coordinate a level k/(p - 1), each within GRID_TOL, the
 * coordinates become those levels: the effects are then dy / Delta, as on
 * the grid the design was made on, and a group's members move by one step. */
static void snap_to_grid(wsisa_sa_design *d) {
  size_t k = d->ndims, n = d->nrows;
  double delta = 0;
  for (size_t r = 1; r < n; r++) {
    if (r % d->group_size == 0) continue; /* a new trajectory */
    for (size_t i = 0; i < k; i++) {
      double du = fabs(d->unit[r * k + i] - d->unit[(r - 1) * k + i]);
      if (du == 0) continue;
      if (delta == 0) delta = du;
      if (!(fabs(du - delta) <= GRID_TOL)) return;
    }
  }
  /* the p whose Delta is this close; the levels tell neighbours apart */
  for (unsigned p = 2; delta > 0.5 - GRID_TOL && (p - 1) * GRID_TOL < 0.01; p += 2) {
    if (!(fabs(delta - p / (2.0 * (p - 1))) <= GRID_TOL)) continue;
    int fits = 1;
    for (size_t at = 0; fits && at < n * k; at++) {
      double level = round(d->unit[at] * (p - 1)) / (p - 1);
      fits = fabs(d->unit[at] - level) <= GRID_TOL;
    }
    if (!fits) continue;
    for (size_t at = 0; at < n * k; at++) d->unit[at] = round(d->unit[at] * (p - 1)) / (p - 1);
    return;
  }
}

static int check_moat(const wsisa_sa_space *space, wsisa_sa_design *d, wsisa_err *e) {
  size_t k = d->nfactors, g = k + 1;
  const char *what = k < d->ndims ? "G + 1" : "k + 1";
  if (d->nrows % g || d->nrows < 2 * g)
    return wsisa_error(e, WSISA_EUSAGE,
                       "not a MOAT design: MOAT wants trajectories of %s = %zu rows (at "
                       "least 2), and %zu rows are not",
                       what, g, d->nrows);
  unsigned char *seen = wsisa__sa_calloc(k, 1, e);
  if (!seen) return WSISA_ENOMEM;
  int rc = 0;
  for (size_t t = 0; t < d->nrows / g && !rc; t++) {
    memset(seen, 0, k);
    for (size_t step = 1; step <= k && !rc; step++) {
      size_t a = t * g + step - 1, b = a + 1;
      long moved = moved_factor(d, a, b);
      if (moved < 0)
        rc = wsisa_error(e, WSISA_EUSAGE,
                         "not a MOAT design: rows %zu and %zu (trajectory %zu) differ in %s "
                         "%s; MOAT wants exactly one to move per step%s",
                         a + 1, b + 1, t + 1, moved == -1 ? "no" : "more than one",
                         k < d->ndims ? "group" : "parameter",
                         k < d->ndims ? ", all of its parameters" : "");
      else if (seen[moved]++)
        rc = wsisa_error(e, WSISA_EUSAGE,
                         "not a MOAT design: %s moves twice in trajectory %zu (rows %zu to "
                         "%zu); MOAT moves each %s once",
                         wsisa_sa_space_factor_name(space, (size_t)moved), t + 1, t * g + 1,
                         t * g + g, k < d->ndims ? "group" : "parameter");
    }
  }
  free(seen);
  if (!rc) {
    d->groups = d->nrows / g;
    d->group_size = g;
    snap_to_grid(d);
  }
  return rc;
}

/* Is row r equal to row `base` but in factor f, where it equals row `other`? */
static int is_cross(const wsisa_sa_design *d, size_t r, size_t base, size_t other, size_t f) {
  size_t k = d->ndims;
  for (size_t j = 0; j < k; j++) {
    double want = d->unit[(d->factor[j] == f ? other : base) * k + j];
    if (d->unit[r * k + j] != want) return 0;
  }
  return 1;
}

/* Whether the rows are Saltelli groups of size G + 2 (second = 0) or 2G + 2;
 * the first row that breaks it in *bad. */
static int saltelli_ok(const wsisa_sa_design *d, int second, size_t *bad) {
  size_t k = d->nfactors, g = second ? 2 * k + 2 : k + 2;
  if (d->nrows % g || d->nrows < 2 * g) {
    *bad = 0;
    return 0;
  }
  for (size_t s = 0; s < d->nrows / g; s++) {
    size_t a = s * g, b = a + g - 1;
    for (size_t i = 0; i < k; i++) {
      if (!is_cross(d, a + 1 + i, a, b, i)) {
        *bad = a + 1 + i;
        return 0;
      }
      if (second && !is_cross(d, a + 1 + k + i, b, a, i)) {
        *bad = a + 1 + k + i;
        return 0;
      }
    }
  }
  return 1;
}

static int check_vbd(wsisa_sa_design *d, int second_order, wsisa_err *e) {
  size_t k = d->nfactors, bad = 0;
  const char *kk = k < d->ndims ? "G" : "k";
  /* the study's order first; the other grouping is accepted too, since the
   * rows say which it is */
  int second = second_order;
  if (!saltelli_ok(d, second, &bad)) {
    size_t bad_other = 0;
    if (!saltelli_ok(d, !second, &bad_other)) {
      if (bad)
        return wsisa_error(
            e, WSISA_EUSAGE,
            "not a VBD design: row %zu is not A with one %s from B; VBD wants Saltelli's "
            "layout, per base sample A, AB_1..AB_%zu, [BA_1..BA_%zu,] B (%zu or %zu rows)",
            bad + 1, k < d->ndims ? "group's columns" : "column", k, k, k + 2, 2 * k + 2);
      return wsisa_error(e, WSISA_EUSAGE,
                         "not a VBD design: %zu rows are not groups of %s + 2 = %zu (or 2%s + 2 "
                         "= %zu) rows, Saltelli's A, AB_1..AB_%s, [BA_1..BA_%s,] B",
                         d->nrows, kk, k + 2, kk, 2 * k + 2, kk, kk);
    }
    second = !second;
  }
  d->second_order = second;
  d->group_size = second ? 2 * k + 2 : k + 2;
  d->groups = d->nrows / d->group_size;
  return 0;
}

int wsisa_sa_design_from_values(const wsisa_sa_space *space, wsisa_sa_method method,
                                int second_order, const double *values, size_t nrows,
                                wsisa_sa_design **out, wsisa_err *e) {
  *out = NULL;
  if (method == WSISA_SA_TWO_PHASE) method = WSISA_SA_MOAT;
  wsisa_sa_design *d = wsisa__sa_calloc(1, sizeof *d, e);
  if (!d) return WSISA_ENOMEM;
  d->method = method;
  d->nrows = nrows;
  d->nparams = space->nparams;
  for (size_t p = 0; p < space->nparams; p++) d->ndims += space->params[p].kind != WSISA_SA_FIXED;
  d->dims = wsisa__sa_calloc(d->ndims + 1, sizeof *d->dims, e);
  d->factor = wsisa__sa_calloc(d->ndims + 1, sizeof *d->factor, e);
  d->unit = wsisa__sa_calloc(nrows * d->ndims + 1, sizeof *d->unit, e);
  d->values = wsisa__sa_calloc(nrows * d->nparams + 1, sizeof *d->values, e);
  int rc = d->dims && d->factor && d->unit && d->values ? 0 : WSISA_ENOMEM;
  if (!rc) { /* groups move as one in MOAT and VBD; correlations stay per parameter */
    d->nfactors = method == WSISA_SA_CORRELATION ? d->ndims : wsisa_sa_space_factors(space, d->factor);
    for (size_t i = 0; method == WSISA_SA_CORRELATION && i < d->ndims; i++) d->factor[i] = i;
  }
  if (!rc && d->ndims == 0)
    rc = wsisa_error(e, WSISA_EUSAGE, "every parameter is fixed; nothing to analyse");
  for (size_t p = 0, i = 0; !rc && p < space->nparams; p++)
    if (space->params[p].kind != WSISA_SA_FIXED) d->dims[i++] = p;
  if (!rc) memcpy(d->values, values, nrows * d->nparams * sizeof *values);
  for (size_t r = 0; !rc && r < nrows; r++)
    for (size_t p = 0, i = 0; !rc && p < space->nparams; p++) {
      const wsisa_sa_param *par = &space->params[p];
      double v = values[r * d->nparams + p], u = 0;
      if (par->kind == WSISA_SA_FIXED) {
        if (!wsisa_sa_param_contains(par, v))
          rc = wsisa_error(e, WSISA_EUSAGE, "row %zu: %s is %.15g, but the study fixes it at %.15g",
                           r + 1, par->name, v, par->value);
        continue;
      }
      if (to_unit(par, v, &u))
        rc = wsisa_error(e, WSISA_EUSAGE, "row %zu: %s = %.17g is not a value of its range", r + 1,
                         par->name, v);
      d->unit[r * d->ndims + i++] = u;
    }
  if (!rc) d->nduplicates = count_duplicates(d->values, nrows, d->nparams);
  if (!rc) {
    if (method == WSISA_SA_MOAT) {
      rc = check_moat(space, d, e);
    } else if (method == WSISA_SA_VBD) {
      rc = check_vbd(d, second_order, e);
    } else {
      if (nrows < 3)
        rc = wsisa_error(e, WSISA_EUSAGE, "%zu rows: correlations need at least 3", nrows);
      d->groups = nrows;
      d->group_size = 1;
    }
  }
  if (rc) {
    wsisa_sa_design_free(d);
    return rc;
  }
  *out = d;
  return 0;
}
