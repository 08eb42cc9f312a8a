/* core basics: the first error sticks, exit codes, images, scheduler names. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/core.h"
#include "tests/testutil.h"

Test(error, first_error_sticks) {
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_error(&e, WSISA_EIO, "first %d", 1), WSISA_EIO);
  cr_expect_eq(wsisa_error(&e, WSISA_EUSAGE, "second"), WSISA_EUSAGE);
  cr_expect_eq(e.code, WSISA_EIO);
  cr_expect_str_eq(e.msg, "first 1");
  cr_expect_eq(wsisa_exit_code(WSISA_EUSAGE), 2);
  cr_expect_eq(wsisa_exit_code(WSISA_EIO), 1);
  cr_expect_eq(wsisa_exit_code(WSISA_EFORMAT), 1);
  cr_expect_eq(wsisa_exit_code(0), 0);
}

Test(image, new_clone_view) {
  wsisa_image *a = NULL, *b = NULL;
  cr_assert_eq(wsisa_image_new(5, 3, 3, WSISA_U16, &a, NULL), 0);
  cr_expect_eq(a->stride, 30);
  ((uint16_t *)wsisa_image_row(a, 2))[14] = 777;
  cr_assert_eq(wsisa_image_clone(a, &b, NULL), 0);
  cr_expect_eq(((uint16_t *)wsisa_image_row(b, 2))[14], 777);
  cr_expect_eq(tu_image_diff(a, b), 0);
  ((uint16_t *)wsisa_image_row(b, 0))[0] = 1;
  cr_expect_eq(tu_image_diff(a, b), 1);
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_image *bad = NULL;
  cr_expect_neq(wsisa_image_new(0, 3, 1, WSISA_U8, &bad, &e), 0);
  cr_expect_null(bad);
  wsisa_image_free(a);
  wsisa_image_free(b);
}

Test(runtime, scheduler_names) {
  cr_expect(wsisa_sched_valid("dmda"));
  cr_expect(wsisa_sched_valid("eager"));
  cr_expect(wsisa_sched_valid("lws"));
  cr_expect(wsisa_sched_valid("pats"));
  cr_expect(!wsisa_sched_valid("dmdaa"));
  cr_expect(!wsisa_sched_valid(""));
  cr_expect(strstr(wsisa_sched_names(), "heft") != NULL);
}

Test(runtime, typo_in_scheduler_is_refused) {
  wsisa_runtime_opts opts = {.sched = "dmdaa", .ncpu = 1, .nopencl = 0};
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_runtime_init(&opts, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "dmdaa: unknown scheduler") != NULL, "%s", e.msg);
  cr_expect(!wsisa_runtime_active());
}
