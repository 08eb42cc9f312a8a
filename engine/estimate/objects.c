/* Object reuse in the estimate (docs/architecture.md, "The estimate"): how
 * much of levels 6 and 7 a run takes from its tile's object store. Two
 * parts. Calibration measures, on its largest tile, the time of levels 6 and
 * 7 without a store, with an empty one (every cluster and group computed)
 * and with one holding the same run (every one found); and, for each
 * parameter of levels 1-6, the share of the clusters' and groups' pixels a
 * store holding one run's units leaves to compute for a run that differs in
 * that parameter alone: consecutive runs of the design that do (a MOAT
 * step), else the defaults and the parameter moved by the design's step.
 * The estimate then walks the plan's trees in the executor's order and gives
 * each level-6/7 task the share of its nearest earlier task on the tile: the
 * parameters they differ in above it (each leaving its measured share, the
 * shares combined as independent), a change of a level-7 parameter missing
 * every group (they are in its key). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate.h"

#define REPEATS 3
#define PAIRS 2    /* design pairs measured per parameter, at most */
#define WINDOW 256 /* earlier tasks compared with, most recent first */

static void objects_path(char *path, size_t cap) {
  wsisa_runtime_default_home();
  const char *home = getenv("STARPU_HOME");
  snprintf(path, cap, "%s/.starpu/sampling/wsisa_object_reuse.json", home ? home : ".");
}

/* ---- the measurement --------------------------------------------------------- */

/* Levels 1-5 of p, then levels 6 and 7 timed one after the other (one CPU
 * worker: the wall clock is their work). */
static int timed(const wsisa_tile_data *tile, const double *p, wsisa_object_store *store,
                 double dt[2], wsisa_err *e) {
  wsisa_tile_data t = *tile;
  t.objects = store;
  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  int rc = 0;
  for (int l = 1; l <= 5 && !rc; l++) rc = wsisa_workflow_task_submit(l, p, &t, &path, NULL, e);
  starpu_task_wait_for_all();
  for (int l = 6; l <= 7 && !rc; l++) {
    double t0 = wsisa_now();
    rc = wsisa_workflow_task_submit(l, p, &t, &path, NULL, e);
    starpu_task_wait_for_all();
    dt[l - 6] = wsisa_now() - t0;
  }
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++) wsisa_workflow_task_release(l, &path);
  starpu_task_wait_for_all();
  return rc;
}

/* The least of REPEATS timings of p (store: NULL none; warm_with: a run the
 * fresh store first holds, NULL: empty; same: p twice, the second timed). */
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

/* The design's step of parameter p: the median of the non-zero changes of p
 * between consecutive runs (a MOAT step, a VBD column swap), 0 if none. */
static double design_step(const double *rows, size_t nruns, int p) {
  double *d = malloc((nruns ? nruns : 1) * sizeof *d);
  size_t n = 0;
  for (size_t r = 1; d && r < nruns; r++) {
    double x = fabs(rows[r * WSISA_SEG_NPARAMS + p] - rows[(r - 1) * WSISA_SEG_NPARAMS + p]);
    if (x > 0) {
      size_t j = n++;
      while (j > 0 && d[j - 1] > x) d[j] = d[j - 1], j--;
      d[j] = x;
    }
  }
  double step = n ? d[(n - 1) / 2] : 0;
  free(d);
  return step;
}

/* The share of the crops' pixels of levels 6 and 7 that p computes (does
 * not find) in a fresh store holding the defaults' units: deterministic, as
 * the store's content does not depend on the timing here. */
static int miss_share(const wsisa_tile_data *tile, const double *v0, const double *p,
                      double miss[2], wsisa_err *e) {
  wsisa_object_store *s = NULL;
  if (wsisa_object_store_new(UINT64_C(1) << 30, &s)) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  double dt[2];
  wsisa_object_tally a, b;
  int rc = timed(tile, v0, s, dt, e);
  wsisa_object_store_tally(s, &a);
  if (!rc) rc = timed(tile, p, s, dt, e);
  wsisa_object_store_tally(s, &b);
  wsisa_object_store_free(s);
  for (int l = 0; l < 2; l++) {
    uint64_t area = b.area[l] - a.area[l], reused = b.area_reused[l] - a.area_reused[l];
    miss[l] = area ? 1.0 - (double)reused / (double)area : 0.0;
  }
  return rc;
}

