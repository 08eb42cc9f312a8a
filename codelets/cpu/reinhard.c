/* The constants of the Reinhard lαβ colour transfer (docs/workflow.md Normalization;
 * Reinhard et al. 2001, as nscale's Normalization uses them). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

/* The .cl files read the uploaded struct at these double offsets. */
_Static_assert(offsetof(wsisa_reinhard, lms2lab) == 9 * sizeof(double), "layout");
_Static_assert(offsetof(wsisa_reinhard, lab2lms) == 18 * sizeof(double), "layout");
_Static_assert(offsetof(wsisa_reinhard, lms2rgb) == 27 * sizeof(double), "layout");
_Static_assert(offsetof(wsisa_reinhard, lms_floor) == 36 * sizeof(double), "layout");
_Static_assert(offsetof(wsisa_reinhard, mean_target) == 37 * sizeof(double), "layout");
_Static_assert(offsetof(wsisa_reinhard, std_target) == 40 * sizeof(double), "layout");
_Static_assert(sizeof(wsisa_reinhard) == 43 * sizeof(double), "layout");

static const double rgb2lms[9] = {0.3811, 0.5783, 0.0402, 0.1967, 0.7244,
                                  0.0782, 0.0241, 0.1288, 0.8444};
/* Learnt by nscale's authors from a template glioblastoma image. */
static const double mean_target[3] = {-0.632356, -0.0516004, 0.0376543};
static const double std_target[3] = {0.26235, 0.0514831, 0.0114217};

/* Inverse of a 3×3 row-major matrix by cofactors. */
static void invert3(const double m[9], double inv[9]) {
  const double c00 = m[4] * m[8] - m[5] * m[7], c01 = m[5] * m[6] - m[3] * m[8],
               c02 = m[3] * m[7] - m[4] * m[6];
  const double det = m[0] * c00 + m[1] * c01 + m[2] * c02;
  inv[0] = c00 / det;
  inv[1] = (m[2] * m[7] - m[1] * m[8]) / det;
  inv[2] = (m[1] * m[5] - m[2] * m[4]) / det;
  inv[3] = c01 / det;
  inv[4] = (m[0] * m[8] - m[2] * m[6]) / det;
  inv[5] = (m[2] * m[3] - m[0] * m[5]) / det;
  inv[6] = c02 / det;
  inv[7] = (m[1] * m[6] - m[0] * m[7]) / det;
  inv[8] = (m[0] * m[4] - m[1] * m[3]) / det;
}

void wsisa_cpu_reinhard(wsisa_reinhard *k) {
  const double s3 = 1.0 / sqrt(3.0), s6 = 1.0 / sqrt(6.0), s2 = 1.0 / sqrt(2.0);
  const double lms2lab[9] = {s3, s3, s3, s6, s6, -2.0 * s6, s2, -s2, 0.0};
  /* The rows of [1 1 1; 1 1 −2; 1 −1 0] are orthogonal with squared norms
   * 3, 6, 2, so the inverse of lms2lab is its transpose: exact, no solve. */
  const double lab2lms[9] = {s3, s6, s2, s3, s6, -s2, s3, -2.0 * s6, 0.0};
  memcpy(k->rgb2lms, rgb2lms, sizeof rgb2lms);
  memcpy(k->lms2lab, lms2lab, sizeof lms2lab);
  memcpy(k->lab2lms, lab2lms, sizeof lab2lms);
  /* nscale uses this inverse rounded to four decimals; the unrounded one
   * brings an untouched pixel back to its own colour. */
  invert3(rgb2lms, k->lms2rgb);
  /* log10(0) = −inf would poison the statistics and the way back. A zero LMS
   * component needs R = G = B = 0 (every coefficient is positive); the next
   * smallest is 0.0241/255 ≈ 9.5e-5, so the floor only ever moves black, and
   * black is never Fisher foreground (M2·x − M1·x = −4.169 there): the floor
   * never changes a normalized image. nscale takes log10f(0) = −inf and maps
   * the non-finite LMS back to 0. Same floor as
   * tests/golden/reference_workflow.py. */
  k->lms_floor = 1e-6;
  memcpy(k->mean_target, mean_target, sizeof mean_target);
  memcpy(k->std_target, std_target, sizeof std_target);
}
