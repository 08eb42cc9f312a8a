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


struct object_args {
  int conn, min_size, max_size;
  wsisa_object_store *store;
};

static void separate_cpu(void *buffers[], void *cl_arg) {
  const struct object_args *a = cl_arg;
  wsisa_image rgb = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image mask = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[2], WSISA_U8);
  int rc = wsisa_cpu_separate(&rgb, &mask, a->conn, a->store, NULL, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void final_size_cpu(void *buffers[], void *cl_arg) {
  const struct object_args *a = cl_arg;
  wsisa_image mask = wsisa_image_from_buffer(buffers[0], WSISA_U8);
  wsisa_image out = wsisa_image_from_buffer(buffers[1], WSISA_U8);
  int rc = wsisa_cpu_final_size(&mask, a->min_size, a->max_size, a->conn, a->store, NULL, &out);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

/* Their time depends on what the store holds, not only on the size: the
 * history per size, and its spread, tell the schedulers so. */
struct starpu_perfmodel wsisa__separate_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_separate_v1",
};

struct starpu_perfmodel wsisa__final_size_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_final_size_v1",
};

struct starpu_codelet wsisa__separate_codelet = {
    .name = "separate",
    .where = STARPU_CPU,
    .cpu_funcs = {separate_cpu},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__separate_model,
};

struct starpu_codelet wsisa__final_size_codelet = {
    .name = "final_size",
    .where = STARPU_CPU,
    .cpu_funcs = {final_size_cpu},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &wsisa__final_size_model,
};

static int insert(struct starpu_codelet *cl, struct object_args *a, starpu_data_handle_t rgb,
                  starpu_data_handle_t mask, starpu_data_handle_t out) {
  /* on a CPU worker whatever wsisa_codelets_where() says: there is no other */
  int ret = rgb ? starpu_task_insert(cl, STARPU_EXECUTE_WHERE, (unsigned long long)STARPU_CPU,
                                     STARPU_R, rgb, STARPU_R, mask, STARPU_W, out,
                                     STARPU_CL_ARGS, a, sizeof *a, 0)
                : starpu_task_insert(cl, STARPU_EXECUTE_WHERE, (unsigned long long)STARPU_CPU,
                                     STARPU_R, mask, STARPU_W, out, STARPU_CL_ARGS, a,
                                     sizeof *a, 0);
  return ret ? WSISA_ERUNTIME : 0;
}

int wsisa_submit_separate(starpu_data_handle_t rgb, starpu_data_handle_t mask,
                          starpu_data_handle_t out, int watershed_conn,
                          wsisa_object_store *store) {
  const starpu_data_handle_t h[] = {mask, rgb, out};
  const size_t elem[] = {1, 3, 1};
  if (watershed_conn != 4 && watershed_conn != 8) return WSISA_EUSAGE;
  if (wsisa__check_matrices(3, h, elem) || starpu_matrix_get_nx(mask) > WSISA_EDT_MAX_SIDE ||
      starpu_matrix_get_ny(mask) > WSISA_EDT_MAX_SIDE)
    return WSISA_EINTERNAL;
  struct object_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  *a = (struct object_args){watershed_conn, 0, 0, store};
  return insert(&wsisa__separate_codelet, a, rgb, mask, out);
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
  struct object_args *a = calloc(1, sizeof *a);
  if (!a) return WSISA_ENOMEM;
  *a = (struct object_args){fill_holes_conn, min_size_seg, max_size_seg, store};
  return insert(&wsisa__final_size_codelet, a, NULL, mask, out);
}
