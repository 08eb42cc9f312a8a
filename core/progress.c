/* Progress on long work: a redrawn bar with ETA on a terminal, otherwise one
 * plain log line every few seconds. Safe to advance from several threads.
 * Beside it the small helpers every room times and counts with: clocks, the
 * median of timings, an array grown by doubling. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

#define LINE_INTERVAL 5.0 /* seconds between log lines when not a terminal */

struct wsisa_progress {
  char label[64];
  uint64_t total, done;
  uint64_t base; /* done before this process began (a resume): not in the pace */
  double start, last_print;
  int tty, quiet;
  pthread_mutex_t lock;
};

int wsisa_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double wsisa_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, wsisa_compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void *wsisa_grow(void *p, size_t *cap, size_t need, size_t size, size_t first) {
  if (need <= *cap) return p;
  size_t n = *cap ? *cap : first;
  while (n < need) n *= 2;
  void *grown = realloc(p, n * size);
  if (grown) *cap = n;
  return grown;
}

double wsisa_clock_seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double wsisa_now(void) { return wsisa_clock_seconds(CLOCK_MONOTONIC); }

static void format_eta(double seconds, char *buf, size_t len) {
  if (seconds < 0 || seconds > 1e7) {
    snprintf(buf, len, "--:--");
    return;
  }
  long s = (long)(seconds + 0.5);
  if (s >= 3600)
    snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    snprintf(buf, len, "%02ld:%02ld", s / 60, s % 60);
}

static void draw(wsisa_progress *p, double t, int final) {
  double elapsed = t - p->start;
  double frac = p->total ? (double)p->done / (double)p->total : 1.0;
  const uint64_t here = p->done - p->base;
  double eta = here ? elapsed * (double)(p->total - p->done) / (double)here : -1;
  char eta_s[32];
  format_eta(final ? elapsed : eta, eta_s, sizeof eta_s);
  if (p->tty) {
    char bar[31];
    int filled = (int)(frac * 30.0);
    for (int i = 0; i < 30; i++) bar[i] = i < filled ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\r%s [%s] %llu/%llu %5.1f%% %s %s", p->label, bar,
            (unsigned long long)p->done, (unsigned long long)p->total,
            100.0 * frac, final ? "took" : "eta", eta_s);
    if (final) fputc('\n', stderr);
    fflush(stderr);
  } else {
    wsisa_log_progress("%s %llu/%llu (%.1f%%) %s %s", p->label,
              (unsigned long long)p->done, (unsigned long long)p->total,
              100.0 * frac, final ? "took" : "eta", eta_s);
  }
  p->last_print = t;
}

wsisa_progress *wsisa_progress_start(const char *label, uint64_t total) {
  wsisa_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  snprintf(p->label, sizeof p->label, "%s", label);
  p->total = total;
  p->start = p->last_print = wsisa_now();
  p->tty = isatty(STDERR_FILENO);
  p->quiet = !wsisa_log_enabled(WSISA_LOG_WARN);
  pthread_mutex_init(&p->lock, NULL);
  return p;
}

void wsisa_progress_advance(wsisa_progress *p, uint64_t done_increment) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->done += done_increment;
  if (p->done > p->total) p->done = p->total;
  double t = wsisa_now();
  double interval = p->tty ? 0.2 : LINE_INTERVAL;
  if (!p->quiet && t - p->last_print >= interval) draw(p, t, 0);
  pthread_mutex_unlock(&p->lock);
}

void wsisa_progress_resume(wsisa_progress *p, uint64_t done) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->done = p->base = done < p->total ? done : p->total;
  pthread_mutex_unlock(&p->lock);
}

void wsisa_progress_finish(wsisa_progress *p) {
  if (!p) return;
  double t = wsisa_now();
  /* A short job that never printed stays silent when not on a terminal. */
  if (!p->quiet && (p->tty || t - p->start >= LINE_INTERVAL)) draw(p, t, 1);
  pthread_mutex_destroy(&p->lock);
  free(p);
}
