/* The one table of operations: it drives OpenCL program loading, `wsisa
 * --list-ops`, calibration and the tests. One row per operation. */
#include <string.h>

#include "codelets/codelets_private.h"

WSISA__OP_DECLARE(invert);
/* morph: mathematical morphology */
WSISA__OP_DECLARE(morph);
WSISA__OP_DECLARE(reconstruct);
WSISA__OP_DECLARE(bin_reconstruct);
WSISA__OP_DECLARE(fill_holes);
WSISA__OP_DECLARE(hmin);
WSISA__OP_DECLARE(regional_min);

#define ROW(op) {#op, &wsisa__##op##_codelet, wsisa_cl_##op, &wsisa__##op##_program, &wsisa__##op##_model}

const wsisa_op wsisa_ops[] = {
    ROW(invert),
    /* morph: mathematical morphology */
    ROW(morph),
    ROW(reconstruct),
    ROW(bin_reconstruct),
    ROW(fill_holes),
    ROW(hmin),
    ROW(regional_min),
};
const size_t wsisa_n_ops = sizeof wsisa_ops / sizeof *wsisa_ops;

const wsisa_op *wsisa_op_find(const char *name) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (strcmp(wsisa_ops[i].name, name) == 0) return &wsisa_ops[i];
  return NULL;
}
