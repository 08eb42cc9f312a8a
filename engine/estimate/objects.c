/* Object reuse in the estimate, calibration's probe and the pricer of
 * level-6/7 tasks by what their tile's store holds (docs/architecture.md,
 * "The estimate in detail": "Object reuse"). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"
#include "sa/sa.h"

#define FILE_NAME "wsisa_object_reuse.json"
#define REPEATS 3
#define SPLITS 8   /* a parameter's values: its design range in eighths */

/* ---- the measurement --------------------------------------------------------- */

/* Levels 1-5 of p, then levels 6 and 7 timed one after the other (one CPU
 * worker's CPU clock: their work). */
static int timed(const wsisa_tile_data *tile, const double *p, wsisa_object_store *store,
                 double dt[2], wsisa_err *e) {
  clockid_t clock = wsisa__worker_clock();
  wsisa_tile_data t = *tile;
  t.objects = store;
  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  int rc = 0;
  for (int l = 1; l <= 5 && !rc; l++) rc = wsisa_workflow_task_submit(l, p, &t, &path, NULL, e);
  starpu_task_wait_for_all();
  for (int l = 6; l <= 7 && !rc; l++) {
    double t0 = wsisa_clock_seconds(clock);
    rc = wsisa_workflow_task_submit(l, p, &t, &path, NULL, e);
    starpu_task_wait_for_all();
    dt[l - 6] = wsisa_clock_seconds(clock) - t0;
  }
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) wsisa_workflow_task_release(l, &path);
  starpu_task_wait_for_all();
  return rc;
}

/* The least of REPEATS timings of p (with_store 0: none; warm_with: a run
 * the fresh store first holds, NULL: empty). */
static int least(const wsisa_tile_data *tile, const double *p, int with_store,
                 const double *warm_with, double out[2], wsisa_err *e) {
  out[0] = out[1] = INFINITY;
  int rc = 0;
  for (int k = 0; k < REPEATS && !rc; k++) {
    wsisa_object_store *s = NULL;
    if (with_store && wsisa_object_store_new(UINT64_C(1) << 30, &s))
      return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    double dt[2] = {0, 0}, scratch[2];
    if (warm_with) rc = timed(tile, warm_with, s, scratch, e);
    if (!rc) rc = timed(tile, p, s, dt, e);
    wsisa_object_store_free(s);
    for (int l = 0; l < 2 && !rc; l++) out[l] = fmin(out[l], dt[l]);
  }
  return rc;
}

/* How much a change of parameter p moves the units: p at each of values[0..n)
 * (the rest of base), each into a store of its own, compared two by two; a
 * point a gap in the list: the mean change and the mean share missed, by level. */
static int walk(const wsisa_tile_data *tile, const double *base, int p, const double *values,
                int n, json_t *points, wsisa_err *e) {
  wsisa_object_store *s[SPLITS + 1] = {NULL};
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    double v[WSISA_SEG_NPARAMS], dt[2];
    memcpy(v, base, sizeof v);
    v[p] = values[k];
    if (wsisa_object_store_new(UINT64_C(1) << 30, &s[k]))
      rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    else
      rc = timed(tile, v, s[k], dt, e);
  }
  for (int gap = 1; gap < n && !rc; gap++) {
    double d = 0, miss[2] = {0, 0};
    int pairs = 0;
    for (int i = 0; i + gap < n; i++)
      for (int way = 0; way < 2; way++) {
        wsisa_object_store *of = s[way ? i : i + gap], *in = s[way ? i + gap : i];
        uint64_t area[2], missing[2];
        wsisa_object_store_missing(of, in, area, missing);
        for (int l = 0; l < 2; l++) miss[l] += area[l] ? (double)missing[l] / (double)area[l] : 0;
        d += fabs(values[i + gap] - values[i]);
        pairs++;
      }
    json_array_append_new(points, json_pack("[f, f, f]", d / pairs, miss[0] / pairs,
                                            miss[1] / pairs));
  }
  for (int k = 0; k < n; k++) wsisa_object_store_free(s[k]);
  return rc;
}

