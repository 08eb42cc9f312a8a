/* sa: parameter spaces, samplers, designs (MOAT trajectories, Saltelli A/B/AB_i)
 * and sensitivity indices. Pure C (libc, libm; errors by core's wsisa_error):
 * arrays in, arrays out. */
#ifndef WSISA_SA_H
#define WSISA_SA_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* Conventions (every number wsisa reports follows these):
 *
 * Unit cube. Samplers produce points u in [0,1]^d; each varying parameter maps
 * its coordinate to a value with an explicit rule, never by rounding a
 * continuous value:
 *   continuous   lo + u (hi - lo), clamped to [lo, hi] (rounding can
 *                overshoot an end by an ulp); under a non-uniform dist its
 *                quantile at u (wsisa_sa_dist; MOAT's grid levels are then
 *                quantiles, and its effects dy / du are in quantile space)
 *   integer      lo + min(floor(u K), K - 1),  K = hi - lo + 1 integers
 *   discrete     level[min(floor(u K), K - 1)], K levels lo, lo + step, ..., hi
 *   categorical  value[min(floor(u K), K - 1)], K values in the order given
 * so each of the K values of a finite parameter owns an equal share of [0,1].
 * Finitely-valued parameters can make two runs identical: designs count such
 * rows (wsisa_sa_design.nduplicates) so the caller can say so.
 *
 * Sequences. All but sobol_owen are unscrambled, so the seed does not change
 * them; the seed drives MC, LHS, sobol_owen's scrambling, MOAT directions and
 * orders, and the bootstraps.
 *   halton      point j (j = 0, 1, ...) is (phi_2(j+1), phi_3(j+1), phi_5(j+1), ...):
 *               it starts at index 1, skipping the origin.
 *   hammersley  point j of n is ((j + 1/2)/n, phi_2(j+1), phi_3(j+1), ...): the
 *               first coordinate is the centre of stratum j, the rest is Halton.
 *   sobol       Joe & Kuo (2008) direction numbers (new-joe-kuo-6.21201, 1024
 *               dimensions), Gray-code order, 32-bit; it starts at index 1,
 *               skipping the origin, so point j is the (j+1)-th point of the
 *               published sequence. Point 1 is (1/2, ..., 1/2): the first VBD
 *               base sample has A = B and adds nothing to the estimators (a
 *               1/N shrinkage), and several rows repeat; designs count them.
 *   sobol_owen  the same points with Owen's nested uniform scrambling (Owen
 *               1995), its random bits hashed from (seed, dimension, depth,
 *               the bits above): bit b of a coordinate flips by a coin shared
 *               by every point with the same b leading bits. Skip rule: it
 *               starts at index 0, the origin included (scrambled, it is a
 *               point like any other), so the first 2^m points keep the net's
 *               balance, one point in each 2^-m slice of every coordinate;
 *               skipping points would break it. N a power of 2 is best.
 *   lhs         stratum of row j in dimension i is a uniform random permutation;
 *               the point is uniform inside its stratum.
 *   mc          xoshiro256** seeded through splitmix64.
 *
 * MOAT (Morris 1991, Campolongo et al. 2007; seed 000 §3). The global grid has p
 * levels (p even). A parameter with K < p distinct values uses p_i = K levels.
 * Parameter i jumps J_i = floor(p_i / 2) grid steps, Delta_i = J_i / (p_i - 1) in
 * unit-cube terms, which is Morris' Delta = p / (2 (p - 1)) for even p. Grid level
 * g (0..p_i-1) has unit coordinate g / (p_i - 1); it maps to continuous values by
 * lo + u (hi - lo), and to finite values by index round(u (K - 1)). A trajectory
 * starts at a base point drawn from the study's sampler (base level
 * floor(u (p_i - J_i))), each factor starts low or high with probability 1/2 and
 * factors move in a random order. Elementary effects are reported in grid units
 * (dy / Delta_i) and in parameter units (dy / dvalue; not defined for
 * categorical parameters: NaN). sigma uses the n - 1 denominator.
 * Groups (Campolongo, Cariboni & Saltelli 2007): with G factors (groups, a
 * parameter without one its own) a trajectory has G + 1 runs; each step
 * moves every parameter of one group by its J_i (each in its own direction),
 * groups in a random order; the parameters of a group must share p_i. A
 * group's effect is |dy| / Delta: mu* per group, mu and sigma (and *_p)
 * NaN for a group of 2 or more, as SALib.
 * Campolongo selection keeps the r trajectories of a pool of M with the largest
 * sum of squared pairwise distances (Campolongo 2007, eq. 3): exhaustively when
 * C(M, r) is small, otherwise by removing, one at a time, the trajectory whose
 * loss costs least.
 *
 * VBD (Saltelli et al. 2010). A and B are the two halves of ONE 2k-dimensional
 * sequence (point j: A_j = u[0..k-1], B_j = u[k..2k-1]); AB_i is A with column i
 * from B, BA_i is B with column i from A. Runs are grouped by base sample:
 * A_j, AB_j^1..AB_j^k, [BA_j^1..BA_j^k when second order], B_j. With groups,
 * AB_j^g takes every column of group g from B (G blocks for G factors), and
 * the indices are the groups'.
 * Outputs are first centred on the mean of f(A) and f(B), which leaves every
 * estimator's expectation unchanged and keeps a large offset from inflating
 * its variance.
 *   V   = population variance of f(A) and f(B) together (2N values)
 *   S1  = mean(f(B) (f(AB_i) - f(A))) / V                 (Saltelli 2010)
 *   ST  = mean((f(A) - f(AB_i))^2) / (2 V)                (Jansen 1999)
 *   S2  = mean(f(BA_i) f(AB_j) - f(A) f(B)) / V - S1_i - S1_j   (Saltelli 2002)
 * Bootstrap: R resamples of the N base samples with replacement (whole groups),
 * the indices recomputed on each; the interval is the percentile interval at the
 * requested confidence (linear interpolation between order statistics), and se
 * the standard deviation of the resampled indices (n - 1). With quasi-random
 * designs the interval is indicative only: the points are not independent.
 *
 * Correlation. Pearson; Spearman = Pearson of ranks, ties get their average
 * rank; PCC = partial correlation of x_i and y given every other varying
 * parameter, from the inputs' correlation matrix R and their correlations r
 * with y: beta = R^-1 r, pcc_i = beta_i / sqrt((1 - r.beta) (R^-1)_ii + beta_i^2)
 * (exactly +-1 for an exact linear model); PRCC = PCC of ranks. A constant
 * input is left out of the conditioning; collinear inputs give NaN. When the
 * other inputs leave none of y's variance (below 10^-10 of it: y an exact
 * linear function of them), x_i's coefficient is 0/0: NaN, with the reason,
 * never the +-1 or 10^-9 that rounding would make of it. */

