/* Level costs by parameter values, calibration's probe and what the estimate
 * takes from it (docs/architecture.md, "The estimate in detail"). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"

#define FILE_NAME "wsisa_level_costs.json"
#define REPEATS 3
#define SPLITS 3 /* a parameter's range in thirds: its ends and two values between */
#define SCREEN 4 /* parameters screened for their interplay, two by two */
#define SCREEN_REPEATS 2
#define INTERPLAY 0.05 /* the least interplay timed over a grid (5 %) */

static int load(json_t *root, wsisa__models *models);

/* ---- the measurement --------------------------------------------------------- */

/* Each level of p, timed one after the other, each at most its dt so far. */
static int one_pass(const wsisa_tile_data *tile, const double *p, clockid_t clock,
                    double dt[WSISA_SEG_LEVELS], wsisa_err *e) {
  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  int rc = 0;
  for (int l = 1; l <= WSISA_SEG_LEVELS && !rc; l++) {
    double t0 = wsisa_clock_seconds(clock);
    rc = wsisa_workflow_task_submit(l, p, tile, &path, NULL, e);
    starpu_task_wait_for_all();
    dt[l - 1] = fmin(dt[l - 1], wsisa_clock_seconds(clock) - t0);
  }
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) wsisa_workflow_task_release(l, &path);
  starpu_task_wait_for_all();
  return rc;
}

/* Each level of p, the least of `repeats`; with `ref`, the defaults timed in
 * turn with it (a machine's speed drifts over the probe), the least of theirs. */
static int level_times(const wsisa_tile_data *tile, const double *p, clockid_t clock,
                       double dt[WSISA_SEG_LEVELS], double *ref, int repeats, wsisa_err *e) {
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    dt[l] = INFINITY;
    if (ref) ref[l] = INFINITY;
  }
  int rc = 0;
  for (int k = 0; k < repeats && !rc; k++) {
    if (ref) rc = one_pass(tile, wsisa_seg_defaults(), clock, ref, e);
    if (!rc) rc = one_pass(tile, p, clock, dt, e);
  }
  return rc;
}

/* A segmentation's time over its levels, each level taken against the
 * defaults timed beside it (dt / ref) at the defaults' time `at`. */
static double time_against(const double at[WSISA_SEG_LEVELS], const double dt[WSISA_SEG_LEVELS],
                           const double ref[WSISA_SEG_LEVELS]) {
  double t = 0;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) t += at[l] * dt[l] / ref[l];
  return t;
}

/* The curves' product at x, over the levels. */
static double product_over_levels(const wsisa__levels_model *m, const double *x) {
  double t = 0;
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) t += wsisa__levels_product(m, l, x);
  return t;
}

/* The values a parameter is timed at: its range (the SA range and the
 * design's) in thirds, or a connectivity's other value; the defaults' own is
 * timed once for all. */
static int values_of(int p, const double *rows, size_t nruns, double *out) {
  const wsisa_sa_seg_param *sp = &wsisa_sa_seg_params[p];
  double def = wsisa_seg_defaults()[p];
  if (sp->kind == WSISA_SA_CATEGORICAL) {
    out[0] = def == 4 ? 8 : 4;
    return 1;
  }
  double lo = sp->lo, hi = sp->hi;
  for (size_t r = 0; r < nruns; r++) {
    lo = fmin(lo, rows[r * WSISA_SEG_NPARAMS + p]);
    hi = fmax(hi, rows[r * WSISA_SEG_NPARAMS + p]);
  }
  int n = 0;
  for (int k = 0; k <= SPLITS; k++) {
    double v = lo + (hi - lo) * k / SPLITS;
    if (sp->integer_valued) v = round(v);
    int seen = v == def;
    for (int i = 0; i < n; i++) seen |= out[i] == v;
    if (!seen) out[n++] = v;
  }
  return n;
}

/* The probe's tile, clock and what its sweeps found: each parameter's
 * values and how far it moves a segmentation's time alone (spread). */
