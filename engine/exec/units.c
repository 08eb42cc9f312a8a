/* The unit queue: every (tile x bucket) unit of a study goes, on demand, to a
 * rank of the job that runs it on its own StarPU (seed 000 §2.2, seed 003
 * §II). Rank 0 is this process and runs units through an executor session;
 * other ranks are MPI workers reached through engine/exec/dist.c. A single process
 * is the job of one rank: the same queue, no messages.
 *
 * A rank holds at most its credit of units, one per StarPU worker (two at
 * least; an MPI worker's count comes with its ready message): the next units
 * are queued while the current ones drain, so workers do not idle at unit
 * boundaries.
 *
 * Tile affinity: a tile's units go to the rank that holds it (its stage is
 * open there and its object store has the tile's earlier buckets), and a
 * rank turns to a tile no rank has touched when its own has none left. Only
 * when none is left and the rank would otherwise idle (fewer units in flight
 * than workers; every rank is filled up to its workers before any is filled
 * to its credit) does it take units of another rank's tile: the tile with
 * the most left per rank holding it, from its last bucket down, while the
 * holder goes on from the first bucket up, so each store sees a run of
 * neighbouring buckets instead of every other one. WSISA_TILE_AFFINITY=off
 * gives the queue before affinity, for comparison: each rank filled to its
 * credit in turn, a rank out of work taking the next bucket of the tile with
 * the most left. The units that run away from their tile's first rank, the
 * stages they open and the objects their stores look up are counted
 * (run.json mpi).
 *
 * SIGINT and SIGTERM stop the queue between units: no unit is handed out
 * after one arrives, the units in flight end and are reported (so journaled),
 * then the queue returns WSISA_EINTERRUPTED. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/exec/exec_internal.h"

#define NONE ((size_t)-1)

typedef struct queue {
  size_t ntiles, nb, nruns, total, ndone;
  int nranks;
  uint8_t *state;  /* per unit: 0 to do, 1 out, 2 done */
  size_t *todo;    /* per tile: units to do */
  size_t *holders; /* per tile: ranks whose current tile it is */
  int *first;      /* per tile: the rank given its first unit, -1: none yet */
  int affinity;    /* tile affinity (WSISA_TILE_AFFINITY) */
  size_t units_moved; /* units given to a rank other than their tile's first */
  struct rank_units {
    size_t *unit, n, tile;
    int back; /* it takes its tile's buckets from the last down */
    size_t workers; /* its StarPU workers */
    size_t credit; /* units in flight at most (wsisa__units_credit) */
    double since; /* the oldest unit's clock started here */
  } *ranks;
  wsisa_exec_unit_fn on_unit;
  void *ctx;
  wsisa_exec_stats stats; /* the workers' */
  wsisa_progress *prog;
  int served_rc; /* what serve_others met, for drive to report */
  wsisa_err served_err;
} queue;

/* The calling thread's CPU seconds. */
static double thread_cpu(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)) return 0;
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int alive(int r) { return r == 0 || wsisa__dist_alive(r); }

/* ---- signals ---------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

/* Only a flag (async-signal-safe); a second signal ends the process at once. */
static void on_signal(int sig) {
  if (interrupted) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  interrupted = sig;
}

void wsisa_units_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int wsisa_units_interrupted(void) { return interrupted; }

static size_t in_flight(const queue *q) {
  size_t n = 0;
  for (int r = 0; r < q->nranks; r++)
    if (alive(r)) n += q->ranks[r].n;
  return n;
}

static void stats_add(wsisa_exec_stats *to, const wsisa_exec_stats *s) {
  to->tasks += s->tasks;
  to->tile_stages += s->tile_stages;
  to->tiles_opened_ahead += s->tiles_opened_ahead;
  to->tile_stages_moved += s->tile_stages_moved;
  to->skipped += s->skipped;
  if (s->peak_paths > to->peak_paths) to->peak_paths = s->peak_paths;
  for (int l = 0; l < 2; l++) {
    to->objects_seen[l] += s->objects_seen[l];
    to->objects_reused[l] += s->objects_reused[l];
    to->objects_area[l] += s->objects_area[l];
    to->objects_area_reused[l] += s->objects_area_reused[l];
  }
  to->objects_seen_moved += s->objects_seen_moved;
  to->objects_reused_moved += s->objects_reused_moved;
  to->object_evictions += s->object_evictions;
  if (s->object_store_peak > to->object_store_peak) to->object_store_peak = s->object_store_peak;
  to->path_waits += s->path_waits;
  to->unit_waits += s->unit_waits;
  to->path_wait_s += s->path_wait_s;
  to->unit_wait_s += s->unit_wait_s;
  to->placed_by_unit |= s->placed_by_unit;
  for (int k = 0; k < WSISA_KINDS; k++) {
    to->units_on[k] += s->units_on[k];
    to->tile_stages_on[k] += s->tile_stages_on[k];
    to->tasks_on[k] += s->tasks_on[k];
  }
  to->tasks_submitted += s->tasks_submitted;
  to->tasks_ended += s->tasks_ended;
  to->tasks_astray += s->tasks_astray;
  to->tasks_fixed += s->tasks_fixed;
}

