/* Workers busy at once: a task's slowdown with k CPU workers busy, its probe
 * and the factor (docs/architecture.md, "The estimate in detail": "Busy workers"). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"

#define FILE_NAME "wsisa_busy_workers.json"
#define REPEATS 5
#define ROUNDS 2

static int load(json_t *root, wsisa__models *models);

/* The same set at every width: `copies` chains, chain c at calibration's
 * segmentation c modulo their number, all ready side by side; its seconds in
 * tasks and wall time (its outputs' release too, as a run's) added up. */
static int set_work(const wsisa_tile_data *tile, const wsisa__probe_input *w, int copies,
                    wsisa_task_data *paths, double *secs, double *wall, wsisa_err *e) {
  starpu_task_wait_for_all(); /* the tile's stage out of it */
  wsisa__workers_executing();
  double t0 = wsisa_now();
  int rc = 0;
  memset(paths, 0, (size_t)copies * sizeof *paths);
  /* level by level across the chains */
  for (int l = 1; l <= WSISA_SEG_LEVELS && !rc; l++)
    for (int c = 0; c < copies && !rc; c++)
      rc = wsisa_workflow_task_submit(l, w->vectors + (size_t)c % w->nvec * WSISA_SEG_NPARAMS,
                                      tile, &paths[c], NULL, e);
  starpu_task_wait_for_all();
  for (int c = 0; c < copies; c++)
    for (int l = 1; l <= WSISA_SEG_LEVELS; l++) wsisa_workflow_task_release(l, &paths[c]);
  starpu_task_wait_for_all();
  *wall += wsisa_now() - t0;
  *secs += wsisa__workers_executing();
  return rc;
}

/* The set on k CPU workers under a StarPU of its own: once untimed (the
 * process's pages: a run's first writes are priced apart), then ROUNDS
 * times, added up. */
static int session(const wsisa__probe_input *w, int k, int copies, double *secs, double *wall,
                   wsisa_err *e) {
  wsisa_runtime_opts o = {.sched = w->sched, .ncpu = k, .nopencl = 0};
  int rc = wsisa_codelets_start(&o, e);
  if (rc) return rc;
  starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  wsisa_task_data *paths = calloc((size_t)copies, sizeof *paths);
  wsisa__probe_tile pt;
  if (!paths) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc && !(rc = wsisa__probe_tile_open(&w->tiles[0], &pt, e))) {
    double s0 = 0, w0 = 0;
    rc = set_work(&pt.tile, w, copies, paths, &s0, &w0, e);
    *secs = *wall = 0;
    for (int r = 0; r < ROUNDS && !rc; r++)
      rc = set_work(&pt.tile, w, copies, paths, secs, wall, e);
    wsisa__probe_tile_close(&pt);
  }
  free(paths);
  starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  wsisa_runtime_shutdown();
  return rc;
}

static int probe(const wsisa__probe_input *w, json_t **out, wsisa_err *e) {
  int ks[WSISA__BUSY_POINTS], n = 0;
  for (int k = 1; k <= w->cores && n < WSISA__BUSY_POINTS; k *= 2) ks[n++] = k;
  /* a chain per worker of the widest width at least, and every segmentation */
  int copies = w->nvec > (size_t)ks[n - 1] ? (int)w->nvec : ks[n - 1];
  double t[REPEATS][WSISA__BUSY_POINTS], wall[REPEATS][WSISA__BUSY_POINTS];
  double ratio[WSISA__BUSY_POINTS][REPEATS], busy[WSISA__BUSY_POINTS][REPEATS], alone[REPEATS];
  int rc = 0;
  /* the widths in turns: a shared machine's load drifts between them less
   * than between one width's rounds and the next's */
  for (int r = 0; r < REPEATS && !rc; r++)
    for (int i = 0; i < n && !rc; i++) rc = session(w, ks[i], copies, &t[r][i], &wall[r][i], e);
  if (rc) return rc;
  for (int r = 0; r < REPEATS; r++) {
    if (!(t[r][0] > 0))
      return wsisa_error(e, WSISA_ERUNTIME, "busy workers: nothing measured on one worker");
    alone[r] = t[r][0] / (ROUNDS * copies);
    for (int i = 0; i < n; i++) {
      ratio[i][r] = t[r][i] / t[r][0];
      busy[i][r] = wall[r][i] > 0 ? t[r][i] / wall[r][i] : 0;
    }
  }
  /* [k, factor], and the workers the set kept busy on average (its seconds
   * in tasks over its wall time) to read them by: the median of the turns' */
  json_t *points = json_array(), *average = json_array();
  for (int i = 0; i < n; i++) {
    json_array_append_new(points, json_pack("[i, f]", ks[i], wsisa_median(ratio[i], REPEATS)));
    json_array_append_new(average, json_pack("[i, f]", ks[i], wsisa_median(busy[i], REPEATS)));
  }
  json_t *root = json_pack("{s:i, s:i, s:i, s:i, s:f, s:o, s:o}", "cores", w->cores,
                           "calibrated_cpu_workers", w->calibrated_with, "segmentations",
                           (int)w->nvec, "chains", copies, "alone_s", wsisa_median(alone, REPEATS),
                           "factors", points, "busy_on_average", average);
  /* calibration's rounds: measured now, or, when this calibration ran none
   * (the models held every task), as the one that filled them measured */
  double cal_busy = w->calibration_busy;
  wsisa__models before;
  json_t *was = wsisa__probe_read(FILE_NAME);
  if (!(cal_busy > 0) && load(was, &before) == 0 &&
      before.busy.calibrated_with == w->calibrated_with)
    cal_busy = before.busy.calibration_busy;
  json_decref(was);
  if (cal_busy > 0 && root)
    json_object_set_new(root, "calibration_busy_on_average", json_real(cal_busy));
  *out = root;
  return 0;
}
/* ---- the model ---------------------------------------------------------------- */

