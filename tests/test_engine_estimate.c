/* The estimate (engine/estimate/simulate.c, engine/estimate/costs.c): the schedule's
 * arithmetic on known costs, the deadline search, interpolation across
 * sizes; and, from real performance models, an uncalibrated codelet
 * reported and a tile size never measured interpolated per pixel. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/estimate/estimate_internal.h"
#include "io/io.h"
#include "testutil.h"

/* A probe's line on the models m. */
static const char *how_of(const wsisa__probe *p, const wsisa__models *m) {
  static char how[WSISA_EST_HOW];
  cr_assert_eq(p->describe(m, how, sizeof how), 0, "%s: not measured", p->name);
  return how;
}

/* The probes' table: each figure's line says how its probe's measure was
 * taken in, or that calibration did not measure it; the object probe runs
 * only for a study with object reuse. */
Test(engine_estimate, each_probe_says_how_it_was_taken_in) {
  wsisa__models m;
  memset(&m, 0, sizeof m);
  wsisa_estimate_figures f;
  memset(&f, 0, sizeof f);
  wsisa__probes_describe(&m, &f);
  const char *lines[] = {f.level_source, f.object_source, f.busy_source, f.read_source,
                         f.fresh_source};
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
    cr_expect(strncmp(lines[i], "not measured (wsisa calibrate measures it): ", 44) == 0, "%s",
              lines[i]);
  m.fresh.loaded = 1;
  m.fresh.seconds_per_byte = 2.0 / (1 << 30);
  wsisa__probes_describe(&m, &f);
  cr_expect_str_eq(f.fresh_source, "calibration: a page's first write 2.00 s/GiB; "
                                   "wsisa_fresh_memory.json");
  cr_expect(strncmp(f.read_source, "not measured", 12) == 0, "%s", f.read_source);
  wsisa__probe_input in;
  memset(&in, 0, sizeof in);
  cr_expect(!wsisa__probe_objects.wanted(&in), "object reuse off: no object probe");
  in.object_reuse = 1;
  cr_expect(wsisa__probe_objects.wanted(&in));
}

/* ---- interpolation across sizes ------------------------------------------------ */

Test(engine_estimate, interpolates_per_unit_cost_in_log_size) {
  const double x[] = {4e6, 1e6}, t[] = {8, 1}; /* 2 and 1 µs per pixel */
  /* halfway in log size: 1.5 per pixel */
  cr_expect_float_eq(wsisa__est_interpolate(x, t, 2, 2e6), 3.0, 1e-9);
  /* on a point: its own time */
  cr_expect_float_eq(wsisa__est_interpolate(x, t, 2, 1e6), 1.0, 1e-12);
  /* outside the sizes seen: the nearest one's cost per pixel, no trend */
  cr_expect_float_eq(wsisa__est_interpolate(x, t, 2, 8e6), 16.0, 1e-9);
  cr_expect_float_eq(wsisa__est_interpolate(x, t, 2, 5e5), 0.5, 1e-12);
  /* one point: proportional */
  cr_expect_float_eq(wsisa__est_interpolate(x, t, 1, 1e6), 2.0, 1e-12);
  cr_expect(isnan(wsisa__est_interpolate(x, t, 0, 1e6)));
}

/* ---- the schedule on known costs ------------------------------------------------- */

/* Two runs (or up to four) that differ from level 1 on, each its own bucket
 * under `stage`: a unit per run and tile, seven tasks each; level l costs l
 * seconds, a measure 2, opening a tile 10, a new (B, G, R) 0.5, the tile
 * stage alone 3. */
#define FIXTURE_RUNS 4
typedef struct fixture {
  wsisa_reuse_design *d;
  wsisa_reuse_buckets *b;
  double params[FIXTURE_RUNS * WSISA_SEG_NPARAMS];
  double open, open_path, stage, measure, background, level[WSISA_SEG_LEVELS * 2];
  int variant[FIXTURE_RUNS * WSISA_SEG_LEVELS];
  size_t shape[4];
} fixture;

static void fixture_make_runs(fixture *f, wsisa_reuse_strategy s, int nruns) {
  memset(f, 0, sizeof *f);
  uint64_t keys[FIXTURE_RUNS * WSISA_SEG_LEVELS];
  for (int r = 0; r < nruns; r++)
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) keys[r * WSISA_SEG_LEVELS + l] = (uint64_t)(10 * r + l + 1);
  cr_assert_eq(wsisa_reuse_design_new(keys, (size_t)nruns, WSISA_SEG_LEVELS, &f->d), 0);
  wsisa_reuse_opts o = {.strategy = s, .max_bucket_size = 8, .max_buckets = 1};
  cr_assert_eq(wsisa_reuse_merge(f->d, &o, &f->b), 0);
  for (int r = 0; r < nruns; r++)
    memcpy(f->params + r * WSISA_SEG_NPARAMS, wsisa_seg_defaults(), WSISA_SEG_NPARAMS * sizeof(double));
  f->open = f->open_path = 10;
  f->stage = 3;
  f->measure = 2;
  f->background = 0.5;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    f->level[l * 2] = l + 1;     /* variant 0 */
    f->level[l * 2 + 1] = 2 * (l + 1); /* variant 1 */
  }
}

static void fixture_make(fixture *f, wsisa_reuse_strategy s) { fixture_make_runs(f, s, 2); }

static double simulate(fixture *f, size_t ntiles, int ranks, int workers, size_t k, int share,
                       const uint8_t *done, wsisa_sim_result *r) {
  wsisa__sim_costs c = {1, 2, &f->open, &f->open_path, &f->stage, &f->measure, &f->background,
                       f->level, f->variant, NULL, NULL, NULL, NULL, NULL};
  wsisa__sim_job j = {ntiles, f->shape, f->b, f->params, share, k, done, ranks, workers, NULL, 0,
                     WSISA_PLACEMENT_TASK};
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa__sim_run(&c, &j, r, &e), 0, "%s", e.msg);
  return r->makespan;
}

static void fixture_free(fixture *f) {
  wsisa_reuse_buckets_free(f->b);
  wsisa_reuse_design_free(f->d);
}

Test(engine_estimate, one_worker_runs_everything_in_turn) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  /* open, the one background count, then 2 x (1 + ... + 7 + measure) */
  m = simulate(&f, 1, 1, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 10 + 0.5 + 2 * 30, 1e-9, "makespan %g", m);
  cr_expect_float_eq(r.work, 70.5, 1e-9);
  cr_expect_float_eq(r.efficiency, 1, 1e-12);
  cr_expect_eq(r.units, 2);
  cr_expect_eq(r.leaves, 2);
  cr_expect_eq(r.opens, 1);
  cr_expect_eq(r.backgrounds, 1);
  cr_expect_eq(r.tasks, 1 + 1 + 2 * 8);
  cr_expect_eq(r.level_tasks[0], 2, "level 1, variant 0, twice");
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

Test(engine_estimate, two_workers_overlap_the_units) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  /* the two chains of 30 s side by side, after the open and the count */
  m = simulate(&f, 1, 1, 2, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 40.5, 1e-9, "makespan %g", m);
  cr_expect_float_eq(r.efficiency, 70.5 / (2 * 40.5), 1e-9);
  cr_expect_eq(r.peak_paths, 2);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

/* The tile's reference runs beside its units: the submitter waits for the
 * stage (10 s) and the count (0.5 s) only, and a leaf's measure waits for the
 * reference. */
Test(engine_estimate, the_reference_runs_while_the_units_are_submitted) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  const double reference[] = {40, 70};
  for (int i = 0; i < 2; i++) {
    wsisa__sim_costs c = {1, 2, &f.open, &f.open_path, &f.stage, &f.measure, &f.background,
                         f.level, f.variant, NULL, NULL, &reference[i], &reference[i], NULL};
    wsisa__sim_job j = {1, f.shape, f.b, f.params, 1, 0, NULL, 1, 2, NULL, 0,
                       WSISA_PLACEMENT_TASK};
    wsisa_sim_result r;
    wsisa_err e = WSISA_ERR_INIT;
    cr_assert_eq(wsisa__sim_run(&c, &j, &r, &e), 0, "%s", e.msg);
    /* worker 0: the stage, the count, then both chains in turn while worker
     * 1 holds the reference from 10 s. Reference 40 s: levels 1-6 end at
     * 46.5 and 52.5 on worker 0; the first chain's level 7 and measure go to
     * worker 1, free at 50 (57, 59), the second's stay on worker 0 (59.5)
     * and its measure ends at 61.5. Reference 70 s: the chains end on worker
     * 0 at 66.5 and their measures wait for the reference, to 80 + 2. Had
     * the opening waited for the reference: 10 + 40 + 0.5 + 30 = 80.5. */
    const double want = i == 0 ? 61.5 : 10 + 70 + 2;
    cr_expect_float_eq(r.makespan, want, 1e-9, "reference %g: makespan %g", reference[i],
                       r.makespan);
    cr_expect_eq(r.tasks, 1 + 1 + 1 + 2 * 8, "the reference is one task");
    wsisa_sim_result_free(&r);
  }
  fixture_free(&f);
}

/* Reading a tile holds the submitting thread before the stage, and is no
 * worker's work. */
Test(engine_estimate, a_tile_read_holds_the_submitter_not_a_worker) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  const double read = 5;
  wsisa__sim_costs c = {1, 2, &f.open, &f.open_path, &f.stage, &f.measure, &f.background,
                       f.level, f.variant, NULL, NULL, NULL, NULL, &read};
  wsisa__sim_job j = {1, f.shape, f.b, f.params, 1, 0, NULL, 1, 1, NULL, 0, WSISA_PLACEMENT_TASK};
  wsisa_sim_result r;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa__sim_run(&c, &j, &r, &e), 0, "%s", e.msg);
  /* one_worker_runs_everything_in_turn's 70.5 s after the read */
  cr_expect_float_eq(r.makespan, 5 + 70.5, 1e-9, "makespan %g", r.makespan);
  cr_expect_float_eq(r.work, 70.5, 1e-9, "work %g", r.work);
  cr_expect_eq(r.tasks, 1 + 1 + 2 * 8, "the read is not a worker's task");
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

