/* Shared-internal pieces of engine/. */
#ifndef WSISA_ENGINE_PRIVATE_H
#define WSISA_ENGINE_PRIVATE_H

#include "engine/engine.h"

/* `wsisa run`'s feature metrics (core/run_features.c): mean_haematoxylin and
 * wasserstein:<feature>, from per-(run, tile) values journaled in
 * feature_values.csv. */
typedef struct wsisa__run_features wsisa__run_features;
struct wsisa_counts;
/* Is `metric` a feature metric with a known feature? */
int wsisa__run_features_is_metric(const char *metric);
/* NULL in *out when no metric needs features; WSISA_EUSAGE for
 * wasserstein:<unknown feature>. */
int wsisa__run_features_new(char *const *metrics, size_t nmetrics, size_t nruns, size_t ntiles,
                            const char *dir, wsisa__run_features **out, wsisa_err *e);
void wsisa__run_features_free(wsisa__run_features *f);
int wsisa__run_features_open(wsisa__run_features *f, int fresh, wsisa_err *e);
/* Resume: read the values back; a (run, tile) of `have` without them is cleared. */
int wsisa__run_features_read(wsisa__run_features *f, uint8_t *have, wsisa_err *e);
/* A finished unit's values, journaled (synced) and kept. */
int wsisa__run_features_unit(wsisa__run_features *f, size_t tile, const size_t *runs,
                             const struct wsisa_counts *counts, size_t n, wsisa_err *e);
/* The metric of a run; NaN when undefined (no nucleus). */
double wsisa__run_features_metric(wsisa__run_features *f, size_t run, const char *metric);
/* Wasserstein-1 distance of two sorted, non-empty samples. */
double wsisa__wasserstein1(const double *a, size_t na, const double *b, size_t nb);

#endif
