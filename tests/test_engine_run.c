/* `wsisa run` end to end on a small MOAT study over a tile of the sample: the
 * same metrics whatever the reuse strategy and the scheduler, and a run killed
 * part-way finishes with --resume to the same outputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <starpu.h>

#include "codelets/cpu/cpu.h"
#include "io/csv.h"
#include "io/io.h"
#include "tests/testutil.h"

static const char *write_study(const char *dir, const char *tile, int trajectories) {
  static char path[WSISA_PATH_MAX];
  tu_path(path, "%s/study.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"T1\": {}, \"recon_conn\": {},\n"
          "                    \"min_size_pl\": {}, \"watershed_conn\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": %d, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
          "  \"metric\": [\"dice\", \"jaccard\", \"object_dice\", \"object_f1\",\n"
          "              \"object_precision\", \"object_recall\", \"aji\"] }\n",
          tu_src(tile), trajectories);
  fclose(f);
  return path;
}

static char *run_study(const char *study, const char *env, const char *flags, char *out_dir,
                       size_t cap) {
  snprintf(out_dir, cap, "%s/results", tu_tmpdir("run"));
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s %s run --study '%s' -o '%s' %s",
           env, WSISA_EXE, study, out_dir, flags);
  char *err = NULL;
  int status = tu_run_shell(cmd, NULL, &err);
  cr_assert_eq(status, 0, "%s failed: %s", cmd, err ? err : "");
  free(err);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/metrics.csv", out_dir);
  char *metrics = tu_slurp(path, NULL);
  cr_assert_not_null(metrics, "no %s", path);
  return metrics;
}

Test(run, same_metrics_for_every_strategy_and_scheduler, .timeout = 500) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_256.png", 2);
  char dir[WSISA_PATH_MAX];
  /* no reuse of any kind: every variant below has object reuse on (its default) */
  char *base = run_study(study, "STARPU_SCHED=eager", "--reuse none --object-reuse off", dir,
                         sizeof dir);
  /* a header and 2 trajectories x 7 runs */
  size_t lines = 0;
  for (const char *p = base; *p; p++) lines += *p == '\n';
  cr_expect_eq(lines, 15);
  cr_expect(strstr(base, ",dice,jaccard,nucleus_count,mean_area,object_dice,object_f1,"
                         "object_precision,object_recall,aji,") != NULL,
            "metrics header: %.300s", base);
  /* the reference segments 93 nuclei on this tile, as many as the
   * independent tests/golden/workflow/tile_256_default.png holds (4- or
   * 8-connected alike; wsisa segment --labels agrees) */
  char metrics_csv[WSISA_PATH_MAX];
  tu_path(metrics_csv, "%s/metrics.csv", dir);
  wsisa_csv *mc = NULL;
  cr_assert_eq(wsisa_csv_read(metrics_csv, &mc, NULL), 0);
  double ref_count = 0;
  cr_assert_eq(wsisa_csv_number(mc, 0, (size_t)wsisa_csv_column(mc, "reference_nucleus_count"),
                                &ref_count, NULL),
               0);
  cr_expect_eq(ref_count, 93, "reference nucleus count %g", ref_count);
  wsisa_csv_free(mc);
  static const char *const variants[][2] = {
      {"STARPU_SCHED=eager", "--reuse stage"}, {"STARPU_SCHED=lws", "--reuse rtma --max-bucket-size 3"},
      {"STARPU_SCHED=dmda", "--reuse trtma --max-buckets 2"},
      /* the OpenCL worker on: tasks land on either kind of worker */
      {"STARPU_SCHED=dmda STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse trtma"},
      {"STARPU_SCHED=eager STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse none"},
      {"STARPU_SCHED=pats STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse trtma"},
      {"STARPU_SCHED=eager", "--reuse trtma --active-paths 1"},
      {"STARPU_SCHED=eager", "--reuse naive --max-bucket-size 4"},
      {"STARPU_SCHED=eager", "--reuse sca --max-bucket-size 4"}};
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    char *m = run_study(study, variants[i][0], variants[i][1], dir, sizeof dir);
    cr_expect_str_eq(m, base, "%s %s: metrics differ", variants[i][0], variants[i][1]);
    free(m);
  }
  /* the same design through a CSV, as `wsisa sample` writes it */
  char samples[WSISA_PATH_MAX], args[9000], csv_dir[WSISA_PATH_MAX];
  tu_path(samples, "%s/samples.csv", tu_tmpdir("samples"));
  snprintf(args, sizeof args, "sample --study '%s' -o '%s'", study, samples);
  cr_assert_eq(tu_run(args, NULL, NULL), 0);
  snprintf(args, sizeof args, "--reuse trtma --samples '%s'", samples);
  char *from_csv = run_study(study, "", args, csv_dir, sizeof csv_dir);
  cr_expect_str_eq(from_csv, base, "--samples: metrics differ");
  free(from_csv);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/indices.csv", dir);
  char *indices = tu_slurp(path, NULL);
  cr_expect_not_null(indices, "no indices.csv");
  free(indices);
  tu_path(path, "%s/run.json", dir);
  char *prov = tu_slurp(path, NULL);
  cr_expect(prov && strstr(prov, "\"peak_rss_kib\"") && strstr(prov, "\"scheduler\""),
            "run.json lacks provenance");
  /* the last run's policy, and where it came from */
  cr_expect(prov && strstr(prov, "\"scheduler\": \"eager\"") &&
                strstr(prov, "\"scheduler_from\": \"STARPU_SCHED\""),
            "run.json: %s", prov ? prov : "");
  free(prov);
  free(base);
}

