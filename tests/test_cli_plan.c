/* `wsisa plan`: the report of a study's design and of the same design read
 * back from CSV, checked for the relations every plan must satisfy. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static json_t *plan_json(const char *args) {
  char *out = NULL, *err = NULL;
  int rc = tu_run(args, &out, &err);
  cr_assert_eq(rc, 0, "wsisa %s: exit %d: %s", args, rc, err ? err : "");
  json_error_t jerr;
  json_t *root = json_loads(out, 0, &jerr);
  cr_assert_not_null(root, "not JSON: %s (%s)", jerr.text, out);
  free(out);
  free(err);
  return root;
}

static json_int_t int_of(const json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  cr_assert(json_is_integer(v), "%s: not an integer", key);
  return json_integer_value(v);
}

static const json_t *strategy(const json_t *root, const char *name) {
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(root, "strategies"), i, s)
    if (strcmp(json_string_value(json_object_get(s, "strategy")), name) == 0) return s;
  cr_assert_fail("no strategy %s", name);
  return NULL;
}

static void check_plan(const json_t *root, json_int_t max_buckets, json_int_t bucket_size) {
  json_int_t runs = int_of(root, "runs"), distinct = int_of(root, "distinct_stage_instances");
  json_int_t none = int_of(root, "tasks_no_reuse"), stage = int_of(root, "tasks_stage_level");
  json_int_t lower = int_of(root, "tasks_lower_bound");
  cr_assert_eq(none, 7 * runs);
  cr_assert_eq(stage, 7 * distinct);
  cr_assert_lt(lower, stage, "a MOAT design shares task prefixes");
  const char *names[] = {"stage", "naive", "sca", "rtma", "trtma"};
  for (size_t i = 0; i < 5; i++) {
    const json_t *s = strategy(root, names[i]);
    json_int_t tasks = int_of(s, "tasks"), buckets = int_of(s, "buckets");
    cr_assert(tasks >= lower && tasks <= stage, "%s: %lld tasks outside [%lld, %lld]", names[i],
              (long long)tasks, (long long)lower, (long long)stage);
    cr_assert_geq(int_of(s, "peak_intermediates"), 1);
    if (i == 0) cr_assert_eq(buckets, distinct);
    else if (i == 4) cr_assert_eq(buckets, max_buckets);
    else cr_assert_leq(int_of(s, "largest_bucket_instances"), bucket_size, "%s", names[i]);
  }
  cr_assert(json_is_true(json_object_get(strategy(root, "trtma"), "selected")));
  cr_assert(json_is_false(json_object_get(strategy(root, "rtma"), "selected")));
}

Test(reuse_plan, study_design_and_csv_agree) {
  char args[TU_LINE_MAX];
  const char *study = tu_src("tests/studies/moat_segmentation.json");
  snprintf(args, sizeof args, "plan --study %s --json", study);
  json_t *own = plan_json(args);
  cr_assert_eq(int_of(own, "runs"), 160, "10 trajectories of 16 runs");
  cr_assert_eq(int_of(own, "active_paths"), 2, "the study's reuse.active_paths");
  check_plan(own, 6, 8); /* wsisa run's default bucket size */

  /* The same design as `wsisa sample` writes it, planned from the CSV. */
  char csv[1024];
  snprintf(csv, sizeof csv, "%s/samples.csv", tu_tmpdir("reuse_plan"));
  snprintf(args, sizeof args, "sample --study %s -o %s", study, csv);
  cr_assert_eq(tu_run(args, NULL, NULL), 0);
  snprintf(args, sizeof args, "plan --study %s --samples %s --json", study, csv);
  json_t *read = plan_json(args);
  const char *same[] = {"runs", "distinct_stage_instances", "tasks_lower_bound"};
  for (size_t i = 0; i < 3; i++) cr_expect_eq(int_of(read, same[i]), int_of(own, same[i]), "%s", same[i]);
  const char *names[] = {"naive", "rtma", "trtma"};
  for (size_t i = 0; i < 3; i++)
    cr_expect_eq(int_of(strategy(read, names[i]), "tasks"), int_of(strategy(own, names[i]), "tasks"),
                 "%s", names[i]);
  json_decref(own);
  json_decref(read);
}

Test(reuse_plan, fixed_columns_may_be_absent_and_costs_weigh) {
  /* A CSV naming only the varying parameters of a VBD study: the fixed ones
   * take their study values. */
  const char *dir = tu_tmpdir("reuse_plan_costs");
  char study[1024], csv[1024], args[TU_LINE_MAX];
  snprintf(study, sizeof study, "%s/study.json", dir);
  snprintf(csv, sizeof csv, "%s/design.csv", dir);
  FILE *f = fopen(study, "w");
  cr_assert_not_null(f);
  fputs("{ \"inputs\": { \"slides\": [\"x.svs\"] },\n"
        "  \"parameters\": { \"G1\": {}, \"G2\": {} },\n"
        "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
        "  \"reuse\": { \"strategy\": \"rtma\", \"max_bucket_size\": 2 } }\n", f);
  fclose(f);
  f = fopen(csv, "w");
  cr_assert_not_null(f);
  /* Four runs: two share G1 (level 3), one repeats another exactly. */
  fputs("run_id,G1,G2\n0,80,45\n1,80,20\n2,40,45\n3,80,45\n", f);
  fclose(f);
  snprintf(args, sizeof args,
           "plan --study %s --samples %s --json --level-costs 1,1,10,1,1,1,1", study, csv);
  json_t *root = plan_json(args);
  cr_assert_eq(int_of(root, "runs"), 4);
  cr_assert_eq(int_of(root, "distinct_stage_instances"), 3);
  /* Levels 1-2 shared by all; G1 80 and 40 split levels 3-4; G2 (level 5)
   * splits the 80 branch: 1 + 1 + 2 + 2 + 3 + 3 + 3 = 15. */
  cr_assert_eq(int_of(root, "tasks_lower_bound"), 15);
  const json_t *stage = strategy(root, "stage");
  cr_assert_float_eq(json_real_value(json_object_get(stage, "largest_bucket_cost")), 16, 1e-9,
                     "one instance: 1 + 1 + 10 + 4");
  cr_assert(json_is_true(json_object_get(strategy(root, "rtma"), "selected")));
  cr_assert_str_eq(json_string_value(json_object_get(root, "cost_model")), "level_costs");
  json_decref(root);
}
