/* Designs made elsewhere (sa/foreign.c): Saltelli's layout with and without
 * second order detected, MOAT trajectories checked step by step, unit
 * coordinates read back from values, and values outside the space refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sa/sa.h"

static void add(wsisa_sa_space *s, const char *name, wsisa_sa_kind kind, double lo, double hi,
                double step) {
  wsisa_sa_param p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "%s", name);
  p.kind = kind;
  p.lo = lo;
  p.hi = hi;
  p.step = step;
  p.value = lo;
  cr_assert_eq(wsisa_sa_space_add(s, &p, NULL), 0);
}

/* a in [0, 1] continuous, b in 0, 2, ..., 10, f fixed at 7 */
static wsisa_sa_space *space(void) {
  wsisa_sa_space *s = wsisa_sa_space_new();
  add(s, "a", WSISA_SA_CONTINUOUS, 0, 1, 0);
  add(s, "b", WSISA_SA_DISCRETE, 0, 10, 2);
  add(s, "f", WSISA_SA_FIXED, 7, 7, 0);
  return s;
}

/* Two base samples A = (0.1, 2), B = (0.7, 8) and A = (0.3, 4), B = (0.9, 10);
 * with second order: A, AB_a, AB_b, BA_a, BA_b, B. */
static const double second[] = {
    0.1, 2, 7, 0.7, 2, 7, 0.1, 8, 7, 0.1, 8, 7, 0.7, 2, 7, 0.7, 8, 7,
    0.3, 4, 7, 0.9, 4, 7, 0.3, 10, 7, 0.3, 10, 7, 0.9, 4, 7, 0.9, 10, 7};

Test(sa_foreign, saltelli_second_order_detected) {
  wsisa_sa_space *s = space();
  wsisa_sa_design *d = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_sa_design_from_values(s, WSISA_SA_VBD, 0, second, 12, &d, &e), 0, "%s", e.msg);
  cr_expect_eq(d->second_order, 1, "the rows show BA_i");
  cr_expect_eq(d->groups, 2);
  cr_expect_eq(d->group_size, 6);
  cr_expect_eq(d->ndims, 2);
  cr_expect_float_eq(d->unit[1 * 2 + 1], 0.2, 1e-12, "b = 2 is the 2nd of 6 values: 1/5");
  cr_expect_eq(d->nduplicates, 4, "with k = 2, AB_b = BA_a and AB_a = BA_b in each group");
  wsisa_sa_design_free(d);
  /* a first-order reading of the same rows fails, and the message says why */
  double broken[36];
  memcpy(broken, second, sizeof broken);
  broken[3 * 9 + 0] = 0.5; /* row 10, an AB_a: a is neither A's nor B's */
  cr_expect_neq(wsisa_sa_design_from_values(s, WSISA_SA_VBD, 1, broken, 12, &d, &e), 0);
  cr_expect(strstr(e.msg, "not a VBD design: row 10 is not A with one column from B"), "%s",
            e.msg);
  wsisa_sa_space_free(s);
}

Test(sa_foreign, moat_steps_and_refusals) {
  wsisa_sa_space *s = space();
  wsisa_sa_design *d = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  const double ok[] = {0, 0, 7, 0.5, 0, 7, 0.5, 6, 7, /* a then b */
                       1, 10, 7, 1, 4, 7, 0.25, 4, 7}; /* b then a */
  cr_assert_eq(wsisa_sa_design_from_values(s, WSISA_SA_MOAT, 0, ok, 6, &d, &e), 0, "%s", e.msg);
  cr_expect_eq(d->groups, 2);
  cr_expect_eq(d->method, WSISA_SA_MOAT);
  wsisa_sa_design_free(d);

  double twice[18];
  memcpy(twice, ok, sizeof twice);
  twice[2 * 3 + 0] = 0.75, twice[2 * 3 + 1] = 0; /* row 3: a moves again, b stays */
  wsisa_err e2 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_design_from_values(s, WSISA_SA_MOAT, 0, twice, 6, &d, &e2), 0);
  cr_expect(strstr(e2.msg, "a moves twice in trajectory 1"), "%s", e2.msg);

  double outside[18];
  memcpy(outside, ok, sizeof outside);
  outside[1] = 3; /* b = 3 is not on its steps */
  wsisa_err e3 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_design_from_values(s, WSISA_SA_MOAT, 0, outside, 6, &d, &e3), 0);
  cr_expect(strstr(e3.msg, "row 1: b = 3 is not a value of its range"), "%s", e3.msg);

  double unfixed[18];
  memcpy(unfixed, ok, sizeof unfixed);
  unfixed[4 * 3 + 2] = 8;
  wsisa_err e4 = WSISA_ERR_INIT;
  cr_expect_neq(wsisa_sa_design_from_values(s, WSISA_SA_CORRELATION, 0, unfixed, 6, &d, &e4), 0);
  cr_expect(strstr(e4.msg, "row 5: f is 8, but the study fixes it at 7"), "%s", e4.msg);
  wsisa_sa_space_free(s);
}

/* A SALib design over [-1, 0.3] holds -1 + 1.3 = 0.30000000000000004: taken as
 * the range's end (unit coordinate 1), as a MOAT step of one trajectory. */
Test(sa_foreign, value_an_ulp_past_the_end_is_the_end) {
  wsisa_sa_space *s = wsisa_sa_space_new();
  add(s, "x1", WSISA_SA_CONTINUOUS, -1, 0.3, 0);
  add(s, "x2", WSISA_SA_CONTINUOUS, -0.9, -0.3, 0);
  double top = -1 + 1.0 * 1.3, top2 = -0.9 + 1.0 * (-0.3 - -0.9);
  const double rows[] = {-1, -0.9, top, -0.9, top, top2, -1, top2, top, top2, top, -0.9};
  wsisa_sa_design *d = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_sa_design_from_values(s, WSISA_SA_MOAT, 0, rows, 6, &d, &e), 0, "%s", e.msg);
  cr_expect_eq(d->unit[1 * 2 + 0], 1);
  cr_expect_eq(d->unit[2 * 2 + 1], 1);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(s);
}
