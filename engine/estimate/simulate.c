/* The estimate's schedule: a discrete-event simulation of the unit queue
 * (engine/exec/units.c) and the executor (engine/exec/executor.c) where they
 * wait, ready tasks placed as dmda does; and deadline -> ranks
 * (docs/architecture.md, "The estimate in detail": "The schedule"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"

#define OPEN WSISA_EXEC_OPEN_TILES
#define NONE ((size_t)-1)

/* ---- tasks and events ------------------------------------------------------- */

enum { K_LEVEL, K_MEASURE, K_STAGE, K_BACKGROUND, K_OPEN, K_REFERENCE, K_READ };

typedef struct task {
  double dur, dur_ocl; /* on a CPU worker, on an OpenCL one (INFINITY: not there) */
  int rank, kind;
  size_t unit;       /* index into the rank's unit slots, for measures; its open
                      * tile's, for a background count */
  size_t also;       /* a second predecessor (a leaf's measure: its tile's
                      * reference), waited for once the first has ended; NONE */
  size_t next_dep;   /* next task waiting on the same predecessor */
  size_t first_dep;  /* first task waiting on this one */
  size_t next_own;   /* next task of the same unit; in the free list, the next free */
  int done;
  int place;         /* unit placement: the kind of worker its unit was given (-1: any) */
  double ran;        /* under unit placement, on a worker of its unit's kind: its seconds */
  /* a level task's output (engine/exec/executor.c): held from its end while
   * a task reading it (a child, a leaf's measure) has not finished or the
   * walk has not left its subtree */
  size_t reads;      /* the level task whose output this one reads, or NONE */
  size_t readers;    /* tasks reading this one's output, not finished */
  int released;      /* the walk has left its subtree */
  int held;          /* its output is held */
} task;

typedef struct event {
  double t;
  size_t task;
} event;

/* A unit being submitted or in flight on a rank. */
typedef struct unit_slot {
  size_t tile, bucket;
  size_t open;      /* its tile's place among the open tiles */
  size_t pending;   /* leaves not finished */
  int walked;       /* every task submitted */
  int used;
  size_t tasks;     /* its tasks, linked by next_own: free once it ends */
  int kind;         /* unit placement: the kind given the unit (-1: any) */
  double cost;      /* its cost for the rule (wsisa_exec_unit_cost) */
} unit_slot;

typedef enum { S_NEXT, S_WALK, S_BLOCK_K, S_BLOCK_BG, S_BLOCK_DRAIN, S_BLOCK_OPEN, S_DONE } sub_state;

/* A tile open on a rank, and the background counts it prefetched. */
typedef struct open_tile {
  size_t tile;              /* NONE: the place is free */
  size_t *bg;               /* per distinct (B, G, R) of the study: its count's task */
  size_t bg_left;           /* counts not finished */
  size_t stage;             /* its stage's task, or NONE */
  size_t ref;               /* the reference's task (its segmentation and
                             * measure), or NONE */
  int ahead;                /* opened ahead of its first unit, none walked yet */
  size_t opened;            /* when it was opened, in opens of the rank */
  wsisa__objects_seen seen; /* its object store: the level-6/7 tasks it saw */
} open_tile;

typedef struct rank_state {
  double *avail;            /* per worker: when its queue ends (CPU ones first) */
  size_t *ready;            /* FIFO ring of task ids */
  size_t rcap, rhead, rlen;
  open_tile open[OPEN];     /* the tiles open at once */
  size_t opens;
  size_t held;              /* the tile of its newest unit, for the queue */
  int back;                 /* it takes held's buckets from the last down (tile affinity) */
  size_t credit;            /* units in flight at most (wsisa__units_credit) */
  size_t *assigned;         /* units handed to this rank, oldest first */
  size_t nassigned;
  unit_slot *slot;          /* credit + 1 */
  size_t walking;           /* slot being walked */
  size_t node;              /* next node of its tree */
  size_t level_task[WSISA_SEG_LEVELS + 1];
  size_t stage_task;
  int bg_checked;           /* the current node's (B, G, R) is known */
  size_t active;            /* paths */
  size_t path[WSISA_SEG_LEVELS + 1]; /* the walk's current path: its level tasks, NONE */
  size_t outputs;           /* level tasks' outputs held */
  size_t in_system;         /* tasks submitted, not finished */
  size_t blocker;           /* the task the submitter waits for */
  sub_state state;
  double finish;
  /* unit placement (the executor's rule, wsisa_exec_placement_choose): per
   * kind its load, the tasks given a kind and the cost of the units given;
   * the kind the tasks submitted now go to (-1: any); the unit a tile was
   * opened for, with the kind and cost chosen then (the stage goes with it) */
  wsisa_exec_kind_load load[WSISA_KINDS];
  double placed, cost_given;
  int placing;
  size_t opened_for;
  int opened_kind;
  double opened_cost;
} rank_state;

