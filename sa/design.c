/* Designs: the runs a method needs, as unit-cube coordinates and as parameter
 * values, with the method knobs checked against the space. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"

static const char *const method_names[] = {"moat", "vbd", "correlation", "two_phase"};
#define NMETHODS (sizeof method_names / sizeof *method_names)

const char *wsisa_sa_method_name(wsisa_sa_method method) {
  return (unsigned)method < NMETHODS ? method_names[method] : "?";
}

void wsisa_sa_opts_default(wsisa_sa_opts *o, wsisa_sa_method method) {
  memset(o, 0, sizeof *o);
  o->method = method;
  o->seed = 1;
  o->trajectories = 10;
  o->levels = 4;
  o->samples = method == WSISA_SA_CORRELATION ? 1000 : 1024;
  o->bootstrap = 1000;
  o->confidence = 0.95;
  o->keep = 8;
  o->sampler = method == WSISA_SA_MOAT          ? WSISA_SA_HALTON
               : method == WSISA_SA_CORRELATION ? WSISA_SA_LHS
                                                : WSISA_SA_SOBOL;
}

/* Largest design wsisa makes: a guard against typos like 1e12 samples. */
#define MAX_RUNS ((size_t)1 << 31)

int wsisa_sa_opts_check(const wsisa_sa_opts *o, size_t dims, wsisa_err *e) {
  if ((unsigned)o->method >= NMETHODS)
    return wsisa_error(e, WSISA_EUSAGE, "name: unknown method %d", (int)o->method);
  if ((unsigned)o->sampler >= WSISA_SA_NSAMPLERS)
    return wsisa_error(e, WSISA_EUSAGE, "sampler: unknown sampler %d", (int)o->sampler);
  if (dims == 0) return 0; /* every parameter fixed: the one run of the fixed values */
  int moat = o->method == WSISA_SA_MOAT || o->method == WSISA_SA_TWO_PHASE;
  int vbd = o->method == WSISA_SA_VBD || o->method == WSISA_SA_TWO_PHASE;
  if (moat) {
    if (o->trajectories < 2)
      return wsisa_error(e, WSISA_EUSAGE,
                         "trajectories: %zu is too few; sigma needs at least 2",
                         o->trajectories);
    if (o->levels < 2 || o->levels % 2 || o->levels > 1000)
      return wsisa_error(e, WSISA_EUSAGE,
                         "levels: %u is not an even number from 2 to 1000 (Morris' "
                         "Delta = p/(2(p-1)) needs p even)",
                         o->levels);
    /* The selection compares every pair of the pool's trajectories. */
    if (o->pool > 1000)
      return wsisa_error(e, WSISA_EUSAGE,
                         "pool: %zu trajectories is too many to compare pairwise (at most "
                         "1000)",
                         o->pool);
    if (o->pool && o->pool < o->trajectories)
      return wsisa_error(e, WSISA_EUSAGE,
                         "pool: %zu trajectories cannot yield the %zu to keep", o->pool,
                         o->trajectories);
    size_t most = o->pool > o->trajectories ? o->pool : o->trajectories;
    if (most > MAX_RUNS / (dims + 1))
      return wsisa_error(e, WSISA_EUSAGE, "trajectories: %zu x %zu runs is too many", most,
                         dims + 1);
  }
  if (vbd) {
    if (o->samples < 2)
      return wsisa_error(e, WSISA_EUSAGE, "samples: %zu is too few base samples",
                         o->samples);
    if (o->samples > MAX_RUNS / (2 * dims + 2))
      return wsisa_error(e, WSISA_EUSAGE, "samples: %zu base samples is too many",
                         o->samples);
    if (o->bootstrap > 100000)
      return wsisa_error(e, WSISA_EUSAGE, "bootstrap: %zu resamples is too many (at most "
                         "100000)", o->bootstrap);
    if (!(o->confidence > 0 && o->confidence < 1))
      return wsisa_error(e, WSISA_EUSAGE, "confidence: %g is not between 0 and 1",
                         o->confidence);
    if (o->second_order && dims < 2)
      return wsisa_error(e, WSISA_EUSAGE,
                         "second_order: needs at least 2 varying parameters");
  }
  if (o->method == WSISA_SA_TWO_PHASE && o->keep < 1)
    return wsisa_error(e, WSISA_EUSAGE, "keep: the second phase needs at least 1 parameter");
  if (o->method == WSISA_SA_CORRELATION) {
    if (o->samples < dims + 2)
      return wsisa_error(e, WSISA_EUSAGE,
                         "samples: %zu runs are too few for partial correlations of %zu "
                         "parameters (at least %zu)",
                         o->samples, dims, dims + 2);
    if (o->samples > MAX_RUNS)
      return wsisa_error(e, WSISA_EUSAGE, "samples: %zu runs is too many", o->samples);
  }
  return 0;
}

