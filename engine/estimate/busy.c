/* Workers busy at once in the estimate (docs/architecture.md, "The
 * estimate"): a task is slower when the other workers of the node run beside
 * it (they share the memory bandwidth and the caches; on a 16-core node every
 * task took 1.43 x its time alone with 16 workers busy), and StarPU's models
 * hold the times of the worker set calibration ran, busy as it was.
 * Calibration runs its own round (the tile's stage, the reference and the
 * design's segmentations, measured: the mix of tasks the models were filled
 * with, and a run's mix, with its waits on dependencies) on one CPU worker
 * and on k CPU workers, k = 1, 2, 4, ... up to the cores offered, and keeps
 * each k's seconds in tasks over the one worker's (the widths in turns, the
 * median of the ratios of each turn: a shared machine's speed drifts
 * between turns, less within one), with the CPU workers its rounds ran on;
 * the estimate scales its CPU workers' task times by the factor at the CPU
 * workers busy over the factor at calibration's, so at calibration's own
 * width the models stand as measured. Timed by the seconds the workers
 * spend in tasks (StarPU's worker profiling): waiting for a task does not
 * count, a stall on memory does. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "engine/estimate/estimate.h"

#define REPEATS 3

/* ---- the measurement --------------------------------------------------------- */

/* The seconds the CPU workers spent in tasks since the last call (StarPU's
 * worker profiling, which it then resets): a worker waiting for a task does
 * not count, whether it sleeps or polls. */
static double workers_executing(void) {
  double sum = 0;
  for (int w = 0; w < (int)starpu_worker_get_count(); w++) {
    struct starpu_profiling_worker_info info;
    if (starpu_worker_get_type(w) != STARPU_CPU_WORKER ||
        starpu_profiling_worker_get_info(w, &info) != 0)
      continue;
    sum += (double)info.executing_time.tv_sec + 1e-9 * (double)info.executing_time.tv_nsec;
  }
  return sum;
}

/* Calibration's round on k CPU workers under a StarPU of its own: a round
 * untimed first (the process's pages and the programs' first calls: a run's
 * first writes are priced apart), then the seconds in tasks of one. */
static int session(const wsisa__busy_work *w, const char *sched, int k, double *secs,
                   wsisa_err *e) {
  wsisa_runtime_opts o = {.sched = sched, .ncpu = k, .nopencl = 0};
  int rc = wsisa_codelets_start(&o, e);
  if (rc) return rc;
  starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  for (int r = 0; r < 2 && !rc; r++) {
    workers_executing();
    rc = wsisa__calibration_round(w->tile, w->halo, w->vectors, w->nvec, w->object_match,
                                  w->features, e);
    *secs = workers_executing();
  }
  starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  wsisa_runtime_shutdown();
  return rc;
}

int wsisa__busy_probe(const wsisa__busy_work *w, const char *sched, int cores, int calibrated_with,
                      wsisa_err *e) {
  int ks[WSISA__BUSY_POINTS], n = 0;
  for (int k = 1; k <= cores && n < WSISA__BUSY_POINTS; k *= 2) ks[n++] = k;
  double t[REPEATS][WSISA__BUSY_POINTS], ratio[WSISA__BUSY_POINTS][REPEATS], alone[REPEATS];
  int rc = 0;
  /* the widths in turns: a shared machine's load drifts between them less
   * than between one width's rounds and the next's */
  for (int r = 0; r < REPEATS && !rc; r++)
    for (int i = 0; i < n && !rc; i++) rc = session(w, sched, ks[i], &t[r][i], e);
  if (rc) return rc;
  for (int r = 0; r < REPEATS; r++) {
    if (!(t[r][0] > 0))
      return wsisa_error(e, WSISA_ERUNTIME, "busy workers: nothing measured on one worker");
    alone[r] = t[r][0];
    for (int i = 0; i < n; i++) ratio[i][r] = t[r][i] / t[r][0];
  }
  json_t *points = json_array();
  for (int i = 0; i < n; i++) {
    qsort(ratio[i], REPEATS, sizeof ratio[i][0], wsisa_compare_doubles);
    json_array_append_new(points, json_pack("[i, f]", ks[i], ratio[i][REPEATS / 2]));
  }
  qsort(alone, REPEATS, sizeof alone[0], wsisa_compare_doubles);
  return wsisa__probe_write(json_pack("{s:i, s:i, s:i, s:f, s:o}", "cores", cores,
                                      "calibrated_cpu_workers", calibrated_with, "segmentations",
                                      (int)w->nvec, "alone_s", alone[REPEATS / 2], "factors",
                                      points),
                            "wsisa_busy_workers.json", e);
}

/* ---- the model ---------------------------------------------------------------- */

int wsisa__busy_load(wsisa__busy_model *m) {
  memset(m, 0, sizeof *m);
  char path[4200];
  json_t *root = wsisa__probe_read("wsisa_busy_workers.json", path, sizeof path);
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
  json_decref(root);
  /* without the width the models were filled at, a ratio cannot be taken */
  if (!m->n || m->calibrated_with < 1) {
    m->n = 0;
    return -1;
  }
  char list[256];
  size_t used = 0;
  list[0] = 0;
  for (int i = 0; i < m->n && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%d: %.2f", i ? ", " : "",
                             m->workers[i], m->factor[i]);
  snprintf(m->source, sizeof m->source,
           "calibration: the seconds in tasks of its round on k CPU workers over those on "
           "one (%s), the models filled with %d CPU workers; the CPU task times x the "
           "factor at the CPU workers busy over the factor at %d, interpolated linearly in "
           "log(workers), the nearest's outside them; %s",
           list, m->calibrated_with, m->calibrated_with, path);
  m->loaded = 1;
  return 0;
}

double wsisa__busy_factor(const wsisa__busy_model *m, int workers) {
  if (!m->loaded || m->n < 1 || workers < 1) return 1;
  const int *k = m->workers;
  if (workers <= k[0]) return m->factor[0];
  for (int i = 1; i < m->n; i++)
    if (workers <= k[i]) {
      double w = log((double)workers / k[i - 1]) / log((double)k[i] / k[i - 1]);
      return m->factor[i - 1] + w * (m->factor[i] - m->factor[i - 1]);
    }
  return m->factor[m->n - 1];
}

double wsisa__busy_ratio(const wsisa__busy_model *m, int workers) {
  if (!m->loaded || workers < 1) return 1;
  double at = wsisa__busy_factor(m, m->calibrated_with);
  return at > 0 ? wsisa__busy_factor(m, workers) / at : 1;
}