static void set_tile(queue *q, int r, size_t tile) {
  struct rank_units *ru = &q->ranks[r];
  if (ru->tile == tile) return;
  if (ru->tile != NONE) q->holders[ru->tile]--;
  ru->tile = tile;
  ru->back = 0;
  if (tile != NONE) q->holders[tile]++;
}

/* A unit feeds few paths at a time (its leaves, fewer where buckets are
 * small), and the oldest unit's last paths run alone: one unit per worker
 * keeps the workers fed while it ends, two at least so the next unit is
 * queued while the current one drains. */
size_t wsisa__units_next_tile(const size_t *todo, const size_t *holders, size_t ntiles,
                              size_t held) {
  size_t t = NONE;
  for (size_t i = 0; i < ntiles && t == NONE; i++)
    if (i != held && todo[i] && !holders[i]) t = i;
  if (t == NONE)
    for (size_t i = 0; i < ntiles; i++)
      if (i != held && todo[i] && (t == NONE || todo[i] > todo[t])) t = i;
  return t;
}

/* The tile a rank turns to under tile affinity once its own has nothing
 * left: one no rank holds, else the one whose units left would make the
 * largest share beside its holders (thieves spread over tiles). */
static size_t affine_tile(const size_t *todo, const size_t *holders, size_t ntiles) {
  size_t t = wsisa__units_next_tile(todo, holders, ntiles, NONE);
  if (t == NONE || !holders[t]) return t;
  for (size_t i = 0; i < ntiles; i++)
    if (todo[i] && todo[i] * (holders[t] + 1) > todo[t] * (holders[i] + 1)) t = i;
  return t;
}

/* The queue's choice (exec.h): the held tile first (it is loaded
 * there); else a tile no rank holds; else, without affinity, the tile with
 * the most left to do from its first bucket up; with it (`back` given), the
 * tile with the most left per holder, from its last bucket down. */
size_t wsisa__units_pick(const uint8_t *state, const size_t *todo, size_t *holders,
                         size_t ntiles, size_t nb, size_t *held, int *back) {
  size_t t = *held;
  if (t == NONE || !todo[t])
    t = back ? affine_tile(todo, holders, ntiles)
             : wsisa__units_next_tile(todo, holders, ntiles, NONE);
  if (t == NONE) return NONE;
  if (*held != t) {
    /* another rank holds it: its holder goes on from the first bucket up */
    if (back) *back = holders[t] > 0;
    if (*held != NONE) holders[*held]--;
    *held = t;
    holders[t]++;
  }
  const int down = back && *back;
  for (size_t i = 0; i < nb; i++) {
    size_t b = down ? nb - 1 - i : i;
    if (state[t * nb + b] == 0) return t * nb + b;
  }
  return NONE;
}

/* Under tile affinity a rank takes units of another rank's tile only when it
 * would otherwise idle: with fewer units in flight than it has workers. Its
 * own tile's units, and a tile no rank holds, fill its whole credit. */
static int may_take(const queue *q, int r) {
  const struct rank_units *ru = &q->ranks[r];
  if (ru->n < ru->workers) return 1;
  if (ru->tile != NONE && q->todo[ru->tile]) return !ru->back;
  for (size_t t = 0; t < q->ntiles; t++)
    if (q->todo[t] && !q->holders[t]) return 1;
  return 0;
}

static size_t pick(queue *q, int r) {
  struct rank_units *ru = &q->ranks[r];
  if (q->affinity && !may_take(q, r)) return NONE;
  return wsisa__units_pick(q->state, q->todo, q->holders, q->ntiles, q->nb, &ru->tile,
                           q->affinity ? &ru->back : NULL);
}

