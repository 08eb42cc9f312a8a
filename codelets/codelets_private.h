/* Shared-internal to the codelet files: the list of operations, the
 * declaration of an operation, submitting, and the OpenCL helpers that know
 * the operations (the plumbing below them: codelets/ocl/ocl.h). */
#ifndef WSISA_CODELETS_PRIVATE_H
#define WSISA_CODELETS_PRIVATE_H

#include <stdlib.h>

#include "codelets/codelets.h"
#include "codelets/ocl/ocl.h"

/* Every operation, in the order of the registry (`wsisa --list-ops`): OP(op)
 * for one with a CPU and an OpenCL implementation (codelets/cl/<op>.cl),
 * CPU_OP(op) for one with a CPU implementation only. Adding an operation
 * adds its line here and its declaration (WSISA__CODELET) in its file. */
#define WSISA__OPS(OP, CPU_OP)                                                             \
  OP(invert) OP(neg_dist) OP(count_labels) OP(object_match) OP(own_objects)                \
  /* morph: mathematical morphology */                                                     \
  OP(morph) OP(reconstruct) OP(bin_reconstruct) OP(fill_holes) OP(fill_object_holes)       \
  OP(hmin) OP(regional_min)                                                                \
  /* pixel group: normalization and per-pixel operations */                                \
  OP(fisher_fg) OP(rgb2lab) OP(masked_stats) OP(color_transfer) OP(lab2rgb) OP(background) \
  OP(ratio_mask) OP(threshold) OP(sub_sat) OP(mask_logic) OP(compare)                      \
  /* objects: labelling, size filters, distance transform, watershed; levels 6 and 7 */    \
  /* object by object (the object store on the host; on the OpenCL worker they run the */   \
  /* fine-grain operations' OpenCL, their own programs are empty) */                       \
  OP(label) OP(area_filter) OP(edt) OP(watershed) OP(separate) OP(final_size)              \
  /* features, nucleus half: the per-nucleus reduction */                                  \
  OP(nucleus_features)                                                                     \
  /* features, pixel half: per-tile channels */                                            \
  OP(deconv) OP(sobel) OP(filter_bank)

/* What the declaration of each operation defines: its codelet, its perf
 * model and, with OpenCL, its program and the embedded source wsisa_cl_<op>. */
#define WSISA__CPU_OP_EXTERN(op)                       \
  extern struct starpu_codelet wsisa__##op##_codelet; \
  extern struct starpu_perfmodel wsisa__##op##_model;
#define WSISA__OP_EXTERN(op)                                 \
  WSISA__CPU_OP_EXTERN(op)                                   \
  extern struct starpu_opencl_program wsisa__##op##_program; \
  extern const char wsisa_cl_##op[];
WSISA__OPS(WSISA__OP_EXTERN, WSISA__CPU_OP_EXTERN)

/* ---- the declaration of an operation ------------------------------------ *
 * WSISA__CODELET(op, version, options, modes...) declares the task functions
 * op_cpu and op_opencl (static, defined below it in the op's file) and
 * defines wsisa__<op>_program, the perf model wsisa__<op>_model (history
 * based, symbol "wsisa_<op>_v<version>") and the codelet wsisa__<op>_codelet
 * whose buffers have the access modes `modes` (STARPU_R, STARPU_W, ...).
 * `options` is WSISA__PLAIN, WSISA__BY_ARGS (the perf model tells tasks apart
 * by their argument bytes too, wsisa__footprint_args) or WSISA__FP64 (OpenCL
 * kernels in double, wsisa__can_execute_fp64), or a macro of the same kind
 * naming another pair (footprint function, can_execute function), either NULL
 * (codelets/object_match.c).
 * WSISA__CODELET_ANY(op, version, options): the same for a codelet whose
 * buffers, and their modes, are given task by task (wsisa__submit_descr).
 * WSISA__CPU_CODELET(op, version, options, modes...): CPU only, no program. */