/* A number after "key": in run.json; -1 when absent. */
static double json_number(const char *text, const char *key) {
  char pattern[128];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *at = text ? strstr(text, pattern) : NULL;
  double v = -1;
  if (at && sscanf(at + strlen(pattern), "%lf", &v) != 1) v = -1;
  return v;
}

/* Object reuse (levels 6-7 per object group, groups seen before taken from
 * the tile's store) gives the same metrics, byte for byte, under every
 * strategy, on CPU workers, with the OpenCL worker and on the OpenCL worker
 * alone, with K = 1 too. The study varies level 6's and 7's parameters as
 * well. */
Test(run, same_metrics_with_object_reuse_on_and_off, .timeout = 900) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/study.json", tu_tmpdir("objstudy"));
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"T1\": {}, \"min_size_pl\": {},\n"
          "                    \"watershed_conn\": {}, \"min_size_seg\": {},\n"
          "                    \"fill_holes_conn\": {} },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 3 },\n"
          "  \"metric\": [\"dice\", \"jaccard\", \"nucleus_count\", \"object_dice\"] }\n",
          tu_src("tests/data/tile_256_b.png"));
  fclose(f);
  char dir[WSISA_PATH_MAX], flags[256], json[WSISA_PATH_MAX];
  char *base = run_study(path, "STARPU_SCHED=eager", "--reuse none --object-reuse off", dir,
                         sizeof dir);
  tu_path(json, "%s/run.json", dir);
  char *prov = tu_slurp(json, NULL);
  cr_expect_eq(json_number(prov, "seen"), 0, "object reuse off, yet groups were seen");
  free(prov);
  static const char *const workers[] = {
      "STARPU_SCHED=lws",
      /* the OpenCL worker on: fine-grain tasks land on either kind */
      "STARPU_SCHED=dmda STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1",
      /* the OpenCL worker alone: levels 6 and 7 by objects on it too (PoCL
       * is slow: one strategy) */
      "STARPU_SCHED=eager STARPU_NCPU=0 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1"};
  static const char *const strategies[] = {"trtma", "none", "stage", "naive --max-bucket-size 4",
                                           "sca --max-bucket-size 4", "rtma",
                                           "trtma --active-paths 1", "rtma --active-paths 1"};
  for (size_t w = 0; w < 3; w++)
    for (size_t k = 0; k < (w < 2 ? sizeof strategies / sizeof *strategies : 1); k++)
      for (int on = 0; on < 2; on++) {
        snprintf(flags, sizeof flags, "--reuse %s --object-reuse %s", strategies[k],
                 on ? "on" : "off");
        char *m = run_study(path, workers[w], flags, dir, sizeof dir);
        cr_expect_str_eq(m, base, "%s %s: metrics differ", workers[w], flags);
        free(m);
        tu_path(json, "%s/run.json", dir);
        prov = tu_slurp(json, NULL);
        double seen = json_number(prov, "seen"), reused = json_number(prov, "reused");
        if (on) {
          cr_expect_gt(seen, 100, "%s %s: %g groups seen", workers[w], flags, seen);
          cr_expect_gt(reused, 0, "%s %s: no group reused", workers[w], flags);
          /* level 6's clusters in pixels too: some taken, never more than seen */
          double area = json_number(prov, "area"), area_reused = json_number(prov, "area_reused");
          cr_expect_gt(area_reused, 0, "%s %s: no pixels reused", workers[w], flags);
          cr_expect_leq(area_reused, area, "%s %s: %g of %g pixels reused", workers[w], flags,
                        area_reused, area);
        } else {
          cr_expect_eq(seen, 0, "%s %s: %g groups seen", workers[w], flags, seen);
        }
        free(prov);
      }
  free(base);
}

