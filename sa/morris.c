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
  size_t k = wsisa_sa_space_dims(space), nf = wsisa_sa_space_factors(space, NULL), rows = nf + 1;
  size_t *factor = wsisa__sa_calloc(k + 1, sizeof *factor, e);
  double *base = wsisa__sa_calloc(count * k, sizeof *base, e);
  unsigned *pi = wsisa__sa_calloc(k, sizeof *pi, e), *jump = wsisa__sa_calloc(k, sizeof *jump, e);
  long *level = wsisa__sa_calloc(k, sizeof *level, e), *dir = wsisa__sa_calloc(k, sizeof *dir, e);
  size_t *order = wsisa__sa_calloc(k, sizeof *order, e);
  int rc = factor && base && pi && jump && level && dir && order ? 0 : WSISA_ENOMEM;
  if (rc) goto done;
  wsisa_sa_space_factors(space, factor);
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
    }
    /* factors (groups) move in a random order, each parameter of a group in
     * its own direction (Campolongo et al. 2007) */
    for (size_t f = 0; f < nf; f++) order[f] = f;
    for (size_t i = nf; i > 1; i--) {
      size_t s = (size_t)wsisa_sa_rng_below(&rng, i), tmp = order[i - 1];
      order[i - 1] = order[s];
      order[s] = tmp;
    }
    for (size_t step = 0; step < rows; step++) {
      if (step > 0)
        for (size_t i = 0; i < k; i++)
          if (factor[i] == order[step - 1]) level[i] += dir[i] * (long)jump[i];
      for (size_t i = 0; i < k; i++)
        traj[step * k + i] = (double)level[i] / (double)(pi[i] - 1);
    }
  }
done:
  free(factor);
  free(base);
  free(pi);
  free(jump);
  free(level);
  free(dir);
  free(order);
  return rc;
}

int wsisa__sa_check_group_steps(const wsisa_sa_space *space, const wsisa_sa_opts *o,
                                wsisa_err *e) {
  for (size_t i = 0; i < space->nparams; i++) {
    const wsisa_sa_param *p = &space->params[i];
    if (p->kind == WSISA_SA_FIXED || !p->group[0]) continue;
    for (size_t j = 0; j < i; j++) {
      const wsisa_sa_param *q = &space->params[j];
      if (q->kind == WSISA_SA_FIXED || strcmp(p->group, q->group)) continue;
      unsigned pp, jp, pq, jq;
      grid_of(p, o->levels, &pp, &jp);
      grid_of(q, o->levels, &pq, &jq);
      if (pp != pq)
        return wsisa_error(e, WSISA_EUSAGE,
                           "group %s: %s has %u levels and %s %u; MOAT moves a group by one "
                           "step, so its parameters need the same number of levels",
                           p->group, q->name, pq, p->name, pp);
      break;
    }
  }
  return 0;
}

/* ---- Campolongo selection ------------------------------------------------------ */

/* Campolongo 2007 eq. 2: sum over all point pairs of their Euclidean distance. */
static double distance(const double *t1, const double *t2, size_t rows, size_t k) {
  double d = 0;
  for (size_t a = 0; a < rows; a++)
    for (size_t b = 0; b < rows; b++) {
      double s = 0;
      for (size_t z = 0; z < k; z++) {
        double diff = t1[a * k + z] - t2[b * k + z];
        s += diff * diff;
      }
      d += sqrt(s);
    }
  return d;
}

double wsisa_sa_morris_distance(const double *t1, const double *t2, size_t k) {
  return distance(t1, t2, k + 1, k);
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
  return wsisa__sa_morris_select(pool, m, k + 1, k, r, chosen, e);
}