/* The vector already measured: the defaults, or an earlier one of vectors. */
static int measured_before(const double *vectors, size_t i) {
  const double *x = vectors + i * WSISA_SEG_NPARAMS;
  if (!memcmp(x, wsisa_seg_defaults(), WSISA_SEG_NPARAMS * sizeof *x)) return 1;
  for (size_t k = 0; k < i; k++)
    if (!memcmp(x, vectors + k * WSISA_SEG_NPARAMS, WSISA_SEG_NPARAMS * sizeof *x)) return 1;
  return 0;
}

/* Parameter p's curves (NULL: the design does not vary it), over eighths of
 * its design range (a connectivity: its two values), from where the design
 * changes p alone (a MOAT step) and from the defaults. */
static int param_curves(const wsisa_tile_data *tile, const wsisa__probe_input *in, int p,
                        json_t **out, wsisa_err *e) {
  double lo = INFINITY, hi = -INFINITY;
  int integral = 1, conn = p == WSISA_P_FILL_HOLES_CONN || p == WSISA_P_RECON_CONN ||
                           p == WSISA_P_WATERSHED_CONN;
  for (size_t r = 0; r < in->nruns; r++) {
    double x = in->rows[r * WSISA_SEG_NPARAMS + p];
    lo = fmin(lo, x), hi = fmax(hi, x);
    integral &= x == floor(x);
  }
  *out = NULL;
  if (!(hi > lo)) return 0;
  const double *pair = NULL;
  for (size_t r = 1; r < in->nruns && !pair; r++) {
    const double *x = in->rows + (r - 1) * WSISA_SEG_NPARAMS, *y = in->rows + r * WSISA_SEG_NPARAMS;
    int only = x[p] != y[p];
    for (int q = 0; q < WSISA_SEG_NPARAMS && only; q++)
      if (q != p && wsisa_seg_param_level(q) <= 6 && x[q] != y[q]) only = 0;
    if (only) pair = x;
  }
  double values[SPLITS + 1];
  int n = 0, rc = 0;
  for (int k = 0; k <= (conn ? 1 : SPLITS); k++) {
    double x = conn ? (k ? hi : lo) : lo + (hi - lo) * k / SPLITS;
    if (integral) x = round(x);
    if (!n || x != values[n - 1]) values[n++] = x;
  }
  json_t *curves = json_array();
  for (int c = 0; c < 2 && !rc; c++) {
    const double *base = c ? wsisa_seg_defaults() : pair;
    if (!base) continue;
    json_t *points = json_array(), *vs = json_array();
    for (int k = 0; k < n; k++) json_array_append_new(vs, json_real(values[k]));
    rc = walk(tile, base, p, values, n, points, e);
    json_array_append_new(curves, json_pack("{s:s, s:o, s:o, s:o}", "from",
                                            c ? "defaults" : "design pair", "base",
                                            WSISA__PARAMS_JSON(base), "values", vs, "points",
                                            points));
  }
  *out = json_pack("{s:o}", "curves", curves);
  return rc;
}

static int probe(const wsisa__probe_input *in, json_t **root, wsisa_err *e) {
  wsisa__probe_tile pt;
  int rc = wsisa__probe_tile_open(&in->tiles[0], &pt, e);
  const wsisa_tile_data *tile = &pt.tile;
  const double *v0 = wsisa_seg_defaults();
  double fine[2], cold[2], hit[2];
  if (!rc) rc = least(tile, v0, 0, NULL, fine, e);
  if (!rc) rc = least(tile, v0, 1, NULL, cold, e);
  if (!rc) rc = least(tile, v0, 1, v0, hit, e);
  /* the same at calibration's segmentations, where more of the tile reaches
   * levels 6 and 7 */
  json_t *segs = json_array(), *params = json_object();
  for (size_t i = 0; i < in->nvec && !rc; i++) {
    const double *x = in->vectors + i * WSISA_SEG_NPARAMS;
    if (measured_before(in->vectors, i)) continue;
    double f[2], c[2], h[2];
    if (!(rc = least(tile, x, 0, NULL, f, e)) && !(rc = least(tile, x, 1, NULL, c, e)) &&
        !(rc = least(tile, x, 1, x, h, e)))
      json_array_append_new(segs, json_pack("{s:o, s:[f, f], s:[f, f], s:[f, f]}", "values",
                                            WSISA__PARAMS_JSON(x), "fine", f[0], f[1], "cold",
                                            c[0], c[1], "hit", h[0], h[1]));
  }
  for (int p = 0; p < WSISA_SEG_NPARAMS && !rc; p++) {
    json_t *curves = NULL;
    if (wsisa_seg_param_level(p) <= 6) rc = param_curves(tile, in, p, &curves, e);
    if (curves) json_object_set_new(params, wsisa_seg_param_name(p), curves);
  }
  wsisa__probe_tile_close(&pt);
  if (rc) {
    json_decref(params);
    json_decref(segs);
    return rc;
  }
  *root = json_pack("{s:i, s:i, s:[f, f], s:[f, f], s:[f, f], s:o, s:o}", "width", pt.width,
                    "height", pt.height, "fine", fine[0], fine[1], "cold", cold[0], cold[1],
                    "hit", hit[0], hit[1], "segmentations", segs, "parameters", params);
  return 0;
}