Test(run, killed_run_resumes_to_the_same_outputs, .timeout = 500) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_1024.png", 2);
  char ref_dir[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], journal[WSISA_PATH_MAX];
  char *ref = run_study(study, "", "--reuse none", ref_dir, sizeof ref_dir);

  tu_path(dir, "%s/results", tu_tmpdir("killed"));
  tu_path(journal, "%s/journal.csv", dir);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    setenv("STARPU_NCPU", "2", 1);
    execl(WSISA_EXE, WSISA_EXE, "run", "--study", study, "-o", dir, "--reuse", "none",
          (char *)NULL);
    _exit(127);
  }
  /* kill it once a few units are in the journal */
  size_t seen = 0;
  for (int i = 0; i < 60000 && seen < 4; i++) {
    nanosleep(&(struct timespec){0, 5000000}, NULL);
    seen = tu_count_lines(journal);
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      pid = -1;
      break;
    }
  }
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
  size_t at_kill = tu_count_lines(journal);
  cr_log_info("journal lines at kill: %zu of 15\n", at_kill);
  cr_expect_lt(at_kill, 15, "the run finished before it could be killed");
  char args[8800], *err = NULL;
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  cr_assert_eq(tu_run(args, NULL, &err), 0, "resume failed: %s", err ? err : "");
  free(err);
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/metrics.csv", dir);
  char *resumed = tu_slurp(path, NULL);
  cr_assert_not_null(resumed);
  cr_expect_str_eq(resumed, ref);
  free(resumed);
  free(ref);
}

/* Object Dice of a run against the reference, from the two masks `wsisa
 * segment` writes for the same parameter sets, matched here in-process. */
static double object_dice_of(const char *ref_png, const char *run_png) {
  wsisa_image *mask[2] = {NULL, NULL}, *labels[2] = {NULL, NULL};
  const char *png[2] = {ref_png, run_png};
  uint64_t area[2] = {0, 0}, sums[WSISA_MATCH_FIELDS];
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(wsisa_image_read(png[k], &mask[k], NULL), 0);
    cr_assert_eq(wsisa_image_new(mask[k]->width, mask[k]->height, 1, WSISA_I32, &labels[k], NULL), 0);
    cr_assert_eq(wsisa_cpu_label(mask[k], 4, labels[k]), 0);
    for (int y = 0; y < mask[k]->height; y++)
      for (int x = 0; x < mask[k]->width; x++) area[k] += ((uint8_t *)wsisa_image_row(mask[k], y))[x] != 0;
  }
  cr_assert_eq(wsisa_cpu_object_match(labels[0], labels[1], sums), 0);
  for (int k = 0; k < 2; k++) {
    wsisa_image_free(mask[k]);
    wsisa_image_free(labels[k]);
  }
  return 0.5 * ((double)sums[WSISA_MATCH_DICE_REF] / WSISA_OBJECT_MATCH_ONE / (double)area[0] +
                (double)sums[WSISA_MATCH_DICE_RUN] / WSISA_OBJECT_MATCH_ONE / (double)area[1]);
}