/* A job of one rank opens its next tile while the units in flight run: two
 * tiles of two units on two workers. Opened when its first unit comes, the
 * second tile would wait for a unit of the first to end (credit 2): its
 * stage from 40.5 s, its units to 81 s (the simulation gives that with the
 * opening ahead taken out). Opened ahead at 10.5 s, its stage and count take
 * a worker between the first tile's level tasks, and the list schedule
 * ends at 76 s (its work, 141 s, over two workers: 70.5). Two ranks do not
 * open ahead: the queue's next tile may go to the other. */
Test(engine_estimate, the_next_tile_opens_while_the_units_run) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m = simulate(&f, 2, 1, 2, 0, 1, NULL, &r);
  cr_expect_eq(r.opens, 2);
  cr_expect_eq(r.opens_ahead, 1);
  cr_expect_float_eq(m, 76, 1e-9, "makespan %g", m);
  wsisa_sim_result_free(&r);
  m = simulate(&f, 4, 2, 2, 0, 1, NULL, &r);
  cr_expect_eq(r.opens_ahead, 0);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

Test(engine_estimate, each_run_is_priced_at_its_parameter_values) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  /* run 1's level tasks cost twice its variant's time (a lower threshold
   * lets more of the tile through) */
  double scale[2 * WSISA_SEG_LEVELS];
  for (int i = 0; i < 2 * WSISA_SEG_LEVELS; i++) scale[i] = i < WSISA_SEG_LEVELS ? 1 : 2;
  wsisa__sim_costs c = {1, 2, &f.open, &f.open_path, &f.stage, &f.measure, &f.background,
                       f.level, f.variant, NULL, scale, NULL, NULL, NULL};
  wsisa__sim_job j = {1, f.shape, f.b, f.params, 1, 0, NULL, 1, 1, NULL, 0, WSISA_PLACEMENT_TASK};
  wsisa_sim_result r;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa__sim_run(&c, &j, &r, &e), 0, "%s", e.msg);
  /* open, count, then (28 + 2) and (2 x 28 + 2) */
  cr_expect_float_eq(r.makespan, 10 + 0.5 + 30 + 58, 1e-9, "makespan %g", r.makespan);
  cr_expect_eq(r.level_tasks[0], 2);
  cr_expect_float_eq(r.level_units[0], 3, 1e-12, "level 1 in units of its cost");
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

/* Calibration timed every level at the defaults (1 s each) and at one
 * segmentation with G2 = 2, where levels 5-7 took 2 s (G2's curve: 2x at 2,
 * 1x at its default 45). */
static void levels_model_make(wsisa__levels_model *m) {
  memset(m, 0, sizeof *m);
  m->loaded = 1;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) m->at_defaults[l] = 1;
  m->nvectors = 1;
  memcpy(m->vector[0], wsisa_seg_defaults(), sizeof m->vector[0]);
  m->vector[0][WSISA_P_G2] = 2;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) m->vector_time[0][l] = l >= 4 ? 2 : 1;
  m->npoints[WSISA_P_G2] = 2;
  m->value[WSISA_P_G2][0] = 2;
  m->value[WSISA_P_G2][1] = 45;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    m->ratio[WSISA_P_G2][0][l] = l >= 4 ? 2 : 1;
    m->ratio[WSISA_P_G2][1][l] = 1;
  }
}

Test(engine_estimate, level_costs_follow_the_parameters_measured) {
  wsisa__levels_model m;
  levels_model_make(&m);
  uint8_t same[WSISA_SEG_LEVELS];
  memset(same, 1, sizeof same);
  double scale[WSISA_SEG_LEVELS];
  /* a run at the defaults, where the curves were measured: the models' mean
   * is the G2 = 2 segmentation's, so levels 5-7 cost half of it; G2 leaves
   * levels 1-4 alone */
  wsisa__levels_scale(&m, wsisa_seg_defaults(), 1, same, scale, NULL);
  for (int l = 0; l < WSISA_SEG_LEVELS; l++)
    cr_expect_float_eq(scale[l], l >= 4 ? 0.5 : 1, 1e-12, "level %d: %g", l + 1, scale[l]);
  wsisa__models all;
  all.levels = m;
  const char *how = how_of(&wsisa__probe_levels, &all);
  cr_expect(strstr(how, "at 1 segmentation and along the ranges of 1 parameter;") != NULL, "%s",
            how);
  /* halfway along G2's range to the calibration's segmentation, which moved
   * G2 alone: its curve (1.5) */
  double x[WSISA_SEG_NPARAMS];
  memcpy(x, wsisa_seg_defaults(), sizeof x);
  x[WSISA_P_G2] = 23.5;
  wsisa__levels_scale(&m, x, 1, same, scale, NULL);
  cr_expect_float_eq(scale[6], 1.5 / 2, 1e-12, "level 7: %g", scale[6]);
  cr_expect_float_eq(scale[3], 1, 1e-12, "level 4: %g", scale[3]);
  /* the calibration's own segmentation costs what the models say */
  wsisa__levels_scale(&m, m.vector[0], 1, same, scale, NULL);
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) cr_expect_float_eq(scale[l], 1, 1e-12);
}

/* Two parameters moved together cost what neither curve says: calibration's
 * segmentation with G1 = 5 and G2 = 2 took 4 s on levels 5-7, where the
 * curves' product is 1 (G2's 2x, G1's 0.5x at 5). A run that moves one of
 * them is its curve; the segmentation itself its measured time; a run that
 * moves both part of the way lies between the product and that. */
Test(engine_estimate, level_costs_take_the_interplay_measured) {
  wsisa__levels_model m;
  levels_model_make(&m);
  m.vector[0][WSISA_P_G1] = 5;
  for (int l = 4; l < WSISA_SEG_LEVELS; l++) m.vector_time[0][l] = 4;
  m.npoints[WSISA_P_G1] = 2;
  m.value[WSISA_P_G1][0] = 5;
  m.value[WSISA_P_G1][1] = 80;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    m.ratio[WSISA_P_G1][0][l] = l >= 2 ? 0.5 : 1;
    m.ratio[WSISA_P_G1][1][l] = 1;
  }
  uint8_t same[WSISA_SEG_LEVELS];
  memset(same, 1, sizeof same);
  double t[WSISA_SEG_LEVELS], scale[WSISA_SEG_LEVELS], x[WSISA_SEG_NPARAMS];
  memcpy(x, wsisa_seg_defaults(), sizeof x);
  x[WSISA_P_G1] = 5;
  wsisa__levels_scale(&m, x, 1, same, scale, t);
  cr_expect_float_eq(t[5], 0.5, 1e-12, "G1 alone, level 6: %g", t[5]);
  wsisa__models all;
  all.levels = m;
  const char *how = how_of(&wsisa__probe_levels, &all);
  cr_expect(strstr(how, "the ranges of 2 parameters;") != NULL, "%s", how);
  wsisa__levels_scale(&m, m.vector[0], 1, same, scale, t);
  for (int l = 4; l < WSISA_SEG_LEVELS; l++)
    cr_expect_float_eq(t[l], 4, 1e-9, "the segmentation, level %d: %g", l + 1, t[l]);
  x[WSISA_P_G1] = 42.5;
  x[WSISA_P_G2] = 23.5;
  wsisa__levels_scale(&m, x, 1, same, scale, t);
  double product = wsisa__levels_product(&m, 6, x);
  cr_expect_float_eq(product, 0.75 * 1.5, 1e-12, "%g", product);
  cr_expect(t[5] > product + 1e-6 && t[5] < 4, "both halfway, level 6: %g", t[5]);
  /* the pair timed together over its grid replaces its two curves on the
   * levels both reach: 3x at G1 = 5 and G2 = 2, the curves' on its axes */
  m.pair[0] = WSISA_P_G2;
  m.pair[1] = WSISA_P_G1;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < WSISA_SEG_LEVELS; l++)
        m.pair_ratio[i][j][l] = m.ratio[WSISA_P_G2][i][l] * m.ratio[WSISA_P_G1][j][l];
  for (int l = 4; l < WSISA_SEG_LEVELS; l++) m.pair_ratio[0][0][l] = 3;
  cr_expect_float_eq(wsisa__levels_product(&m, 6, m.vector[0]), 3, 1e-12);
  cr_expect_float_eq(wsisa__levels_product(&m, 3, m.vector[0]), 0.5, 1e-12, "level 3: G1 alone");
  /* bilinear between the grid's corners: (3 + 2 + 0.5 + 1) / 4 */
  cr_expect_float_eq(wsisa__levels_product(&m, 6, x), 6.5 / 4, 1e-12, "%g",
                     wsisa__levels_product(&m, 6, x));
  x[WSISA_P_G2] = 45;
  cr_expect_float_eq(wsisa__levels_product(&m, 6, x), 0.75, 1e-12, "G1's curve on its axis");
}

/* The probe's file as a machine whose speed drifted writes it: the defaults
 * timed first took 3 s a level, and the G2 = 2 segmentation and G2's point
 * were timed while the defaults in turn with them took 2 s instead of 1.
 * Each is taken against the defaults beside it, and the defaults' time is
 * the median of their seven timings (3, 2, 2, 1, 1, 1, 1): the model is
 * levels_model_make's. */
