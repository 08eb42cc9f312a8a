/* Parameter spaces: the kinds of parameter, their checks, and the map from the
 * unit interval to values (the conventions are spelled out in sa.h); a
 * continuous parameter's distribution is sa/dist.c's. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_private.h"

/* Levels of a discrete range; the range must hold a whole number of steps
 * (checked with a relative tolerance so 2.5..7.5 by 0.5 is 11 levels). */
static size_t discrete_count(const wsisa_sa_param *p) {
  double steps = (p->hi - p->lo) / p->step;
  return (size_t)floor(steps + 1e-9) + 1;
}

static int is_whole(double x) { return isfinite(x) && x == floor(x); }

size_t wsisa_sa_param_count(const wsisa_sa_param *p) {
  switch (p->kind) {
    case WSISA_SA_CONTINUOUS: return 0;
    case WSISA_SA_INTEGER: return (size_t)(p->hi - p->lo) + 1;
    case WSISA_SA_DISCRETE: return discrete_count(p);
    case WSISA_SA_CATEGORICAL: return p->nvalues;
    case WSISA_SA_FIXED: return 1;
  }
  return 0;
}

/* A discrete level snapped to 12 significant digits, so 0.1-steps give 0.3 and
 * not 0.30000000000000004: the value then prints and parses back unchanged. */
static double snap(double x) {
  if (x == 0 || !isfinite(x)) return x;
  double mag = pow(10, 11 - floor(log10(fabs(x))));
  double y = round(x * mag) / mag;
  return fabs(y - x) <= 1e-12 * fabs(x) ? y : x;
}

double wsisa_sa_param_at(const wsisa_sa_param *p, size_t k) {
  switch (p->kind) {
    case WSISA_SA_INTEGER: return p->lo + (double)k;
    case WSISA_SA_DISCRETE: return k + 1 == discrete_count(p) ? p->hi : snap(p->lo + (double)k * p->step);
    case WSISA_SA_CATEGORICAL: return p->values[k];
    case WSISA_SA_FIXED: return p->value;
    case WSISA_SA_CONTINUOUS: break;
  }
  return NAN;
}

double wsisa_sa_param_from_unit(const wsisa_sa_param *p, double u) {
  if (p->kind == WSISA_SA_CONTINUOUS) return wsisa_sa_param_quantile(p, u);
  if (p->kind == WSISA_SA_FIXED) return p->value;
  size_t count = wsisa_sa_param_count(p);
  double bin = floor(u * (double)count);
  size_t k = bin <= 0 ? 0 : bin >= (double)(count - 1) ? count - 1 : (size_t)bin;
  return wsisa_sa_param_at(p, k);
}

/* Rounding room at a range's ends: lo + u (hi - lo), written by this or
 * another tool, can overshoot an end by an ulp of the largest magnitude
 * involved (-1 + 1 * 1.3 is 0.30000000000000004); 10^-12 of the range, and a
 * few ulps of the ends, is far above that and far below any real step. */
static double edge_room(const wsisa_sa_param *p) {
  if (!isfinite(p->lo) || !isfinite(p->hi)) return 0; /* norm, lognorm: open ends */
  return 1e-12 * (p->hi - p->lo) + 8 * DBL_EPSILON * fmax(fabs(p->lo), fabs(p->hi));
}

int wsisa_sa_param_contains(const wsisa_sa_param *p, double v) {
  if (!isfinite(v)) return 0;
  switch (p->kind) {
    case WSISA_SA_CONTINUOUS:
      if (p->dist == WSISA_SA_LOGNORM) return v > 0;
      return v >= p->lo - edge_room(p) && v <= p->hi + edge_room(p);
    case WSISA_SA_INTEGER: return v >= p->lo && v <= p->hi && is_whole(v);
    case WSISA_SA_DISCRETE: {
      if (v < p->lo || v > p->hi) return 0;
      double k = round((v - p->lo) / p->step);
      return fabs(wsisa_sa_param_at(p, (size_t)k) - v) <= 1e-9 * fmax(1, fabs(v));
    }
    case WSISA_SA_CATEGORICAL:
      for (size_t i = 0; i < p->nvalues; i++)
        if (p->values[i] == v) return 1;
      return 0;
    case WSISA_SA_FIXED: return v == p->value;
  }
  return 0;
}

