/* The error convention: the first error of a context sticks, with a message a
 * user can act on; codes map to exit statuses in one place. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

int wsisa_error(wsisa_err *e, int code, const char *fmt, ...) {
  if (e && e->code == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
  }
  return code;
}

int wsisa_error_where(wsisa_err *e, int code, const char *path) {
  size_t n = path ? strlen(path) : 0;
  char cwd[sizeof e->msg];
  if (!e || !e->code || !n || path[0] == '/' || strncmp(e->msg, path, n) != 0 ||
      e->msg[n] != ':' || !getcwd(cwd, sizeof cwd))
    return code;
  /* cut to the message's size, which the path alone could fill */
  char text[3 * sizeof e->msg];
  snprintf(text, sizeof text, "%s (from %s)%s", path, cwd, e->msg + n);
  snprintf(e->msg, sizeof e->msg, "%.*s", (int)sizeof e->msg - 1, text);
  return code;
}

void wsisa_err_clear(wsisa_err *e) {
  e->code = 0;
  e->msg[0] = '\0';
}

int wsisa_exit_code(int code) {
  if (code == 0) return 0;
  return code == WSISA_EUSAGE ? 2 : 1;
}

const char *wsisa_strerror(int code) {
  switch (code) {
    case WSISA_OK: return "success";
    case WSISA_EUSAGE: return "invalid usage";
    case WSISA_EIO: return "input/output error";
    case WSISA_EFORMAT: return "unreadable data";
    case WSISA_ENOMEM: return "out of memory";
    case WSISA_ERUNTIME: return "runtime failure";
    case WSISA_EINTERRUPTED: return "interrupted";
    default: return "internal error";
  }
}
