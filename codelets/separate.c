/* Codelets: levels 6 and 7 object by object with the tile's object store
 * (docs/architecture.md, "Object reuse"; the computation, and why it gives
 * the tile-wide kernels' bits: codelets/cpu/separate.c). `separate` is level
 * 6 from the dilated mask on, cluster by cluster; `final_size` is level 7,
 * group by group. The store lives in this process's memory and is passed by
 * pointer; both workers use it on the host. On the CPU the units the store
 * misses are computed crop by crop; on the OpenCL worker the mask is read
 * back, the units are looked up on the host, and when any misses, the
 * level's fine-grain OpenCL implementations run once on the whole tile
 * (their bits are the CPU kernels'), whose result is the output and gives
 * the missed units' store entries; when none misses, the stored results are
 * written to the device (masks cross the bus packed, 8 pixels a byte).
 * Their output does not depend on what the store holds, so not on which
 * worker runs them or when. */
#include <stdlib.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

/* Their time depends on what the store holds, not only on the size: the
 * history per size, and its spread, tell the schedulers so. */
WSISA__CODELET(separate, 4, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_W);
WSISA__CODELET(final_size, 3, WSISA__PLAIN, STARPU_R, STARPU_W);

struct object_args {
  int conn, min_size, max_size;
  wsisa_object_store *store;
};

WSISA__CPU_TASK(separate, struct object_args,
                wsisa_cpu_separate(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8), a->conn,
                                   a->store, NULL, NULL, WSISA__IMAGE(2, U8)))

WSISA__CPU_TASK(final_size, struct object_args,
                wsisa_cpu_final_size(WSISA__IMAGE(0, U8), a->min_size, a->max_size, a->conn,
                                     a->store, NULL, NULL, WSISA__IMAGE(1, U8)))

/* ---- OpenCL: the fine-grain implementations on the whole tile ------------ */

/* The argument structs of the operations called (their files' own, the same
 * fields in the same order: codelets/hmin.c, regional_min.c, label.c,
 * area_filter.c, fill_object_holes.c). */
struct hmin_args {
  float h;
  int conn;
};
struct conn_args {
  int conn;
};
struct area_filter_args {
  int conn, min_area, max_area;
};

/* A packed device scratch image as the matrix buffer a task function takes. */
typedef struct scratch {
  struct starpu_matrix_interface m;
} scratch;

static scratch scratch_new(void *shape, size_t elemsize) {
  const uint32_t w = STARPU_MATRIX_GET_NX(shape), h = STARPU_MATRIX_GET_NY(shape);
  const wsisa__cl_matrix m = wsisa__cl_scratch((int)w, (int)h, elemsize);
  scratch s = {{.id = STARPU_MATRIX_INTERFACE_ID,
                .dev_handle = (uintptr_t)m.mem,
                .offset = m.offset,
                .nx = w,
                .ny = h,
                .ld = w,
                .elemsize = elemsize,
                .allocsize = (size_t)w * h * elemsize}};
  return s;
}

static void scratch_free(scratch *s) { clReleaseMemObject((cl_mem)s->m.dev_handle); }

/* Run operation op's OpenCL task function on the buffers given. */
#define CALL(op, args, ...) \
  wsisa__##op##_codelet.opencl_funcs[0]((void *[]){__VA_ARGS__}, (void *)(args))

/* Level 6 from the dilated mask on, as engine/workflow/workflow.c submits it
 * without a store: out = the watershed's mask. */
static void separate_tile(void *rgb, void *mask, void *out, int conn) {
  scratch dist = scratch_new(mask, sizeof(cl_float)), relief = scratch_new(mask, sizeof(cl_float)),
          hmin = scratch_new(mask, sizeof(cl_float)), minima = scratch_new(mask, 1),
          markers = scratch_new(mask, sizeof(cl_int)), labels = scratch_new(mask, sizeof(cl_int));
  const struct hmin_args h = {1.0f, 8};
  const struct conn_args eight = {8}, wconn = {conn};
  CALL(edt, NULL, mask, &dist.m);
  CALL(neg_dist, NULL, &dist.m, mask, &relief.m);
  CALL(hmin, &h, &relief.m, &hmin.m);
  CALL(regional_min, &eight, &hmin.m, &minima.m);
  CALL(label, &wconn, &minima.m, &markers.m);
  CALL(watershed, NULL, rgb, &markers.m, mask, &labels.m, out);
  scratch *all[] = {&dist, &relief, &hmin, &minima, &markers, &labels};
  for (int i = 0; i < 6; i++) scratch_free(all[i]);
}

/* Level 7: out = area_filter (4-connected) then fill_object_holes. */
static void final_size_tile(void *mask, void *out, const struct object_args *a) {
  scratch sized = scratch_new(mask, 1);
  const struct area_filter_args f = {4, a->min_size, a->max_size};
  const struct conn_args fill = {a->conn};
  CALL(area_filter, &f, mask, &sized.m);
  CALL(fill_object_holes, &fill, &sized.m, out);
  scratch_free(&sized);
}