typedef struct sweeps {
  const wsisa_tile_data *tile;
  clockid_t clock;
  double at_defaults[WSISA_SEG_LEVELS];
  double values[WSISA_SEG_NPARAMS][SPLITS + 1], spread[WSISA_SEG_NPARAMS];
  int nvalues[WSISA_SEG_NPARAMS];
} sweeps;

/* x timed in turn with the defaults (dt, ref); into `list` as {key: what,
 * times, defaults_beside} (what taken). */
static int time_beside(const sweeps *sw, const double *x, int repeats, json_t *list,
                       const char *key, json_t *what, double dt[WSISA_SEG_LEVELS],
                       double ref[WSISA_SEG_LEVELS], wsisa_err *e) {
  int rc = level_times(sw->tile, x, sw->clock, dt, ref, repeats, e);
  if (rc) json_decref(what);
  else
    json_array_append_new(list, json_pack("{s:o, s:o, s:o}", key, what, "times",
                                          WSISA__TIMES_JSON(dt), "defaults_beside",
                                          WSISA__TIMES_JSON(ref)));
  return rc;
}

/* The defaults, calibration's segmentations (each round's reference and its
 * vectors) and each parameter's sweep, each timed in turn with the defaults. */
static int curves(sweeps *sw, const wsisa__probe_input *in, json_t *vecs, json_t *params,
                  wsisa_err *e) {
  const double *v0 = wsisa_seg_defaults();
  double dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
  /* once untimed: the first segmentation pays for StarPU's buffers, which
   * it keeps for the next ones */
  int rc = level_times(sw->tile, v0, sw->clock, sw->at_defaults, NULL, REPEATS, e);
  if (!rc) rc = level_times(sw->tile, v0, sw->clock, sw->at_defaults, NULL, REPEATS, e);
  if (!rc)
    json_array_append_new(vecs, json_pack("{s:o, s:o}", "values", WSISA__PARAMS_JSON(v0), "times",
                                          WSISA__TIMES_JSON(sw->at_defaults)));
  for (size_t i = 0; i < in->nvec && i + 1 < WSISA__LEVELS_VECTORS && !rc; i++) {
    const double *x = in->vectors + i * WSISA_SEG_NPARAMS;
    rc = time_beside(sw, x, REPEATS, vecs, "values", WSISA__PARAMS_JSON(x), dt, ref, e);
  }
  /* B, G and R decide the background rule, not what the levels cost */
  double whole = 0; /* a segmentation at the defaults, all levels */
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) whole += sw->at_defaults[l];
  for (int p = 0; p < WSISA_SEG_NPARAMS && !rc; p++) {
    if (p == WSISA_P_B || p == WSISA_P_G || p == WSISA_P_R) continue;
    int n = sw->nvalues[p] = values_of(p, in->rows, in->nruns, sw->values[p]);
    json_t *points = json_array();
    double lo = whole, hi = whole;
    for (int k = 0; k < n && !rc; k++) {
      double v[WSISA_SEG_NPARAMS];
      memcpy(v, v0, sizeof v);
      v[p] = sw->values[p][k];
      if (!(rc = time_beside(sw, v, REPEATS, points, "value", json_real(v[p]), dt, ref, e))) {
        double t = time_against(sw->at_defaults, dt, ref);
        lo = fmin(lo, t);
        hi = fmax(hi, t);
      }
    }
    sw->spread[p] = (hi - lo) / whole;
    json_object_set_new(params, wsisa_seg_param_name(p), points);
  }
  return rc;
}

/* The pair of parameters whose interplay the curves' product misses the
 * most, screened two by two at the segmentation it misses the most (into
 * `screen`; the doc's "Level costs by parameter values"); pair[1] -1: none. */