int wsisa__objects_probe(const wsisa_tile_ref *ref, const double *rows, size_t nruns,
                         wsisa_err *e) {
  wsisa_image *rgb = NULL;
  starpu_data_handle_t h_rgb = NULL;
  wsisa_tile_data tile;
  memset(&tile, 0, sizeof tile);
  int rc = wsisa_tile_load(ref, &rgb, e);
  if (!rc) rc = wsisa_image_register(rgb, &h_rgb, e);
  if (!rc) rc = wsisa_workflow_tile_submit(h_rgb, rgb->width, rgb->height, 1, &tile, e);
  const double *v0 = wsisa_seg_defaults();
  double fine[2], cold[2], hit[2];
  json_t *params = json_object();
  if (!rc) rc = least(&tile, v0, 0, NULL, fine, e);
  if (!rc) rc = least(&tile, v0, 1, NULL, cold, e);
  if (!rc) rc = least(&tile, v0, 1, v0, hit, e);
  for (int p = 0; p < WSISA_SEG_NPARAMS && !rc; p++) {
    if (wsisa_seg_param_level(p) > 6) continue;
    /* the design's own pairs first: consecutive runs that differ, up to
     * level 6, in p alone (a MOAT step), at their own place and step */
    double sum[2] = {0, 0}, miss[2] = {1, 1};
    int pairs = 0;
    for (size_t r = 1; r < nruns && pairs < PAIRS && !rc; r++) {
      const double *a = rows + (r - 1) * WSISA_SEG_NPARAMS, *b = rows + r * WSISA_SEG_NPARAMS;
      int only = a[p] != b[p];
      for (int q = 0; q < WSISA_SEG_NPARAMS && only; q++)
        if (q != p && wsisa_seg_param_level(q) <= 6 && a[q] != b[q]) only = 0;
      if (!only) continue;
      if ((rc = miss_share(&tile, a, b, miss, e))) break;
      sum[0] += miss[0], sum[1] += miss[1], pairs++;
    }
    /* else the defaults and p moved by the design's step */
    double step = design_step(rows, nruns, p), lo = INFINITY, hi = -INFINITY;
    if (!rc && !pairs && step > 0) {
      for (size_t r = 0; r < nruns; r++) {
        lo = fmin(lo, rows[r * WSISA_SEG_NPARAMS + p]);
        hi = fmax(hi, rows[r * WSISA_SEG_NPARAMS + p]);
      }
      double v[WSISA_SEG_NPARAMS];
      memcpy(v, v0, sizeof v);
      v[p] = v0[p] + step <= hi ? v0[p] + step : v0[p] - step;
      if (v[p] < lo && v0[p] + step > hi) v[p] = hi;
      if (v[p] != v0[p] && !(rc = miss_share(&tile, v0, v, miss, e)))
        sum[0] = miss[0], sum[1] = miss[1], pairs = -1;
    }
    if (rc || !pairs) continue;
    int n = pairs > 0 ? pairs : 1;
    json_t *m = json_pack("{s:s, s:i, s:f, s:[f, f]}", "from",
                          pairs > 0 ? "design pairs" : "defaults and the design's step", "pairs",
                          n, "step", step, "miss", sum[0] / n, sum[1] / n);
    json_object_set_new(params, wsisa_seg_param_name(p), m);
  }
  if (tile.rc) wsisa_workflow_tile_release(&tile, 1);
  starpu_task_wait_for_all();
  if (h_rgb) starpu_data_unregister(h_rgb);
  int w = rgb ? rgb->width : 0, h = rgb ? rgb->height : 0;
  wsisa_image_free(rgb);
  if (rc) {
    json_decref(params);
    return rc;
  }
  json_t *root = json_pack("{s:i, s:i, s:[f, f], s:[f, f], s:[f, f], s:o}", "width", w, "height",
                           h, "fine", fine[0], fine[1], "cold", cold[0], cold[1], "hit", hit[0],
                           hit[1], "parameters", params);
  char path[4200];
  objects_path(path, sizeof path);
  rc = root && json_dump_file(root, path, JSON_INDENT(1)) == 0
           ? 0
           : wsisa_error(e, WSISA_EIO, "%s: cannot write", path);
  json_decref(root);
  return rc;
}

/* ---- the model ---------------------------------------------------------------- */