#define WSISA__PLAIN NULL, NULL
#define WSISA__BY_ARGS wsisa__footprint_args, NULL
#define WSISA__FP64 NULL, wsisa__can_execute_fp64
#define WSISA__MODES(...)                                                      \
  .nbuffers = (int)(sizeof((enum starpu_data_access_mode[]){__VA_ARGS__}) /  \
                    sizeof(enum starpu_data_access_mode)),                    \
  .modes = {__VA_ARGS__}
#define WSISA__CODELET(op, version, options, ...) \
  WSISA__CODELET_OCL(op, version, options, WSISA__MODES(__VA_ARGS__))
#define WSISA__CODELET_ANY(op, version, options) \
  WSISA__CODELET_OCL(op, version, options, .nbuffers = STARPU_VARIABLE_NBUFFERS)
#define WSISA__CPU_CODELET(op, version, options, ...)                                \
  static void op##_cpu(void *buffers[], void *cl_arg);                                \
  WSISA__CODELET_DEF(op, version, STARPU_CPU, NULL, options, WSISA__MODES(__VA_ARGS__))
#define WSISA__CODELET_OCL(op, version, options, ...)                            \
  static void op##_cpu(void *buffers[], void *cl_arg);                           \
  static void op##_opencl(void *buffers[], void *cl_arg);                        \
  struct starpu_opencl_program wsisa__##op##_program;                            \
  WSISA__CODELET_DEF(op, version, STARPU_CPU | STARPU_OPENCL, op##_opencl, options, \
                     __VA_ARGS__)
#define WSISA__CODELET_DEF(op, version, where_, opencl, footprint_, can_execute_, ...) \
  struct starpu_perfmodel wsisa__##op##_model = {                                      \
      .type = STARPU_HISTORY_BASED,                                                    \
      .symbol = "wsisa_" #op "_v" #version,                                            \
      .footprint = footprint_,                                                         \
  };                                                                                   \
  struct starpu_codelet wsisa__##op##_codelet = {                                      \
      .name = #op,                                                                     \
      .where = where_,                                                                 \
      .can_execute = can_execute_,                                                     \
      .cpu_funcs = {op##_cpu},                                                         \
      .opencl_funcs = {opencl},                                                        \
      .model = &wsisa__##op##_model,                                                   \
      __VA_ARGS__}

/* Perf-model footprint (codelets/submit.c) of the data sizes and the task's argument bytes: a
 * 19×19 opening and a 3×3 erosion of one tile keep separate histories. The
 * argument struct must have no padding. */
uint32_t wsisa__footprint_args(struct starpu_task *task);
/* ---- submitting ------------------------------------------------------------ *
 * Submit op's codelet on the handles given, in the order and with the access
 * modes of its declaration, with a copy of the `size` bytes at `args` as its
 * argument (none when size is 0), on the workers wsisa_codelets_where()
 * allows (a CPU-only codelet on the CPU). During a dry run
 * (wsisa_codelets_record) the task is built and recorded, never submitted.
 * 0, WSISA_ENOMEM or WSISA_ERUNTIME. */
int wsisa__submit(struct starpu_codelet *codelet, const starpu_data_handle_t *h, int n,
                  const void *args, size_t size);
#define WSISA__SUBMIT(op, args, size, ...)                                          \
  wsisa__submit(&wsisa__##op##_codelet, (const starpu_data_handle_t[]){__VA_ARGS__}, \
                (int)(sizeof((starpu_data_handle_t[]){__VA_ARGS__}) /                \
                      sizeof(starpu_data_handle_t)),                                 \
                args, size)
/* The same for a WSISA__CODELET_ANY: n handles with their modes. */
int wsisa__submit_descr(struct starpu_codelet *codelet, struct starpu_data_descr *descr,
                        int n, const void *args, size_t size);
extern wsisa_codelets_recorder wsisa__recorder;

/* A CPU task function's kernel call: the submit helper checked what the
 * kernel could refuse, so a failure is a defect (an assertion). */
