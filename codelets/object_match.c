/* Codelet: object Dice sums of a run's labels against the reference's (i32,
 * i32 -> vector of 2 uint64 on the 2^-20 grid; codelets/cpu/object_match.c). */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__OP_DECLARE(object_match);

static void object_match_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  wsisa_image ref = wsisa_image_from_buffer(buffers[0], WSISA_I32);
  wsisa_image run = wsisa_image_from_buffer(buffers[1], WSISA_I32);
  uint64_t *sums = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[2]);
  int rc = wsisa_cpu_object_match(&ref, &run, sums);
  STARPU_ASSERT(rc == 0);
  (void)rc;
}

static void object_match_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  cl_kernel scan, pairs, best, terms;
  cl_command_queue queue;
  wsisa__cl_kernel(&wsisa__object_match_program, "wsisa_object_match_scan", &scan, &queue);
  wsisa__cl_kernel(&wsisa__object_match_program, "wsisa_object_match_pairs", &pairs, &queue);
  wsisa__cl_kernel(&wsisa__object_match_program, "wsisa_object_match_best", &best, &queue);
  wsisa__cl_kernel(&wsisa__object_match_program, "wsisa_object_match_terms", &terms, &queue);
  cl_mem st = wsisa__cl_zeros(3 * sizeof(cl_int));
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(scan, &arg, buffers[0]);
  wsisa__cl_arg_matrix(scan, &arg, buffers[1]);
  wsisa__cl_arg(scan, &arg, sizeof st, &st);
  wsisa__cl_run_image(scan, queue, &arg, buffers[0]);
  cl_int n[3];
  wsisa__cl_check(clEnqueueReadBuffer(queue, st, CL_TRUE, 0, sizeof n, n, 0, NULL, NULL),
                  "label ranges");
  cl_ulong cap = 2;
  while (cap < 2 * (cl_ulong)n[2]) cap *= 2;
  const cl_ulong mask = cap - 1;
  cl_mem area_g = wsisa__cl_zeros(((size_t)n[0] + 1) * sizeof(cl_uint));
  cl_mem area_s = wsisa__cl_zeros(((size_t)n[1] + 1) * sizeof(cl_uint));
  cl_mem best_g = wsisa__cl_zeros(((size_t)n[0] + 1) * sizeof(cl_ulong));
  cl_mem best_s = wsisa__cl_zeros(((size_t)n[1] + 1) * sizeof(cl_ulong));
  cl_mem keys = wsisa__cl_zeros((size_t)cap * sizeof(cl_ulong));
  cl_mem count = wsisa__cl_zeros((size_t)cap * sizeof(cl_uint));
  cl_mem sums = wsisa__cl_zeros(2 * sizeof(cl_ulong));
  arg = 0;
  wsisa__cl_arg_matrix(pairs, &arg, buffers[0]);
  wsisa__cl_arg_matrix(pairs, &arg, buffers[1]);
  wsisa__cl_arg(pairs, &arg, sizeof area_g, &area_g);
  wsisa__cl_arg(pairs, &arg, sizeof area_s, &area_s);
  wsisa__cl_arg(pairs, &arg, sizeof keys, &keys);
  wsisa__cl_arg(pairs, &arg, sizeof count, &count);
  wsisa__cl_arg(pairs, &arg, sizeof mask, &mask);
  wsisa__cl_run_image(pairs, queue, &arg, buffers[0]);
  arg = 0;
  wsisa__cl_arg(best, &arg, sizeof keys, &keys);
  wsisa__cl_arg(best, &arg, sizeof count, &count);
  wsisa__cl_arg(best, &arg, sizeof best_g, &best_g);
  wsisa__cl_arg(best, &arg, sizeof best_s, &best_s);
  wsisa__cl_arg(best, &arg, sizeof cap, &cap);
  const size_t range = (size_t)cap;
  wsisa__cl_run(best, queue, 1, &range, NULL);
  arg = 0;
  wsisa__cl_arg(terms, &arg, sizeof area_g, &area_g);
  wsisa__cl_arg(terms, &arg, sizeof area_s, &area_s);
  wsisa__cl_arg(terms, &arg, sizeof best_g, &best_g);
  wsisa__cl_arg(terms, &arg, sizeof best_s, &best_s);
  wsisa__cl_arg(terms, &arg, sizeof n[0], &n[0]);
  wsisa__cl_arg(terms, &arg, sizeof n[1], &n[1]);
  wsisa__cl_arg(terms, &arg, sizeof sums, &sums);
  const size_t objects = (size_t)(n[0] > n[1] ? n[0] : n[1]) + (n[0] || n[1] ? 0 : 1);
  wsisa__cl_run(terms, queue, 1, &objects, NULL);
  cl_mem out = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[2]);
  size_t out_off = STARPU_VECTOR_GET_OFFSET(buffers[2]);
  cl_event ev;
  wsisa__cl_check(clEnqueueCopyBuffer(queue, sums, out, 0, out_off, 2 * sizeof(cl_ulong), 0,
                                      NULL, &ev),
                  "object match result");
  wsisa__cl_check(clWaitForEvents(1, &ev), "object match wait");
  clReleaseEvent(ev);
  cl_mem scratch[] = {st, area_g, area_s, best_g, best_s, keys, count, sums};
  for (size_t i = 0; i < sizeof scratch / sizeof *scratch; i++) clReleaseMemObject(scratch[i]);
  cl_kernel kernels[] = {scan, pairs, best, terms};
  for (size_t i = 0; i < 4; i++) starpu_opencl_release_kernel(kernels[i]);
}

/* The device must offer what the kernels' #if asks for. */
static int object_match_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl) {
  return wsisa__can_execute_fp64(workerid, task, nimpl) &&
         wsisa__cl_worker_has(workerid, "cl_khr_int64_base_atomics") &&
         wsisa__cl_worker_has(workerid, "cl_khr_int64_extended_atomics");
}

struct starpu_opencl_program wsisa__object_match_program;

struct starpu_perfmodel wsisa__object_match_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "wsisa_object_match_v1",
};

struct starpu_codelet wsisa__object_match_codelet = {
    .name = "object_match",
    .where = STARPU_CPU | STARPU_OPENCL,
    .cpu_funcs = {object_match_cpu},
    .opencl_funcs = {object_match_opencl},
    .can_execute = object_match_can_execute,
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &wsisa__object_match_model,
};

int wsisa_submit_object_match(starpu_data_handle_t ref_labels, starpu_data_handle_t run_labels,
                              starpu_data_handle_t sums) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){ref_labels, run_labels},
                            (size_t[]){4, 4}) ||
      wsisa__check_vector(sums, 2, sizeof(uint64_t)))
    return WSISA_EINTERNAL;
  int ret = WSISA__INSERT(&wsisa__object_match_codelet, STARPU_R, ref_labels, STARPU_R,
                          run_labels, STARPU_W, sums, 0);
  return ret ? WSISA_ERUNTIME : 0;
}
