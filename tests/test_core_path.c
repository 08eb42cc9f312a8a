/* Paths are built whole or refused: wsisa_path_fmt and wsisa_path_fmt_err
 * never hand back a cut path, and a refusal names the path in one line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "tests/testutil.h"

/* A folder name of `len` bytes: "/tmp/" and letters. */
static char *long_dir(size_t len) {
  char *d = malloc(len + 1);
  cr_assert_not_null(d);
  memset(d, 'd', len);
  memcpy(d, "/tmp/", 5);
  d[len] = '\0';
  return d;
}

Test(path, formats_a_path_that_fits) {
  char out[WSISA_PATH_MAX];
  errno = 0;
  cr_expect_eq(wsisa_path_fmt(out, "%s/%s", "results", "run.json"), 0);
  cr_expect_str_eq(out, "results/run.json");
  cr_expect_eq(errno, 0);
  /* the longest that fits: WSISA_PATH_MAX - 1 bytes */
  char *dir = long_dir(WSISA_PATH_MAX - 1 - strlen("/run.json"));
  cr_expect_eq(wsisa_path_fmt(out, "%s/run.json", dir), 0);
  cr_expect_eq(strlen(out), (size_t)WSISA_PATH_MAX - 1);
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_path_fmt_err(out, &e, "%s/run.json", dir), 0);
  cr_expect_eq(e.code, 0);
  cr_expect_str_eq(e.msg, "");
  free(dir);
}

Test(path, refuses_one_byte_too_many) {
  char out[WSISA_PATH_MAX];
  char *dir = long_dir(WSISA_PATH_MAX - strlen("/run.json"));
  errno = 0;
  cr_expect_eq(wsisa_path_fmt(out, "%s/run.json", dir), -1);
  cr_expect_eq(errno, ENAMETOOLONG);
  /* nothing of it is left to be opened by mistake */
  cr_expect_str_eq(out, "");
  free(dir);
}

Test(path, a_refusal_names_the_path_in_one_line) {
  char out[WSISA_PATH_MAX], want[128];
  char *dir = long_dir(5000);
  wsisa_err e = WSISA_ERR_INIT;
  errno = 0;
  cr_expect_eq(wsisa_path_fmt_err(out, &e, "%s/metrics.csv", dir), WSISA_EUSAGE);
  cr_expect_eq(errno, ENAMETOOLONG);
  cr_expect_eq(e.code, WSISA_EUSAGE);
  cr_expect_str_eq(out, "");
  /* its start (the folder) and its end (the file), the size and the limit */
  cr_expect(strncmp(e.msg, "/tmp/ddd", 8) == 0, "%s", e.msg);
  snprintf(want, sizeof want, "ddd/metrics.csv: path too long (5012 bytes, at most %d)",
           WSISA_PATH_MAX - 1);
  cr_expect(strstr(e.msg, "...ddd") != NULL, "%s", e.msg);
  cr_expect(strstr(e.msg, want) != NULL, "%s", e.msg);
  cr_expect(strchr(e.msg, '\n') == NULL);
  cr_expect_lt(strlen(e.msg), sizeof e.msg - 1, "the message is whole: %s", e.msg);
  /* the first error of a context stays */
  cr_expect_eq(wsisa_path_fmt_err(out, &e, "%s/other.csv", dir), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, want) != NULL, "%s", e.msg);
  free(dir);
}

Test(path, refuses_without_a_context) {
  char out[WSISA_PATH_MAX], *dir = long_dir(WSISA_PATH_MAX);
  errno = 0;
  cr_expect_eq(wsisa_path_fmt_err(out, NULL, "%s", dir), WSISA_EUSAGE);
  cr_expect_eq(errno, ENAMETOOLONG);
  free(dir);
}
