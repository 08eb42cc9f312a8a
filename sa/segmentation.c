/* The segmentation's 15 SA parameters (docs/workflow.md; seed 000 Table 1): defaults,
 * SA ranges, what the segmentation accepts, and the reuse level using each. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sa/sa_private.h"

#define D WSISA_SA_DISCRETE
#define I WSISA_SA_INTEGER
#define C WSISA_SA_CATEGORICAL

/* Thresholds compare 8-bit channels (B, G, R, G1, G2) or ratios of them (T1, T2);
 * sizes are pixel counts; connectivities are 4 or 8 and nothing between.
 * SA ranges are seed 000's Table 1 but one: G2's 2..40 there leaves out the
 * workflow's own default 45, so a study varying G2 could never meet the
 * reference setting; its range here goes on to 46, the next step. */
const wsisa_sa_seg_param wsisa_sa_seg_params[] = {
    /* name            abbrev   lvl kind def   lo    hi     step int valid */
    {"B",               "B",      1, D, 220,  210,  240,   10,  1, 0, 255},
    {"G",               "G",      1, D, 220,  210,  240,   10,  1, 0, 255},
    {"R",               "R",      1, D, 220,  210,  240,   10,  1, 0, 255},
    {"T1",              "T1",     1, D, 5.0,  2.5,  7.5,   0.5, 0, 0, 255},
    {"T2",              "T2",     1, D, 4.0,  2.5,  7.5,   0.5, 0, 0, 255},
    {"G1",              "G1",     3, D, 80,   5,    80,    5,   1, 0, 255},
    {"G2",              "G2",     5, D, 45,   2,    46,    2,   1, 0, 255},
    {"min_size",        "minS",   4, D, 11,   2,    40,    2,   1, 0, INT_MAX},
    {"max_size",        "maxS",   4, I, 1000, 900,  1500,  0,   1, 0, INT_MAX},
    {"min_size_pl",     "minSPL", 6, D, 30,   5,    80,    5,   1, 0, INT_MAX},
    {"min_size_seg",    "minSS",  7, D, 21,   2,    40,    2,   1, 0, INT_MAX},
    {"max_size_seg",    "maxSS",  7, I, 1000, 900,  1500,  0,   1, 0, INT_MAX},
    {"fill_holes_conn", "FH",     3, C, 4,    4,    8,     0,   1, 4, 8},
    {"recon_conn",      "RC",     2, C, 8,    4,    8,     0,   1, 4, 8},
    {"watershed_conn",  "WConn",  6, C, 8,    4,    8,     0,   1, 4, 8},
};

#undef D
#undef I
#undef C

/* the count sa.h gives is the table's: a row more or less does not build */
_Static_assert(sizeof wsisa_sa_seg_params / sizeof *wsisa_sa_seg_params == WSISA_SA_NSEG,
               "WSISA_SA_NSEG is the number of rows of wsisa_sa_seg_params");

const wsisa_sa_seg_param *wsisa_sa_seg_find(const char *name) {
  for (size_t i = 0; i < WSISA_SA_NSEG; i++)
    if (strcmp(wsisa_sa_seg_params[i].name, name) == 0) return &wsisa_sa_seg_params[i];
  return NULL;
}

int wsisa_sa_seg_lookup(const char *name, const wsisa_sa_seg_param **out, wsisa_err *e) {
  *out = wsisa_sa_seg_find(name);
  if (*out) return 0;
  char names[WSISA_SA_NSEG * 24] = "";
  for (size_t i = 0, len = 0; i < WSISA_SA_NSEG; i++) {
    if (strcmp(wsisa_sa_seg_params[i].abbrev, name) == 0)
      return wsisa_error(e, WSISA_EUSAGE, "%s: not a segmentation parameter; did you mean %s?",
                         name, wsisa_sa_seg_params[i].name);
    int w = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                     wsisa_sa_seg_params[i].name);
    if (w > 0 && (size_t)w < sizeof names - len) len += (size_t)w;
  }
  return wsisa_error(e, WSISA_EUSAGE, "%s: not a segmentation parameter (they are %s)", name,
                     names);
}

int wsisa_sa_seg_validate(const char *name, double value, wsisa_err *e) {
  const wsisa_sa_seg_param *sp;
  int rc = wsisa_sa_seg_lookup(name, &sp, e);
  if (rc) return rc;
  if (sp->kind == WSISA_SA_CATEGORICAL) {
    if (value == 4 || value == 8) return 0;
    return wsisa_error(e, WSISA_EUSAGE, "%s=%g: a connectivity is 4 or 8", name, value);
  }
  if (!isfinite(value) || value < sp->valid_lo || value > sp->valid_hi)
    return wsisa_error(e, WSISA_EUSAGE, "%s=%g: outside the valid range %g..%g", name, value,
                       sp->valid_lo, sp->valid_hi);
  if (sp->integer_valued && value != floor(value))
    return wsisa_error(e, WSISA_EUSAGE, "%s=%g: must be a whole number (valid range %g..%g)",
                       name, value, sp->valid_lo, sp->valid_hi);
  return 0;
}

void wsisa_sa_seg_to_param(const wsisa_sa_seg_param *sp, wsisa_sa_param *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", sp->name);
  out->kind = sp->kind;
  out->value = sp->def;
  out->level = sp->level;
  if (sp->kind == WSISA_SA_CATEGORICAL) {
    out->nvalues = 2;
    out->values[0] = 4;
    out->values[1] = 8;
  } else {
    out->lo = sp->lo;
    out->hi = sp->hi;
    out->step = sp->step;
  }
}

int wsisa_sa_space_segmentation(wsisa_sa_space **out, wsisa_err *e) {
  *out = wsisa_sa_space_new();
  if (!*out) return wsisa_error(e, WSISA_ENOMEM, "out of memory for the parameter space");
  for (size_t i = 0; i < WSISA_SA_NSEG; i++) {
    wsisa_sa_param p;
    wsisa_sa_seg_to_param(&wsisa_sa_seg_params[i], &p);
    int rc = wsisa_sa_space_add(*out, &p, e);
    if (rc) {
      wsisa_sa_space_free(*out);
      *out = NULL;
      return rc;
    }
  }
  return 0;
}
