/* What a rank takes on: which kind of worker a unit goes to (unit
 * placement), how many units it holds at once (its credit), and from its
 * memory how many tiles it keeps open, how many root-to-leaf paths are
 * active (RMSR's K) and how large a tile's object store may grow, with the
 * rectangle a tile is read as. Arithmetic
 * on the options and the machine: nothing here submits a task. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exec/exec.h"

const char *const wsisa_placement_names[WSISA_PLACEMENTS] = {"unit", "task"};

int wsisa_placement_parse(const char *name, wsisa_placement *out) {
  for (int i = 0; i < WSISA_PLACEMENTS; i++)
    if (strcmp(name, wsisa_placement_names[i]) == 0) {
      *out = (wsisa_placement)i;
      return 0;
    }
  return WSISA_EUSAGE;
}

/* A kind's seconds per unit of cost as measured (0: not measured yet). */
static double measured_per_cost(const wsisa_exec_kind_load *l, double tasks_per_cost) {
  if (l->tasks < WSISA_EXEC_KIND_MEASURED || !(l->task_seconds > 0) || !(tasks_per_cost > 0) ||
      l->workers <= 0)
    return 0;
  return l->task_seconds / l->tasks * tasks_per_cost / l->workers;
}

int wsisa_exec_placement_choose(const wsisa_exec_kind_load load[WSISA_KINDS], double cost,
                                double tasks_per_cost) {
  /* a measured kind's measure over its prior (the CPU kind's when both are
   * measured, when no prior is used): a prior alone is taken at that scale */
  double scale = 1;
  for (int k = WSISA_KINDS - 1; k >= 0; k--) {
    const double m = measured_per_cost(&load[k], tasks_per_cost);
    if (m > 0 && load[k].prior > 0) scale = m / load[k].prior;
  }
  int best = -1;
  double best_end = 0;
  for (int k = 0; k < WSISA_KINDS; k++) {
    const wsisa_exec_kind_load *l = &load[k];
    const double m = measured_per_cost(l, tasks_per_cost);
    if (!(m > 0) && !(l->prior > 0)) {
      /* nothing to go by: its first unit measures it */
      if (!l->units_in_flight) return k;
      continue;
    }
    const double per_cost = m > 0 ? m : l->prior * scale;
    const double end = (l->in_flight + cost) * per_cost;
    if (best < 0 || end < best_end) best = k, best_end = end;
  }
  if (best >= 0) return best;
  /* no kind measured and each has a unit in flight: the one with fewer */
  best = 0;
  for (int k = 1; k < WSISA_KINDS; k++)
    if (load[k].units_in_flight < load[best].units_in_flight) best = k;
  return best;
}

double wsisa_exec_unit_cost(const wsisa_reuse_tree *t) {
  size_t leaves = 0;
  for (size_t v = 1; v < t->n_nodes; v++) leaves += t->nodes[v].level == t->k;
  return (double)(t->n_nodes - 1 + leaves);
}

/* ---- a rank's credit and memory --------------------------------------------- */

/* The rectangle a tile is read as (its halo within the slide): what tile.c
 * reads and the memory below is sized by. */
void wsisa_tile_read_rect(const wsisa_tile_ref *t, int halo, int64_t rect[4]) {
  if (t->kind != WSISA_INPUT_SLIDE || halo <= 0) halo = 0;
  /* the halo as far as the slide goes at the target resolution (an image is
   * read whole, one tile: nothing lies beyond it) */
  int64_t x0 = t->x - halo, y0 = t->y - halo;
  int64_t x1 = t->x + t->width + halo, y1 = t->y + t->height + halo;
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (halo && x1 > t->scale.width) x1 = t->scale.width;
  if (halo && y1 > t->scale.height) y1 = t->scale.height;
  rect[0] = x0, rect[1] = y0, rect[2] = x1 - x0, rect[3] = y1 - y0;
}

size_t wsisa__units_credit(int workers) { return workers > 2 ? (size_t)workers : 2; }

/* Memory per tile pixel, in bytes, as peak RSS over the baseline measures it
 * (the default study, 1024x1024 tiles, 2 CPU workers, a 100 MiB baseline:
 * 112 MiB over it at K = 1, 115 at K = 2, 122 at K = 8; the model below
 * says 112, 119 and 161):
 * - a path holds its tasks' outputs (a u8 mask per level) until its subtree
 *   is done; paths share their prefixes, so K x 7 is an upper bound (the
 *   memory limit keeps to it; the estimate counts the outputs its
 *   simulation holds, engine/estimate/simulate.c);
 * - a running task holds its temporaries (level 6: distance, relief and
 *   h-minima as f32, markers and labels as i32, u8 masks), and StarPU runs
 *   one task per worker: temporaries scale with workers, not with K;
 * - what a worker's task freed stays with the worker: glibc gives each
 *   thread its own malloc arena and keeps what is freed there for that
 *   arena's next allocations, so each worker holds a second set of
 *   temporaries between its tasks (one arena for all threads would return
 *   it, 35 MiB less here, but the same study ran 9 % slower). The arenas
 *   fill as a study goes on: short studies peak below the model (one tile's
 *   studies in wsisa-bench predict: the model 10-26 % over them), long ones
 *   reach it;
 * - each open tile (wsisa_exec_open_tiles at once, a study's
 *   WSISA_EXEC_OPEN_TILES: the next one opens while the last one's units
 *   drain): RGB in and normalized, rc, its
 *   opening, level 2's two reconstructions, the reference mask; without a
 *   shared tile stage (reuse none) each unit in flight
 *   (wsisa__units_credit) has its own. */