static int screen_pairs(const sweeps *sw, const wsisa__levels_model *m, json_t *screen,
                        int pair[2], wsisa_err *e) {
  const double *v0 = wsisa_seg_defaults(), *worst = NULL;
  double apart = log(1 + INTERPLAY);
  for (size_t i = 0; i < m->nvectors; i++) {
    double t = 0, product = product_over_levels(m, m->vector[i]);
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) t += m->vector_time[i][l];
    if (fabs(log(t / product)) > apart) apart = fabs(log(t / product)), worst = m->vector[i];
  }
  int top[SCREEN], ntop = 0, taken[WSISA_SEG_NPARAMS] = {0}, rc = 0;
  while (worst && ntop < SCREEN) {
    int best = -1;
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
      if (!taken[p] && worst[p] != v0[p] && sw->spread[p] > 0 &&
          (best < 0 || sw->spread[p] > sw->spread[best]))
        best = p;
    if (best < 0) break;
    taken[best] = 1;
    top[ntop++] = best;
  }
  apart = log(1 + INTERPLAY);
  for (int i = 0; i < ntop && !rc; i++)
    for (int j = i + 1; j < ntop && !rc; j++) {
      double v[WSISA_SEG_NPARAMS], dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
      memcpy(v, v0, sizeof v);
      v[top[i]] = worst[top[i]];
      v[top[j]] = worst[top[j]];
      if ((rc = level_times(sw->tile, v, sw->clock, dt, ref, SCREEN_REPEATS, e))) break;
      double t = time_against(m->at_defaults, dt, ref), product = product_over_levels(m, v);
      json_array_append_new(screen, json_pack("{s:[s, s], s:[f, f], s:f}", "parameters",
                                              wsisa_seg_param_name(top[i]),
                                              wsisa_seg_param_name(top[j]), "values", v[top[i]],
                                              v[top[j]], "over_product", t / product));
      if (fabs(log(t / product)) > apart) {
        apart = fabs(log(t / product));
        pair[0] = top[i];
        pair[1] = top[j];
      }
    }
  return rc;
}

/* The pair timed over the grid of its sweeps' values. */
static int pair_grid(const sweeps *sw, const int pair[2], json_t **grid, wsisa_err *e) {
  json_t *points = json_array();
  int rc = 0;
  for (int i = 0; i < sw->nvalues[pair[0]] && !rc; i++)
    for (int j = 0; j < sw->nvalues[pair[1]] && !rc; j++) {
      double v[WSISA_SEG_NPARAMS], dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
      memcpy(v, wsisa_seg_defaults(), sizeof v);
      v[pair[0]] = sw->values[pair[0]][i];
      v[pair[1]] = sw->values[pair[1]][j];
      rc = time_beside(sw, v, REPEATS, points, "values",
                       json_pack("[f, f]", v[pair[0]], v[pair[1]]), dt, ref, e);
    }
  *grid = json_pack("{s:[s, s], s:o}", "parameters", wsisa_seg_param_name(pair[0]),
                    wsisa_seg_param_name(pair[1]), "points", points);
  return rc;
}

static int probe(const wsisa__probe_input *in, json_t **out, wsisa_err *e) {
  wsisa__probe_tile pt;
  sweeps sw;
  memset(&sw, 0, sizeof sw);
  int rc = wsisa__probe_tile_open(&in->tiles[0], &pt, e);
  sw.tile = &pt.tile;
  sw.clock = wsisa__worker_clock();
  json_t *params = json_object(), *vecs = json_array(), *root = NULL;
  if (!rc) rc = curves(&sw, in, vecs, params, e);
  if (!rc)
    root = json_pack("{s:i, s:i, s:o, s:o, s:o}", "width", pt.width, "height", pt.height,
                     "defaults", WSISA__TIMES_JSON(sw.at_defaults), "vectors", vecs, "parameters",
                     params);
  else
    json_decref(params), json_decref(vecs);
  wsisa__models m;
  int pair[2] = {-1, -1};
  json_t *screen = json_array(), *grid = NULL;
  if (!rc && root && load(root, &m) == 0) rc = screen_pairs(&sw, &m.levels, screen, pair, e);
  if (pair[1] >= 0 && !rc) rc = pair_grid(&sw, pair, &grid, e);
  wsisa__probe_tile_close(&pt);
  json_t *chosen = json_pack("{s:o}", "screened", screen);
  if (grid) json_object_update(chosen, grid), json_decref(grid);
  if (rc || !root) {
    json_decref(root);
    json_decref(chosen);
  } else {
    json_object_set_new(root, "pair", chosen);
  }
  *out = root;
  return rc;
}