Test(run, object_dice_matches_the_masks, .timeout = 300) {
  const char *tmp = tu_tmpdir("objdice");
  static const char varied[] = "G1=45,G2=20,T1=4,T2=3,recon_conn=4,watershed_conn=4,min_size=6";
  char args[9000], ref_png[WSISA_PATH_MAX], run_png[WSISA_PATH_MAX], samples[WSISA_PATH_MAX];
  tu_path(ref_png, "%s/ref.png", tmp);
  tu_path(run_png, "%s/run.png", tmp);
  snprintf(args, sizeof args, "segment '%s' -o '%s'", tu_src("tests/data/tile_256.png"), ref_png);
  cr_assert_eq(tu_run(args, NULL, NULL), 0);
  snprintf(args, sizeof args, "segment '%s' --params %s -o '%s'",
           tu_src("tests/data/tile_256.png"), varied, run_png);
  cr_assert_eq(tu_run(args, NULL, NULL), 0);
  tu_path(samples, "%s/design.csv", tmp);
  FILE *f = fopen(samples, "w");
  cr_assert_not_null(f);
  fprintf(f, "run_id,G1,G2,T1,T2,recon_conn,watershed_conn,min_size\n7,45,20,4,3,4,4,6\n");
  fclose(f);
  const char *study = write_study(tu_tmpdir("objstudy"), "tests/data/tile_256.png", 2);
  char dir[WSISA_PATH_MAX], flags[TU_LINE_MAX];
  snprintf(flags, sizeof flags, "--samples '%s'", samples);
  free(run_study(study, "", flags, dir, sizeof dir));
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/outputs.csv", dir);
  wsisa_csv *c = NULL;
  cr_assert_eq(wsisa_csv_read(path, &c, NULL), 0);
  long col = wsisa_csv_column(c, "object_dice");
  cr_assert_geq(col, 0);
  double got;
  cr_assert_eq(wsisa_csv_number(c, 0, (size_t)col, &got, NULL), 0);
  wsisa_csv_free(c);
  double want = object_dice_of(ref_png, run_png);
  cr_log_info("object Dice %.9f (masks: %.9f)\n", got, want);
  cr_expect(want > 0.3 && want < 0.99, "the varied run should differ: %g", want);
  cr_expect(fabs(got - want) < 1e-9, "object_dice %.12g, from the masks %.12g", got, want);
}

/* Against an annotation (the sample's GeoJSON on its two tiles of 256), the
 * object metrics, a feature distance to the annotated nuclei and best.json
 * are the same bytes whatever the strategy, scheduler and worker. */
