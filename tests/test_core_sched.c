/* The scheduling policy, decided in one place (wsisa_sched_resolve): a
 * study's execution.scheduler, else STARPU_SCHED, else the caller's default,
 * else StarPU's; an unknown name refused, naming where it came from. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static void resolve(const char *env, const char *setting, const char *fallback,
                    const char *name, wsisa_sched_from from) {
  if (env) setenv("STARPU_SCHED", env, 1);
  else unsetenv("STARPU_SCHED");
  wsisa_sched s;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_sched_resolve(setting, "s.json", fallback, &s, &e), 0, "%s", e.msg);
  if (name) cr_expect_str_eq(s.name, name);
  else cr_expect_null(s.name);
  cr_expect_eq(s.from, from, "%s/%s/%s: from %s", env ? env : "-", setting ? setting : "-",
               fallback ? fallback : "-", wsisa_sched_from_name(s.from));
}

Test(sched, the_study_then_starpu_sched_then_the_default) {
  resolve("eager", "dmdas", "dmda", "dmdas", WSISA_SCHED_SETTING);
  resolve("eager", NULL, "dmda", "eager", WSISA_SCHED_ENV);
  resolve(NULL, NULL, "dmda", "dmda", WSISA_SCHED_DEFAULT);
  resolve(NULL, NULL, NULL, NULL, WSISA_SCHED_DEFAULT);
  resolve("pats", NULL, NULL, "pats", WSISA_SCHED_ENV);
  cr_expect_str_eq(wsisa_sched_from_name(WSISA_SCHED_SETTING), "execution.scheduler");
  cr_expect_str_eq(wsisa_sched_from_name(WSISA_SCHED_ENV), "STARPU_SCHED");
  cr_expect_str_eq(wsisa_sched_from_name(WSISA_SCHED_DEFAULT), "default");
}

Test(sched, unknown_names_where_it_came_from) {
  wsisa_sched s;
  wsisa_err e = WSISA_ERR_INIT;
  setenv("STARPU_SCHED", "eager", 1);
  cr_expect_eq(wsisa_sched_resolve("dmdaa", "s.json", NULL, &s, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "s.json: execution.scheduler: dmdaa: unknown scheduler (one of: "),
            "%s", e.msg);
  e = (wsisa_err)WSISA_ERR_INIT;
  setenv("STARPU_SCHED", "lwss", 1);
  cr_expect_eq(wsisa_sched_resolve(NULL, "s.json", "dmda", &s, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "STARPU_SCHED=lwss: unknown scheduler"), "%s", e.msg);
  /* a valid setting wins: the environment's typo is not looked at */
  e = (wsisa_err)WSISA_ERR_INIT;
  cr_expect_eq(wsisa_sched_resolve("eager", "s.json", NULL, &s, &e), 0, "%s", e.msg);
  unsetenv("STARPU_SCHED");
}