#define WSISA__KERNEL(call)   \
  do {                        \
    int rc_ = (call);         \
    STARPU_ASSERT(rc_ == 0);  \
    (void)rc_;                \
  } while (0)

/* What a submit helper checks before inserting anything. 0 when each h[i] is
 * a matrix of h[0]'s width and height whose pixel is elemsize[i] bytes;
 * WSISA_EINTERNAL otherwise (a wiring mistake). */
int wsisa__check_matrices(int n, const starpu_data_handle_t *h, const size_t *elemsize);
/* 0 when h is a vector of n elements of elemsize bytes, else WSISA_EINTERNAL. */
int wsisa__check_vector(starpu_data_handle_t h, uint32_t n, size_t elemsize);
/* 0 for conn 4 or 8, WSISA_EUSAGE otherwise. */
int wsisa__check_conn(int conn);

/* WSISA__CPU_TASK(op, args_type, call): op's CPU task function, for an
 * operation whose CPU side is one kernel call on its buffers. `call` may use
 * `a`, the task's arguments (a const args_type *), WSISA__IMAGE(i, type), a
 * view of buffer i as a wsisa_image of WSISA_<type> pixels, and
 * WSISA__VECTOR(i, type), the data of vector buffer i. */
#define WSISA__CPU_TASK(op, args_type, call)              \
  static void op##_cpu(void *buffers[], void *cl_arg) { \
    const args_type *a = cl_arg;                         \
    (void)a;                                             \
    WSISA__KERNEL(call);                                 \
  }
#define WSISA__IMAGE(i, type) \
  (&(wsisa_image[1]){wsisa_image_from_buffer(buffers[i], WSISA_##type)}[0])
#define WSISA__VECTOR(i, type) ((type *)STARPU_VECTOR_GET_PTR(buffers[i]))

/* ---- OpenCL task functions ------------------------------------------------ */

/* WSISA__CL_IMAGE(op, name, shape, args...): one kernel of op's program over
 * the image of `shape`, its arguments counted (wsisa__cl_image, ocl/ocl.h). */
#define WSISA__CL_IMAGE(op, name, shape, ...)                                           \
  wsisa__cl_image(&wsisa__##op##_program, name, shape,                                  \
                  (int)(sizeof((wsisa__cl_value[]){__VA_ARGS__}) /                      \
                        sizeof(wsisa__cl_value)),                                       \
                  (const wsisa__cl_value[]){__VA_ARGS__})
/* The Reinhard constants (wsisa_reinhard, codelets/cpu/cpu.h) uploaded
 * (codelets/rgb2lab.c; lab2rgb and color_transfer use them too). */
cl_mem wsisa__cl_reinhard(void);
/* Connected components by union-find on the calling OpenCL worker
 * (codelets/label.c; three launches, no wait on the host): a new dense
 * width x height int buffer in which every on pixel of `mask_buffer` (every
 * off pixel with `off`) holds the raster index + 1 of its component's first
 * pixel, 0 elsewhere. wsisa__cl_plateau_roots: the same for the plateaus of
 * an f32 image (components of equal value), every pixel labelled. */
cl_mem wsisa__cl_label_roots(void *mask_buffer, int conn, int off);
cl_mem wsisa__cl_plateau_roots(void *in_buffer, int conn);
/* After an operation's kernel marked roots of `lab` (turned their entry
 * negative): out_buffer (u8) 255 on the pixels whose root is marked, 0
 * elsewhere; with `invert` the reverse. */
void wsisa__cl_label_keep_marked(cl_mem lab, int invert, void *out_buffer);
/* reconstruct.c's grey reconstruction, shared with hmin: raise J in place
 * under mask until stable (u8 or f32); batches of block launches with one
 * read of an int between batches, at most 6 reads and 130 launches
 * (codelets/cl/reconstruct.cl). */
void wsisa__cl_reconstruct_run(wsisa__cl_matrix mask, wsisa__cl_matrix J, int conn,
                               int is_float, int width, int height);
#endif