/* ---- random numbers ------------------------------------------------------- */

typedef struct wsisa_sa_rng {
  uint64_t s[4];
} wsisa_sa_rng;

/* Independent streams from one seed: the same (seed, stream) gives the same
 * numbers on every platform. */
void wsisa_sa_rng_seed(wsisa_sa_rng *rng, uint64_t seed, uint64_t stream);
uint64_t wsisa_sa_rng_next(wsisa_sa_rng *rng);
/* Uniform in [0, 1), 53 random bits. */
double wsisa_sa_rng_uniform(wsisa_sa_rng *rng);
/* Uniform integer in [0, n), unbiased; n > 0. */
uint64_t wsisa_sa_rng_below(wsisa_sa_rng *rng, uint64_t n);

/* ---- parameter space -------------------------------------------------------- */

typedef enum {
  WSISA_SA_CONTINUOUS = 0,
  WSISA_SA_INTEGER,
  WSISA_SA_DISCRETE,
  WSISA_SA_CATEGORICAL,
  WSISA_SA_FIXED
} wsisa_sa_kind;

#define WSISA_SA_NAME_MAX 64
#define WSISA_SA_MAX_VALUES 64

/* The distribution of a continuous parameter (SALib's names and `bounds`):
 *   unif       [lo, hi]                                     (the default)
 *   norm       [mean, sd]
 *   truncnorm  [lo, hi, mean, sd]: the normal cut to [lo, hi]
 *   lognorm    [mean, sd] of ln x
 *   triang     [lo, hi, c]: peak at lo + c (hi - lo), 0 <= c <= 1; SALib's
 *              older [hi, c] (lo = 0) is read as [0, hi, c]
 *   logunif    [lo, hi], 0 < lo < hi: ln x uniform on [ln lo, ln hi]
 * applied to the unit coordinate by the inverse CDF (quantile). */
