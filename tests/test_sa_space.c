/* Parameter spaces: the built-in segmentation table, value checks, the map from
 * the unit interval to each kind, selection, duplicate counting, input
 * distributions and groups. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sa/sa.h"
#include "tests/testutil.h"

static wsisa_sa_param make(const char *name, wsisa_sa_kind kind, double lo, double hi,
                           double step) {
  wsisa_sa_param p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "%s", name);
  p.kind = kind;
  p.lo = lo;
  p.hi = hi;
  p.step = step;
  p.value = lo;
  return p;
}

Test(sa_space, segmentation_table_in_design_order) {
  const char *names[WSISA_SA_NSEG] = {"B",  "G",  "R",  "T1", "T2",
                                      "G1", "G2", "min_size", "max_size", "min_size_pl",
                                      "min_size_seg", "max_size_seg", "fill_holes_conn",
                                      "recon_conn", "watershed_conn"};
  const int levels[WSISA_SA_NSEG] = {1, 1, 1, 1, 1, 3, 5, 4, 4, 6, 7, 7, 3, 2, 6};
  for (int i = 0; i < WSISA_SA_NSEG; i++) {
    cr_expect_str_eq(wsisa_sa_seg_params[i].name, names[i]);
    cr_expect_eq(wsisa_sa_seg_params[i].level, levels[i], "%s", names[i]);
    cr_expect_eq(wsisa_sa_seg_find(names[i]), &wsisa_sa_seg_params[i]);
  }
  const wsisa_sa_seg_param *g2 = wsisa_sa_seg_find("G2");
  cr_expect_eq(g2->def, 45);
  cr_expect_eq(g2->lo, 2);
  cr_expect_eq(g2->hi, 46, "Table 1's 2..40, widened to hold the default 45");
  cr_expect_eq(g2->step, 2);
  const wsisa_sa_seg_param *maxs = wsisa_sa_seg_find("max_size_seg");
  cr_expect_eq(maxs->kind, WSISA_SA_INTEGER);
  cr_expect_eq(maxs->lo, 900);
  cr_expect_eq(maxs->hi, 1500);
  cr_expect_eq(wsisa_sa_seg_find("watershed_conn")->kind, WSISA_SA_CATEGORICAL);
  cr_expect_null(wsisa_sa_seg_find("minS"));
}

/* The default study (`wsisa run` without --study: every parameter over its
 * built-in range) must be able to meet the reference setting: each default
 * lies in its SA range, and each SA range in what the segmentation accepts. */
Test(sa_space, default_study_ranges_hold_the_defaults) {
  wsisa_sa_space *s = NULL;
  cr_assert_eq(wsisa_sa_space_segmentation(&s, NULL), 0);
  cr_assert_eq(s->nparams, WSISA_SA_NSEG);
  for (size_t i = 0; i < s->nparams; i++) {
    const wsisa_sa_param *p = &s->params[i];
    const wsisa_sa_seg_param *sp = wsisa_sa_seg_find(p->name);
    cr_assert_not_null(sp, "%s", p->name);
    cr_expect_eq(p->value, sp->def, "%s: the space's default is the table's", p->name);
    if (p->kind == WSISA_SA_CATEGORICAL) {
      int in = 0;
      for (size_t k = 0; k < p->nvalues; k++) in |= p->values[k] == p->value;
      cr_expect(in, "%s: default %g is not one of its values", p->name, p->value);
    } else {
      cr_expect(p->lo <= p->value && p->value <= p->hi, "%s: default %g outside its range %g..%g",
                p->name, p->value, p->lo, p->hi);
      cr_expect(sp->valid_lo <= p->lo && p->hi <= sp->valid_hi,
                "%s: range %g..%g outside what the segmentation accepts", p->name, p->lo,
                p->hi);
    }
    cr_expect_eq(wsisa_sa_seg_validate(p->name, p->value, NULL), 0, "%s", p->name);
  }
  wsisa_sa_space_free(s);
}

