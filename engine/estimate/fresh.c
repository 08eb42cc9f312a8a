/* Fresh memory in the estimate (docs/architecture.md, "The estimate"): a run
 * is a new process, and every page of its working set is written for the
 * first time inside a task, a page fault each; the performance models,
 * filled by calibration's process once its memory is warm, hold none of
 * that. On bare metal a fault costs a fraction of a microsecond; on a
 * virtual machine whose host backs guest memory lazily (or takes it back
 * while it is free) it can cost tens of microseconds, and a run of 1.8 s on
 * one worker spent 0.3 s in them. Calibration times writing one byte to each
 * page of freshly mapped memory (median of a few maps); the estimate prices
 * a rank's working set, its peak memory over the process before any tile,
 * at that rate, spread over the rank's workers. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/estimate/estimate.h"

#define MAPS 5
#define MAP_BYTES ((size_t)64 << 20)

int wsisa__fresh_probe(wsisa_err *e) {
  long page = sysconf(_SC_PAGESIZE);
  size_t step = page > 0 ? (size_t)page : 4096;
  double t[MAPS];
  for (int k = 0; k < MAPS; k++) {
    unsigned char *p =
        mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return wsisa_error(e, WSISA_ENOMEM, "calibration: cannot map %zu MiB", MAP_BYTES >> 20);
    double t0 = wsisa_now();
    for (size_t i = 0; i < MAP_BYTES; i += step) ((volatile unsigned char *)p)[i] = 1;
    t[k] = wsisa_now() - t0;
    munmap(p, MAP_BYTES);
  }
  qsort(t, MAPS, sizeof *t, wsisa_compare_doubles);
  return wsisa__probe_write(json_pack("{s:I, s:i, s:f}", "bytes", (json_int_t)MAP_BYTES, "maps",
                                      MAPS, "seconds", t[MAPS / 2]),
                            "wsisa_fresh_memory.json", e);
}

int wsisa__fresh_load(wsisa__fresh_model *m) {
  memset(m, 0, sizeof *m);
  char path[4200];
  json_t *root = wsisa__probe_read("wsisa_fresh_memory.json", path, sizeof path);
  if (!root) return -1;
  json_int_t bytes = 0;
  double s = -1;
  int bad = json_unpack(root, "{s:I, s:F}", "bytes", &bytes, "seconds", &s) || bytes < 1 ||
            !(s >= 0) || !isfinite(s);
  json_decref(root);
  if (bad) return -1;
  m->seconds_per_byte = s / (double)bytes;
  snprintf(m->source, sizeof m->source,
           "calibration: a page's first write %.2f s/GiB (median of %d maps of %lld MiB); a "
           "rank's working set (peak memory over the process before any tile) at that rate, "
           "spread over its workers; %s",
           m->seconds_per_byte * (double)(1 << 30), MAPS, (long long)(bytes >> 20), path);
  m->loaded = 1;
  return 0;
}

double wsisa__fresh_seconds(const wsisa__fresh_model *m, uint64_t peak, uint64_t baseline) {
  if (!m->loaded || peak <= baseline) return 0;
  return m->seconds_per_byte * (double)(peak - baseline);
}