static int object_reuse_on(const wsisa__probe_input *in) { return in->object_reuse; }

/* ---- the model ---------------------------------------------------------------- */

/* Calibration's segmentations (none in a file from before them), by their
 * fine-grain time. */
static void segs_load(wsisa__objects_model *m, json_t *segs) {
  for (size_t i = 0; i < json_array_size(segs); i++) {
    double sf[2], sc[2], sh[2];
    if (json_unpack(json_array_get(segs, i), "{s:[F, F], s:[F, F], s:[F, F]}", "fine", &sf[0],
                    &sf[1], "cold", &sc[0], &sc[1], "hit", &sh[0], &sh[1]))
      continue;
    for (int l = 0; l < 2; l++) {
      if (!(sf[l] > 0 && sc[l] >= sh[l] && sh[l] >= 0) || m->nsegs[l] >= WSISA__OBJECTS_SEGS)
        continue;
      int k = m->nsegs[l]++;
      while (k > 0 && m->seg_fine[l][k - 1] > sf[l]) {
        m->seg_fine[l][k] = m->seg_fine[l][k - 1];
        m->seg_cold[l][k] = m->seg_cold[l][k - 1];
        m->seg_hit[l][k] = m->seg_hit[l][k - 1];
        k--;
      }
      m->seg_fine[l][k] = sf[l];
      m->seg_cold[l][k] = sc[l] / sf[l];
      m->seg_hit[l][k] = sh[l] / sf[l];
    }
  }
}

/* Parameter p's curves (at most two), each point by step, smallest first;
 * the first one's largest change stands for it where a level's mean is
 * wanted. */
static void curves_load(wsisa__objects_model *m, int p, json_t *curves) {
  m->miss[0][p] = m->miss[1][p] = -1; /* not measured */
  for (size_t c = 0; c < json_array_size(curves) && m->ncurves[p] < 2; c++) {
    json_t *cv = json_array_get(curves, c), *points = json_object_get(cv, "points"),
           *base = json_object_get(cv, "base");
    if (json_array_size(base) != WSISA_SEG_NPARAMS || !json_array_size(points)) continue;
    int k0 = m->ncurves[p]++;
    for (int x = 0; x < WSISA_SEG_NPARAMS; x++)
      m->base[k0][p][x] = json_number_value(json_array_get(base, (size_t)x));
    for (size_t i = 0; i < json_array_size(points) && m->npoints[k0][p] < WSISA__OBJECTS_POINTS;
         i++) {
      double d, s6, s7;
      if (json_unpack(json_array_get(points, i), "[F, F, F]", &d, &s6, &s7) || !(d > 0)) continue;
      int k = m->npoints[k0][p]++;
      while (k > 0 && m->step[k0][p][k - 1] > d) {
        m->step[k0][p][k] = m->step[k0][p][k - 1];
        m->at[k0][0][p][k] = m->at[k0][0][p][k - 1];
        m->at[k0][1][p][k] = m->at[k0][1][p][k - 1];
        k--;
      }
      m->step[k0][p][k] = d;
      m->at[k0][0][p][k] = fmin(1, fmax(0, s6));
      m->at[k0][1][p][k] = fmin(1, fmax(0, s7));
    }
    int n = m->npoints[k0][p];
    for (int l = 0; l < 2 && k0 == 0 && n; l++) m->miss[l][p] = m->at[0][l][p][n - 1];
  }
}

