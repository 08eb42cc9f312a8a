/* Beyond one machine: `mpirun -np N wsisa run` runs rank 0 as the manager and
 * every other rank as a worker driving its own StarPU (DESIGN.md §1, §5). */
#ifndef WSISA_DIST_H
#define WSISA_DIST_H

#include "core/executor.h"

/* Join the MPI job when launched by mpirun with more than one rank (Open MPI
 * sets OMPI_COMM_WORLD_SIZE); otherwise nothing happens and a plain
 * `wsisa run` never initialises MPI. `unit_timeout` (seconds, > 0) is how long
 * the manager waits for a unit before giving its worker up; WSISA_UNIT_TIMEOUT
 * overrides it. Must run before StarPU starts. */
int wsisa_dist_start(double unit_timeout, wsisa_err *e);
/* More than one rank. */
int wsisa_dist_active(void);
int wsisa_dist_rank(void);
int wsisa_dist_size(void);
/* Ranks given up (died or timed out) so far. */
int wsisa_dist_lost(void);

/* A worker rank's whole life: start StarPU with the manager's scheduler, then
 * run the units the manager hands out until it says stop. */
int wsisa_dist_worker(wsisa_err *e);

/* Manager, StarPU running: start the workers' StarPU and add their worker
 * counts to `local` into *total (just `local` when not distributed). The
 * reuse plan sizes itself on the total (MaxBuckets = 3 x workers). */
int wsisa_dist_workers(int local, int *total, wsisa_err *e);

/* Manager: wsisa_exec_run over every rank. Units go out on demand, two in
 * flight per rank, the manager computing too; a worker that dies or passes
 * the unit timeout loses only its units in flight, which run elsewhere.
 * Each worker derives its K with wsisa_exec_active_paths from `paths_asked`
 * (0: its own worker count) and `memory_limit` (bytes per rank, 0: 80% of its
 * memory available), as rank 0 did for opts->active_paths. */
int wsisa_dist_run(const wsisa_tile_ref *tiles, size_t ntiles, const double *params,
                   const wsisa_reuse_buckets *buckets, const uint8_t *done,
                   const wsisa_exec_opts *opts, size_t paths_asked, uint64_t memory_limit,
                   wsisa_exec_unit_fn on_unit, void *ctx, wsisa_exec_stats *stats,
                   wsisa_err *e);

/* Tell the live workers to stop and leave MPI. With a rank lost, MPI_Finalize
 * is skipped (it may wait for a rank that never comes); call it only once the
 * results are on disk. */
void wsisa_dist_end(void);

#endif
