/* Inputs read whole: only a regular file is opened for reading (a FIFO would
 * block the open, a device never ends), a text file over its bound or with a
 * zero byte is refused at once, and a read gives way to SIGINT or SIGTERM
 * instead of holding a run that was told to stop. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static int (*stop_asked)(void);

void wsisa_text_read_stop(int (*stop)(void)) { stop_asked = stop; }

int wsisa_text_read_stopped(void) { return stop_asked && stop_asked(); }

/* What a path that is not a regular file is, for its message. */
static const char *kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a plain file";
}

static int refuse_kind(const char *path, mode_t mode, wsisa_err *e) {
  return wsisa_error(e, WSISA_EIO, "%s: %s, not a regular file", path, kind_name(mode));
}

int wsisa_file_check(const char *path, wsisa_err *e) {
  struct stat st;
  if (stat(path, &st) != 0) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  return S_ISREG(st.st_mode) ? 0 : refuse_kind(path, st.st_mode, e);
}

int wsisa_file_open(const char *path, int *fd_out, wsisa_err *e) {
  *fd_out = -1;
  int rc = wsisa_file_check(path, e);
  if (rc) return rc;
  /* non-blocking, so a path swapped for a FIFO since the check cannot hold
   * the open; the kind is checked again on what was opened */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  struct stat st;
  int flags;
  if (fstat(fd, &st) != 0 || (flags = fcntl(fd, F_GETFL)) < 0 ||
      fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  else if (!S_ISREG(st.st_mode)) rc = refuse_kind(path, st.st_mode, e);
  if (rc) {
    close(fd);
    return rc;
  }
  *fd_out = fd;
  return 0;
}

int wsisa_file_fopen(const char *path, FILE **out, wsisa_err *e) {
  *out = NULL;
  int fd;
  int rc = wsisa_file_open(path, &fd, e);
  if (rc) return rc;
  if (!(*out = fdopen(fd, "rb"))) {
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
    close(fd);
  }
  return rc;
}

int wsisa_text_read(const char *path, uint64_t limit, const char *what, char **text,
                    size_t *len, wsisa_err *e) {
  *text = NULL;
  if (len) *len = 0;
  int fd;
  int rc = wsisa_file_open(path, &fd, e);
  if (rc) return rc;
  struct stat st;
  char size[32];
  if (fstat(fd, &st) != 0) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  else if ((uint64_t)st.st_size > limit)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: larger than %s, the most %s may hold", path,
                     wsisa_bytes_text((double)limit, size, sizeof size), what);
  size_t cap = !rc ? (size_t)st.st_size + 1 : 1, n = 0;
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
