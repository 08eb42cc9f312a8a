/* The one table of operations: it drives OpenCL program loading (below),
 * `wsisa --list-ops`, calibration and the tests. One row per operation, from the list of operations
 * (WSISA__OPS, codelets/codelets_private.h). */
#include <string.h>

#include "codelets/codelets_private.h"

#define ROW(op) \
  {#op, &wsisa__##op##_codelet, wsisa_cl_##op, &wsisa__##op##_program, &wsisa__##op##_model},
#define ROW_CPU(op) {#op, &wsisa__##op##_codelet, NULL, NULL, &wsisa__##op##_model},

const wsisa_op wsisa_ops[] = {WSISA__OPS(ROW, ROW_CPU)};
const size_t wsisa_n_ops = sizeof wsisa_ops / sizeof *wsisa_ops;

const wsisa_op *wsisa_op_of(const struct starpu_codelet *codelet) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (wsisa_ops[i].codelet == codelet) return &wsisa_ops[i];
  return NULL;
}

int wsisa_codelets_load_opencl(wsisa_err *e) {
  for (size_t i = 0; i < wsisa_n_ops; i++) {
    const wsisa_op *op = &wsisa_ops[i];
    if (!op->cl_source) continue;
    int ret = starpu_opencl_load_opencl_from_string(op->cl_source, op->program,
                                                    WSISA_CL_BUILD_OPTIONS);
    if (ret) {
      for (size_t j = 0; j < i; j++)
        if (wsisa_ops[j].cl_source) starpu_opencl_unload_opencl(wsisa_ops[j].program);
      return wsisa_error(e, WSISA_ERUNTIME,
                         "OpenCL program of operation '%s' failed to build", op->name);
    }
  }
  return 0;
}

void wsisa_codelets_unload_opencl(void) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (wsisa_ops[i].cl_source) starpu_opencl_unload_opencl(wsisa_ops[i].program);
  /* the next StarPU may number its workers differently */
  wsisa__cl_worker_forget();
}

int wsisa_codelets_start(const wsisa_runtime_opts *opts, wsisa_err *e) {
  wsisa_runtime_opts o = {.ncpu = -1, .nopencl = -1};
  if (opts) o = *opts;
  o.load_programs = wsisa_codelets_load_opencl;
  o.unload_programs = wsisa_codelets_unload_opencl;
  return wsisa_runtime_init(&o, e);
}
