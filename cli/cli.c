/* Flag-value parsing shared by the subcommands: one clear line per mistake. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>

#include "cli/cli.h"

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
