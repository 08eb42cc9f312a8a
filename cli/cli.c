/* Flag-value parsing shared by the subcommands: one clear line per mistake. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>

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
