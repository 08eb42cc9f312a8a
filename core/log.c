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

void wsisa_log(wsisa_log_level level, const char *domain, const char *fmt, ...) {
  static const char *const tags[] = {"error", "warn", "info", "debug"};
  if (!wsisa_log_enabled(level)) return;
  char line[2048];
  int n;
  if (log_rank >= 0)
    n = snprintf(line, sizeof line, "wsisa[%d] %s %s: ", log_rank, tags[level], domain);
  else
    n = snprintf(line, sizeof line, "wsisa %s %s: ", tags[level], domain);
  if (n < 0 || (size_t)n >= sizeof line) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&log_lock);
  fprintf(stderr, "%s\n", line);
  pthread_mutex_unlock(&log_lock);
}
