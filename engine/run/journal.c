/* journal.csv: every finished (run, tile) of a study, one line each, flushed
 * and synced when its unit ends, so a killed run goes on with `wsisa run
 * --resume DIR` and ends with the same outputs.
 *
 * A line proves itself whole: after its data come its field count and the
 * CRC-32 of everything before the last comma, e.g.
 *   3,17,29551,30412,31007,143,151,402311,0,0,0,0,0,0,0,0,0,0,20,ab6e144b
 * A line cut short (a kill, a full disk) or damaged fails the proof. The last
 * line may be torn by a kill and is cut off on resume (its unit runs again);
 * a bad line anywhere else means the file cannot be trusted and is an error
 * naming the file and line, never data. feature_values.csv (engine/run/features.c)
 * uses the same lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/run/run_internal.h"

/* the counts, then the object matching's sums in wsisa_match_field order */
#define JOURNAL_HEADER                                                                    \
  "tile,run_id,both,run,ref,nuclei,ref_nuclei,ref_tissue,obj_ref,obj_run,area_ref,area_run," \
  "tp,fp,fn,aji_inter,aji_union,aji_unused,fields,crc32"
#define JOURNAL_COUNTS 8 /* tile, run_id and the counts before the sums */
#define JOURNAL_FIELDS (JOURNAL_COUNTS + WSISA_MATCH_FIELDS + 2)
/* journals of earlier versions: without proofs, then without the sums of
 * F1 and AJI, then without the tissue each tile's reference segmented */
static const wsisa__old_header journal_old[] = {
    {"tile,run_id,both,run,ref,nuclei,ref_nuclei,obj_ref,obj_run", "checksum"},
    {"tile,run_id,both,run,ref,nuclei,ref_nuclei,obj_ref,obj_run,fields,crc32",
     "object-matching sums for F1 and AJI"},
    {"tile,run_id,both,run,ref,nuclei,ref_nuclei,obj_ref,obj_run,area_ref,area_run,tp,fp,fn,"
     "aji_inter,aji_union,aji_unused,fields,crc32",
     "the tissue each tile's reference segmented (ref_tissue)"},
    {NULL, NULL}};

/* ---- journal.csv ---------------------------------------------------------------- */

int wsisa__journal_unit(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                        const wsisa_counts *counts, size_t n, wsisa_err *e) {
  (void)bucket;
  wsisa__study_run *s = ctx;
  int frc = s->features ? wsisa__run_features_unit(s->features, tile, runs, counts, n, e) : 0;
  if (frc) return frc;
  char line[512];
  errno = 0;
  for (size_t i = 0; i < n; i++) {
    const wsisa_counts *c = &counts[i];
    int len = snprintf(line, sizeof line, "%zu,%zu,%llu,%llu,%llu,%llu,%llu,%llu", tile,
                       runs[i], (unsigned long long)c->both, (unsigned long long)c->run,
                       (unsigned long long)c->ref, (unsigned long long)c->nuclei,
                       (unsigned long long)c->ref_nuclei, (unsigned long long)c->ref_tissue);
    for (int k = 0; k < WSISA_MATCH_FIELDS; k++)
      len += snprintf(line + len, sizeof line - (size_t)len, ",%llu",
                      (unsigned long long)c->match[k]);
    wsisa__line_put(s->journal, line, (size_t)len);
    s->counts[runs[i] * s->set.ntiles + tile] = counts[i];
    s->counts[runs[i] * s->set.ntiles + tile].features = NULL; /* the unit's, gone after */
    s->counts[runs[i] * s->set.ntiles + tile].ref_features = NULL;
    s->have[runs[i] * s->set.ntiles + tile] = 1;
  }
  int err = 0;
  if (fflush(s->journal) != 0 || ferror(s->journal)) err = errno ? errno : EIO;
  if (!err && fsync(fileno(s->journal)) != 0) err = errno;
  if (err) return wsisa_error(e, WSISA_EIO, "%s/journal.csv: %s", s->dir, strerror(err));
  s->units_journaled++;
  return 0;
}

