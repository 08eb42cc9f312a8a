/* engine/exec's own declarations: the MPI transport of the unit queue, which
 * only the queue (engine/exec/units.c) and the workers (engine/exec/dist.c)
 * use. Included by engine/exec/ and its suite alone (tests/test_engine_exec*.c). */
#ifndef WSISA_ENGINE_EXEC_INTERNAL_H
#define WSISA_ENGINE_EXEC_INTERNAL_H

#include "engine/exec/exec.h"

/* ---- the MPI transport of the unit queue (engine/exec/dist.c) -------------------- */
/* Without MPI, or not started by mpirun, the job has one rank and the unit
 * queue never calls these but wsisa__dist_alive. */

/* A unit's result as a worker sent it; the counts point into `rows` for
 * their feature rows, as the executor's do. */
typedef struct wsisa__dist_result {
  int rank;
  size_t tile, bucket, n;
  size_t *runs;
  wsisa_counts *counts;
  wsisa_exec_stats stats;
  double *rows;
  uint32_t *spans;
} wsisa__dist_result;

/* The StarPU workers rank r (> 0) said it runs (0: unknown). */
int wsisa__dist_rank_workers(int rank);
/* Is rank r (> 0) still given work? */
int wsisa__dist_alive(int rank);
/* Give rank r up: it gets no more work. */
void wsisa__dist_lose(int rank, const char *why);
/* Seconds a worker may hold a unit. */
double wsisa__dist_timeout(void);
/* A worker's heartbeat: every WSISA_DIST_HEARTBEAT seconds from the job's
 * arrival to its stop, whatever its units take. Open MPI 4.1 without ULFM
 * reports no dead rank to the others (a receive from it stays pending,
 * MPI_Test and MPI_Iprobe return MPI_SUCCESS with nothing arrived, a send to
 * it never completes: docs/guide.md, MPI), so a rank silent for
 * WSISA_DIST_SILENCE seconds, or three times the longest silence it came
 * back from if longer, is taken for dead and its units run elsewhere at
 * once. */
#define WSISA_DIST_HEARTBEAT 1.0
#define WSISA_DIST_SILENCE 10.0
/* Seconds since rank r's last message (heartbeat or result), and in *bound
 * the silence after which it is taken for dead; 0 (and *bound 0) for a rank
 * given up on or not yet sent the job. */
double wsisa__dist_silent(int rank, double *bound);
/* Send the job (tiles, design, plan, options) to every live worker. */
int wsisa__dist_send_job(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                         const wsisa_reuse_buckets *buckets, const wsisa_exec_opts *opts,
                         size_t paths_asked, uint64_t memory_limit, wsisa_err *e);
/* Hand unit (tile, bucket) to worker `rank`, `moved` when another rank had
 * its tile's first unit (wsisa_exec_session_moved): non-zero when it cannot
 * be sent. */
int wsisa__dist_send_unit(int rank, size_t tile, size_t bucket, int moved);
/* A worker's message if one is waiting: 0 none; 1 a result in *res (free it
 * with wsisa__dist_result_free); 2 a message used up with nothing to report
 * (from a rank given up on); negative on an error, a worker's included. A
 * result is checked against the job's sizes. */
int wsisa__dist_receive(size_t ntiles, size_t nbuckets, size_t nruns, wsisa__dist_result *res,
                        wsisa_err *e);
void wsisa__dist_result_free(wsisa__dist_result *res);
/* How long a rank with nothing to do waits before it looks for messages
 * again: it starts short and doubles while nothing happens, so an idle rank
 * neither spins on MPI nor answers late (a unit takes far longer). */
#define WSISA_IDLE_MIN 1e-4
#define WSISA_IDLE_MAX 5e-3
/* Tell every live worker to stop and wait for its answer. */
void wsisa__dist_stop_workers(void);

#endif
