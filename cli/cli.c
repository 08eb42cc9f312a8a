/* What the subcommands share: parsing and --help from one option table per
 * command, and flag values parsed with one clear line per mistake. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/run/run.h"
#include "io/io.h"

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
  for (const wsisa_cli_flag *f = cmd->flags; f->name && n < MAX_FLAGS; f++) {
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
  for (const wsisa_cli_flag *f = cmd->flags; f->name; f++) {
    if (!f->key) continue;
    if (text[1] == '-' && n - 2 == strlen(f->name) && strncmp(text + 2, f->name, n - 2) == 0)
      return f;
    if (f->short_flag && n == 2 && text[1] == (char)f->key) return f;
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
    fprintf(out, "%.*s%s%s", (int)len, p, f->arg ? " " : "", f->arg ? f->arg : "");
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

static void flag_label(const wsisa_cli_flag *f, char *buf, size_t cap) {
  if (!f->key) snprintf(buf, cap, "%s", f->name);
  else if (f->short_flag) snprintf(buf, cap, "-%c, --%s", f->key, f->name);
  else snprintf(buf, cap, "--%s", f->name);
  if (f->arg) snprintf(buf + strlen(buf), cap - strlen(buf), " %s", f->arg);
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
  for (const wsisa_cli_flag *f = cmd->flags; f->name; f++) {
    if (!f->help) continue;
    flag_label(f, label, sizeof label);
    if ((int)strlen(label) > width) width = (int)strlen(label);
  }
  if (width > 20) width = 20;
  for (const wsisa_cli_flag *f = cmd->flags; f->name; f++) {
    if (!f->help) continue;
    flag_label(f, label, sizeof label);
    if (f->words) {
      char joined[512];
      wsisa_cli_join(f->words, f->nwords, " | ", joined, sizeof joined);
      snprintf(text, sizeof text, f->help, joined);
    } else {
      snprintf(text, sizeof text, f->help, f->n[0], f->n[1]);
    }
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
