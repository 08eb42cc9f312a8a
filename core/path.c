/* Paths built from a folder and a name: one buffer size for all of them, and
 * a formatter that refuses a path that does not fit instead of cutting it
 * (a cut path names another file). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

/* The bytes vsnprintf wanted, -1 on an encoding error; out is "" unless the
 * path fits whole. */
static int format_path(char out[WSISA_PATH_MAX], const char *fmt, va_list ap) {
  int n = vsnprintf(out, WSISA_PATH_MAX, fmt, ap);
  if (n < 0 || n >= WSISA_PATH_MAX) out[0] = '\0';
  return n;
}

int wsisa_path_fmt(char out[WSISA_PATH_MAX], const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = format_path(out, fmt, ap);
  va_end(ap);
  if (n >= 0 && n < WSISA_PATH_MAX) return 0;
  errno = n < 0 ? EINVAL : ENAMETOOLONG;
  return -1;
}

int wsisa_path_fmt_err(char out[WSISA_PATH_MAX], wsisa_err *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = format_path(out, fmt, ap);
  va_end(ap);
  if (n >= 0 && n < WSISA_PATH_MAX) return 0;
  if (n < 0) { /* an encoding error: no path to name */
    int rc = wsisa_error(e, WSISA_EIO, "%s: a path that cannot be formatted", fmt);
    errno = EINVAL;
    return rc;
  }
  /* the whole path again, to name it by its start (the folder it was meant
   * for) and its end (the file) */
  char *whole = malloc((size_t)n + 1);
  if (whole) {
    va_start(ap, fmt);
    vsnprintf(whole, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  enum { SHOWN = 300 }; /* bytes of each end: the path is longer than both */
  if (!whole)
    wsisa_error(e, WSISA_EUSAGE, "a path of %d bytes: path too long (at most %d)", n,
                WSISA_PATH_MAX - 1);
  else
    wsisa_error(e, WSISA_EUSAGE, "%.*s...%s: path too long (%d bytes, at most %d)", SHOWN, whole,
                whole + n - SHOWN, n, WSISA_PATH_MAX - 1);
  free(whole);
  errno = ENAMETOOLONG;
  return WSISA_EUSAGE;
}
