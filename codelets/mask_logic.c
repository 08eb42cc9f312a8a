/* Codelet: binary mask logic AND / OR / AND NOT (u8, u8 -> u8 mask). */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

WSISA__CODELET(mask_logic, 2, WSISA__PLAIN, STARPU_R, STARPU_R, STARPU_W);

/* The kernels take the operation as this integer. */
_Static_assert(WSISA_MASK_AND == 0 && WSISA_MASK_OR == 1 && WSISA_MASK_ANDNOT == 2,
               "codelets/cpu/mask_logic.c and cl/mask_logic.cl number the ops so");

struct mask_logic_args {
  int op;
};

WSISA__CPU_TASK(mask_logic, struct mask_logic_args,
                wsisa_cpu_mask_logic(WSISA__IMAGE(0, U8), WSISA__IMAGE(1, U8), a->op,
                                     WSISA__IMAGE(2, U8)))

static void mask_logic_opencl(void *buffers[], void *cl_arg) {
  const struct mask_logic_args *a = cl_arg;
  cl_int op = a->op;
  WSISA__CL_IMAGE(mask_logic, "wsisa_mask_logic", buffers[0], WSISA__CL_MAT(buffers[0]),
                  WSISA__CL_MAT(buffers[1]), WSISA__CL_VAL(op), WSISA__CL_MAT(buffers[2]));
}

int wsisa_submit_mask_logic(starpu_data_handle_t a, starpu_data_handle_t b,
                            starpu_data_handle_t out, wsisa_mask_op op) {
  if (wsisa__check_matrices(3, (starpu_data_handle_t[]){a, b, out}, (size_t[]){1, 1, 1}))
    return WSISA_EINTERNAL;
  if (op != WSISA_MASK_AND && op != WSISA_MASK_OR && op != WSISA_MASK_ANDNOT)
    return WSISA_EUSAGE;
  const struct mask_logic_args args = {.op = (int)op};
  return WSISA__SUBMIT(mask_logic, &args, sizeof args, a, b, out);
}
