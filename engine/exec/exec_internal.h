/* engine/exec's own declarations: a tile open for its units, which the
 * executor's sessions hold (engine/exec/tile.c), and the MPI transport of
 * the unit queue, which only the queue (engine/exec/units.c) and the workers
 * (engine/exec/dist.c) use. Included by engine/exec/ and its suite alone
 * (tests/test_engine_exec*.c). */
#ifndef WSISA_ENGINE_EXEC_INTERNAL_H
#define WSISA_ENGINE_EXEC_INTERNAL_H

#include "engine/exec/exec.h"

/* ---- a tile open for its units (engine/exec/tile.c) ------------------------- */

typedef struct wsisa__tile_state wsisa__tile_state;
/* A tile open for its units: its pixels and stage, the reference, the
 * background decisions and the object store (engine/exec/tile.c). */
struct wsisa__tile_state {
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
  int ref_tissue_known; /* ref_tissue decided (wsisa__tile_reference_tissue) */
  /* where the core is in the pixels read, and the colour statistics */
  wsisa_tile_frame frame;
  /* the reference's counts on their way home (registered until
   * wsisa__tile_reference_wait): the tile's first units are submitted meanwhile */
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

/* The reference's pixel and object counts home (they are needed only when
 * a unit is reported, or for the reference's feature rows). */
void wsisa__tile_reference_wait(wsisa__tile_state *ts);
/* Feature rows measured on the pixels read, placed on the tile: centroids
 * and bounding boxes from the core's corner. */
void wsisa__tile_rows_to_core(double *rows, size_t n, int cols, const wsisa_tile_data *d);
/* The background rule's decision for (B, G, R) of `p` on the tile, decided
 * once per (B, G, R) (a count submitted at the opening is waited for here),
 * and the tissue it leaves in the core (*tissue, may be NULL); for the
 * defaults' (B, G, R), the tissue the reference segments too. */
int wsisa__tile_skip(wsisa__tile_state *ts, const wsisa_tile_data *data, const double *p, int *skip,
                     uint64_t *tissue_out, wsisa_err *e);
/* The tissue the tile's reference segments: the defaults' background count,
 * submitted at the opening, home by the time a unit is reported. */
int wsisa__tile_reference_tissue(wsisa__tile_state *ts, wsisa_err *e);
int wsisa__tile_open(const wsisa_tile_ref *ref, const wsisa_exec_opts *o, int recon_conns,
                     wsisa__tile_state *ts, const double (*bgr)[3], size_t nbgr,
                     wsisa_exec_stats *stats, wsisa_annotation **annot, wsisa_err *e);
/* The store's counts since they were last taken, into `stats`. */
void wsisa__tile_objects_count(wsisa__tile_state *ts, wsisa_exec_stats *stats);
/* Every unit of the tile has finished: what is left reading it (a count
 * prefetched and never looked at, a tile stage output no leaf needed) is
 * waited for here. */
void wsisa__tile_close(wsisa__tile_state *ts, const wsisa_exec_opts *o);

/* ---- the bytes the MPI transport carries (engine/exec/dist_job.c) ------------ */

/* A byte buffer written at its end and read from `at`. */
typedef struct wsisa__buf {
  unsigned char *p;
  size_t n, cap, at;
  int bad; /* a read ran past the end, or an allocation failed */
} wsisa__buf;
void wsisa__buf_put(wsisa__buf *b, const void *x, size_t n);
void wsisa__buf_put_u64(wsisa__buf *b, uint64_t v);
/* Past the end: zeros, and b->bad set. */
void wsisa__buf_get(wsisa__buf *b, void *x, size_t n);
uint64_t wsisa__buf_get_u64(wsisa__buf *b);
void wsisa__buf_free(wsisa__buf *b);

/* The job: what every rank must agree on, as a worker reads it back. */
typedef struct wsisa__dist_job {
  wsisa_tile_ref *tiles;
  char **paths;
  wsisa_annot_spec *annots; /* per tile, used when its kind is set */
  char **annot_strings;     /* per tile: its annotation's path and input */
  size_t ntiles, nruns;
  double *params;
  wsisa_reuse_buckets *buckets;
  wsisa_exec_opts opts;
  double timeout;
} wsisa__dist_job;
/* The manager's job into b: the tiles, the runs' parameters, the buckets, the
 * active paths asked, the memory limit, the options and the unit timeout. */
void wsisa__dist_job_encode(wsisa__buf *b, const wsisa_tile_ref *tiles, size_t ntiles,
                            const double *params, const wsisa_reuse_buckets *bk,
                            const wsisa_exec_opts *o, size_t paths_asked, uint64_t memory_limit,
                            double timeout);
/* A worker's reading of it: K and the object store's share derived from this
 * rank's memory as rank 0 derives its own, each bucket's tree rebuilt;
 * WSISA_EFORMAT for a malformed message. */
int wsisa__dist_job_decode(wsisa__buf *b, wsisa__dist_job *j, wsisa_err *e);
void wsisa__dist_job_free(wsisa__dist_job *j);

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