/* [k, value] pairs of `root`'s `key` at the widths of `m` (k where the file
 * has none: a file without them is read as if every width kept all its
 * workers busy). */
static void by_width(const wsisa__busy_model *m, json_t *root, const char *key, double *out) {
  json_t *pairs = json_object_get(root, key);
  for (int i = 0; i < m->n; i++) {
    out[i] = m->workers[i];
    for (size_t p = 0; p < json_array_size(pairs); p++) {
      int k;
      double v;
      if (!json_unpack(json_array_get(pairs, p), "[i, F]", &k, &v) && k == m->workers[i] && v > 0)
        out[i] = v;
    }
  }
}

static int load(json_t *root, wsisa__models *models) {
  wsisa__busy_model *m = &models->busy;
  memset(m, 0, sizeof *m);
  if (!root) return -1;
  json_t *points = json_object_get(root, "factors");
  m->calibrated_with = (int)json_integer_value(json_object_get(root, "calibrated_cpu_workers"));
  for (size_t i = 0; i < json_array_size(points) && m->n < WSISA__BUSY_POINTS; i++) {
    int k;
    double f;
    if (json_unpack(json_array_get(points, i), "[i, F]", &k, &f) || k < 1 || !(f > 0)) continue;
    /* by workers, fewest first */
    int at = m->n++;
    while (at > 0 && m->workers[at - 1] > k) {
      m->workers[at] = m->workers[at - 1];
      m->factor[at] = m->factor[at - 1];
      at--;
    }
    m->workers[at] = k;
    m->factor[at] = f;
  }
  by_width(m, root, "busy_on_average", m->busy);
  m->calibration_busy = json_number_value(json_object_get(root, "calibration_busy_on_average"));
  /* without the width the models were filled at, a ratio cannot be taken */
  if (!m->n || m->calibrated_with < 1) {
    m->n = 0;
    return -1;
  }
  /* one worker is the factor's unit, whatever its set's waits; the workers
   * busy grow with the width; and more of them busy cannot make a task
   * faster: a factor below the one before is the machine's drift between
   * widths, read as no slowdown */
  if (m->workers[0] == 1) m->busy[0] = 1;
  for (int i = 1; i < m->n; i++) {
    if (!(m->busy[i] > m->busy[i - 1] * 1.001)) m->busy[i] = m->busy[i - 1] * 1.001;
    if (m->factor[i] < m->factor[i - 1]) m->factor[i] = m->factor[i - 1];
  }
  m->loaded = 1;
  return 0;
}

static int describe(const wsisa__models *models, char *how, size_t cap) {
  const wsisa__busy_model *m = &models->busy;
  if (!m->loaded) return -1;
  size_t used = (size_t)snprintf(how, cap, "a task at k CPU workers:");
  for (int i = 0; i < m->n && used < cap; i++)
    used += (size_t)snprintf(how + used, cap - used, "%s %.2fx at %d (%.2f busy)", i ? "," : "",
                             m->factor[i], m->workers[i], m->busy[i]);
  if (used < cap)
    snprintf(how + used, cap - used, "; the models filled at %d (%.2f busy)", m->calibrated_with,
             m->calibration_busy > 0 ? m->calibration_busy
                                     : wsisa__busy_at_width(m, m->calibrated_with));
  return 0;
}

const wsisa__probe wsisa__probe_busy = {
    "busy workers", FILE_NAME, 0, NULL, probe, load, describe,
    offsetof(wsisa_estimate_figures, busy_source),
    "the models' times at any number of workers busy"};

/* Linear in log(x) between points (x[i], y[i]), x increasing; below the
 * first, its y; past the last, the last two's line up to `cap`, then flat. */
static double log_line(const double *x, const double *y, int n, double at, double cap) {
  if (n < 1) return 1;
  if (at <= x[0] || n < 2) return y[0];
  int i = 1;
  while (i < n - 1 && at > x[i]) i++;
  if (at > x[n - 1]) at = fmin(at, fmax(cap, x[n - 1]));
  double w = log(at / x[i - 1]) / log(x[i] / x[i - 1]);
  return y[i - 1] + w * (y[i] - y[i - 1]);
}

double wsisa__busy_factor(const wsisa__busy_model *m, double busy) {
  if (!m->loaded || m->n < 1 || !(busy > 0)) return 1;
  return log_line(m->busy, m->factor, m->n, busy, (double)m->workers[m->n - 1]);
}

double wsisa__busy_at_width(const wsisa__busy_model *m, int workers) {
  if (!m->loaded || m->n < 1 || workers < 1) return workers > 0 ? workers : 1;
  double k[WSISA__BUSY_POINTS];
  for (int i = 0; i < m->n; i++) k[i] = m->workers[i];
  /* past the widest measured, the same share of the workers busy */
  if (workers > m->workers[m->n - 1])
    return m->busy[m->n - 1] * workers / m->workers[m->n - 1];
  return log_line(k, m->busy, m->n, workers, k[m->n - 1]);
}

double wsisa__busy_ratio(const wsisa__busy_model *m, double busy) {
  if (!m->loaded || !(busy > 0)) return 1;
  double at = wsisa__busy_factor(m, m->calibration_busy > 0
                                        ? m->calibration_busy
                                        : wsisa__busy_at_width(m, m->calibrated_with));
  return at > 0 ? wsisa__busy_factor(m, busy) / at : 1;
}
