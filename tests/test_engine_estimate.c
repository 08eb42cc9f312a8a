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


static double simulate(tu_fixture *f, size_t ntiles, int ranks, int workers, size_t k, int share,
                       const uint8_t *done, wsisa_sim_result *r) {
  wsisa__sim_costs c = {1, 2, &f->open, &f->open_path, &f->stage, &f->measure, &f->background,
                       f->level, f->variant, NULL, NULL, NULL, NULL, NULL};
  wsisa__sim_job j = {ntiles, f->shape, f->b, f->params, share, k, done, ranks, workers, NULL, 0,
                     WSISA_PLACEMENT_TASK};
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa__sim_run(&c, &j, r, &e), 0, "%s", e.msg);
  return r->makespan;
}


Test(engine_estimate, one_worker_runs_everything_in_turn) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

Test(engine_estimate, two_workers_overlap_the_units) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  /* the two chains of 30 s side by side, after the open and the count */
  m = simulate(&f, 1, 1, 2, 0, 1, NULL, &r);
  cr_expect_float_eq(m, 40.5, 1e-9, "makespan %g", m);
  cr_expect_float_eq(r.efficiency, 70.5 / (2 * 40.5), 1e-9);
  cr_expect_eq(r.peak_paths, 2);
  wsisa_sim_result_free(&r);
  tu_fixture_free(&f);
}

/* The tile's reference runs beside its units: the submitter waits for the
 * stage (10 s) and the count (0.5 s) only, and a leaf's measure waits for the
 * reference. */
Test(engine_estimate, the_reference_runs_while_the_units_are_submitted) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

/* Reading a tile holds the submitting thread before the stage, and is no
 * worker's work. */
Test(engine_estimate, a_tile_read_holds_the_submitter_not_a_worker) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
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
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m = simulate(&f, 2, 1, 2, 0, 1, NULL, &r);
  cr_expect_eq(r.opens, 2);
  cr_expect_eq(r.opens_ahead, 1);
  cr_expect_float_eq(m, 76, 1e-9, "makespan %g", m);
  wsisa_sim_result_free(&r);
  m = simulate(&f, 4, 2, 2, 0, 1, NULL, &r);
  cr_expect_eq(r.opens_ahead, 0);
  wsisa_sim_result_free(&r);
  tu_fixture_free(&f);
}

Test(engine_estimate, each_run_is_priced_at_its_parameter_values) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
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
  char home[] = "/tmp/wsisa_levels_XXXXXX", dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  cr_assert_not_null(mkdtemp(home));
  tu_path(dir, "%s/.starpu/sampling", home);
  char cmd[TU_LINE_MAX];
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
  tu_path(path, "%s/wsisa_level_costs.json", dir);
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
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  /* K = 1: the second unit's levels 1-6 run beside the first path; its
   * level 7 waits for the first measure (40.5), then 7 + 2 */
  m = simulate(&f, 1, 1, 2, 1, 1, NULL, &r);
  cr_expect_float_eq(m, 49.5, 1e-9, "makespan %g", m);
  cr_expect_eq(r.peak_paths, 1);
  wsisa_sim_result_free(&r);
  tu_fixture_free(&f);
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
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/.starpu/sampling", dir);
  char cmd[TU_LINE_MAX];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
  cr_assert_eq(system(cmd), 0);
  tu_path(path, "%s/.starpu/sampling/wsisa_busy_workers.json", dir);
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
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

Test(engine_estimate, ranks_take_a_tile_each) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

Test(engine_estimate, none_pays_the_tile_stage_per_unit) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
  wsisa_sim_result r;
  double m;
  m = simulate(&f, 1, 1, 1, 0, 0, NULL, &r);
  cr_expect_float_eq(m, 10 + 0.5 + 2 * (3 + 30), 1e-9, "makespan %g", m);
  cr_expect_eq(r.stages, 2);
  wsisa_sim_result_free(&r);
  tu_fixture_free(&f);
}

Test(engine_estimate, variants_and_done_units) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

Test(engine_estimate, shared_prefixes_run_once) {
  /* two runs sharing levels 1-6 in one bucket: 6 + 2 x 1 tasks */
  uint64_t keys[2 * WSISA_SEG_LEVELS];
  for (int r = 0; r < 2; r++)
    for (int l = 0; l < WSISA_SEG_LEVELS; l++)
      keys[r * WSISA_SEG_LEVELS + l] = l < 6 ? (uint64_t)l + 1 : (uint64_t)(100 + r);
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
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

/* The tu_fixture's tile on 1 CPU + 1 OpenCL worker at the costs `ocl`. */
static void simulate_hybrid(tu_fixture *f, const wsisa__sim_costs *ocl, wsisa_placement placement,
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
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

/* Unit placement, 1 CPU + 1 OpenCL worker: by the priors (4 s a task on the
 * CPU, 8 or never on the OpenCL kind) the unit that opens the tile, with its
 * stage (cost 14 + 9), goes to the CPU (92 against 184 s), the second (14)
 * to a slow OpenCL kind ((23 + 14) x 4 = 148 against 112) but not to one
 * that runs nothing; each chain runs on its kind alone, even where the
 * other kind would end a task first. */
Test(engine_estimate, unit_placement_keeps_a_unit_on_its_kind) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}
