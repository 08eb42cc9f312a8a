/* Level costs by parameter values (docs/architecture.md, "The estimate"): a
 * level's task costs what the pixels reaching it cost, and those follow the
 * parameters above it (a lower G2 lets more of the tile into hysteresis,
 * separation and the final size), while StarPU's models keep one mean per
 * footprint, made of the calibration's few segmentations. Calibration times
 * each level on its largest tile, with one CPU worker, at the defaults, at
 * each of its segmentations, and for each parameter across its SA range with
 * the others at the defaults; the estimate prices a run's level task at the
 * models' time times the curves' product for the run over their mean for the
 * calibration segmentations that measured the same footprints. Timed by the
 * one CPU worker's CPU clock, which a shared machine's load leaves alone. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate.h"

#define REPEATS 3
#define SPLITS 3 /* a parameter's range in thirds: its ends and two values between */

/* ---- the measurement --------------------------------------------------------- */

/* The CPU clock of the one CPU worker, and seconds on a clock. */
static void worker_clock(void *arg) {
  if (pthread_getcpuclockid(pthread_self(), arg)) *(clockid_t *)arg = CLOCK_MONOTONIC;
}

clockid_t wsisa__worker_clock(void) {
  clockid_t clock = CLOCK_MONOTONIC;
  starpu_execute_on_each_worker(worker_clock, &clock, STARPU_CPU);
  return clock;
}

double wsisa__clock_seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Each level of p, timed one after the other, each at most its dt so far. */
static int one_pass(const wsisa_tile_data *tile, const double *p, clockid_t clock,
                    double dt[WSISA_SEG_LEVELS], wsisa_err *e) {
  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  int rc = 0;
  for (int l = 1; l <= WSISA_SEG_LEVELS && !rc; l++) {
    double t0 = wsisa__clock_seconds(clock);
    rc = wsisa_workflow_task_submit(l, p, tile, &path, NULL, e);
    starpu_task_wait_for_all();
    dt[l - 1] = fmin(dt[l - 1], wsisa__clock_seconds(clock) - t0);
  }
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) wsisa_workflow_task_release(l, &path);
  starpu_task_wait_for_all();
  return rc;
}

/* Each level of p, the least of REPEATS; with `ref`, the defaults timed in
 * turn with it, the least of theirs there: a machine's speed drifts over the
 * probe (other processes, its clock), and a time is then taken against the
 * defaults' beside it. */
static int level_times(const wsisa_tile_data *tile, const double *p, clockid_t clock,
                       double dt[WSISA_SEG_LEVELS], double *ref, wsisa_err *e) {
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    dt[l] = INFINITY;
    if (ref) ref[l] = INFINITY;
  }
  int rc = 0;
  for (int k = 0; k < REPEATS && !rc; k++) {
    if (ref) rc = one_pass(tile, wsisa_seg_defaults(), clock, ref, e);
    if (!rc) rc = one_pass(tile, p, clock, dt, e);
  }
  return rc;
}

static json_t *times_json(const double dt[WSISA_SEG_LEVELS]) {
  json_t *a = json_array();
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) json_array_append_new(a, json_real(dt[l]));
  return a;
}