typedef struct sim {
  const wsisa__sim_costs *c;
  const wsisa__sim_job *j;
  wsisa_sim_result *r;
  size_t nb, nshapes, nv;
  task *tasks;
  size_t ntasks, cap_tasks;
  size_t free_tasks;  /* tasks of finished units, linked by next_own */
  event *heap;
  size_t nheap, cap_heap;
  rank_state *ranks;
  /* the queue of engine/exec/units.c */
  uint8_t *state; /* per unit: 0 to do, 1 out, 2 done */
  size_t *todo, *holders;
  /* the study's distinct (B, G, R), each run's among them */
  size_t nbgr, *run_bgr;
  double now;
  int failed;
} sim;

/* A task record; those of finished units are reused, so memory follows the
 * units in flight, not the whole study. */
static size_t task_new(sim *s, int rank, int kind, double dur) {
  size_t id = s->free_tasks;
  if (id != NONE) {
    s->free_tasks = s->tasks[id].next_own;
  } else {
    task *t = wsisa_grow(s->tasks, &s->cap_tasks, s->ntasks + 1, sizeof *t, 1024);
    if (!t) {
      s->failed = 1;
      return NONE;
    }
    s->tasks = t;
    id = s->ntasks++;
  }
  s->tasks[id] = (task){dur, dur, rank, kind, NONE, NONE, NONE, NONE, NONE, 0, -1, -1, NONE, 0, 0, 0};
  return id;
}

static void heap_push(sim *s, double t, size_t id) {
  event *h = wsisa_grow(s->heap, &s->cap_heap, s->nheap + 1, sizeof *h, 256);
  if (!h) {
    s->failed = 1;
    return;
  }
  s->heap = h;
  /* ties in submission order keep the simulation deterministic */
  size_t i = s->nheap++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (s->heap[p].t < t || (s->heap[p].t == t && s->heap[p].task < id)) break;
    s->heap[i] = s->heap[p];
    i = p;
  }
  s->heap[i] = (event){t, id};
}

static event heap_pop(sim *s) {
  event top = s->heap[0], last = s->heap[--s->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= s->nheap) break;
    if (c + 1 < s->nheap &&
        (s->heap[c + 1].t < s->heap[c].t ||
         (s->heap[c + 1].t == s->heap[c].t && s->heap[c + 1].task < s->heap[c].task)))
      c++;
    if (last.t < s->heap[c].t || (last.t == s->heap[c].t && last.task < s->heap[c].task)) break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  s->heap[i] = last;
  return top;
}

static void ready_push(sim *s, rank_state *rs, size_t id) {
  if (rs->rlen == rs->rcap) {
    size_t cap = rs->rcap ? 2 * rs->rcap : 64;
    size_t *q = malloc(cap * sizeof *q);
    if (!q) {
      s->failed = 1;
      return;
    }
    for (size_t i = 0; i < rs->rlen; i++) q[i] = rs->ready[(rs->rhead + i) % rs->rcap];
    free(rs->ready);
    rs->ready = q;
    rs->rcap = cap;
    rs->rhead = 0;
  }
  rs->ready[(rs->rhead + rs->rlen++) % rs->rcap] = id;
}

/* Ready tasks, in the order they became ready, each to the worker where it
 * would finish first (dmda's placement, transfers aside): with workers of
 * one kind, the one free first; under unit placement among the workers of
 * its unit's kind (a task the OpenCL workers cannot run: the CPU's). */
static void dispatch(sim *s, rank_state *rs) {
  int nw = s->j->workers, ncpu = nw - s->j->opencl_workers;
  while (rs->rlen) {
    size_t id = rs->ready[rs->rhead];
    rs->rhead = (rs->rhead + 1) % rs->rcap;
    rs->rlen--;
    const task *t = &s->tasks[id];
    int best = -1;
    double best_end = INFINITY, best_dur = 0;
    for (int w = 0; w < nw; w++) {
      if ((t->place == WSISA_KIND_CPU && w >= ncpu) ||
          (t->place == WSISA_KIND_OPENCL && w < ncpu && isfinite(t->dur_ocl)))
        continue;
      double dur = w < ncpu ? t->dur : t->dur_ocl;
      double end = fmax(rs->avail[w], s->now) + dur;
      if (end < best_end) best = w, best_end = end, best_dur = dur;
    }
    /* the rule measures a kind by its units' tasks on its workers */
    s->tasks[id].ran = best >= 0 && (best < ncpu ? WSISA_KIND_CPU : WSISA_KIND_OPENCL) == t->place
                           ? best_dur
                           : -1;
    if (best < 0) { /* a task no worker can run: the CPU's time */
      best = 0;
      best_dur = t->dur;
      best_end = fmax(rs->avail[0], s->now) + best_dur;
    }
    rs->avail[best] = best_end;
    heap_push(s, best_end, id);
    s->r->work += best_dur;
    if (best < ncpu) s->r->work_cpu += best_dur;
  }
}

static void task_free(sim *s, size_t id) {
  s->tasks[id].next_own = s->free_tasks;
  s->free_tasks = id;
}

/* Task id waits for `after` (NONE: nothing): ready at once when it has ended. */
static void wait_for(sim *s, rank_state *rs, size_t id, size_t after) {
  if (after != NONE && !s->tasks[after].done) {
    s->tasks[id].next_dep = s->tasks[after].first_dep;
    s->tasks[after].first_dep = id;
  } else {
    ready_push(s, rs, id);
  }
}

