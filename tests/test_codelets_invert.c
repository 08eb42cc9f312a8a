/* The invert codelet on the CPU worker and on the OpenCL worker, against each
 * other and against the definition. */
#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/io.h"
#include "tests/testutil.h"

static wsisa_image *run_invert(const wsisa_image *in, uint32_t where) {
  wsisa_image *src = NULL, *out = NULL;
  cr_assert_eq(wsisa_image_clone(in, &src, NULL), 0);
  cr_assert_eq(wsisa_image_new(in->width, in->height, 1, WSISA_U8, &out, NULL), 0);
  starpu_data_handle_t hin, hout;
  cr_assert_eq(wsisa_image_register(src, &hin, NULL), 0);
  cr_assert_eq(wsisa_image_register(out, &hout, NULL), 0);
  wsisa_codelets_set_where(where);
  cr_assert_eq(wsisa_submit_invert(hin, hout, 0), 0);
  starpu_task_wait_for_all();
  starpu_data_unregister(hin);
  starpu_data_unregister(hout);
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  wsisa_image_free(src);
  return out;
}

Test(invert, cpu_and_opencl_agree, .init = (void (*)(void))tu_starpu_start,
     .fini = tu_starpu_stop) {
  cr_assert(wsisa_runtime_active());
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker (PoCL)");
  wsisa_image *tile = NULL;
  cr_assert_eq(wsisa_image_read(tu_src("tests/data/tile_256.png"), &tile, NULL), 0);
  wsisa_image *cpu = run_invert(tile, STARPU_CPU);
  wsisa_image *cl = run_invert(tile, STARPU_OPENCL);
  cr_expect_eq(tu_image_diff(cpu, cl), 0);
  size_t wrong = 0;
  for (int y = 0; y < tile->height; y++)
    for (int x = 0; x < tile->width; x++)
      wrong += ((uint8_t *)wsisa_image_row(cpu, y))[x] !=
               255 - ((uint8_t *)wsisa_image_row(tile, y))[3 * x];
  cr_expect_eq(wrong, 0);
  wsisa_image_free(tile);
  wsisa_image_free(cpu);
  wsisa_image_free(cl);
}
