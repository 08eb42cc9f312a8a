/* Object reuse in the estimate (engine/estimate/objects.c and the
 * simulation): the units a tile's store has seen priced as reused, by the
 * measured curve, per rank, starting with the reference. */
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
static void price_in_one_store(const wsisa__objects_model *m, const tu_fixture *f,
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
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

/* Object reuse where more of the tile reaches levels 6-7: a run's empty- and
 * full-store ratios are taken at its level time, between the segmentations
 * calibration measured (linear in log time, the nearest's outside them). */
Test(engine_estimate, object_reuse_ratios_follow_the_run_level_time) {
  tu_fixture f;
  tu_fixture_make(&f, WSISA_REUSE_STAGE);
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
  tu_fixture_free(&f);
}

/* Per run, the share of level 6's stand-ins its task missed (the model of
 * objects_model_make: 0.2 + 0.9 miss). */
static void level6_miss(const tu_fixture *f, double scale[][16], double *miss) {
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
  tu_fixture f;
  tu_fixture_make_runs(&f, WSISA_REUSE_STAGE, 3);
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
  tu_fixture_free(&f);
}

/* Stores that saw the same runs in the same order share their answers: a
 * second tile's store takes the first's, and when it sees a run the first
 * did not, its stand-ins are brought up to the runs it saw first. Every
 * answer is the one a pricer of its own gives. */
Test(engine_estimate, object_stores_seeing_the_same_runs_share_answers) {
  tu_fixture f;
  tu_fixture_make_runs(&f, WSISA_REUSE_STAGE, 4);
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
  tu_fixture_free(&f);
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
  tu_fixture f;
  tu_fixture_make_runs(&f, WSISA_REUSE_STAGE, 3);
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
  tu_fixture_free(&f);
}

/* Run `run`'s level-l task priced after the reference alone (a store that
 * saw the tile's reference segmentation first): the share of its stand-ins
 * missed (the model of objects_model_make: 0.2 + 0.9 miss). */
static double after_reference(const wsisa__objects_model *m, const tu_fixture *f, size_t run, int l) {
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
  tu_fixture f;
  tu_fixture_make_runs(&f, WSISA_REUSE_STAGE, 2);
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
  tu_fixture_free(&f);
}

/* Ranks share no object store: in the simulation each level-6/7 task is
 * priced by what its tile's store on its own rank has seen. One tile, four
 * units (a run each; runs 1 and 3 have T1 moved): on one rank, run 1 computes
 * what T1's change misses and runs 2 and 3 find their twins; on two ranks,
 * each takes two units in turn (its credit, engine/exec/units.c) and its
 * store has seen neither twin. */
Test(engine_estimate, object_stores_are_per_rank_in_the_simulation) {
  tu_fixture f;
  tu_fixture_make_runs(&f, WSISA_REUSE_STAGE, 4);
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
  tu_fixture_free(&f);
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