typedef enum {
  WSISA_SA_UNIF = 0,
  WSISA_SA_NORM,
  WSISA_SA_TRUNCNORM,
  WSISA_SA_LOGNORM,
  WSISA_SA_TRIANG,
  WSISA_SA_LOGUNIF
} wsisa_sa_dist;

#define WSISA_SA_NDISTS 6

typedef struct wsisa_sa_param {
  char name[WSISA_SA_NAME_MAX];
  wsisa_sa_kind kind;
  double lo, hi;   /* continuous, integer, discrete: closed range */
  double step;     /* discrete: levels lo, lo + step, ..., hi */
  size_t nvalues;  /* categorical */
  double values[WSISA_SA_MAX_VALUES];
  double value;    /* fixed: the value; otherwise the default, used when a
                      two-phase study fixes the parameter */
  int level;       /* reuse task level (1..7) of a segmentation parameter, else 0 */
  wsisa_sa_dist dist;  /* continuous only; unif for every other kind */
  double bounds[4];    /* a non-uniform dist's SALib bounds; lo, hi then hold
                          its support (+-inf where unbounded) */
  char group[WSISA_SA_NAME_MAX]; /* the group it moves with (MOAT, VBD), or
                                    "": a group of its own */
} wsisa_sa_param;

typedef struct wsisa_sa_space {
  size_t nparams;
  wsisa_sa_param *params;
  size_t cap;
} wsisa_sa_space;

const char *wsisa_sa_kind_name(wsisa_sa_kind kind);

/* Check a parameter on its own: a message names the parameter and the fault. */
int wsisa_sa_param_check(const wsisa_sa_param *p, wsisa_err *e);
/* Number of distinct values: 0 for continuous, 1 for fixed. */
size_t wsisa_sa_param_count(const wsisa_sa_param *p);
/* The k-th value (0 <= k < count) of a finitely-valued parameter. */
double wsisa_sa_param_at(const wsisa_sa_param *p, size_t k);
/* The standard normal's quantile (inverse CDF) at p in (0, 1), to about
 * 10^-15 (Acklam's approximation and a Halley step on erfc); +-inf at 0, 1. */
double wsisa_sa_normal_quantile(double p);

/* "unif", "norm", ...; -1 for an unknown name. */
const char *wsisa_sa_dist_name(wsisa_sa_dist dist);
int wsisa_sa_dist_from_name(const char *name);
/* Every dist's name, "unif, norm, ...", for messages. */
const char *wsisa_sa_dist_names(void);
/* How many bounds a dist takes (SALib's; triang also reads 2, SALib's older
 * form). */
size_t wsisa_sa_dist_nbounds(wsisa_sa_dist dist);
/* Give a continuous parameter a dist with SALib's bounds, checked: a message
 * names the parameter and the fault (an integer, discrete or categorical
 * parameter is refused: its K values each own 1/K of the unit interval).
 * triang's two-bound form [hi, c] is kept as [0, hi, c]. */
int wsisa_sa_param_set_dist(wsisa_sa_param *p, wsisa_sa_dist dist, const double *bounds,
                            size_t nbounds, wsisa_err *e);
