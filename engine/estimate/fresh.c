/* A page's first write, which the models (a warm process's) do not hold: its
 * probe and price (docs/architecture.md, "The estimate in detail": "Fresh memory"). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/estimate/estimate_internal.h"

#define FILE_NAME "wsisa_fresh_memory.json"
#define MAPS 5
#define MAP_BYTES ((size_t)64 << 20)

static int probe(const wsisa__probe_input *in, json_t **root, wsisa_err *e) {
  (void)in;
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
  *root = json_pack("{s:I, s:i, s:f}", "bytes", (json_int_t)MAP_BYTES, "maps", MAPS, "seconds",
                    wsisa_median(t, MAPS));
  return 0;
}

static int load(json_t *root, wsisa__models *models) {
  wsisa__fresh_model *m = &models->fresh;
  memset(m, 0, sizeof *m);
  json_int_t bytes = 0;
  double s = -1;
  if (!root || json_unpack(root, "{s:I, s:F}", "bytes", &bytes, "seconds", &s) || bytes < 1 ||
      !(s >= 0) || !isfinite(s))
    return -1;
  m->seconds_per_byte = s / (double)bytes;
  m->loaded = 1;
  return 0;
}

static int describe(const wsisa__models *models, char *how, size_t cap) {
  const wsisa__fresh_model *m = &models->fresh;
  if (!m->loaded) return -1;
  snprintf(how, cap, "a page's first write %.2f s/GiB", m->seconds_per_byte * (double)(1 << 30));
  return 0;
}

const wsisa__probe wsisa__probe_fresh = {
    "fresh memory", FILE_NAME, 0, NULL, probe, load, describe,
    offsetof(wsisa_estimate_figures, fresh_source), "a page's first write not priced"};

double wsisa__fresh_seconds(const wsisa__fresh_model *m, uint64_t peak, uint64_t baseline) {
  if (!m->loaded || peak <= baseline) return 0;
  return m->seconds_per_byte * (double)(peak - baseline);
}