Test(engine_estimate, level_costs_taken_against_the_defaults_timed_beside_them) {
  char home[] = "/tmp/wsisa_levels_XXXXXX", dir[256], path[300];
  cr_assert_not_null(mkdtemp(home));
  snprintf(dir, sizeof dir, "%s/.starpu/sampling", home);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  cr_assert_eq(system(cmd), 0);
  json_t *ones = json_array(), *twos = json_array(), *slow = json_array(), *g2 = json_array(),
         *first = json_array();
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    json_array_append_new(first, json_real(3));
    json_array_append_new(ones, json_real(1));
    json_array_append_new(twos, json_real(2));
    json_array_append_new(slow, json_real(l >= 4 ? 4 : 2));
  }
  json_t *vd = json_array(), *v2 = json_array();
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    json_array_append_new(vd, json_real(wsisa_seg_defaults()[p]));
    json_array_append_new(v2, json_real(p == WSISA_P_G2 ? 2 : wsisa_seg_defaults()[p]));
  }
  json_array_append_new(g2, json_pack("{s:f, s:O, s:O}", "value", 2.0, "times", slow,
                                      "defaults_beside", twos));
  json_t *root = json_pack(
      "{s:i, s:i, s:o, s:[{s:o, s:O}, {s:o, s:O, s:O}], s:{s:o, s:[{s:f, s:O, s:O}],"
      " s:[{s:f, s:O, s:O}], s:[{s:f, s:O, s:O}], s:[{s:f, s:O, s:O}]}}",
      "width", 64, "height", 64, "defaults", json_copy(first), "vectors", "values", vd, "times",
      first, "values", v2, "times", slow, "defaults_beside", twos, "parameters", "G2", g2, "T1",
      "value", 2.5, "times", ones, "defaults_beside", ones, "G1", "value", 30.0, "times", ones,
      "defaults_beside", ones, "min_size", "value", 15.0, "times", ones, "defaults_beside", ones,
      "max_size", "value", 1100.0, "times", ones, "defaults_beside", ones);
  cr_assert_not_null(root);
  /* G2 and G1 timed together at 2 and 30: 6 s on levels 5-7 (2 s above)
   * while the defaults beside them took 2 s, 3x against the curves' 2x */
  json_t *six = json_array();
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) json_array_append_new(six, json_real(l >= 4 ? 6 : 2));
  cr_assert_eq(json_object_set_new(
                   root, "pair",
                   json_pack("{s:[], s:[s, s], s:[{s:[f, f], s:o, s:O}]}", "screened",
                             "parameters", "G2", "G1", "points", "values", 2.0, 30.0, "times", six,
                             "defaults_beside", twos)),
               0);
  snprintf(path, sizeof path, "%s/wsisa_level_costs.json", dir);
  cr_assert_eq(json_dump_file(root, path, 0), 0);
  json_decref(root);
  json_decref(first);
  json_decref(ones);
  json_decref(twos);
  json_decref(slow);
  char *saved = getenv("STARPU_HOME") ? strdup(getenv("STARPU_HOME")) : NULL;
  setenv("STARPU_HOME", home, 1);
  wsisa__models all;
  int rc = wsisa__probe_load(&wsisa__probe_levels, &all);
  wsisa__levels_model m = all.levels, want;
  if (saved) setenv("STARPU_HOME", saved, 1);
  else unsetenv("STARPU_HOME");
  free(saved);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
  cr_expect_eq(system(cmd), 0);
  cr_assert_eq(rc, 0);
  levels_model_make(&want);
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    cr_expect_float_eq(m.at_defaults[l], 1, 1e-12, "level %d: defaults %g", l + 1,
                       m.at_defaults[l]);
    cr_expect_float_eq(m.vector_time[0][l], 1, 1e-12, "level %d: the defaults' segmentation %g",
                       l + 1, m.vector_time[0][l]);
    cr_expect_float_eq(m.vector_time[1][l], want.vector_time[0][l], 1e-12, "level %d: %g", l + 1,
                       m.vector_time[1][l]);
  }
  /* G2's curve: 2x at 2 on levels 5-7, measured against its sweep's 2 s */
  const double *x = m.vector[1];
  for (int l = 1; l <= WSISA_SEG_LEVELS; l++)
    cr_expect_float_eq(wsisa__levels_product(&m, l, x), l >= 5 ? 2 : 1, 1e-12, "level %d: %g", l,
                       wsisa__levels_product(&m, l, x));
  /* the pair's grid: 3x at (2, 30) on the levels both reach, G1's curve
   * (flat) on level 3, and halfway to G1's default 2.5x */
  cr_expect_eq(m.pair[0], WSISA_P_G2);
  cr_expect_eq(m.pair[1], WSISA_P_G1);
  const char *how = how_of(&wsisa__probe_levels, &all);
  cr_expect(strstr(how, "G2 and G1 together") != NULL, "%s", how);
  double y[WSISA_SEG_NPARAMS];
  memcpy(y, x, sizeof y);
  y[WSISA_P_G1] = 30;
  cr_expect_float_eq(wsisa__levels_product(&m, 6, y), 3, 1e-12, "%g", wsisa__levels_product(&m, 6, y));
  cr_expect_float_eq(wsisa__levels_product(&m, 3, y), 1, 1e-12);
  y[WSISA_P_G1] = 55;
  cr_expect_float_eq(wsisa__levels_product(&m, 6, y), 2.5, 1e-12, "%g",
                     wsisa__levels_product(&m, 6, y));
}

Test(engine_estimate, active_paths_hold_the_second_leaf) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  /* K = 1: the second unit's levels 1-6 run beside the first path; its
   * level 7 waits for the first measure (40.5), then 7 + 2 */
  m = simulate(&f, 1, 1, 2, 1, 1, NULL, &r);
  cr_expect_float_eq(m, 49.5, 1e-9, "makespan %g", m);
  cr_expect_eq(r.peak_paths, 1);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

/* Workers busy at once: the factor measured at 1, 2 and 8 workers, each
 * round keeping all its workers busy, interpolated in log(busy) between
 * them, flat past the widest. */
Test(engine_estimate, busy_workers_factor_between_those_measured) {
  wsisa__busy_model m;
  memset(&m, 0, sizeof m);
  cr_expect_float_eq(wsisa__busy_factor(&m, 4), 1, 1e-12, "not measured: as alone");
  m.loaded = 1;
  m.n = 3;
  const int k[] = {1, 2, 8};
  const double f[] = {1, 1.1, 1.4};
  for (int i = 0; i < 3; i++) m.workers[i] = k[i], m.factor[i] = f[i], m.busy[i] = k[i];
  cr_expect_float_eq(wsisa__busy_factor(&m, 1), 1, 1e-12);
  cr_expect_float_eq(wsisa__busy_factor(&m, 2), 1.1, 1e-12);
  cr_expect_float_eq(wsisa__busy_factor(&m, 4), 1.1 + 0.5 * 0.3, 1e-12);
  cr_expect_float_eq(wsisa__busy_factor(&m, 16), 1.4, 1e-12);
  /* the models filled with 2 CPU workers: as measured at 2, alone 1 / 1.1 of
   * them; without that width no ratio is taken */
  m.calibrated_with = 2;
  cr_expect_float_eq(wsisa__busy_ratio(&m, 2), 1, 1e-12);
  cr_expect_float_eq(wsisa__busy_ratio(&m, 1), 1 / 1.1, 1e-12);
  cr_expect_float_eq(wsisa__busy_ratio(&m, 8), 1.4 / 1.1, 1e-12);
  m.loaded = 0;
  cr_expect_float_eq(wsisa__busy_ratio(&m, 8), 1, 1e-12);
}

/* A round that kept 1.3 of its 2 workers busy on average: the factor it
 * measured stands at 1.3 busy, the line from one worker on past it up to 2,
 * flat beyond; the models (filled at 2 workers) stand at 1.3 busy. */
Test(engine_estimate, busy_workers_factor_by_the_workers_kept_busy) {
  wsisa__busy_model m;
  memset(&m, 0, sizeof m);
  m.loaded = 1;
  m.n = 2;
  m.workers[0] = 1, m.factor[0] = 1, m.busy[0] = 1;
  m.workers[1] = 2, m.factor[1] = 1.08, m.busy[1] = 1.3;
  m.calibrated_with = 2;
  cr_expect_float_eq(wsisa__busy_at_width(&m, 1), 1, 1e-12);
  cr_expect_float_eq(wsisa__busy_at_width(&m, 2), 1.3, 1e-12);
  cr_expect_float_eq(wsisa__busy_at_width(&m, 4), 2.6, 1e-12, "past the widest: its share");
  cr_expect_float_eq(wsisa__busy_factor(&m, 1.3), 1.08, 1e-12);
  double at2 = 1 + 0.08 * log(2.0) / log(1.3);
  cr_expect_float_eq(wsisa__busy_factor(&m, 2), at2, 1e-12);
  cr_expect_float_eq(wsisa__busy_factor(&m, 3), at2, 1e-12, "flat past the widest width");
  cr_expect_float_eq(wsisa__busy_ratio(&m, 1.3), 1, 1e-12);
  cr_expect_float_eq(wsisa__busy_ratio(&m, 1), 1 / 1.08, 1e-12);
  cr_expect_float_eq(wsisa__busy_ratio(&m, 2), at2 / 1.08, 1e-12);
}

/* The probe's file as the estimate reads it: one worker the unit, a factor
 * below the one before read as none (the machine's drift), calibration's
 * rounds' busy workers kept. */
