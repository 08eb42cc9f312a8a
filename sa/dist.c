/* Distributions: the standard normal's quantile (the bootstrap's half-widths,
 * z = Phi^-1(1/2 + confidence/2)), and the dists of continuous parameters,
 * their quantiles (unit coordinate to value) and CDFs (value to unit); below
 * them, a parameter's kind name and its range, which sa/space.c uses too. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sa/sa_private.h"

static const char *const kind_names[] = {"continuous", "integer", "discrete", "categorical",
                                         "fixed"};

const char *wsisa_sa_kind_name(wsisa_sa_kind kind) {
  return (unsigned)kind < sizeof kind_names / sizeof *kind_names ? kind_names[kind] : "?";
}

double wsisa_sa_param_clamp(const wsisa_sa_param *p, double v) {
  return v < p->lo ? p->lo : v > p->hi ? p->hi : v;
}

/* Acklam's rational approximation (relative error 1.15e-9), refined by one
 * Halley step on the exact CDF 0.5 erfc(-x / sqrt 2). */
double wsisa_sa_normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  if (!(p > 0)) return p == 0 ? -INFINITY : NAN;
  if (!(p < 1)) return p == 1 ? INFINITY : NAN;
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    double q = sqrt(-2 * log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double err = 0.5 * erfc(-x / sqrt(2)) - p;
  double u = err * 2.5066282746310002 * exp(x * x / 2); /* sqrt(2 pi) */
  return x - u / (1 + x * u / 2);
}

/* ---- parameter distributions (SALib's names and bounds) ---------------------------- */

/* One row per dist, in the enum's order: its name, how many bounds it takes
 * and what they are. */
static const struct {
  const char *name;
  size_t nbounds;
  const char *bounds;
} dists[] = {
    {"unif", 2, "low, high"},
    {"norm", 2, "mean, sd"},
    {"truncnorm", 4, "low, high, mean, sd"},
    {"lognorm", 2, "mean, sd of ln x"},
    {"triang", 3, "low, high, peak as a fraction of the width"},
    {"logunif", 2, "low, high, both above 0"},
};

const char *wsisa_sa_dist_name(wsisa_sa_dist dist) {
  return (unsigned)dist < WSISA_SA_NDISTS ? dists[dist].name : "?";
}

int wsisa_sa_dist_from_name(const char *name) {
  for (int i = 0; i < WSISA_SA_NDISTS; i++)
    if (strcmp(name, dists[i].name) == 0) return i;
  return -1;
}

const char *wsisa_sa_dist_names(void) {
  static char list[128];
  if (!list[0])
    for (int i = 0; i < WSISA_SA_NDISTS; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               dists[i].name);
  return list;
}

size_t wsisa_sa_dist_nbounds(wsisa_sa_dist dist) {
  return (unsigned)dist < WSISA_SA_NDISTS ? dists[dist].nbounds : 0;
}

static double normal_cdf(double z) { return 0.5 * erfc(-z / sqrt(2)); }

