/* Codelets: levels 6 and 7 object by object with the tile's object store
 * (docs/architecture.md, "Object reuse"; the computation, and why it gives
 * the tile-wide kernels' bits: codelets/cpu/separate.c). `separate` is level
 * 6 from the dilated mask on, cluster by cluster; `final_size` is level 7,
 * group by group. CPU only: the store lives in this process's memory and is
 * passed by pointer. Their output does not depend on what the store holds,
 * so not on which worker runs them or when. */
#include <stdlib.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

/* Their time depends on what the store holds, not only on the size: the
 * history per size, and its spread, tell the schedulers so. */
WSISA__CPU_CODELET(separate, 1, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_W);
WSISA__CPU_CODELET(final_size, 1, WSISA__PLAIN, STARPU_R, STARPU_W);

struct object_args {
  int conn, min_size, max_size;
  wsisa_object_store *store;
};

WSISA__CPU_TASK(separate, struct object_args,
                wsisa_cpu_separate(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8), a->conn,
                                   a->store, NULL, WSISA__IMAGE(2, U8)))

WSISA__CPU_TASK(final_size, struct object_args,
                wsisa_cpu_final_size(WSISA__IMAGE(0, U8), a->min_size, a->max_size, a->conn,
                                     a->store, NULL, WSISA__IMAGE(1, U8)))

int wsisa_submit_separate(starpu_data_handle_t rgb, starpu_data_handle_t mask,
                          starpu_data_handle_t out, int watershed_conn,
                          wsisa_object_store *store) {
  const starpu_data_handle_t h[] = {mask, rgb, out};
  const size_t elem[] = {1, 3, 1};
  if (watershed_conn != 4 && watershed_conn != 8) return WSISA_EUSAGE;
  if (wsisa__check_matrices(3, h, elem) || starpu_matrix_get_nx(mask) > WSISA_EDT_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  const struct object_args a = {watershed_conn, 0, 0, store};
  return WSISA__SUBMIT(separate, &a, sizeof a, rgb, mask, out);
}

int wsisa_submit_final_size(starpu_data_handle_t mask, starpu_data_handle_t out,
                            int min_size_seg, int max_size_seg, int fill_holes_conn,
                            wsisa_object_store *store) {
  const starpu_data_handle_t h[] = {mask, out};
  const size_t elem[] = {1, 1};
  if (fill_holes_conn != 4 && fill_holes_conn != 8) return WSISA_EUSAGE;
  if (wsisa__check_matrices(2, h, elem) || starpu_matrix_get_nx(mask) > 65535 ||
      starpu_matrix_get_ny(mask) > 65535)
    return WSISA_EINTERNAL;
  const struct object_args a = {fill_holes_conn, min_size_seg, max_size_seg, store};
  return WSISA__SUBMIT(final_size, &a, sizeof a, mask, out);
}