Test(engine_estimate, busy_workers_file_read_back) {
  const char *dir = tu_tmpdir("estimate-busy-file");
  char path[4400];
  snprintf(path, sizeof path, "%s/.starpu/sampling", dir);
  char cmd[4500];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
  cr_assert_eq(system(cmd), 0);
  snprintf(path, sizeof path, "%s/.starpu/sampling/wsisa_busy_workers.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("{\"cores\": 2, \"calibrated_cpu_workers\": 2, \"factors\": [[1, 1.0], [2, 0.94]],"
        " \"busy_on_average\": [[1, 0.98], [2, 1.7]], \"calibration_busy_on_average\": 1.3}",
        f);
  fclose(f);
  setenv("STARPU_HOME", dir, 1);
  wsisa__models all;
  cr_assert_eq(wsisa__probe_load(&wsisa__probe_busy, &all), 0);
  const wsisa__busy_model m = all.busy;
  cr_expect_eq(m.n, 2);
  cr_expect_float_eq(m.busy[0], 1, 1e-12);
  cr_expect_float_eq(m.busy[1], 1.7, 1e-12);
  cr_expect_float_eq(m.factor[1], 1, 1e-12, "no faster with more workers busy");
  cr_expect_float_eq(m.calibration_busy, 1.3, 1e-12);
  cr_expect_float_eq(wsisa__busy_ratio(&m, 1), 1, 1e-12);
  const char *how = how_of(&wsisa__probe_busy, &all);
  cr_expect(strstr(how, "the models filled at 2 (1.30 busy)"), "%s", how);
}

/* Paths share their prefixes: two runs alike up to level 6 are one tree,
 * whose two leaves hold levels 1-6's outputs once. The outputs held are
 * those of tasks ended whose readers have not all ended or whose subtree
 * the walk has not left. */
Test(engine_estimate, paths_hold_their_shared_prefix_once) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_reuse_buckets_free(f.b);
  wsisa_reuse_design_free(f.d);
  uint64_t keys[2 * WSISA_SEG_LEVELS];
  for (int r = 0; r < 2; r++)
    for (int l = 0; l < WSISA_SEG_LEVELS; l++)
      keys[r * WSISA_SEG_LEVELS + l] = (uint64_t)(l + 1 + (l == WSISA_SEG_LEVELS - 1 ? 10 * r : 0));
  cr_assert_eq(wsisa_reuse_design_new(keys, 2, WSISA_SEG_LEVELS, &f.d), 0);
  wsisa_reuse_opts o = {.strategy = WSISA_REUSE_NAIVE, .max_bucket_size = 8, .max_buckets = 1};
  cr_assert_eq(wsisa_reuse_merge(f.d, &o, &f.b), 0);
  cr_assert_eq(f.b->n_buckets, 1);
  wsisa_sim_result r;
  /* K = 1: one path, all seven (the walk waits at the second leaf for the
   * first measure, holding levels 1-6 for it and the first leaf's output
   * until its measure ends) */
  simulate(&f, 1, 1, 1, 1, 1, NULL, &r);
  cr_expect_eq(r.peak_paths, 1);
  cr_expect_eq(r.peak_outputs, 7, "outputs held %zu", r.peak_outputs);
  wsisa_sim_result_free(&r);
  /* unbounded, one worker: the walk has left every subtree at once; both
   * level-7 tasks run before either measure, beside level 6, which the
   * second of them frees: 3 outputs for two paths, not 14 */
  simulate(&f, 1, 1, 1, 0, 1, NULL, &r);
  cr_expect_eq(r.peak_paths, 2);
  cr_expect_eq(r.peak_outputs, 3, "outputs held %zu", r.peak_outputs);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

Test(engine_estimate, ranks_take_a_tile_each) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  /* two tiles on one rank of one worker: twice the tile */
  m = simulate(&f, 2, 1, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 2 * 70.5, 1e-9, "makespan %g", m);
  cr_expect_eq(r.opens, 2);
  wsisa_sim_result_free(&r);
  /* on two ranks: each opens its own tile and runs its two units */
  m = simulate(&f, 2, 2, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 70.5, 1e-9, "makespan %g", m);
  cr_expect_eq(r.opens, 2);
  cr_expect(r.rank_shapes[0] && r.rank_shapes[1]);
  wsisa_sim_result_free(&r);
  /* one tile of two units on two ranks: the first worker rank holds both
   * (two in flight per rank, engine/exec/units.c), the other has nothing to do */
  m = simulate(&f, 1, 2, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 70.5, 1e-9, "makespan %g", m);
  cr_expect_eq(r.opens, 1);
  cr_expect(r.rank_shapes[1] && !r.rank_shapes[0]);
  wsisa_sim_result_free(&r);
  /* three tiles on two ranks: as each rank's first unit ends, it takes a
   * unit of the third tile (the one no rank holds, then the one with the most
   * left), so both open it and run a unit of it: 70.5 + 10 + 0.5 + 30 */
  m = simulate(&f, 3, 2, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 111, 1e-9, "makespan %g", m);
  cr_expect_eq(r.opens, 4);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

Test(engine_estimate, none_pays_the_tile_stage_per_unit) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  m = simulate(&f, 1, 1, 1, 0, 0, NULL, &r);
  cr_expect_float_eq(m, 10 + 0.5 + 2 * (3 + 30), 1e-9, "makespan %g", m);
  cr_expect_eq(r.stages, 2);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

Test(engine_estimate, variants_and_done_units) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  f.variant[1 * WSISA_SEG_LEVELS + 2] = 1; /* run 1's level 3 costs 6, not 3 */
  wsisa_sim_result r;
  double m;
  m = simulate(&f, 1, 1, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 70.5 + 3, 1e-9, "makespan %g", m);
  cr_expect_eq(r.level_tasks[2 * 2 + 1], 1);
  wsisa_sim_result_free(&r);
  /* resume: the unit of run 1 done, only run 0's left */
  size_t b0 = f.b->instances[0] == 0 ? 0 : 1;
  uint8_t done[2] = {0, 0};
  done[1 - b0] = 1;
  m = simulate(&f, 1, 1, 1, 0, 1, done, &r);
  cr_expect_float_eq(m, 10 + 0.5 + 30, 1e-9, "makespan %g", m);
  cr_expect_eq(r.units, 1);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

Test(engine_estimate, shared_prefixes_run_once) {
  /* two runs sharing levels 1-6 in one bucket: 6 + 2 x 1 tasks */
  uint64_t keys[2 * WSISA_SEG_LEVELS];
  for (int r = 0; r < 2; r++)
    for (int l = 0; l < WSISA_SEG_LEVELS; l++)
      keys[r * WSISA_SEG_LEVELS + l] = l < 6 ? (uint64_t)l + 1 : (uint64_t)(100 + r);
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_reuse_buckets_free(f.b);
  wsisa_reuse_design_free(f.d);
  cr_assert_eq(wsisa_reuse_design_new(keys, 2, WSISA_SEG_LEVELS, &f.d), 0);
  wsisa_reuse_opts o = {.strategy = WSISA_REUSE_RTMA, .max_bucket_size = 8};
  cr_assert_eq(wsisa_reuse_merge(f.d, &o, &f.b), 0);
  cr_assert_eq(f.b->n_buckets, 1);
  wsisa_sim_result r;
  double m;
  /* one worker: 1 + ... + 6 once, then two level-7 tasks and measures */
  m = simulate(&f, 1, 1, 1, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 10 + 0.5 + 21 + 2 * (7 + 2), 1e-9, "makespan %g", m);
  wsisa_sim_result_free(&r);
  /* two workers: the two leaves side by side */
  m = simulate(&f, 1, 1, 2, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 10 + 0.5 + 21 + 7 + 2, 1e-9, "makespan %g", m);
  wsisa_sim_result_free(&r);
  fixture_free(&f);
}

/* ---- deadline -> ranks ------------------------------------------------------------ */

static int calls;
static int hyperbola(void *ctx, int ranks, double *makespan, wsisa_err *e) {
  (void)ctx;
  (void)e;
  calls++;
  *makespan = 100.0 / ranks + 5;
  return 0;
}

Test(engine_estimate, deadline_finds_the_fewest_ranks) {
  int ranks;
  double m;
  wsisa_err e = WSISA_ERR_INIT;
  calls = 0;
  cr_assert_eq(wsisa_sim_deadline(30, 1000, hyperbola, NULL, &ranks, &m, &e), 0);
  cr_expect_eq(ranks, 4); /* 100/4 + 5 = 30; 100/3 + 5 > 30 */
  cr_expect_float_eq(m, 30, 1e-12);
  cr_expect_leq(calls, 6, "doubling then bisection, not a scan");
  cr_assert_eq(wsisa_sim_deadline(200, 1000, hyperbola, NULL, &ranks, &m, &e), 0);
  cr_expect_eq(ranks, 1);
  /* out of reach: none, with the makespan of the most ranks */
  cr_assert_eq(wsisa_sim_deadline(5, 64, hyperbola, NULL, &ranks, &m, &e), 0);
  cr_expect_eq(ranks, 0);
  cr_expect_float_eq(m, 100.0 / 64 + 5, 1e-12);
  cr_expect_eq(wsisa_sim_deadline(0, 64, hyperbola, NULL, &ranks, &m, &e), WSISA_EUSAGE);
}

/* ---- from real performance models ------------------------------------------------- */

/* A study of `trajectories` MOAT trajectories on one image, into dir. */
/* A temporary folder of our own: tu_tmpdir's buffers are reused. */
static const char *own_tmpdir(const char *tag) {
  static char dirs[4][4096];
  static int next;
  char *d = dirs[next++ % 4];
  snprintf(d, sizeof dirs[0], "%s", tu_tmpdir(tag));
  return d;
}

static const char *write_study(const char *dir, const char *name, const char *image,
                               const char *extra) {
  static char path[4][4200];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s.json", dir, name);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"images\": [\"%s\"] },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
          "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\"%s }\n",
          image, extra ? extra : "");
  fclose(f);
  return p;
}

static json_t *run_json(const char *home, const char *args, int expect) {
  char cmd[12800], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "env STARPU_HOME='%s' STARPU_NCPU=2 '%s' %s", home,
           WSISA_EXE, args);
  int rc = tu_run_shell(cmd, &out, &err);
  cr_assert_eq(rc, expect, "%s: exit %d: %s", cmd, rc, err ? err : "");
  json_t *root = NULL;
  if (expect == 0 && out && *out == '{') {
    json_error_t je;
    root = json_loads(out, 0, &je);
    cr_assert_not_null(root, "not JSON: %s", je.text);
  }
  free(out);
  free(err);
  return root;
}

static double num(const json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  cr_assert(json_is_number(v), "%s: not a number", key);
  return json_number_value(v);
}

/* A fresh STARPU_HOME calibrated on tile_256.png. */
static const char *calibrated_home(const char *dir, const char *study) {
  static char home[4200];
  snprintf(home, sizeof home, "%s/home", dir);
  char args[4400];
  snprintf(args, sizeof args, "calibrate --study '%s'", study);
  run_json(home, args, 0);
  return home;
}

/* A calibration probe's file beside the models set aside (`aside` 1), out of
 * the estimate's sight, or put back (0). */
static void set_aside(const char *home, const char *file, int aside) {
  char models[4400], away[4400];
  snprintf(models, sizeof models, "%s/.starpu/sampling/%s", home, file);
  snprintf(away, sizeof away, "%s/%s.aside", home, file);
  cr_assert_eq(aside ? rename(models, away) : rename(away, models), 0, "%s", file);
}

static json_t *estimate(const char *home, const char *study, const char *more) {
  char args[4400];
  snprintf(args, sizeof args, "plan --study '%s' --estimate --json %s", study, more ? more : "");
  json_t *root = run_json(home, args, 0);
  cr_assert_not_null(root);
  return root;
}

/* The estimate's makespan with a probe's file set aside (left aside), which
 * its `how` then says was not measured. */
static double estimate_without(const char *home, const char *study, const char *file,
                               const char *how_key) {
  set_aside(home, file, 1);
  json_t *root = estimate(home, study, NULL);
  json_t *est = json_object_get(root, "estimate");
  const char *how = json_string_value(json_object_get(est, how_key));
  cr_expect(how && strstr(how, "not measured"), "%s: %s", how_key, how ? how : "(none)");
  double makespan = num(est, "makespan_s");
  json_decref(root);
  return makespan;
}