Test(sa_space, segmentation_space_is_fifteen_varying_parameters) {
  wsisa_sa_space *s = NULL;
  cr_assert_eq(wsisa_sa_space_segmentation(&s, NULL), 0);
  cr_expect_eq(s->nparams, 15);
  cr_expect_eq(wsisa_sa_space_dims(s), 15);
  const wsisa_sa_param *t1 = &s->params[wsisa_sa_space_find(s, "T1")];
  cr_expect_eq(wsisa_sa_param_count(t1), 11, "T1 2.5..7.5 by 0.5");
  cr_expect_eq(wsisa_sa_param_count(&s->params[wsisa_sa_space_find(s, "G1")]), 16);
  cr_expect_eq(wsisa_sa_param_count(&s->params[wsisa_sa_space_find(s, "max_size")]), 601);
  cr_expect_eq(s->params[wsisa_sa_space_find(s, "recon_conn")].level, 2);
  wsisa_sa_space_free(s);
}

Test(sa_space, validate_values_for_the_segmentation) {
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_sa_seg_validate("G1", 80, NULL), 0);
  cr_expect_eq(wsisa_sa_seg_validate("min_size", 11, NULL), 0, "defaults off the SA grid pass");
  cr_expect_eq(wsisa_sa_seg_validate("T1", 3.25, NULL), 0);
  cr_expect_eq(wsisa_sa_seg_validate("G1", 300, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "G1=300") && strstr(e.msg, "0..255"), "%s", e.msg);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_sa_seg_validate("fill_holes_conn", 6, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "fill_holes_conn=6: a connectivity is 4 or 8"), "%s", e.msg);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_sa_seg_validate("max_size", 1000.5, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "whole number"), "%s", e.msg);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_sa_seg_validate("minS", 4, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "did you mean min_size?"), "%s", e.msg);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_sa_seg_validate("B", -1, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "B=-1: outside the valid range 0..255"), "%s", e.msg);
}

Test(sa_space, unit_map_gives_each_value_an_equal_share) {
  wsisa_sa_param c = make("c", WSISA_SA_CONTINUOUS, -2, 6, 0);
  cr_expect_eq(wsisa_sa_param_from_unit(&c, 0.25), 0);
  cr_expect_eq(wsisa_sa_param_from_unit(&c, 1), 6);
  wsisa_sa_param i = make("i", WSISA_SA_INTEGER, 1, 3, 0);
  cr_expect_eq(wsisa_sa_param_from_unit(&i, 0), 1);
  cr_expect_eq(wsisa_sa_param_from_unit(&i, 0.333), 1);
  cr_expect_eq(wsisa_sa_param_from_unit(&i, 0.334), 2);
  cr_expect_eq(wsisa_sa_param_from_unit(&i, 0.99), 3);
  cr_expect_eq(wsisa_sa_param_from_unit(&i, 1), 3, "u = 1 stays in range");
  wsisa_sa_param d = make("d", WSISA_SA_DISCRETE, 2.5, 7.5, 0.5);
  cr_expect_eq(wsisa_sa_param_from_unit(&d, 0), 2.5);
  cr_expect_eq(wsisa_sa_param_from_unit(&d, 5.0 / 11 + 1e-9), 5.0);
  cr_expect_eq(wsisa_sa_param_from_unit(&d, 0.999), 7.5);
  wsisa_sa_param tenth = make("t", WSISA_SA_DISCRETE, 0, 1, 0.1);
  char text[32];
  snprintf(text, sizeof text, "%.17g", wsisa_sa_param_at(&tenth, 3));
  cr_expect_str_eq(text, "0.29999999999999999", "0.3 exactly as a double");
  wsisa_sa_param k = make("k", WSISA_SA_CATEGORICAL, 0, 0, 0);
  k.nvalues = 2;
  k.values[0] = 8;
  k.values[1] = 4;
  cr_expect_eq(wsisa_sa_param_from_unit(&k, 0.49), 8);
  cr_expect_eq(wsisa_sa_param_from_unit(&k, 0.5), 4);
}

