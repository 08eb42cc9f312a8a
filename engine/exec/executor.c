/* The executor (docs/architecture.md). For each tile: its shared stage and the
 * reference segmentation (default parameters) once; then for each bucket, the
 * merged task tree is walked depth first and submitted in dependency order.
 * A node's outputs are released once its subtree is submitted, and at most K
 * root-to-leaf paths are active at once (RMSR, seed 003 §III, Algorithm 1): a
 * path stays active until its leaf's comparison has finished, so peak memory
 * is bounded by K, not by the bucket size. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codelets/codelets.h"
#include "engine/exec/exec.h"
#include "io/io.h"

/* ---- unit placement -------------------------------------------------------- */

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

/* ---- active paths ------------------------------------------------------- */

/* What the workers' callbacks share with the submitting thread, under one
 * lock: the active paths, and unit placement's load per kind. */
typedef struct paths {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  size_t active, peak;
  /* unit placement: per kind, what is in flight (wsisa_exec_placement_choose;
   * its speed is read off the kinds' scopes), and the cost of the units given */
  wsisa_exec_kind_load load[WSISA_KINDS];
  double cost_given;
  /* the submitting thread's waits for a free path, and their seconds */
  uint64_t waits;
  double waited;
  /* called every wait_period seconds, unlocked, while a submission waits */
  void (*on_wait)(void *);
  void *wait_ctx;
  double wait_period;
} paths;

typedef struct unit unit;

typedef struct leaf leaf;

/* One measure of a leaf on its way home. */
typedef struct leaf_part {
  leaf *owner;
  starpu_data_handle_t handle;
} leaf_part;

/* PART_ROWS, the feature rows, is registered once the object count is home. */
enum { PART_COUNTS, PART_NUCLEI, PART_MATCH, PART_ROWS, NPARTS };

/* One leaf's measures against the reference: they come home here. The path
 * ends when all have arrived. */
struct leaf {
  uint64_t counts[3], nuclei, match[WSISA_MATCH_FIELDS];
  leaf_part part[NPARTS];
  int remaining;
  size_t node;
  unit *owner;
  /* the feature stage: labels kept for the reduction, its rows */
  const wsisa_tile_data *data;
  starpu_data_handle_t labels;
  double *rows;
  int failed;
  /* nuclei_out: the labels as spans, made when the unit is reported */
  uint32_t *spans;
  size_t nspans;
};

struct unit {
  size_t tile, bucket;
  const wsisa_reuse_tree *tree;
  leaf *leaves;
  size_t nleaves, pending; /* leaves whose comparison has not finished */
  uint8_t *skipped; /* per level-1 node: 1 when the background rule emptied its mask */
  paths *paths;
  size_t place;             /* its tile's place in the session */
  struct tile_state *ts;    /* its tile (open until the unit is reported) */
  wsisa_tile_data own_tile; /* when the tile stage is not shared */
  int owns_tile;
  const double *ref_features; /* the tile's reference feature rows */
  const double *params;     /* the session's runs */
  int features, nuclei_out; /* the options' */
  int normalize;
  int object_match;         /* leaves match objects: skipped runs get the sums of no object */
  /* unit placement: the kind given the unit (-1: none, StarPU places each
   * task), its cost, and the scope its tasks were submitted under (NULL:
   * none); `submitted` once every leaf is */
  int kind;
  double cost;
  wsisa_codelets_scope *scope;
  int submitted;
};

/* A unit given to a kind starts, p->lock held. */
static void unit_started(paths *p, unit *u) {
  if (u->kind < 0) return;
  wsisa_exec_kind_load *k = &p->load[u->kind];
  k->units_in_flight++;
  k->in_flight += u->cost;
  p->cost_given += u->cost;
}

/* Every leaf of a unit given to a kind has arrived, p->lock held. */
static void unit_ended(paths *p, unit *u) {
  if (u->kind < 0) return;
  wsisa_exec_kind_load *k = &p->load[u->kind];
  k->in_flight -= u->cost;
  k->units_in_flight--;
}

static void leaf_arrived(leaf *l) {
  paths *p = l->owner->paths;
  pthread_mutex_lock(&p->lock);
  if (--l->remaining == 0) {
    p->active--;
    if (!--l->owner->pending && l->owner->submitted) unit_ended(p, l->owner);
    pthread_cond_broadcast(&p->cond);
  }
  pthread_mutex_unlock(&p->lock);
}

static void leaf_part_done(void *arg) {
  leaf_part *part = arg;
  starpu_data_release(part->handle);
  leaf_arrived(part->owner);
}

/* With features, the object count is home: the reduction's output can be
 * registered now. Runs in a callback: it only submits, never waits. */
static void leaf_nuclei_done(void *arg) {
  leaf_part *part = arg;
  leaf *l = part->owner;
  starpu_data_release(part->handle);
  size_t len = l->owner->features ? (size_t)l->nuclei * WSISA_NF_ROW(l->data->nchannels) : 0;
  if (len) {
    l->rows = malloc(len * sizeof *l->rows);
    l->failed = !l->rows;
  }
  if (len && l->rows) {
    leaf_part *rows = &l->part[PART_ROWS];
    rows->owner = l;
    starpu_vector_data_register(&rows->handle, STARPU_MAIN_RAM, (uintptr_t)l->rows,
                                (uint32_t)len, sizeof *l->rows);
    /* on this worker's thread, under its unit's scope */
    wsisa_codelets_scope *was = wsisa_codelets_scope_set(l->owner->scope);
    l->failed = wsisa_workflow_reduce_submit(l->data, l->labels, rows->handle, NULL) ||
                starpu_data_acquire_cb(rows->handle, STARPU_R, leaf_part_done, rows);
    wsisa_codelets_scope_set(was);
  }
  /* nuclei_out: the labels stay for the unit's report */
  if (!l->owner->nuclei_out) {
    starpu_data_unregister_submit(l->labels);
    l->labels = NULL;
  }
  if (len && l->rows && !l->failed) return; /* the rows' arrival ends the path */
  leaf_arrived(l);
}

/* `seconds` from now on the clock of pthread_cond_timedwait (the paths'
 * condition keeps the default, CLOCK_REALTIME). */
static struct timespec deadline_in(double seconds) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  double whole = floor(seconds);
  t.tv_sec += (time_t)whole;
  t.tv_nsec += (long)((seconds - whole) * 1e9);
  if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
  return t;
}

/* One step of a wait on the paths' condition, p->lock held: with an on_wait
 * hook, wake after wait_period seconds at most and call it, unlocked. */
static void paths_wait_step(paths *p) {
  if (!p->on_wait) {
    pthread_cond_wait(&p->cond, &p->lock);
    return;
  }
  struct timespec until = deadline_in(p->wait_period);
  if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT) {
    pthread_mutex_unlock(&p->lock);
    p->on_wait(p->wait_ctx);
    pthread_mutex_lock(&p->lock);
  }
}

/* Wait until fewer than `limit` paths are active (limit 0: no bound); with
 * an on_wait hook, call it every wait_period seconds meanwhile, unlocked. */
static void paths_wait_below(paths *p, size_t limit) {
  if (!limit) return;
  pthread_mutex_lock(&p->lock);
  if (p->active < limit) {
    pthread_mutex_unlock(&p->lock);
    return;
  }
  double since = wsisa_now();
  p->waits++;
  while (p->active >= limit) paths_wait_step(p);
  p->waited += wsisa_now() - since;
  pthread_mutex_unlock(&p->lock);
}

static void paths_begin(paths *p) {
  pthread_mutex_lock(&p->lock);
  p->active++;
  if (p->active > p->peak) p->peak = p->active;
  pthread_mutex_unlock(&p->lock);
}

/* Wait for a unit's tasks to end, calling the on_wait hook meanwhile as a
 * wait for a path does: an MPI worker's heartbeat goes on through a long
 * unit. */
static void unit_wait(unit *u) {
  pthread_mutex_lock(&u->paths->lock);
  while (u->pending) paths_wait_step(u->paths);
  pthread_mutex_unlock(&u->paths->lock);
}