/* A continuous parameter's quantile at u in [0, 1] and its CDF at v. An
 * unbounded end (norm, lognorm) takes u = 0 or 1 as 2^-53 inside. */
double wsisa_sa_param_quantile(const wsisa_sa_param *p, double u);
double wsisa_sa_param_cdf(const wsisa_sa_param *p, double v);

/* The sampling map of the unit interval (see the conventions above). */
double wsisa_sa_param_from_unit(const wsisa_sa_param *p, double u);
/* Is `value` one the parameter can take? A continuous range's ends are
 * compared with a tolerance relative to the range (10^-12 of it, and a few
 * ulps of the ends), so lo + u (hi - lo) rounded past an end is in it. */
int wsisa_sa_param_contains(const wsisa_sa_param *p, double value);
/* `value` brought into [lo, hi]; samplers write nothing outside the range. */
double wsisa_sa_param_clamp(const wsisa_sa_param *p, double value);
/* Middle of the range (continuous), lower middle integer or level, first value. */
double wsisa_sa_param_midpoint(const wsisa_sa_param *p);

wsisa_sa_space *wsisa_sa_space_new(void);
void wsisa_sa_space_free(wsisa_sa_space *space);
/* Append a copy of `p` after checking it; names are unique. */
int wsisa_sa_space_add(wsisa_sa_space *space, const wsisa_sa_param *p, wsisa_err *e);
/* Index of a parameter by name, or -1. */
long wsisa_sa_space_find(const wsisa_sa_space *space, const char *name);
/* Number of varying (not fixed) parameters. */
size_t wsisa_sa_space_dims(const wsisa_sa_space *space);
/* Factors: the varying parameters' groups in order of first appearance, a
 * parameter without a group its own. `factor` (may be NULL) receives each
 * varying parameter's factor; returns the number of factors. */
size_t wsisa_sa_space_factors(const wsisa_sa_space *space, size_t *factor);
/* The name of factor f: its group's, or its one parameter's. */
const char *wsisa_sa_space_factor_name(const wsisa_sa_space *space, size_t f);
/* Put parameter `name` in group `group`: refused for an unknown parameter or
 * one already in another group. */
int wsisa_sa_space_group(wsisa_sa_space *space, const char *group, const char *name,
                         wsisa_err *e);
/* Refuse a group named like a parameter outside it (rows would be ambiguous). */
int wsisa_sa_space_check_groups(const wsisa_sa_space *space, wsisa_err *e);
/* Does the space group parameters? (some group has 2 or more) */
int wsisa_sa_space_grouped(const wsisa_sa_space *space);
int wsisa_sa_space_clone(const wsisa_sa_space *space, wsisa_sa_space **out, wsisa_err *e);
/* Copy of `space` keeping the named varying parameters and fixing every other
 * one at its default (the second phase of a two-phase study). */
int wsisa_sa_space_select(const wsisa_sa_space *space, const char *const *names,
                          size_t nnames, wsisa_sa_space **out, wsisa_err *e);

/* ---- the segmentation's parameters (docs/workflow.md) ---------------------------- */

#define WSISA_SA_NSEG 15

typedef struct wsisa_sa_seg_param {
  const char *name;     /* canonical: CLI, study files, CSV columns, plots */
  const char *abbrev;   /* the papers' abbreviation (minS, FH, ...) */
  int level;            /* reuse task level that first uses it, 1..7 */
  wsisa_sa_kind kind;   /* kind of its SA range */
  double def;           /* default value */
  double lo, hi, step;  /* SA range (step for discrete) */
  int integer_valued;   /* values must be whole numbers */
  double valid_lo, valid_hi; /* what the segmentation accepts */
} wsisa_sa_seg_param;

/* The 15 parameters in canonical order. */
extern const wsisa_sa_seg_param wsisa_sa_seg_params[WSISA_SA_NSEG];

/* By canonical name; NULL if there is none. */
const wsisa_sa_seg_param *wsisa_sa_seg_find(const char *name);
/* Refuse an unknown name (suggesting the canonical name for an abbreviation)
 * with WSISA_EUSAGE; on success *out is the table row. */