int wsisa_sa_param_set_dist(wsisa_sa_param *p, wsisa_sa_dist dist, const double *given,
                            size_t nb, wsisa_err *e) {
  const char *n = p->name, *dn = wsisa_sa_dist_name(dist);
  if ((unsigned)dist >= WSISA_SA_NDISTS)
    return wsisa_error(e, WSISA_EUSAGE, "%s.dist: unknown distribution %d", n, (int)dist);
  if (p->kind != WSISA_SA_CONTINUOUS)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s.dist: %s applies to continuous parameters only; %s is %s (its "
                       "values each own an equal share of [0, 1]: give it a continuous "
                       "range, or keep it uniform)",
                       n, dn, n, wsisa_sa_kind_name(p->kind));
  /* SALib's older triang [hi, c] starts at 0 (its two-value form, which a
   * SALib parameter file, two bounds a line, can only give) */
  double b[4] = {0, 0, 0, 0};
  int older = dist == WSISA_SA_TRIANG && nb == 2;
  if (older) {
    b[1] = given[0];
    b[2] = given[1];
  } else {
    memcpy(b, given, (nb < 4 ? nb : 4) * sizeof *b);
  }
  if (!older && nb != dists[dist].nbounds)
    return wsisa_error(e, WSISA_EUSAGE, "%s.bounds: %s takes %zu bounds (%s), not %zu", n, dn,
                       dists[dist].nbounds, dists[dist].bounds, nb);
  for (size_t i = 0; i < nb; i++)
    if (!isfinite(given[i]))
      return wsisa_error(e, WSISA_EUSAGE, "%s.bounds: bound %zu of %s is not a finite number", n,
                         i + 1, dn);
  double lo = b[0], hi = b[1];
  switch (dist) {
    case WSISA_SA_UNIF:
    case WSISA_SA_TRIANG:
    case WSISA_SA_TRUNCNORM:
    case WSISA_SA_LOGUNIF:
      if (!(lo < hi))
        return wsisa_error(e, WSISA_EUSAGE, "%s.bounds: %s needs low < high, not %g, %g%s", n, dn,
                           lo, hi, older ? " (its two-bound form [high, peak] starts at 0)" : "");
      if (dist == WSISA_SA_LOGUNIF && !(lo > 0))
        return wsisa_error(e, WSISA_EUSAGE,
                           "%s.bounds: logunif's low %g is not above 0 (ln x must be defined)", n,
                           lo);
      if (dist == WSISA_SA_TRIANG && !(b[2] >= 0 && b[2] <= 1))
        return wsisa_error(e, WSISA_EUSAGE,
                           "%s.bounds: triang's peak %g is not a fraction of the width (0 to 1)",
                           n, b[2]);
      if (dist == WSISA_SA_TRUNCNORM && !(b[3] > 0))
        return wsisa_error(e, WSISA_EUSAGE, "%s.bounds: truncnorm's sd %g is not positive", n,
                           b[3]);
      if (dist == WSISA_SA_TRUNCNORM &&
          !(normal_cdf((hi - b[2]) / b[3]) - normal_cdf((lo - b[2]) / b[3]) > 1e-300))
        return wsisa_error(e, WSISA_EUSAGE,
                           "%s.bounds: truncnorm's [%g, %g] holds no probability of a normal "
                           "of mean %g, sd %g",
                           n, lo, hi, b[2], b[3]);
      break;
    case WSISA_SA_NORM:
    case WSISA_SA_LOGNORM:
      if (!(hi > 0))
        return wsisa_error(e, WSISA_EUSAGE, "%s.bounds: %s's sd %g is not positive", n, dn, hi);
      lo = dist == WSISA_SA_NORM ? -INFINITY : 0;
      hi = INFINITY;
      {
        /* every value is finite: the quantiles 2^-53 inside 0 and 1 (the
         * farthest a draw goes) must not overflow a double */
        double zmax = wsisa_sa_normal_quantile(1 - 0x1p-53);
        double far[2] = {b[0] - b[1] * zmax, b[0] + b[1] * zmax};
        for (int k = 0; k < 2; k++) {
          double x = dist == WSISA_SA_NORM ? far[k] : exp(far[k]);
          if (!isfinite(x))
            return wsisa_error(e, WSISA_EUSAGE,
                               "%s.bounds: %s [%g, %g] gives values past the largest number "
                               "(at %.3g sd %s the mean)",
                               n, dn, b[0], b[1], zmax, k ? "above" : "below");
        }
      }
      break;
  }
  p->dist = dist;
  memset(p->bounds, 0, sizeof p->bounds);
  if (dist != WSISA_SA_UNIF) memcpy(p->bounds, b, dists[dist].nbounds * sizeof *b);
  p->lo = lo;
  p->hi = hi;
  return 0;
}

/* The truncated normal's quantile, from the tail where the interval lies so
 * that 1 - Phi does not lose the digits. */
