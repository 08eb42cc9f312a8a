/* The one table of operations: it drives OpenCL program loading, `wsisa
 * --list-ops`, calibration and the tests. One row per operation. */
#include <string.h>

#include "codelets/codelets_private.h"

WSISA__OP_DECLARE(invert);
/* objects: labelling, size filters, distance transform, watershed */
WSISA__OP_DECLARE(label);
WSISA__OP_DECLARE(area_filter);
WSISA__OP_DECLARE(edt);
WSISA__OP_DECLARE(watershed);

#define ROW(op) {#op, &wsisa__##op##_codelet, wsisa_cl_##op, &wsisa__##op##_program, &wsisa__##op##_model}

const wsisa_op wsisa_ops[] = {
    ROW(invert),
    /* objects */
    ROW(label),
    ROW(area_filter),
    ROW(edt),
    ROW(watershed),
};
const size_t wsisa_n_ops = sizeof wsisa_ops / sizeof *wsisa_ops;

const wsisa_op *wsisa_op_find(const char *name) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (strcmp(wsisa_ops[i].name, name) == 0) return &wsisa_ops[i];
  return NULL;
}