/* Submit a task of rank r after `after` (NONE: no predecessor); a task of a
 * unit (unit slot `slot`, NONE for the rank's own) is freed with it. */
static size_t submit(sim *s, int r, int kind, double dur, double dur_ocl, size_t after,
                     size_t slot) {
  size_t id = task_new(s, r, kind, dur);
  if (id == NONE) return NONE;
  rank_state *rs = &s->ranks[r];
  s->tasks[id].dur_ocl = dur_ocl;
  s->tasks[id].place = rs->placing;
  s->tasks[id].ran = -1;
  if (rs->placing >= 0) rs->placed++;
  if (slot != NONE) {
    s->tasks[id].next_own = rs->slot[slot].tasks;
    rs->slot[slot].tasks = id;
  }
  rs->in_system++;
  s->r->tasks++;
  wait_for(s, rs, id, after);
  return id;
}

/* ---- the unit queue (engine/exec/units.c's pick) ------------------------------- */

/* The next unit for a rank whose newest unit is of tile `*held`, marked out. */
static size_t pick(sim *s, size_t *held, int *back) {
  size_t u = wsisa__units_pick(s->state, s->todo, s->holders, s->j->ntiles, s->nb, held, back);
  if (u != NONE) {
    s->state[u] = 1;
    s->todo[u / s->nb]--;
  }
  return u;
}

/* Fill rank r up to its credit. */
static void refill(sim *s, int r) {
  rank_state *rs = &s->ranks[r];
  while (rs->nassigned < rs->credit) {
    size_t u = pick(s, &rs->held, &rs->back);
    if (u == NONE) break;
    rs->assigned[rs->nassigned++] = u;
  }
}

/* ---- the submitting thread of a rank ---------------------------------------- */

static double cost_level(const wsisa__sim_costs *c, const sim *s, size_t shape, size_t level,
                         size_t run) {
  int v = s->c->variant ? s->c->variant[run * WSISA_SEG_LEVELS + level - 1] : 0;
  return c->level[(shape * WSISA_SEG_LEVELS + level - 1) * s->nv + (size_t)v];
}

/* A piece's time on an OpenCL worker: its costs', the CPU's without them. */
#define OCL(s, field, shape) ((s)->c->opencl ? (s)->c->opencl->field[shape] : (s)->c->field[shape])

/* The study's distinct (B, G, R) in the order of the buckets' instances, as
 * the executor prefetches them (engine/exec/executor.c, bgr_distinct). */
static int bgr_index(sim *s) {
  const wsisa_reuse_buckets *b = s->j->buckets;
  const double *p = s->j->params;
  size_t nruns = 0, ni = b->start[b->n_buckets];
  for (size_t i = 0; i < ni; i++)
    if (b->instances[i] + 1 > nruns) nruns = b->instances[i] + 1;
  s->run_bgr = malloc((nruns ? nruns : 1) * sizeof *s->run_bgr);
  size_t *first = malloc((nruns ? nruns : 1) * sizeof *first); /* a run of each */
  if (!s->run_bgr || !first) {
    free(first);
    return -1;
  }
  for (size_t i = 0; i < ni; i++) {
    size_t run = b->instances[i], k = 0;
    const double *q = p + run * WSISA_SEG_NPARAMS;
    while (k < s->nbgr) {
      const double *f = p + first[k] * WSISA_SEG_NPARAMS;
      if (f[WSISA_P_B] == q[WSISA_P_B] && f[WSISA_P_G] == q[WSISA_P_G] &&
          f[WSISA_P_R] == q[WSISA_P_R])
        break;
      k++;
    }
    if (k == s->nbgr) first[s->nbgr++] = run;
    s->run_bgr[run] = k;
  }
  free(first);
  return 0;
}

static size_t units_walked_in_flight(const rank_state *rs) {
  size_t n = 0;
  for (size_t i = 0; i < rs->credit + 1; i++) n += rs->slot[i].used && rs->slot[i].walked;
  return n;
}

/* Level task id's output is no longer held once it has ended, nothing
 * reads it any more and the walk has left its subtree. */
static void output_drop(sim *s, rank_state *rs, size_t id) {
  task *t = &s->tasks[id];
  if (t->held && t->released && !t->readers) {
    t->held = 0;
    rs->outputs--;
  }
}

/* Task id reads level task `from`'s output (NONE: none). */
static void output_read(sim *s, size_t id, size_t from) {
  s->tasks[id].reads = from;
  if (from != NONE) s->tasks[from].readers++;
}

/* The walk leaves the subtree of its path's task at level l. */
static void output_release(sim *s, rank_state *rs, size_t l) {
  size_t id = rs->path[l];
  if (id == NONE) return;
  rs->path[l] = NONE;
  s->tasks[id].released = 1;
  output_drop(s, rs, id);
}

