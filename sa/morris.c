/* Morris One-At-A-Time screening (Morris 1991; seed 000 §3): trajectories on a
 * p-level grid, Campolongo et al. (2007) selection and spread, elementary
 * effects summarised as mu, mu* and sigma. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"

enum { STREAM_MOAT = 3, STREAM_MU_STAR_CONF = 5 };

/* Levels p_i and jump J_i (in grid steps) of a parameter: a parameter with
 * fewer values than the global p uses them all (sa.h conventions). */
static void grid_of(const wsisa_sa_param *p, unsigned levels, unsigned *pi, unsigned *jump) {
  size_t count = wsisa_sa_param_count(p);
  *pi = count == 0 || count >= levels ? levels : (unsigned)count;
  *jump = *pi / 2;
}

int wsisa_sa_morris_trajectories(const wsisa_sa_space *space, const wsisa_sa_opts *o,
                                 size_t count, double *unit, wsisa_err *e) {
  size_t k = wsisa_sa_space_dims(space), rows = k + 1;
  double *base = wsisa__sa_calloc(count * k, sizeof *base, e);
  unsigned *pi = wsisa__sa_calloc(k, sizeof *pi, e), *jump = wsisa__sa_calloc(k, sizeof *jump, e);
  long *level = wsisa__sa_calloc(k, sizeof *level, e), *dir = wsisa__sa_calloc(k, sizeof *dir, e);
  size_t *order = wsisa__sa_calloc(k, sizeof *order, e);
  int rc = base && pi && jump && level && dir && order ? 0 : WSISA_ENOMEM;
  if (rc) goto done;
  for (size_t i = 0, j = 0; i < space->nparams; i++)
    if (space->params[i].kind != WSISA_SA_FIXED) {
      grid_of(&space->params[i], o->levels, &pi[j], &jump[j]);
      j++;
    }
  /* Base points come from the study's sampler so a quasi-random sampler spreads
   * the trajectories; directions and factor orders come from the seed. */
  rc = wsisa_sa_unit_sample(o->sampler, count, k, o->seed, base, e);
  if (rc) goto done;
  wsisa_sa_rng rng;
  wsisa_sa_rng_seed(&rng, o->seed, STREAM_MOAT);
  for (size_t t = 0; t < count; t++) {
    double *traj = unit + t * rows * k;
    for (size_t i = 0; i < k; i++) {
      long nbase = (long)(pi[i] - jump[i]);
      long b = (long)floor(base[t * k + i] * (double)nbase);
      b = b < 0 ? 0 : b >= nbase ? nbase - 1 : b;
      dir[i] = wsisa_sa_rng_below(&rng, 2) ? 1 : -1;
      level[i] = b + (dir[i] < 0 ? (long)jump[i] : 0);
      order[i] = i;
    }
    for (size_t i = k; i > 1; i--) {
      size_t s = (size_t)wsisa_sa_rng_below(&rng, i), tmp = order[i - 1];
      order[i - 1] = order[s];
      order[s] = tmp;
    }
    for (size_t step = 0; step < rows; step++) {
      if (step > 0) {
        size_t f = order[step - 1];
        level[f] += dir[f] * (long)jump[f];
      }
      for (size_t i = 0; i < k; i++)
        traj[step * k + i] = (double)level[i] / (double)(pi[i] - 1);
    }
  }
done:
  free(base);
  free(pi);
  free(jump);
  free(level);
  free(dir);
  free(order);
  return rc;
}

/* ---- Campolongo selection ------------------------------------------------------ */

double wsisa_sa_morris_distance(const double *t1, const double *t2, size_t k) {
  /* Campolongo 2007 eq. 2: sum over all point pairs of their Euclidean distance. */
  double d = 0;
  for (size_t a = 0; a <= k; a++)
    for (size_t b = 0; b <= k; b++) {
      double s = 0;
      for (size_t z = 0; z < k; z++) {
        double diff = t1[a * k + z] - t2[b * k + z];
        s += diff * diff;
      }
      d += sqrt(s);
    }
  return d;
}

double wsisa_sa_morris_spread(const double *pool, size_t k, const size_t *chosen, size_t r) {
  size_t size = (k + 1) * k;
  double s = 0;
  for (size_t a = 0; a < r; a++)
    for (size_t b = a + 1; b < r; b++) {
      double d = wsisa_sa_morris_distance(pool + chosen[a] * size, pool + chosen[b] * size, k);
      s += d * d;
    }
  return s;
}