static int load(json_t *root, wsisa__models *models) {
  wsisa__objects_model *m = &models->objects;
  memset(m, 0, sizeof *m);
  double f[2], c[2], h[2];
  json_t *params = NULL;
  if (!root || json_unpack(root, "{s:i, s:i, s:[F, F], s:[F, F], s:[F, F], s:o}", "width",
                           &m->width, "height", &m->height, "fine", &f[0], &f[1], "cold", &c[0],
                           &c[1], "hit", &h[0], &h[1], "parameters", &params))
    return -1;
  for (int l = 0; l < 2; l++)
    if (!(f[l] > 0 && c[l] >= h[l] && h[l] >= 0)) return -1;
  for (int l = 0; l < 2; l++) {
    m->fine[l] = m->seg_fine[l][0] = f[l];
    m->cold[l] = m->seg_cold[l][0] = c[l] / f[l];
    m->hit[l] = m->seg_hit[l][0] = h[l] / f[l];
    m->nsegs[l] = 1;
  }
  segs_load(m, json_object_get(root, "segmentations"));
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    curves_load(m, p, json_object_get(json_object_get(params, wsisa_seg_param_name(p)), "curves"));
  /* a parameter not measured: the mean of those of its level measured, else
   * every unit computed */
  for (int l = 0; l < 2; l++)
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
      if (m->miss[l][p] >= 0) continue;
      double sum = 0;
      int n = 0;
      for (int q = 0; q < WSISA_SEG_NPARAMS; q++)
        if (m->miss[l][q] >= 0 && wsisa_seg_param_level(q) == wsisa_seg_param_level(p))
          sum += m->miss[l][q], n++;
      m->fill[l][p] = 1;
      m->miss[l][p] = n ? sum / n : 1;
    }
  m->loaded = 1;
  return 0;
}

static int describe(const wsisa__models *models, char *how, size_t cap) {
  const wsisa__objects_model *m = &models->objects;
  if (!m->loaded) return -1;
  int measured = 0;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    measured += !m->fill[0][p] && wsisa_seg_param_level(p) <= 6;
  /* the ratios at the costliest segmentation measured, beside the defaults' */
  double top_f = 0, top_c = 0, top_h = 0;
  const double *f = m->fine;
  for (int l = 0; l < 2; l++) {
    int k = m->nsegs[l] - 1;
    top_f += m->seg_fine[l][k];
    top_c += m->seg_cold[l][k] * m->seg_fine[l][k];
    top_h += m->seg_hit[l][k] * m->seg_fine[l][k];
  }
  snprintf(how, cap,
           "levels 6-7 on a %dx%d tile %.2fx their fine-grain time with an empty store, %.2fx "
           "with a full one (%.2fx, %.2fx at the costliest of %d segmentations), %d parameters' "
           "changes; a task by what its tile's store holds",
           m->width, m->height, (m->cold[0] * f[0] + m->cold[1] * f[1]) / (f[0] + f[1]),
           (m->hit[0] * f[0] + m->hit[1] * f[1]) / (f[0] + f[1]), top_c / top_f, top_h / top_f,
           m->nsegs[0] > m->nsegs[1] ? m->nsegs[0] : m->nsegs[1], measured);
  return 0;
}

const wsisa__probe wsisa__probe_objects = {
    "object reuse", FILE_NAME, 1, object_reuse_on, probe, load, describe,
    offsetof(wsisa_estimate_figures, object_source),
    "levels 6-7 priced without object reuse, an upper bound"};

/* Level l's cold and hit ratios for a task whose fine-grain time is t
 * seconds on calibration's tile: interpolated linearly in log(t) between
 * the segmentations measured, the nearest's outside them. */
static void ratios_at(const wsisa__objects_model *m, int l, double t, double *cold, double *hit) {
  int n = m->nsegs[l];
  const double *x = m->seg_fine[l];
  if (n < 1) {
    *cold = m->cold[l], *hit = m->hit[l];
    return;
  }
  int k = 1;
  while (k < n && x[k] < t) k++;
  if (!(t > x[0]) || k == n || !(x[k] > x[k - 1])) {
    int at = !(t > x[0]) ? 0 : k == n ? n - 1 : k;
    *cold = m->seg_cold[l][at], *hit = m->seg_hit[l][at];
    return;
  }
  double w = log(t / x[k - 1]) / log(x[k] / x[k - 1]);
  *cold = m->seg_cold[l][k - 1] + w * (m->seg_cold[l][k] - m->seg_cold[l][k - 1]);
  *hit = m->seg_hit[l][k - 1] + w * (m->seg_hit[l][k] - m->seg_hit[l][k - 1]);
}