Test(sa_space, lhs_design_visits_every_level_equally) {
  /* 1100 LHS runs over 11 levels: the strata of each level hold exactly 100 runs. */
  wsisa_sa_space *s = wsisa_sa_space_new();
  wsisa_sa_param t = make("T1", WSISA_SA_DISCRETE, 2.5, 7.5, 0.5);
  cr_assert_eq(wsisa_sa_space_add(s, &t, NULL), 0);
  wsisa_sa_param x = make("x", WSISA_SA_CONTINUOUS, 0, 1, 0);
  cr_assert_eq(wsisa_sa_space_add(s, &x, NULL), 0);
  wsisa_sa_opts o;
  wsisa_sa_opts_default(&o, WSISA_SA_CORRELATION);
  o.samples = 1100;
  wsisa_sa_design *d = NULL;
  cr_assert_eq(wsisa_sa_design_make(s, &o, &d, NULL), 0);
  int count[11] = {0};
  for (size_t r = 0; r < d->nrows; r++) {
    double v = d->values[r * 2];
    double level = (v - 2.5) / 0.5;
    cr_assert_eq(level, round(level), "value %g is a level", v);
    count[(int)level]++;
  }
  for (int l = 0; l < 11; l++) cr_expect_eq(count[l], 100, "level %d: %d runs", l, count[l]);
  cr_expect_eq(d->nduplicates, 0);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

Test(sa_space, duplicates_are_counted) {
  wsisa_sa_space *s = wsisa_sa_space_new();
  wsisa_sa_param k = make("conn", WSISA_SA_CATEGORICAL, 0, 0, 0);
  k.nvalues = 2;
  k.values[0] = k.value = 4;
  k.values[1] = 8;
  cr_assert_eq(wsisa_sa_space_add(s, &k, NULL), 0);
  wsisa_sa_param f = make("B", WSISA_SA_FIXED, 0, 0, 0);
  f.value = 220;
  cr_assert_eq(wsisa_sa_space_add(s, &f, NULL), 0);
  wsisa_sa_opts o;
  wsisa_sa_opts_default(&o, WSISA_SA_CORRELATION);
  o.samples = 10;
  wsisa_sa_design *d = NULL;
  cr_assert_eq(wsisa_sa_design_make(s, &o, &d, NULL), 0);
  cr_expect_eq(d->nrows, 10);
  cr_expect_eq(d->nduplicates, 8, "10 runs over 2 values: 8 repeat an earlier run");
  for (size_t r = 0; r < d->nrows; r++) cr_expect_eq(d->values[r * 2 + 1], 220);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}

Test(sa_space, bad_parameters_are_refused_with_their_name) {
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_sa_param p = make("G1", WSISA_SA_DISCRETE, 80, 5, 5);
  cr_expect_eq(wsisa_sa_param_check(&p, &e), WSISA_EUSAGE);
  cr_expect_str_eq(e.msg, "G1.range: lower bound 80 is above upper bound 5");
  wsisa_err_clear(&e);
  p = make("G1", WSISA_SA_DISCRETE, 5, 82, 5);
  cr_expect_eq(wsisa_sa_param_check(&p, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "G1.step: the range 5..82 is not a whole number of steps of 5"), "%s",
            e.msg);
  wsisa_err_clear(&e);
  p = make("n", WSISA_SA_INTEGER, 1.5, 4, 0);
  cr_expect_eq(wsisa_sa_param_check(&p, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "whole bounds"), "%s", e.msg);
  wsisa_err_clear(&e);
  p = make("x", WSISA_SA_CONTINUOUS, 3, 3, 0);
  cr_expect_eq(wsisa_sa_param_check(&p, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "single value"), "%s", e.msg);
  wsisa_err_clear(&e);
  p = make("c", WSISA_SA_CATEGORICAL, 0, 0, 0);
  p.nvalues = 3;
  p.values[0] = 4;
  p.values[1] = 8;
  p.values[2] = 4;
  cr_expect_eq(wsisa_sa_param_check(&p, &e), WSISA_EUSAGE);
  cr_expect_str_eq(e.msg, "c.values: 4 is listed twice");
  wsisa_err_clear(&e);
  wsisa_sa_space *s = wsisa_sa_space_new();
  p = make("x", WSISA_SA_CONTINUOUS, 0, 1, 0);
  cr_expect_eq(wsisa_sa_space_add(s, &p, NULL), 0);
  cr_expect_eq(wsisa_sa_space_add(s, &p, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "x: the parameter is defined twice"), "%s", e.msg);
  wsisa_sa_space_free(s);
}

Test(sa_space, select_fixes_the_rest_at_their_defaults) {
  wsisa_sa_space *s = NULL, *sel = NULL;
  cr_assert_eq(wsisa_sa_space_segmentation(&s, NULL), 0);
  const char *keep[] = {"G1", "T2"};
  cr_assert_eq(wsisa_sa_space_select(s, keep, 2, &sel, NULL), 0);
  cr_expect_eq(wsisa_sa_space_dims(sel), 2);
  const wsisa_sa_param *g2 = &sel->params[wsisa_sa_space_find(sel, "G2")];
  cr_expect_eq(g2->kind, WSISA_SA_FIXED);
  cr_expect_eq(g2->value, 45, "G2 keeps its segmentation default, outside its SA range");
  cr_expect_eq(sel->params[wsisa_sa_space_find(sel, "G1")].kind, WSISA_SA_DISCRETE);
  wsisa_err e = WSISA_ERR_INIT;
  const char *bad[] = {"G7"};
  wsisa_sa_space *none = NULL;
  cr_expect_eq(wsisa_sa_space_select(s, bad, 1, &none, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "G7: not a parameter of the study"), "%s", e.msg);
  cr_expect_null(none);
  wsisa_sa_space_free(sel);
  wsisa_sa_space_free(s);
}

Test(sa_space, knobs_are_checked) {
  wsisa_sa_opts o;
  wsisa_err e = WSISA_ERR_INIT;
  wsisa_sa_opts_default(&o, WSISA_SA_MOAT);
  o.levels = 5;
  cr_expect_eq(wsisa_sa_opts_check(&o, 3, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "levels: 5 is not an even number"), "%s", e.msg);
  wsisa_err_clear(&e);
  wsisa_sa_opts_default(&o, WSISA_SA_MOAT);
  o.pool = 5;
  cr_expect_eq(wsisa_sa_opts_check(&o, 3, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "pool: 5 trajectories cannot yield the 10 to keep"), "%s", e.msg);
  wsisa_err_clear(&e);
  wsisa_sa_opts_default(&o, WSISA_SA_CORRELATION);
  o.samples = 16;
  cr_expect_eq(wsisa_sa_opts_check(&o, 15, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "samples: 16 runs are too few"), "%s", e.msg);
  wsisa_err_clear(&e);
  wsisa_sa_opts_default(&o, WSISA_SA_VBD);
  o.confidence = 1.5;
  cr_expect_eq(wsisa_sa_opts_check(&o, 3, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "confidence: 1.5"), "%s", e.msg);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_sa_opts_check(&o, 0, &e), 0, "every parameter fixed: one run");
}