/* Exhaustive search pays off while the subsets are few. */
#define EXHAUSTIVE_MAX 20000.0

static double binomial(size_t m, size_t r) {
  double c = 1;
  for (size_t i = 1; i <= r; i++) c = c * (double)(m - r + i) / (double)i;
  return c;
}

static void select_exhaustive(const double *d2, size_t m, size_t r, size_t *chosen,
                              size_t *c) {
  for (size_t i = 0; i < r; i++) c[i] = chosen[i] = i;
  double best = -1;
  for (;;) {
    double s = 0;
    for (size_t a = 0; a < r; a++)
      for (size_t b = a + 1; b < r; b++) s += d2[c[a] * m + c[b]];
    if (s > best) {
      best = s;
      memcpy(chosen, c, r * sizeof *c);
    }
    /* Next combination in lexicographic order. */
    size_t i = r;
    while (i > 0 && c[i - 1] == m - r + i - 1) i--;
    if (i == 0) break;
    c[i - 1]++;
    for (size_t j = i; j < r; j++) c[j] = c[j - 1] + 1;
  }
}

static void select_eliminate(const double *d2, size_t m, size_t r, size_t *chosen,
                             double *contrib, unsigned char *alive) {
  for (size_t a = 0; a < m; a++) {
    alive[a] = 1;
    contrib[a] = 0;
    for (size_t b = 0; b < m; b++) contrib[a] += d2[a * m + b];
  }
  for (size_t left = m; left > r; left--) {
    size_t worst = SIZE_MAX;
    for (size_t a = 0; a < m; a++)
      if (alive[a] && (worst == SIZE_MAX || contrib[a] < contrib[worst])) worst = a;
    alive[worst] = 0;
    for (size_t a = 0; a < m; a++) contrib[a] -= d2[a * m + worst];
  }
  for (size_t a = 0, j = 0; a < m; a++)
    if (alive[a]) chosen[j++] = a;
}

int wsisa_sa_morris_select(const double *pool, size_t m, size_t k, size_t r, size_t *chosen,
                           wsisa_err *e) {
  if (r > m || r == 0)
    return wsisa_error(e, WSISA_EUSAGE, "pool: cannot choose %zu of %zu trajectories", r, m);
  size_t size = (k + 1) * k;
  double *d2 = wsisa__sa_calloc(m * m, sizeof *d2, e);
  double *contrib = wsisa__sa_calloc(m, sizeof *contrib, e);
  unsigned char *alive = wsisa__sa_calloc(m, 1, e);
  size_t *combination = wsisa__sa_calloc(r, sizeof *combination, e);
  int rc = d2 && contrib && alive && combination ? 0 : WSISA_ENOMEM;
  if (!rc) {
    for (size_t a = 0; a < m; a++)
      for (size_t b = a + 1; b < m; b++) {
        double d = wsisa_sa_morris_distance(pool + a * size, pool + b * size, k);
        d2[a * m + b] = d2[b * m + a] = d * d;
      }
    if (binomial(m, r) <= EXHAUSTIVE_MAX)
      select_exhaustive(d2, m, r, chosen, combination);
    else
      select_eliminate(d2, m, r, chosen, contrib, alive);
  }
  free(d2);
  free(contrib);
  free(alive);
  free(combination);
  return rc;
}

/* ---- analysis ---------------------------------------------------------------------- */

void wsisa_sa_moat_result_free(wsisa_sa_moat_result *r) {
  if (!r) return;
  free(r->mu);
  free(r->mu_star);
  free(r->sigma);
  free(r->mu_p);
  free(r->mu_star_p);
  free(r->sigma_p);
  free(r->neffects);
  free(r->effects);
  memset(r, 0, sizeof *r);
}

/* mean, mean of |x| and standard deviation (n - 1) of x[0..n-1]. */
static void summarise(const double *x, size_t n, double *mu, double *mu_star, double *sigma) {
  double s = 0, sa = 0;
  for (size_t i = 0; i < n; i++) {
    s += x[i];
    sa += fabs(x[i]);
  }
  *mu = n ? s / (double)n : NAN;
  *mu_star = n ? sa / (double)n : NAN;
  *sigma = wsisa__sa_stdev(x, n);
}