/* ---- the model ---------------------------------------------------------------- */

static int times_read(json_t *a, double dt[WSISA_SEG_LEVELS]) {
  if (json_array_size(a) != WSISA_SEG_LEVELS) return -1;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    dt[l] = json_number_value(json_array_get(a, (size_t)l));
    if (!(dt[l] > 0)) return -1;
  }
  return 0;
}

/* A point's "times" and the defaults timed beside it ("defaults_beside"; a
 * file without those: the defaults timed first); -1 without its times. */
static int times_beside(json_t *pt, const double *first, double dt[WSISA_SEG_LEVELS],
                        double ref[WSISA_SEG_LEVELS]) {
  if (times_read(json_object_get(pt, "times"), dt)) return -1;
  if (times_read(json_object_get(pt, "defaults_beside"), ref))
    memcpy(ref, first, WSISA_SEG_LEVELS * sizeof *ref);
  return 0;
}

/* Each level's median over every timing of the defaults a probe file holds. */
static void defaults_median(json_t *root, double out[WSISA_SEG_LEVELS]) {
  enum { MAX = 1 + WSISA__LEVELS_VECTORS + WSISA_SEG_NPARAMS * WSISA__LEVELS_POINTS };
  double t[MAX][WSISA_SEG_LEVELS];
  size_t n = 0;
  if (times_read(json_object_get(root, "defaults"), t[n]) == 0) n++;
  json_t *vecs = json_object_get(root, "vectors"), *params = json_object_get(root, "parameters");
  for (size_t i = 0; i < json_array_size(vecs) && n < MAX; i++)
    if (times_read(json_object_get(json_array_get(vecs, i), "defaults_beside"), t[n]) == 0) n++;
  const char *key;
  json_t *points;
  json_object_foreach(params, key, points) {
    for (size_t i = 0; i < json_array_size(points) && n < MAX; i++)
      if (times_read(json_object_get(json_array_get(points, i), "defaults_beside"), t[n]) == 0)
        n++;
  }
  if (!n) return;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    double col[MAX];
    for (size_t i = 0; i < n; i++) col[i] = t[i][l];
    out[l] = wsisa_median(col, n);
  }
}

/* The pair's grid from the probe file's "pair" (absent: none): each point
 * against the defaults timed beside it; a point of the grid the file lacks
 * is the curves' product. -1 leaves m->pair at none. */
static int pair_load(wsisa__levels_model *m, json_t *pair, const double *first) {
  json_t *names = json_object_get(pair, "parameters"), *points = json_object_get(pair, "points");
  if (json_array_size(names) != 2) return -1;
  int pq[2];
  for (int k = 0; k < 2; k++) {
    pq[k] = -1;
    const char *name = json_string_value(json_array_get(names, (size_t)k));
    for (int p = 0; name && p < WSISA_SEG_NPARAMS; p++)
      if (strcmp(name, wsisa_seg_param_name(p)) == 0) pq[k] = p;
    if (pq[k] < 0 || m->npoints[pq[k]] < 2) return -1;
  }
  if (pq[0] == pq[1]) return -1;
  const double *d = wsisa_seg_defaults();
  for (int i = 0; i < m->npoints[pq[0]]; i++)
    for (int j = 0; j < m->npoints[pq[1]]; j++)
      for (int l = 0; l < WSISA_SEG_LEVELS; l++)
        m->pair_ratio[i][j][l] = m->ratio[pq[0]][i][l] * m->ratio[pq[1]][j][l];
  for (size_t k = 0; k < json_array_size(points); k++) {
    json_t *pt = json_array_get(points, k), *values = json_object_get(pt, "values");
    double dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
    if (json_array_size(values) != 2 || times_beside(pt, first, dt, ref)) continue;
    double a = json_number_value(json_array_get(values, 0));
    double b = json_number_value(json_array_get(values, 1));
    if (a == d[pq[0]] || b == d[pq[1]]) continue; /* the curves hold those */
    for (int i = 0; i < m->npoints[pq[0]]; i++)
      for (int j = 0; j < m->npoints[pq[1]]; j++)
        if (m->value[pq[0]][i] == a && m->value[pq[1]][j] == b)
          for (int l = 0; l < WSISA_SEG_LEVELS; l++)
            /* a level above both parameters' own runs the same tasks */
            m->pair_ratio[i][j][l] = l + 1 < wsisa_seg_param_level(pq[0]) &&
                                             l + 1 < wsisa_seg_param_level(pq[1])
                                         ? 1
                                         : dt[l] / ref[l];
  }
  m->pair[0] = pq[0];
  m->pair[1] = pq[1];
  return 0;
}

