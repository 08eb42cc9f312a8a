/* Whole text files read with a bound: a file that never ends (/dev/zero, a
 * pipe that keeps writing) or a binary one given as text is refused at once,
 * and a read gives way to SIGINT or SIGTERM instead of holding a run that was
 * told to stop. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static int (*stop_asked)(void);

void wsisa_text_read_stop(int (*stop)(void)) { stop_asked = stop; }

int wsisa_text_read(const char *path, uint64_t limit, const char *what, char **text,
                    size_t *len, wsisa_err *e) {
  *text = NULL;
  if (len) *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  struct stat st;
  char size[32];
  int rc = 0;
  if (fstat(fd, &st) != 0) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  else if (S_ISDIR(st.st_mode)) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(EISDIR));
  else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > limit)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: larger than %s, the most %s may hold", path,
                     wsisa_bytes_text((double)limit, size, sizeof size), what);
  size_t cap = S_ISREG(st.st_mode) && !rc ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
  char *buf = rc ? NULL : malloc(cap + 1);
  if (!rc && !buf) rc = wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
  while (!rc) {
    if (stop_asked && stop_asked())
      rc = wsisa_error(e, WSISA_EINTERRUPTED, "%s: interrupted while reading it; nothing written",
                       path);
    else if (n == cap) {
      /* grow, but never past the bound plus the byte that shows it is passed */
      size_t grow = cap > limit / 2 ? (size_t)limit + 1 : 2 * cap;
      char *g = grow > cap ? realloc(buf, grow + 1) : NULL;
      if (grow <= cap) rc = wsisa_error(e, WSISA_EFORMAT, "%s: longer than %s, the most %s may hold",
                                        path, wsisa_bytes_text((double)limit, size, sizeof size), what);
      else if (!g) rc = wsisa_error(e, WSISA_ENOMEM, "%s: out of memory", path);
      else buf = g, cap = grow;
    } else {
      size_t want = cap - n < (1 << 20) ? cap - n : 1 << 20;
      ssize_t got = read(fd, buf + n, want);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
      else if (got == 0) break;
      else if (memchr(buf + n, '\0', (size_t)got))
        rc = wsisa_error(e, WSISA_EFORMAT, "%s: not a text file (a zero byte at byte %zu): not %s",
                         path, n + (size_t)((char *)memchr(buf + n, '\0', (size_t)got) - (buf + n)),
                         what);
      else n += (size_t)got;
    }
  }
  close(fd);
  if (rc) {
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  *text = buf;
  if (len) *len = n;
  return 0;
}
