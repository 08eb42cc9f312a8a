/* The design a study's sampler makes (or its phase 2's), its size before it
 * is made, and the limits it is held to: runs and memory; a memory size as
 * a study or a flag writes it ("4G"). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study.h"

int wsisa_study_parse_bytes(const char *text, uint64_t *out) {
  /* digits with an optional fraction, nothing else before the unit: strtod
   * alone would take " 4G", "+4G", "0x10M" and "1e1G" */
  const char *p = text;
  while (isdigit((unsigned char)*p)) p++;
  if (*p == '.') p++;
  while (isdigit((unsigned char)*p)) p++;
  if (p == text || (p == text + 1 && *text == '.')) return -1;
  char *end;
  double v = strtod(text, &end);
  if (end != p || !(v > 0) || !isfinite(v)) return -1;
  double unit = 1;
  switch (toupper((unsigned char)*end)) {
    case 'K': unit = 1024.0; end++; break;
    case 'M': unit = 1024.0 * 1024; end++; break;
    case 'G': unit = 1024.0 * 1024 * 1024; end++; break;
    case 'T': unit = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
  }
  if (unit > 1 && (*end == 'i' || *end == 'I')) {
    end++;
    if (toupper((unsigned char)*end) != 'B') return -1;
  }
  if (toupper((unsigned char)*end) == 'B') end++;
  if (*end) return -1;
  double bytes = v * unit;
  if (bytes < 1 || bytes > 1.8e19) return -1;
  *out = (uint64_t)bytes;
  return 0;
}

int wsisa_study_design(const wsisa_study *s, const char *select, wsisa_sa_space **space,
                       wsisa_sa_opts *opts, wsisa_sa_design **design, wsisa_err *e) {
  *space = NULL;
  *design = NULL;
  *opts = s->sa;
  if (!select) {
    int rc = wsisa_sa_space_clone(s->space, space, e);
    if (!rc) rc = wsisa_sa_design_make(*space, opts, design, e);
    if (rc) {
      wsisa_sa_space_free(*space);
      *space = NULL;
    }
    return rc;
  }
  if (s->sa.method != WSISA_SA_TWO_PHASE)
    return wsisa_error(e, WSISA_EUSAGE,
                       "--select %s: a selection is the second phase of a two_phase study; %s "
                       "is a %s study",
                       select, s->path, wsisa_sa_method_name(s->sa.method));
  char *copy = strdup(select);
  size_t n = 1;
  for (const char *p = select; *p; p++) n += *p == ',';
  const char **names = calloc(n, sizeof *names);
  int rc = copy && names ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  size_t count = 0;
  for (char *tok = copy, *next; !rc && tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (!*tok) rc = wsisa_error(e, WSISA_EUSAGE, "--select %s: an empty name", select);
    names[count++] = tok;
  }
  wsisa_err inner = WSISA_ERR_INIT;
  if (!rc && wsisa_sa_space_select(s->space, names, count, space, &inner))
    rc = wsisa_error(e, inner.code, "--select %s: %s", select, inner.msg);
  if (!rc) {
    opts->method = WSISA_SA_VBD;
    rc = wsisa_sa_design_make(*space, opts, design, e);
  }
  if (rc) {
    wsisa_sa_space_free(*space);
    *space = NULL;
  }
  free(copy);
  free(names);
  return rc;
}

/* ---- limits ----------------------------------------------------------------------- */

int wsisa_study_design_size(const wsisa_study *s, const char *select, size_t *rows,
                            double *bytes) {
  size_t k = wsisa_sa_space_dims(s->space), np = s->space->nparams;
  /* a group moves as one factor: G + 1 runs a trajectory, G + 2 a base sample */
  size_t g = wsisa_sa_space_factors(s->space, NULL);
  wsisa_sa_method method = s->sa.method;
  if (select) {
    /* the second phase: VBD over the names kept, a group counted once */
    unsigned char *kept = calloc(np + 1, 1);
    k = 1;
    for (const char *p = select; *p; p++) k += *p == ',';
    g = kept ? 0 : k; /* out of memory: the bound without groups */
    for (const char *p = select; kept && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
      size_t len = strcspn(p, ",");
      for (size_t i = 0; i < np; i++)
        if (strlen(s->space->params[i].name) == len && !strncmp(s->space->params[i].name, p, len))
          kept[i] = 1;
    }
    for (size_t i = 0; kept && i < np; i++) {
      int seen = 0;
      for (size_t j = 0; kept[i] && s->space->params[i].group[0] && j < i && !seen; j++)
        seen = kept[j] && !strcmp(s->space->params[j].group, s->space->params[i].group);
      g += kept[i] && !seen;
    }
    free(kept);
    method = WSISA_SA_VBD;
  }
  const wsisa_sa_opts *o = &s->sa;
  double n = 0, scratch = 0;
  switch (method) {
    case WSISA_SA_MOAT:
    case WSISA_SA_TWO_PHASE: {
      double drawn = (double)(o->pool > o->trajectories ? o->pool : o->trajectories);
      n = (double)o->trajectories * (double)(g + 1);
      scratch = drawn * (double)(g + 1) * (double)k * 8.0;
      break;
    }
    case WSISA_SA_VBD:
      n = (double)o->samples * (double)(o->second_order ? 2 * g + 2 : g + 2);
      scratch = 2.0 * (double)o->samples * (double)k * 8.0; /* A and B */
      break;
    default: n = (double)o->samples; break;
  }
  *rows = n > (double)SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)n;
  /* unit-cube coordinates and values of every row */
  *bytes = scratch + n * (double)(k + np) * 8.0;
  return 0;
}

/* The JSON field that sets a design's size, for messages. */
static const char *size_field(const wsisa_study *s, const char *select) {
  if (select || s->sa.method == WSISA_SA_VBD || s->sa.method == WSISA_SA_CORRELATION)
    return "method.samples";
  return s->sa.pool > s->sa.trajectories ? "method.pool" : "method.trajectories";
}

int wsisa_study_check_size(const wsisa_study *s, const char *select, size_t max_rows,
                           double bytes_per_row, uint64_t memory, const char *memory_source,
                           size_t *rows, wsisa_err *e) {
  double bytes;
  wsisa_study_design_size(s, select, rows, &bytes);
  const char *field = size_field(s, select);
  if (max_rows && *rows > max_rows)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: %s: the design has %zu runs, more than %zu (--force goes on "
                       "if the machine can hold them)",
                       s->path, field, *rows, max_rows);
  bytes += (double)*rows * bytes_per_row;
  if (!memory) {
    memory = wsisa_memory_available();
    memory_source = "the memory available";
  }
  char need[32], have[32];
  if (memory && bytes > (double)memory)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: %s: the design's %zu runs need about %s, more than %s (%s)", s->path,
                       field, *rows, wsisa_bytes_text(bytes, need, sizeof need), memory_source,
                       wsisa_bytes_text((double)memory, have, sizeof have));
  return 0;
}