static double truncnorm_quantile(const double *b, double u) {
  double alpha = (b[0] - b[2]) / b[3], beta = (b[1] - b[2]) / b[3];
  double z;
  if (alpha > 0) { /* upper tail: Q(z) = Phi(-z) */
    double qa = normal_cdf(-alpha), qb = normal_cdf(-beta);
    z = -wsisa_sa_normal_quantile(qa - u * (qa - qb));
  } else {
    double pa = normal_cdf(alpha), pb = normal_cdf(beta);
    z = wsisa_sa_normal_quantile(pa + u * (pb - pa));
  }
  double x = b[2] + b[3] * z;
  return x < b[0] ? b[0] : x > b[1] ? b[1] : x;
}

double wsisa_sa_param_quantile(const wsisa_sa_param *p, double u) {
  const double *b = p->bounds, inside = 0x1p-53;
  switch (p->dist) {
    case WSISA_SA_UNIF: break;
    case WSISA_SA_NORM:
    case WSISA_SA_LOGNORM: {
      double z = wsisa_sa_normal_quantile(u < inside ? inside : u > 1 - inside ? 1 - inside : u);
      return p->dist == WSISA_SA_NORM ? b[0] + b[1] * z : exp(b[0] + b[1] * z);
    }
    case WSISA_SA_TRUNCNORM: return truncnorm_quantile(b, u < 0 ? 0 : u > 1 ? 1 : u);
    case WSISA_SA_TRIANG: {
      double w = b[1] - b[0], c = b[2];
      u = u < 0 ? 0 : u > 1 ? 1 : u;
      double x = u < c ? b[0] + w * sqrt(u * c) : b[1] - w * sqrt((1 - u) * (1 - c));
      return x < b[0] ? b[0] : x > b[1] ? b[1] : x;
    }
    case WSISA_SA_LOGUNIF: { /* lo (hi / lo)^u, the ends exact */
      u = u < 0 ? 0 : u > 1 ? 1 : u;
      if (u == 0 || u == 1) return u == 0 ? b[0] : b[1];
      double x = exp(log(b[0]) + u * (log(b[1]) - log(b[0])));
      return x < b[0] ? b[0] : x > b[1] ? b[1] : x;
    }
  }
  return wsisa_sa_param_clamp(p, p->lo + u * (p->hi - p->lo));
}

double wsisa_sa_param_cdf(const wsisa_sa_param *p, double v) {
  const double *b = p->bounds;
  double u;
  switch (p->dist) {
    case WSISA_SA_NORM: return normal_cdf((v - b[0]) / b[1]);
    case WSISA_SA_LOGNORM: return v > 0 ? normal_cdf((log(v) - b[0]) / b[1]) : 0;
    case WSISA_SA_TRUNCNORM: {
      double alpha = (b[0] - b[2]) / b[3], beta = (b[1] - b[2]) / b[3], z = (v - b[2]) / b[3];
      if (alpha > 0) { /* the upper tail, as the quantile */
        double qa = normal_cdf(-alpha), qb = normal_cdf(-beta);
        u = (qa - normal_cdf(-z)) / (qa - qb);
      } else {
        double pa = normal_cdf(alpha), pb = normal_cdf(beta);
        u = (normal_cdf(z) - pa) / (pb - pa);
      }
      break;
    }
    case WSISA_SA_TRIANG: {
      double w = b[1] - b[0], c = b[2], t = (v - b[0]) / w;
      u = t <= c ? (c > 0 ? t * t / c : 0) : 1 - (1 - t) * (1 - t) / (1 - c);
      break;
    }
    case WSISA_SA_LOGUNIF: u = v > 0 ? log(v / b[0]) / log(b[1] / b[0]) : 0; break;
    default: u = (v - p->lo) / (p->hi - p->lo); break;
  }
  return u < 0 ? 0 : u > 1 ? 1 : u;
}