/* ---- tiles ---------------------------------------------------------------- */

int wsisa_tile_load(const wsisa_tile_ref *t, wsisa_image **rgb, wsisa_err *e) {
  *rgb = NULL;
  wsisa_input *in = NULL;
  int rc = wsisa_input_open(t->path, t->kind, &in, e);
  if (rc) return rc;
  rc = wsisa_input_read_scaled(in, &t->scale, t->x, t->y, t->width, t->height, rgb, e);
  wsisa_input_close(in);
  return rc;
}

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

int wsisa_tile_load_framed(const wsisa_tile_ref *t, int halo, wsisa_image **rgb,
                           wsisa_tile_frame *frame, wsisa_err *e) {
  memset(frame, 0, sizeof *frame);
  frame->stats = t->has_stats ? t->stats : NULL;
  if (t->kind != WSISA_INPUT_SLIDE || halo <= 0) return wsisa_tile_load(t, rgb, e);
  *rgb = NULL;
  int64_t r[4];
  wsisa_tile_read_rect(t, halo, r);
  if (r[2] > INT32_MAX || r[3] > INT32_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "%s: a tile and its halo too large to read at once",
                       t->path);
  wsisa_slide *slide = NULL;
  int rc = wsisa_slide_open(t->path, &slide, e);
  if (rc) return rc;
  rc = wsisa_slide_read_scaled(slide, &t->scale, r[0], r[1], (int)r[2], (int)r[3], rgb, e);
  wsisa_slide_close(slide);
  if (rc) return rc;
  frame->core_x = (int)(t->x - r[0]);
  frame->core_y = (int)(t->y - r[1]);
  frame->core_w = t->width;
  frame->core_h = t->height;
  return 0;
}

int wsisa_tile_segment(const wsisa_tile_ref *t, const double *p, int halo, int normalize,
                       wsisa_image **mask, wsisa_tile_frame *frame, uint64_t *tissue,
                       wsisa_err *e) {
  *mask = NULL;
  wsisa_image *rgb = NULL;
  starpu_data_handle_t hrgb = NULL, hmask = NULL;
  wsisa_tile_data data;
  int have_data = 0, skip = 0;
  uint64_t seen = 0;
  int rc = wsisa_tile_load_framed(t, halo, &rgb, frame, e);
  if (!rc) rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_U8, mask, e);
  if (!rc) rc = wsisa_image_register(rgb, &hrgb, e);
  if (!rc) rc = wsisa_image_register(*mask, &hmask, e);
  if (!rc && !(rc = wsisa_workflow_tile_submit_framed(hrgb, rgb->width, rgb->height,
                                                      t->scale.target_mpp, normalize, frame,
                                                      &data, e)))
    have_data = 1;
  if (!rc) rc = wsisa_workflow_background_tissue(&data, p, &skip, &seen, e);
  if (!rc) rc = wsisa_workflow_segment_submit_decided(&data, p, skip, hmask, e);
  if (have_data) wsisa_workflow_tile_release(&data, normalize);
  if (hmask) starpu_data_unregister(hmask); /* waits for the mask */
  if (hrgb) starpu_data_unregister(hrgb);
  wsisa_image_free(rgb);
  if (tissue) *tissue = skip ? 0 : seen;
  if (rc) {
    wsisa_image_free(*mask);
    *mask = NULL;
  }
  return rc;
}

/* One block's statistics (masked_stats' layout), waited for. */
static int block_stats(wsisa_image *rgb, double st[WSISA_STATS_N], wsisa_err *e) {
  starpu_data_handle_t h = NULL, fg = NULL, lab = NULL, hs = NULL;
  int rc = wsisa_image_register(rgb, &h, e);
  if (!rc) rc = wsisa_image_register_tmp(rgb->width, rgb->height, 1, WSISA_U8, &fg, e);
  if (!rc) rc = wsisa_image_register_tmp(rgb->width, rgb->height, 3, WSISA_F32, &lab, e);
  if (!rc) {
    starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)st, WSISA_STATS_N, sizeof *st);
    if (wsisa_submit_fisher_fg(h, fg) || wsisa_submit_rgb2lab(h, lab) ||
        wsisa_submit_masked_stats(lab, fg, hs))
      rc = wsisa_error(e, WSISA_ERUNTIME, "cannot submit the colour statistics");
  }
  if (fg) starpu_data_unregister_submit(fg);
  if (lab) starpu_data_unregister_submit(lab);
  if (hs) starpu_data_unregister(hs); /* waits for them */
  if (h) starpu_data_unregister(h);
  return rc;
}