/* -1 + 1 * (0.3 - -1) is 0.30000000000000004 in doubles: the range's own map,
 * SALib's and numpy's write it for u = 1. Within 10^-12 of the range it is
 * the end; a real step past it is not. */
Test(sa_space, range_ends_allow_rounding_only) {
  wsisa_sa_param p = make("x", WSISA_SA_CONTINUOUS, -1, 0.3, 0);
  double over = -1 + 1.0 * (0.3 - -1);
  cr_assert_gt(over, 0.3, "the overshoot this test is about");
  cr_expect(wsisa_sa_param_contains(&p, over));
  cr_expect(wsisa_sa_param_contains(&p, nextafter(-1, -2)));
  cr_expect_not(wsisa_sa_param_contains(&p, 0.3 + 1e-9));
  cr_expect_not(wsisa_sa_param_contains(&p, -1 - 1e-9));
  wsisa_sa_param q = make("y", WSISA_SA_CONTINUOUS, -0.9, -0.3, 0);
  cr_expect(wsisa_sa_param_contains(&q, -0.9 + 1.0 * (-0.3 - -0.9)));
  cr_expect_eq(wsisa_sa_param_from_unit(&p, 1), 0.3, "the map never leaves the range");
  cr_expect_eq(wsisa_sa_param_from_unit(&q, 1), -0.3);
}