/* Per parameter, the curve measured from the place nearest the design's
 * runs (the mean over them of the parameters' changes, each over its range
 * in the design, lo..hi). */
static void pick_curves(const wsisa__objects_model *m, const double *params, size_t nruns,
                        const double *lo, const double *hi, int curve[WSISA_SEG_NPARAMS]) {
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    curve[p] = 0;
    double best = INFINITY;
    for (int c = 0; c < m->ncurves[p]; c++) {
      double d = 0;
      for (size_t r = 0; r < nruns; r++)
        for (int q = 0; q < WSISA_SEG_NPARAMS; q++) {
          double x = params[r * WSISA_SEG_NPARAMS + q], b = m->base[c][p][q];
          if (q == p || wsisa_seg_param_level(q) > 6 || x == b) continue;
          d += hi[q] > lo[q] ? fmin(1, fabs(x - b) / (hi[q] - lo[q])) : 1;
        }
      if (d < best) best = d, curve[p] = c;
    }
  }
}

/* ---- the stores and the memo: open-addressing tables of 64-bit keys (0:
 * empty), with a value each where vals is kept ----------------------------- */

/* The slot of key: where it is, or the empty one where it would go. */
static size_t slot(const wsisa__objects_table *t, uint64_t key) {
  size_t mask = t->cap - 1, i = (size_t)(key ^ (key >> 29)) & mask;
  while (t->keys[i] && t->keys[i] != key) i = (i + 1) & mask;
  return i;
}

/* Room for `more` keys, the table at most half full; -1: out of memory. */
static int table_room(wsisa__objects_table *t, size_t more, int with_values) {
  if (2 * (t->n + more) <= t->cap) return 0;
  size_t cap = t->cap ? 2 * t->cap : 1024; /* a power of 2 */
  while (2 * (t->n + more) > cap) cap *= 2;
  wsisa__objects_table g = {calloc(cap, sizeof *g.keys),
                            with_values ? malloc(cap * sizeof *g.vals) : NULL, 0, cap};
  if (!g.keys || (with_values && !g.vals)) {
    free(g.keys), free(g.vals);
    return -1;
  }
  for (size_t i = 0; i < t->cap; i++)
    if (t->keys[i]) {
      size_t j = slot(&g, t->keys[i]);
      g.keys[j] = t->keys[i];
      if (g.vals) g.vals[j] = t->vals[i];
      g.n++;
    }
  free(t->keys), free(t->vals);
  *t = g;
  return 0;
}

/* Whether key was there; puts it there (room made first). */
static int table_put(wsisa__objects_table *t, uint64_t key) {
  size_t i = slot(t, key);
  if (t->keys[i]) return 1;
  t->keys[i] = key;
  t->n++;
  return 0;
}

static void table_free(wsisa__objects_table *t) {
  free(t->keys), free(t->vals);
  memset(t, 0, sizeof *t);
}

/* ---- the stand-ins ------------------------------------------------------------ */

/* The share sens of the stand-ins that a parameter moves at all, and the
 * density of the values where each of them changes (rate, per unit of the
 * parameter): miss(d) = sens (1 - exp(-rate d)) fitted by least squares to
 * the changes d measured; one change measured, or none (its level's mean):
 * every change misses sens. */
static void fit(const double *d, const double *y, int n, double *sens, double *rate) {
  *rate = INFINITY;
  *sens = 0;
  for (int k = 0; k < n; k++) *sens += y[k] / n;
  if (n < 2) return;
  double best = 0, top = 0;
  for (int k = 0; k < n; k++) {
    best += (y[k] - *sens) * (y[k] - *sens);
    top = fmax(top, d[k]);
  }
  /* densities from a tenth of a cut over the largest change to 1000 of
   * them, eight a decade */
  for (int i = -8; i <= 24; i++) {
    double r = pow(10, i / 8.0) / top, gy = 0, gg = 0, sse = 0;
    for (int k = 0; k < n; k++) {
      double g = -expm1(-r * d[k]);
      gy += g * y[k], gg += g * g;
    }
    double f = gg > 0 ? fmin(1, fmax(0, gy / gg)) : 0;
    for (int k = 0; k < n; k++) {
      double e = y[k] - f * -expm1(-r * d[k]);
      sse += e * e;
    }
    if (sse < best - 1e-15) best = sse, *sens = f, *rate = r;
  }
}