int wsisa_slide_stats(const char *path, const wsisa_scale *scale, double stats[WSISA_STATS_N],
                      wsisa_err *e) {
  memset(stats, 0, WSISA_STATS_N * sizeof *stats);
  wsisa_slide *slide = NULL;
  wsisa_grid *g = NULL;
  int rc = wsisa_slide_open(path, &slide, e);
  if (rc) return rc;
  if ((rc = wsisa_grid_make_scaled(slide, scale, WSISA_STATS_BLOCK, 0, &g, e))) goto done;
  /* pooled sums: pixels, and per channel the sum and the sum of squares */
  double n = 0, sum[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
  size_t picked = 0;
  for (size_t t = 0, seen = 0; t < g->ntiles && !rc; t++) {
    if (!g->tiles[t].tissue) continue;
    /* the k-th of WSISA_STATS_BLOCKS evenly spread over the tissue blocks */
    size_t want = g->ntissue <= WSISA_STATS_BLOCKS ? seen
                                                    : picked * g->ntissue / WSISA_STATS_BLOCKS;
    if (seen++ != want || picked >= WSISA_STATS_BLOCKS) continue;
    picked++;
    wsisa_image *rgb = NULL;
    double st[WSISA_STATS_N];
    if ((rc = wsisa_grid_tile_read(slide, g, &g->tiles[t], &rgb, e))) break;
    rc = block_stats(rgb, st, e);
    wsisa_image_free(rgb);
    if (rc) break;
    const double k = st[WSISA_STATS_COUNT];
    n += k;
    for (int c = 0; c < 3; c++) {
      const double m = st[WSISA_STATS_MEAN + c], sd = st[WSISA_STATS_STD + c];
      sum[c] += k * m;
      sq[c] += k * (sd * sd + m * m);
    }
  }
  if (!rc && n > 0) {
    stats[WSISA_STATS_COUNT] = n;
    for (int c = 0; c < 3; c++) {
      const double m = sum[c] / n, var = sq[c] / n - m * m;
      stats[WSISA_STATS_MEAN + c] = m;
      stats[WSISA_STATS_STD + c] = var > 0 ? sqrt(var) : 0;
    }
  }
done:
  wsisa_grid_free(g);
  wsisa_slide_close(slide);
  return rc;
}

struct tile_state {
  wsisa_image *rgb;
  starpu_data_handle_t h_rgb;
  wsisa_tile_data data;
  starpu_data_handle_t ref;  /* reference mask (default parameters, or the annotation's) */
  starpu_data_handle_t ref_labels; /* its objects, kept when objects are matched */
  /* an annotation's reference, rasterised on the host: the handles above are
   * registered on these and unregistered before they are freed */
  wsisa_image *annot_mask, *annot_labels;
  uint64_t ref_pixels, ref_nuclei;
  uint64_t ref_tissue;  /* the core's tissue the reference segmented */
  int ref_tissue_known; /* ref_tissue decided (tile_reference_tissue) */
  /* where the core is in the pixels read, and the colour statistics */
  wsisa_tile_frame frame;
  /* the reference's counts on their way home (registered until
   * tile_reference_wait): the tile's first units are submitted meanwhile */
  uint64_t ref_counts[3], ref_objects;
  starpu_data_handle_t ref_hc, ref_hn;
  double *ref_features; /* with features: ref_nuclei rows */
  /* background decisions per (B, G, R) on this tile: those of the session's
   * runs submitted at the opening (bg_h set until the count is home), then
   * any other seen */
  double (*bgr)[3];
  int *skip;
  uint64_t *tissue; /* the core's pixels off each (B, G, R)'s background */
  size_t nbgr, cap_bgr;
  size_t nprefetched;
  uint64_t (*bg_counts)[3];
  starpu_data_handle_t *bg_h;
  /* object reuse: the tile's object store, and its tally already counted in
   * the session's statistics */
  wsisa_object_store *objects;
  wsisa_object_tally counted;
  int moved; /* opened for units moved here from another rank (wsisa_exec_session_moved) */
};
typedef struct tile_state tile_state;

/* The reference's pixel and object counts home (they are needed only when
 * a unit is reported, or for the reference's feature rows). */
static void tile_reference_wait(tile_state *ts) {
  if (!ts->ref_hc) return;
  starpu_data_unregister(ts->ref_hc);
  starpu_data_unregister(ts->ref_hn);
  ts->ref_hc = ts->ref_hn = NULL;
  ts->ref_pixels = ts->ref_counts[1];
  ts->ref_nuclei = ts->ref_objects;
}

/* Feature rows measured on the pixels read, placed on the tile: centroids
 * and bounding boxes from the core's corner. */
static void rows_to_core(double *rows, size_t n, int cols, const wsisa_tile_data *d) {
  for (size_t i = 0; rows && i < n; i++) {
    double *r = rows + i * (size_t)cols;
    r[WSISA_NF_CENTROID_X] -= d->core_x;
    r[WSISA_NF_BBOX_X] -= d->core_x;
    r[WSISA_NF_CENTROID_Y] -= d->core_y;
    r[WSISA_NF_BBOX_Y] -= d->core_y;
  }
}

/* The tissue the tile's reference segments: the core's at the defaults'
 * (B, G, R), none when the background rule empties it; decided once. */
static void reference_tissue(tile_state *ts, int skip, uint64_t tissue) {
  if (ts->ref_tissue_known) return;
  ts->ref_tissue = skip ? 0 : tissue;
  ts->ref_tissue_known = 1;
}

/* The background rule's decision for (B, G, R) of `p` on the tile, decided
 * once per (B, G, R) (a count submitted at the opening is waited for here),
 * and the tissue it leaves in the core (*tissue, may be NULL); for the
 * defaults' (B, G, R), the tissue the reference segments too. */
static int tile_skip(tile_state *ts, const wsisa_tile_data *data, const double *p, int *skip,
                     uint64_t *tissue_out, wsisa_err *e) {
  const double *d = wsisa_seg_defaults();
  const int defaults = p[WSISA_P_B] == d[WSISA_P_B] && p[WSISA_P_G] == d[WSISA_P_G] &&
                       p[WSISA_P_R] == d[WSISA_P_R];
  for (size_t i = 0; i < ts->nbgr; i++)
    if (ts->bgr[i][0] == p[WSISA_P_B] && ts->bgr[i][1] == p[WSISA_P_G] &&
        ts->bgr[i][2] == p[WSISA_P_R]) {
      if (i < ts->nprefetched && ts->bg_h[i]) {
        ts->skip[i] = wsisa_workflow_background_wait(data, ts->bg_counts[i], &ts->bg_h[i]);
        ts->tissue[i] = wsisa_workflow_tissue(data, ts->bg_counts[i]);
        if (defaults) reference_tissue(ts, ts->skip[i], ts->tissue[i]);
      }
      *skip = ts->skip[i];
      if (tissue_out) *tissue_out = ts->tissue[i];
      return 0;
    }
  uint64_t tissue = 0;
  int rc = wsisa_workflow_background_tissue(data, p, skip, &tissue, e);
  if (rc) return rc;
  if (defaults) reference_tissue(ts, *skip, tissue);
  if (tissue_out) *tissue_out = tissue;
  if (ts->nbgr == ts->cap_bgr) {
    size_t cap = ts->cap_bgr ? 2 * ts->cap_bgr : 8;
    double(*b)[3] = realloc(ts->bgr, cap * sizeof *b);
    if (b) ts->bgr = b;
    int *s = realloc(ts->skip, cap * sizeof *s);
    if (s) ts->skip = s;
    uint64_t *t = realloc(ts->tissue, cap * sizeof *t);
    if (t) ts->tissue = t;
    if (!b || !s || !t) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    ts->cap_bgr = cap;
  }
  ts->bgr[ts->nbgr][0] = p[WSISA_P_B];
  ts->bgr[ts->nbgr][1] = p[WSISA_P_G];
  ts->bgr[ts->nbgr][2] = p[WSISA_P_R];
  ts->tissue[ts->nbgr] = tissue;
  ts->skip[ts->nbgr++] = *skip;
  return 0;
}

/* The tissue the tile's reference segments: the defaults' background count,
 * submitted at the opening, home by the time a unit is reported. */
static int tile_reference_tissue(tile_state *ts, wsisa_err *e) {
  int skip = 0;
  return ts->ref_tissue_known ? 0
                              : tile_skip(ts, &ts->data, wsisa_seg_defaults(), &skip, NULL, e);
}

/* The annotated nuclei a tile read with a halo owns: those whose centroid
 * lies in its core (own_objects' rule, here on the host where the
 * annotation is rasterised), renumbered 1..*n in their order. */
static int annotation_own(wsisa_image *labels, const wsisa_tile_data *d, size_t *n,
                          wsisa_err *e) {
  uint64_t *acc = calloc(3 * (*n + 1), sizeof *acc);
  int32_t *to = calloc(*n + 1, sizeof *to);
  if (!acc || !to) {
    free(acc);
    free(to);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (int y = 0; y < labels->height; y++) {
    const int32_t *l = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++)
      if (l[x] > 0 && (size_t)l[x] <= *n) {
        uint64_t *a = acc + 3 * (size_t)l[x];
        a[0]++, a[1] += (uint64_t)x, a[2] += (uint64_t)y;
      }
  }
  const uint64_t x0 = (uint64_t)d->core_x, x1 = x0 + (uint64_t)d->core_w;
  const uint64_t y0 = (uint64_t)d->core_y, y1 = y0 + (uint64_t)d->core_h;
  int32_t kept = 0;
  for (size_t k = 1; k <= *n; k++) {
    const uint64_t *a = acc + 3 * k;
    if (a[0] && x0 * a[0] <= a[1] && a[1] < x1 * a[0] && y0 * a[0] <= a[2] && a[2] < y1 * a[0])
      to[k] = ++kept;
  }
  for (int y = 0; y < labels->height; y++) {
    int32_t *l = wsisa_image_row(labels, y);
    for (int x = 0; x < labels->width; x++) l[x] = l[x] > 0 && (size_t)l[x] <= *n ? to[l[x]] : 0;
  }
  *n = (size_t)kept;
  free(acc);
  free(to);
  return 0;
}

/* The annotation of the tile's slide as its reference: labels rasterised on
 * the host (io/annotation.c), the mask their support. `cache` keeps the last
 * annotation read, as consecutive tiles share their slide's. */
static int annotation_open(const wsisa_tile_ref *ref, const wsisa_exec_opts *o, tile_state *ts,
                           wsisa_annotation **cache, wsisa_err *e) {
  const wsisa_annot_spec *sp = ref->annot;
  if (*cache) {
    const wsisa_annot_spec *have = wsisa_annotation_spec(*cache);
    if (have->kind != sp->kind || strcmp(have->path, sp->path) != 0 ||
        strcmp(have->input, sp->input) != 0) {
      wsisa_annotation_free(*cache);
      *cache = NULL;
    }
  }
  int rc = *cache ? 0 : wsisa_annotation_load(sp, cache, e);
  size_t n = 0;
  /* the pixels read: the tile and its halo */
  const int fw = ts->rgb->width, fh = ts->rgb->height;
  const int64_t fx = ref->x - (ts->data.core_x), fy = ref->y - (ts->data.core_y);
  if (!rc && ((fw == ref->width && fh == ref->height) ||
              wsisa_annotation_covers(*cache, &ref->scale, fx, fy, fw, fh)))
    rc = wsisa_annotation_rasterize(*cache, &ref->scale, fx, fy, fw, fh, &ts->annot_labels, &n,
                                    e);
  else if (!rc) {
    /* a halo beyond what is annotated: the tile's own annotation, the halo
     * without nuclei */
    wsisa_image *core = NULL;
    rc = wsisa_annotation_rasterize(*cache, &ref->scale, ref->x, ref->y, ref->width,
                                    ref->height, &core, &n, e);
    if (!rc) rc = wsisa_image_new(fw, fh, 1, WSISA_I32, &ts->annot_labels, e);
    for (int y = 0; !rc && y < fh; y++) {
      int32_t *l = wsisa_image_row(ts->annot_labels, y);
      memset(l, 0, (size_t)fw * sizeof *l);
      const int cy = y - ts->data.core_y;
      if (cy >= 0 && cy < ref->height)
        memcpy(l + ts->data.core_x, wsisa_image_row(core, cy), (size_t)ref->width * sizeof *l);
    }
    wsisa_image_free(core);
  }
  if (!rc) rc = wsisa_image_new(fw, fh, 1, WSISA_U8, &ts->annot_mask, e);
  if (!rc && ts->data.core_mask) rc = annotation_own(ts->annot_labels, &ts->data, &n, e);
  if (rc) return rc;
  uint64_t on = 0;
  for (int y = 0; y < fh; y++) {
    const int32_t *l = wsisa_image_row(ts->annot_labels, y);
    uint8_t *m = wsisa_image_row(ts->annot_mask, y);
    for (int x = 0; x < fw; x++) on += (m[x] = l[x] ? 255 : 0) != 0;
  }
  ts->ref_pixels = on;
  ts->ref_nuclei = n;
  if ((rc = wsisa_image_register(ts->annot_mask, &ts->ref, e))) return rc;
  if ((o->object_match || o->features) &&
      (rc = wsisa_image_register(ts->annot_labels, &ts->ref_labels, e)))
    return rc;
  if (o->features)
    rc = wsisa_workflow_rows_compute(&ts->data, ts->ref_labels, n, &ts->ref_features, e);
  if (!rc && o->features)
    rows_to_core(ts->ref_features, n, WSISA_NF_ROW(ts->data.nchannels), &ts->data);
  return rc;
}

/* The background counts of `n` (B, G, R), submitted after the tile stage, and
 * of the defaults' (the tissue the reference segments) when not among them. */
static int tile_prefetch(tile_state *ts, const double (*bgr)[3], size_t n, wsisa_err *e) {
  const double *d = wsisa_seg_defaults();
  const double dflt[3] = {d[WSISA_P_B], d[WSISA_P_G], d[WSISA_P_R]};
  int have = 0;
  for (size_t i = 0; i < n && !have; i++)
    have = bgr[i][0] == dflt[0] && bgr[i][1] == dflt[1] && bgr[i][2] == dflt[2];
  const size_t all = n + !have;
  ts->bgr = malloc(all * sizeof *ts->bgr);
  ts->skip = calloc(all, sizeof *ts->skip);
  ts->tissue = calloc(all, sizeof *ts->tissue);
  ts->bg_counts = calloc(all, sizeof *ts->bg_counts);
  ts->bg_h = calloc(all, sizeof *ts->bg_h);
  if (!ts->bgr || !ts->skip || !ts->tissue || !ts->bg_counts || !ts->bg_h)
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ts->cap_bgr = all;
  int rc = 0;
  for (size_t i = 0; i < all && !rc; i++) {
    const double *b = i < n ? bgr[i] : dflt;
    double p[WSISA_SEG_NPARAMS] = {0};
    p[WSISA_P_B] = b[0], p[WSISA_P_G] = b[1], p[WSISA_P_R] = b[2];
    memcpy(ts->bgr[i], b, sizeof ts->bgr[i]);
    ts->nbgr++, ts->nprefetched++;
    rc = wsisa_workflow_background_submit(&ts->data, p, ts->bg_counts[i], &ts->bg_h[i], e);
  }
  return rc;
}

static int tile_open(const wsisa_tile_ref *ref, const wsisa_exec_opts *o, int recon_conns,
                     tile_state *ts, const double (*bgr)[3], size_t nbgr,
                     wsisa_exec_stats *stats, wsisa_annotation **annot, wsisa_err *e) {
  memset(ts, 0, sizeof *ts);
  int rc = wsisa_tile_load_framed(ref, o->halo, &ts->rgb, &ts->frame, e);
  if (rc) return rc;
  ts->frame.recon_conns = recon_conns;
  int w = ts->rgb->width, h = ts->rgb->height;
  if ((rc = wsisa_image_register(ts->rgb, &ts->h_rgb, e))) return rc;
  if ((rc = wsisa_workflow_tile_submit_framed(ts->h_rgb, w, h, ref->scale.target_mpp,
                                              o->normalize, &ts->frame, &ts->data, e)))
    return rc;
  if (o->features && (rc = wsisa_workflow_channels_submit(&ts->data, 1, e))) return rc;
  stats->tile_stages++;
  if ((rc = tile_prefetch(ts, bgr, nbgr, e))) return rc;
  /* the store holds this tile's objects only: it starts with the tile, the
   * reference segmentation included, and ends with it */
  /* the open tiles' stores share the store's bytes */
  if (o->object_reuse &&
      wsisa_object_store_new(
          o->object_store_bytes /
              wsisa_exec_open_tiles(o, (size_t)(wsisa_runtime_ncpu() + wsisa_runtime_nopencl())),
          &ts->objects))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ts->data.objects = ts->objects;
  /* the tissue the reference segments (the core's at the defaults' (B, G, R),
   * none when the background rule empties it) comes with its count, submitted
   * above: tile_reference_tissue */
  if (ref->annot) return annotation_open(ref, o, ts, annot, e);
  if (o->nuclei_out) return 0; /* the nuclei are the product: no reference */
  if ((rc = wsisa_image_register_tmp(w, h, 1, WSISA_U8, &ts->ref, e))) return rc;
  if ((rc = wsisa_workflow_segment_submit(&ts->data, wsisa_seg_defaults(), ts->ref, e)))
    return rc;
  /* the counts come home while the tile's first units are submitted: the
   * submitting thread does not wait for the reference's segmentation */
  starpu_vector_data_register(&ts->ref_hc, STARPU_MAIN_RAM, (uintptr_t)ts->ref_counts, 3,
                              sizeof ts->ref_counts[0]);
  starpu_vector_data_register(&ts->ref_hn, STARPU_MAIN_RAM, (uintptr_t)&ts->ref_objects, 1,
                              sizeof ts->ref_objects);
  /* the reference's objects: matched with every run's, and reduced to feature rows */
  wsisa_measure m = {ts->ref_hc, ts->ref_hn, NULL, NULL,
                     o->object_match || o->features ? &ts->ref_labels : NULL};
  rc = wsisa_workflow_measure_submit(&ts->data, ts->ref, ts->ref, &m, e);
  /* the feature rows are sized by the object count: home first */
  if (rc || o->features) tile_reference_wait(ts);
  if (!rc && o->features)
    rc = wsisa_workflow_rows_compute(&ts->data, ts->ref_labels, (size_t)ts->ref_nuclei,
                                     &ts->ref_features, e);
  if (!rc && o->features)
    rows_to_core(ts->ref_features, (size_t)ts->ref_nuclei, WSISA_NF_ROW(ts->data.nchannels), &ts->data);
  if (ts->ref_labels && !o->object_match) {
    starpu_data_unregister_submit(ts->ref_labels);
    ts->ref_labels = NULL;
  }
  return rc;
}

/* The store's counts since they were last taken, into `stats`. */
static void objects_count(tile_state *ts, wsisa_exec_stats *stats) {
  if (!ts->objects) return;
  wsisa_object_tally now;
  wsisa_object_store_tally(ts->objects, &now);
  for (int l = 0; l < 2; l++) {
    stats->objects_seen[l] += now.seen[l] - ts->counted.seen[l];
    stats->objects_reused[l] += now.reused[l] - ts->counted.reused[l];
    if (ts->moved) {
      stats->objects_seen_moved += now.seen[l] - ts->counted.seen[l];
      stats->objects_reused_moved += now.reused[l] - ts->counted.reused[l];
    }
    stats->objects_area[l] += now.area[l] - ts->counted.area[l];
    stats->objects_area_reused[l] += now.area_reused[l] - ts->counted.area_reused[l];
  }
  stats->object_evictions += now.evictions - ts->counted.evictions;
  if (now.bytes_peak > stats->object_store_peak) stats->object_store_peak = now.bytes_peak;
  ts->counted = now;
}

/* Every unit of the tile has finished: what is left reading it (a count
 * prefetched and never looked at, a tile stage output no leaf needed) is
 * waited for here. */
static void tile_close(tile_state *ts, const wsisa_exec_opts *o) {
  tile_reference_wait(ts);
  for (size_t i = 0; i < ts->nprefetched; i++)
    wsisa_workflow_background_wait(&ts->data, ts->bg_counts[i], &ts->bg_h[i]);
  wsisa_object_store_free(ts->objects);
  if (ts->data.rc) wsisa_workflow_tile_release(&ts->data, o->normalize);
  /* an annotation's handles sit on host images freed below: wait for them */
  void (*unregister)(starpu_data_handle_t) =
      ts->annot_mask ? starpu_data_unregister : starpu_data_unregister_submit;
  if (ts->ref) unregister(ts->ref);
  if (ts->ref_labels) unregister(ts->ref_labels);
  wsisa_image_free(ts->annot_mask);
  wsisa_image_free(ts->annot_labels);
  if (ts->h_rgb) starpu_data_unregister(ts->h_rgb); /* waits for its readers */
  wsisa_image_free(ts->rgb);
  free(ts->bgr);
  free(ts->skip);
  free(ts->tissue);
  free(ts->bg_counts);
  free(ts->bg_h);
  free(ts->ref_features);
  memset(ts, 0, sizeof *ts);
}

/* ---- units ---------------------------------------------------------------- */

static void unit_free(unit *u) {
  if (!u) return;
  for (size_t i = 0; i < u->nleaves; i++) {
    for (int k = 0; k < NPARTS; k++)
      if (u->leaves[i].part[k].handle) starpu_data_unregister(u->leaves[i].part[k].handle);
    if (u->leaves[i].labels) starpu_data_unregister_submit(u->leaves[i].labels);
    free(u->leaves[i].rows);
    free(u->leaves[i].spans);
  }
  /* with features, the leaves' reductions read the unit's own channels */
  if (u->owns_tile) wsisa_workflow_tile_release(&u->own_tile, u->normalize);
  free(u->leaves);
  free(u->skipped);
  free(u);
}

/* Submit one unit: the depth-first walk of its tree. */
static int unit_submit(unit *u, tile_state *ts, const double *params,
                       const wsisa_exec_opts *o, wsisa_exec_stats *stats, wsisa_err *e) {
  const wsisa_reuse_tree *t = u->tree;
  const wsisa_tile_data *data = &ts->data;
  int rc = 0;
  if (!o->share_tile_stage) {
    if ((rc = wsisa_workflow_tile_submit_framed(ts->h_rgb, ts->rgb->width, ts->rgb->height,
                                                WSISA_TARGET_MPP / ts->data.length_scale,
                                                o->normalize, &ts->frame, &u->own_tile, e)))
      return rc;
    u->owns_tile = 1;
    u->normalize = o->normalize;
    /* the same pixels as the session's tile stage: the same objects */
    u->own_tile.objects = ts->objects;
    if (o->features && (rc = wsisa_workflow_channels_submit(&u->own_tile, 1, e))) return rc;
    stats->tile_stages++;
    data = &u->own_tile;
  }
  size_t nleaves = 0;
  for (size_t v = 1; v < t->n_nodes; v++) nleaves += t->nodes[v].level == t->k;
  u->leaves = calloc(nleaves ? nleaves : 1, sizeof *u->leaves);
  u->skipped = calloc(t->n_nodes, 1);
  if (!u->leaves || !u->skipped) return wsisa_error(e, WSISA_ENOMEM, "out of memory");

  wsisa_task_data path;
  memset(&path, 0, sizeof path);
  size_t stack[WSISA_SEG_LEVELS + 1], depth = 0;
  for (size_t v = 1; v < t->n_nodes && !rc;) {
    const wsisa_reuse_node *n = &t->nodes[v];
    /* leave the subtrees that are finished: their outputs have no consumer left */
    while (depth && t->nodes[stack[depth - 1]].end <= v)
      wsisa_workflow_task_release((int)t->nodes[stack[--depth]].level, &path);
    const double *p = params + t->instances[n->first_instance] * WSISA_SEG_NPARAMS;
    if (n->level == 1) {
      int skip = 0;
      if ((rc = tile_skip(ts, data, p, &skip, NULL, e))) break;
      if (skip) {
        /* the 90 % background rule: an empty mask, the subtree is not run */
        u->skipped[v] = 1;
        stats->skipped += n->end - v;
        v = n->end;
        continue;
      }
    }
    if (n->level == t->k) paths_wait_below(u->paths, o->active_paths);
    rc = wsisa_workflow_task_submit((int)n->level, p, data, &path, NULL, e);
    if (rc) break;
    stats->tasks++;
    stack[depth++] = v;
    if (n->level == t->k) {
      leaf *l = &u->leaves[u->nleaves++];
      l->node = v;
      l->owner = u;
      l->remaining = o->object_match ? 3 : 2;
      uint64_t *home[NPARTS] = {l->counts, &l->nuclei, l->match};
      const uint32_t len[NPARTS] = {3, 1, WSISA_MATCH_FIELDS};
      for (int k = 0; k < l->remaining; k++) {
        l->part[k].owner = l;
        starpu_vector_data_register(&l->part[k].handle, STARPU_MAIN_RAM, (uintptr_t)home[k],
                                    len[k], sizeof(uint64_t));
      }
      l->data = data;
      wsisa_measure m = {l->part[PART_COUNTS].handle, l->part[PART_NUCLEI].handle,
                         l->part[PART_MATCH].handle, ts->ref_labels,
                         o->features || o->nuclei_out ? &l->labels : NULL};
      /* a tile read with a halo measures the objects its core owns */
      starpu_data_handle_t owned = NULL;
      if ((rc = wsisa_workflow_own_submit(data, path.final, &owned, e))) break;
      /* without a reference (nuclei_out) the leaf is its own */
      rc = wsisa_workflow_measure_submit(data, owned, ts->ref ? ts->ref : owned, &m, e);
      if (owned != path.final) starpu_data_unregister_submit(owned);
      if (rc) break;
      paths_begin(u->paths);
      pthread_mutex_lock(&u->paths->lock);
      u->pending++;
      pthread_mutex_unlock(&u->paths->lock);
      for (int k = 0, n = l->remaining; k < n && !rc; k++)
        if (starpu_data_acquire_cb(l->part[k].handle, STARPU_R,
                                   k == PART_NUCLEI && l->labels && o->features
                                       ? leaf_nuclei_done
                                       : leaf_part_done,
                                   &l->part[k]))
          rc = wsisa_error(e, WSISA_ERUNTIME, "cannot wait for a comparison");
      if (rc) break;
    }
    v++;
  }
  while (depth) wsisa_workflow_task_release((int)t->nodes[stack[--depth]].level, &path);
  if (u->owns_tile && !o->features) {
    wsisa_workflow_tile_release(&u->own_tile, o->normalize);
    u->owns_tile = 0;
  }
  return rc;
}

/* A leaf's nuclei as spans (nuclei_out), on the submitting thread: its
 * labels are home by now (its measures, which came home, ran after them). */
static int leaf_spans(leaf *l, wsisa_err *e) {
  if (starpu_data_acquire(l->labels, STARPU_R))
    return wsisa_error(e, WSISA_ERUNTIME, "cannot read the nuclei's labels");
  const int32_t *px = (const int32_t *)starpu_matrix_get_local_ptr(l->labels);
  const uint32_t nx = starpu_matrix_get_nx(l->labels), ny = starpu_matrix_get_ny(l->labels);
  const size_t ld = starpu_matrix_get_local_ld(l->labels);
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (uint32_t y = 0; y < ny; y++) {
      const int32_t *row = px + (size_t)y * ld;
      for (uint32_t x = 0; x < nx;) {
        const int32_t v = row[x];
        uint32_t end = x + 1;
        while (end < nx && row[end] == v) end++;
        if (v > 0 && pass) {
          uint32_t *sp = l->spans + n * WSISA_SPAN_FIELDS;
          sp[WSISA_SPAN_ROW] = y, sp[WSISA_SPAN_X] = x, sp[WSISA_SPAN_LEN] = end - x;
          sp[WSISA_SPAN_LABEL] = (uint32_t)v;
        }
        n += v > 0;
        x = end;
      }
    }
    if (!pass && !(l->spans = malloc((n ? n : 1) * WSISA_SPAN_FIELDS * sizeof *l->spans)))
      break;
  }
  starpu_data_release(l->labels);
  if (!l->spans) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  l->nspans = n;
  return 0;
}