int wsisa__objects_load(wsisa__objects_model *m) {
  memset(m, 0, sizeof *m);
  char path[4200];
  objects_path(path, sizeof path);
  json_t *root = json_load_file(path, 0, NULL);
  if (!root) return -1;
  double f[2], c[2], h[2];
  json_t *params = NULL;
  int ok = json_unpack(root, "{s:i, s:i, s:[F, F], s:[F, F], s:[F, F], s:o}", "width", &m->width,
                       "height", &m->height, "fine", &f[0], &f[1], "cold", &c[0], &c[1], "hit",
                       &h[0], &h[1], "parameters", &params) == 0;
  for (int l = 0; ok && l < 2; l++) {
    ok = f[l] > 0 && c[l] >= h[l] && h[l] >= 0;
    m->fine[l] = f[l];
    m->cold[l] = c[l] / f[l];
    m->hit[l] = h[l] / f[l];
  }
  for (int p = 0; ok && p < WSISA_SEG_NPARAMS; p++) {
    json_t *q = json_object_get(params, wsisa_seg_param_name(p));
    double s[2];
    m->miss[0][p] = m->miss[1][p] = -1; /* not measured */
    if (!q || json_unpack(q, "{s:[F, F]}", "miss", &s[0], &s[1])) continue;
    for (int l = 0; l < 2; l++) m->miss[l][p] = fmin(1, fmax(0, s[l]));
  }
  json_decref(root);
  if (!ok) return -1;
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
  int measured = 0;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) measured += !m->fill[0][p] && wsisa_seg_param_level(p) <= 6;
  snprintf(m->source, sizeof m->source,
           "calibration on a %dx%d tile: levels 6-7 with an empty store %.2f x and a full one "
           "%.2f x their fine-grain time, %d parameters' changes measured; %s",
           m->width, m->height, (m->cold[0] * f[0] + m->cold[1] * f[1]) / (f[0] + f[1]),
           (m->hit[0] * f[0] + m->hit[1] * f[1]) / (f[0] + f[1]), measured, path);
  m->loaded = 1;
  return 0;
}

/* The share of a task's units left to compute after an earlier task on the
 * tile whose run is q (this one's is r): 1 - prod(1 - miss_p) over the
 * parameters of levels 1..top they differ in. */
static double miss_after(const wsisa__objects_model *m, int l, const double *r, const double *q,
                         int top) {
  double keep = 1;
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    if (wsisa_seg_param_level(p) <= top && r[p] != q[p]) keep *= 1 - m->miss[l][p];
  return 1 - keep;
}

int wsisa__objects_scale(const wsisa__objects_model *m, const wsisa_reuse_buckets *b,
                         const double *params, double ***scale, double *share, wsisa_err *e) {
  size_t nb = b->n_buckets, cap = 0;
  *scale = calloc(nb ? nb : 1, sizeof **scale);
  size_t *seen[2] = {NULL, NULL}, nseen[2] = {0, 0};
  for (size_t k = 0; k < nb; k++) cap += b->trees[k]->n_nodes;
  seen[0] = malloc((cap ? cap : 1) * sizeof *seen[0]);
  seen[1] = malloc((cap ? cap : 1) * sizeof *seen[1]);
  if (!*scale || !seen[0] || !seen[1]) goto nomem;
  double computed = 0, all = 0;
  /* every unit of a tile in bucket order, each tree depth first: the
   * executor's order on a rank that holds the tile */
  for (size_t k = 0; k < nb; k++) {
    const wsisa_reuse_tree *t = b->trees[k];
    double *s = (*scale)[k] = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *s);
    if (!s) goto nomem;
    for (size_t i = 0; i < t->n_nodes; i++) {
      const wsisa_reuse_node *n = &t->nodes[i];
      s[i] = 1;
      if (n->level < 6) continue;
      int l = n->level - 6;
      size_t run = t->instances[n->first_instance];
      const double *r = params + run * WSISA_SEG_NPARAMS;
      double miss = 1;
      for (size_t j = nseen[l], w = 0; j-- > 0 && w < WINDOW && miss > 0; w++) {
        const double *q = params + seen[l][j] * WSISA_SEG_NPARAMS;
        /* level 7's parameters are in every group's key */
        int same7 = 1;
        for (int p = 0; l == 1 && p < WSISA_SEG_NPARAMS; p++)
          if (wsisa_seg_param_level(p) == 7 && r[p] != q[p]) same7 = 0;
        if (same7) miss = fmin(miss, miss_after(m, l, r, q, 6));
      }
      seen[l][nseen[l]++] = run;
      s[i] = m->hit[l] + miss * (m->cold[l] - m->hit[l]);
      double reusable = (m->cold[l] - m->hit[l]) * m->fine[l];
      computed += miss * reusable;
      all += reusable;
    }
  }
  *share = all > 0 ? 1 - computed / all : 0;
  free(seen[0]);
  free(seen[1]);
  return 0;
nomem:
  free(seen[0]);
  free(seen[1]);
  wsisa__objects_scale_free(*scale, nb);
  *scale = NULL;
  return wsisa_error(e, WSISA_ENOMEM, "out of memory");
}

void wsisa__objects_scale_free(double **scale, size_t nb) {
  for (size_t k = 0; scale && k < nb; k++) free(scale[k]);
  free(scale);
}