double wsisa_sa_param_midpoint(const wsisa_sa_param *p) {
  switch (p->kind) {
    case WSISA_SA_CONTINUOUS:
      return p->dist == WSISA_SA_UNIF ? 0.5 * (p->lo + p->hi) : wsisa_sa_param_quantile(p, 0.5);
    case WSISA_SA_INTEGER: return floor(0.5 * (p->lo + p->hi));
    case WSISA_SA_DISCRETE: return wsisa_sa_param_at(p, (discrete_count(p) - 1) / 2);
    case WSISA_SA_CATEGORICAL: return p->values[0];
    case WSISA_SA_FIXED: return p->value;
  }
  return p->value;
}

int wsisa_sa_param_check(const wsisa_sa_param *p, wsisa_err *e) {
  const char *n = p->name;
  if (!n[0]) return wsisa_error(e, WSISA_EUSAGE, "a parameter has an empty name");
  if (memchr(n, '\0', WSISA_SA_NAME_MAX) == NULL)
    return wsisa_error(e, WSISA_EUSAGE, "a parameter name is longer than %d bytes",
                       WSISA_SA_NAME_MAX - 1);
  switch (p->kind) {
    case WSISA_SA_FIXED:
      if (!isfinite(p->value))
        return wsisa_error(e, WSISA_EUSAGE, "%s.fixed: not a finite number", n);
      return 0;
    case WSISA_SA_CATEGORICAL:
      if (p->nvalues < 2 || p->nvalues > WSISA_SA_MAX_VALUES)
        return wsisa_error(e, WSISA_EUSAGE,
                           "%s.values: a categorical parameter needs 2 to %d values, not %zu "
                           "(a single value is a fixed parameter)",
                           n, WSISA_SA_MAX_VALUES, p->nvalues);
      for (size_t i = 0; i < p->nvalues; i++) {
        if (!isfinite(p->values[i]))
          return wsisa_error(e, WSISA_EUSAGE, "%s.values: value %zu is not a finite number", n, i + 1);
        for (size_t j = 0; j < i; j++)
          if (p->values[j] == p->values[i])
            return wsisa_error(e, WSISA_EUSAGE, "%s.values: %g is listed twice", n,
                               p->values[i]);
      }
      break;
    case WSISA_SA_CONTINUOUS:
    case WSISA_SA_INTEGER:
    case WSISA_SA_DISCRETE:
      if (p->dist != WSISA_SA_UNIF) {
        /* its bounds checked again, and lo, hi its support */
        wsisa_sa_param q = *p;
        int rc = wsisa_sa_param_set_dist(&q, p->dist, p->bounds,
                                         wsisa_sa_dist_nbounds(p->dist), e);
        if (rc) return rc;
        if (!(q.lo == p->lo && q.hi == p->hi))
          return wsisa_error(e, WSISA_EUSAGE, "%s.range: not the support of its %s", n,
                             wsisa_sa_dist_name(p->dist));
        break;
      }
      if (!isfinite(p->lo) || !isfinite(p->hi))
        return wsisa_error(e, WSISA_EUSAGE, "%s.range: the bounds must be finite numbers", n);
      if (p->lo >= p->hi)
        return wsisa_error(e, WSISA_EUSAGE,
                           p->lo > p->hi ? "%s.range: lower bound %g is above upper bound %g"
                                             : "%s.range: %g..%g is a single value; make the "
                                               "parameter fixed",
                           n, p->lo, p->hi);
      if (p->kind == WSISA_SA_INTEGER) {
        if (!is_whole(p->lo) || !is_whole(p->hi))
          return wsisa_error(e, WSISA_EUSAGE,
                             "%s.range: an integer range needs whole bounds, not %g..%g", n, p->lo,
                             p->hi);
        if (p->hi - p->lo > 1e15)
          return wsisa_error(e, WSISA_EUSAGE, "%s.range: the integer range %g..%g is too wide", n,
                             p->lo, p->hi);
      }
      if (p->kind == WSISA_SA_DISCRETE) {
        if (!(p->step > 0) || !isfinite(p->step))
          return wsisa_error(e, WSISA_EUSAGE, "%s.step: must be a positive number", n);
        double steps = (p->hi - p->lo) / p->step;
        /* a step wider than the range leaves one value: the parameter would
         * be constant while the design counts it as varying */
        if (round(steps) < 1)
          return wsisa_error(e, WSISA_EUSAGE,
                             "%s.step: %g leaves a single value in %g..%g (a range needs at "
                             "least two; make the parameter fixed)",
                             n, p->step, p->lo, p->hi);
        if (fabs(steps - round(steps)) > 1e-9 * fmax(1, steps))
          return wsisa_error(e, WSISA_EUSAGE,
                             "%s.step: the range %g..%g is not a whole number of steps of %g", n,
                             p->lo, p->hi, p->step);
        if (steps > 1e9)
          return wsisa_error(e, WSISA_EUSAGE, "%s.step: %g steps are too many levels", n, steps);
      }
      break;
  }
  if (p->group[0] && memchr(p->group, '\0', WSISA_SA_NAME_MAX) == NULL)
    return wsisa_error(e, WSISA_EUSAGE, "%s.group: longer than %d bytes", n,
                       WSISA_SA_NAME_MAX - 1);
  /* The default may lie outside the SA range: G2's reference value 45 does. */
  if (!isfinite(p->value))
    return wsisa_error(e, WSISA_EUSAGE, "%s.default: not a finite number", n);
  return 0;
}

