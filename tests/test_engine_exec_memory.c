/* --memory-limit bounds the whole process: run.json's peak RSS stays within
 * 10 % of the limit on the default study (6 tiles of 1024x1024, each read
 * with its halo of 128: up to 1280x1280) at 420M and 440M (two tiles open
 * at once are counted, each with level 2's two reconstructions: about 410M
 * is the least with one path) with K asked high enough that the limit
 * decides it, and a limit below
 * one path is refused with a smallest limit that then holds too. Peak RSS is
 * a measurement, not a timing: the tests compare it with the limit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tests/testutil.h"

/* run.json's peak_rss_kib and reuse.active_paths of a finished run. */
static long peak_kib(const char *dir, long *paths) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/run.json", dir);
  json_error_t err;
  json_t *root = json_load_file(path, 0, &err);
  cr_assert_not_null(root, "%s: %s", path, err.text);
  long peak = (long)json_integer_value(json_object_get(root, "peak_rss_kib"));
  *paths = (long)json_integer_value(json_object_get(json_object_get(root, "reuse"), "active_paths"));
  json_decref(root);
  return peak;
}

static void limit_holds(const char *study_flag, long limit_mib) {
#if defined(__SANITIZE_ADDRESS__)
  /* the sanitizer's shadow memory and quarantine are part of the RSS this
   * suite measures: the limits are about a normal build */
  cr_skip_test("ASan build: the sanitizer's own memory is in the peak RSS measured here");
#endif
  char dir[WSISA_PATH_MAX], cmd[9000], *err = NULL;
  tu_path(dir, "%s/r", tu_tmpdir("memory"));
  snprintf(cmd, sizeof cmd,
           "env STARPU_NCPU=2 %s run %s -o '%s' --active-paths 8 --memory-limit %ldM", WSISA_EXE,
           study_flag, dir, limit_mib);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s: %s", cmd, err);
  free(err);
  long paths = 0, peak = peak_kib(dir, &paths);
  cr_log_info("--memory-limit %ldM: peak RSS %.1f MiB with K = %ld\n", limit_mib, peak / 1024.0,
              paths);
  cr_expect_leq(peak, limit_mib * 1024 * 11 / 10, "peak RSS %ld KiB over %ldM + 10 %%", peak,
                limit_mib);
  cr_expect_geq(paths, 1);
}

Test(memory, default_study_at_420M, .timeout = 500) { limit_holds("", 420); }

Test(memory, default_study_at_440M, .timeout = 500) { limit_holds("", 440); }

/* Below one path: refused before the folder exists, naming a limit that works. */
Test(memory, a_limit_below_one_path_names_the_smallest_that_holds, .timeout = 300) {
  const char *tmp = tu_tmpdir("memory_min");
  char study[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], cmd[TU_LINE_MAX], *err = NULL;
  tu_path(study, "%s/study.json", tmp);
  tu_path(dir, "%s/r", tmp);
  FILE *f = fopen(study, "w");
  fprintf(f, "{ \"inputs\": { \"images\": [\"%s\"] },\n"
             "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 } }\n",
          tu_src("tests/data/tile_1024.png"));
  fclose(f);
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s run --study '%s' -o '%s' --memory-limit 40M",
           WSISA_EXE, study, dir);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 2, "%s", err);
  const char *at = err ? strstr(err, "give at least ") : NULL;
  cr_assert_not_null(at, "no smallest limit named: %s", err);
  long minimum = atol(at + strlen("give at least "));
  free(err);
  cr_assert_gt(minimum, 40);
  char flag[TU_LINE_MAX];
  snprintf(flag, sizeof flag, "--study '%s'", study);
  limit_holds(flag, minimum);
}