/* Designs over the ranges that overshoot: every value inside [lo, hi]
 * exactly, for MOAT's grid and for the samplers' map. */
Test(sa_space, designs_stay_inside_the_ranges) {
  wsisa_sa_space *s = wsisa_sa_space_new();
  const double ranges[4][2] = {{-1, 0.3}, {-0.9, -0.3}, {0.1, 0.7}, {-3.3, 1.1}};
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", i + 1);
    wsisa_sa_param p = make(name, WSISA_SA_CONTINUOUS, ranges[i][0], ranges[i][1], 0);
    cr_assert_eq(wsisa_sa_space_add(s, &p, NULL), 0);
  }
  for (int m = 0; m < 3; m++) {
    wsisa_sa_opts o;
    wsisa_sa_opts_default(&o, (wsisa_sa_method)m);
    o.trajectories = 40;
    o.samples = m == WSISA_SA_VBD ? 64 : 200;
    wsisa_sa_design *d = NULL;
    cr_assert_eq(wsisa_sa_design_make(s, &o, &d, NULL), 0);
    size_t outside = 0;
    for (size_t r = 0; r < d->nrows; r++)
      for (size_t c = 0; c < 4; c++) {
        double v = d->values[r * 4 + c];
        outside += v < ranges[c][0] || v > ranges[c][1];
      }
    cr_expect_eq(outside, 0, "%s: %zu values outside their range", wsisa_sa_method_name(o.method),
                 outside);
    wsisa_sa_design_free(d);
  }
  wsisa_sa_space_free(s);
}

/* ---- distributions -------------------------------------------------------------- */

/* Each dist's quantile against tests/golden/salib/quantiles.json, computed by
 * make_groups_dists.py with Python's statistics.NormalDist (Wichura's AS241,
 * not wsisa's Acklam + Halley step) and the closed forms; and the CDF takes
 * each value back to its u. */
Test(sa_space, dist_quantiles_match_python_and_invert) {
  json_error_t err;
  json_t *j = json_load_file(tu_src("tests/golden/salib/quantiles.json"), 0, &err);
  cr_assert_not_null(j, "%s", err.text);
  cr_assert_gt(json_array_size(j), 30);
  for (size_t i = 0; i < json_array_size(j); i++) {
    json_t *q = json_array_get(j, i), *b = json_object_get(q, "bounds");
    const char *dist = json_string_value(json_object_get(q, "dist"));
    double bounds[4], u = json_number_value(json_object_get(q, "u"));
    double want = json_number_value(json_object_get(q, "value"));
    for (size_t k = 0; k < json_array_size(b); k++) bounds[k] = json_number_value(json_array_get(b, k));
    wsisa_sa_param p = make("x", WSISA_SA_CONTINUOUS, 0, 1, 0);
    int d = wsisa_sa_dist_from_name(dist);
    cr_assert_geq(d, 0, "%s", dist);
    cr_assert_eq(wsisa_sa_param_set_dist(&p, (wsisa_sa_dist)d, bounds, json_array_size(b), NULL), 0);
    cr_assert_eq(wsisa_sa_param_check(&p, NULL), 0);
    double got = wsisa_sa_param_quantile(&p, u), from_unit = wsisa_sa_param_from_unit(&p, u);
    cr_expect(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)), "%s at %g: %.17g, python %.17g",
              dist, u, got, want);
    cr_expect_eq(from_unit, got, "the sampling map is the quantile");
    cr_expect(wsisa_sa_param_contains(&p, got), "%s at %g", dist, u);
    /* to 10^-12: near a truncated end the CDF subtracts close numbers */
    cr_expect(fabs(wsisa_sa_param_cdf(&p, got) - u) <= 1e-12 + 1e-9 * u, "%s %g: cdf at %g is %.17g",
              dist, bounds[0], u, wsisa_sa_param_cdf(&p, got));
  }
  json_decref(j);
}