static json_t *values_json(const double *v) {
  json_t *a = json_array();
  for (int q = 0; q < WSISA_SEG_NPARAMS; q++) json_array_append_new(a, json_real(v[q]));
  return a;
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

int wsisa__levels_probe(const wsisa_tile_ref *ref, const double *rows, size_t nruns,
                        const double *vectors, size_t nvec, wsisa_err *e) {
  wsisa__probe_tile pt;
  int rc = wsisa__probe_tile_open(ref, &pt, e);
  const wsisa_tile_data *tile = &pt.tile;
  const double *v0 = wsisa_seg_defaults();
  double at_defaults[WSISA_SEG_LEVELS];
  json_t *params = json_object(), *vecs = json_array();
  clockid_t clock = wsisa__worker_clock();
  /* once untimed: the first segmentation pays for StarPU's buffers, which
   * it keeps for the next ones */
  if (!rc) rc = level_times(tile, v0, clock, at_defaults, NULL, e);
  if (!rc) rc = level_times(tile, v0, clock, at_defaults, NULL, e);
  /* the calibration's segmentations: each round's reference (the defaults)
   * and its vectors, which the models' means are made of; each timed in
   * turn with the defaults */
  if (!rc)
    json_array_append_new(vecs, json_pack("{s:o, s:o}", "values", values_json(v0), "times",
                                          times_json(at_defaults)));
  for (size_t i = 0; i < nvec && i + 1 < WSISA__LEVELS_VECTORS && !rc; i++) {
    double dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
    if (!(rc = level_times(tile, vectors + i * WSISA_SEG_NPARAMS, clock, dt, ref, e)))
      json_array_append_new(vecs, json_pack("{s:o, s:o, s:o}", "values",
                                            values_json(vectors + i * WSISA_SEG_NPARAMS), "times",
                                            times_json(dt), "defaults_beside", times_json(ref)));
  }
  /* B, G and R decide the background rule, not what the levels cost. Each
   * point of a parameter's sweep timed in turn with the defaults: the
   * estimate multiplies a run's ratios over every parameter it sets, and a
   * slow spell of the machine under one sweep would otherwise enter them
   * all */
  for (int p = 0; p < WSISA_SEG_NPARAMS && !rc; p++) {
    if (p == WSISA_P_B || p == WSISA_P_G || p == WSISA_P_R) continue;
    double values[SPLITS + 1];
    int n = values_of(p, rows, nruns, values);
    json_t *points = json_array();
    for (int k = 0; k < n && !rc; k++) {
      double v[WSISA_SEG_NPARAMS], dt[WSISA_SEG_LEVELS], ref[WSISA_SEG_LEVELS];
      memcpy(v, v0, sizeof v);
      v[p] = values[k];
      if (!(rc = level_times(tile, v, clock, dt, ref, e)))
        json_array_append_new(points, json_pack("{s:f, s:o, s:o}", "value", values[k], "times",
                                                times_json(dt), "defaults_beside",
                                                times_json(ref)));
    }
    json_object_set_new(params, wsisa_seg_param_name(p), points);
  }
  wsisa__probe_tile_close(&pt);
  if (rc) {
    json_decref(params);
    json_decref(vecs);
    return rc;
  }
  return wsisa__probe_write(json_pack("{s:i, s:i, s:o, s:o, s:o}", "width", pt.width, "height",
                                      pt.height, "defaults", times_json(at_defaults), "vectors",
                                      vecs, "parameters", params),
                            "wsisa_level_costs.json", e);
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
    qsort(col, n, sizeof col[0], wsisa_compare_doubles);
    out[l] = n % 2 ? col[n / 2] : 0.5 * (col[n / 2 - 1] + col[n / 2]);
  }
}

int wsisa__levels_load(wsisa__levels_model *m) {
  memset(m, 0, sizeof *m);
  char path[4200];
  json_t *root = wsisa__probe_read("wsisa_level_costs.json", path, sizeof path);
  if (!root) return -1;
  json_t *defaults = NULL, *vecs = NULL, *params = NULL;
  int ok = json_unpack(root, "{s:i, s:i, s:o, s:o, s:o}", "width", &m->width, "height", &m->height,
                       "defaults", &defaults, "vectors", &vecs, "parameters", &params) == 0 &&
           times_read(defaults, m->at_defaults) == 0;
  /* the defaults were timed in turn with each vector and each point of a
   * sweep; a machine's speed drifts over the probe (other processes, its
   * clock), so each time is taken against the defaults timed beside it, and
   * the defaults' own time is the median of them all (a file without those:
   * against the defaults timed first) */
  double first[WSISA_SEG_LEVELS];
  memcpy(first, m->at_defaults, sizeof first);
  if (ok) defaults_median(root, m->at_defaults);
  for (size_t i = 0; ok && i < json_array_size(vecs) && m->nvectors < WSISA__LEVELS_VECTORS; i++) {
    json_t *v = json_array_get(vecs, i), *values = json_object_get(v, "values");
    if (json_array_size(values) != WSISA_SEG_NPARAMS) continue;
    double *vt = m->vector_time[m->nvectors], ref[WSISA_SEG_LEVELS];
    if (times_read(json_object_get(v, "times"), vt)) continue;
    /* the first vector is the defaults themselves, timed with `defaults` */
    if (times_read(json_object_get(v, "defaults_beside"), ref))
      memcpy(ref, first, sizeof ref);
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) vt[l] *= m->at_defaults[l] / ref[l];
    for (int q = 0; q < WSISA_SEG_NPARAMS; q++)
      m->vector[m->nvectors][q] = json_number_value(json_array_get(values, (size_t)q));
    m->nvectors++;
  }
  int measured = 0;
  for (int p = 0; ok && p < WSISA_SEG_NPARAMS; p++) {
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
      double dt[WSISA_SEG_LEVELS];
      if (!json_is_number(json_object_get(pt, "value")) ||
          times_read(json_object_get(pt, "times"), dt))
        continue;
      x[n] = json_number_value(json_object_get(pt, "value"));
      double ref[WSISA_SEG_LEVELS];
      if (times_read(json_object_get(pt, "defaults_beside"), ref))
        memcpy(ref, first, sizeof ref);
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
    measured += n > 1;
  }
  json_decref(root);
  if (!ok) return -1;
  snprintf(m->source, sizeof m->source,
           "calibration on a %dx%d tile: each level timed at its %zu segmentations (the "
           "reference's defaults among them) and across %d parameters' ranges; %s",
           m->width, m->height, m->nvectors, measured, path);
  m->loaded = 1;
  return 0;
}

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

