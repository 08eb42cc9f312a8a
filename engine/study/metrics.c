/* A study's metrics: the table of those `wsisa run` computes, which way each
 * is better, the feature a feature metric reads, and what the study's
 * metrics ask of each run and tile. */
#include <stdio.h>
#include <string.h>

#include "engine/study/study.h"

const wsisa_study_metric wsisa_study_metrics[] = {
    {"dice", WSISA_STUDY_METRIC_PIXEL, 1},
    {"jaccard", WSISA_STUDY_METRIC_PIXEL, 1},
    {"nucleus_count", WSISA_STUDY_METRIC_PIXEL, 0},
    {"mean_area", WSISA_STUDY_METRIC_PIXEL, 0},
    {"object_dice", WSISA_STUDY_METRIC_OBJECT, 1},
    {"object_f1", WSISA_STUDY_METRIC_OBJECT, 1},
    {"object_precision", WSISA_STUDY_METRIC_OBJECT, 1},
    {"object_recall", WSISA_STUDY_METRIC_OBJECT, 1},
    {"aji", WSISA_STUDY_METRIC_OBJECT, 1},
    {"mean_haematoxylin", WSISA_STUDY_METRIC_FEATURE, 0},
};
const size_t wsisa_study_nmetrics = sizeof wsisa_study_metrics / sizeof *wsisa_study_metrics;

long wsisa_study_metric_find(const char *metric) {
  for (size_t j = 0; j < wsisa_study_nmetrics; j++)
    if (strcmp(metric, wsisa_study_metrics[j].name) == 0) return (long)j;
  return -1;
}

void wsisa_study_metric_list(char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (size_t j = 0; j < wsisa_study_nmetrics && at < cap; j++)
    at += (size_t)snprintf(buf + at, cap - at, "%s, ", wsisa_study_metrics[j].name);
  if (at < cap) snprintf(buf + at, cap - at, "%s<feature>", WSISA_STUDY_WASSERSTEIN);
}

static size_t wasserstein_prefix(const char *metric) {
  size_t k = strlen(WSISA_STUDY_WASSERSTEIN);
  return strncmp(metric, WSISA_STUDY_WASSERSTEIN, k) == 0 ? k : 0;
}

/* Which way is better: agreement with the reference, the more the better; a
 * distance to the reference's distribution, the less; counts, areas,
 * intensities, neither. */
int wsisa_study_metric_direction(const char *metric) {
  long j = wsisa_study_metric_find(metric);
  if (j >= 0) return wsisa_study_metrics[j].direction;
  return wasserstein_prefix(metric) ? -1 : 0;
}

int wsisa_study_metric_feature(const char *metric) {
  if (strcmp(metric, "mean_haematoxylin") == 0) return wsisa_workflow_feature_find("h_mean");
  size_t k = wasserstein_prefix(metric);
  return k ? wsisa_workflow_feature_find(metric + k) : -1;
}

void wsisa__study_needs(const wsisa_study *study, int *object_match, int *features) {
  *object_match = *features = 0;
  for (size_t m = 0; m < study->nmetrics; m++) {
    /* one matching task per run and tile gives every object metric */
    long j = wsisa_study_metric_find(study->metrics[m]);
    *object_match |= j >= 0 && wsisa_study_metrics[j].kind == WSISA_STUDY_METRIC_OBJECT;
    *features |= wsisa_study_metric_feature(study->metrics[m]) >= 0;
  }
}
