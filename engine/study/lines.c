/* Checked lines: each line of journal.csv and feature_values.csv ends with
 * its field count and the CRC-32 of what comes before, so a torn or damaged
 * line is never read as data; the CRC-32 also fingerprints a study's
 * annotation files. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/study/study_internal.h"

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib computes it. */
static uint32_t crc32_update(uint32_t crc, const char *p, size_t n) {
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ (unsigned char)p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t wsisa__crc32(const char *text, size_t len) { return crc32_update(0, text, len); }

uint32_t wsisa__crc32_more(uint32_t crc, const char *text, size_t len) {
  return crc32_update(crc, text, len);
}

int wsisa__line_put(FILE *f, const char *text, size_t len) {
  size_t fields = 3; /* the data's last field, the count and the checksum */
  for (size_t i = 0; i < len; i++) fields += text[i] == ',';
  char count[32];
  int n = snprintf(count, sizeof count, ",%zu", fields);
  uint32_t crc = crc32_update(crc32_update(0, text, len), count, (size_t)n);
  if (fwrite(text, 1, len, f) != len) return -1;
  return fprintf(f, "%s,%08" PRIx32 "\n", count, crc) < 0 ? -1 : 0;
}

/* Check one line (without its newline) in place: 0 and the data fields split
 * at commas, or a reason. */
static const char *line_check(char *line, size_t len, size_t nfields, char **fields) {
  char *last = NULL;
  for (size_t i = len; i-- > 0 && !last;)
    if (line[i] == ',') last = line + i;
  if (!last) return "no checksum";
  char *end;
  errno = 0;
  unsigned long crc = strtoul(last + 1, &end, 16);
  if (end != line + len || end - (last + 1) != 8 || errno) return "no checksum";
  if (wsisa__crc32(line, (size_t)(last - line)) != (uint32_t)crc)
    return "checksum does not match";
  *last = '\0';
  size_t n = 0;
  for (char *p = line;; n++) {
    char *comma = strchr(p, ',');
    if (n < nfields) fields[n] = p;
    if (!comma) break;
    *comma = '\0';
    p = comma + 1;
  }
  n++;
  /* the count is the line's own last data field */
  if (n != nfields - 1) return "wrong number of fields";
  errno = 0;
  unsigned long count = strtoul(fields[nfields - 2], &end, 10);
  if (*end || errno || count != nfields) return "wrong number of fields";
  return NULL;
}

int wsisa__lines_read(const char *path, const char *header, const wsisa__old_header *old,
                      size_t nfields, int repair, wsisa__line_fn take, void *ctx,
                      size_t *lines, size_t *torn, wsisa_err *e) {
  if (lines) *lines = 0;
  if (torn) *torn = 0;
  /* a regular file: a FIFO would block, a device (a link to /dev/zero) never ends */
  FILE *f;
  int frc = wsisa_file_fopen(path, &f, e);
  if (frc) return frc;
  char *line = NULL, **fields = calloc(nfields, sizeof *fields);
  size_t cap = 0, lineno = 0, bad_line = 0;
  off_t bad_at = 0;
  const char *bad_why = NULL;
  int rc = fields ? 0 : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (;;) {
    off_t at = ftello(f);
    ssize_t got = rc ? -1 : getline(&line, &cap, f);
    if (got < 0) break;
    lineno++;
    if (bad_why) {
      /* a bad line with more after it: not a kill's torn tail */
      rc = wsisa_error(e, WSISA_EFORMAT,
                       "%s:%zu: damaged line (%s) with lines after it: the file cannot be "
                       "trusted; run the study again into a new folder",
                       path, bad_line, bad_why);
      break;
    }
    int whole = line[got - 1] == '\n';
    size_t len = (size_t)got - whole;
    if (lineno == 1) {
      line[len] = '\0';
      const wsisa__old_header *was = old;
      while (was && was->header && strcmp(line, was->header) != 0) was++;
      if (was && was->header)
        rc = wsisa_error(e, WSISA_EFORMAT,
                         "%s: written by an earlier wsisa, whose lines carry no %s; this "
                         "version does not resume from it (run the study again into a new "
                         "folder)",
                         path, was->lacks);
      else if (!whole || strcmp(line, header) != 0)
        rc = wsisa_error(e, WSISA_EFORMAT, "%s:1: not the header this wsisa writes (%s)", path,
                         header);
      continue;
    }
    const char *why = whole ? line_check(line, len, nfields, fields) : "cut short";
    if (why) {
      bad_why = why, bad_line = lineno, bad_at = at;
      continue;
    }
    if (lines) (*lines)++;
    rc = take(ctx, fields, nfields - 2, lineno, e);
  }
  if (!rc && ferror(f)) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  if (!rc && lineno == 0)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: empty (not even its header)", path);
  fclose(f);
  free(line);
  free(fields);
  if (rc || !bad_why) return rc;
  if (torn) *torn = bad_line;
  if (!repair) return 0;
  /* the tail a kill or a full disk tore: cut off before anything is appended,
   * its unit runs again */
  if (truncate(path, bad_at) != 0)
    return wsisa_error(e, WSISA_EIO, "%s: cannot cut off its torn last line: %s", path,
                       strerror(errno));
  wsisa_log(WSISA_LOG_WARN, "run", "%s:%zu: last line %s: cut off, its unit runs again", path,
            bad_line, bad_why);
  return 0;
}

int wsisa__lines_open(const char *path, int fresh, const char *header, FILE **out, wsisa_err *e) {
  FILE *f = *out = fopen(path, fresh ? "w" : "a");
  if (!f) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  errno = 0;
  if (fresh) fprintf(f, "%s\n", header);
  int err = 0;
  if (fflush(f) != 0) err = errno ? errno : EIO;
  if (!err && fsync(fileno(f)) != 0) err = errno;
  return err ? wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(err)) : 0;
}
