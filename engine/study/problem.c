/* SALib's problem as SALib leaves it, read into a space of continuous
 * parameters for `wsisa analyze --problem`: a JSON dict (read_param_file's,
 * or a ProblemSpec's, with what sampling adds) or SALib's text parameter
 * file, one parameter a line. The content tells which; both pass the same
 * checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/study/study_internal.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Every key SALib's problem dict or a ProblemSpec carries when written out
 * (json.dump): samples, results and indices are a ProblemSpec's attributes,
 * not keys. */
static const char *const keys[] = {"names",  "bounds",  "num_vars",     "groups",
                                   "dists",  "outputs", "sample_scaled"};

/* Where parameter i is, in messages: "P.txt:4" (its line) or "P.json: key[i]". */
static void where(char *buf, size_t cap, const char *path, const size_t *lines, const char *key,
                  size_t i) {
  if (lines)
    snprintf(buf, cap, "%s:%zu", path, lines[i]);
  else
    snprintf(buf, cap, "%s: %s[%zu]", path, key, i);
}

/* ---- SALib's text parameter file ---------------------------------------------------- */

/* `name lower upper [group [dist]]` a line, as SALib's read_param_file reads
 * it: '#' lines are comments; the delimiter is a comma if every parameter
 * line has one, else a tab if every one has one, else runs of blanks (what
 * csv.Sniffer finds in such a file); a group "NA" (or none) leaves the
 * parameter alone; the dist's two bounds are the two numbers. Into the dict
 * read_param_file returns, groups null when every parameter is alone and
 * dists null when all are unif, and each parameter's line. */
static int read_text(const char *path, char *text, json_t **out, size_t **lines_out,
                     wsisa_err *e) {
  *out = NULL;
  *lines_out = NULL;
  /* the parameter lines, NUL-terminated in place */
  size_t n = 0, cap = 16;
  char **line = malloc(cap * sizeof *line);
  size_t *lines = malloc(cap * sizeof *lines);
  int rc = line && lines ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  int commas = 1, tabs = 1;
  size_t at = 1;
  for (char *s = text; !rc && *s; at++) {
    char *nl = strchr(s, '\n'), *next = nl ? nl + 1 : s + strlen(s);
    if (nl) *nl = '\0';
    size_t len = strlen(s);
    while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t')) s[--len] = '\0';
    char *q = s + strspn(s, " \t");
    if (*q && *q != '#') {
      if (n == cap && (cap *= 2, !(line = realloc(line, cap * sizeof *line)) ||
                                     !(lines = realloc(lines, cap * sizeof *lines)))) {
        rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
        break;
      }
      commas &= strchr(q, ',') != NULL;
      tabs &= strchr(q, '\t') != NULL;
      line[n] = q;
      lines[n++] = at;
    }
    s = next;
  }
  if (!rc && n == 0)
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: no parameter lines (SALib's parameter file: name lower upper [group "
                     "[dist]] a line)",
                     path);
  const char *delims = commas ? "," : tabs ? "\t" : " \t";
  json_t *names = json_array(), *bounds = json_array(), *groups = json_array(),
         *dists = json_array();
  int grouped = 0, shaped = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    char *field[6];
    size_t nf = 0;
    for (char *s = line[i]; nf < 6;) {
      size_t len = strcspn(s, delims);
      char *f = s, *stop = s + len;
      int last = !*stop;
      *stop = '\0';
      /* around a comma or a tab, blanks are padding */
      while (*f == ' ' || *f == '\t') f++;
      for (char *t = f + strlen(f); t > f && (t[-1] == ' ' || t[-1] == '\t');) *--t = '\0';
      field[nf++] = f;
      if (last) break;
      s = stop + 1;
      if (!commas && !tabs) s += strspn(s, delims);
    }
    if (nf < 3 || nf > 5)
      rc = wsisa_error(e, WSISA_EFORMAT,
                       "%s:%zu: %s%zu field%s; a parameter line is: name lower upper [group "
                       "[dist]]",
                       path, lines[i], nf > 5 ? "more than " : "", nf > 5 ? (size_t)5 : nf,
                       nf == 1 ? "" : "s");
    else if (!field[0][0])
      rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: a parameter without a name", path, lines[i]);
    double b[2];
    for (int j = 0; !rc && j < 2; j++) {
      char *end;
      b[j] = strtod(field[1 + j], &end);
      if (!field[1 + j][0] || *end)
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:%zu: %s: '%s' is not a number (its %s bound)",
                         path, lines[i], field[0], field[1 + j], j ? "second" : "first");
    }
    if (rc) break;
    const char *group = nf > 3 && field[3][0] && strcmp(field[3], "NA") ? field[3] : field[0];
    const char *dist = nf > 4 && field[4][0] ? field[4] : "unif";
    grouped |= strcmp(group, field[0]) != 0;
    shaped |= strcmp(dist, "unif") != 0;
    json_array_append_new(names, json_string(field[0]));
    json_array_append_new(bounds, json_pack("[f, f]", b[0], b[1]));
    json_array_append_new(groups, json_string(group));
    json_array_append_new(dists, json_string(dist));
  }
  /* read_param_file refuses a single group for every parameter */
  size_t distinct = 0;
  for (size_t i = 0; !rc && grouped && i < n; i++) {
    size_t j = 0;
    while (j < i && strcmp(json_string_value(json_array_get(groups, i)),
                           json_string_value(json_array_get(groups, j))))
      j++;
    distinct += j == i;
  }
  if (!rc && grouped && distinct == 1)
    rc = wsisa_error(e, WSISA_EFORMAT,
                     "%s: every parameter is in group '%s': one group compares nothing (SALib's "
                     "read_param_file refuses it too)",
                     path, json_string_value(json_array_get(groups, 0)));
  json_t *root = rc ? NULL
                    : json_pack("{s:o, s:o, s:I, s:o, s:o}", "names", names, "bounds", bounds,
                                "num_vars", (json_int_t)n, "groups",
                                grouped ? groups : json_null(), "dists",
                                shaped ? dists : json_null());
  if (rc) {
    json_decref(names);
    json_decref(bounds);
  }
  if (rc || !grouped) json_decref(groups);
  if (rc || !shaped) json_decref(dists);
  if (!rc && !root) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  free(line);
  if (rc) {
    free(lines);
    return rc;
  }
  *out = root;
  *lines_out = lines;
  return 0;
}