#define OUTPUT_BYTES_PER_PIXEL 1 /* a level task's output: a u8 mask */
#define PATH_BYTES_PER_PIXEL (WSISA_SEG_LEVELS * OUTPUT_BYTES_PER_PIXEL)
#define TASK_BYTES_PER_PIXEL (2 * (3 * 4 + 2 * 4 + 4))
#define TILE_BYTES_PER_PIXEL (3 + 3 + 1 + 1 + 2 + 1)
/* The feature stage: per tile the channels (h, e, the gradient and three
 * filter-bank responses, f32) and the reference's labels; per running task
 * the FFT buffers of the filter bank (complex, twice). Object matching: the
 * labels of both sides. */
#define FEATURE_TILE_BYTES_PER_PIXEL (6 * 4 + 4)
#define FEATURE_TASK_BYTES_PER_PIXEL (2 * 16)
#define LABEL_BYTES_PER_PIXEL 4
/* An annotation's reference: its labels and mask on the host. The annotation
 * itself (polygons, or a label image as i32) is held once whatever K, and
 * not counted here. */
#define ANNOT_BYTES_PER_PIXEL (4 + 1)

/* Bytes per tile pixel that the tile holds, each running task holds, and each
 * active path keeps, for the options' stages. */
static void bytes_per_pixel(const wsisa_exec_opts *o, size_t workers, double *tile, double *task,
                            double *path) {
  *tile = TILE_BYTES_PER_PIXEL, *task = TASK_BYTES_PER_PIXEL, *path = PATH_BYTES_PER_PIXEL;
  if (o && o->features) {
    *tile += FEATURE_TILE_BYTES_PER_PIXEL;
    *task += FEATURE_TASK_BYTES_PER_PIXEL;
    *path += LABEL_BYTES_PER_PIXEL;
  }
  if (o && o->object_match) {
    *tile += LABEL_BYTES_PER_PIXEL;
    *task += 2 * LABEL_BYTES_PER_PIXEL;
  }
  /* the tiles open at once; without a shared stage, one more per unit in flight */
  double one = *tile;
  *tile = (double)wsisa_exec_open_tiles(o, workers) * one;
  if (o && !o->share_tile_stage) *tile += (double)wsisa__units_credit((int)workers) * one;
}

size_t wsisa_exec_open_tiles(const wsisa_exec_opts *o, size_t workers) {
  if (!o || o->open_tiles >= 0) return WSISA_EXEC_OPEN_TILES;
  const size_t n = wsisa__units_credit((int)workers) + 1;
  return n < WSISA_EXEC_MAX_OPEN_TILES ? n : WSISA_EXEC_MAX_OPEN_TILES;
}

uint64_t wsisa_exec_object_store_bytes(uint64_t memory_limit, uint64_t baseline) {
  if (!memory_limit) return 256ULL << 20;
  return memory_limit > baseline
             ? (uint64_t)((double)(memory_limit - baseline) * WSISA_OBJECT_STORE_SHARE)
             : 0;
}

/* Peak memory is bounded by K (seed 003 §III), so a memory limit lowers K to
 * what fits once the process's baseline (StarPU, libraries, the design and
 * plan: what it holds before the first unit) and what does not grow with K
 * (the tile, the running tasks' temporaries) are taken off. */
size_t wsisa_exec_active_paths(size_t asked, uint64_t available, uint64_t baseline,
                               uint64_t *memory_limit, const wsisa_tile_ref *tiles, size_t ntiles,
                               const wsisa_exec_opts *o, uint64_t *minimum) {
  size_t workers = (size_t)(wsisa_runtime_ncpu() + wsisa_runtime_nopencl());
  if (!workers) workers = 1;
  size_t k = asked ? asked : WSISA_EXEC_PATHS_PER_WORKER * workers;
  if (minimum) *minimum = 0;
  uint64_t limit = *memory_limit;
  /* by default, stay below the memory available now */
  if (!limit) limit = *memory_limit = (uint64_t)((double)available * 0.8) + baseline;
  if (!limit) return k;
  double px = 0;
  int annotated = 0;
  for (size_t t = 0; t < ntiles; t++) {
    int64_t read[4]; /* a slide tile is read with its halo */
    wsisa_tile_read_rect(&tiles[t], o ? o->halo : 0, read);
    px = fmax(px, (double)read[2] * (double)read[3]);
    annotated |= tiles[t].annot != NULL;
  }
  double tile, task, path;
  bytes_per_pixel(o, workers, &tile, &task, &path);
  /* one reference per open tile, whatever the units in flight */
  if (annotated) tile += (double)wsisa_exec_open_tiles(o, workers) * ANNOT_BYTES_PER_PIXEL;
  /* the object store takes its share of what is over the baseline */
  const double share = o && o->object_reuse ? WSISA_OBJECT_STORE_SHARE : 0.0;
  const double store = share > 0 ? (double)wsisa_exec_object_store_bytes(limit, baseline) : 0.0;
  double fixed = (double)baseline + px * (tile + (double)workers * task) + store,
         per_path = px * path;
  if (minimum)
    *minimum = (uint64_t)ceil((double)baseline +
                              (px * (tile + (double)workers * task) + per_path) / (1.0 - share));
  double free_bytes = (double)limit - fixed;
  size_t fit = free_bytes > 0 ? (size_t)(free_bytes / per_path) : 0;
  if (fit < 1) return 0;
  return fit < k ? fit : k;
}

double wsisa_exec_bytes(size_t paths, size_t outputs, size_t workers, double pixels,
                        const wsisa_exec_opts *o) {
  double tile, task, path;
  bytes_per_pixel(o, workers, &tile, &task, &path);
  double held = outputs ? (double)paths * (path - PATH_BYTES_PER_PIXEL) +
                              (double)outputs * OUTPUT_BYTES_PER_PIXEL
                        : (double)paths * path;
  return pixels * (tile + (double)workers * task + held);
}