Test(engine_estimate, an_uncalibrated_codelet_is_reported) {
  const char *dir = own_tmpdir("estimate-uncal");
  const char *study = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  const char *home = calibrated_home(dir, study);
  json_t *root = estimate(home, study, NULL);
  json_t *est = json_object_get(root, "estimate");
  cr_assert_not_null(est);
  cr_expect_gt(num(est, "makespan_s"), 0);
  cr_expect_float_eq(num(json_object_get(est, "evidence"), "measured"), 1.0, 1e-9,
                     "calibration leaves no task unmeasured");
  cr_expect_float_eq(num(est, "uncalibrated_share"), 0, 1e-12);
  cr_expect_str_eq(json_string_value(json_object_get(root, "cost_model")), "models");
  /* calibration measured the workers busy at once */
  const char *busy = json_string_value(json_object_get(est, "busy_workers_how"));
  cr_expect(busy && strstr(busy, "calibration:"), "%s", busy ? busy : "(none)");
  cr_expect_gt(num(est, "busy_factor"), 0);
  /* at the workers its simulation kept busy: one at least, two at most */
  cr_expect_geq(num(est, "busy_workers"), 1);
  cr_expect_leq(num(est, "busy_workers"), 2 + 1e-9);
  /* ... on its own round (the design's segmentations), one worker against
   * the two it ran with */
  char bpath[4400];
  snprintf(bpath, sizeof bpath, "%s/.starpu/sampling/wsisa_busy_workers.json", home);
  json_t *bw = json_load_file(bpath, 0, NULL);
  cr_assert_not_null(bw, "%s", bpath);
  cr_expect_eq(json_integer_value(json_object_get(bw, "calibrated_cpu_workers")), 2);
  cr_expect_geq(json_integer_value(json_object_get(bw, "segmentations")), 1);
  cr_expect_gt(num(bw, "alone_s"), 0);
  json_t *pts = json_object_get(bw, "factors");
  cr_assert_geq(json_array_size(pts), 1);
  cr_expect_eq(json_integer_value(json_array_get(json_array_get(pts, 0), 0)), 1);
  cr_expect_float_eq(json_real_value(json_array_get(json_array_get(pts, 0), 1)), 1.0, 1e-12);
  for (size_t i = 0; i < json_array_size(pts); i++)
    cr_expect_gt(json_real_value(json_array_get(json_array_get(pts, i), 1)), 0);
  json_decref(bw);
  /* the levels' probe screened pairs of parameters for their interplay, and
   * timed the pair it chose over the grid of their sweeps' values */
  snprintf(bpath, sizeof bpath, "%s/.starpu/sampling/wsisa_level_costs.json", home);
  json_t *lc = json_load_file(bpath, 0, NULL);
  cr_assert_not_null(lc, "%s", bpath);
  json_t *pair = json_object_get(lc, "pair"), *screened = json_object_get(pair, "screened");
  cr_assert(json_is_array(screened), "%s: no pair.screened", bpath);
  for (size_t i = 0; i < json_array_size(screened); i++)
    cr_expect_gt(num(json_array_get(screened, i), "over_product"), 0);
  json_t *names = json_object_get(pair, "parameters");
  if (names) {
    json_t *sweeps = json_object_get(lc, "parameters");
    size_t n0 = json_array_size(json_object_get(sweeps, json_string_value(json_array_get(names, 0))));
    size_t n1 = json_array_size(json_object_get(sweeps, json_string_value(json_array_get(names, 1))));
    cr_expect_gt(n0 * n1, 0);
    cr_expect_eq(json_array_size(json_object_get(pair, "points")), n0 * n1);
  }
  json_decref(lc);
  /* the object-reuse probe ran each parameter at values spread over its
   * design range and compared every two: a point a distance apart, the
   * widest the whole range, each a share of pixels */
  snprintf(bpath, sizeof bpath, "%s/.starpu/sampling/wsisa_object_reuse.json", home);
  json_t *orj = json_load_file(bpath, 0, NULL);
  cr_assert_not_null(orj, "%s", bpath);
  const char *pname;
  json_t *pv;
  int moved = 0;
  json_object_foreach(json_object_get(orj, "parameters"), pname, pv) {
    json_t *curves = json_object_get(pv, "curves");
    cr_expect_geq(json_array_size(curves), 1, "%s: no curve", pname);
    for (size_t c = 0; c < json_array_size(curves); c++) {
      json_t *cv = json_array_get(curves, c), *vals = json_object_get(cv, "values"),
             *points = json_object_get(cv, "points");
      size_t n = json_array_size(vals);
      cr_assert(n >= 2 && n <= 9, "%s: %zu values", pname, n);
      cr_expect_eq(json_array_size(points), n - 1, "%s: a point a gap", pname);
      double last = 0;
      for (size_t k = 0; k < json_array_size(points); k++) {
        json_t *pt = json_array_get(points, k);
        double d = json_number_value(json_array_get(pt, 0));
        cr_expect_gt(d, last, "%s: distances grow", pname);
        last = d;
        for (size_t l = 1; l <= 2; l++) {
          double miss = json_number_value(json_array_get(pt, l));
          cr_expect(miss >= 0 && miss <= 1, "%s: share %g", pname, miss);
          moved |= l == 1 && miss > 0;
        }
      }
      double span = json_number_value(json_array_get(vals, n - 1)) -
                    json_number_value(json_array_get(vals, 0));
      cr_expect_float_eq(last, span, 1e-9, "%s: the widest point, %g, the range, %g", pname,
                         last, span);
    }
  }
  cr_expect(moved, "no parameter's change moved a cluster");
  json_decref(orj);
  /* ... and a tile's read, which holds the submitter before its stage: the
   * estimate without it is shorter. The busy factor is set aside for both:
   * the workers a simulation keeps busy move with the read, and a move under
   * 1 % is not simulated again, so with it the two could tie or cross. */
  const char *reads = json_string_value(json_object_get(est, "tile_reads_how"));
  cr_expect(reads && strstr(reads, "calibration:"), "%s", reads ? reads : "(none)");
  json_decref(root);
  double makespan = estimate_without(home, study, "wsisa_busy_workers.json", "busy_workers_how");
  cr_expect_lt(estimate_without(home, study, "wsisa_tile_reads.json", "tile_reads_how"), makespan);
  set_aside(home, "wsisa_tile_reads.json", 0);
  set_aside(home, "wsisa_busy_workers.json", 0);

  /* ... and a page's first write: a rank's working set (peak over
   * baseline) at that rate over its workers, in the makespan */
  root = estimate(home, study, NULL);
  est = json_object_get(root, "estimate");
  const char *fresh = json_string_value(json_object_get(est, "fresh_memory_how"));
  cr_expect(fresh && strstr(fresh, "calibration:"), "%s", fresh ? fresh : "(none)");
  cr_expect_gt(num(est, "fresh_memory_s"), 0);
  json_decref(root);
  char path[4300];
  snprintf(path, sizeof path, "%s/.starpu/sampling/wsisa_fresh_memory.json", home);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "{ \"bytes\": 1048576, \"maps\": 5, \"seconds\": 0.001 }\n");
  fclose(f);
  root = estimate(home, study, NULL);
  est = json_object_get(root, "estimate");
  double set = num(est, "fresh_memory_s"), with = num(est, "makespan_s");
  double ws = num(est, "peak_rss_bytes") - num(est, "baseline_rss_bytes");
  cr_expect_float_eq(set, ws / 1048576.0 * 0.001 / 2, 1e-9, "fresh %g for %g bytes", set, ws);
  json_decref(root);
  cr_assert_eq(remove(path), 0);
  root = estimate(home, study, NULL);
  est = json_object_get(root, "estimate");
  fresh = json_string_value(json_object_get(est, "fresh_memory_how"));
  cr_expect(fresh && strstr(fresh, "not measured"), "%s", fresh ? fresh : "(none)");
  cr_expect_float_eq(num(est, "fresh_memory_s"), 0, 1e-12);
  cr_expect_float_eq(num(est, "makespan_s"), with - set, 1e-9);
  json_decref(root);

  /* the watershed's model gone: its time is a guess, and said to be */
  char cmd[8600];
  snprintf(cmd, sizeof cmd, "rm -f '%s'/.starpu/sampling/codelets/*/wsisa_watershed_v*", home);
  cr_assert_eq(system(cmd), 0);
  root = estimate(home, study, NULL);
  est = json_object_get(root, "estimate");
  double share = num(est, "uncalibrated_share");
  cr_expect_gt(share, 0);
  cr_expect_lt(share, 1);
  json_t *listed = json_object_get(est, "uncalibrated");
  cr_assert_eq(json_array_size(listed), 1, "the watershed, and nothing else");
  json_t *w = json_array_get(listed, 0);
  cr_expect_str_eq(json_string_value(json_object_get(w, "codelet")), "watershed");
  cr_expect_str_eq(json_string_value(json_object_get(w, "evidence")), "no data");
  cr_expect_float_eq(num(w, "share"), share, 1e-9);
  cr_expect_float_eq(num(json_object_get(est, "evidence"), "no data"), share, 1e-9);
  cr_expect_gt(num(est, "makespan_s"), 0);
  (void)makespan;
  json_decref(root);

  /* the text report names it too */
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "env STARPU_HOME='%s' '%s' plan --study '%s' --estimate", home,
           WSISA_EXE, study);
  cr_assert_eq(tu_run_shell(cmd, &out, &err), 0, "%s", err);
  cr_expect(strstr(out, "uncalibrated") && strstr(out, "watershed (no data)"), "%s", out);
  free(out);
  free(err);
}

Test(engine_estimate, no_models_no_estimate) {
  const char *dir = own_tmpdir("estimate-none");
  const char *study = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  char home[4200], cmd[12800], *out = NULL, *err = NULL;
  snprintf(home, sizeof home, "%s/empty", dir);
  snprintf(cmd, sizeof cmd, "env STARPU_HOME='%s' '%s' plan --study '%s' --estimate", home, WSISA_EXE,
           study);
  cr_expect_eq(tu_run_shell(cmd, &out, &err), 2);
  cr_expect(err && strstr(err, "no calibrated performance model of this study's tasks") &&
                strstr(err, "wsisa calibrate --study"),
            "%s", err);
  cr_expect(out && !*out, "no partial output");
  free(out);
  free(err);
  /* without --estimate the plan goes on, by task counts */
  snprintf(cmd, sizeof cmd, "plan --study '%s' --json", study);
  json_t *root = run_json(home, cmd, 0);
  cr_assert_not_null(root);
  cr_expect_str_eq(json_string_value(json_object_get(root, "cost_model")), "tasks");
  cr_expect(!json_object_get(root, "estimate"));
  json_decref(root);
}