int wsisa_sa_seg_lookup(const char *name, const wsisa_sa_seg_param **out, wsisa_err *e);
/* Is `value` acceptable to the segmentation? The message names the parameter
 * and its valid range, e.g. "G1=300: outside the valid range 0..255". */
int wsisa_sa_seg_validate(const char *name, double value, wsisa_err *e);
/* The parameter varying over its SA range, with its default. */
void wsisa_sa_seg_to_param(const wsisa_sa_seg_param *sp, wsisa_sa_param *out);
/* The built-in space: all 15 parameters over their SA ranges. */
int wsisa_sa_space_segmentation(wsisa_sa_space **out, wsisa_err *e);

/* ---- samplers ----------------------------------------------------------------- */

typedef enum {
  WSISA_SA_MC = 0,
  WSISA_SA_LHS,
  WSISA_SA_HALTON,
  WSISA_SA_HAMMERSLEY,
  WSISA_SA_SOBOL,
  WSISA_SA_SOBOL_OWEN
} wsisa_sa_sampler;

#define WSISA_SA_NSAMPLERS 6

const char *wsisa_sa_sampler_name(wsisa_sa_sampler sampler);
/* -1 for an unknown name. */
int wsisa_sa_sampler_from_name(const char *name);

/* phi_base(index): the digits of index in `base`, mirrored about the point. */
double wsisa_sa_radical_inverse(uint64_t index, unsigned base);
/* The d-th prime, d = 0, 1, ... (2, 3, 5, ...). */
unsigned wsisa_sa_prime(size_t d);
/* Dimensions the Sobol' table covers. */
size_t wsisa_sa_sobol_max_dims(void);
/* Points first..first+n-1 of the published Sobol' sequence (index 0 is the
 * origin), row-major n x d. */
int wsisa_sa_sobol_points(uint64_t first, size_t n, size_t d, double *out, wsisa_err *e);
/* n points of [0,1]^d, row-major, with the conventions above. */
int wsisa_sa_unit_sample(wsisa_sa_sampler sampler, size_t n, size_t d, uint64_t seed,
                         double *out, wsisa_err *e);

/* ---- methods and designs ----------------------------------------------------- */

typedef enum {
  WSISA_SA_MOAT = 0,
  WSISA_SA_VBD,
  WSISA_SA_CORRELATION,
  WSISA_SA_TWO_PHASE
} wsisa_sa_method;

const char *wsisa_sa_method_name(wsisa_sa_method method);

typedef struct wsisa_sa_opts {
  wsisa_sa_method method;
  wsisa_sa_sampler sampler;
  uint64_t seed;
  /* MOAT (and the first phase of two_phase) */
  size_t trajectories;  /* r */
  unsigned levels;      /* p, even */
  size_t pool;          /* Campolongo pool M (0: no selection) */
  /* VBD, correlation (and the second phase) */
  size_t samples;       /* VBD: base samples N; correlation: runs */
  size_t bootstrap;     /* resamples (0: none) */
  double confidence;    /* of the bootstrap interval */
  int second_order;
  /* two_phase */
  size_t keep;          /* parameters kept for the second phase */
} wsisa_sa_opts;

/* The defaults for a method: MOAT r = 10, p = 4 on Halton; VBD N = 1024, 1000
 * resamples at 95 % on Sobol'; correlation 1000 runs on LHS; two-phase keeps 8.
 * Seed 1. */
void wsisa_sa_opts_default(wsisa_sa_opts *opts, wsisa_sa_method method);
/* Check the knobs against a space with `dims` varying parameters. */
int wsisa_sa_opts_check(const wsisa_sa_opts *opts, size_t dims, wsisa_err *e);

/* A design: the runs to execute. Row r of `values` is a full parameter set
 * (every parameter of the space, fixed ones included); `unit` holds the same
 * row's unit-cube (MOAT: grid) coordinates of the varying parameters. */