/* ---- spaces ---------------------------------------------------------------- */

wsisa_sa_space *wsisa_sa_space_new(void) { return calloc(1, sizeof(wsisa_sa_space)); }

void wsisa_sa_space_free(wsisa_sa_space *space) {
  if (!space) return;
  free(space->params);
  free(space);
}

long wsisa_sa_space_find(const wsisa_sa_space *space, const char *name) {
  for (size_t i = 0; i < space->nparams; i++)
    if (strcmp(space->params[i].name, name) == 0) return (long)i;
  return -1;
}

int wsisa_sa_space_add(wsisa_sa_space *space, const wsisa_sa_param *p, wsisa_err *e) {
  int rc = wsisa_sa_param_check(p, e);
  if (rc) return rc;
  if (wsisa_sa_space_find(space, p->name) >= 0)
    return wsisa_error(e, WSISA_EUSAGE, "%s: the parameter is defined twice", p->name);
  if (space->nparams == space->cap) {
    size_t cap = space->cap ? 2 * space->cap : 16;
    wsisa_sa_param *grown = realloc(space->params, cap * sizeof *grown);
    if (!grown) return wsisa_error(e, WSISA_ENOMEM, "out of memory growing a parameter space");
    space->params = grown;
    space->cap = cap;
  }
  space->params[space->nparams++] = *p;
  return 0;
}

size_t wsisa_sa_space_dims(const wsisa_sa_space *space) {
  size_t d = 0;
  for (size_t i = 0; i < space->nparams; i++) d += space->params[i].kind != WSISA_SA_FIXED;
  return d;
}

/* The first varying parameter of i's group (i itself without a group). */
static size_t group_head(const wsisa_sa_space *space, size_t i) {
  const char *g = space->params[i].group;
  for (size_t j = 0; g[0] && j < i; j++)
    if (space->params[j].kind != WSISA_SA_FIXED && strcmp(space->params[j].group, g) == 0)
      return j;
  return i;
}

