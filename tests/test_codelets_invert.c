/* The invert codelet on the CPU worker and on the OpenCL worker, against each
 * other and against the definition. */
#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/io.h"
#include "tests/testutil.h"

static int submit_invert(starpu_data_handle_t *h, void *arg) {
  (void)arg;
  return wsisa_submit_invert(h[0], h[1], 0);
}

static wsisa_image *run_invert(wsisa_image *in, uint32_t where) {
  wsisa_image *out = NULL;
  cr_assert_eq(wsisa_image_new(in->width, in->height, 1, WSISA_U8, &out, NULL), 0);
  wsisa_image *imgs[] = {in, out};
  cr_assert_eq(tu_run_op(where, imgs, 2, submit_invert, NULL), 0);
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