/* SALib's logunif [1, 100] and its older two-bound triang [2, 0.25] (0 to 2,
 * peak at 0.5) against tests/golden/salib/cli_expected.json (scipy's ppf
 * formulas, by make_salib_cli.py): the quantiles, and the CDF back to u. */
Test(sa_space, logunif_and_the_older_triang_match_salib) {
  json_error_t err;
  json_t *j = json_load_file(tu_src("tests/golden/salib/cli_expected.json"), 0, &err);
  cr_assert_not_null(j, "%s", err.text);
  json_t *q = json_object_get(j, "quantiles");
  const struct {
    const char *key;
    wsisa_sa_dist dist;
    double bounds[2];
  } cases[] = {{"logunif [1, 100]", WSISA_SA_LOGUNIF, {1, 100}},
               {"triang [2, 0.25]", WSISA_SA_TRIANG, {2, 0.25}}};
  for (size_t c = 0; c < 2; c++) {
    wsisa_sa_param p = make("x", WSISA_SA_CONTINUOUS, 0, 1, 0);
    cr_assert_eq(wsisa_sa_param_set_dist(&p, cases[c].dist, cases[c].bounds, 2, NULL), 0);
    cr_assert_eq(wsisa_sa_param_check(&p, NULL), 0);
    const char *us;
    json_t *want;
    size_t n = 0;
    json_object_foreach(json_object_get(q, cases[c].key), us, want) {
      double u = strtod(us, NULL), got = wsisa_sa_param_quantile(&p, u);
      cr_expect(fabs(got - json_number_value(want)) <= 1e-13 * fmax(1, fabs(got)),
                "%s at %g: %.17g, scipy's %.17g", cases[c].key, u, got, json_number_value(want));
      cr_expect(fabs(wsisa_sa_param_cdf(&p, got) - u) <= 1e-13, "%s: cdf at %g", cases[c].key, got);
      n++;
    }
    cr_expect_eq(n, 5);
  }
  json_decref(j);
}

