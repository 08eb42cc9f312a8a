/* Logging to stderr; the level comes from WSISA_LOG, read once. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

static int log_level = -1;
static int log_rank = -1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static int parse_level(const char *s) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  if (!s || !*s) return WSISA_LOG_WARN;
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) return i;
  if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0') return s[0] - '0';
  return WSISA_LOG_WARN;
}

int wsisa_log_enabled(wsisa_log_level level) {
  if (log_level < 0) {
    wsisa_env env;
    wsisa_env_read(&env);
    log_level = parse_level(env.log);
  }
  return (int)level <= log_level;
}

void wsisa_log_set_rank(int rank) { log_rank = rank; }

/* "2026-11-24T02:03:24+0000 wsisa[rank] tag domain: " into line; its length. */
static size_t prefix(char *line, size_t cap, const char *tag, const char *domain) {
  char stamp[40] = "";
  struct timespec ts;
  struct tm tm;
  if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && localtime_r(&ts.tv_sec, &tm))
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z ", &tm);
  int n;
  if (log_rank >= 0)
    n = snprintf(line, cap, "%swsisa[%d] %s %s: ", stamp, log_rank, tag, domain);
  else
    n = snprintf(line, cap, "%swsisa %s %s: ", stamp, tag, domain);
  return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

static void emit(const char *tag, const char *domain, const char *fmt, va_list ap) {
  char line[2048];
  size_t n = prefix(line, sizeof line, tag, domain);
  vsnprintf(line + n, sizeof line - n, fmt, ap);
  pthread_mutex_lock(&log_lock);
  fprintf(stderr, "%s\n", line);
  pthread_mutex_unlock(&log_lock);
}

void wsisa_log(wsisa_log_level level, const char *domain, const char *fmt, ...) {
  static const char *const tags[] = {"error", "warn", "info", "debug"};
  if (!wsisa_log_enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  emit(tags[level], domain, fmt, ap);
  va_end(ap);
}

void wsisa_log_progress(const char *fmt, ...) {
  if (!wsisa_log_enabled(WSISA_LOG_WARN)) return;
  va_list ap;
  va_start(ap, fmt);
  emit("info", "progress", fmt, ap);
  va_end(ap);
}