Test(engine_estimate, a_tile_size_never_measured_is_interpolated_per_pixel) {
  const char *dir = own_tmpdir("estimate-interp");
  const char *big = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  /* the same design on a 128 x 128 crop of the tile */
  wsisa_image *img = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_image_read_rgb(tu_src("tests/data/tile_256.png"), &img, &e), 0, "%s", e.msg);
  wsisa_image crop = *img;
  crop.width = crop.height = 128;
  crop.owns_data = 0;
  char png[4300];
  snprintf(png, sizeof png, "%s/tile_128.png", dir);
  cr_assert_eq(wsisa_image_write(png, &crop, &e), 0, "%s", e.msg);
  wsisa_image_free(img);
  const char *small = write_study(dir, "s128", png, NULL);
  const char *home = calibrated_home(dir, big);

  json_t *a = estimate(home, big, NULL), *b = estimate(home, small, NULL);
  json_t *eb = json_object_get(b, "estimate");
  cr_expect_geq(num(json_object_get(eb, "evidence"), "interpolated"), 0.99,
                "the 256 x 256 tasks stand for the 128 x 128 ones");
  cr_expect_float_eq(num(eb, "uncalibrated_share"), 0, 1e-12);
  /* one size measured: the cost per pixel carries over, a quarter the time */
  json_t *ca = json_object_get(a, "level_costs"), *cb = json_object_get(b, "level_costs");
  cr_assert_eq(json_array_size(ca), 7);
  cr_assert_eq(json_array_size(cb), 7);
  for (size_t l = 0; l < 7; l++) {
    double x = json_number_value(json_array_get(ca, l)), y = json_number_value(json_array_get(cb, l));
    cr_expect_float_eq(y, x / 4, 1e-9 * x + 1e-12, "level %zu: %g against %g / 4", l + 1, y, x);
  }
  json_decref(a);
  json_decref(b);
}

Test(engine_estimate, run_json_holds_predicted_and_actual) {
  const char *dir = own_tmpdir("estimate-run");
  const char *study = write_study(dir, "s256", tu_src("tests/data/tile_256.png"), NULL);
  const char *home = calibrated_home(dir, study);
  char args[8600], path[4300];
  snprintf(args, sizeof args, "run --study '%s' -o '%s/r'", study, dir);
  run_json(home, args, 0);
  snprintf(path, sizeof path, "%s/r/run.json", dir);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  json_t *est = json_object_get(root, "estimate");
  json_t *p = json_object_get(est, "predicted"), *a = json_object_get(est, "actual");
  cr_assert(p && a, "run.json: no estimate");
  cr_expect_gt(num(p, "makespan_s"), 0);
  cr_expect_gt(num(p, "peak_rss_bytes"), num(p, "baseline_rss_bytes"));
  cr_expect_float_eq(num(p, "interpolated_share"), 0, 1e-12, "calibrated on the run's own tile");
  cr_expect_float_eq(num(a, "makespan_s"), num(json_object_get(root, "seconds"), "execute"), 1e-6);
  cr_expect_float_eq(num(a, "peak_rss_bytes"), 1024 * num(root, "peak_rss_kib"), 1);
  double err = num(json_object_get(est, "error_percent"), "makespan");
  cr_expect_float_eq(err, 100 * (num(p, "makespan_s") - num(a, "makespan_s")) / num(a, "makespan_s"),
                     1e-4 * (1 + fabs(err)));
  cr_expect_str_eq(json_string_value(json_object_get(json_object_get(root, "reuse"), "cost_model")),
                   "models");
  json_decref(root);
  /* the costs the plan was made with stay in the resolved study, for a resume */
  snprintf(path, sizeof path, "%s/r/study.json", dir);
  root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  json_t *lc = json_object_get(json_object_get(root, "reuse"), "level_costs");
  cr_expect_eq(json_array_size(lc), 7);
  cr_expect_gt(json_number_value(json_array_get(lc, 5)), 0);
  json_decref(root);
  /* a resume with nothing left reads them back */
  snprintf(args, sizeof args, "run --resume '%s/r'", dir);
  run_json(home, args, 0);
}

Test(engine_estimate, cost_aware_reuse_leaves_the_metrics_alone) {
  const char *dir = own_tmpdir("estimate-metrics");
  const char *image = tu_src("tests/data/tile_256.png");
  const char *models = write_study(dir, "models", image, ", \"reuse\": { \"strategy\": \"trtma\" }");
  const char *tasks = write_study(dir, "tasks", image,
                                  ", \"reuse\": { \"strategy\": \"trtma\", \"cost_model\": \"tasks\" }");
  const char *home = calibrated_home(dir, models);
  char args[8600];
  const char *studies[] = {models, tasks, models};
  const char *more[] = {"", "", "--reuse rtma --max-bucket-size 3"};
  char *csv[3];
  for (int i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "run --study '%s' -o '%s/r%d' %s", studies[i], dir, i, more[i]);
    run_json(home, args, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/r%d/metrics.csv", dir, i);
    csv[i] = tu_slurp(path, NULL);
    cr_assert_not_null(csv[i]);
  }
  cr_expect_str_eq(csv[0], csv[1], "measured level costs against task counts");
  cr_expect_str_eq(csv[0], csv[2], "trtma by cost against rtma by cost");
  for (int i = 0; i < 3; i++) free(csv[i]);
}

/* The fixture's tile on 1 CPU + 1 OpenCL worker at the costs `ocl`. */
static void simulate_hybrid(fixture *f, const wsisa__sim_costs *ocl, wsisa_placement placement,
                            wsisa_sim_result *r) {
  wsisa__sim_costs c = {1, 2, &f->open, &f->open_path, &f->stage, &f->measure, &f->background,
                       f->level, f->variant, ocl, NULL, NULL, NULL, NULL};
  wsisa__sim_job j = {1, f->shape, f->b, f->params, 1, 0, NULL, 1, 2, NULL, 1, (int)placement};
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa__sim_run(&c, &j, r, &e), 0, "%s", e.msg);
}

/* OpenCL workers at their own costs: a kind that can run nothing leaves the
 * CPU worker alone; one as fast as a CPU worker is a second CPU worker. */
Test(engine_estimate, opencl_workers_take_what_they_finish_first) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  double inf = INFINITY, never[WSISA_SEG_LEVELS * 2];
  for (int i = 0; i < WSISA_SEG_LEVELS * 2; i++) never[i] = inf;
  wsisa__sim_costs none = {1,     2,         &f.open, &f.open_path, &inf, &inf, &inf,
                           never, f.variant, NULL,    NULL,         NULL, NULL, NULL};
  wsisa__sim_costs same = {1, 2, &f.open, &f.open_path, &f.stage, &f.measure, &f.background,
                          f.level, f.variant, NULL, NULL, NULL, NULL, NULL};
  const wsisa__sim_costs *ocl[] = {&none, &same};
  const double want[] = {10 + 0.5 + 2 * 30, 40.5};
  for (int k = 0; k < 2; k++) {
    wsisa_sim_result r;
    simulate_hybrid(&f, ocl[k], WSISA_PLACEMENT_TASK, &r);
    cr_expect_float_eq(r.makespan, want[k], 1e-9, "OpenCL kind %d: makespan %g", k, r.makespan);
    wsisa_sim_result_free(&r);
  }
  fixture_free(&f);
}

/* Unit placement, 1 CPU + 1 OpenCL worker: by the priors (4 s a task on the
 * CPU, 8 or never on the OpenCL kind) the unit that opens the tile, with its
 * stage (cost 14 + 9), goes to the CPU (92 against 184 s), the second (14)
 * to a slow OpenCL kind ((23 + 14) x 4 = 148 against 112) but not to one
 * that runs nothing; each chain runs on its kind alone, even where the
 * other kind would end a task first. */
Test(engine_estimate, unit_placement_keeps_a_unit_on_its_kind) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  double inf = INFINITY, never[WSISA_SEG_LEVELS * 2], slow[WSISA_SEG_LEVELS * 2];
  for (int i = 0; i < WSISA_SEG_LEVELS * 2; i++) never[i] = inf, slow[i] = 2 * f.level[i];
  const double slow_stage = 2 * f.stage, slow_measure = 2 * f.measure,
               slow_background = 2 * f.background;
  wsisa__sim_costs none = {1,     2,         &f.open, &f.open_path, &inf, &inf, &inf,
                           never, f.variant, NULL,    NULL,         NULL, NULL, NULL};
  wsisa__sim_costs twice = {1, 2, &f.open, &f.open_path, &slow_stage, &slow_measure,
                           &slow_background, slow, f.variant, NULL, NULL, NULL, NULL, NULL};
  const wsisa__sim_costs *ocl[] = {&none, &twice};
  /* open and count on the CPU (10.5); then a chain of 30 s on the CPU and
   * one of 30 s there too (the OpenCL kind runs none of it), or of 60 s on
   * the OpenCL worker */
  const double want[] = {10 + 0.5 + 2 * 30, 10 + 0.5 + 60}, work[] = {70.5, 100.5};
  for (int k = 0; k < 2; k++) {
    wsisa_sim_result r;
    simulate_hybrid(&f, ocl[k], WSISA_PLACEMENT_UNIT, &r);
    cr_expect_float_eq(r.makespan, want[k], 1e-9, "OpenCL kind %d: makespan %g", k, r.makespan);
    cr_expect_float_eq(r.work, work[k], 1e-9, "OpenCL kind %d: work %g", k, r.work);
    wsisa_sim_result_free(&r);
    /* task placement gives the slow kind's tasks to the CPU when it ends
     * them first */
    simulate_hybrid(&f, ocl[k], WSISA_PLACEMENT_TASK, &r);
    if (k == 1) cr_expect_lt(r.work, work[k], "task placement: work %g", r.work);
    wsisa_sim_result_free(&r);
  }
  fixture_free(&f);
}

/* An object-reuse model: levels 6-7 at 1.1 x their fine-grain time with an
 * empty store, 0.2 x with a full one; every parameter's change misses 0.3. */
static void objects_model_make(wsisa__objects_model *m) {
  memset(m, 0, sizeof *m);
  m->loaded = 1;
  for (int l = 0; l < 2; l++) {
    m->fine[l] = 1;
    m->cold[l] = 1.1;
    m->hit[l] = 0.2;
    for (int p = 0; p < WSISA_SEG_NPARAMS; p++) m->miss[l][p] = 0.3;
  }
}