/* Unit u goes to rank r: 1 when it runs away from its tile's first rank. */
static int hand_out(queue *q, int r, size_t u) {
  struct rank_units *ru = &q->ranks[r];
  const size_t t = u / q->nb;
  q->state[u] = 1;
  q->todo[t]--;
  if (!ru->n) ru->since = wsisa_now();
  ru->unit[ru->n++] = u;
  if (q->first[t] < 0) q->first[t] = r;
  if (q->first[t] == r) return 0;
  q->units_moved++;
  return 1;
}

/* Unit u came back from rank r; 0 if r did not hold it (a unit given up on
 * and handed to another rank is taken once only). */
static int take_back(queue *q, int r, size_t u) {
  struct rank_units *ru = &q->ranks[r];
  for (size_t i = 0; i < ru->n; i++)
    if (ru->unit[i] == u) {
      memmove(ru->unit + i, ru->unit + i + 1, (ru->n - i - 1) * sizeof *ru->unit);
      ru->n--;
      ru->since = wsisa_now();
      return 1;
    }
  return 0;
}

/* A worker is lost: its units in flight go back to the queue, and one line
 * says why and how many. */
static void give_up(queue *q, int r, const char *why) {
  struct rank_units *ru = &q->ranks[r];
  for (size_t i = 0; i < ru->n; i++) {
    q->state[ru->unit[i]] = 0;
    q->todo[ru->unit[i] / q->nb]++;
  }
  char line[256];
  if (ru->n)
    snprintf(line, sizeof line, "%s; its %zu unit%s in flight run elsewhere", why, ru->n,
             ru->n == 1 ? "" : "s");
  else
    snprintf(line, sizeof line, "%s", why);
  ru->n = 0;
  set_tile(q, r, NONE);
  wsisa__dist_lose(r, line);
}

static int unit_done(queue *q, size_t tile, size_t bucket, const size_t *runs,
                     const wsisa_counts *counts, size_t n, wsisa_err *e) {
  int rc = q->on_unit ? q->on_unit(q->ctx, tile, bucket, runs, counts, n, e) : 0;
  q->state[tile * q->nb + bucket] = 2;
  q->ndone++;
  wsisa_progress_advance(q->prog, 1);
  return rc;
}

/* This process's session reports here. */
static int local_done(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                      const wsisa_counts *counts, size_t n, wsisa_err *e) {
  queue *q = ctx;
  take_back(q, 0, tile * q->nb + bucket);
  return unit_done(q, tile, bucket, runs, counts, n, e);
}

/* Fill every live rank from `lowest` up up to its credit; workers first,
 * as this process's own submissions may block on RMSR's bound. With tile
 * affinity, every rank first up to its workers, then to its credit: a rank
 * that would idle is served before another queues a unit ahead. 1 when a
 * unit went out. */
static int hand_out_from(queue *q, int lowest, wsisa_exec_session *self, int *rc,
                         wsisa_err *e) {
  int busy = 0;
  for (int pass = q->affinity ? 0 : 1; pass < 2; pass++)
    for (int r = q->nranks - 1; r >= lowest && !*rc; r--) {
      const size_t fill = pass ? q->ranks[r].credit : q->ranks[r].workers;
      while (alive(r) && q->ranks[r].n < fill && !*rc) {
        size_t u = pick(q, r);
        if (u == NONE) break;
        const int moved = hand_out(q, r, u);
        busy = 1;
        if (r == 0) {
          if (moved) wsisa_exec_session_moved(self, u / q->nb);
          *rc = wsisa_exec_session_submit(self, u / q->nb, u % q->nb, local_done, q, e);
        } else if (wsisa__dist_send_unit(r, u / q->nb, u % q->nb, moved)) {
          give_up(q, r, "cannot be sent a unit");
        }
      }
    }
  return busy;
}

/* Every worker message waiting; 1 when there was one. */
static int receive_all(queue *q, int *rc, wsisa_err *e) {
  int busy = 0, got;
  wsisa__dist_result res;
  while (!*rc && (got = wsisa__dist_receive(q->ntiles, q->nb, q->nruns, &res, e)) != 0) {
    busy = 1;
    if (got < 0) {
      *rc = got;
      break;
    }
    if (got == 1 && take_back(q, res.rank, res.tile * q->nb + res.bucket)) {
      stats_add(&q->stats, &res.stats);
      *rc = unit_done(q, res.tile, res.bucket, res.runs, res.counts, res.n, e);
    }
    if (got == 1) wsisa__dist_result_free(&res);
  }
  return busy;
}

