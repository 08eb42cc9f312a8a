/* What the subcommands share: parsing and --help from one option table per
 * command, and flag values parsed with one clear line per mistake. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/run/run.h"
#include "engine/study/study.h"
#include "io/io.h"

const wsisa_cli_command *const wsisa_cli_commands[] = {
    &wsisa_cli_tiles, &wsisa_cli_segment,   &wsisa_cli_sample, &wsisa_cli_analyze,
    &wsisa_cli_plan,  &wsisa_cli_calibrate, &wsisa_cli_run,     NULL,
};

const wsisa_cli_command *wsisa_cli_find(const char *name) {
  for (size_t i = 0; wsisa_cli_commands[i]; i++)
    if (strcmp(name, wsisa_cli_commands[i]->name) == 0) return wsisa_cli_commands[i];
  return NULL;
}

/* One meaning per name: a size is --tile-size, a tile's place --tile. */
const wsisa_cli_flag wsisa_cli_shared_flags[] = {
    {"study", WSISA_FLAG_STUDY, .arg = "S.json", .help = "the study (docs/study-file.md)"},
    {"samples", WSISA_FLAG_SAMPLES, .arg = "samples.csv",
     .help = "the design from a file, one row per run: CSV or numpy's\n"
             "text (comma, tab or blank delimited), run_id first or no id\n"
             "column (rows 0, 1, ...), then parameter columns (any of them\n"
             "may be absent: the study's value); without a header, the\n"
             "study's varying parameters in order; as `wsisa sample`\n"
             "writes it or another SA tool"},
    {"select", WSISA_FLAG_SELECT, .arg = "P,...",
     .help = "two_phase studies: the phase-2 (VBD) design over these\n"
             "parameters, the others fixed at their defaults"},
    {"json", WSISA_FLAG_JSON, .help = "machine-readable output (JSON)"},
    {"output", WSISA_FLAG_OUTPUT, .arg = "PATH", .short_flag = 1, .help = "what the command writes:"},
    {"force", WSISA_FLAG_FORCE, .help = "go ahead where the command refuses by default:"},
    {"mpp", WSISA_FLAG_MPP, .arg = "M",
     .help = "the slide's um/pixel at level 0, overriding what it says\n"
             "(or giving what it does not)"},
    {"target-mpp", WSISA_FLAG_TARGET_MPP, .arg = "T",
     .help = "resolution worked at (default %g um/pixel, the parameters'):\n"
             "a slide is read at the coarsest level not coarser than T\n"
             "and area-averaged to T unless within %.0f%%",
     .n = {WSISA_TARGET_MPP, 100 * WSISA_MPP_TOLERANCE}},
    {"tile-size", WSISA_FLAG_TILE_SIZE, .arg = "N",
     .help = "side of the grid's tiles in target pixels (default 1024)"},
    {"tile", WSISA_FLAG_TILE, .arg = "i,j",
     .help = "the grid tile at column i, row j (wsisa tiles lists them)"},
    {"active-paths", WSISA_FLAG_ACTIVE_PATHS, .arg = "K",
     .help = "RMSR: root-to-leaf paths active at once per bucket\n"
             "(default: the study's reuse.active_paths, else 8 x workers,\n"
             "lowered to what fits in the memory limit)"},
    {"level-costs", WSISA_FLAG_LEVEL_COSTS, .arg = "c1,...,c7",
     .help = "cost per task of each level (e.g. seconds), which naive,\n"
             "sca, rtma and trtma's buckets cost their tasks' sum by\n"
             "(default: the study's reuse.cost_model; auto takes them\n"
             "from the calibrated performance models)"},
    {"memory-limit", WSISA_FLAG_MEMORY_LIMIT, .arg = "SIZE",
     .help = "peak memory of a process (e.g. 512M, 4G): K is lowered so\n"
             "what it holds before the first unit, the tiles and K\n"
             "active paths fit (default: the study's execution.memory_limit,\n"
             "else 80%% of the memory available)"},
    {"help", WSISA_FLAG_HELP, .short_flag = 1},
    {0}};

const wsisa_cli_flag *wsisa_cli_row(const wsisa_cli_flag *f) {
  if (!f->shared) return f;
  for (const wsisa_cli_flag *s = wsisa_cli_shared_flags; s->name; s++)
    if (s->key == f->shared) return s;
  return f;
}

int wsisa_cli_row_end(const wsisa_cli_flag *f) { return !f->name && !f->shared; }

int wsisa_cli_bytes(const char *flag, const char *text, uint64_t *out, wsisa_err *e) {
  if (wsisa_study_parse_bytes(text, out) || *out == 0)
    return wsisa_error(e, WSISA_EUSAGE, "%s %s: not a size (e.g. 4G, 512M)", flag, text);
  return 0;
}