size_t wsisa_sa_space_factors(const wsisa_sa_space *space, size_t *factor) {
  size_t nf = 0, d = 0;
  for (size_t i = 0; i < space->nparams; i++) {
    if (space->params[i].kind == WSISA_SA_FIXED) continue;
    size_t head = group_head(space, i), f = nf;
    if (head == i) nf++;
    else /* the factor of the head: the heads before it */
      for (size_t j = f = 0; j < head; j++)
        f += space->params[j].kind != WSISA_SA_FIXED && group_head(space, j) == j;
    if (factor) factor[d] = f;
    d++;
  }
  return nf;
}

const char *wsisa_sa_space_factor_name(const wsisa_sa_space *space, size_t f) {
  for (size_t i = 0, nf = 0; i < space->nparams; i++)
    if (space->params[i].kind != WSISA_SA_FIXED && group_head(space, i) == i && nf++ == f)
      return space->params[i].group[0] ? space->params[i].group : space->params[i].name;
  return "?";
}

int wsisa_sa_space_group(wsisa_sa_space *space, const char *group, const char *name,
                         wsisa_err *e) {
  if (!group[0] || strlen(group) >= WSISA_SA_NAME_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "a group name must have 1 to %d bytes",
                       WSISA_SA_NAME_MAX - 1);
  long at = wsisa_sa_space_find(space, name);
  if (at < 0)
    return wsisa_error(e, WSISA_EUSAGE, "group %s: '%s' is not a parameter", group, name);
  wsisa_sa_param *p = &space->params[at];
  if (p->group[0])
    return wsisa_error(e, WSISA_EUSAGE, "%s is in two groups, %s and %s (a parameter moves "
                       "with one group)", name, p->group, group);
  snprintf(p->group, sizeof p->group, "%s", group);
  return 0;
}

int wsisa_sa_space_check_groups(const wsisa_sa_space *space, wsisa_err *e) {
  for (size_t i = 0; i < space->nparams; i++) {
    const char *g = space->params[i].group;
    long at = g[0] ? wsisa_sa_space_find(space, g) : -1;
    if (at >= 0 && strcmp(space->params[at].group, g) != 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "group %s: also the name of a parameter outside it; rename the group",
                         g);
  }
  return 0;
}

int wsisa_sa_space_grouped(const wsisa_sa_space *space) {
  return wsisa_sa_space_factors(space, NULL) < wsisa_sa_space_dims(space);
}

int wsisa_sa_space_clone(const wsisa_sa_space *space, wsisa_sa_space **out, wsisa_err *e) {
  *out = NULL;
  wsisa_sa_space *copy = wsisa_sa_space_new();
  if (!copy) return wsisa_error(e, WSISA_ENOMEM, "out of memory copying a parameter space");
  for (size_t i = 0; i < space->nparams; i++) {
    int rc = wsisa_sa_space_add(copy, &space->params[i], e);
    if (rc) {
      wsisa_sa_space_free(copy);
      return rc;
    }
  }
  *out = copy;
  return 0;
}

int wsisa_sa_space_select(const wsisa_sa_space *space, const char *const *names,
                          size_t nnames, wsisa_sa_space **out, wsisa_err *e) {
  *out = NULL;
  for (size_t i = 0; i < nnames; i++) {
    long at = wsisa_sa_space_find(space, names[i]);
    if (at < 0)
      return wsisa_error(e, WSISA_EUSAGE, "%s: not a parameter of the study", names[i]);
    if (space->params[at].kind == WSISA_SA_FIXED)
      return wsisa_error(e, WSISA_EUSAGE, "%s: a fixed parameter cannot be selected",
                         names[i]);
    for (size_t j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return wsisa_error(e, WSISA_EUSAGE, "%s: selected twice", names[i]);
  }
  int rc = wsisa_sa_space_clone(space, out, e);
  if (rc) return rc;
  for (size_t i = 0; i < (*out)->nparams; i++) {
    wsisa_sa_param *p = &(*out)->params[i];
    int keep = 0;
    for (size_t j = 0; j < nnames && !keep; j++) keep = strcmp(p->name, names[j]) == 0;
    if (!keep) p->kind = WSISA_SA_FIXED;
  }
  return 0;
}