/* Walk the current unit until it is submitted or the submitter blocks. */
static void walk(sim *s, int r) {
  rank_state *rs = &s->ranks[r];
  unit_slot *us = &rs->slot[rs->walking];
  const wsisa_reuse_tree *t = s->j->buckets->trees[us->bucket];
  size_t shape = s->j->tile_shape[us->tile];
  const double *params = s->j->params;
  rs->placing = us->kind;
  while (rs->node < t->n_nodes) {
    const wsisa_reuse_node *n = &t->nodes[rs->node];
    size_t run = t->instances[n->first_instance];
    /* the walk leaves the subtrees of its path below this node's parent */
    for (size_t l = n->level; l <= WSISA_SEG_LEVELS; l++) output_release(s, rs, l);
    if (n->level == 1 && !rs->bg_checked) {
      rs->bg_checked = 1;
      /* its count was prefetched when the tile opened: wait for it */
      size_t bg = params ? rs->open[us->open].bg[s->run_bgr[run]] : NONE;
      if (bg != NONE && !s->tasks[bg].done) {
        rs->blocker = bg;
        rs->state = S_BLOCK_BG;
        return;
      }
    }
    int leaf = n->level == t->k;
    if (leaf && s->j->active_paths && rs->active >= s->j->active_paths) {
      rs->state = S_BLOCK_K;
      return;
    }
    size_t after = n->level == 1 ? rs->stage_task : rs->level_task[n->level - 1];
    double by_values = s->c->run_scale ? s->c->run_scale[run * WSISA_SEG_LEVELS + n->level - 1] : 1;
    double dur = by_values * cost_level(s->c, s, shape, n->level, run);
    double dur_ocl =
        s->c->opencl ? by_values * cost_level(s->c->opencl, s, shape, n->level, run) : dur;
    double by_store = 1;
    if (s->j->objects && n->level >= 6) {
      by_store = wsisa__objects_price(s->j->objects, &rs->open[us->open].seen, run, n->level,
                                      &s->r->objects_computed, &s->r->objects_reusable);
      if (by_store < 0) {
        s->failed = 1;
        return;
      }
      dur *= by_store;
      dur_ocl = INFINITY; /* object by object: CPU workers only */
    }
    size_t id = submit(s, r, K_LEVEL, dur, dur_ocl, after, rs->walking);
    if (id != NONE) output_read(s, id, n->level > 1 ? after : NONE);
    rs->path[n->level] = id;
    int v = s->c->variant ? s->c->variant[run * WSISA_SEG_LEVELS + n->level - 1] : 0;
    s->r->level_tasks[(shape * WSISA_SEG_LEVELS + n->level - 1) * s->nv + (size_t)v]++;
    s->r->level_units[(shape * WSISA_SEG_LEVELS + n->level - 1) * s->nv + (size_t)v] +=
        by_values * by_store;
    rs->level_task[n->level] = id;
    if (leaf) {
      size_t m = submit(s, r, K_MEASURE, s->c->measure[shape], OCL(s, measure, shape), id,
                        rs->walking);
      if (m != NONE) {
        s->tasks[m].unit = rs->walking;
        output_read(s, m, id);
        /* it reads the reference's mask too (its leaf task, just submitted,
         * has not ended: this is seen when it does) */
        s->tasks[m].also = rs->open[us->open].ref;
      }
      rs->active++;
      if (rs->active > s->r->peak_paths) s->r->peak_paths = rs->active;
      us->pending++;
      s->r->leaves++;
      s->r->shape_leaves[shape]++;
    }
    rs->node++;
    rs->bg_checked = 0;
    if (s->failed) return;
  }
  for (size_t l = 1; l <= WSISA_SEG_LEVELS; l++) output_release(s, rs, l);
  us->walked = 1;
  rs->state = S_NEXT;
}

/* The place of the open tile `tile`, NONE if it is not open. */
static size_t open_of(const rank_state *rs, size_t tile) {
  for (size_t o = 0; o < OPEN; o++)
    if (rs->open[o].tile == tile) return o;
  return NONE;
}

/* A place for a new tile (executor): a free one, else the tile opened first
 * among those with no unit in flight and their counts and reference home,
 * other than `keep` (NONE: any); NONE: none yet. */
static size_t open_place(const sim *s, const rank_state *rs, size_t keep) {
  size_t best = NONE;
  for (size_t o = 0; o < OPEN; o++) {
    const open_tile *ot = &rs->open[o];
    if (ot->tile == NONE) return o;
    int busy = ot->tile == keep || ot->bg_left != 0 ||
               (ot->ref != NONE && !s->tasks[ot->ref].done);
    for (size_t k = 0; k < rs->credit + 1 && !busy; k++)
      busy = rs->slot[k].used && rs->slot[k].open == o;
    if (!busy && (best == NONE || ot->opened < rs->open[best].opened)) best = o;
  }
  return best;
}

/* Close the tile at place o (its counts and reference have finished) and
 * open `tile` there (`ahead`: before its first unit): the submitter reads its
 * pixels; its stage follows, then the counts of every (B, G, R) of the study
 * and the reference. A level-1 node waits for its count, so a unit's first
 * one waits for the stage (the executor's submitting thread, for the count). */
