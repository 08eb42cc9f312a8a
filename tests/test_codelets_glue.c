/* The workflow's glue operations (count_labels, neg_dist) on both workers
 * against hand-known answers. */
#include <float.h>
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

static int submit_neg_dist(starpu_data_handle_t *h, void *arg) {
  (void)arg;
  return wsisa_submit_neg_dist(h[0], h[1], h[2]);
}

Test(neg_dist, both_workers, .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop) {
  wsisa_image *dist = NULL, *mask = NULL, *out[2] = {NULL, NULL};
  cr_assert_eq(wsisa_image_new(19, 7, 1, WSISA_F32, &dist, NULL), 0);
  cr_assert_eq(wsisa_image_new(19, 7, 1, WSISA_U8, &mask, NULL), 0);
  for (int y = 0; y < 7; y++)
    for (int x = 0; x < 19; x++) {
      ((float *)wsisa_image_row(dist, y))[x] = 0.25f * (float)(x + y);
      ((uint8_t *)wsisa_image_row(mask, y))[x] = (x + 2 * y) % 3 ? 255 : 0;
    }
  const uint32_t where[2] = {STARPU_CPU, STARPU_OPENCL};
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(wsisa_image_new(19, 7, 1, WSISA_F32, &out[k], NULL), 0);
    wsisa_image *imgs[] = {dist, mask, out[k]};
    cr_assert_eq(tu_run_op(where[k], imgs, 3, submit_neg_dist, NULL), 0);
  }
  cr_expect_eq(tu_image_diff(out[0], out[1]), 0);
  size_t wrong = 0;
  for (int y = 0; y < 7; y++)
    for (int x = 0; x < 19; x++) {
      float want = ((uint8_t *)wsisa_image_row(mask, y))[x] ? -0.25f * (float)(x + y) : -FLT_MAX;
      wrong += ((float *)wsisa_image_row(out[0], y))[x] != want;
    }
  cr_expect_eq(wrong, 0);
  wsisa_image_free(dist);
  wsisa_image_free(mask);
  wsisa_image_free(out[0]);
  wsisa_image_free(out[1]);
}