int wsisa_sa_moat_analyze(const wsisa_sa_space *space, const wsisa_sa_design *d,
                          const double *y, wsisa_sa_moat_result *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  if (d->method != WSISA_SA_MOAT)
    return wsisa_error(e, WSISA_EUSAGE, "a MOAT analysis needs a MOAT design");
  size_t k = d->ndims, r = d->groups;
  out->k = k;
  double *ee = wsisa__sa_calloc(k * r, sizeof *ee, e);
  double *ee_p = wsisa__sa_calloc(k * r, sizeof *ee_p, e);
  out->mu = wsisa__sa_calloc(k, sizeof(double), e);
  out->mu_star = wsisa__sa_calloc(k, sizeof(double), e);
  out->sigma = wsisa__sa_calloc(k, sizeof(double), e);
  out->mu_p = wsisa__sa_calloc(k, sizeof(double), e);
  out->mu_star_p = wsisa__sa_calloc(k, sizeof(double), e);
  out->sigma_p = wsisa__sa_calloc(k, sizeof(double), e);
  out->neffects = wsisa__sa_calloc(k, sizeof(size_t), e);
  int rc = ee && ee_p && out->mu && out->mu_star && out->sigma && out->mu_p && out->mu_star_p &&
                   out->sigma_p && out->neffects
               ? 0
               : WSISA_ENOMEM;
  for (size_t t = 0; !rc && t < r; t++)
    for (size_t step = 1; step <= k; step++) {
      size_t a = t * (k + 1) + step - 1, b = a + 1;
      const double *ua = d->unit + a * k, *ub = d->unit + b * k;
      size_t moved = k, nmoved = 0;
      for (size_t i = 0; i < k; i++)
        if (ua[i] != ub[i]) {
          moved = i;
          nmoved++;
        }
      if (nmoved != 1) {
        rc = wsisa_error(e, WSISA_EINTERNAL,
                         "runs %zu and %zu are not one step of a MOAT trajectory", a, b);
        break;
      }
      out->total_effects++;
      if (!isfinite(y[a]) || !isfinite(y[b])) {
        out->dropped_effects++;
        continue;
      }
      size_t col = d->dims[moved];
      const wsisa_sa_param *p = &space->params[col];
      double dy = y[b] - y[a];
      double dv = d->values[b * d->nparams + col] - d->values[a * d->nparams + col];
      size_t n = out->neffects[moved]++;
      ee[moved * r + n] = dy / (ub[moved] - ua[moved]);
      ee_p[moved * r + n] = p->kind == WSISA_SA_CATEGORICAL ? NAN : dy / dv;
    }
  for (size_t i = 0; !rc && i < k; i++) {
    size_t n = out->neffects[i];
    summarise(ee + i * r, n, &out->mu[i], &out->mu_star[i], &out->sigma[i]);
    summarise(ee_p + i * r, n, &out->mu_p[i], &out->mu_star_p[i], &out->sigma_p[i]);
  }
  out->effects = ee;
  out->stride = r;
  free(ee_p);
  if (rc) wsisa_sa_moat_result_free(out);
  return rc;
}

int wsisa_sa_moat_mu_star_conf(const wsisa_sa_moat_result *r, size_t resamples,
                               double confidence, uint64_t seed, double *conf, wsisa_err *e) {
  double *means = wsisa__sa_calloc(resamples, sizeof *means, e);
  if (!means) return WSISA_ENOMEM;
  double z = wsisa_sa_normal_quantile(0.5 + confidence / 2);
  wsisa_sa_rng rng;
  wsisa_sa_rng_seed(&rng, seed, STREAM_MU_STAR_CONF);
  for (size_t i = 0; i < r->k; i++) {
    size_t n = r->neffects[i];
    const double *ee = r->effects + i * r->stride;
    conf[i] = NAN;
    if (n < 2 || resamples < 2) continue;
    for (size_t b = 0; b < resamples; b++) {
      double sum = 0;
      for (size_t j = 0; j < n; j++) sum += fabs(ee[wsisa_sa_rng_below(&rng, n)]);
      means[b] = sum / (double)n;
    }
    conf[i] = z * wsisa__sa_stdev(means, resamples);
  }
  free(means);
  return 0;
}

void wsisa_sa_moat_rank(const wsisa_sa_moat_result *r, size_t *order) {
  /* Insertion sort: k is a handful of parameters, and ties keep table order. */
  for (size_t i = 0; i < r->k; i++) {
    size_t j = i;
    double v = r->mu_star[i];
    while (j > 0) {
      double w = r->mu_star[order[j - 1]];
      int before = !isnan(v) && (isnan(w) || v > w);
      if (!before) break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
}