int wsisa_cli_long(const char *flag, const char *text, long *out, wsisa_err *e) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end || errno)
    return wsisa_error(e, WSISA_EUSAGE, "%s %s: not a whole number", flag, text);
  *out = v;
  return 0;
}

int wsisa_cli_double(const char *flag, const char *text, double *out, wsisa_err *e) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || errno || !isfinite(v))
    return wsisa_error(e, WSISA_EUSAGE, "%s %s: not a number", flag, text);
  *out = v;
  return 0;
}

int wsisa_cli_bad_option(int opt, char **argv, wsisa_err *e) {
  const char *arg = argv[optind - 1];
  if (opt == ':') return wsisa_error(e, WSISA_EUSAGE, "%s: missing value", arg);
  return wsisa_error(e, WSISA_EUSAGE, "%s: unknown flag", arg);
}

int wsisa_cli_duration(const char *flag, const char *text, double *seconds, wsisa_err *e) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  double unit = 1;
  if (end != text && *end && !end[1]) {
    switch (*end) {
      case 's': unit = 1; end++; break;
      case 'm': unit = 60; end++; break;
      case 'h': unit = 3600; end++; break;
      case 'd': unit = 86400; end++; break;
      default: break;
    }
  }
  if (end == text || *end || errno || !isfinite(v) || !(v > 0))
    return wsisa_error(e, WSISA_EUSAGE, "%s %s: not a duration (seconds, or e.g. 90m, 8h, 2d)",
                       flag, text);
  *seconds = v * unit;
  return 0;
}

int wsisa_cli_level_costs(const char *text, double cost[WSISA_SEG_LEVELS], wsisa_err *e) {
  const char *p = text;
  for (size_t l = 0; l < WSISA_SEG_LEVELS; l++) {
    char *end;
    cost[l] = strtod(p, &end);
    if (end == p || !isfinite(cost[l]) || cost[l] < 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "--level-costs %s: want %d non-negative numbers separated by commas", text,
                         WSISA_SEG_LEVELS);
    p = end;
    if (l + 1 < WSISA_SEG_LEVELS && *p++ != ',')
      return wsisa_error(e, WSISA_EUSAGE, "--level-costs %s: want %d numbers, one per task level",
                         text, WSISA_SEG_LEVELS);
  }
  if (*p)
    return wsisa_error(e, WSISA_EUSAGE, "--level-costs %s: want %d numbers, one per task level",
                       text, WSISA_SEG_LEVELS);
  return 0;
}

int wsisa_cli_mpp(const char *flag, const char *text, double *out, wsisa_err *e) {
  int rc = wsisa_cli_double(flag, text, out, e);
  if (!rc && (*out < WSISA_MPP_MIN || *out > WSISA_MPP_MAX))
    rc = wsisa_error(e, WSISA_EUSAGE, "%s %s: must be between %g and %g um/pixel", flag, text,
                     WSISA_MPP_MIN, WSISA_MPP_MAX);
  return rc;
}

/* ---- option tables ------------------------------------------------------------ */

#define MAX_FLAGS 40

int wsisa_cli_next(int argc, char **argv, const wsisa_cli_command *cmd) {
  struct option longopts[MAX_FLAGS + 1];
  char shortopts[2 * MAX_FLAGS + 2];
  size_t n = 0, s = 0;
  shortopts[s++] = ':';
  /* a table longer than MAX_FLAGS loses its last flags, which test_cli_help
     then finds refused */
  for (const wsisa_cli_flag *t = cmd->flags; !wsisa_cli_row_end(t) && n < MAX_FLAGS; t++) {
    const wsisa_cli_flag *f = wsisa_cli_row(t);
    if (!f->key) continue;
    longopts[n++] = (struct option){f->name, f->arg ? required_argument : no_argument, NULL, f->key};
    if (f->short_flag) {
      shortopts[s++] = (char)f->key;
      if (f->arg) shortopts[s++] = ':';
    }
  }
  longopts[n] = (struct option){NULL, 0, NULL, 0};
  shortopts[s] = '\0';
  return getopt_long(argc, argv, shortopts, longopts, NULL);
}

static int name_char(char c) { return isalnum((unsigned char)c) || c == '-'; }

/* The flag a form names at `text` (--name or -K), NULL if none; *len its length. */
static const wsisa_cli_flag *flag_at(const wsisa_cli_command *cmd, const char *text,
                                     size_t *len) {
  size_t n = 1;
  while (name_char(text[n])) n++;
  *len = n;
  for (const wsisa_cli_flag *t = cmd->flags; !wsisa_cli_row_end(t); t++) {
    const wsisa_cli_flag *f = wsisa_cli_row(t);
    if (!f->key) continue;
    if (text[1] == '-' && n - 2 == strlen(f->name) && strncmp(text + 2, f->name, n - 2) == 0)
      return t;
    if (f->short_flag && n == 2 && text[1] == (char)f->key) return t;
  }
  return NULL;
}

