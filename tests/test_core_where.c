/* Messages name where a relative path was looked for: the folder it was
 * resolved from (wsisa_error_where), an absolute path as it is. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "tests/testutil.h"

Test(where, a_relative_path_names_its_folder) {
  char dir[WSISA_PATH_MAX], want[WSISA_NOTE_MAX];
  cr_assert_eq(chdir(tu_tmpdir("where")), 0);
  cr_assert_not_null(getcwd(dir, sizeof dir));
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_error(&e, WSISA_EIO, "tests/data/x.svs: No such file or directory");
  cr_expect_eq(wsisa_error_where(&e, WSISA_EIO, "tests/data/x.svs"), WSISA_EIO);
  snprintf(want, sizeof want, "tests/data/x.svs (from %s): No such file or directory", dir);
  cr_expect_str_eq(e.msg, want);
  /* an absolute path, another message, or no error: left as they are */
  e = (wsisa_err)WSISA_ERR_INIT;
  wsisa_error(&e, WSISA_EIO, "/data/x.svs: No such file or directory");
  wsisa_error_where(&e, WSISA_EIO, "/data/x.svs");
  cr_expect_str_eq(e.msg, "/data/x.svs: No such file or directory");
  e = (wsisa_err)WSISA_ERR_INIT;
  wsisa_error(&e, WSISA_EUSAGE, "S.json: inputs.level: 3 is not a level of x.svs");
  wsisa_error_where(&e, WSISA_EUSAGE, "x.svs");
  cr_expect_str_eq(e.msg, "S.json: inputs.level: 3 is not a level of x.svs");
  e = (wsisa_err)WSISA_ERR_INIT;
  cr_expect_eq(wsisa_error_where(&e, 0, "x.svs"), 0);
  cr_expect_str_eq(e.msg, "");
}
