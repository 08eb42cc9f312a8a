/* The one table of operations: it drives OpenCL program loading, `wsisa
 * --list-ops`, calibration and the tests. One row per operation, from the list of operations (WSISA__OPS,
 * codelets/codelets_private.h). */
#include <string.h>

#include "codelets/codelets_private.h"

#define ROW(op) {#op, &wsisa__##op##_codelet, wsisa_cl_##op, &wsisa__##op##_program, &wsisa__##op##_model},
#define ROW_CPU(op) {#op, &wsisa__##op##_codelet, NULL, NULL, &wsisa__##op##_model},

const wsisa_op wsisa_ops[] = {WSISA__OPS(ROW, ROW_CPU)};
const size_t wsisa_n_ops = sizeof wsisa_ops / sizeof *wsisa_ops;

const wsisa_op *wsisa_op_find(const char *name) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (strcmp(wsisa_ops[i].name, name) == 0) return &wsisa_ops[i];
  return NULL;
}

const wsisa_op *wsisa_op_of(const struct starpu_codelet *codelet) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (wsisa_ops[i].codelet == codelet) return &wsisa_ops[i];
  return NULL;
}