/* The model from the probe's JSON; -1 when it is not whole. */
static int load(json_t *root, wsisa__models *models) {
  wsisa__levels_model *m = &models->levels;
  memset(m, 0, sizeof *m);
  m->pair[0] = m->pair[1] = -1;
  if (!root) return -1;
  json_t *defaults = NULL, *vecs = NULL, *params = NULL;
  if (json_unpack(root, "{s:i, s:i, s:o, s:o, s:o}", "width", &m->width, "height", &m->height,
                  "defaults", &defaults, "vectors", &vecs, "parameters", &params) ||
      times_read(defaults, m->at_defaults))
    return -1;
  /* each time against the defaults timed beside it, the defaults' own the
   * median of them all (the doc's "Level costs by parameter values") */
  double first[WSISA_SEG_LEVELS];
  memcpy(first, m->at_defaults, sizeof first);
  defaults_median(root, m->at_defaults);
  for (size_t i = 0; i < json_array_size(vecs) && m->nvectors < WSISA__LEVELS_VECTORS; i++) {
    json_t *v = json_array_get(vecs, i), *values = json_object_get(v, "values");
    if (json_array_size(values) != WSISA_SEG_NPARAMS) continue;
    double *vt = m->vector_time[m->nvectors], ref[WSISA_SEG_LEVELS];
    /* the first vector is the defaults themselves, timed with `defaults` */
    if (times_beside(v, first, vt, ref)) continue;
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) vt[l] *= m->at_defaults[l] / ref[l];
    for (int q = 0; q < WSISA_SEG_NPARAMS; q++)
      m->vector[m->nvectors][q] = json_number_value(json_array_get(values, (size_t)q));
    m->nvectors++;
  }
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    json_t *points = json_object_get(params, wsisa_seg_param_name(p));
    if (!json_array_size(points)) continue;
    /* the defaults' own value is a point of every curve, at ratio 1 */
    int n = 0;
    double x[WSISA__LEVELS_POINTS], r[WSISA__LEVELS_POINTS][WSISA_SEG_LEVELS];
    x[n] = wsisa_seg_defaults()[p];
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) r[n][l] = 1;
    n++;
    for (size_t i = 0; i < json_array_size(points) && n < WSISA__LEVELS_POINTS; i++) {
      json_t *pt = json_array_get(points, i);
      double dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
      if (!json_is_number(json_object_get(pt, "value")) || times_beside(pt, first, dt, ref))
        continue;
      x[n] = json_number_value(json_object_get(pt, "value"));
      /* the levels above p's own run the same tasks: their differences are noise */
      for (int l = 0; l < WSISA_SEG_LEVELS; l++)
        r[n][l] = l + 1 < wsisa_seg_param_level(p) ? 1 : dt[l] / ref[l];
      n++;
    }
    /* by value */
    for (int i = 0; i < n; i++) {
      int k = i;
      while (k > 0 && m->value[p][k - 1] > x[i]) {
        m->value[p][k] = m->value[p][k - 1];
        memcpy(m->ratio[p][k], m->ratio[p][k - 1], sizeof m->ratio[p][k]);
        k--;
      }
      m->value[p][k] = x[i];
      memcpy(m->ratio[p][k], r[i], sizeof m->ratio[p][k]);
    }
    m->npoints[p] = n;
  }
  pair_load(m, json_object_get(root, "pair"), first);
  m->loaded = 1;
  return 0;
}

