/* Size filter: keep the connected components whose area lies in
 * [min_area, max_area) (docs/workflow.md, levels 4, 6 and 7). */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_area_filter(const wsisa_image *mask, int conn, int min_area,
                          int max_area, wsisa_image *out) {
  if (out->type != WSISA_U8 || out->channels != 1 || out->width != mask->width ||
      out->height != mask->height)
    return WSISA_EINTERNAL;
  wsisa__runs runs;
  int rc = wsisa__cpu_runs_find(mask, conn, &runs);
  if (rc) return rc;
  /* Areas are counted from the runs, so no label image is ever written. */
  int64_t *area = calloc((size_t)runs.n + 1, sizeof *area);
  if (!area) {
    wsisa__cpu_runs_free(&runs);
    return WSISA_ENOMEM;
  }
  const int32_t nruns = runs.row[mask->height];
  for (int32_t i = 0; i < nruns; i++)
    area[runs.run[i].id] += runs.run[i].x1 - runs.run[i].x0;
  for (int y = 0; y < mask->height; y++) {
    uint8_t *row = wsisa_image_row(out, y);
    memset(row, 0, (size_t)mask->width);
    for (int32_t i = runs.row[y]; i < runs.row[y + 1]; i++) {
      const int64_t a = area[runs.run[i].id];
      if (a >= min_area && (max_area <= 0 || a < max_area))
        memset(row + runs.run[i].x0, 255, (size_t)(runs.run[i].x1 - runs.run[i].x0));
    }
  }
  free(area);
  wsisa__cpu_runs_free(&runs);
  return 0;
}