int wsisa__sa_morris_select(const double *pool, size_t m, size_t rows, size_t k, size_t r,
                            size_t *chosen, wsisa_err *e) {
  if (r > m || r == 0)
    return wsisa_error(e, WSISA_EUSAGE, "pool: cannot choose %zu of %zu trajectories", r, m);
  size_t size = rows * k;
  double *d2 = wsisa__sa_calloc(m * m, sizeof *d2, e);
  double *contrib = wsisa__sa_calloc(m, sizeof *contrib, e);
  unsigned char *alive = wsisa__sa_calloc(m, 1, e);
  size_t *combination = wsisa__sa_calloc(r, sizeof *combination, e);
  int rc = d2 && contrib && alive && combination ? 0 : WSISA_ENOMEM;
  if (!rc) {
    for (size_t a = 0; a < m; a++)
      for (size_t b = a + 1; b < m; b++) {
        double d = distance(pool + a * size, pool + b * size, rows, k);
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
  size_t k = d->ndims, nf = d->nfactors, r = d->groups, rows = nf + 1;
  out->k = nf;
  double *ee = wsisa__sa_calloc(nf * r, sizeof *ee, e);
  double *ee_p = wsisa__sa_calloc(nf * r, sizeof *ee_p, e);
  size_t *members = wsisa__sa_calloc(nf, sizeof *members, e);
  out->mu = wsisa__sa_calloc(nf, sizeof(double), e);
  out->mu_star = wsisa__sa_calloc(nf, sizeof(double), e);
  out->sigma = wsisa__sa_calloc(nf, sizeof(double), e);
  out->mu_p = wsisa__sa_calloc(nf, sizeof(double), e);
  out->mu_star_p = wsisa__sa_calloc(nf, sizeof(double), e);
  out->sigma_p = wsisa__sa_calloc(nf, sizeof(double), e);
  out->neffects = wsisa__sa_calloc(nf, sizeof(size_t), e);
  int rc = ee && ee_p && members && out->mu && out->mu_star && out->sigma && out->mu_p &&
                   out->mu_star_p && out->sigma_p && out->neffects
               ? 0
               : WSISA_ENOMEM;
  for (size_t i = 0; !rc && i < k; i++) members[d->factor[i]]++;
  for (size_t t = 0; !rc && t < r; t++)
    for (size_t step = 1; step < rows; step++) {
      size_t a = t * rows + step - 1, b = a + 1;
      const double *ua = d->unit + a * k, *ub = d->unit + b * k;
      /* the step moves every parameter of one factor (group), and no other */
      size_t moved = k, nmoved = 0;
      int ok = 1;
      for (size_t i = 0; i < k; i++)
        if (ua[i] != ub[i]) {
          if (moved == k) moved = i;
          else ok = ok && d->factor[i] == d->factor[moved];
          nmoved++;
        }
      size_t f = moved < k ? d->factor[moved] : 0;
      if (!ok || moved == k || nmoved != members[f]) {
        rc = wsisa_error(e, WSISA_EINTERNAL,
                         "runs %zu and %zu are not one step of a MOAT trajectory", a, b);
        break;
      }
      /* a group's step: every member moves by the same amount in unit terms */
      double du = fabs(ub[moved] - ua[moved]);
      for (size_t i = 0; i < k; i++)
        if (d->factor[i] == f && !(fabs(fabs(ub[i] - ua[i]) - du) <= 1e-9)) {
          rc = wsisa_error(e, WSISA_EUSAGE,
                           "runs %zu and %zu: the parameters of group %s move by different "
                           "steps (%.6g and %.6g in unit terms); a group moves by one step",
                           a, b, wsisa_sa_space_factor_name(space, f), du,
                           fabs(ub[i] - ua[i]));
          break;
        }
      if (rc) break;
      out->total_effects++;
      if (!isfinite(y[a]) || !isfinite(y[b])) {
        out->dropped_effects++;
        continue;
      }
      double dy = y[b] - y[a];
      size_t n = out->neffects[f]++;
      if (members[f] == 1) {
        size_t col = d->dims[moved];
        const wsisa_sa_param *p = &space->params[col];
        double dv = d->values[b * d->nparams + col] - d->values[a * d->nparams + col];
        ee[f * r + n] = dy / (ub[moved] - ua[moved]);
        ee_p[f * r + n] = p->kind == WSISA_SA_CATEGORICAL ? NAN : dy / dv;
      } else {
        /* members move up and down: the effect's sign is not defined, its size is */
        ee[f * r + n] = fabs(dy) / du;
        ee_p[f * r + n] = NAN;
      }
    }
  for (size_t f = 0; !rc && f < nf; f++) {
    size_t n = out->neffects[f];
    summarise(ee + f * r, n, &out->mu[f], &out->mu_star[f], &out->sigma[f]);
    summarise(ee_p + f * r, n, &out->mu_p[f], &out->mu_star_p[f], &out->sigma_p[f]);
    if (members[f] > 1) out->mu[f] = out->sigma[f] = NAN; /* as SALib: mu* only */
  }
  out->effects = ee;
  out->stride = r;
  free(ee_p);
  free(members);
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