/* A Poisson count of mean mu (mu at most CUTS). */
#define CUTS 64
/* A stand-in's ncut along a parameter: one that moves it at every change,
 * one that does not move it at all */
#define EVERY_CHANGE (-1)
#define NOT_MOVED (-2)
static int poisson(wsisa_sa_rng *rng, double mu) {
  double limit = exp(-mu), prod = wsisa_sa_rng_uniform(rng);
  int k = 0;
  while (prod > limit && k < CUTS) prod *= wsisa_sa_rng_uniform(rng), k++;
  return k;
}

void wsisa__objects_pricer_free(wsisa__objects_pricer *pr) {
  if (pr->memo) table_free(pr->memo), free(pr->memo);
  pr->memo = NULL;
  free(pr->ncut);
  free(pr->first);
  free(pr->cuts);
  pr->ncut = NULL, pr->first = NULL, pr->cuts = NULL;
}

int wsisa__objects_pricer_init(wsisa__objects_pricer *pr, const wsisa__objects_model *m,
                               const wsisa_reuse_buckets *b, const double *params,
                               const double *run_time) {
  memset(pr, 0, sizeof *pr);
  pr->m = m;
  pr->params = params;
  pr->run_time = run_time;
  size_t nruns = 0;
  for (size_t i = 0; i < b->start[b->n_buckets]; i++)
    if (b->instances[i] + 1 > nruns) nruns = b->instances[i] + 1;
  double *lo = pr->lo, *hi = pr->hi;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    lo[p] = INFINITY, hi[p] = -INFINITY;
    for (size_t r = 0; r < nruns; r++) {
      lo[p] = fmin(lo[p], params[r * WSISA_SEG_NPARAMS + p]);
      hi[p] = fmax(hi[p], params[r * WSISA_SEG_NPARAMS + p]);
    }
    if (wsisa_seg_param_level(p) > 6) pr->lev7[pr->nlev7++] = p;
    else if (hi[p] > lo[p]) pr->var[pr->nvar++] = p;
    else pr->held[pr->nheld++] = p;
  }
  pick_curves(m, params, nruns, lo, hi, pr->curve);
  /* every parameter of levels 1-6: those the design holds move the
   * reference's stand-ins where it differs from them */
  for (int l = 0; l < 2; l++)
    for (int v = 0; v < pr->nvar + pr->nheld; v++) {
      int p = v < pr->nvar ? pr->var[v] : pr->held[v - pr->nvar];
      int c = pr->curve[p], n = m->ncurves[p] ? m->npoints[c][p] : 0;
      if (n) fit(m->step[c][p], m->at[c][l][p], n, &pr->sens[l][p], &pr->rate[l][p]);
      else pr->sens[l][p] = m->miss[l][p], pr->rate[l][p] = INFINITY;
    }
  const size_t K = WSISA__OBJECTS_STANDINS, cells = 2 * K * (size_t)pr->nvar;
  size_t ncuts = 0, capcuts = 0;
  pr->memo = calloc(1, sizeof *pr->memo);
  pr->ncut = malloc((cells ? cells : 1) * sizeof *pr->ncut);
  pr->first = malloc((cells ? cells : 1) * sizeof *pr->first);
  int *rank = malloc(K * sizeof *rank);
  int rc = pr->memo && pr->ncut && pr->first && rank ? 0 : -1;
  for (int l = 0; l < 2 && !rc; l++)
    for (int v = 0; v < pr->nvar && !rc; v++) {
      int p = pr->var[v];
      /* a fixed stream a parameter: the estimate is the same at every call */
      wsisa_sa_rng rng;
      wsisa_sa_rng_seed(&rng, UINT64_C(0x77736973), (uint64_t)(l * WSISA_SEG_NPARAMS + p));
      /* which stand-ins the parameter moves: a share sens of them, in a
       * shuffled order of its own (the parameters independent) */
      for (size_t o = 0; o < K; o++) rank[o] = (int)o;
      for (size_t o = K - 1; o > 0; o--) {
        size_t k = (size_t)wsisa_sa_rng_below(&rng, o + 1);
        int t = rank[o];
        rank[o] = rank[k], rank[k] = t;
      }
      double mu = pr->rate[l][p] * (hi[p] - lo[p]);
      for (size_t o = 0; o < K && !rc; o++) {
        size_t at = ((size_t)l * K + o) * (size_t)pr->nvar + (size_t)v;
        pr->first[at] = ncuts;
        pr->ncut[at] = NOT_MOVED;
        if (!((rank[o] + 0.5) / (double)K < pr->sens[l][p])) continue;
        if (!(mu <= CUTS)) {
          pr->ncut[at] = EVERY_CHANGE;
          continue;
        }
        int k = poisson(&rng, mu);
        if (ncuts + (size_t)k > capcuts) {
          double *grown = wsisa_grow(pr->cuts, &capcuts, ncuts + (size_t)k, sizeof *grown, 1024);
          if (!grown) {
            rc = -1;
            break;
          }
          pr->cuts = grown;
        }
        for (int i = 0; i < k; i++)
          pr->cuts[ncuts + (size_t)i] = lo[p] + wsisa_sa_rng_uniform(&rng) * (hi[p] - lo[p]);
        if (k > 1) qsort(pr->cuts + ncuts, (size_t)k, sizeof *pr->cuts, wsisa_compare_doubles);
        pr->ncut[at] = k;
        ncuts += (size_t)k;
      }
    }
  free(rank);
  if (rc) wsisa__objects_pricer_free(pr);
  return rc;
}