static int parse_count(const char *text, unsigned long long *v) {
  char *end;
  errno = 0;
  if (!text[0] || text[0] == '-' || text[0] == '+') return -1;
  *v = strtoull(text, &end, 10);
  return *end || errno ? -1 : 0;
}

typedef struct journal_reader {
  wsisa__study_run *s;
  const char *path;
  size_t repeats; /* lines for a (run, tile) seen before, with the same counts */
} journal_reader;

static int journal_take(void *ctx, char **f, size_t n, size_t lineno, wsisa_err *e) {
  journal_reader *jr = ctx;
  wsisa__study_run *s = jr->s;
  unsigned long long v[JOURNAL_FIELDS];
  for (size_t i = 0; i < n; i++)
    if (parse_count(f[i], &v[i]))
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: field %zu '%s' is not a count", jr->path,
                         lineno, i + 1, f[i]);
  if (v[0] >= s->set.ntiles || v[1] >= s->nruns)
    return wsisa_error(e, WSISA_EFORMAT,
                       "%s:%zu: tile %llu or run %llu is not in this study (%zu tiles, %zu runs)",
                       jr->path, lineno, v[0], v[1], s->set.ntiles, s->nruns);
  size_t at = (size_t)v[1] * s->set.ntiles + (size_t)v[0];
  wsisa_counts c = {.both = v[2], .run = v[3], .ref = v[4], .nuclei = v[5], .ref_nuclei = v[6],
                    .ref_tissue = v[7]};
  for (int k = 0; k < WSISA_MATCH_FIELDS; k++) c.match[k] = v[JOURNAL_COUNTS + k];
  if (s->have[at]) {
    const wsisa_counts *o = &s->counts[at];
    if (o->both != c.both || o->run != c.run || o->ref != c.ref || o->nuclei != c.nuclei ||
        o->ref_nuclei != c.ref_nuclei || o->ref_tissue != c.ref_tissue ||
        memcmp(o->match, c.match, sizeof c.match) != 0)
      return wsisa_error(e, WSISA_EFORMAT,
                         "%s:%zu: run %llu, tile %llu: other counts than an earlier line "
                         "(two writers, or a damaged journal)",
                         jr->path, lineno, v[1], v[0]);
    jr->repeats++;
    return 0;
  }
  s->counts[at] = c;
  s->have[at] = 1;
  return 0;
}

int wsisa__journal_read(wsisa__study_run *s, int repair, wsisa__journal_summary *sum,
                        wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc = wsisa__run_path(s, "journal.csv", path, e);
  if (rc) return rc;
  journal_reader jr = {s, path, 0};
  wsisa__journal_summary local;
  if (!sum) sum = &local;
  memset(sum, 0, sizeof *sum);
  /* bounded as every table a run reads */
  struct stat st;
  char size[32];
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > WSISA_TEXT_MAX_TABLE)
    return wsisa_error(e, WSISA_EFORMAT, "%s: larger than %s, the most a journal may hold", path,
                       wsisa_bytes_text((double)WSISA_TEXT_MAX_TABLE, size, sizeof size));
  rc = wsisa__lines_read(path, JOURNAL_HEADER, journal_old, JOURNAL_FIELDS, repair, journal_take,
                         &jr, &sum->lines, &sum->torn, e);
  sum->repeats = jr.repeats;
  if (!rc)
    wsisa_log(WSISA_LOG_INFO, "run", "%s: %zu whole lines (%zu repeated)", path, sum->lines,
              sum->repeats);
  return rc;
}

int wsisa__journal_open(wsisa__study_run *s, int fresh, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc = wsisa__run_path(s, "journal.csv", path, e);
  return rc ? rc : wsisa__lines_open(path, fresh, JOURNAL_HEADER, &s->journal, e);
}