/* Gather a finished unit's counts per run and hand them over. */
static int unit_report(unit *u, wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  const wsisa_reuse_tree *t = u->tree;
  size_t n = t->n_instances;
  size_t *runs = malloc((n ? n : 1) * sizeof *runs);
  wsisa_counts *counts = calloc(n ? n : 1, sizeof *counts);
  if (!runs || !counts) {
    free(runs);
    free(counts);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  size_t m = 0;
  /* the tile's reference counts, home by now (the leaves' measures ran after it) */
  tile_reference_wait(u->ts);
  const uint64_t ref_nuclei = u->ts->ref_nuclei;
  int tissue_rc = u->nuclei_out ? 0 : tile_reference_tissue(u->ts, e);
  for (size_t i = 0; i < u->nleaves && u->nuclei_out && !tissue_rc; i++)
    tissue_rc = leaf_spans(&u->leaves[i], e);
  if (tissue_rc) {
    free(runs);
    free(counts);
    return tissue_rc;
  }
  const uint64_t ref_tissue = u->ts->ref_tissue;
  for (size_t i = 0; i < u->nleaves; i++)
    if (u->leaves[i].failed) {
      free(runs);
      free(counts);
      return wsisa_error(e, WSISA_ERUNTIME, "cannot compute the nucleus features");
    }
  for (size_t i = 0; i < u->nleaves; i++)
    rows_to_core(u->leaves[i].rows, u->leaves[i].nuclei, WSISA_NF_ROW(u->leaves[i].data->nchannels),
                 u->leaves[i].data);
  for (size_t i = 0; i < u->nleaves; i++) {
    const wsisa_reuse_node *leaf_node = &t->nodes[u->leaves[i].node];
    for (size_t j = 0; j < leaf_node->n_instances; j++) {
      runs[m] = t->instances[leaf_node->first_instance + j];
      const leaf *l = &u->leaves[i];
      wsisa_counts *c = &counts[m++];
      *c = (wsisa_counts){.both = l->counts[0], .run = l->counts[1], .ref = l->counts[2],
                          .nuclei = l->nuclei, .ref_nuclei = ref_nuclei,
                          .ref_tissue = ref_tissue,
                          .features = l->rows, .ref_features = u->ref_features,
                          .feature_cols = WSISA_NF_ROW(l->data->nchannels),
                          .spans = l->spans, .nspans = l->nspans};
      memcpy(c->match, l->match, sizeof c->match);
    }
  }
  for (size_t v = 1; v < t->n_nodes; v++) {
    if (t->nodes[v].level != 1 || !u->skipped[v]) continue;
    const wsisa_reuse_node *nd = &t->nodes[v];
    /* an empty mask: every reference object unmatched, its pixels in no
     * intersection (the reference's objects cover its mask) */
    const uint64_t ref = u->ts->ref_pixels;
    for (size_t j = 0; j < nd->n_instances; j++) {
      runs[m] = t->instances[nd->first_instance + j];
      wsisa_counts *c = &counts[m++];
      *c = (wsisa_counts){.ref = ref, .ref_nuclei = ref_nuclei, .ref_tissue = ref_tissue,
                          .ref_features = u->ref_features};
      /* an empty mask: no span to send (the tissue is filled in below) */
      if (u->object_match) {
        c->match[WSISA_MATCH_AREA_REF] = ref;
        c->match[WSISA_MATCH_FN] = ref_nuclei;
        c->match[WSISA_MATCH_AJI_UNION] = ref;
      }
    }
  }
  int rc = 0;
  /* nuclei_out: the tissue each run's background rule found in the core
   * (decided when its level 1 was submitted: no count waits here) */
  for (size_t i = 0; i < m && u->nuclei_out && !rc; i++) {
    int skip = 0;
    rc = tile_skip(u->ts, &u->ts->data, u->params + runs[i] * WSISA_SEG_NPARAMS, &skip,
                   &counts[i].tissue, e);
  }
  if (!rc) rc = on_unit ? on_unit(ctx, u->tile, u->bucket, runs, counts, m, e) : 0;
  free(runs);
  free(counts);
  return rc;
}

/* ---- sessions: units handed out one at a time ---------------------------- */

#define ANY_KIND WSISA_KINDS

/* A scope's counters, read at once. */
typedef struct scope_counts {
  uint64_t submitted, ended, on[WSISA_KINDS], astray, fixed;
} scope_counts;

static scope_counts scope_read(wsisa_codelets_scope *c) {
  return (scope_counts){atomic_load(&c->submitted), atomic_load(&c->ended),
                        {atomic_load(&c->on_cpu), atomic_load(&c->on_opencl)},
                        atomic_load(&c->astray), atomic_load(&c->fixed)};
}

struct wsisa_exec_session {
  const wsisa_tile_ref *tiles;
  size_t ntiles;
  const double *params;
  const wsisa_reuse_buckets *buckets;
  wsisa_exec_opts opts;
  paths ps;
  /* the tiles open at once: tile[i] is ts[i]'s, ntiles when the place is
   * free; opened[i] orders them by opening */
  tile_state ts[WSISA_EXEC_MAX_OPEN_TILES];
  size_t tile[WSISA_EXEC_MAX_OPEN_TILES], opened[WSISA_EXEC_MAX_OPEN_TILES], opens;
  size_t nopen; /* the places: wsisa_exec_open_tiles */
  /* opened ahead of its first unit (wsisa_exec_session_open_ahead), no unit
   * submitted yet: kept until one is */
  int ahead[WSISA_EXEC_MAX_OPEN_TILES];
  unsigned char *moved; /* per tile: its units moved here (wsisa_exec_session_moved) */
  /* the distinct (B, G, R) of the runs, whose counts each tile prefetches,
   * and the level-2 reconstructions each tile stage makes for them
   * (wsisa_tile_frame.recon_conns) */
  double (*bgr)[3];
  size_t nbgr;
  int recon_conns;
  unit **queue;
  size_t nq, cap;
  wsisa_exec_stats stats; /* since the last wsisa_exec_session_stats */
  wsisa_annotation *annot; /* the last annotation read, for the next tile of its slide */
  /* with CPU and OpenCL workers: the placement in force (-1: one kind of
   * worker, nothing to choose), the scopes tasks are submitted under (one
   * per kind for unit placement, ANY_KIND's for task placement, which only
   * counts) and what their counters held when last taken */
  int placement;
  wsisa_codelets_scope scope[WSISA_KINDS + 1];
  scope_counts taken[WSISA_KINDS + 1];
};

/* The distinct (B, G, R) of the buckets' runs, in the order of their
 * instances (engine/simulate.c prefetches the same), and the level-2
 * reconstructions the runs and the reference ask for. */
static int bgr_distinct(wsisa_exec_session *s) {
  const wsisa_reuse_buckets *b = s->buckets;
  size_t ni = b->start[b->n_buckets];
  s->recon_conns = wsisa_workflow_recon_conns(NULL, 0);
  if (!ni) return 0;
  if (!(s->bgr = malloc(ni * sizeof *s->bgr))) return -1;
  for (size_t i = 0; i < ni; i++) {
    const double *p = s->params + b->instances[i] * WSISA_SEG_NPARAMS;
    s->recon_conns |= wsisa_workflow_recon_conns(p, 1);
    size_t k = 0;
    while (k < s->nbgr && !(s->bgr[k][0] == p[WSISA_P_B] && s->bgr[k][1] == p[WSISA_P_G] &&
                            s->bgr[k][2] == p[WSISA_P_R]))
      k++;
    if (k == s->nbgr) {
      s->bgr[k][0] = p[WSISA_P_B], s->bgr[k][1] = p[WSISA_P_G], s->bgr[k][2] = p[WSISA_P_R];
      s->nbgr++;
    }
  }
  return 0;
}

int wsisa_exec_session_new(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                           const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                           wsisa_exec_session **out, wsisa_err *e) {
  wsisa_exec_session *s = calloc(1, sizeof *s);
  if (!s) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->tiles = tiles;
  s->ntiles = ntiles;
  s->params = params;
  s->buckets = buckets;
  s->opts = *opts;
  pthread_mutex_init(&s->ps.lock, NULL);
  pthread_cond_init(&s->ps.cond, NULL);
  s->nopen = wsisa_exec_open_tiles(opts, (size_t)(wsisa_runtime_ncpu() + wsisa_runtime_nopencl()));
  for (size_t i = 0; i < WSISA_EXEC_MAX_OPEN_TILES; i++) s->tile[i] = ntiles;
  /* a placement to choose only with both kinds of worker, both allowed */
  const uint32_t both = STARPU_CPU | STARPU_OPENCL;
  s->placement = wsisa_runtime_ncpu() > 0 && wsisa_runtime_nopencl() > 0 &&
                         (wsisa_codelets_where() & both) == both
                     ? opts->placement
                     : -1;
  /* the models' seconds per task, over the kind's workers */
  const int workers[WSISA_KINDS] = {wsisa_runtime_ncpu(), wsisa_runtime_nopencl()};
  for (int k = 0; k < WSISA_KINDS; k++)
    if (workers[k] > 0) {
      s->ps.load[k].prior = opts->kind_task_seconds[k] / workers[k];
      s->ps.load[k].workers = workers[k];
    }
  s->scope[WSISA_KIND_CPU].where = STARPU_CPU;
  s->scope[WSISA_KIND_OPENCL].where = STARPU_OPENCL;
  s->scope[ANY_KIND].where = both;
  *out = s;
  if (!(s->moved = calloc(ntiles ? ntiles : 1, 1)) || bgr_distinct(s)) {
    wsisa_exec_session_free(s);
    *out = NULL;
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  return 0;
}

/* The first unit of the queue whose leaves have all arrived, oldest first;
 * s->nq when none has. s->ps.lock held. */
static size_t first_finished(const wsisa_exec_session *s) {
  size_t i = 0;
  while (i < s->nq && s->queue[i]->pending) i++;
  return i;
}

/* first_finished; with `wait`, waits until one has (the queue not empty). */
static size_t session_finished(wsisa_exec_session *s, int wait) {
  pthread_mutex_lock(&s->ps.lock);
  size_t i;
  while ((i = first_finished(s)) == s->nq && wait) paths_wait_step(&s->ps);
  pthread_mutex_unlock(&s->ps.lock);
  return i;
}

/* Report finished units until at most `keep` are in flight, whichever end
 * first (the oldest first among those ended); with `wait`, wait for one to
 * end when none has, else stop. Not the oldest unit first: with one unit
 * per worker in flight, a long unit at the head kept the workers that had
 * ended theirs without a next one until it ended too. */
static int session_report(wsisa_exec_session *s, size_t keep, int wait,
                          wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  int rc = 0;
  while (s->nq > keep && !rc) {
    size_t i = session_finished(s, 0);
    if (i == s->nq) {
      if (!wait) break;
      double since = wsisa_now();
      i = session_finished(s, 1);
      s->stats.unit_waits++;
      s->stats.unit_wait_s += wsisa_now() - since;
    }
    rc = unit_report(s->queue[i], on_unit, ctx, e);
    unit_free(s->queue[i]);
    s->nq--;
    memmove(s->queue + i, s->queue + i + 1, (s->nq - i) * sizeof *s->queue);
  }
  return rc;
}

int wsisa_exec_session_poll(wsisa_exec_session *s, size_t keep, int wait,
                            wsisa_exec_unit_fn on_unit, void *ctx, size_t *in_flight,
                            wsisa_err *e) {
  int rc = session_report(s, keep, wait, on_unit, ctx, e);
  if (in_flight) *in_flight = s->nq;
  return rc;
}

/* Close the tile at place i: its units have all been reported. */
static void session_close_tile(wsisa_exec_session *s, size_t i) {
  if (s->tile[i] == s->ntiles) return;
  objects_count(&s->ts[i], &s->stats);
  tile_close(&s->ts[i], &s->opts);
  s->tile[i] = s->ntiles;
  s->ahead[i] = 0;
}

/* A place a tile may open at: a free one, else the tile opened first among
 * those with no unit in flight, other than `keep` (NONE: any); NONE while
 * every open tile has one. Nothing is closed. */
static size_t place_free(const wsisa_exec_session *s, size_t keep) {
  size_t best = (size_t)-1;
  for (size_t i = 0; i < s->nopen; i++) {
    if (s->tile[i] == s->ntiles) return i;
    int busy = s->tile[i] == keep;
    for (size_t q = 0; q < s->nq && !busy; q++) busy = s->queue[q]->place == i;
    if (!busy && (best == (size_t)-1 || s->opened[i] < s->opened[best])) best = i;
  }
  return best;
}

/* A place for a new tile (place_free), its tile closed. */
static size_t session_place(wsisa_exec_session *s) {
  size_t at = place_free(s, (size_t)-1);
  if (at != (size_t)-1) session_close_tile(s, at);
  return at;
}

/* A place for a tile opened ahead, without waiting (place_free, the current
 * tile `keep` kept); NONE while a tile opened ahead waits for its first unit
 * (one at a time), or under unit placement. */
static size_t place_ahead(const wsisa_exec_session *s, size_t keep) {
  if (s->placement == WSISA_PLACEMENT_UNIT) return (size_t)-1;
  for (size_t i = 0; i < s->nopen; i++)
    if (s->ahead[i]) return (size_t)-1;
  return place_free(s, keep);
}

int wsisa_exec_session_can_open_ahead(const wsisa_exec_session *s, size_t keep) {
  return place_ahead(s, keep) != (size_t)-1;
}

/* The place of `tile`, opened there under the calling thread's scope when
 * not open yet (*opened set): a place is freed first if none is. */
static int session_open(wsisa_exec_session *s, size_t tile, size_t *place, int *opened,
                        wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  size_t at = 0;
  int rc = 0;
  *opened = 0;
  while (at < s->nopen && s->tile[at] != tile) at++;
  if (at == s->nopen) {
    /* a tile's pixels must outlive every unit that reads them: units are
     * waited for, whichever end first, until an open tile has none left */
    while ((at = session_place(s)) == (size_t)-1)
      if ((rc = wsisa_exec_session_poll(s, s->nq - 1, 1, on_unit, ctx, NULL, e))) return rc;
    *opened = 1;
  }
  *place = at;
  return 0;
}

/* The kind unit placement gives a unit of cost `cost` (-1: task placement,
 * or one kind of worker), and the scope its tasks go under. */
static int session_kind(wsisa_exec_session *s, double cost, wsisa_codelets_scope **scope) {
  *scope = NULL;
  if (s->placement < 0) return -1;
  if (s->placement == WSISA_PLACEMENT_TASK) {
    *scope = &s->scope[ANY_KIND];
    return -1;
  }
  /* each kind's speed: the tasks of its units its workers have ended */
  const wsisa_codelets_scope *cpu = &s->scope[WSISA_KIND_CPU],
                             *ocl = &s->scope[WSISA_KIND_OPENCL];
  pthread_mutex_lock(&s->ps.lock);
  s->ps.load[WSISA_KIND_CPU].tasks = (double)atomic_load(&cpu->on_cpu);
  s->ps.load[WSISA_KIND_CPU].task_seconds = (double)atomic_load(&cpu->ns_on_cpu) * 1e-9;
  s->ps.load[WSISA_KIND_OPENCL].tasks = (double)atomic_load(&ocl->on_opencl);
  s->ps.load[WSISA_KIND_OPENCL].task_seconds = (double)atomic_load(&ocl->ns_on_opencl) * 1e-9;
  const double placed = (double)(atomic_load(&cpu->placed) + atomic_load(&ocl->placed));
  const double per_cost = s->ps.cost_given > 0 ? placed / s->ps.cost_given : 0;
  int k = wsisa_exec_placement_choose(s->ps.load, cost, per_cost);
  pthread_mutex_unlock(&s->ps.lock);
  *scope = &s->scope[k];
  return k;
}

/* Open `tile` at place `at` (free) under the calling thread's scope. */
static int session_open_at(wsisa_exec_session *s, size_t tile, size_t at, wsisa_err *e) {
  int rc = tile_open(&s->tiles[tile], &s->opts, s->recon_conns, &s->ts[at],
                     (const double(*)[3])s->bgr, s->nbgr, &s->stats, &s->annot, e);
  s->ts[at].moved = s->moved[tile];
  s->stats.tile_stages_moved += s->moved[tile];
  s->tile[at] = tile;
  s->opened[at] = s->opens++;
  if (rc) {
    /* what it submitted may still run */
    starpu_task_wait_for_all();
    session_close_tile(s, at);
  }
  return rc;
}

int wsisa_exec_session_open_ahead(wsisa_exec_session *s, size_t tile, size_t keep,
                                  wsisa_err *e) {
  if (tile >= s->ntiles) return 0;
  for (size_t i = 0; i < s->nopen; i++)
    if (s->tile[i] == tile) return 0;
  size_t at = place_ahead(s, keep);
  if (at == (size_t)-1) return 0;
  session_close_tile(s, at);
  wsisa_codelets_scope *was =
      wsisa_codelets_scope_set(s->placement < 0 ? NULL : &s->scope[ANY_KIND]);
  int rc = session_open_at(s, tile, at, e);
  wsisa_codelets_scope_set(was);
  if (!rc) {
    s->ahead[at] = 1;
    s->stats.tiles_opened_ahead++;
  }
  return rc;
}

void wsisa_exec_session_moved(wsisa_exec_session *s, size_t tile) {
  if (tile < s->ntiles) s->moved[tile] = 1;
}

int wsisa_exec_session_submit(wsisa_exec_session *s, size_t tile, size_t bucket,
                              wsisa_exec_unit_fn on_unit, void *ctx, wsisa_err *e) {
  if (tile >= s->ntiles || bucket >= s->buckets->n_buckets)
    return wsisa_error(e, WSISA_EINTERNAL, "unit (tile %zu, bucket %zu) is not in the study",
                       tile, bucket);
  size_t at;
  int opening;
  int rc = session_open(s, tile, &at, &opening, on_unit, ctx, e);
  if (rc) return rc;
  if (s->nq == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 4;
    unit **q = realloc(s->queue, cap * sizeof *q);
    if (!q) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    s->queue = q;
    s->cap = cap;
  }
  unit *u = calloc(1, sizeof *u);
  if (!u) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  u->tile = tile;
  u->bucket = bucket;
  u->tree = s->buckets->trees[bucket];
  u->paths = &s->ps;
  u->place = at;
  u->ts = &s->ts[at];
  u->object_match = s->opts.object_match;
  u->params = s->params;
  u->features = s->opts.features;
  u->nuclei_out = s->opts.nuclei_out;
  /* the tile's stage goes with its first unit: the reference's path is then
   * that unit's too */
  u->cost = wsisa_exec_unit_cost(u->tree) + (opening ? WSISA_EXEC_TILE_STAGE_COST : 0);
  u->kind = session_kind(s, u->cost, &u->scope);
  if (u->kind >= 0) {
    s->stats.units_on[u->kind]++;
    if (opening) s->stats.tile_stages_on[u->kind]++;
  }
  wsisa_codelets_scope *was = wsisa_codelets_scope_set(u->scope);
  if (opening && (rc = session_open_at(s, tile, at, e))) {
    wsisa_codelets_scope_set(was);
    free(u);
    return rc;
  }
  s->ahead[at] = 0;
  u->ref_features = s->ts[at].ref_features;
  pthread_mutex_lock(&s->ps.lock);
  unit_started(&s->ps, u);
  pthread_mutex_unlock(&s->ps.lock);
  rc = unit_submit(u, &s->ts[at], s->params, &s->opts, &s->stats, e);
  wsisa_codelets_scope_set(was);
  pthread_mutex_lock(&s->ps.lock);
  u->submitted = 1;
  if (!u->pending) unit_ended(&s->ps, u);
  pthread_mutex_unlock(&s->ps.lock);
  if (rc) {
    unit_wait(u);
    unit_free(u);
    return rc;
  }
  s->queue[s->nq++] = u;
  return 0;
}

void wsisa_exec_session_on_wait(wsisa_exec_session *s, void (*fn)(void *), void *ctx,
                                double period) {
  pthread_mutex_lock(&s->ps.lock);
  s->ps.on_wait = fn;
  s->ps.wait_ctx = ctx;
  s->ps.wait_period = period;
  pthread_mutex_unlock(&s->ps.lock);
}

void wsisa_exec_session_idle(wsisa_exec_session *s, double seconds) {
  struct timespec until = deadline_in(seconds);
  pthread_mutex_lock(&s->ps.lock);
  /* a leaf's end broadcasts: a unit's end wakes this thread at once */
  if (s->nq)
    while (first_finished(s) == s->nq &&
           pthread_cond_timedwait(&s->ps.cond, &s->ps.lock, &until) != ETIMEDOUT) {
    }
  pthread_mutex_unlock(&s->ps.lock);
  if (!s->nq) clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, NULL);
}

void wsisa_exec_session_stats(wsisa_exec_session *s, wsisa_exec_stats *stats) {
  pthread_mutex_lock(&s->ps.lock);
  s->stats.peak_paths = s->ps.peak;
  s->stats.path_waits = s->ps.waits;
  s->stats.path_wait_s = s->ps.waited;
  s->ps.waits = 0;
  s->ps.waited = 0;
  pthread_mutex_unlock(&s->ps.lock);
  for (size_t i = 0; i < s->nopen; i++)
    if (s->tile[i] != s->ntiles) objects_count(&s->ts[i], &s->stats);
  /* the tasks counted under the scopes since they were last taken */
  s->stats.placed_by_unit = s->placement == WSISA_PLACEMENT_UNIT;
  for (int i = 0; i <= ANY_KIND; i++) {
    const scope_counts now = scope_read(&s->scope[i]), *was = &s->taken[i];
    s->stats.tasks_submitted += now.submitted - was->submitted;
    s->stats.tasks_ended += now.ended - was->ended;
    for (int k = 0; k < WSISA_KINDS; k++) s->stats.tasks_on[k] += now.on[k] - was->on[k];
    s->stats.tasks_astray += now.astray - was->astray;
    s->stats.tasks_fixed += now.fixed - was->fixed;
    s->taken[i] = now;
  }
  *stats = s->stats;
  memset(&s->stats, 0, sizeof s->stats);
}

void wsisa_exec_session_free(wsisa_exec_session *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nq; i++) {
    unit_wait(s->queue[i]);
    unit_free(s->queue[i]);
  }
  /* after an error, tasks no leaf waits for may still be running */
  starpu_task_wait_for_all();
  for (size_t i = 0; i < s->nopen; i++) session_close_tile(s, i);
  free(s->bgr);
  free(s->moved);
  wsisa_annotation_free(s->annot);
  pthread_mutex_destroy(&s->ps.lock);
  pthread_cond_destroy(&s->ps.cond);
  free(s->queue);
  free(s);
}

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
