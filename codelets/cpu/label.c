/* Connected-component labelling by runs (docs/workflow.md, levels 4, 6, 7): one raster
 * scan, union-find over runs, canonical ids in raster order of first pixels. */
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* The first off pixel from x, the end of a run of on pixels, eight bytes at
 * a time; the first on pixel is wsisa__skip_zeros's. The runs of off pixels
 * swap the two. */
#define BYTES_ONE 0x0101010101010101ULL
#define BYTES_HIGH 0x8080808080808080ULL

static int skip_on(const uint8_t *row, int x, int width) {
  uint64_t word;
  for (; x + 8 <= width; x += 8) {
    memcpy(&word, row + x, 8);
    if ((word - BYTES_ONE) & ~word & BYTES_HIGH) break; /* some byte is zero */
  }
  while (x < width && row[x]) x++;
  return x;
}

/* During the scan `id` holds the union-find parent. The root of a set is its
 * smallest run index, so parent <= index always; runs are indexed in raster
 * order, hence a component's root is the run holding its first pixel. */
static int32_t find_root(wsisa__run *run, int32_t i) {
  while (run[i].id != i) {
    run[i].id = run[run[i].id].id; /* path halving */
    i = run[i].id;
  }
  return i;
}

static void unite(wsisa__run *run, int32_t a, int32_t b) {
  a = find_root(run, a);
  b = find_root(run, b);
  if (a < b) run[b].id = a;
  else run[a].id = b;
}

void wsisa__cpu_runs_free(wsisa__runs *runs) {
  free(runs->run);
  free(runs->row);
  runs->run = NULL;
  runs->row = NULL;
}

/* The runs of on pixels, or of off pixels with `off`: the same scan with the
 * two skips swapped. */
static int runs_find(const wsisa_image *mask, int conn, int off, wsisa__runs *runs) {
  runs->run = NULL;
  runs->row = NULL;
  runs->n = 0;
  if (mask->type != WSISA_U8 || mask->channels != 1 || (conn != 4 && conn != 8))
    return WSISA_EINTERNAL;
  const int width = mask->width, height = mask->height;
  /* Runs of two rows touch when they share a column (4-conn) or a corner (8). */
  const int reach = conn == 8;
  size_t cap = 1024, n = 0;
  runs->row = malloc(((size_t)height + 1) * sizeof *runs->row);
  runs->run = malloc(cap * sizeof *runs->run);
  if (!runs->row || !runs->run) goto nomem;
  for (int y = 0; y < height; y++) {
    const uint8_t *row = wsisa_image_row(mask, y);
    size_t above = y ? (size_t)runs->row[y - 1] : n;
    const size_t above_end = n;
    runs->row[y] = (int32_t)n;
    for (int x = off ? skip_on(row, 0, width) : wsisa__skip_zeros(row, 0, width); x < width;
         x = off ? skip_on(row, x, width) : wsisa__skip_zeros(row, x, width)) {
      int x0 = x;
      x = off ? wsisa__skip_zeros(row, x, width) : skip_on(row, x, width);
      if (n == cap) {
        void *grown = realloc(runs->run, 2 * cap * sizeof *runs->run);
        if (!grown) goto nomem;
        runs->run = grown;
        cap *= 2;
      }
      wsisa__run *run = runs->run;
      run[n] = (wsisa__run){x0, x, (int32_t)n};
      while (above < above_end && run[above].x1 + reach <= x0) above++;
      for (size_t k = above; k < above_end && run[k].x0 < x + reach; k++)
        unite(run, (int32_t)k, (int32_t)n);
      n++;
    }
  }
  runs->row[height] = (int32_t)n;
  /* Parents precede children, so one forward pass turns roots into 1..n in
   * raster order and every other run into its root's id. */
  int32_t ncomp = 0;
  for (size_t i = 0; i < n; i++) {
    wsisa__run *r = &runs->run[i];
    r->id = r->id == (int32_t)i ? ++ncomp : runs->run[r->id].id;
  }
  runs->n = ncomp;
  return 0;
nomem:
  wsisa__cpu_runs_free(runs);
  return WSISA_ENOMEM;
}

int wsisa__cpu_runs_find(const wsisa_image *mask, int conn, wsisa__runs *runs) {
  return runs_find(mask, conn, 0, runs);
}

int wsisa__cpu_runs_find_off(const wsisa_image *mask, int conn, wsisa__runs *runs) {
  return runs_find(mask, conn, 1, runs);
}

int wsisa_cpu_label(const wsisa_image *mask, int conn, wsisa_image *labels) {
  if (labels->type != WSISA_I32 || labels->channels != 1 ||
      labels->width != mask->width || labels->height != mask->height)
    return WSISA_EINTERNAL;
  wsisa__runs runs;
  int rc = wsisa__cpu_runs_find(mask, conn, &runs);
  if (rc) return rc;
  for (int y = 0; y < mask->height; y++) {
    int32_t *out = wsisa_image_row(labels, y);
    int x = 0;
    for (int32_t i = runs.row[y]; i < runs.row[y + 1]; i++) {
      const wsisa__run *r = &runs.run[i];
      memset(out + x, 0, (size_t)(r->x0 - x) * sizeof *out);
      for (x = r->x0; x < r->x1; x++) out[x] = r->id;
    }
    memset(out + x, 0, (size_t)(mask->width - x) * sizeof *out);
  }
  wsisa__cpu_runs_free(&runs);
  return 0;
}