typedef struct wsisa_sa_design {
  wsisa_sa_method method;  /* MOAT, VBD or CORRELATION (two_phase designs are one
                              of the first two) */
  size_t nrows;
  size_t nparams;          /* columns of values */
  size_t ndims;            /* columns of unit */
  size_t *dims;            /* ndims: space index of each varying parameter */
  size_t nfactors;         /* what moves together: groups (ndims without them) */
  size_t *factor;          /* ndims: the factor of each varying parameter */
  double *unit;            /* nrows x ndims */
  double *values;          /* nrows x nparams */
  size_t groups;           /* MOAT: trajectories; VBD: base samples N; else nrows */
  size_t group_size;       /* rows per group: G + 1 (MOAT), G + 2 or 2G + 2 (VBD), 1;
                              G factors (k parameters without groups) */
  int second_order;
  size_t nduplicates;      /* rows equal to an earlier row */
} wsisa_sa_design;

/* The design of `opts` over `space` (two_phase: its first phase, MOAT). With
 * every parameter fixed it is the one run of the fixed values (ndims 0, one
 * group of one): nothing varies, so there are no indices to compute. */
int wsisa_sa_design_make(const wsisa_sa_space *space, const wsisa_sa_opts *opts,
                         wsisa_sa_design **out, wsisa_err *e);
/* Fill a design's values and duplicate count from its unit coordinates. */
int wsisa_sa_design_map(const wsisa_sa_space *space, wsisa_sa_design *design,
                        wsisa_err *e);
void wsisa_sa_design_free(wsisa_sa_design *design);
/* A design made elsewhere: `values` (nrows x every parameter of the space,
 * fixed ones at their value) checked to be laid out as `method` needs and
 * taken as a design of it. MOAT (two_phase: its first phase): trajectories
 * of G + 1 rows, one factor (a parameter, or a group with all its
 * parameters) moving per step and each once; VBD: Saltelli groups A,
 * AB_1..AB_G, [BA_1..BA_G,] B (second order as the rows show;
 * `second_order` is tried first); correlation: any 3 rows or more. G is the
 * number of factors (wsisa_sa_space_factors), k without groups.
 * Refused with a message naming the first row that breaks the layout, or a
 * value outside its parameter's range ("row N" counts rows from 1). */
int wsisa_sa_design_from_values(const wsisa_sa_space *space, wsisa_sa_method method,
                                int second_order, const double *values, size_t nrows,
                                wsisa_sa_design **out, wsisa_err *e);

/* MOAT pieces, exposed for tests and callers with their own pools. */
/* Grid coordinates of `count` trajectories, each (G+1) x k, into `unit`. */
int wsisa_sa_morris_trajectories(const wsisa_sa_space *space, const wsisa_sa_opts *opts,
                                 size_t count, double *unit, wsisa_err *e);
/* Campolongo distance between two trajectories (each (k+1) x k). */
double wsisa_sa_morris_distance(const double *t1, const double *t2, size_t k);
/* Choose r of the M trajectories in `pool` maximising the spread; `chosen`
 * receives r indices in increasing order. */
int wsisa_sa_morris_select(const double *pool, size_t m, size_t k, size_t r,
                           size_t *chosen, wsisa_err *e);
/* Sum of squared pairwise distances of the chosen trajectories. */
double wsisa_sa_morris_spread(const double *pool, size_t k, const size_t *chosen,
                              size_t r);

/* Saltelli layout from A and B (each n x k): writes n groups into `unit`, each
 * A_j, AB_j^1..k, [BA_j^1..k], B_j (rows of k). */
void wsisa_sa_saltelli_unit(const double *a, const double *b, size_t n, size_t k,
                            int second_order, double *unit);
/* The same with g factors: AB_j^f is A_j with the columns of factor f (those
 * with factor[i] == f) from B_j; n (g + 2) or n (2g + 2) rows. */
void wsisa_sa_saltelli_unit_factors(const double *a, const double *b, size_t n, size_t k,
                                    size_t g, const size_t *factor, int second_order,
                                    double *unit);