/* This process's own submission waits on RMSR's bound (a path to end): the
 * other ranks' results come in and their next units go out meanwhile, so they
 * do not wait for it. Not this rank's: its session is the one waiting. */
static void serve_others(void *ctx) {
  queue *q = ctx;
  if (q->served_rc) return;
  receive_all(q, &q->served_rc, &q->served_err);
  if (!q->served_rc && !wsisa_units_interrupted())
    hand_out_from(q, 1, NULL, &q->served_rc, &q->served_err);
}

/* A worker silent past its bound (no heartbeat: its process is gone) is
 * given up at once; one that beats but holds a unit past the unit timeout
 * (hung) too. */
static void check_timeouts(queue *q) {
  double t = wsisa_now(), timeout = wsisa__dist_timeout();
  for (int r = 1; r < q->nranks; r++) {
    if (!wsisa__dist_alive(r)) continue;
    char why[128];
    double bound, silent = wsisa__dist_silent(r, &bound);
    if (bound > 0 && silent > bound) {
      snprintf(why, sizeof why, "sent nothing for %.0f s, not even its heartbeat (its process "
               "is gone)", silent);
      give_up(q, r, why);
    } else if (q->ranks[r].n && t - q->ranks[r].since > timeout) {
      snprintf(why, sizeof why, "sent no result for %.0f s (hung)", timeout);
      give_up(q, r, why);
    }
  }
}

/* A job of one rank opens its next tile while its current tile's units run:
 * the tile the queue will hand it next (its read, stage and reference then
 * overlap the units in flight instead of holding the next unit back). With
 * other ranks the queue's next tile may go to one of them: not done. */
static int open_ahead(queue *q, wsisa_exec_session *self, wsisa_err *e) {
  if (q->nranks != 1) return 0;
  size_t held = q->ranks[0].tile;
  if (!wsisa_exec_session_can_open_ahead(self, held)) return 0;
  size_t next = wsisa__units_next_tile(q->todo, q->holders, q->ntiles, held);
  return next == NONE ? 0 : wsisa_exec_session_open_ahead(self, next, held, e);
}

static int drive(queue *q, wsisa_exec_session *self, wsisa_err *e) {
  int rc = 0, stopping = 0;
  double idle = WSISA_IDLE_MIN;
  while (q->ndone < q->total && !rc) {
    /* interrupted: hand out nothing more, let the units in flight end */
    if (wsisa_units_interrupted()) stopping = 1;
    if (stopping && in_flight(q) == 0) break;
    size_t before = q->ndone;
    int busy = stopping ? 0 : hand_out_from(q, 0, self, &rc, e);
    if (!rc && q->served_rc) {
      rc = q->served_rc;
      if (e) *e = q->served_err;
      break;
    }
    if (q->nranks == 1) {
      /* alone: wait for a unit to end when full (hand_out_from filled this
       * rank unless no unit is left), else for every unit in flight */
      size_t credit = q->ranks[0].credit;
      size_t keep = !stopping && q->ranks[0].n >= credit ? credit - 1 : 0;
      if (!rc && !stopping) rc = open_ahead(q, self, e);
      if (!rc) rc = wsisa_exec_session_poll(self, keep, 1, local_done, q, NULL, e);
      continue;
    }
    busy |= receive_all(q, &rc, e);
    if (!rc) rc = wsisa_exec_session_poll(self, 0, 0, local_done, q, NULL, e);
    check_timeouts(q);
    if (busy || q->ndone != before) {
      idle = WSISA_IDLE_MIN;
    } else {
      wsisa_exec_session_idle(self, idle);
      idle = idle * 2 < WSISA_IDLE_MAX ? idle * 2 : WSISA_IDLE_MAX;
    }
  }
  if (!rc) rc = wsisa_exec_session_poll(self, 0, 1, local_done, q, NULL, e);
  if (!rc && stopping && q->ndone < q->total) rc = WSISA_EINTERRUPTED;
  return rc;
}