Test(sa_space, dists_refused_for_finite_kinds_and_bad_bounds) {
  wsisa_err e = WSISA_ERR_INIT;
  double nb[] = {5, 1};
  wsisa_sa_param p = make("G1", WSISA_SA_DISCRETE, 5, 80, 5);
  cr_expect_neq(wsisa_sa_param_set_dist(&p, WSISA_SA_NORM, nb, 2, &e), 0);
  cr_expect(strstr(e.msg, "G1.dist: norm applies to continuous parameters only; G1 is discrete"),
            "%s", e.msg);
  p = make("n", WSISA_SA_INTEGER, 0, 10, 0);
  cr_expect_neq(wsisa_sa_param_set_dist(&p, WSISA_SA_TRIANG, (double[]){0, 10, 0.5}, 3, NULL), 0);
  p = make("x", WSISA_SA_CONTINUOUS, 0, 1, 0);
  wsisa_err e2 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_param_set_dist(&p, WSISA_SA_LOGNORM, (double[]){0, 0}, 2, &e2), 0);
  cr_expect(strstr(e2.msg, "x.bounds: lognorm's sd 0 is not positive"), "%s", e2.msg);
  wsisa_err e3 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_param_set_dist(&p, WSISA_SA_TRUNCNORM, (double[]){50, 60, 0, 1}, 4, &e3),
                0, "no probability in [50, 60]");
  cr_expect(strstr(e3.msg, "holds no probability"), "%s", e3.msg);
  cr_expect_eq(wsisa_sa_dist_from_name("gamma"), -1);
  wsisa_err e4 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_param_set_dist(&p, WSISA_SA_LOGUNIF, (double[]){-1, 10}, 2, &e4), 0);
  cr_expect(strstr(e4.msg, "x.bounds: logunif's low -1 is not above 0"), "%s", e4.msg);
  cr_expect_neq(wsisa_sa_param_set_dist(&p, WSISA_SA_LOGUNIF, (double[]){1, 10, 3}, 3, NULL), 0);
  /* an unbounded dist's ends stay finite: 2^-53 inside */
  cr_assert_eq(wsisa_sa_param_set_dist(&p, WSISA_SA_NORM, (double[]){0, 1}, 2, NULL), 0);
  cr_expect(isfinite(wsisa_sa_param_quantile(&p, 0)) && wsisa_sa_param_quantile(&p, 0) < -8);
  cr_expect(isfinite(wsisa_sa_param_quantile(&p, 1)) && wsisa_sa_param_quantile(&p, 1) > 8);
  cr_expect(wsisa_sa_param_contains(&p, -1e6) && !wsisa_sa_param_contains(&p, INFINITY));
  cr_expect_eq(wsisa_sa_param_midpoint(&p), 0);
  cr_assert_eq(wsisa_sa_param_set_dist(&p, WSISA_SA_LOGNORM, (double[]){0, 1}, 2, NULL), 0);
  cr_expect(!wsisa_sa_param_contains(&p, 0) && wsisa_sa_param_contains(&p, 1e-300));
}

Test(sa_space, groups_make_factors_in_order_of_first_appearance) {
  wsisa_sa_space *s = wsisa_sa_space_new();
  const char *names[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; i++) {
    wsisa_sa_param p = make(names[i], i == 1 ? WSISA_SA_FIXED : WSISA_SA_CONTINUOUS, 0, 1, 0);
    cr_assert_eq(wsisa_sa_space_add(s, &p, NULL), 0);
  }
  cr_assert_eq(wsisa_sa_space_group(s, "H", "c", NULL), 0);
  cr_assert_eq(wsisa_sa_space_group(s, "G", "d", NULL), 0);
  cr_assert_eq(wsisa_sa_space_group(s, "H", "e", NULL), 0);
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_space_group(s, "G", "e", &e), 0);
  cr_expect_str_eq(e.msg, "e is in two groups, H and G (a parameter moves with one group)");
  wsisa_err e2 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_space_group(s, "G", "z", &e2), 0);
  cr_expect_str_eq(e2.msg, "group G: 'z' is not a parameter");
  size_t f[4];
  cr_expect_eq(wsisa_sa_space_factors(s, f), 3);
  /* varying a, c, d, e: a alone, H = {c, e}, G = {d} */
  cr_expect(f[0] == 0 && f[1] == 1 && f[2] == 2 && f[3] == 1);
  cr_expect_str_eq(wsisa_sa_space_factor_name(s, 0), "a");
  cr_expect_str_eq(wsisa_sa_space_factor_name(s, 1), "H");
  cr_expect_str_eq(wsisa_sa_space_factor_name(s, 2), "G");
  cr_expect(wsisa_sa_space_grouped(s));
  cr_expect_eq(wsisa_sa_space_check_groups(s, NULL), 0);
  wsisa_sa_space_free(s);
}
