/* MPI, the unit queue's transport: rank 0 (engine/exec/units.c) hands (tile x
 * bucket) units out on demand to ranks that each drive their own StarPU (seed
 * 000 §2.2, seed 003 §II); this file carries the job, the units and the
 * results between ranks, and is a worker rank's whole life.
 *
 * Plain MPI messages beside each rank's StarPU, not StarPU's MPI layer
 * (libstarpumpi): a unit is independent of every other and coarse (a tile and a
 * bucket's whole merged task tree), so the only traffic is a unit id out and a
 * few counts back. starpu_mpi distributes single tasks along data dependencies
 * with owner-computes placement, wants every rank to submit the same task graph,
 * keeps a core per rank busy progressing communications, and has no way to go
 * on when a rank dies. Here assignment stays demand-driven (a slow rank simply
 * asks less often) and failure is the manager's business: the units a dead or
 * silent worker held run elsewhere, and the manager's journal makes the study
 * resumable as on one machine.
 *
 * Order of initialisation: MPI_Init_thread, then StarPU. Only a rank's main
 * thread calls MPI (StarPU's callbacks never do), so MPI_THREAD_FUNNELED is all
 * that is needed; StarPU without starpu_mpi asks nothing of MPI and reserves no
 * communication core, so STARPU_NCPU is each rank's computing workers. Ranks on
 * one host would bind their workers to the same first cores, so unless the user
 * chose a binding (STARPU_WORKERS_CPUID, _GETBIND, _NOBIND) workers stay
 * unbound inside the cpuset mpirun gives the rank.
 *
 * Messages are bytes. Results carry wsisa_counts and wsisa_exec_stats as raw
 * structs whose sizes are checked, so every rank runs the same build, and
 * with feature metrics the feature rows of the unit's runs and of its tile's
 * reference after them, then (`segment --all`) the spans of their nuclei. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codelets/codelets.h"
#include "engine/exec/exec_internal.h"

#ifdef WSISA_WITH_MPI
#include <mpi.h>
#endif

static struct {
  int active, rank, size, lost, stopped;
  int manager_gone; /* a worker's view: the manager left without MPI_Finalize */
  double timeout;
  unsigned char *alive; /* per rank; the manager's view */
  int *workers;         /* per rank, the StarPU workers its ready message gave */
  /* per rank, the manager's view since the job went out: when a message of
   * it last came in, and the longest interval between two of them */
  double *heard, *gap;
  double started; /* when MPI came up here */
} world = {0, 0, 1, 0, 0, 0, 600.0, NULL, NULL, NULL, NULL, 0};

int wsisa_dist_rank(void) { return world.rank; }
int wsisa_dist_size(void) { return world.size; }
int wsisa_dist_lost(void) { return world.lost; }
int wsisa__dist_rank_workers(int rank) {
  return world.workers && rank >= 0 && rank < world.size ? world.workers[rank] : 0;
}

#ifdef WSISA_WITH_MPI

enum {
  TAG_SETUP = 1, TAG_READY, TAG_JOB, TAG_UNIT, TAG_STOP, TAG_RESULT, TAG_ERROR, TAG_BYE,
  TAG_ALIVE /* a worker's heartbeat */
};

static void nap(void) { nanosleep(&(struct timespec){0, 500000}, NULL); }

/* ---- messages -------------------------------------------------------------- */

/* A message from `src` (MPI_ANY_SOURCE allowed) if one is waiting: 1 and its
 * bytes in `out`, else 0; -1 on an MPI error. */