static int describe(const wsisa__models *models, char *how, size_t cap) {
  const wsisa__levels_model *m = &models->levels;
  if (!m->loaded) return -1;
  int measured = 0;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) measured += m->npoints[p] > 1;
  char pair_how[128] = "";
  if (m->pair[0] >= 0 && m->pair[1] >= 0 && m->pair[0] != m->pair[1])
    snprintf(pair_how, sizeof pair_how, ", %s and %s together over their grid",
             wsisa_seg_param_name(m->pair[0]), wsisa_seg_param_name(m->pair[1]));
  snprintf(how, cap,
           "each level on a %dx%d tile at %zu segmentation%s and along the ranges of %d "
           "parameter%s%s; a run's level tasks at its values",
           m->width, m->height, m->nvectors, m->nvectors == 1 ? "" : "s", measured,
           measured == 1 ? "" : "s", pair_how);
  return 0;
}

const wsisa__probe wsisa__probe_levels = {
    "level costs", FILE_NAME, 1, NULL, probe, load, describe,
    offsetof(wsisa_estimate_figures, level_source),
    "every run's level tasks at the models' time"};

/* Level l's time at p = x relative to the defaults', interpolated linearly
 * between the values measured, the nearest's outside them. */
static double ratio_at(const wsisa__levels_model *m, int p, int l, double x) {
  int n = m->npoints[p];
  const double *v = m->value[p];
  if (n < 2 || x <= v[0]) return n ? m->ratio[p][0][l] : 1;
  for (int k = 1; k < n; k++)
    if (x <= v[k])
      return m->ratio[p][k - 1][l] +
             (m->ratio[p][k][l] - m->ratio[p][k - 1][l]) * (x - v[k - 1]) / (v[k] - v[k - 1]);
  return m->ratio[p][n - 1][l];
}

/* Where x lies among a parameter's values: the cell [*k, *k + 1] and the
 * share t of the way across it (the ends outside them). */
static void cell_of(const wsisa__levels_model *m, int p, double x, int *k, double *t) {
  int n = m->npoints[p];
  const double *v = m->value[p];
  *k = 0;
  *t = 0;
  if (x <= v[0]) return;
  if (x >= v[n - 1]) {
    *k = n - 2;
    *t = 1;
    return;
  }
  while (*k < n - 2 && x > v[*k + 1]) (*k)++;
  *t = (x - v[*k]) / (v[*k + 1] - v[*k]);
}

/* The pair's ratio at x on level l (0-based), bilinear over its grid. */
static double pair_at(const wsisa__levels_model *m, int l, const double *x) {
  int i, j;
  double s, t;
  cell_of(m, m->pair[0], x[m->pair[0]], &i, &s);
  cell_of(m, m->pair[1], x[m->pair[1]], &j, &t);
  return (1 - s) * (1 - t) * m->pair_ratio[i][j][l] + s * (1 - t) * m->pair_ratio[i + 1][j][l] +
         (1 - s) * t * m->pair_ratio[i][j + 1][l] + s * t * m->pair_ratio[i + 1][j + 1][l];
}

double wsisa__levels_product(const wsisa__levels_model *m, int level, const double *x) {
  double t = m->at_defaults[level - 1];
  /* the pair together on the levels both reach, each alone on those only
   * one reaches */
  int paired = m->pair[0] >= 0 && m->pair[1] >= 0 && m->pair[0] != m->pair[1] &&
               wsisa_seg_param_level(m->pair[0]) <= level &&
               wsisa_seg_param_level(m->pair[1]) <= level;
  if (paired) t *= pair_at(m, level - 1, x);
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    if (wsisa_seg_param_level(p) <= level && !(paired && (p == m->pair[0] || p == m->pair[1])))
      t *= ratio_at(m, p, level - 1, x[p]);
  return t;
}

/* What level l's interplay rests on, the same for every run: how much each
 * parameter moves the level (the largest |log ratio| its curve measured;
 * 0: it leaves the level alone), and each calibration segmentation's
 * measured time over its curves' product. */