int wsisa_units_run(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                    const wsisa_reuse_buckets *buckets, const uint8_t *done,
                    const wsisa_exec_opts *opts, size_t paths_asked, uint64_t memory_limit,
                    wsisa_exec_unit_fn on_unit, void *ctx, wsisa_exec_stats *stats,
                    wsisa_err *e) {
  queue q;
  memset(&q, 0, sizeof q);
  q.ntiles = ntiles;
  q.nb = buckets->n_buckets;
  q.total = ntiles * q.nb;
  q.nranks = wsisa_dist_size();
  for (size_t i = 0; i < buckets->start[q.nb]; i++)
    if (buckets->instances[i] + 1 > q.nruns) q.nruns = buckets->instances[i] + 1;
  q.on_unit = on_unit;
  q.ctx = ctx;
  q.state = calloc(q.total ? q.total : 1, 1);
  q.todo = calloc(ntiles ? ntiles : 1, sizeof *q.todo);
  q.holders = calloc(ntiles ? ntiles : 1, sizeof *q.holders);
  q.first = malloc((ntiles ? ntiles : 1) * sizeof *q.first);
  q.ranks = calloc((size_t)q.nranks, sizeof *q.ranks);
  wsisa_exec_session *self = NULL;
  int rc = 0;
  double wall = 0, cpu = 0; /* the submitting thread's, while units run */
  if (!q.state || !q.todo || !q.holders || !q.first || !q.ranks) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t t = 0; t < ntiles; t++) q.first[t] = -1;
  wsisa_env env;
  wsisa_env_read(&env);
  q.affinity = env.tile_affinity != 0;
  for (int r = 0; r < q.nranks && !rc; r++) {
    int workers = r ? wsisa__dist_rank_workers(r)
                    : wsisa_runtime_ncpu() + wsisa_runtime_nopencl();
    q.ranks[r].tile = NONE;
    q.ranks[r].workers = workers > 0 ? (size_t)workers : 1;
    q.ranks[r].credit = wsisa__units_credit(workers);
    if (!(q.ranks[r].unit = malloc(q.ranks[r].credit * sizeof *q.ranks[r].unit)))
      rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  if (rc) goto out;
  for (size_t u = 0; u < q.total; u++) {
    q.state[u] = done && done[u] ? 2 : 0;
    q.ndone += q.state[u] == 2;
    q.todo[u / q.nb] += q.state[u] == 0;
  }
  if (q.nranks > 1 && (rc = wsisa__dist_send_job(tiles, ntiles, params, buckets, opts,
                                                 paths_asked, memory_limit, e)))
    goto out;
  if ((rc = wsisa_exec_session_new(tiles, ntiles, params, buckets, opts, &self, e))) goto out;
  if (q.nranks > 1) wsisa_exec_session_on_wait(self, serve_others, &q, 0.001);
  q.prog = wsisa_progress_start("units", q.total);
  wsisa_progress_resume(q.prog, q.ndone);
  wall = wsisa_now(), cpu = thread_cpu();
  rc = drive(&q, self, e);
  wall = wsisa_now() - wall, cpu = thread_cpu() - cpu;
  wsisa_progress_finish(q.prog);
out:
  if (self) {
    /* the queue is done: its units are waited for, nothing more served */
    wsisa_exec_session_on_wait(self, NULL, NULL, 0);
    /* tasks no unit waited for (a prefetched count never looked at) end
     * first: every task submitted is counted where it ran */
    starpu_task_wait_for_all();
    wsisa_exec_stats st;
    wsisa_exec_session_stats(self, &st);
    stats_add(&q.stats, &st);
    q.stats.submitter_cpu_s = cpu;
    wsisa_exec_session_free(self);
    /* what this rank's submitting thread cost and what held it back: at
     * many workers a busy or waiting submitter leaves them idle */
    wsisa_log(WSISA_LOG_INFO, "run",
              "submitting thread: %.2f s CPU in %.2f s for %llu tasks (%.0f us a task); "
              "waited %.2f s for a free path (%llu times), %.2f s for a unit to end (%llu times)",
              cpu, wall, (unsigned long long)st.tasks,
              st.tasks ? 1e6 * cpu / (double)st.tasks : 0.0, st.path_wait_s,
              (unsigned long long)st.path_waits, st.unit_wait_s,
              (unsigned long long)st.unit_waits);
  }
  if (q.nranks > 1) wsisa__dist_stop_workers();
  q.stats.units_moved = q.units_moved;
  q.stats.tile_affinity = q.affinity;
  if (stats) *stats = q.stats;
  free(q.state);
  free(q.todo);
  free(q.holders);
  free(q.first);
  for (int r = 0; q.ranks && r < q.nranks; r++) free(q.ranks[r].unit);
  free(q.ranks);
  return rc;
}