/* ---- analyses ------------------------------------------------------------------ */

/* An output is missing when it is not finite (NaN for "no value"). */

typedef struct wsisa_sa_moat_result {
  size_t k;
  double *mu, *mu_star, *sigma;          /* grid units */
  double *mu_p, *mu_star_p, *sigma_p;    /* parameter units (NaN: categorical) */
  size_t *neffects;                       /* effects used per parameter */
  size_t total_effects, dropped_effects;
  double *effects;   /* grid units: parameter i's neffects[i] effects start at
                        effects + i * stride */
  size_t stride;
} wsisa_sa_moat_result;

/* Elementary effects of a MOAT design; effects touching a missing output are
 * dropped and counted. */
int wsisa_sa_moat_analyze(const wsisa_sa_space *space, const wsisa_sa_design *design,
                          const double *y, wsisa_sa_moat_result *out, wsisa_err *e);
void wsisa_sa_moat_result_free(wsisa_sa_moat_result *r);
/* SALib's mu_star_conf: z times the standard deviation (n - 1) of mu* over
 * `resamples` bootstrap resamples of each parameter's effects (with
 * replacement, the seed's stream), z = Phi^-1(1/2 + confidence / 2): the
 * half-width of a normal interval of mu* in grid units. NaN with fewer than 2
 * effects or no resamples. */
int wsisa_sa_moat_mu_star_conf(const wsisa_sa_moat_result *r, size_t resamples,
                               double confidence, uint64_t seed, double *conf, wsisa_err *e);
/* Order of the parameters by decreasing mu* (grid units, which are comparable
 * across parameters); NaN last. */
void wsisa_sa_moat_rank(const wsisa_sa_moat_result *r, size_t *order);

typedef struct wsisa_sa_vbd_result {
  size_t k, n;                /* parameters, base samples used */
  double variance;
  double *s1, *s1_lo, *s1_hi, *s1_se;
  double *st, *st_lo, *st_hi, *st_se;
  double *s2, *s2_lo, *s2_hi, *s2_se; /* k x k, upper triangle; NULL without
                                          second order */
} wsisa_sa_vbd_result;

typedef struct wsisa_sa_vbd_opts {
  size_t bootstrap;
  double confidence;
  uint64_t seed;
  int drop_missing;   /* drop base samples touching a missing output, else refuse */
} wsisa_sa_vbd_opts;

/* Indices from outputs `y` in the Saltelli layout of n groups of k parameters.
 * A missing output fails with WSISA_EUSAGE unless drop_missing; `dropped`
 * (may be NULL) receives the number of groups dropped. */
int wsisa_sa_vbd_analyze(const double *y, size_t n, size_t k, int second_order,
                         const wsisa_sa_vbd_opts *opts, wsisa_sa_vbd_result *out,
                         size_t *dropped, wsisa_err *e);
void wsisa_sa_vbd_result_free(wsisa_sa_vbd_result *r);

typedef struct wsisa_sa_corr_result {
  size_t k, n;       /* parameters, rows used */
  double *pearson, *spearman, *pcc, *prcc;
  /* why pcc[i] / prcc[i] is undefined (NaN), in words; NULL where defined */
  const char **pcc_why, **prcc_why;
} wsisa_sa_corr_result;

double wsisa_sa_pearson(const double *a, const double *b, size_t n);
/* Ranks 1..n of x (stride apart) with ties averaged. */
int wsisa_sa_rank(const double *x, size_t n, size_t stride, double *ranks, wsisa_err *e);
/* Correlations of each of k columns of x (n x k, row-major) with y; rows with a
 * missing y are skipped. Undefined coefficients (a constant column, collinear
 * inputs) are NaN. */
int wsisa_sa_correlation(const double *x, size_t n, size_t k, const double *y,
                         wsisa_sa_corr_result *out, wsisa_err *e);
void wsisa_sa_corr_result_free(wsisa_sa_corr_result *r);

#endif