static void open_tile_at(sim *s, int r, size_t o, size_t tile, int ahead) {
  rank_state *rs = &s->ranks[r];
  open_tile *ot = &rs->open[o];
  if (ot->bg)
    for (size_t k = 0; k < s->nbgr; k++)
      if (ot->bg[k] != NONE) task_free(s, ot->bg[k]);
  if (ot->ref != NONE) task_free(s, ot->ref);
  if (ot->stage != NONE) task_free(s, ot->stage);
  ot->ref = ot->stage = NONE;
  ot->ahead = ahead;
  if (!ot->bg && s->j->params && !(ot->bg = malloc((s->nbgr ? s->nbgr : 1) * sizeof *ot->bg))) {
    s->failed = 1;
    return;
  }
  size_t shape = s->j->tile_shape[tile];
  int w = s->j->workers > 0 ? s->j->workers : 1;
  double dur = fmax(s->c->open_path[shape], s->c->open[shape] / w);
  /* the read: the submitting thread's time, not a worker's */
  size_t read = NONE;
  if (s->c->read && s->c->read[shape] > 0 && (read = task_new(s, r, K_READ, 0)) != NONE) {
    rs->in_system++;
    heap_push(s, s->now + s->c->read[shape], read);
  }
  ot->tile = tile;
  ot->opened = rs->opens++;
  /* the tile's store starts empty, and the reference's segmentation fills
   * it first */
  wsisa__objects_seen_clear(&ot->seen);
  if (s->j->objects && s->c->reference && wsisa__objects_seen_reference(&ot->seen)) {
    s->failed = 1;
    return;
  }
  ot->bg_left = 0;
  s->r->rank_shapes[(size_t)r * s->nshapes + shape] = 1;
  s->r->opens++;
  s->r->shape_opens[shape]++;
  s->r->opens_ahead += ahead != 0;
  ot->stage = submit(s, r, K_OPEN, dur, dur, read, NONE);
  for (size_t k = 0; ot->bg && k < s->nbgr; k++) {
    size_t id = submit(s, r, K_BACKGROUND, s->c->background[shape], OCL(s, background, shape),
                       ot->stage, NONE);
    ot->bg[k] = id;
    if (id == NONE) return;
    s->tasks[id].unit = o;
    ot->bg_left++;
    s->r->backgrounds++;
    s->r->shape_backgrounds[shape]++;
  }
  if (s->c->reference) {
    /* a chain on the workers: its critical path, or its work over them */
    dur = fmax(s->c->reference_path[shape], s->c->reference[shape] / w);
    ot->ref = submit(s, r, K_REFERENCE, dur, dur, ot->stage, NONE);
  }
  rs->blocker = read;
  rs->state = read != NONE ? S_BLOCK_OPEN : S_NEXT;
}

/* Unit placement in force: CPU and OpenCL workers, placement unit. */
static int by_unit(const wsisa__sim_job *j) {
  return j->placement == WSISA_PLACEMENT_UNIT && j->opencl_workers > 0 &&
         j->opencl_workers < j->workers;
}

/* Unit placement: the kind a unit of cost `cost` goes to on rank rs (-1:
 * any, under task placement or with one kind of worker). */
static int unit_kind(const sim *s, const rank_state *rs, double cost) {
  return by_unit(s->j) ? wsisa_exec_placement_choose(
                             rs->load, cost, rs->cost_given > 0 ? rs->placed / rs->cost_given : 0)
                       : -1;
}

/* The rule's prior, as `wsisa run` gives it (wsisa_estimate_kind_seconds):
 * the mean of the first shape's level costs per kind, over its workers. */
static void unit_priors(const sim *s, rank_state *rs) {
  const wsisa__sim_costs *kind[WSISA_KINDS] = {s->c, s->c->opencl};
  const int workers[WSISA_KINDS] = {s->j->workers - s->j->opencl_workers, s->j->opencl_workers};
  for (int k = 0; k < WSISA_KINDS && by_unit(s->j); k++) {
    double sum = 0;
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) sum += kind[k]->level[(size_t)l * s->nv];
    rs->load[k].prior = sum / WSISA_SEG_LEVELS / workers[k];
    rs->load[k].workers = workers[k];
  }
}

/* A unit given to a kind starts or ends: the kind's load (the executor's
 * unit_started and unit_ended); its speed is counted as its tasks end
 * (task_done). */
static void unit_load(rank_state *rs, const unit_slot *us, int starts) {
  if (us->kind < 0) return;
  wsisa_exec_kind_load *k = &rs->load[us->kind];
  if (starts) {
    k->units_in_flight++;
    k->in_flight += us->cost;
    rs->cost_given += us->cost;
    return;
  }
  k->in_flight -= us->cost;
  k->units_in_flight--;
}

/* Begin the next assigned unit: a tile not open first waits for a place and
 * opens. */