double wsisa__levels_product(const wsisa__levels_model *m, int level, const double *x) {
  double t = m->at_defaults[level - 1];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    if (wsisa_seg_param_level(p) <= level) t *= ratio_at(m, p, level - 1, x[p]);
  return t;
}

/* How far apart two runs are for level l's time: each parameter's change
 * over its SA range, weighted by how much its curve moves the level (the
 * largest |log ratio| measured), so the parameters that leave the level's
 * cost alone do not count. */
static double distance(const wsisa__levels_model *m, int l, const double *x, const double *y) {
  double d = 0;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    const wsisa_sa_seg_param *sp = &wsisa_sa_seg_params[p];
    if (x[p] == y[p]) continue;
    double moves = 0;
    for (int k = 0; k < m->npoints[p]; k++)
      moves = fmax(moves, fabs(log(m->ratio[p][k][l - 1])));
    d += moves * (sp->hi > sp->lo ? fmin(1, fabs(x[p] - y[p]) / (sp->hi - sp->lo)) : 1);
  }
  return d;
}

int wsisa__levels_scale(const wsisa__levels_model *m, const double *params, size_t nruns,
                        const uint8_t *same_variant, double *scale, double *time, char *how,
                        size_t cap) {
  const double *v0 = wsisa_seg_defaults();
  /* the curves hold near the defaults, where they were measured; far from
   * them the parameters' interplay (a low G1 and a low G2 together cost more
   * than each alone) leaves them short, and a run as far from the defaults
   * as the calibration's own segmentations costs what those took, the
   * models' mean: a run is priced between the two by its distance from the
   * defaults against theirs */
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) {
    double reach = 0;
    size_t away = 0;
    for (size_t i = 0; i < m->nvectors; i++)
      if (distance(m, l, m->vector[i], v0) > 0) reach += distance(m, l, m->vector[i], v0), away++;
    reach = away ? reach / (double)away : 0;
    for (size_t r = 0; r < nruns; r++) {
      const double *x = params + r * WSISA_SEG_NPARAMS;
      double w = reach > 0 ? fmin(1, distance(m, l, x, v0) / reach) : 0;
      /* the calibration segmentations that measured this run's footprints of
       * the level (every one where none did) */
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
      double t = mean > 0 ? (1 - w) * wsisa__levels_product(m, l, x) + w * mean
                          : wsisa__levels_product(m, l, x);
      double s = mean > 0 ? t / mean : 1;
      scale[r * WSISA_SEG_LEVELS + (size_t)l - 1] = isfinite(s) && s > 0 ? s : 1;
      if (time) time[r * WSISA_SEG_LEVELS + (size_t)l - 1] = isfinite(t) && t > 0 ? t : 0;
    }
  }
  snprintf(how, cap,
           "%s; a run's level time: the curves' product at its values near the defaults, the "
           "models' mean as far from them as the calibration's segmentations, between the two by "
           "its distance, over the mean of those whose footprints it shares",
           m->source);
  return 0;
}
