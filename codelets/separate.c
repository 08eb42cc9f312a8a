/* Codelet: levels 6 and 7 object group by object group with the tile's object
 * store (docs/architecture.md, "Object reuse"; the computation and why it
 * gives the tile-wide kernels' bits: codelets/cpu/separate.c). CPU only: it
 * reads and fills the store, which lives in this process's memory and is
 * passed by pointer. Its output does not depend on the store's content, so
 * not on which worker runs it or when. */
#include <stdlib.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

extern struct starpu_codelet wsisa__separate_codelet;
extern struct starpu_perfmodel wsisa__separate_model;

struct separate_args {
  wsisa_separate_params p;
  wsisa_object_store *store;
};

static void separate_cpu(void *buffers[], void *cl_arg) {
  const struct separate_args *a = cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  int rc = wsisa_cpu_separate(&rgb, &mask, &a->p, a->store, NULL, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

/* The time depends on how much the store holds, not only on the size: the
 * history is per size, and its spread tells the schedulers so. */
struct starpu_perfmodel wsisa__separate_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_separate_v1",
};

struct starpu_codelet wsisa__separate_codelet = {
    .name = "separate",
    .where = STARPU_CPU,
    .cpu_funcs = {separate_cpu},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__separate_model,
};

int wsisa_submit_separate(starpu_data_handle_t rgb, starpu_data_handle_t mask,
                          starpu_data_handle_t out, const wsisa_separate_params *p,
                          wsisa_object_store *store) {
  const starpu_data_handle_t h[] = {mask, rgb, out};
  const size_t elem[] = {1, 3, 1};
  if ((p->watershed_conn != 4 && p->watershed_conn != 8) ||
      (p->fill_holes_conn != 4 && p->fill_holes_conn != 8))
    return WSISA_EUSAGE;
  if (wsisa__check_matrices(3, h, elem) || starpu_matrix_get_nx(mask) > WSISA_EDT_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  struct separate_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  a->p = *p;
  a->store = store;
  /* on a CPU worker whatever wsisa_codelets_where() says: there is no other */
  int ret = starpu_task_insert(&wsisa__separate_codelet, STARPU_EXECUTE_WHERE,
                               (unsigned long long)STARPU_CPU, STARPU_R, rgb, STARPU_R, mask,
                               STARPU_W, out, STARPU_CL_ARGS, a, sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