static void next_unit(sim *s, int r) {
  rank_state *rs = &s->ranks[r];
  size_t u = NONE, slot = NONE;
  for (size_t i = 0; i < rs->nassigned && u == NONE; i++) {
    size_t cand = rs->assigned[i];
    int walked = 0;
    for (size_t k = 0; k < rs->credit + 1; k++)
      if (rs->slot[k].used && rs->slot[k].tile * s->nb + rs->slot[k].bucket == cand) walked = 1;
    if (!walked) u = cand;
  }
  if (u == NONE) {
    rs->state = rs->nassigned ? S_NEXT : S_DONE;
    return;
  }
  size_t tile = u / s->nb, bucket = u % s->nb, o = open_of(rs, tile);
  const double cost = wsisa_exec_unit_cost(s->j->buckets->trees[bucket]);
  if (o == NONE) {
    /* the pixels of an open tile must outlive every unit reading them */
    if ((o = open_place(s, rs, NONE)) == NONE) {
      rs->state = S_BLOCK_DRAIN;
      return;
    }
    /* the tile's stage goes with the unit that opens it, on its kind */
    rs->opened_for = u;
    rs->opened_cost = cost + WSISA_EXEC_TILE_STAGE_COST;
    rs->opened_kind = unit_kind(s, rs, rs->opened_cost);
    rs->placing = rs->opened_kind;
    open_tile_at(s, r, o, tile, 0);
    return;
  }
  rs->open[o].ahead = 0;
  for (size_t k = 0; k < rs->credit + 1; k++)
    if (!rs->slot[k].used) slot = k;
  if (slot == NONE) {
    s->failed = 1;
    return;
  }
  const int opener = rs->opened_for == u;
  rs->slot[slot] = (unit_slot){tile, bucket, o, 0, 0, 1, NONE,
                               opener ? rs->opened_kind : unit_kind(s, rs, cost),
                               opener ? rs->opened_cost : cost};
  rs->opened_for = NONE;
  unit_load(rs, &rs->slot[slot], 1);
  rs->placing = rs->slot[slot].kind;
  rs->walking = slot;
  rs->node = 1;
  rs->bg_checked = 0;
  rs->stage_task = rs->open[o].stage;
  s->r->units++;
  if (!s->j->share_tile_stage) {
    size_t shape = s->j->tile_shape[tile];
    rs->stage_task = submit(s, r, K_STAGE, s->c->stage[shape], OCL(s, stage, shape), NONE, slot);
    s->r->stages++;
    s->r->shape_stages[shape]++;
  }
  rs->state = S_WALK;
}

/* A job of one rank opens its next tile while its units in flight run
 * (engine/exec/units.c's open_ahead): the tile the queue turns to after the
 * rank's current one, when a place is free (a free one, or the tile opened
 * first among those with nothing in flight, not the current one); one at a
 * time, not under unit placement. 1 when it opened one. */
static int open_ahead(sim *s, int r) {
  rank_state *rs = &s->ranks[r];
  if (s->j->ranks != 1 || by_unit(s->j)) return 0;
  for (size_t o = 0; o < OPEN; o++)
    if (rs->open[o].tile != NONE && rs->open[o].ahead) return 0;
  size_t best = open_place(s, rs, rs->held);
  if (best == NONE) return 0;
  size_t next = wsisa__units_next_tile(s->todo, s->holders, s->j->ntiles, rs->held);
  if (next == NONE || open_of(rs, next) != NONE) return 0;
  open_tile_at(s, r, best, next, 1);
  return 1;
}

/* Move the submitter of rank r on as far as it can go now. */
static void advance(sim *s, int r) {
  rank_state *rs = &s->ranks[r];
  for (int guard = 0; !s->failed && guard < 1 << 30; guard++) {
    switch (rs->state) {
      case S_WALK: walk(s, r); break;
      case S_NEXT:
        if (units_walked_in_flight(rs) >= rs->credit) {
          /* wait for one to end, the next tile opened meanwhile */
          if (!open_ahead(s, r)) return;
          break;
        }
        next_unit(s, r);
        if (rs->state == S_NEXT) return;
        break;
      case S_BLOCK_K:
        if (rs->active >= s->j->active_paths) return;
        rs->state = S_WALK;
        break;
      case S_BLOCK_BG:
      case S_BLOCK_OPEN:
        if (!s->tasks[rs->blocker].done) return;
        /* a prefetched count is the open tile's, freed when it closes; a
         * read is no other task's */
        if (rs->state == S_BLOCK_OPEN) task_free(s, rs->blocker);
        rs->blocker = NONE;
        rs->state = rs->state == S_BLOCK_BG ? S_WALK : S_NEXT;
        break;
      case S_BLOCK_DRAIN:
        if (open_place(s, rs, NONE) == NONE) return;
        rs->state = S_NEXT;
        break;
      case S_DONE: return;
    }
    dispatch(s, rs);
  }
}

/* A unit finished on rank r: back to the queue's books, and refill. */
static void unit_finished(sim *s, int r, size_t slot) {
  rank_state *rs = &s->ranks[r];
  unit_slot *us = &rs->slot[slot];
  size_t u = us->tile * s->nb + us->bucket;
  s->state[u] = 2;
  for (size_t i = 0; i < rs->nassigned; i++)
    if (rs->assigned[i] == u) {
      memmove(rs->assigned + i, rs->assigned + i + 1, (rs->nassigned - i - 1) * sizeof *rs->assigned);
      rs->nassigned--;
      break;
    }
  /* every task of a finished unit has run, and none is referred to again */
  for (size_t id = us->tasks, next; id != NONE; id = next) {
    next = s->tasks[id].next_own;
    task_free(s, id);
  }
  us->tasks = NONE;
  us->used = 0;
  unit_load(rs, us, 0);
  refill(s, r);
  if (rs->state == S_DONE && rs->nassigned) rs->state = S_NEXT;
}