Test(run, annotation_metrics_same_for_every_strategy_and_worker, .timeout = 600) {
  char study[WSISA_PATH_MAX], text[8192];
  tu_path(study, "%s/study.json", tu_tmpdir("annot-identity"));
  const char *slide = tu_src("tests/data/CMU-1-Small-Region.svs");
  snprintf(text, sizeof text,
           "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 256,\n"
           "    \"reference\": { \"%s\": { \"geojson\": \"%s\",\n"
           "                               \"region\": [1024, 768, 256, 512] } } },\n"
           "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"recon_conn\": {}, \"min_size_pl\": {},\n"
           "                    \"watershed_conn\": {} },\n"
           "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
           "  \"metric\": [\"aji\", \"object_f1\", \"object_precision\", \"object_recall\",\n"
           "              \"object_dice\", \"dice\", \"wasserstein:area\"] }\n",
           slide, slide, tu_src("tests/data/CMU-1-Small-Region.nuclei.geojson"));
  FILE *f = fopen(study, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  char dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  char *base = run_study(study, "STARPU_SCHED=eager", "--reuse rtma", dir, sizeof dir);
  /* two tiles on one rank: the second opened while the first's units ran
   * (the variants below with an OpenCL worker, under unit placement, open
   * each at its first unit: the same metrics either way) */
  tu_path(path, "%s/run.json", dir);
  json_t *run = json_load_file(path, 0, NULL);
  cr_assert_not_null(run);
  cr_expect_eq(json_integer_value(json_object_get(run, "tiles")), 2);
  cr_expect_eq(json_integer_value(json_object_get(run, "tiles_opened_ahead")), 1);
  /* the submitting thread's CPU seconds during the units' run: some, and no
   * more than one core's worth of the run's wall time */
  json_t *seconds = json_object_get(run, "seconds");
  json_t *submitter = json_object_get(seconds, "submitter_cpu");
  cr_expect(json_is_real(submitter), "run.json seconds.submitter_cpu");
  const double execute = json_real_value(json_object_get(seconds, "execute"));
  cr_expect(json_real_value(submitter) > 0 && json_real_value(submitter) <= execute + 0.01,
            "submitter_cpu %g s over an execute of %g s", json_real_value(submitter), execute);
  /* the allocator as wsisa sets it (freed memory kept; a sanitizer's
   * allocator refuses), and the page faults the units' run took: some (its
   * working set is written for the first time) */
  const char *alloc = json_string_value(json_object_get(run, "allocator"));
  cr_expect(alloc && (strncmp(alloc, "freed memory kept for reuse", 27) == 0 ||
                      strstr(alloc, "it refused the setting")),
            "allocator: %s", alloc ? alloc : "(none)");
  json_t *minor = json_object_get(json_object_get(run, "page_faults"), "minor");
  cr_expect(json_is_integer(minor) && json_integer_value(minor) > 0, "run.json page_faults.minor");
  json_decref(run);
  tu_path(path, "%s/best.json", dir);
  char *best = tu_slurp(path, NULL);
  cr_assert_not_null(best);
  cr_expect(strstr(best, "\"chosen_by\": \"aji\""), "%s", best);
  static const char *const variants[][2] = {
      {"STARPU_SCHED=eager WSISA_MALLOC=libc", "--reuse none"},
      {"STARPU_SCHED=lws", "--reuse trtma --max-buckets 2 --active-paths 1"},
      {"STARPU_SCHED=dmda STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse trtma"},
      {"STARPU_SCHED=eager STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1", "--reuse none"}};
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    char *m = run_study(study, variants[i][0], variants[i][1], dir, sizeof dir);
    cr_expect_str_eq(m, base, "%s %s: metrics differ", variants[i][0], variants[i][1]);
    tu_path(path, "%s/best.json", dir);
    char *b = tu_slurp(path, NULL);
    cr_expect_str_eq(b ? b : "", best, "%s %s: best.json differs", variants[i][0], variants[i][1]);
    free(b);
    if (i == 0) { /* the C library's allocator as it comes, and run.json says so */
      tu_path(path, "%s/run.json", dir);
      json_t *r = json_load_file(path, 0, NULL);
      const char *a = json_string_value(json_object_get(r, "allocator"));
      cr_expect(a && strstr(a, "WSISA_MALLOC=libc"), "allocator: %s", a ? a : "(none)");
      json_decref(r);
    }
    free(m);
  }
  free(best);
  free(base);
}

/* run.json's placement object, as an integer at a path of keys under it. */
static long long placement_at(json_t *run, const char *section, const char *key) {
  json_t *v = json_object_get(json_object_get(json_object_get(run, "placement"), section), key);
  cr_assert(json_is_integer(v), "run.json: placement.%s.%s missing", section, key);
  return (long long)json_integer_value(v);
}

/* Unit placement with a CPU and an OpenCL worker: the metrics of task
 * placement byte for byte; every unit on one kind, both kinds used, every
 * task counted where it ran and none off its unit's kind; and far fewer
 * bytes across the bus than StarPU placing task by task under dmda, whose
 * paths go back and forth between the host and the device. */