/* Whether a change of parameter p by d, outside what the design's cuts
 * say (the reference's values), moves stand-in o: with the probability the
 * fitted curve gives (given, for a varied parameter, that it moves it at
 * all), drawn from o, l and p alone. */
static int moved_outside(const wsisa__objects_pricer *pr, int l, size_t o, int p, double d,
                         int given) {
  double rate = pr->rate[l][p], chance = isinf(rate) ? 1 : -expm1(-rate * d);
  if (!given) chance *= pr->sens[l][p];
  uint64_t u = wsisa_mix64(UINT64_C(0x726566) ^ ((uint64_t)l << 48) ^ ((uint64_t)o << 8) ^
                           (uint64_t)p);
  return (double)(u >> 11) * 0x1p-53 < chance;
}

/* Stand-in o's cell at values r, level l: a key, never 0. */
static uint64_t cell(const wsisa__objects_pricer *pr, int l, size_t o, const double *r) {
  uint64_t h = wsisa_mix64(((uint64_t)l << 32) + o + 1);
  const size_t K = WSISA__OBJECTS_STANDINS;
  for (int v = 0; v < pr->nvar; v++) {
    size_t at = ((size_t)l * K + o) * (size_t)pr->nvar + (size_t)v;
    int p = pr->var[v];
    double x = r[p];
    uint64_t c = 0;
    if (pr->ncut[at] == EVERY_CHANGE) {
      memcpy(&c, &x, sizeof c);
    } else if (pr->ncut[at] != NOT_MOVED && (x < pr->lo[p] || x > pr->hi[p]) &&
               moved_outside(pr, l, o, p, x < pr->lo[p] ? pr->lo[p] - x : x - pr->hi[p], 1)) {
      c = x < pr->lo[p] ? UINT64_MAX : UINT64_MAX - 1; /* past every cut, and then one */
    } else if (pr->ncut[at] > 0) {
      const double *cut = pr->cuts + pr->first[at];
      while (c < (uint64_t)pr->ncut[at] && cut[c] < x) c++;
    }
    h = wsisa_mix64(h ^ c);
  }
  /* held by the design: only the reference can differ */
  for (int v = 0; v < pr->nheld; v++) {
    int p = pr->held[v];
    if (r[p] != pr->lo[p] && moved_outside(pr, l, o, p, fabs(r[p] - pr->lo[p]), 0))
      h = wsisa_mix64(h ^ (UINT64_C(0x686f6c64) + (uint64_t)p));
  }
  /* level 7's values are in a group's key */
  for (int v = 0; l == 1 && v < pr->nlev7; v++) {
    uint64_t c;
    memcpy(&c, &r[pr->lev7[v]], sizeof c);
    h = wsisa_mix64(h ^ c);
  }
  return h ? h : 1;
}

