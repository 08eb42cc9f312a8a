/* `wsisa run --check DIR`: the journal against the design, the outputs
 * against the journal, remade in a temporary folder and compared. */
#include <stdarg.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/run/run_internal.h"

typedef struct findings {
  char text[16][600];
  size_t n;
} findings;

static void found(findings *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void found(findings *f, const char *fmt, ...) {
  if (f->n < sizeof f->text / sizeof *f->text) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text[f->n], sizeof f->text[0], fmt, ap);
    va_end(ap);
  }
  f->n++;
}

/* `name` in the folder against the one made again from the journal. */
static void compare(findings *f, const wsisa__study_run *s, const char *made_dir, const char *name,
                    const char *what) {
  char path[WSISA_PATH_MAX], made[WSISA_PATH_MAX], why[600];
  wsisa_err err = WSISA_ERR_INIT;
  if (wsisa__run_path(s, name, path, &err) ||
      wsisa_path_fmt_err(made, &err, "%s/%s", made_dir, name))
    found(f, "%s", err.msg);
  else if (wsisa__results_differs(path, made, what, why, sizeof why))
    found(f, "%s", why);
}

/* run.json: whole JSON, and of this study's runs and tiles. */
static void check_run_json(findings *f, const wsisa__study_run *s) {
  char path[WSISA_PATH_MAX], *text = NULL;
  wsisa_err why = WSISA_ERR_INIT;
  size_t len = 0;
  if (wsisa__run_path(s, "run.json", path, &why) ||
      wsisa_text_read(path, WSISA_TEXT_MAX_STUDY, "a run's record", &text, &len, &why)) {
    found(f, "%s", why.msg);
    return;
  }
  json_error_t je;
  json_t *root = json_loadb(text, len, 0, &je);
  free(text);
  json_t *runs = json_object_get(root, "runs"), *tiles = json_object_get(root, "tiles");
  if (!json_is_object(root))
    found(f, "%s:%d: not whole JSON (%s)", path, je.line, root ? "not an object" : je.text);
  else if (!json_is_integer(runs) || !json_is_integer(tiles) ||
           json_integer_value(runs) != (json_int_t)s->ndesign ||
           json_integer_value(tiles) != (json_int_t)s->set.ntiles)
    found(f, "%s: not this study's record (its runs and tiles are not the journal's %zu and %zu)",
          path, s->ndesign, s->set.ntiles);
  json_decref(root);
}

int wsisa__run_check(wsisa__study_run *s, wsisa_err *e) {
  findings f;
  memset(&f, 0, sizeof f);
  wsisa__journal_summary js;
  wsisa_err inner = WSISA_ERR_INIT;
  int journal_ok = !wsisa__journal_read(s, 0, &js, &inner);
  if (!journal_ok) found(&f, "%s", inner.msg);
  else if (js.torn)
    found(&f, "%s/journal.csv:%zu: last line torn (a resume cuts it off and runs its unit again)",
          s->dir, js.torn);
  size_t flines = 0, ftorn = 0;
  if (journal_ok && s->features) {
    wsisa_err_clear(&inner);
    if (wsisa__run_features_read(s->features, s->have, 0, &flines, &ftorn, &inner))
      found(&f, "%s", inner.msg), journal_ok = 0;
    else if (ftorn)
      found(&f, "%s/feature_values.csv:%zu: last line torn (a resume cuts it off)", s->dir, ftorn);
  }
  size_t total = s->nruns * s->set.ntiles, have = 0;
  for (size_t i = 0; i < total; i++) have += s->have[i];
  if (journal_ok && have < total)
    found(&f, "%s: %zu of %zu (run, tile) results in the journal; `wsisa run --resume %s` "
          "finishes the study", s->dir, have, total, s->dir);
  /* the files the journal gives, made again beside and compared byte for byte */
  char made[] = "/tmp/wsisa-check-XXXXXX", path_best[WSISA_PATH_MAX];
  if (!mkdtemp(made)) return wsisa_error(e, WSISA_EIO, "/tmp: %s", strerror(errno));
  if (!wsisa__results_samples(s, made, &inner)) {
    compare(&f, s, made, "samples.csv", "the study's design");
    if (s->from_csv) compare(&f, s, made, "design.csv", "the study's design");
  }
  if (s->set.annotated && !wsisa__results_reference(s, made, &inner))
    compare(&f, s, made, "reference.json", "reading the annotations again");
  if (journal_ok && have == total && !wsisa__results_metrics(s, made, &inner)) {
    compare(&f, s, made, "metrics.csv", "the journal");
    compare(&f, s, made, "outputs.csv", "the journal");
    if (wsisa_path_fmt(path_best, "%s/best.json", made) == 0 && access(path_best, F_OK) == 0)
      compare(&f, s, made, "best.json", "the journal");
    check_run_json(&f, s);
    char path[WSISA_PATH_MAX];
    wsisa_err err = WSISA_ERR_INIT;
    if (wsisa__run_path(s, "indices.csv", path, &err))
      found(&f, "%s", err.msg);
    else if (wsisa__results_indexed(s) && access(path, R_OK) != 0)
      found(&f, "%s: %s", path, strerror(errno));
  }
  wsisa__run_folder_remove(made);
  if (f.n == 1) return wsisa_error(e, WSISA_EFORMAT, "%s", f.text[0]);
  if (f.n) {
    for (size_t i = 0; i < f.n && i < sizeof f.text / sizeof *f.text; i++)
      fprintf(stderr, "  %s\n", f.text[i]);
    return wsisa_error(e, WSISA_EFORMAT, "%s: not whole: %zu problems (listed above)", s->dir, f.n);
  }
  printf("%s: whole\n", s->dir);
  printf("  journal.csv: %zu whole lines (%zu repeated), %zu of %zu (run, tile) results (%zu runs"
         "%s x %zu tiles)\n", js.lines, js.repeats, have, total, s->ndesign,
         s->nruns > s->ndesign ? " and the defaults" : "", s->set.ntiles);
  if (s->features) printf("  feature_values.csv: %zu whole lines\n", flines);
  printf("  samples.csv%s: the study's design\n", s->from_csv ? ", design.csv" : "");
  if (s->set.annotated) printf("  reference.json: the annotations as they are\n");
  printf("  metrics.csv, outputs.csv%s: what the journal gives\n",
         s->set.annotated ? ", best.json" : "");
  printf("  run.json: whole, of these runs and tiles%s\n",
         wsisa__results_indexed(s) ? "; indices.csv: present" : "");
  return 0;
}