Test(run, unit_placement_keeps_each_unit_on_one_kind_of_worker, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study"), "tests/data/tile_256.png", 2);
  /* a STARPU_HOME of its own, empty: no model calibrated by the suite's
   * other runs gives the rule a prior, so each kind is given a first unit
   * to measure it by (the unit placement run comes first) */
  char env[TU_LINE_MAX];
  snprintf(env, sizeof env,
           "STARPU_HOME='%s' STARPU_PROFILING=1 STARPU_SCHED=dmda STARPU_NCPU=1 "
           "STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1",
           tu_tmpdir("placement_home"));
  static const char *const placements[] = {"unit", "task"};
  char *metrics[2];
  long long bytes[2];
  for (int i = 0; i < 2; i++) {
    char dir[WSISA_PATH_MAX], flags[128], path[WSISA_PATH_MAX];
    snprintf(flags, sizeof flags, "--reuse rtma --max-bucket-size 3 --placement %s",
             placements[i]);
    metrics[i] = run_study(study, env, flags, dir, sizeof dir);
    tu_path(path, "%s/run.json", dir);
    json_t *run = json_load_file(path, 0, NULL);
    cr_assert_not_null(run, "no %s", path);
    json_t *pl = json_object_get(run, "placement");
    cr_expect_str_eq(json_string_value(json_object_get(pl, "asked")), placements[i]);
    cr_expect_str_eq(json_string_value(json_object_get(pl, "in_force")), placements[i]);
    const long long submitted = placement_at(run, "tasks", "submitted"),
                    cpu = placement_at(run, "tasks", "cpu"),
                    opencl = placement_at(run, "tasks", "opencl");
    cr_expect_gt(submitted, 100);
    cr_expect_eq(placement_at(run, "tasks", "ended"), submitted);
    cr_expect_eq(cpu + opencl + placement_at(run, "tasks", "one_place"), submitted,
                 "%s: tasks by kind do not add up", placements[i]);
    cr_expect_gt(cpu, 0, "%s: no task on the CPU worker", placements[i]);
    cr_expect_gt(opencl, 0, "%s: no task on the OpenCL worker", placements[i]);
    cr_expect_eq(placement_at(run, "tasks", "off_unit_kind"), 0);
    const long long units = (long long)json_integer_value(
        json_object_get(json_object_get(run, "reuse"), "buckets"));
    const long long on_cpu = placement_at(run, "units", "cpu"),
                    on_opencl = placement_at(run, "units", "opencl");
    if (i == 0) {
      cr_expect_gt(units, 2, "too few units to place: %lld", units);
      cr_expect_eq(on_cpu + on_opencl, units, "units by kind: %lld + %lld of %lld", on_cpu,
                   on_opencl, units);
      /* before any measure each kind is given a unit */
      cr_expect_gt(on_cpu, 0);
      cr_expect_gt(on_opencl, 0);
      cr_expect_eq(placement_at(run, "tile_stages", "cpu") +
                       placement_at(run, "tile_stages", "opencl"),
                   1);
    } else {
      cr_expect_eq(on_cpu + on_opencl, 0);
    }
    bytes[i] = placement_at(run, "bus", "to_device_bytes") +
               placement_at(run, "bus", "from_device_bytes");
    json_decref(run);
  }
  cr_expect_str_eq(metrics[0], metrics[1], "unit placement: metrics differ from task placement");
  /* a tile's pixels cross to the device a few times (the RGB, the stage's
   * outputs a unit there reads) and the measures come back: far below a
   * byte image per task of a path */
  const long long pixels = 256 * 256;
  cr_expect_lt(bytes[0], 32 * pixels, "unit placement: %lld bytes across the bus", bytes[0]);
  cr_expect_lt(2 * bytes[0], bytes[1], "unit placement: %lld bytes, task placement %lld",
               bytes[0], bytes[1]);
  free(metrics[0]);
  free(metrics[1]);
}

/* StarPU 1.3 with PoCL installed leaves about 1 KiB of a dlopened
 * library's allocations at exit when it starts no OpenCL worker (the same
 * with `wsisa segment`); not ours, so the AddressSanitizer build does not
 * report leaks for these runs (as the install test's CPU-only bench). */
#define NO_OPENCL_ENV "ASAN_OPTIONS=detect_leaks=0 "

/* More CPU workers than cores (16 on this machine's 2, say): StarPU starts
 * every one asked, run.json says so beside the cores offered, no warning
 * comes, and the metrics are those of one worker on one core (taskset: the
 * cores offered are the affinity mask's, and the worker is bound to the
 * mask's core, the last one, where StarPU alone would take core 0). */