/* Every level-6/7 task of the plan priced in bucket order, each tree depth
 * first, in one store (one rank holding the tile): scale[k][i] per node
 * (1 above level 6), and the share of the reusable work reused. */
static void price_in_one_store(const wsisa__objects_model *m, const fixture *f,
                               const double *run_time, double scale[][16], double *share) {
  wsisa__objects_pricer pr;
  cr_assert_eq(wsisa__objects_pricer_init(&pr, m, f->b, f->params, run_time), 0);
  wsisa__objects_seen seen;
  memset(&seen, 0, sizeof seen);
  double computed = 0, all = 0;
  for (size_t k = 0; k < f->b->n_buckets; k++) {
    const wsisa_reuse_tree *t = f->b->trees[k];
    cr_assert_leq(t->n_nodes, 16);
    for (size_t i = 0; i < t->n_nodes; i++) {
      const wsisa_reuse_node *n = &t->nodes[i];
      scale[k][i] = n->level < 6 ? 1
                                 : wsisa__objects_price(&pr, &seen, t->instances[n->first_instance],
                                                        n->level, &computed, &all);
      cr_assert_geq(scale[k][i], 0, "out of memory");
    }
  }
  *share = all > 0 ? 1 - computed / all : 0;
  wsisa__objects_seen_free(&seen);
  wsisa__objects_pricer_free(&pr);
}

/* Object reuse: the first level-6/7 task of a tile computes every unit, a
 * later one what the parameters it differs in leave, by their measured
 * shares; a level-7 parameter changed misses every group. */
Test(engine_estimate, object_reuse_prices_the_units_a_tile_has_seen) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  f.params[WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  wsisa__objects_model m;
  objects_model_make(&m);
  double scale[8][16], share = -1;
  cr_assert_leq(f.b->n_buckets, 8);
  price_in_one_store(&m, &f, NULL, scale, &share);
  double seen[2][4];
  int n[2] = {0, 0};
  for (size_t k = 0; k < f.b->n_buckets; k++)
    for (size_t i = 0; i < f.b->trees[k]->n_nodes; i++) {
      int l = f.b->trees[k]->nodes[i].level;
      if (l >= 6 && n[l - 6] < 4) seen[l - 6][n[l - 6]++] = scale[k][i];
      else cr_expect_float_eq(scale[k][i], 1, 1e-12);
    }
  cr_assert_eq(n[0], 2);
  cr_assert_eq(n[1], 2);
  for (int l = 0; l < 2; l++) {
    cr_expect_float_eq(seen[l][0], 1.1, 1e-12, "level %d, first", l + 6);
    cr_expect_float_eq(seen[l][1], 0.2 + 0.3 * 0.9, 1e-12, "level %d, after T1 moved", l + 6);
  }
  cr_expect_float_eq(share, 1 - (1 + 0.3) / 2, 1e-12);
  /* a level-7 parameter changed: every group computed */
  f.params[WSISA_SEG_NPARAMS + WSISA_P_MIN_SIZE_SEG] += 1;
  price_in_one_store(&m, &f, NULL, scale, &share);
  n[1] = 0;
  for (size_t k = 0; k < f.b->n_buckets; k++)
    for (size_t i = 0; i < f.b->trees[k]->n_nodes; i++)
      if (f.b->trees[k]->nodes[i].level == 7) seen[1][n[1]++] = scale[k][i];
  cr_expect_float_eq(seen[1][1], 1.1, 1e-12);
  fixture_free(&f);
}

/* Object reuse where more of the tile reaches levels 6-7: a run's empty- and
 * full-store ratios are taken at its level time, between the segmentations
 * calibration measured (linear in log time, the nearest's outside them). */
Test(engine_estimate, object_reuse_ratios_follow_the_run_level_time) {
  fixture f;
  fixture_make(&f, WSISA_REUSE_STAGE);
  f.params[WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  wsisa__objects_model m;
  objects_model_make(&m);
  for (int l = 0; l < 2; l++) {
    m.nsegs[l] = 2;
    m.seg_fine[l][0] = 1, m.seg_cold[l][0] = 1.1, m.seg_hit[l][0] = 0.2;
    m.seg_fine[l][1] = 4, m.seg_cold[l][1] = 2.1, m.seg_hit[l][1] = 0.6;
  }
  /* run 0 at twice the defaults' level time (halfway in log), run 1 at 8
   * times (beyond the costliest: its ratios) */
  double run_time[2 * WSISA_SEG_LEVELS];
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) run_time[l] = 2, run_time[WSISA_SEG_LEVELS + l] = 8;
  double scale[8][16], share = -1;
  cr_assert_leq(f.b->n_buckets, 8);
  price_in_one_store(&m, &f, run_time, scale, &share);
  double seen[2][2];
  int n[2] = {0, 0};
  for (size_t k = 0; k < f.b->n_buckets; k++)
    for (size_t i = 0; i < f.b->trees[k]->n_nodes; i++) {
      int l = f.b->trees[k]->nodes[i].level;
      if (l >= 6 && n[l - 6] < 2) seen[l - 6][n[l - 6]++] = scale[k][i];
    }
  cr_assert_eq(n[0], 2);
  for (int l = 0; l < 2; l++) {
    cr_expect_float_eq(seen[l][0], 1.6, 1e-12, "level %d, first: %g", l + 6, seen[l][0]);
    cr_expect_float_eq(seen[l][1], 0.6 + 0.3 * (2.1 - 0.6), 1e-12, "level %d, second: %g", l + 6,
                       seen[l][1]);
  }
  /* the share reused weighs each task's reusable work at its own time */
  double computed = 1.2 * 2 + 0.3 * 1.5 * 8, all = 1.2 * 2 + 1.5 * 8;
  cr_expect_float_eq(share, 1 - computed / all, 1e-12, "share %g", share);
  /* without the runs' times: the defaults' ratios */
  price_in_one_store(&m, &f, NULL, scale, &share);
  cr_expect_float_eq(share, 1 - (1 + 0.3) / 2, 1e-12);
  fixture_free(&f);
}

/* Per run, the share of level 6's stand-ins its task missed (the model of
 * objects_model_make: 0.2 + 0.9 miss). */
static void level6_miss(const fixture *f, double scale[][16], double *miss) {
  for (size_t k = 0; k < f->b->n_buckets; k++)
    for (size_t i = 0; i < f->b->trees[k]->n_nodes; i++) {
      const wsisa_reuse_node *n = &f->b->trees[k]->nodes[i];
      if (n->level == 6) miss[f->b->trees[k]->instances[n->first_instance]] = (scale[k][i] - 0.2) / 0.9;
    }
}

/* A stand-in is found in any earlier task of the store, not only the
 * nearest: runs A, B (T1 and G1 moved) and AB (T1 moved alone, as a VBD
 * design's rows are). Each change misses 0.3 of the stand-ins, each
 * parameter its own: B misses 1 - 0.7^2 = 0.51 of them; AB misses only
 * those moved by T1 (not in A) and by G1 (not in B), about 0.3^2 = 0.09,
 * where the nearest earlier task alone would leave 0.3. */
