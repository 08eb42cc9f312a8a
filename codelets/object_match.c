/* Codelet: object matching of a run's labels against the reference's (i32,
 * i32 -> vector of WSISA_MATCH_FIELDS uint64 sums: object Dice, F1 counts,
 * AJI; codelets/cpu/object_match.c). */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

static int object_match_can_execute(unsigned workerid, struct starpu_task *task,
                                    unsigned nimpl);
#define OPTIONS NULL, object_match_can_execute
WSISA__CODELET(object_match, 2, OPTIONS, STARPU_R, STARPU_R, STARPU_W);

WSISA__CPU_TASK(object_match, void,
                wsisa_cpu_object_match(WSISA__IMAGE(0, I32), WSISA__IMAGE(1, I32),
                                       WSISA__VECTOR(2, uint64_t)))

static void object_match_opencl(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  enum { SCAN, PAIRS, BEST, REF_TERMS, RUN_TERMS, NKERNELS };
  static const char *const names[NKERNELS] = {
      "wsisa_object_match_scan", "wsisa_object_match_pairs", "wsisa_object_match_best",
      "wsisa_object_match_ref_terms", "wsisa_object_match_run_terms"};
  cl_kernel k[NKERNELS];
  cl_command_queue queue;
  for (int i = 0; i < NKERNELS; i++)
    wsisa__cl_kernel(&wsisa__object_match_program, names[i], &k[i], &queue);
  cl_mem st = wsisa__cl_zeros(3 * sizeof(cl_int));
  cl_uint arg = 0;
  wsisa__cl_arg_matrix(k[SCAN], &arg, buffers[0]);
  wsisa__cl_arg_matrix(k[SCAN], &arg, buffers[1]);
  wsisa__cl_arg(k[SCAN], &arg, sizeof st, &st);
  wsisa__cl_run_image(k[SCAN], queue, &arg, buffers[0]);
  cl_int n[3];
  wsisa__cl_check(clEnqueueReadBuffer(queue, st, CL_TRUE, 0, sizeof n, n, 0, NULL, NULL),
                  "label ranges");
  cl_ulong cap = 2;
  while (cap < 2 * (cl_ulong)n[2]) cap *= 2;
  const cl_ulong mask = cap - 1;
  const size_t per_g = (size_t)n[0] + 1, per_s = (size_t)n[1] + 1;
  cl_mem area_g = wsisa__cl_zeros(per_g * sizeof(cl_uint));
  cl_mem area_s = wsisa__cl_zeros(per_s * sizeof(cl_uint));
  cl_mem best_g = wsisa__cl_zeros(per_g * sizeof(cl_ulong));
  cl_mem best_s = wsisa__cl_zeros(per_s * sizeof(cl_ulong));
  cl_mem cand_g = wsisa__cl_zeros(per_g * sizeof(cl_uint));
  cl_mem cand_s = wsisa__cl_zeros(per_s * sizeof(cl_uint));
  cl_mem partner = wsisa__cl_zeros(per_g * sizeof(cl_uint));
  cl_mem taken = wsisa__cl_zeros(per_s * sizeof(cl_uint));
  cl_mem keys = wsisa__cl_zeros((size_t)cap * sizeof(cl_ulong));
  cl_mem count = wsisa__cl_zeros((size_t)cap * sizeof(cl_uint));
  cl_mem sums = wsisa__cl_zeros(WSISA_MATCH_FIELDS * sizeof(cl_ulong));
#define ARG(kernel, mem) wsisa__cl_arg(k[kernel], &arg, sizeof(mem), &(mem))
  arg = 0;
  wsisa__cl_arg_matrix(k[PAIRS], &arg, buffers[0]);
  wsisa__cl_arg_matrix(k[PAIRS], &arg, buffers[1]);
  ARG(PAIRS, area_g);
  ARG(PAIRS, area_s);
  ARG(PAIRS, keys);
  ARG(PAIRS, count);
  ARG(PAIRS, mask);
  wsisa__cl_run_image(k[PAIRS], queue, &arg, buffers[0]);
  arg = 0;
  ARG(BEST, keys);
  ARG(BEST, count);
  ARG(BEST, area_g);
  ARG(BEST, area_s);
  ARG(BEST, best_g);
  ARG(BEST, best_s);
  ARG(BEST, cand_g);
  ARG(BEST, cand_s);
  ARG(BEST, partner);
  ARG(BEST, cap);
  const size_t slots = (size_t)cap;
  wsisa__cl_run(k[BEST], queue, 1, &slots, NULL);
  arg = 0;
  ARG(REF_TERMS, keys);
  ARG(REF_TERMS, count);
  ARG(REF_TERMS, area_g);
  ARG(REF_TERMS, area_s);
  ARG(REF_TERMS, best_g);
  ARG(REF_TERMS, cand_g);
  ARG(REF_TERMS, cand_s);
  ARG(REF_TERMS, partner);
  ARG(REF_TERMS, taken);
  ARG(REF_TERMS, n[0]);
  ARG(REF_TERMS, sums);
  const size_t ref_objects = n[0] > 0 ? (size_t)n[0] : 1;
  wsisa__cl_run(k[REF_TERMS], queue, 1, &ref_objects, NULL);
  arg = 0;
  ARG(RUN_TERMS, area_g);
  ARG(RUN_TERMS, area_s);
  ARG(RUN_TERMS, best_s);
  ARG(RUN_TERMS, cand_g);
  ARG(RUN_TERMS, cand_s);
  ARG(RUN_TERMS, taken);
  ARG(RUN_TERMS, n[1]);
  ARG(RUN_TERMS, sums);
#undef ARG
  const size_t run_objects = n[1] > 0 ? (size_t)n[1] : 1;
  wsisa__cl_run(k[RUN_TERMS], queue, 1, &run_objects, NULL);
  cl_mem out = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[2]);
  size_t out_off = STARPU_VECTOR_GET_OFFSET(buffers[2]);
  cl_event ev;
  wsisa__cl_check(clEnqueueCopyBuffer(queue, sums, out, 0, out_off,
                                      WSISA_MATCH_FIELDS * sizeof(cl_ulong), 0, NULL, &ev),
                  "object match result");
  wsisa__cl_check(clWaitForEvents(1, &ev), "object match wait");
  clReleaseEvent(ev);
  cl_mem scratch[] = {st,      area_g,  area_s, best_g, best_s, cand_g,
                      cand_s,  partner, taken,  keys,   count,  sums};
  for (size_t i = 0; i < sizeof scratch / sizeof *scratch; i++) clReleaseMemObject(scratch[i]);
  for (int i = 0; i < NKERNELS; i++) starpu_opencl_release_kernel(k[i]);
}

/* The device must offer what the kernels' #if asks for. */
static int object_match_can_execute(unsigned workerid, struct starpu_task *task,
                                    unsigned nimpl) {
  return wsisa__can_execute_fp64(workerid, task, nimpl) &&
         wsisa__cl_worker_has(workerid, "cl_khr_int64_base_atomics") &&
         wsisa__cl_worker_has(workerid, "cl_khr_int64_extended_atomics");
}

int wsisa_submit_object_match(starpu_data_handle_t ref_labels, starpu_data_handle_t run_labels,
                              starpu_data_handle_t sums) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){ref_labels, run_labels},
                            (size_t[]){4, 4}) ||
      wsisa__check_vector(sums, WSISA_MATCH_FIELDS, sizeof(uint64_t)))
    return WSISA_EINTERNAL;
  return WSISA__SUBMIT(object_match, NULL, 0, ref_labels, run_labels, sums);
}