typedef struct interplay {
  int l;
  double moves[WSISA_SEG_NPARAMS];
  double rho[WSISA__LEVELS_VECTORS];
} interplay;

static void interplay_at(const wsisa__levels_model *m, int l, interplay *ip) {
  ip->l = l;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    ip->moves[p] = 0;
    for (int k = 0; k < m->npoints[p]; k++)
      ip->moves[p] = fmax(ip->moves[p], fabs(log(m->ratio[p][k][l - 1])));
  }
  for (size_t i = 0; i < m->nvectors; i++)
    ip->rho[i] = m->vector_time[i][l - 1] / wsisa__levels_product(m, l, m->vector[i]);
}

/* How much of a calibration segmentation v's joint move from the defaults
 * run x makes, for the level's time (0..1; 0 when x moves at most one of v's
 * parameters, 1 at v): the doc's "Level costs by parameter values". */
static double joint_share(const interplay *ip, const double *x, const double *v) {
  const double *d = wsisa_seg_defaults();
  double sum_v = 0, max_v = 0, sum_x = 0, max_x = 0;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    if (v[p] == d[p]) continue;
    const wsisa_sa_seg_param *sp = &wsisa_sa_seg_params[p];
    double span = sp->kind == WSISA_SA_CATEGORICAL || !(sp->hi > sp->lo)
                      ? 1
                      : fmin(1, fabs(v[p] - d[p]) / (sp->hi - sp->lo));
    double wv = ip->moves[p] * span;
    double share = sp->kind == WSISA_SA_CATEGORICAL ? x[p] == v[p]
                                                    : fmin(1, fmax(0, (x[p] - d[p]) / (v[p] - d[p])));
    sum_v += wv;
    max_v = fmax(max_v, wv);
    sum_x += wv * share;
    max_x = fmax(max_x, wv * share);
  }
  return sum_v - max_v > 0 ? fmin(1, fmax(0, (sum_x - max_x) / (sum_v - max_v))) : 0;
}

/* The level's time at x: the curves' product times the interplay left, the
 * calibration segmentations' time over product as a geometric mean weighted
 * by joint_share, raised to the largest share (the doc, as above). */
static double level_time(const wsisa__levels_model *m, const interplay *ip, const double *x) {
  double product = wsisa__levels_product(m, ip->l, x), log_sum = 0, w_sum = 0, w_max = 0;
  for (size_t i = 0; i < m->nvectors; i++) {
    double w = joint_share(ip, x, m->vector[i]);
    if (!(w > 0) || !isfinite(ip->rho[i]) || !(ip->rho[i] > 0)) continue;
    log_sum += w * log(ip->rho[i]);
    w_sum += w;
    w_max = fmax(w_max, w);
  }
  return w_sum > 0 ? product * exp(w_max * log_sum / w_sum) : product;
}

void wsisa__levels_scale(const wsisa__levels_model *m, const double *params, size_t nruns,
                         const uint8_t *same_variant, double *scale, double *time) {
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) {
    interplay ip;
    interplay_at(m, l, &ip);
    for (size_t r = 0; r < nruns; r++) {
      const double *x = params + r * WSISA_SEG_NPARAMS;
      /* the calibration segmentations that measured this run's footprints of
       * the level (every one where none did): the models' mean is theirs */
      double sum = 0;
      size_t n = 0;
      for (int pass = 0; pass < 2 && !n; pass++)
        for (size_t i = 0; i < m->nvectors; i++) {
          if (!pass && !same_variant[(r * WSISA_SEG_LEVELS + (size_t)l - 1) * m->nvectors + i])
            continue;
          sum += m->vector_time[i][l - 1];
          n++;
        }
      double mean = n ? sum / (double)n : 0;
      double t = level_time(m, &ip, x);
      double s = mean > 0 ? t / mean : 1;
      scale[r * WSISA_SEG_LEVELS + (size_t)l - 1] = isfinite(s) && s > 0 ? s : 1;
      if (time) time[r * WSISA_SEG_LEVELS + (size_t)l - 1] = isfinite(t) && t > 0 ? t : 0;
    }
  }
}