static void task_done(sim *s, size_t id) {
  task *t = &s->tasks[id];
  rank_state *rs = &s->ranks[t->rank];
  t->done = 1;
  rs->in_system--;
  if (t->ran >= 0) {
    rs->load[t->place].tasks++;
    rs->load[t->place].task_seconds += t->ran;
  }
  rs->finish = s->now;
  if (t->kind == K_LEVEL) {
    t->held = 1;
    if (++rs->outputs > s->r->peak_outputs) s->r->peak_outputs = rs->outputs;
    output_drop(s, rs, id);
  }
  if (t->reads != NONE) {
    s->tasks[t->reads].readers--;
    output_drop(s, rs, t->reads);
  }
  for (size_t d = t->first_dep, next; d != NONE; d = next) {
    next = s->tasks[d].next_dep;
    size_t also = s->tasks[d].also;
    s->tasks[d].also = NONE;
    wait_for(s, rs, d, also);
  }
  if (t->kind == K_BACKGROUND) rs->open[t->unit].bg_left--;
  if (t->kind == K_MEASURE) {
    rs->active--;
    unit_slot *us = &rs->slot[t->unit];
    if (--us->pending == 0 && us->walked) unit_finished(s, t->rank, t->unit);
  }
  /* a unit whose walk ended after its last leaf */
  for (size_t k = 0; k < rs->credit + 1; k++)
    if (rs->slot[k].used && rs->slot[k].walked && rs->slot[k].pending == 0)
      unit_finished(s, t->rank, k);
}

/* ---- the simulation ----------------------------------------------------------- */

static int check_job(const wsisa__sim_costs *c, const wsisa__sim_job *j, wsisa_err *e) {
  if (j->ranks < 1 || j->workers < 1)
    return wsisa_error(e, WSISA_EUSAGE, "simulation: want at least 1 rank and 1 worker");
  if (j->opencl_workers < 0 || j->opencl_workers > j->workers || (j->opencl_workers && !c->opencl))
    return wsisa_error(e, WSISA_EUSAGE, "simulation: OpenCL workers without their costs");
  if (!c->nshapes || !c->nvariants)
    return wsisa_error(e, WSISA_EINTERNAL, "simulation: no costs");
  for (size_t t = 0; t < j->ntiles; t++)
    if (j->tile_shape[t] >= c->nshapes)
      return wsisa_error(e, WSISA_EINTERNAL, "simulation: tile %zu has no shape", t);
  if (j->buckets->k != WSISA_SEG_LEVELS)
    return wsisa_error(e, WSISA_EINTERNAL, "simulation: trees of %zu levels", j->buckets->k);
  return 0;
}

