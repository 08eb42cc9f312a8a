/* What every calibration probe shares, below them all: its file beside the
 * performance models, its tile, its worker's clock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"

int wsisa__probe_tile_open(const wsisa_tile_ref *ref, wsisa__probe_tile *t, wsisa_err *e) {
  memset(t, 0, sizeof *t);
  int rc = wsisa_tile_load(ref, &t->rgb, e);
  if (!rc) rc = wsisa_image_register(t->rgb, &t->handle, e);
  if (!rc) {
    t->width = t->rgb->width;
    t->height = t->rgb->height;
    /* with both of level 2's reconstructions in its stage, as a run's tile
     * has those its runs ask for: level 2 then costs what it costs there */
    const wsisa_tile_frame both = {.recon_conns = 3};
    rc = wsisa_workflow_tile_submit_framed(t->handle, t->width, t->height, WSISA_TARGET_MPP, 1,
                                           &both, &t->tile, e);
  }
  return rc;
}

void wsisa__probe_tile_close(wsisa__probe_tile *t) {
  if (t->tile.rc) wsisa_workflow_tile_release(&t->tile, 1);
  starpu_task_wait_for_all();
  if (t->handle) starpu_data_unregister(t->handle);
  wsisa_image_free(t->rgb);
  t->handle = NULL;
  t->rgb = NULL;
}

/* $STARPU_HOME/.starpu/sampling/FILE */
static int file_path(const char *file, char path[WSISA_PATH_MAX], wsisa_err *e) {
  wsisa_runtime_default_home();
  const char *home = getenv("STARPU_HOME");
  return wsisa_path_fmt_err(path, e, "%s/.starpu/sampling/%s", home ? home : ".", file);
}

json_t *wsisa__probe_read(const char *file) {
  char path[WSISA_PATH_MAX];
  return file_path(file, path, NULL) ? NULL : json_load_file(path, 0, NULL);
}

int wsisa__probe_write(json_t *root, const char *file, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc = file_path(file, path, e);
  if (!rc)
    rc = root && json_dump_file(root, path, JSON_INDENT(1)) == 0
             ? 0
             : wsisa_error(e, WSISA_EIO, "%s: cannot write", path);
  json_decref(root);
  return rc;
}

int wsisa__probe_load(const wsisa__probe *p, wsisa__models *m) {
  json_t *root = wsisa__probe_read(p->file);
  int rc = p->load(root, m);
  json_decref(root);
  return rc;
}

/* A worker thread's CPU clock (a wall clock counts the other processes'
 * share of the core too, and a shared machine's load moves by the second). */
static void worker_clock(void *arg) {
  if (pthread_getcpuclockid(pthread_self(), arg)) *(clockid_t *)arg = CLOCK_MONOTONIC;
}

clockid_t wsisa__worker_clock(void) {
  clockid_t clock = CLOCK_MONOTONIC;
  starpu_execute_on_each_worker(worker_clock, &clock, STARPU_CPU);
  return clock;
}

/* A worker waiting for a task does not count, whether it sleeps or polls. */
double wsisa__workers_executing(void) {
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

json_t *wsisa__doubles_json(const double *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
  return a;
}
