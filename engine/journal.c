/* journal.csv: every finished (run, tile) of a study, one line each, flushed
 * and synced when its unit ends, so a killed run goes on with `wsisa run
 * --resume DIR` and ends with the same outputs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_private.h"

int wsisa__journal_unit(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                        const wsisa_counts *counts, size_t n, wsisa_err *e) {
  (void)bucket;
  wsisa__study_run *s = ctx;
  int frc = s->features ? wsisa__run_features_unit(s->features, tile, runs, counts, n, e) : 0;
  if (frc) return frc;
  for (size_t i = 0; i < n; i++) {
    const wsisa_counts *c = &counts[i];
    fprintf(s->journal, "%zu,%zu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", tile, runs[i],
            (unsigned long long)c->both, (unsigned long long)c->run,
            (unsigned long long)c->ref, (unsigned long long)c->nuclei,
            (unsigned long long)c->ref_nuclei, (unsigned long long)c->obj_ref,
            (unsigned long long)c->obj_run);
    s->counts[runs[i] * s->ntiles + tile] = counts[i];
    s->counts[runs[i] * s->ntiles + tile].features = NULL; /* the unit's, gone after */
    s->counts[runs[i] * s->ntiles + tile].ref_features = NULL;
    s->have[runs[i] * s->ntiles + tile] = 1;
  }
  if (fflush(s->journal) || fsync(fileno(s->journal)))
    return wsisa_error(e, WSISA_EIO, "%s/journal.csv: %s", s->dir, strerror(errno));
  return 0;
}

/* Read what an earlier run finished; a torn last line (killed mid-write) is
 * ignored, and that unit runs again. */
int wsisa__journal_read(wsisa__study_run *s, wsisa_err *e) {
  char path[4200], line[256];
  wsisa__run_path(s, "journal.csv", path, sizeof path);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  size_t lineno = 0, kept = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (lineno == 1 || !strchr(line, '\n')) continue;
    unsigned long long tile, run, both, a, b, na, nb, oa, ob;
    if (sscanf(line, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", &tile, &run, &both, &a, &b,
               &na, &nb, &oa, &ob) != 9)
      continue;
    if (tile >= s->ntiles || run >= s->nruns) {
      fclose(f);
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: tile %llu or run %llu is not in this study",
                         path, lineno, tile, run);
    }
    s->counts[run * s->ntiles + tile] = (wsisa_counts){both, a, b, na, nb, oa, ob, NULL, NULL, 0};
    s->have[run * s->ntiles + tile] = 1;
    kept++;
  }
  fclose(f);
  wsisa_log(WSISA_LOG_INFO, "run", "resuming: %zu (run, tile) results already in the journal", kept);
  return 0;
}

int wsisa__journal_open(wsisa__study_run *s, int fresh, wsisa_err *e) {
  char path[4200];
  wsisa__run_path(s, "journal.csv", path, sizeof path);
  s->journal = fopen(path, "a");
  if (!s->journal) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (fresh)
    fprintf(s->journal, "tile,run_id,both,run,ref,nuclei,ref_nuclei,obj_ref,obj_run\n");
  return fflush(s->journal) ? wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno)) : 0;
}