/* A form with each flag it names followed by its placeholder. */
static void print_form(FILE *out, const wsisa_cli_command *cmd, const char *form) {
  for (const char *p = form; *p;) {
    size_t len;
    const wsisa_cli_flag *f = NULL;
    if (*p == '-' && (p == form || strchr(" [|(", p[-1])) && name_char(p[1]))
      f = flag_at(cmd, p, &len);
    if (!f) {
      fputc(*p++, out);
      continue;
    }
    const char *arg = f->arg ? f->arg : wsisa_cli_row(f)->arg;
    fprintf(out, "%.*s%s%s", (int)len, p, arg ? " " : "", arg ? arg : "");
    p += len;
  }
  fputc('\n', out);
}

/* Text whose lines after the first are indented by `indent`. */
static void print_lines(FILE *out, const char *text, int indent) {
  for (const char *p = text; *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (p != text) fprintf(out, "%*s", indent, "");
    fprintf(out, "%.*s\n", (int)len, p);
    p += len + (end != NULL);
  }
}

/* A table row's label: "-o, --output DIR", with the row's own placeholder. */
static void flag_label(const wsisa_cli_flag *t, char *buf, size_t cap) {
  const wsisa_cli_flag *f = wsisa_cli_row(t);
  const char *arg = t->arg ? t->arg : f->arg;
  if (!f->key) snprintf(buf, cap, "%s", f->name);
  else if (f->short_flag) snprintf(buf, cap, "-%c, --%s", f->key, f->name);
  else snprintf(buf, cap, "--%s", f->name);
  if (arg) snprintf(buf + strlen(buf), cap - strlen(buf), " %s", arg);
}

/* `format` with its row's numbers or words. */
static void help_text(const char *format, const wsisa_cli_flag *f, char *buf, size_t cap) {
  if (f->words) {
    char joined[512];
    wsisa_cli_join(f->words, f->nwords, " | ", joined, sizeof joined);
    snprintf(buf, cap, format, joined);
  } else {
    snprintf(buf, cap, format, f->n[0], f->n[1]);
  }
}

void wsisa_cli_help(const wsisa_cli_flag *t, char *buf, size_t cap) {
  const wsisa_cli_flag *f = wsisa_cli_row(t);
  if (cap) buf[0] = '\0';
  if (!f->help) return;
  help_text(f->help, f, buf, cap);
  size_t len = strlen(buf);
  if (t->note && len + 2 < cap) {
    /* the note goes on from the shared text: "...;" or "...:" */
    if (len && buf[len - 1] != ':') buf[len++] = ';';
    buf[len++] = '\n';
    help_text(t->note, t, buf + len, cap - len);
  }
}

void wsisa_cli_join(const char *const *words, int n, const char *sep, char *buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  for (int i = 0; i < n && len < cap; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? sep : "", words[i]);
    if (w < 0) break;
    len += (size_t)w;
  }
}

void wsisa_cli_usage(FILE *out, const wsisa_cli_command *cmd) {
  for (size_t i = 0; cmd->forms[i]; i++) {
    fprintf(out, "%s%s ", i ? "       wsisa " : "usage: wsisa ", cmd->name);
    print_form(out, cmd, cmd->forms[i]);
  }
  /* the help column: after the longest label, up to 20 characters */
  int width = 0;
  char label[96], text[2048];
  for (const wsisa_cli_flag *f = cmd->flags; !wsisa_cli_row_end(f); f++) {
    if (!wsisa_cli_row(f)->help) continue;
    flag_label(f, label, sizeof label);
    if ((int)strlen(label) > width) width = (int)strlen(label);
  }
  if (width > 20) width = 20;
  for (const wsisa_cli_flag *f = cmd->flags; !wsisa_cli_row_end(f); f++) {
    if (!wsisa_cli_row(f)->help) continue;
    flag_label(f, label, sizeof label);
    wsisa_cli_help(f, text, sizeof text);
    fprintf(out, "  %-*s  ", width, label);
    print_lines(out, text, width + 4);
  }
}

void wsisa_cli_synopsis(FILE *out, const wsisa_cli_command *cmd) {
  for (size_t i = 0; cmd->forms[i]; i++) {
    fprintf(out, "  wsisa %-9s ", cmd->name);
    print_form(out, cmd, cmd->forms[i]);
  }
  fprintf(out, "%*s", 18, "");
  print_lines(out, cmd->summary, 18);
}