static int msg_take(int src, int *tag, int *from, wsisa__buf *out) {
  int flag = 0, count = 0;
  MPI_Status st;
  if (MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) return -1;
  if (!flag) return 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  memset(out, 0, sizeof *out);
  out->p = malloc(count > 0 ? (size_t)count : 1);
  if (!out->p) return -1;
  out->n = out->cap = (size_t)count;
  if (MPI_Recv(out->p, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    wsisa__buf_free(out);
    return -1;
  }
  *tag = st.MPI_TAG;
  if (from) *from = st.MPI_SOURCE;
  return 1;
}

/* Wait for a message from `src` until `deadline` (< 0: for ever). */
static int msg_wait(int src, int *tag, int *from, wsisa__buf *out, double deadline) {
  for (;;) {
    int got = msg_take(src, tag, from, out);
    if (got) return got;
    if (deadline >= 0 && wsisa_now() > deadline) return 0;
    nap();
  }
}

/* Send without blocking past `deadline`: a rank that died may never take a
 * message too large to be sent eagerly. 0 when sent. */
static int msg_send(int dest, int tag, const void *p, size_t n, double deadline) {
  MPI_Request rq;
  if (n > (size_t)0x7fffffff ||
      MPI_Isend(p, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
    return -1;
  for (;;) {
    int flag = 0;
    if (MPI_Test(&rq, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    if (flag) return 0;
    if (wsisa_now() > deadline) {
      MPI_Cancel(&rq);
      MPI_Request_free(&rq);
      return -1;
    }
    nap();
  }
}

/* The silence after which rank r is taken for dead: never quicker than
 * WSISA_DIST_SILENCE, nor than three of the longest silences the rank has
 * had and come back from. */
static double silence_bound(int r) {
  double b = 3 * world.gap[r];
  return b > WSISA_DIST_SILENCE ? b : WSISA_DIST_SILENCE;
}

/* The heartbeats waiting from any rank, taken: when each rank was last
 * heard (the gaps between them count from the job's arrival, as in
 * wsisa__dist_receive). Other messages stay queued. */
static void take_heartbeats(void) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_ALIVE, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
      return;
    char none;
    if (MPI_Recv(&none, 0, MPI_BYTE, st.MPI_SOURCE, TAG_ALIVE, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return;
    if (st.MPI_SOURCE > 0 && st.MPI_SOURCE < world.size) world.heard[st.MPI_SOURCE] = wsisa_now();
  }
}

static void lose_rank(int r, const char *why) {
  if (!world.alive[r]) return;
  world.alive[r] = 0;
  world.lost++;
  wsisa_log(WSISA_LOG_WARN, "mpi", "rank %d %s: it gets no more work", r, why);
}

/* ---- worker ------------------------------------------------------------------ */

typedef struct worker_ctx {
  wsisa_exec_session *session;
  size_t sent; /* results sent home */
  double beat; /* when the last heartbeat went */
} worker_ctx;

/* The heartbeat, when one is due: from the rank's main thread, between
 * submissions and while it waits for a path or a unit, so it goes on through
 * units of any length and stops only when the process does (or its main
 * thread hangs). */
static void heartbeat(void *ctx) {
  worker_ctx *w = ctx;
  double t = wsisa_now();
  if (t - w->beat < WSISA_DIST_HEARTBEAT) return;
  w->beat = t;
  msg_send(0, TAG_ALIVE, NULL, 0, t + world.timeout);
}

static void send_error(int code, const char *msg) {
  wsisa__buf b = {0};
  int32_t c = code;
  wsisa__buf_put(&b, &c, sizeof c);
  wsisa__buf_put(&b, msg, strlen(msg) + 1);
  if (!b.bad) msg_send(0, TAG_ERROR, b.p, b.n, wsisa_now() + world.timeout);
  wsisa__buf_free(&b);
}

/* Feature rows per run in a result, after the counts: the reference's rows of
 * the tile (every unit carries them: the manager keeps the first it gets, as
 * on one process), then each run's. */
static size_t feature_stride(void) { return WSISA_NF_ROW(wsisa_workflow_channel_count()); }

static void put_features(wsisa__buf *b, const wsisa_counts *counts, size_t n) {
  uint64_t ref_rows = n && counts[0].ref_features ? counts[0].ref_nuclei : 0;
  wsisa__buf_put_u64(b, ref_rows);
  wsisa__buf_put_u64(b, feature_stride());
  for (size_t i = 0; i < n; i++) wsisa__buf_put_u64(b, counts[i].features ? counts[i].nuclei : 0);
  wsisa__buf_put(b, n ? counts[0].ref_features : NULL, ref_rows * feature_stride() * sizeof(double));
  for (size_t i = 0; i < n; i++)
    if (counts[i].features)
      wsisa__buf_put(b, counts[i].features,
          counts[i].nuclei * (size_t)counts[i].feature_cols * sizeof(double));
}

/* The runs' nuclei as spans (wsisa_exec_opts.nuclei_out; none otherwise),
 * after the feature rows: every run's count of spans, then the spans. */
static void put_spans(wsisa__buf *b, const wsisa_counts *counts, size_t n) {
  for (size_t i = 0; i < n; i++) wsisa__buf_put_u64(b, counts[i].spans ? counts[i].nspans : 0);
  for (size_t i = 0; i < n; i++)
    if (counts[i].spans)
      wsisa__buf_put(b, counts[i].spans, counts[i].nspans * WSISA_SPAN_FIELDS * sizeof(uint32_t));
}

/* A finished unit goes home: tile, bucket, the runs and their counts, what
 * executing it cost, the feature rows and the spans. */
static int send_result(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                       const wsisa_counts *counts, size_t n, wsisa_err *e) {
  worker_ctx *w = ctx;
  wsisa_exec_stats st;
  wsisa_exec_session_stats(w->session, &st);
  wsisa__buf b = {0};
  wsisa__buf_put_u64(&b, tile);
  wsisa__buf_put_u64(&b, bucket);
  wsisa__buf_put_u64(&b, n);
  wsisa__buf_put_u64(&b, sizeof *counts);
  wsisa__buf_put_u64(&b, sizeof st);
  wsisa__buf_put(&b, &st, sizeof st);
  for (size_t i = 0; i < n; i++) wsisa__buf_put_u64(&b, runs[i]);
  wsisa__buf_put(&b, counts, n * sizeof *counts);
  put_features(&b, counts, n);
  put_spans(&b, counts, n);
  int rc = b.bad ? wsisa_error(e, WSISA_ENOMEM, "out of memory")
           : b.n > 0x7fffffff ? wsisa_error(e, WSISA_ERUNTIME, "a result of %zu bytes is too "
                                            "large for one message", b.n)
           /* not MPI_Send: a result too large to go eagerly waits for the
            * manager to receive it, and Open MPI's blocking send polls for
            * that on this rank's core the whole time */
           : msg_send(0, TAG_RESULT, b.p, b.n, wsisa_now() + 2 * world.timeout + 60)
               ? wsisa_error(e, WSISA_ERUNTIME, "cannot send a result to the manager")
               : 0;
  wsisa__buf_free(&b);
  w->sent++;
  return rc;
}

/* The stop message says whether ranks were lost: then the manager leaves
 * without MPI_Finalize, and so must a worker, as it would wait for them. */
static void on_stop(const wsisa__buf *m) {
  if (m->n && m->p[0]) world.manager_gone = 1;
}

/* Answer the manager's stop: it calls MPI_Finalize, which waits for every
 * rank, only when every rank it has not given up on has answered. */
static void say_bye(void) { msg_send(0, TAG_BYE, NULL, 0, wsisa_now() + world.timeout); }

/* After an error the worker only waits to be told to stop. */
static void wait_stop(void) {
  wsisa__buf m;
  int tag;
  while (msg_wait(0, &tag, NULL, &m, -1) > 0) {
    if (tag == TAG_STOP) on_stop(&m);
    wsisa__buf_free(&m);
    if (tag == TAG_STOP) {
      say_bye();
      return;
    }
  }
}

static int serve(wsisa__dist_job *j, wsisa_err *e) {
  worker_ctx w = {NULL, 0, 0};
  int rc = wsisa_exec_session_new(j->tiles, j->ntiles, j->params, j->buckets, &j->opts,
                                  &w.session, e);
  if (!rc) wsisa_exec_session_on_wait(w.session, heartbeat, &w, 0.1 * WSISA_DIST_HEARTBEAT);
  /* idle this long with nothing to do and the manager is taken for gone */
  double silence = 2 * j->timeout + 60, last = wsisa_now();
  double idle = WSISA_IDLE_MIN;
  while (!rc) {
    wsisa__buf m;
    heartbeat(&w);
    int tag, got = msg_take(0, &tag, NULL, &m);
    if (got < 0) {
      rc = wsisa_error(e, WSISA_ERUNTIME, "MPI failed receiving from the manager");
      break;
    }
    if (got) {
      last = wsisa_now();
      idle = WSISA_IDLE_MIN;
      if (tag == TAG_STOP) on_stop(&m);
      uint64_t tile = wsisa__buf_get_u64(&m), bucket = wsisa__buf_get_u64(&m), moved = wsisa__buf_get_u64(&m);
      int bad = m.bad;
      wsisa__buf_free(&m);
      if (tag == TAG_STOP) {
        say_bye();
        break;
      }
      if (tag != TAG_UNIT || bad) continue;
      if (moved) wsisa_exec_session_moved(w.session, tile);
      rc = wsisa_exec_session_submit(w.session, tile, bucket, send_result, &w, e);
      continue;
    }
    size_t in_flight = 0, sent = w.sent;
    rc = wsisa_exec_session_poll(w.session, 0, 0, send_result, &w, &in_flight, e);
    if (!rc && in_flight == 0 && wsisa_now() - last > silence) {
      wsisa_exec_session_free(w.session);
      return wsisa_error(e, WSISA_ERUNTIME, "no word from the manager for %.0f s: giving up",
                         silence);
    }
    if (w.sent != sent) {
      idle = WSISA_IDLE_MIN; /* a result went home: the next unit may be on its way */
      continue;
    }
    wsisa_exec_session_idle(w.session, idle);
    idle = idle * 2 < WSISA_IDLE_MAX ? idle * 2 : WSISA_IDLE_MAX;
  }
  /* stopped: what is left in flight is waited for without a heartbeat */
  if (w.session) wsisa_exec_session_on_wait(w.session, NULL, NULL, 0);
  if (rc) {
    send_error(rc, e && e->msg[0] ? e->msg : wsisa_strerror(rc));
    wait_stop();
    rc = 0; /* the manager reports it; a failing rank would take the job down first */
  }
  wsisa_exec_session_free(w.session);
  return rc;
}

int wsisa_dist_worker(wsisa_err *e) {
  wsisa__buf m;
  int tag;
  if (msg_wait(0, &tag, NULL, &m, -1) <= 0)
    return wsisa_error(e, WSISA_ERUNTIME, "MPI failed waiting for the manager");
  if (tag != TAG_SETUP) {
    if (tag == TAG_STOP) on_stop(&m);
    wsisa__buf_free(&m);
    if (tag == TAG_STOP) say_bye();
    return 0; /* the manager stopped before any work */
  }
  char sched[64] = "";
  snprintf(sched, sizeof sched, "%.*s", (int)(m.n < 63 ? m.n : 63), (const char *)m.p);
  wsisa__buf_free(&m);
  wsisa_runtime_opts ro = {.sched = sched[0] ? sched : NULL, .ncpu = -1, .nopencl = -1};
  int rc = wsisa_codelets_start(&ro, e);
  if (rc) {
    send_error(rc, e && e->msg[0] ? e->msg : wsisa_strerror(rc));
    wait_stop();
    return 0;
  }
  int32_t workers = wsisa_runtime_ncpu() + wsisa_runtime_nopencl();
  if (msg_send(0, TAG_READY, &workers, sizeof workers, wsisa_now() + world.timeout)) {
    wsisa_runtime_shutdown();
    return wsisa_error(e, WSISA_ERUNTIME, "cannot reach the manager");
  }
  /* the heartbeat from here: a rank that dies before the job reaches it is
   * noticed by its silence, not by a send that never completes */
  worker_ctx beat = {NULL, 0, 0};
  int got;
  while ((got = msg_take(0, &tag, NULL, &m)) == 0) {
    heartbeat(&beat);
    nap();
  }
  if (got < 0) {
    wsisa_runtime_shutdown();
    return wsisa_error(e, WSISA_ERUNTIME, "MPI failed waiting for the manager");
  }
  if (tag == TAG_STOP) {
    on_stop(&m);
    say_bye();
  }
  if (tag == TAG_JOB) {
    wsisa__dist_job j;
    wsisa_err je = WSISA_ERR_INIT;
    rc = wsisa__dist_job_decode(&m, &j, &je);
    if (rc) {
      send_error(rc, je.msg);
      wait_stop();
      rc = 0;
    } else {
      rc = serve(&j, e);
    }
    wsisa__dist_job_free(&j);
  }
  wsisa__buf_free(&m);
  wsisa_runtime_shutdown();
  if (rc) world.manager_gone = 1; /* MPI_Finalize would wait for it */
  return rc;
}

/* ---- manager: the transport the unit queue calls ----------------------------- */

/* The feature rows after the counts, into one array *rows that the counts
 * point into; the unit callback copies what it keeps, as it does the
 * executor's rows, and the caller frees the array after it. */
static int get_features(wsisa__buf *b, wsisa_counts *counts, size_t n, double **rows) {
  const size_t stride = feature_stride();
  /* no more rows than the message could hold, so no sum below overflows */
  const uint64_t most = b->n / (stride * sizeof(double));
  uint64_t ref_rows = wsisa__buf_get_u64(b), ref_cols = wsisa__buf_get_u64(b), total = 0;
  if (b->bad || ref_rows > most ||
      (ref_rows && (ref_cols != stride || !n || ref_rows != counts[0].ref_nuclei)))
    return -1;
  total = ref_rows * stride;
  uint64_t *nrows = malloc((n ? n : 1) * sizeof *nrows);
  if (!nrows) return -1;
  for (size_t i = 0; i < n && !b->bad; i++) {
    nrows[i] = wsisa__buf_get_u64(b);
    if (nrows[i] > most ||
        (nrows[i] && (nrows[i] != counts[i].nuclei || (size_t)counts[i].feature_cols != stride)))
      b->bad = 1;
    total += nrows[i] * stride;
  }
  if (b->bad || total > (b->n - b->at) / sizeof(double) ||
      !(*rows = malloc((total ? total : 1) * sizeof **rows))) {
    free(nrows);
    return -1;
  }
  wsisa__buf_get(b, *rows, total * sizeof **rows);
  const double *at = *rows + ref_rows * stride;
  for (size_t i = 0; i < n; i++) {
    counts[i].ref_features = ref_rows ? *rows : NULL;
    counts[i].features = nrows[i] ? at : NULL;
    at += nrows[i] * stride;
  }
  free(nrows);
  return b->bad ? -1 : 0;
}

/* The spans after the rows, into one array *spans the counts point into. */
static int get_spans(wsisa__buf *b, wsisa_counts *counts, size_t n, uint32_t **spans) {
  const size_t span_bytes = WSISA_SPAN_FIELDS * sizeof(uint32_t);
  uint64_t total = 0;
  for (size_t i = 0; i < n && !b->bad; i++) {
    counts[i].nspans = wsisa__buf_get_u64(b);
    if (counts[i].nspans > b->n / span_bytes) b->bad = 1;
    total += counts[i].nspans;
  }
  if (b->bad || total > (b->n - b->at) / span_bytes ||
      !(*spans = malloc((total ? total : 1) * span_bytes)))
    return -1;
  wsisa__buf_get(b, *spans, total * span_bytes);
  const uint32_t *at = *spans;
  for (size_t i = 0; i < n; i++) {
    counts[i].spans = counts[i].nspans ? at : NULL;
    at += counts[i].nspans * WSISA_SPAN_FIELDS;
  }
  return b->bad ? -1 : 0;
}

static int decode_result(int r, wsisa__buf *b, size_t ntiles, size_t nb, size_t nruns,
                         wsisa__dist_result *res, wsisa_err *e) {
  memset(res, 0, sizeof *res);
  res->rank = r;
  uint64_t tile = wsisa__buf_get_u64(b), bucket = wsisa__buf_get_u64(b), n = wsisa__buf_get_u64(b), csize = wsisa__buf_get_u64(b),
           ssize = wsisa__buf_get_u64(b);
  if (b->bad || csize != sizeof(wsisa_counts) || ssize != sizeof(wsisa_exec_stats) ||
      tile >= ntiles || bucket >= nb || n > nruns)
    return wsisa_error(e, WSISA_EFORMAT,
                       "rank %d sent a malformed result (is every rank the same wsisa build?)",
                       r);
  res->tile = tile, res->bucket = bucket, res->n = n;
  wsisa__buf_get(b, &res->stats, sizeof res->stats);
  res->runs = malloc((n ? n : 1) * sizeof *res->runs);
  res->counts = malloc((n ? n : 1) * sizeof *res->counts);
  if (!res->runs || !res->counts) {
    wsisa__dist_result_free(res);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++)
    if ((res->runs[i] = wsisa__buf_get_u64(b)) >= nruns) b->bad = 1;
  wsisa__buf_get(b, res->counts, n * sizeof *res->counts);
  /* the pointers in the structs were the worker's: the rows that came with
   * them take their place */
  if (!b->bad && get_features(b, res->counts, n, &res->rows)) b->bad = 1;
  if (!b->bad && get_spans(b, res->counts, n, &res->spans)) b->bad = 1;
  if (b->bad) {
    wsisa__dist_result_free(res);
    return wsisa_error(e, WSISA_EFORMAT, "rank %d sent a malformed result", r);
  }
  return 0;
}

void wsisa__dist_result_free(wsisa__dist_result *res) {
  free(res->rows);
  free(res->spans);
  free(res->runs);
  free(res->counts);
  memset(res, 0, sizeof *res);
}

/* An error a worker reports. */
static int on_error(int from, wsisa__buf *b, wsisa_err *e) {
  int32_t code = 0;
  wsisa__buf_get(b, &code, sizeof code);
  const char *msg = b->at < b->n ? (const char *)b->p + b->at : "";
  if (b->n) b->p[b->n - 1] = '\0';
  return wsisa_error(e, code < 0 ? code : WSISA_ERUNTIME, "rank %d: %s", from, msg);
}

int wsisa__dist_receive(size_t ntiles, size_t nbuckets, size_t nruns, wsisa__dist_result *res,
                        wsisa_err *e) {
  wsisa__buf b;
  int tag, from, got = msg_take(MPI_ANY_SOURCE, &tag, &from, &b);
  if (got <= 0)
    return got < 0 ? wsisa_error(e, WSISA_ERUNTIME, "MPI failed receiving results") : 0;
  int rc = 2; /* given up on, a heartbeat, or nothing to report */
  if (from > 0 && from < world.size) {
    /* heard from: a rank given up on too, which shows it lives on */
    const double t = wsisa_now();
    if (world.alive[from] && t - world.heard[from] > world.gap[from])
      world.gap[from] = t - world.heard[from];
    world.heard[from] = t;
  }
  if (from > 0 && from < world.size && world.alive[from]) {
    if (tag == TAG_RESULT) rc = decode_result(from, &b, ntiles, nbuckets, nruns, res, e) ? -1 : 1;
    else if (tag == TAG_ERROR) rc = on_error(from, &b, e);
  }
  if (rc == -1) rc = e && e->code ? e->code : WSISA_EFORMAT;
  wsisa__buf_free(&b);
  return rc;
}

int wsisa__dist_alive(int rank) { return rank > 0 && rank < world.size && world.alive[rank]; }
void wsisa__dist_lose(int rank, const char *why) { lose_rank(rank, why); }
double wsisa__dist_timeout(void) { return world.timeout; }

double wsisa__dist_silent(int rank, double *bound) {
  *bound = 0;
  if (!wsisa__dist_alive(rank) || !world.heard[rank]) return 0;
  *bound = silence_bound(rank);
  return wsisa_now() - world.heard[rank];
}

int wsisa__dist_send_unit(int rank, size_t tile, size_t bucket, int moved) {
  uint64_t msg[3] = {tile, bucket, (uint64_t)(moved != 0)};
  return msg_send(rank, TAG_UNIT, msg, sizeof msg, wsisa_now() + world.timeout);
}

int wsisa__dist_send_job(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                         const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                         size_t paths_asked, uint64_t memory_limit, wsisa_err *e) {
  wsisa__buf jb = {0};
  wsisa__dist_job_encode(&jb, tiles, ntiles, params, buckets, opts, paths_asked, memory_limit,
                         world.timeout);
  if (jb.bad) {
    wsisa__buf_free(&jb);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  /* to every rank at once; a rank that takes it not and sends no heartbeat
   * either (dead since its ready message) is given up on after the
   * heartbeat's silence, not the unit timeout */
  MPI_Request *rq = calloc((size_t)world.size, sizeof *rq);
  if (!rq || jb.n > (size_t)0x7fffffff) {
    free(rq);
    wsisa__buf_free(&jb);
    return wsisa_error(e, WSISA_ENOMEM, "the study is too large to send to the ranks");
  }
  const double t0 = wsisa_now();
  int pending = 0;
  for (int r = 1; r < world.size; r++) {
    rq[r] = MPI_REQUEST_NULL;
    if (!world.alive[r]) continue;
    if (MPI_Isend(jb.p, (int)jb.n, MPI_BYTE, r, TAG_JOB, MPI_COMM_WORLD, &rq[r]) != MPI_SUCCESS)
      lose_rank(r, "cannot be sent the study");
    else
      pending++;
  }
  while (pending > 0) {
    take_heartbeats();
    const double t = wsisa_now();
    for (int r = 1; r < world.size; r++) {
      if (rq[r] == MPI_REQUEST_NULL) continue;
      int flag = 0;
      char why[128] = "";
      if (MPI_Test(&rq[r], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        snprintf(why, sizeof why, "cannot be sent the study");
      else if (flag) {
        world.heard[r] = t; /* it took the job: its heartbeats are awaited from now on */
        pending--;
        continue;
      } else if (t - world.heard[r] > silence_bound(r))
        snprintf(why, sizeof why,
                 "sent nothing for %.0f s while the study was sent to it, not even its heartbeat",
                 t - world.heard[r]);
      else if (t - t0 > world.timeout)
        snprintf(why, sizeof why, "did not take the study in %.0f s", t - t0);
      if (!why[0]) continue;
      MPI_Cancel(&rq[r]);
      MPI_Request_free(&rq[r]);
      rq[r] = MPI_REQUEST_NULL;
      pending--;
      lose_rank(r, why);
    }
    if (pending > 0) nap();
  }
  free(rq);
  wsisa__buf_free(&jb);
  return 0;
}

/* Tell every live worker to stop and wait for each one's answer: a rank that
 * died while it held no unit is found here, before MPI_Finalize would wait
 * for it for ever. Other messages still on their way are dropped. */
void wsisa__dist_stop_workers(void) {
  if (world.stopped) return;
  world.stopped = 1;
  /* a lost rank never reaches MPI_Finalize, where live ranks would wait for
   * it: they leave without it too (ranks told before one is found lost
   * below still finalize) */
  unsigned char lost = world.lost > 0;
  int waiting = 0;
  for (int r = 1; r < world.size; r++) {
    if (!world.alive[r]) {
      /* a rank given up on that was heard from lately lives on (it hung
       * for a while): told to stop, without MPI_Finalize, it does not keep
       * mpirun waiting. One gone is sent nothing: a send to it never
       * completes, and over TCP Open MPI warns that it cannot connect. */
      if (world.heard && wsisa_now() - world.heard[r] < WSISA_DIST_SILENCE)
        msg_send(r, TAG_STOP, &lost, 1, wsisa_now() + 1);
      continue;
    }
    if (msg_send(r, TAG_STOP, &lost, 1, wsisa_now() + world.timeout))
      lose_rank(r, "cannot be told to stop");
    else
      waiting++;
  }
  char *bye = calloc((size_t)world.size, 1);
  double deadline = wsisa_now() + (world.timeout < 60 ? world.timeout : 60);
  while (waiting > 0 && bye) {
    wsisa__buf m;
    int tag, from;
    if (msg_wait(MPI_ANY_SOURCE, &tag, &from, &m, deadline) <= 0) break;
    wsisa__buf_free(&m);
    if (tag == TAG_BYE && from > 0 && from < world.size && world.alive[from] && !bye[from]) {
      bye[from] = 1;
      waiting--;
    }
  }
  for (int r = 1; r < world.size; r++)
    if (world.alive[r] && !(bye && bye[r])) lose_rank(r, "did not answer the stop");
  free(bye);
}

#else /* without MPI the job is this process alone: no worker to reach */

int wsisa__dist_alive(int rank) { return rank == 0; }
void wsisa__dist_lose(int rank, const char *why) { (void)rank, (void)why; }
double wsisa__dist_timeout(void) { return world.timeout; }
double wsisa__dist_silent(int rank, double *bound) {
  (void)rank;
  *bound = 0;
  return 0;
}
int wsisa__dist_send_unit(int rank, size_t tile, size_t bucket, int moved) {
  (void)rank, (void)tile, (void)bucket, (void)moved;
  return -1;
}
int wsisa__dist_send_job(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                         const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                         size_t paths_asked, uint64_t memory_limit, wsisa_err *e) {
  (void)tiles, (void)ntiles, (void)params, (void)buckets, (void)opts, (void)paths_asked,
      (void)memory_limit;
  return wsisa_error(e, WSISA_EINTERNAL, "no MPI in this build");
}
int wsisa__dist_receive(size_t ntiles, size_t nbuckets, size_t nruns, wsisa__dist_result *res,
                        wsisa_err *e) {
  (void)ntiles, (void)nbuckets, (void)nruns, (void)res, (void)e;
  return 0;
}
void wsisa__dist_result_free(wsisa__dist_result *res) { (void)res; }
void wsisa__dist_stop_workers(void) {}

#endif /* WSISA_WITH_MPI */

/* ---- the public face ---------------------------------------------------------- */

int wsisa_dist_start(double unit_timeout, wsisa_err *e) {
  wsisa_env env;
  wsisa_env_read(&env);
  world.timeout = unit_timeout;
  if (env.unit_timeout) {
    char *end;
    double t = strtod(env.unit_timeout, &end);
    if (*end || !(t > 0))
      return wsisa_error(e, WSISA_EUSAGE, "WSISA_UNIT_TIMEOUT=%s: not a number of seconds > 0",
                         env.unit_timeout);
    world.timeout = t;
  }
  if (env.mpi_world_size <= 1) return 0;
#ifdef WSISA_WITH_MPI
  int provided = 0, argc = 0;
  char **argv = NULL;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return wsisa_error(e, WSISA_ERUNTIME, "MPI failed to start");
  /* errors come back as codes: a dead rank must not take the manager down */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  world.active = world.size > 1;
  world.started = wsisa_now();
  world.alive = malloc((size_t)world.size);
  world.workers = calloc((size_t)world.size, sizeof *world.workers);
  world.heard = calloc((size_t)world.size, sizeof *world.heard);
  world.gap = calloc((size_t)world.size, sizeof *world.gap);
  if (!world.alive || !world.workers || !world.heard || !world.gap)
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  memset(world.alive, 1, (size_t)world.size);
  if (provided < MPI_THREAD_FUNNELED)
    return wsisa_error(e, WSISA_ERUNTIME, "MPI offers no thread support (StarPU needs FUNNELED)");
  wsisa_log_set_rank(world.rank);
  /* the workers' binding (a rank's mask, or none) is wsisa_runtime_init's */
  return 0;
#else
  return wsisa_error(e, WSISA_EUSAGE,
                     "started by mpirun with %d ranks, but this wsisa was built without Open MPI "
                     "(install libopenmpi-dev and rebuild)",
                     env.mpi_world_size);
#endif
}

int wsisa_dist_workers(int local, int *total, wsisa_err *e) {
  *total = local;
  if (!world.active) return 0;
#ifdef WSISA_WITH_MPI
  const char *sched = wsisa_runtime_sched();
  /* a worker starts its StarPU as this rank did: given three times what
   * this rank took to get here (at least the heartbeat's silence, at most
   * the unit timeout), one that died before it was ready is given up on
   * without waiting the unit timeout */
  double bound = 3 * (wsisa_now() - world.started);
  if (bound < WSISA_DIST_SILENCE) bound = WSISA_DIST_SILENCE;
  if (bound > world.timeout) bound = world.timeout;
  double deadline = wsisa_now() + bound;
  for (int r = 1; r < world.size; r++)
    if (world.alive[r] && msg_send(r, TAG_SETUP, sched, strlen(sched) + 1, deadline))
      lose_rank(r, "cannot be reached");
  int rc = 0;
  for (int r = 1; r < world.size && !rc; r++) {
    wsisa__buf m;
    int tag;
    if (!world.alive[r]) continue;
    int got = msg_wait(r, &tag, NULL, &m, deadline);
    if (got <= 0) {
      char why[96];
      snprintf(why, sizeof why, "was not ready within %.0f s", bound);
      lose_rank(r, why);
      continue;
    }
    if (tag == TAG_READY) {
      int32_t n = 0;
      wsisa__buf_get(&m, &n, sizeof n);
      *total += n;
      world.workers[r] = n;
      world.heard[r] = wsisa_now(); /* its heartbeats follow */
    } else {
      rc = tag == TAG_ERROR ? on_error(r, &m, e) : 0;
    }
    wsisa__buf_free(&m);
  }
  wsisa_log(WSISA_LOG_INFO, "mpi", "%d ranks, %d StarPU workers in all", world.size, *total);
  return rc;
#else
  (void)e;
  return 0;
#endif
}

void wsisa_dist_end(void) {
  if (!world.active) return;
#ifdef WSISA_WITH_MPI
  if (world.rank == 0) wsisa__dist_stop_workers();
  /* a rank given up on may never reach MPI_Finalize, which waits for every
   * rank: leave without it; the results are already on disk */
  if (world.lost || world.manager_gone) {
    if (world.lost)
      wsisa_log(WSISA_LOG_WARN, "mpi", "%d rank(s) lost: leaving without MPI_Finalize",
                world.lost);
  } else {
    MPI_Finalize();
  }
#endif
  free(world.alive);
  world.alive = NULL;
  free(world.workers);
  world.workers = NULL;
  free(world.heard);
  free(world.gap);
  world.heard = world.gap = NULL;
  world.active = 0;
}