int wsisa__sim_run(const wsisa__sim_costs *c, const wsisa__sim_job *j, wsisa_sim_result *r,
                  wsisa_err *e) {
  memset(r, 0, sizeof *r);
  int rc = check_job(c, j, e);
  if (rc) return rc;
  sim s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.j = j;
  s.r = r;
  s.nb = j->buckets->n_buckets;
  s.nshapes = c->nshapes;
  s.nv = c->nvariants;
  s.free_tasks = NONE;
  size_t nunits = j->ntiles * s.nb;
  r->shape_opens = calloc(s.nshapes, sizeof *r->shape_opens);
  r->shape_stages = calloc(s.nshapes, sizeof *r->shape_stages);
  r->shape_leaves = calloc(s.nshapes, sizeof *r->shape_leaves);
  r->shape_backgrounds = calloc(s.nshapes, sizeof *r->shape_backgrounds);
  r->level_tasks = calloc(s.nshapes * WSISA_SEG_LEVELS * s.nv, sizeof *r->level_tasks);
  r->level_units = calloc(s.nshapes * WSISA_SEG_LEVELS * s.nv, sizeof *r->level_units);
  r->rank_shapes = calloc((size_t)j->ranks * s.nshapes, 1);
  s.ranks = calloc((size_t)j->ranks, sizeof *s.ranks);
  s.state = calloc(nunits ? nunits : 1, 1);
  s.todo = calloc(j->ntiles ? j->ntiles : 1, sizeof *s.todo);
  s.holders = calloc(j->ntiles ? j->ntiles : 1, sizeof *s.holders);
  if (!r->shape_opens || !r->shape_stages || !r->shape_leaves || !r->shape_backgrounds ||
      !r->level_tasks || !r->level_units || !r->rank_shapes || !s.ranks || !s.state || !s.todo || !s.holders) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t u = 0; u < nunits; u++) {
    s.state[u] = j->done && j->done[u] ? 2 : 0;
    s.todo[u / s.nb] += s.state[u] == 0;
  }
  if (j->params && bgr_index(&s)) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto out;
  }
  for (int q = 0; q < j->ranks; q++) {
    rank_state *rs = &s.ranks[q];
    rs->avail = calloc((size_t)j->workers, sizeof *rs->avail);
    if (!rs->avail) {
      rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
      goto out;
    }
    for (size_t o = 0; o < OPEN; o++)
      rs->open[o].tile = rs->open[o].ref = rs->open[o].stage = NONE;
    for (size_t l = 0; l <= WSISA_SEG_LEVELS; l++) rs->path[l] = NONE;
    rs->state = S_NEXT;
    rs->held = NONE;
    rs->placing = -1;
    rs->opened_for = NONE;
    unit_priors(&s, rs);
    rs->credit = wsisa__units_credit(j->workers);
    rs->assigned = malloc(rs->credit * sizeof *rs->assigned);
    rs->slot = calloc(rs->credit + 1, sizeof *rs->slot);
    if (!rs->assigned || !rs->slot) {
      rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
      goto out;
    }
  }
  /* units go out to the workers first, rank 0 last (engine/exec/units.c) */
  for (int q = j->ranks - 1; q >= 0; q--) refill(&s, q);
  for (int q = j->ranks - 1; q >= 0 && !s.failed; q--) {
    advance(&s, q);
    dispatch(&s, &s.ranks[q]);
  }
  while (s.nheap && !s.failed) {
    event ev = heap_pop(&s);
    s.now = ev.t;
    int q = s.tasks[ev.task].rank;
    task_done(&s, ev.task);
    advance(&s, q);
    dispatch(&s, &s.ranks[q]);
    /* a refill may have handed units to ranks that had run dry */
    for (int o = 0; o < j->ranks && !s.failed; o++)
      if (o != q && s.ranks[o].state == S_NEXT && s.ranks[o].nassigned &&
          !units_walked_in_flight(&s.ranks[o])) {
        advance(&s, o);
        dispatch(&s, &s.ranks[o]);
      }
  }
  if (s.failed) {
    rc = wsisa_error(e, WSISA_ENOMEM, "simulation: out of memory");
    goto out;
  }
  for (size_t u = 0; u < nunits; u++)
    if (s.state[u] != 2) {
      rc = wsisa_error(e, WSISA_EINTERNAL, "simulation: unit %zu never ran", u);
      goto out;
    }
  for (int q = 0; q < j->ranks; q++)
    if (s.ranks[q].finish > r->makespan) r->makespan = s.ranks[q].finish;
  double capacity = r->makespan * j->ranks * j->workers;
  r->efficiency = capacity > 0 ? r->work / capacity : 1.0;
out:
  for (int q = 0; s.ranks && q < j->ranks; q++) {
    free(s.ranks[q].ready);
    free(s.ranks[q].avail);
    free(s.ranks[q].assigned);
    free(s.ranks[q].slot);
    for (size_t o = 0; o < OPEN; o++) {
      free(s.ranks[q].open[o].bg);
      wsisa__objects_seen_free(&s.ranks[q].open[o].seen);
    }
  }
  free(s.run_bgr);
  free(s.ranks);
  free(s.tasks);
  free(s.heap);
  free(s.state);
  free(s.todo);
  free(s.holders);
  if (rc) wsisa_sim_result_free(r);
  return rc;
}

void wsisa_sim_result_free(wsisa_sim_result *r) {
  free(r->shape_opens);
  free(r->shape_stages);
  free(r->shape_leaves);
  free(r->shape_backgrounds);
  free(r->level_tasks);
  free(r->level_units);
  free(r->rank_shapes);
  r->shape_opens = r->shape_stages = r->shape_leaves = r->shape_backgrounds = NULL;
  r->level_tasks = NULL;
  r->level_units = NULL;
  r->rank_shapes = NULL;
}

/* ---- deadline -> ranks ------------------------------------------------------ */

int wsisa_sim_deadline(double deadline, int max_ranks, wsisa_sim_makespan_fn makespan_of,
                       void *ctx, int *ranks, double *makespan, wsisa_err *e) {
  *ranks = 0;
  *makespan = NAN;
  if (!(deadline > 0) || max_ranks < 1)
    return wsisa_error(e, WSISA_EUSAGE, "deadline search: want a positive deadline and ranks");
  /* doubling until the deadline is met, then bisection below it */
  int lo = 0, hi = 0;
  double m = NAN, m_hi = NAN;
  for (int n = 1;; n = n > max_ranks / 2 ? max_ranks : 2 * n) {
    int rc = makespan_of(ctx, n, &m, e);
    if (rc) return rc;
    if (m <= deadline) {
      hi = n;
      m_hi = m;
      break;
    }
    lo = n;
    if (n == max_ranks) {
      *makespan = m;
      return 0;
    }
  }
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    int rc = makespan_of(ctx, mid, &m, e);
    if (rc) return rc;
    if (m <= deadline) {
      hi = mid;
      m_hi = m;
    } else {
      lo = mid;
    }
  }
  *ranks = hi;
  *makespan = m_hi;
  return 0;
}