/* A u8 matrix buffer to or from a host image (waits), packed 8 pixels to a
 * byte on the bus (codelets/cl/separate.cl): the levels' masks hold 0 and
 * 255 only, which is what comes out on the other side. One blocking
 * transfer of ceil(width / 8) x height bytes. */
static void transfer(void *buffer, wsisa_image *host, int to_host) {
  const int width = (int)STARPU_MATRIX_GET_NX(buffer), height = (int)STARPU_MATRIX_GET_NY(buffer);
  const size_t row_bytes = ((size_t)width + 7) / 8, bytes = row_bytes * (size_t)height;
  uint8_t *bits = calloc(bytes ? bytes : 1, 1);
  STARPU_ASSERT(bits);
  if (!to_host)
    for (int y = 0; y < height; y++) {
      const uint8_t *row = wsisa_image_row(host, y);
      for (int x = 0; x < width; x++)
        if (row[x]) bits[(size_t)y * row_bytes + (size_t)x / 8] |= (uint8_t)(1u << (x % 8));
    }
  cl_mem packed = wsisa__cl_buffer(bytes, to_host ? NULL : bits);
  if (to_host) {
    WSISA__CL_IMAGE(separate, "wsisa_separate_pack", buffer, WSISA__CL_MAT(buffer),
                    WSISA__CL_VAL(packed));
    cl_command_queue queue;
    starpu_opencl_get_current_queue(&queue);
    wsisa__cl_check(clEnqueueReadBuffer(queue, packed, CL_TRUE, 0, bytes, bits, 0, NULL, NULL),
                    "mask read");
    for (int y = 0; y < height; y++) {
      uint8_t *row = wsisa_image_row(host, y);
      for (int x = 0; x < width; x++)
        row[x] = (bits[(size_t)y * row_bytes + (size_t)x / 8] >> (x % 8)) & 1 ? 255 : 0;
    }
  } else {
    WSISA__CL_IMAGE(separate, "wsisa_separate_unpack", buffer, WSISA__CL_VAL(packed),
                    WSISA__CL_MAT(buffer));
  }
  clReleaseMemObject(packed);
  free(bits);
}

/* What the host's bookkeeping calls when a unit misses the store. */
struct on_device {
  void *rgb, *mask, *out;
  const struct object_args *a;
};

static int separate_whole(void *ctx, wsisa_image *out) {
  const struct on_device *d = ctx;
  separate_tile(d->rgb, d->mask, d->out, d->a->conn);
  transfer(d->out, out, 1);
  return 0;
}

static int final_size_whole(void *ctx, wsisa_image *out) {
  const struct on_device *d = ctx;
  final_size_tile(d->mask, d->out, d->a);
  transfer(d->out, out, 1);
  return 0;
}

/* With a store: the mask to the host, the units looked up there; the
 * output written to the device unless `whole` computed it there. */
static void objects_opencl(int level, void *rgb, void *mask, void *out,
                           const struct object_args *a) {
  const int width = (int)STARPU_MATRIX_GET_NX(mask), height = (int)STARPU_MATRIX_GET_NY(mask);
  wsisa_image *host_mask = NULL, *host_out = NULL;
  const int rc = wsisa_image_new(width, height, 1, WSISA_U8, &host_mask, NULL) ||
                 wsisa_image_new(width, height, 1, WSISA_U8, &host_out, NULL);
  STARPU_ASSERT(!rc);
  (void)rc;
  transfer(mask, host_mask, 1);
  struct on_device d = {rgb, mask, out, a};
  const wsisa_object_whole whole = {level == 6 ? separate_whole : final_size_whole, &d};
  wsisa_object_tally t = {0};
  if (level == 6)
    WSISA__KERNEL(wsisa_cpu_separate(NULL, host_mask, a->conn, a->store, &whole, &t, host_out));
  else
    WSISA__KERNEL(wsisa_cpu_final_size(host_mask, a->min_size, a->max_size, a->conn, a->store,
                                       &whole, &t, host_out));
  if (t.reused[level - 6] == t.seen[level - 6]) transfer(out, host_out, 0);
  wsisa_image_free(host_mask);
  wsisa_image_free(host_out);
}

static void separate_opencl(void *buffers[], void *cl_arg) {
  const struct object_args *a = cl_arg;
  if (a->store) objects_opencl(6, buffers[0], buffers[1], buffers[2], a);
  else separate_tile(buffers[0], buffers[1], buffers[2], a->conn);
}

static void final_size_opencl(void *buffers[], void *cl_arg) {
  const struct object_args *a = cl_arg;
  if (a->store) objects_opencl(7, NULL, buffers[0], buffers[1], a);
  else final_size_tile(buffers[0], buffers[1], a);
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