/* ---- the dict, checked into a space ----------------------------------------------- */

/* {"names": [...], "bounds": [[lo, hi], ...]} and optionally "num_vars",
 * "groups" (a group name per parameter; null, a parameter's own name: alone),
 * "dists" (a distribution per parameter, bounds read under each; null: all
 * unif), "outputs" (names of output columns; not used: the outputs file
 * names its columns) and "sample_scaled" (true once SALib has sampled).
 * `lines` (NULL for JSON) places parameter i in messages. */
static int build(const char *path, json_t *root, const size_t *lines, wsisa_sa_space **out,
                 char *note, size_t note_cap, wsisa_err *e) {
  *out = NULL;
  char at[WSISA_NOTE_MAX]; /* the file and the place in it */
  int rc = json_is_object(root) ? 0 : wsisa_error(e, WSISA_EFORMAT, "%s: not a JSON object", path);
  const char *key;
  json_t *v;
  if (!rc)
    json_object_foreach(root, key, v) {
      size_t i = 0;
      while (i < COUNT(keys) && strcmp(key, keys[i])) i++;
      if (i == COUNT(keys) && !rc)
        rc = wsisa_error(e, WSISA_EFORMAT,
                         "%s: unknown key '%s' (a SALib problem has names, bounds, and "
                         "optionally num_vars, groups, dists, outputs, sample_scaled)",
                         path, key);
    }
  json_t *names = json_object_get(root, "names"), *bounds = json_object_get(root, "bounds");
  json_t *nvars = json_object_get(root, "num_vars"), *outputs = json_object_get(root, "outputs");
  json_t *scaled = json_object_get(root, "sample_scaled");
  size_t k = json_array_size(names);
  if (!rc && (!json_is_array(names) || k == 0))
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: names: a list of parameter names is required", path);
  if (!rc && (!json_is_array(bounds) || json_array_size(bounds) != k))
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: bounds: one [low, high] per name (%zu) is required",
                     path, k);
  if (!rc && nvars && (!json_is_integer(nvars) || json_integer_value(nvars) != (json_int_t)k))
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: num_vars: %zu names are given", path, k);
  if (!rc && scaled && !json_is_boolean(scaled))
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: sample_scaled: true or false (SALib's mark of a "
                     "sampled problem)", path);
  int named = !outputs || json_is_null(outputs) || json_is_array(outputs);
  for (size_t i = 0; named && i < json_array_size(outputs); i++)
    named = json_is_string(json_array_get(outputs, i));
  if (!rc && !named)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: outputs: a list of output names, or null", path);
  wsisa_sa_space *space = rc ? NULL : wsisa_sa_space_new();
  if (!rc && !space) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  json_t *dists = json_object_get(root, "dists"), *groups = json_object_get(root, "groups");
  if (json_is_null(dists)) dists = NULL;
  if (json_is_null(groups)) groups = NULL;
  if (!rc && dists && (!json_is_array(dists) || json_array_size(dists) != k))
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: dists: one distribution name per name (%zu)", path, k);
  if (!rc && groups && (!json_is_array(groups) || json_array_size(groups) != k))
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: groups: one group name per name (%zu), or null", path,
                     k);
  for (size_t i = 0; i < k && !rc; i++) {
    json_t *name = json_array_get(names, i), *b = json_array_get(bounds, i);
    wsisa_sa_param p;
    memset(&p, 0, sizeof p);
    p.kind = WSISA_SA_CONTINUOUS;
    int dist = WSISA_SA_UNIF;
    const char *dname = dists ? json_string_value(json_array_get(dists, i)) : "unif";
    double bv[4];
    size_t nb = json_is_array(b) ? json_array_size(b) : 0;
    if (!json_is_string(name) || json_string_length(name) >= sizeof p.name) {
      where(at, sizeof at, path, lines, "names", i);
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: not a name of at most %zu bytes", at,
                       sizeof p.name - 1);
    } else if (!dname || (dist = wsisa_sa_dist_from_name(dname)) < 0) {
      where(at, sizeof at, path, lines, "dists", i);
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: %s%s%s is not a distribution (%s)", at,
                       dname ? "'" : "", dname ? dname : "not a string", dname ? "'" : "",
                       wsisa_sa_dist_names());
    } else if (lines && nb != wsisa_sa_dist_nbounds((wsisa_sa_dist)dist) &&
               dist != WSISA_SA_TRIANG) {
      where(at, sizeof at, path, lines, "bounds", i);
      rc = wsisa_error(e, WSISA_EFORMAT,
                       "%s: %s takes %zu bounds, and a parameter file gives 2 (give the problem "
                       "as JSON)",
                       at, dname, wsisa_sa_dist_nbounds((wsisa_sa_dist)dist));
    } else if (nb < 2 || nb > 4) {
      where(at, sizeof at, path, lines, "bounds", i);
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: not a list of %zu numbers (%s)", at,
                       wsisa_sa_dist_nbounds((wsisa_sa_dist)dist), dname);
    }
    for (size_t j = 0; j < nb && !rc; j++) {
      if (!json_is_number(json_array_get(b, j))) {
        where(at, sizeof at, path, lines, "bounds", i);
        rc = wsisa_error(e, WSISA_EFORMAT, "%s: bound %zu is not a number", at, j + 1);
      } else {
        bv[j] = json_number_value(json_array_get(b, j));
      }
    }
    if (rc) break;
    snprintf(p.name, sizeof p.name, "%s", json_string_value(name));
    wsisa_err pe = WSISA_ERR_INIT;
    if (wsisa_sa_param_set_dist(&p, (wsisa_sa_dist)dist, bv, nb, &pe)) {
      where(at, sizeof at, path, lines, "bounds", i);
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: %s", lines ? at : path, pe.msg);
      break;
    }
    p.value = wsisa_sa_param_midpoint(&p);
    if (wsisa_sa_space_add(space, &p, &pe)) {
      where(at, sizeof at, path, lines, "names", i);
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: %s", lines ? at : path, pe.msg);
    }
  }
  /* SALib reads one group holding every parameter as no groups */
  int one = groups && k > 1 && json_is_string(json_array_get(groups, 0));
  for (size_t i = 1; one && i < k; i++) one = json_equal(json_array_get(groups, i), json_array_get(groups, 0));
  if (!rc && one) {
    snprintf(note, note_cap,
             "warning: %s: every parameter is in group '%s'; read as no groups, as SALib "
             "reads one group\n",
             path, json_string_value(json_array_get(groups, 0)));
    groups = NULL;
  }
  for (size_t i = 0; groups && i < k && !rc; i++) {
    json_t *g = json_array_get(groups, i);
    wsisa_err pe = WSISA_ERR_INIT;
    where(at, sizeof at, path, lines, "groups", i);
    if (json_is_null(g) || (json_is_string(g) && !strcmp(json_string_value(g), space->params[i].name)))
      continue; /* alone, as a ProblemSpec writes it (groups = names) */
    if (!json_is_string(g))
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: not a group name", at);
    else if (wsisa_sa_space_group(space, json_string_value(g), space->params[i].name, &pe))
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: %s", at, pe.msg);
  }
  if (!rc && groups) {
    wsisa_err pe = WSISA_ERR_INIT;
    if (wsisa_sa_space_check_groups(space, &pe))
      rc = wsisa_error(e, WSISA_EFORMAT, "%s: groups: %s", path, pe.msg);
  }
  if (rc) {
    wsisa_sa_space_free(space);
    return rc;
  }
  *out = space;
  return 0;
}

int wsisa__problem_load(const char *path, wsisa_sa_space **out, char *note, size_t note_cap,
                        wsisa_err *e) {
  *out = NULL;
  note[0] = '\0';
  char *text = NULL;
  size_t len = 0, *lines = NULL;
  int rc = wsisa_text_read(path, WSISA_TEXT_MAX_PARAMS, "a problem file", &text, &len, e);
  if (rc) return rc;
  const char *start = text + (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0);
  const char *s = start + strspn(start, " \t\r\n");
  json_t *root = NULL;
  if (*s == '{' || *s == '[') {
    json_error_t je;
    root = json_loads(start, JSON_REJECT_DUPLICATES, &je);
    if (!root) rc = wsisa_error(e, WSISA_EFORMAT, "%s:%d: %s", path, je.line, je.text);
  } else {
    rc = read_text(path, (char *)s, &root, &lines, e);
  }
  if (!rc) rc = build(path, root, lines, out, note, note_cap, e);
  json_decref(root);
  free(lines);
  free(text);
  return rc;
}