Test(run, sixteen_workers_give_the_metrics_of_one, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("study16"), "tests/data/tile_256.png", 2);
  char dir16[WSISA_PATH_MAX], dir1[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  char *m16 = run_study(study, NO_OPENCL_ENV "STARPU_NCPU=16 STARPU_NOPENCL=0", "", dir16, sizeof dir16);
  tu_path(path, "%s/run.json", dir16);
  char *prov = tu_slurp(path, NULL);
  cr_assert_not_null(prov);
  const char *workers = strstr(prov, "\"workers\"");
  cr_assert_not_null(workers);
  cr_expect_eq(json_number(workers, "cpu"), 16, "%.400s", workers);
  cr_expect_eq(json_number(workers, "cpu_asked"), 16, "%.400s", workers);
  cr_expect_geq(json_number(workers, "cores"), 1, "%.400s", workers);
  cr_expect_geq(json_number(workers, "starpu_maxcpus"), 16, "%.400s", workers);
#ifdef STARPU_NON_BLOCKING_DRIVERS
  cr_expect(strstr(workers, "\"starpu_blocking_drivers\": false") != NULL, "%.600s", workers);
#else
  cr_expect(strstr(workers, "\"starpu_blocking_drivers\": true") != NULL, "%.600s", workers);
#endif
#if defined(WSISA_STARPU_LAST_WORKER_SLEEPS) && !defined(STARPU_NON_BLOCKING_DRIVERS)
  cr_expect(strstr(workers, "\"starpu_last_worker_sleeps\": true") != NULL, "%.600s", workers);
#else
  cr_expect(strstr(workers, "\"starpu_last_worker_sleeps\": false") != NULL, "%.600s", workers);
#endif
  cr_expect(strstr(prov, "StarPU started") == NULL, "a warning: %s", strstr(prov, "StarPU started"));
  free(prov);
  int taskset = system("command -v taskset >/dev/null 2>&1") == 0;
  long last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
  char env1[256];
  if (taskset) /* no STARPU_NCPU (run_study sets one): the worker count is the mask's */
    snprintf(env1, sizeof env1,
             "env -u STARPU_NCPU " NO_OPENCL_ENV "STARPU_NOPENCL=0 taskset -c %ld", last);
  else
    snprintf(env1, sizeof env1, NO_OPENCL_ENV "STARPU_NCPU=1 STARPU_NOPENCL=0");
  char *m1 = run_study(study, env1, "", dir1, sizeof dir1);
  cr_expect_str_eq(m16, m1, "16 workers and 1: metrics differ");
  tu_path(path, "%s/run.json", dir1);
  prov = tu_slurp(path, NULL);
  cr_assert_not_null(prov);
  workers = strstr(prov, "\"workers\"");
  cr_assert_not_null(workers);
  cr_expect_eq(json_number(workers, "cpu"), 1, "%.400s", workers);
  if (taskset) {
    cr_expect_eq(json_number(workers, "cores"), 1, "%.400s", workers);
    cr_expect(strstr(workers, "\"cores_limited_by\": \"affinity mask\"") ||
                  json_number(strstr(prov, "\"machine\""), "cores") == 1,
              "%.400s", workers);
    /* without STARPU_NCPU: one worker, the mask's core */
    char bound[64];
    snprintf(bound, sizeof bound, "\"bound_cores\": [\n      %ld\n    ]", last);
    cr_expect(strstr(workers, bound) != NULL, "%.400s", workers);
    if (last > 0)
      cr_expect(strstr(workers, "\"binding\": \"affinity mask\"") != NULL, "%.400s", workers);
  }
  free(prov);
  free(m16);
  free(m1);
}

/* Asked more CPU workers than this StarPU may start (STARPU_MAXCPUS + 1):
 * the warning names the cause and the ways out. */
Test(run, too_many_cpu_workers_asked_are_named, .timeout = 300) {
  const char *study = write_study(tu_tmpdir("studymax"), "tests/data/tile_256.png", 2);
  char cmd[8800], *err = NULL;
  snprintf(cmd, sizeof cmd,
           "env " NO_OPENCL_ENV "WSISA_LOG=warn STARPU_NCPU=%d STARPU_NOPENCL=0 %s plan --study '%s' --estimate",
           STARPU_MAXCPUS + 1, WSISA_EXE, study);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s: %s", cmd, err ? err : "");
  char expect[128];
  snprintf(expect, sizeof expect, "StarPU started %d CPU workers of the %d asked", STARPU_MAXCPUS,
           STARPU_MAXCPUS + 1);
  cr_expect(err && strstr(err, expect), "%s", err ? err : "");
  cr_expect(err && strstr(err, "STARPU_MAXCPUS") && strstr(err, "--enable-maxcpus") &&
                strstr(err, "mpirun"),
            "%s", err ? err : "");
  free(err);
}