void wsisa_sa_design_free(wsisa_sa_design *d) {
  if (!d) return;
  free(d->dims);
  free(d->factor);
  free(d->unit);
  free(d->values);
  free(d);
}

void wsisa_sa_saltelli_unit_factors(const double *a, const double *b, size_t n, size_t k,
                                    size_t nf, const size_t *factor, int second_order,
                                    double *unit) {
  size_t group = second_order ? 2 * nf + 2 : nf + 2;
  for (size_t j = 0; j < n; j++) {
    const double *aj = a + j * k, *bj = b + j * k;
    double *g = unit + j * group * k;
    memcpy(g, aj, k * sizeof *g);
    for (size_t f = 0; f < nf; f++) {
      double *ab = g + (1 + f) * k, *ba = g + (1 + nf + f) * k;
      for (size_t i = 0; i < k; i++) {
        int in = (factor ? factor[i] : i) == f;
        ab[i] = in ? bj[i] : aj[i];
        if (second_order) ba[i] = in ? aj[i] : bj[i];
      }
    }
    memcpy(g + (group - 1) * k, bj, k * sizeof *g);
  }
}

void wsisa_sa_saltelli_unit(const double *a, const double *b, size_t n, size_t k,
                            int second_order, double *unit) {
  wsisa_sa_saltelli_unit_factors(a, b, n, k, k, NULL, second_order, unit);
}

/* A MOAT grid coordinate to a value: continuous parameters scale it, finite
 * ones take the value whose index is nearest to u (K - 1), so grid levels of a
 * parameter with K >= p values are distinct values (sa.h conventions). */
static double grid_value(const wsisa_sa_param *p, double u) {
  if (p->kind == WSISA_SA_CONTINUOUS) return wsisa_sa_param_quantile(p, u);
  size_t count = wsisa_sa_param_count(p);
  return wsisa_sa_param_at(p, (size_t)llround(u * (double)(count - 1)));
}