Test(engine_estimate, object_reuse_finds_a_unit_in_any_earlier_task) {
  fixture f;
  fixture_make_runs(&f, WSISA_REUSE_STAGE, 3);
  cr_assert_eq(f.b->n_buckets, 3, "one run a bucket");
  f.params[WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  f.params[WSISA_SEG_NPARAMS + WSISA_P_G1] += 1;
  f.params[2 * WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  wsisa__objects_model m;
  objects_model_make(&m);
  double scale[8][16], share = -1, miss[3] = {-1, -1, -1};
  price_in_one_store(&m, &f, NULL, scale, &share);
  level6_miss(&f, scale, miss);
  cr_expect_float_eq(miss[0], 1, 1e-12, "A: %g", miss[0]);
  cr_expect_float_eq(miss[1], 0.51, 0.03, "B: %g", miss[1]);
  cr_expect_float_eq(miss[2], 0.09, 0.03, "AB: %g", miss[2]);
  fixture_free(&f);
}

/* Stores that saw the same runs in the same order share their answers: a
 * second tile's store takes the first's, and when it sees a run the first
 * did not, its stand-ins are brought up to the runs it saw first. Every
 * answer is the one a pricer of its own gives. */
Test(engine_estimate, object_stores_seeing_the_same_runs_share_answers) {
  fixture f;
  fixture_make_runs(&f, WSISA_REUSE_STAGE, 4);
  f.params[WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  f.params[WSISA_SEG_NPARAMS + WSISA_P_G1] += 1;
  f.params[2 * WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  f.params[3 * WSISA_SEG_NPARAMS + WSISA_P_G1] += 1;
  wsisa__objects_model m;
  objects_model_make(&m);
  /* the order each store sees: the first and second alike, then apart */
  const size_t order[3][3] = {{0, 1, 2}, {0, 1, 3}, {0, 1, 3}};
  wsisa__objects_pricer shared;
  cr_assert_eq(wsisa__objects_pricer_init(&shared, &m, f.b, f.params, NULL), 0);
  wsisa__objects_seen seen[3];
  memset(seen, 0, sizeof seen);
  for (int s = 0; s < 3; s++) {
    wsisa__objects_pricer own;
    cr_assert_eq(wsisa__objects_pricer_init(&own, &m, f.b, f.params, NULL), 0);
    wsisa__objects_seen alone;
    memset(&alone, 0, sizeof alone);
    for (int i = 0; i < 3; i++) {
      double c = 0, a = 0, c1 = 0, a1 = 0;
      double x = wsisa__objects_price(&shared, &seen[s], order[s][i], 6, &c, &a);
      double y = wsisa__objects_price(&own, &alone, order[s][i], 6, &c1, &a1);
      cr_expect_float_eq(x, y, 1e-12, "store %d, task %d: %g against %g", s, i, x, y);
    }
    wsisa__objects_seen_free(&alone);
    wsisa__objects_pricer_free(&own);
  }
  /* a store emptied (its tile opened again) starts over */
  wsisa__objects_seen_clear(&seen[0]);
  double c = 0, a = 0;
  cr_expect_float_eq(wsisa__objects_price(&shared, &seen[0], 3, 6, &c, &a), 1.1, 1e-12);
  for (int s = 0; s < 3; s++) wsisa__objects_seen_free(&seen[s]);
  wsisa__objects_pricer_free(&shared);
  fixture_free(&f);
}

/* Parameter p's measured curve, miss(d) = 0.6 (1 - exp(-0.5 d)) at changes
 * of 0.5 to 4, from the defaults. */
static void curve_0_6(wsisa__objects_model *m, int p) {
  m->ncurves[p] = 1;
  m->npoints[0][p] = 4;
  for (int k = 0; k < 4; k++) {
    m->step[0][p][k] = 0.5 * (1 << k);
    for (int l = 0; l < 2; l++) m->at[0][l][p][k] = 0.6 * -expm1(-0.5 * m->step[0][p][k]);
  }
  memcpy(m->base[0][p], wsisa_seg_defaults(), sizeof m->base[0][p]);
}

/* A parameter's measured curve, miss(d) = 0.6 (1 - exp(-0.5 d)) at changes
 * of 0.5 to 4: the stand-ins follow it, 0.6 of them moved at all, at cuts
 * 0.5 apart on average; a change of 1 then misses about 0.236 of them. */
Test(engine_estimate, object_stand_ins_follow_the_measured_curve) {
  fixture f;
  fixture_make_runs(&f, WSISA_REUSE_STAGE, 3);
  wsisa__objects_model m;
  objects_model_make(&m);
  const int p = WSISA_P_T1;
  curve_0_6(&m, p);
  /* T1 spans 4 in the design; run 2 is 1 from run 0 */
  f.params[WSISA_SEG_NPARAMS + p] += 4;
  f.params[2 * WSISA_SEG_NPARAMS + p] += 1;
  wsisa__objects_pricer pr;
  cr_assert_eq(wsisa__objects_pricer_init(&pr, &m, f.b, f.params, NULL), 0);
  cr_expect_float_eq(pr.sens[0][p], 0.6, 0.05, "share moved %g", pr.sens[0][p]);
  cr_expect(pr.rate[0][p] > 0.5 / 1.4 && pr.rate[0][p] < 0.5 * 1.4, "density %g", pr.rate[0][p]);
  wsisa__objects_pricer_free(&pr);
  double scale[8][16], share = -1, miss[3] = {-1, -1, -1};
  price_in_one_store(&m, &f, NULL, scale, &share);
  level6_miss(&f, scale, miss);
  /* run 1 (a change of 4) misses about 0.6 (1 - e^-2) = 0.52; run 2 (1
   * from run 0, 3 from run 1) what neither holds */
  cr_expect_float_eq(miss[1], 0.6 * -expm1(-2.0), 0.06, "a change of 4: %g", miss[1]);
  cr_expect(miss[2] > 0.1 && miss[2] < 0.236 + 0.04, "a change of 1 after both: %g", miss[2]);
  fixture_free(&f);
}

/* Run `run`'s level-l task priced after the reference alone (a store that
 * saw the tile's reference segmentation first): the share of its stand-ins
 * missed (the model of objects_model_make: 0.2 + 0.9 miss). */
static double after_reference(const wsisa__objects_model *m, const fixture *f, size_t run, int l) {
  wsisa__objects_pricer pr;
  cr_assert_eq(wsisa__objects_pricer_init(&pr, m, f->b, f->params, NULL), 0);
  wsisa__objects_seen seen;
  memset(&seen, 0, sizeof seen);
  cr_assert_eq(wsisa__objects_seen_reference(&seen), 0);
  double c = 0, a = 0, x = wsisa__objects_price(&pr, &seen, run, l, &c, &a);
  wsisa__objects_seen_free(&seen);
  wsisa__objects_pricer_free(&pr);
  return (x - 0.2) / 0.9;
}

/* The tile's reference segmentation (the defaults) fills its store first: a
 * run at the defaults finds every unit there, one with T1 moved misses what
 * T1's change does. A parameter the design holds away from the defaults
 * moves the reference's stand-ins as a change that long does, and so does a
 * default outside the range the design varies a parameter over. */
Test(engine_estimate, object_store_starts_with_the_reference) {
  fixture f;
  fixture_make_runs(&f, WSISA_REUSE_STAGE, 2);
  f.params[WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  wsisa__objects_model m;
  objects_model_make(&m);
  for (int l = 6; l <= 7; l++) {
    cr_expect_float_eq(after_reference(&m, &f, 0, l), 0, 1e-12, "level %d at the defaults", l);
    cr_expect_float_eq(after_reference(&m, &f, 1, l), 0.3, 1e-12, "level %d, T1 moved", l);
  }
  /* G1 held one step from the defaults: 0.3 of the stand-ins, drawn */
  for (int r = 0; r < 2; r++) f.params[r * WSISA_SEG_NPARAMS + WSISA_P_G1] += 5;
  double held = after_reference(&m, &f, 0, 6);
  cr_expect_float_eq(held, 0.3, 0.07, "G1 held away: %g", held);
  /* T1 varied over 4 to 5 from the defaults, its curve 0.6 (1 - exp(-0.5 d)):
   * the run at 4 misses about what a change of 4 does, 0.6 (1 - e^-2) */
  for (int r = 0; r < 2; r++) f.params[r * WSISA_SEG_NPARAMS + WSISA_P_G1] -= 5;
  const int p = WSISA_P_T1;
  curve_0_6(&m, p);
  f.params[p] += 4;
  f.params[WSISA_SEG_NPARAMS + p] += 4;
  double outside = after_reference(&m, &f, 0, 6);
  cr_expect_float_eq(outside, 0.6 * -expm1(-2.0), 0.08, "the defaults 4 below the range: %g",
                     outside);
  fixture_free(&f);
}

/* Ranks share no object store: in the simulation each level-6/7 task is
 * priced by what its tile's store on its own rank has seen. One tile, four
 * units (a run each; runs 1 and 3 have T1 moved): on one rank, run 1 computes
 * what T1's change misses and runs 2 and 3 find their twins; on two ranks,
 * each takes two units in turn (its credit, engine/exec/units.c) and its
 * store has seen neither twin. */
Test(engine_estimate, object_stores_are_per_rank_in_the_simulation) {
  fixture f;
  fixture_make_runs(&f, WSISA_REUSE_STAGE, 4);
  cr_assert_eq(f.b->n_buckets, 4, "one run a bucket");
  f.params[WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  f.params[3 * WSISA_SEG_NPARAMS + WSISA_P_T1] += 1;
  wsisa__objects_model m;
  objects_model_make(&m);
  wsisa__objects_pricer pr;
  cr_assert_eq(wsisa__objects_pricer_init(&pr, &m, f.b, f.params, NULL), 0);
  wsisa__sim_costs c = {1, 2, &f.open, &f.open_path, &f.stage, &f.measure, &f.background,
                       f.level, f.variant, NULL, NULL, NULL, NULL, NULL};
  const double after_t1 = 0.2 + 0.3 * 0.9;
  const double want_share[] = {1 - 1.3 / 4, 1 - 2.6 / 4};
  const double want_units6[] = {1.1 + after_t1 + 0.2 + 0.2, 2 * (1.1 + after_t1)};
  /* then with the tile's reference segmentation on each rank, first into
   * its store: the runs at the defaults find every unit, those with T1
   * moved miss what its change does */
  const double ref = 5;
  for (int with_ref = 0; with_ref < 2; with_ref++)
    for (int ranks = 1; ranks <= 2; ranks++) {
      c.reference = c.reference_path = with_ref ? &ref : NULL;
      wsisa__sim_job j = {1, f.shape, f.b, f.params, 1, 0, NULL, ranks, 1, &pr, 0,
                         WSISA_PLACEMENT_TASK};
      wsisa_sim_result r;
      wsisa_err e = WSISA_ERR_INIT;
      cr_assert_eq(wsisa__sim_run(&c, &j, &r, &e), 0, "%s", e.msg);
      double share = 1 - r.objects_computed / r.objects_reusable, units6 = 0;
      for (size_t v = 0; v < 2; v++) units6 += r.level_units[5 * 2 + v];
      if (with_ref) {
        cr_expect_float_eq(share, 1 - 0.3 * ranks / 4, 1e-12,
                           "%d ranks, the reference first: share %g", ranks, share);
      } else {
        cr_expect_float_eq(share, want_share[ranks - 1], 1e-12, "%d ranks: share %g", ranks,
                           share);
        cr_expect_float_eq(units6, want_units6[ranks - 1], 1e-12, "%d ranks: level 6 %g", ranks,
                           units6);
      }
      wsisa_sim_result_free(&r);
    }
  wsisa__objects_pricer_free(&pr);
  fixture_free(&f);
}

/* The placement rule: a kind known by its prior alone is taken at the scale
 * a measured kind shows against its own prior. The CPU kind measured 10 ms a
 * task, 3 tasks a unit of cost, over 4 workers: 7.5 ms a unit of cost, 0.375
 * of its prior of 20 ms; the OpenCL kind's prior, 22.8 ms, is taken at 8.55
 * ms: a unit of cost 40 ends at 0.34 s there against 0.9 s behind the CPU
 * kind's 80 in flight. At its prior's face value (0.91 s) it would lose. */
Test(engine_estimate, an_unmeasured_kind_is_taken_at_the_measured_scale) {
  wsisa_exec_kind_load load[WSISA_KINDS] = {
      {.in_flight = 80, .prior = 0.020, .task_seconds = 1.0, .tasks = 100, .workers = 4,
       .units_in_flight = 2},
      {.prior = 0.0228, .workers = 1}};
  cr_expect_eq(wsisa_exec_placement_choose(load, 40, 3), WSISA_KIND_OPENCL);
  /* measured too, and slow: 40 ms a task */
  load[WSISA_KIND_OPENCL].tasks = 20, load[WSISA_KIND_OPENCL].task_seconds = 0.8;
  cr_expect_eq(wsisa_exec_placement_choose(load, 40, 3), WSISA_KIND_CPU);
  /* too few tasks to be a measure: the prior, scaled, again */
  load[WSISA_KIND_OPENCL].tasks = WSISA_EXEC_KIND_MEASURED - 1;
  cr_expect_eq(wsisa_exec_placement_choose(load, 40, 3), WSISA_KIND_OPENCL);
  /* no prior and nothing measured: its first unit measures it */
  load[WSISA_KIND_OPENCL] = (wsisa_exec_kind_load){.workers = 1};
  cr_expect_eq(wsisa_exec_placement_choose(load, 40, 3), WSISA_KIND_OPENCL);
  load[WSISA_KIND_OPENCL].units_in_flight = 1;
  cr_expect_eq(wsisa_exec_placement_choose(load, 40, 3), WSISA_KIND_CPU);
}
