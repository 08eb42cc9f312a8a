/* The calibration probes, one row each (as OpenSlide's format table): what
 * the performance models do not hold and the estimate needs, each measured
 * by `wsisa calibrate` into a file beside the models and read back by every
 * estimate. Adding one is a file with its probe, load and describe, and a
 * row here. */
#include <string.h>

#include "engine/estimate/estimate_internal.h"

static const wsisa__probe *const probes[] = {
    &wsisa__probe_levels, /* each level's time by its parameter values */
    &wsisa__probe_objects, /* what a tile's object store saves on levels 6-7 */
    &wsisa__probe_reads,  /* reading a tile on the submitting thread */
    &wsisa__probe_fresh,  /* a page written for the first time */
    &wsisa__probe_busy,   /* a task's slowdown with the workers busy at once */
};
#define NPROBES (sizeof probes / sizeof *probes)

int wsisa__probes_run(const wsisa__probe_input *in, wsisa_err *e) {
  int rc = 0, up = 0;
  for (size_t i = 0; i < NPROBES && !rc; i++) {
    const wsisa__probe *p = probes[i];
    if (p->wanted && !p->wanted(in)) continue;
    /* one CPU worker, so its clock is the work */
    if (p->one_worker && !up) {
      wsisa_runtime_opts o = {.sched = in->sched, .ncpu = 1, .nopencl = 0};
      if ((rc = wsisa_codelets_start(&o, e))) break;
      up = 1;
    } else if (!p->one_worker && up) {
      wsisa_runtime_shutdown();
      up = 0;
    }
    wsisa_log(WSISA_LOG_INFO, "calibrate", "probe: %s (%s)", p->name, p->file);
    json_t *root = NULL;
    if (!(rc = p->probe(in, &root, e))) rc = wsisa__probe_write(root, p->file, e);
  }
  if (up) wsisa_runtime_shutdown();
  return rc;
}

void wsisa__probes_load(wsisa__models *m) {
  for (size_t i = 0; i < NPROBES; i++) wsisa__probe_load(probes[i], m);
}

void wsisa__probes_describe(const wsisa__models *m, wsisa_estimate_figures *f) {
  for (size_t i = 0; i < NPROBES; i++) {
    char *how = (char *)f + probes[i]->how, line[WSISA_EST_HOW];
    if (probes[i]->describe(m, line, sizeof line) == 0)
      snprintf(how, WSISA_EST_HOW, "calibration: %.400s; %s", line, probes[i]->file);
    else
      snprintf(how, WSISA_EST_HOW, "not measured (wsisa calibrate measures it): %s",
               probes[i]->unmeasured);
  }
}