static uint64_t row_hash(const double *row, size_t ncols) {
  /* A word at a time, then a splitmix64 finaliser so the low bits (the table
   * index) depend on every value. Mapped values are never -0, so equal rows
   * have equal bytes. */
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < ncols; i++) {
    uint64_t w;
    memcpy(&w, &row[i], sizeof w);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

/* Rows equal to an earlier row, through an open-addressing table of row
 * indices: O(n) for designs of 10^5 runs. */
static int count_duplicates(const double *values, size_t nrows, size_t ncols, size_t *out,
                            wsisa_err *e) {
  *out = 0;
  size_t cap = 16;
  while (cap < 2 * nrows) cap *= 2;
  size_t *slots = wsisa__sa_calloc(cap, sizeof *slots, e);
  if (!slots) return WSISA_ENOMEM;
  for (size_t r = 0; r < nrows; r++) {
    const double *row = values + r * ncols;
    size_t at = (size_t)row_hash(row, ncols) & (cap - 1);
    for (;; at = (at + 1) & (cap - 1)) {
      if (!slots[at]) { /* slots hold row + 1; 0 is empty */
        slots[at] = r + 1;
        break;
      }
      if (memcmp(values + (slots[at] - 1) * ncols, row, ncols * sizeof *row) == 0) {
        (*out)++;
        break;
      }
    }
  }
  free(slots);
  return 0;
}

/* Levels tabled once per parameter, so mapping 10^5 runs does not recompute
 * (and re-snap) a level per value; rows are filled in order for locality. */
#define TABLE_MAX 65536

int wsisa_sa_design_map(const wsisa_sa_space *space, wsisa_sa_design *d, wsisa_err *e) {
  int moat = d->method == WSISA_SA_MOAT;
  size_t k = d->ndims, total = 0;
  size_t *count = wsisa__sa_calloc(k, sizeof *count, e), *offset = wsisa__sa_calloc(k, sizeof *offset, e);
  int rc = count && offset ? 0 : WSISA_ENOMEM;
  for (size_t i = 0; !rc && i < k; i++) {
    count[i] = wsisa_sa_param_count(&space->params[d->dims[i]]);
    if (count[i] > TABLE_MAX) count[i] = 0; /* too many to table: map each value */
    offset[i] = total;
    total += count[i];
  }
  double *levels = rc ? NULL : wsisa__sa_calloc(total, sizeof *levels, e);
  if (!rc && !levels) rc = WSISA_ENOMEM;
  for (size_t i = 0; !rc && i < k; i++)
    for (size_t j = 0; j < count[i]; j++)
      levels[offset[i] + j] = wsisa_sa_param_at(&space->params[d->dims[i]], j);
  for (size_t r = 0; !rc && r < d->nrows; r++) {
    double *row = d->values + r * d->nparams;
    const double *u = d->unit + r * k;
    for (size_t c = 0; c < d->nparams; c++) row[c] = space->params[c].value + 0.0;
    for (size_t i = 0; i < k; i++) {
      const wsisa_sa_param *p = &space->params[d->dims[i]];
      size_t n = count[i];
      double v;
      if (!n) {
        v = moat ? grid_value(p, u[i]) : wsisa_sa_param_from_unit(p, u[i]);
      } else if (moat) {
        v = levels[offset[i] + (size_t)llround(u[i] * (double)(n - 1))];
      } else {
        double bin = floor(u[i] * (double)n);
        v = levels[offset[i] + (bin <= 0 ? 0 : bin >= (double)(n - 1) ? n - 1 : (size_t)bin)];
      }
      /* + 0.0 turns a -0 into 0 so equal rows have equal bytes. */
      row[d->dims[i]] = v + 0.0;
    }
  }
  free(count);
  free(offset);
  free(levels);
  if (rc) return rc;
  return count_duplicates(d->values, d->nrows, d->nparams, &d->nduplicates, e);
}

static int moat_unit(const wsisa_sa_space *space, const wsisa_sa_opts *o, wsisa_sa_design *d,
                     wsisa_err *e) {
  size_t k = d->ndims, rows = d->nfactors + 1, r = o->trajectories;
  size_t m = o->pool > r ? o->pool : r;
  double *pool = wsisa__sa_calloc(m * rows * k, sizeof *pool, e);
  size_t *chosen = wsisa__sa_calloc(r, sizeof *chosen, e);
  int rc = pool && chosen ? 0 : WSISA_ENOMEM;
  if (!rc) rc = wsisa_sa_morris_trajectories(space, o, m, pool, e);
  if (!rc && m > r) rc = wsisa__sa_morris_select(pool, m, rows, k, r, chosen, e);
  if (!rc) {
    for (size_t t = 0; t < r; t++) {
      size_t from = m > r ? chosen[t] : t;
      memcpy(d->unit + t * rows * k, pool + from * rows * k, rows * k * sizeof *pool);
    }
    d->groups = r;
    d->group_size = rows;
  }
  free(pool);
  free(chosen);
  return rc;
}

static int vbd_unit(const wsisa_sa_opts *o, wsisa_sa_design *d, wsisa_err *e) {
  size_t k = d->ndims, n = o->samples;
  /* One 2k-dimensional sequence, split by columns: consecutive blocks of a
   * k-dimensional low-discrepancy sequence are correlated and bias the indices. */
  double *ab = wsisa__sa_calloc(n * 2 * k, sizeof *ab, e);
  double *a = wsisa__sa_calloc(n * k, sizeof *a, e);
  double *b = wsisa__sa_calloc(n * k, sizeof *b, e);
  int rc = ab && a && b ? 0 : WSISA_ENOMEM;
  if (!rc) rc = wsisa_sa_unit_sample(o->sampler, n, 2 * k, o->seed, ab, e);
  if (!rc) {
    for (size_t j = 0; j < n; j++) {
      memcpy(a + j * k, ab + j * 2 * k, k * sizeof *a);
      memcpy(b + j * k, ab + j * 2 * k + k, k * sizeof *b);
    }
    size_t g = d->nfactors;
    wsisa_sa_saltelli_unit_factors(a, b, n, k, g, d->factor, o->second_order, d->unit);
    d->groups = n;
    d->group_size = o->second_order ? 2 * g + 2 : g + 2;
    d->second_order = o->second_order;
  }
  free(ab);
  free(a);
  free(b);
  return rc;
}

int wsisa_sa_design_make(const wsisa_sa_space *space, const wsisa_sa_opts *o,
                         wsisa_sa_design **out, wsisa_err *e) {
  *out = NULL;
  size_t k = wsisa_sa_space_dims(space);
  int rc = wsisa_sa_opts_check(o, k, e);
  if (rc) return rc;
  wsisa_sa_design *d = wsisa__sa_calloc(1, sizeof *d, e);
  if (!d) return WSISA_ENOMEM;
  d->method = o->method == WSISA_SA_TWO_PHASE ? WSISA_SA_MOAT : o->method;
  d->nparams = space->nparams;
  d->ndims = k;
  d->factor = wsisa__sa_calloc(k + 1, sizeof *d->factor, e);
  if (!d->factor) {
    rc = WSISA_ENOMEM;
    goto fail;
  }
  /* groups move as one in MOAT and VBD; correlations stay per parameter */
  d->nfactors = d->method == WSISA_SA_CORRELATION ? k : wsisa_sa_space_factors(space, d->factor);
  for (size_t i = 0; d->method == WSISA_SA_CORRELATION && i < k; i++) d->factor[i] = i;
  size_t g = d->nfactors;
  if (d->method == WSISA_SA_MOAT && k && (rc = wsisa__sa_check_group_steps(space, o, e)))
    goto fail;
  for (size_t i = 0; d->method == WSISA_SA_MOAT && i < space->nparams; i++) {
    const wsisa_sa_param *p = &space->params[i];
    if (p->kind == WSISA_SA_CONTINUOUS && !isfinite(p->lo - p->hi)) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "%s: MOAT's grid ends are the quantiles 0 and 1, which a %s dist does "
                       "not have (they are infinite); give it a bounded dist (truncnorm, "
                       "triang, logunif, unif), or use vbd or correlation",
                       p->name, wsisa_sa_dist_name(p->dist));
      goto fail;
    }
  }
  if (o->second_order && d->method == WSISA_SA_VBD && g < 2) {
    rc = wsisa_error(e, WSISA_EUSAGE, "second_order: needs at least 2 groups");
    goto fail;
  }
  switch (k ? (int)d->method : -1) {
    case -1: d->nrows = 1; break; /* every parameter fixed: one run, nothing to vary */
    case WSISA_SA_MOAT: d->nrows = o->trajectories * (g + 1); break;
    case WSISA_SA_VBD: d->nrows = o->samples * (o->second_order ? 2 * g + 2 : g + 2); break;
    default: d->nrows = o->samples; break;
  }
  d->dims = wsisa__sa_calloc(k, sizeof *d->dims, e);
  d->unit = wsisa__sa_calloc(d->nrows * k, sizeof *d->unit, e);
  d->values = wsisa__sa_calloc(d->nrows * d->nparams, sizeof *d->values, e);
  if (!d->dims || !d->unit || !d->values) {
    rc = WSISA_ENOMEM;
    goto fail;
  }
  for (size_t i = 0, j = 0; i < space->nparams; i++)
    if (space->params[i].kind != WSISA_SA_FIXED) d->dims[j++] = i;
  switch (k ? (int)d->method : -1) {
    case -1: d->groups = d->group_size = 1; break;
    case WSISA_SA_MOAT: rc = moat_unit(space, o, d, e); break;
    case WSISA_SA_VBD: rc = vbd_unit(o, d, e); break;
    default:
      rc = wsisa_sa_unit_sample(o->sampler, d->nrows, k, o->seed, d->unit, e);
      d->groups = d->nrows;
      d->group_size = 1;
      break;
  }
  if (!rc) rc = wsisa_sa_design_map(space, d, e);
  if (rc) goto fail;
  *out = d;
  return 0;
fail:
  wsisa_sa_design_free(d);
  return rc;
}