/* The run id of the tile's reference segmentation in a store's runs. */
#define REFERENCE SIZE_MAX

/* Run r's stand-ins into level l's set of the store: how many were not
 * there; -1: out of memory. */
static long put(const wsisa__objects_pricer *pr, wsisa__objects_seen *seen, int l, size_t run) {
  if (table_room(&seen->set[l], WSISA__OBJECTS_STANDINS, 0)) return -1;
  const double *r = run == REFERENCE ? wsisa_seg_defaults() : pr->params + run * WSISA_SEG_NPARAMS;
  long missed = 0;
  for (size_t o = 0; o < WSISA__OBJECTS_STANDINS; o++)
    missed += !table_put(&seen->set[l], cell(pr, l, o, r));
  return missed;
}

/* Room in seen's runs of level l for one more; -1: out of memory. */
static int room_for_run(wsisa__objects_seen *seen, int l) {
  size_t *grown =
      wsisa_grow(seen->runs[l], &seen->capruns[l], seen->nruns[l] + 1, sizeof *grown, 64);
  if (grown) seen->runs[l] = grown;
  return grown ? 0 : -1;
}

/* The hash of the runs the store saw, in order, and then run. */
static uint64_t next_seq(const wsisa__objects_seen *seen, int l, size_t run) {
  return wsisa_mix64(seen->seq[l] ^ wsisa_mix64(((uint64_t)run << 1) | (uint64_t)l));
}

int wsisa__objects_seen_reference(wsisa__objects_seen *seen) {
  for (int l = 0; l < 2; l++) {
    if (room_for_run(seen, l)) return -1;
    seen->seq[l] = next_seq(seen, l, REFERENCE);
    seen->runs[l][seen->nruns[l]++] = REFERENCE;
  }
  return 0;
}

double wsisa__objects_price(const wsisa__objects_pricer *pr, wsisa__objects_seen *seen,
                            size_t run, int level, double *computed, double *reusable) {
  const wsisa__objects_model *m = pr->m;
  int l = level - 6;
  if (room_for_run(seen, l)) return -1;
  /* the memo answers by the runs the store saw, in order, and this one:
   * every tile's store of a rank mostly sees the same runs in the same
   * order, so the stand-ins are followed through one of them */
  uint64_t at = next_seq(seen, l, run);
  wsisa__objects_table *memo = pr->memo;
  double miss;
  size_t i = memo->cap ? slot(memo, at) : 0;
  if (memo->cap && memo->keys[i]) {
    miss = memo->vals[i];
  } else {
    /* the store's set holds the stand-ins of its first `held` runs: it
     * catches up with the runs it saw through the memo, then takes this */
    long missed = 0;
    for (; seen->held[l] < seen->nruns[l] && missed >= 0; seen->held[l]++)
      missed = put(pr, seen, l, seen->runs[l][seen->held[l]]);
    if (missed >= 0) missed = put(pr, seen, l, run);
    if (missed < 0 || table_room(memo, 1, 1)) return -1;
    seen->held[l]++;
    miss = (double)missed / WSISA__OBJECTS_STANDINS;
    i = slot(memo, at);
    memo->keys[i] = at, memo->vals[i] = miss, memo->n++;
  }
  seen->runs[l][seen->nruns[l]++] = run;
  seen->seq[l] = at;
  double t = pr->run_time ? pr->run_time[run * WSISA_SEG_LEVELS + 5 + (size_t)l] : 0, cold, hit;
  if (!(t > 0)) t = m->fine[l];
  ratios_at(m, l, t, &cold, &hit);
  double reuse = (cold - hit) * t;
  *computed += miss * reuse;
  *reusable += reuse;
  return hit + miss * (cold - hit);
}

void wsisa__objects_seen_clear(wsisa__objects_seen *seen) {
  for (int l = 0; l < 2; l++) {
    wsisa__objects_table *t = &seen->set[l];
    if (t->n) memset(t->keys, 0, t->cap * sizeof *t->keys);
    t->n = 0;
    seen->nruns[l] = seen->held[l] = 0;
    seen->seq[l] = 0;
  }
}

void wsisa__objects_seen_free(wsisa__objects_seen *seen) {
  for (int l = 0; l < 2; l++) table_free(&seen->set[l]), free(seen->runs[l]);
  memset(seen, 0, sizeof *seen);
}
