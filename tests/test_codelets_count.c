/* count_labels on both workers against hand-known answers. */
#include <criterion/criterion.h>

#include "codelets/codelets.h"
#include "tests/testutil.h"

static uint64_t count_on(wsisa_image *labels, uint32_t where) {
  uint64_t count = 12345;
  starpu_data_handle_t hl, hc;
  cr_assert_eq(wsisa_image_register(labels, &hl, NULL), 0);
  starpu_vector_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)&count, 1, sizeof count);
  wsisa_codelets_set_where(where);
  cr_assert_eq(wsisa_submit_count_labels(hl, hc), 0);
  starpu_task_wait_for_all();
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  starpu_data_unregister(hc);
  starpu_data_unregister(hl);
  return count;
}

Test(count_labels, both_workers, .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop) {
  cr_assert_gt(wsisa_runtime_nopencl(), 0, "no OpenCL worker");
  wsisa_image *labels = NULL;
  cr_assert_eq(wsisa_image_new(37, 11, 1, WSISA_I32, &labels, NULL), 0);
  cr_expect_eq(count_on(labels, STARPU_CPU), 0);
  cr_expect_eq(count_on(labels, STARPU_OPENCL), 0);
  ((int32_t *)wsisa_image_row(labels, 3))[5] = 2;
  ((int32_t *)wsisa_image_row(labels, 10))[36] = 7; /* last pixel */
  ((int32_t *)wsisa_image_row(labels, 0))[0] = 1;
  cr_expect_eq(count_on(labels, STARPU_CPU), 7);
  cr_expect_eq(count_on(labels, STARPU_OPENCL), 7);
  wsisa_image_free(labels);
}
