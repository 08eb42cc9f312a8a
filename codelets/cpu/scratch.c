/* Per-thread scratch memory of the CPU kernels, kept from one call to the
 * next: StarPU runs one task at a time on a worker thread, and a fresh
 * allocation of a whole-tile temporary per task costs a page fault and a
 * cleared page for every 4 KiB of it. A thread's blocks go at its exit (StarPU
 * joins its workers in starpu_shutdown) or on wsisa_cpu_scratch_release. */
#include <pthread.h>
#include <stdlib.h>

#include "codelets/cpu/cpu.h"

/* Blocks a thread keeps between calls, in total; what a call needs beyond
 * that is freed when the call ends (wsisa__scratch_trim). Enough for the
 * reconstruction planes of a 4096² f32 tile and the colour caches. */
#define KEEP_BYTES ((size_t)256 << 20)

typedef struct block {
  void *p;
  size_t size;
} block;

typedef struct thread_scratch {
  block slot[WSISA__SCRATCH_N];
} thread_scratch;

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void thread_free(void *arg) {
  thread_scratch *s = arg;
  for (int i = 0; i < WSISA__SCRATCH_N; i++) free(s->slot[i].p);
  free(s);
}

static void key_make(void) { key_ok = pthread_key_create(&key, thread_free) == 0; }

static thread_scratch *mine(int create) {
  pthread_once(&key_once, key_make);
  if (!key_ok) return NULL;
  thread_scratch *s = pthread_getspecific(key);
  if (!s && create) {
    s = calloc(1, sizeof *s);
    if (s && pthread_setspecific(key, s) != 0) {
      free(s);
      s = NULL;
    }
  }
  return s;
}

void *wsisa__scratch(wsisa__scratch_slot slot, size_t bytes) {
  thread_scratch *s = mine(1);
  if (!s) return NULL;
  if (bytes == 0) bytes = 1; /* NULL means out of memory */
  block *b = &s->slot[slot];
  if (b->size < bytes) {
    /* free first: the old contents are not wanted. calloc: a new block is
     * zeroed (fresh pages from the kernel need no memset), which the colour
     * caches take as empty */
    free(b->p);
    b->p = calloc(1, bytes);
    b->size = b->p ? bytes : 0;
  }
  return b->p;
}

void wsisa__scratch_adopt(wsisa__scratch_slot slot, void *p, size_t bytes) {
  thread_scratch *s = mine(1);
  if (!s) {
    free(p);
    return;
  }
  block *b = &s->slot[slot];
  if (b->p != p) free(b->p);
  b->p = p;
  b->size = p ? bytes : 0;
}

void *wsisa__scratch_take(wsisa__scratch_slot slot, size_t *bytes) {
  thread_scratch *s = mine(0);
  *bytes = 0;
  if (!s) return NULL;
  block *b = &s->slot[slot];
  void *p = b->p;
  *bytes = b->size;
  b->p = NULL;
  b->size = 0;
  return p;
}

void wsisa__scratch_trim(void) {
  thread_scratch *s = mine(0);
  if (!s) return;
  size_t total = 0;
  for (int i = 0; i < WSISA__SCRATCH_N; i++) total += s->slot[i].size;
  /* largest first: one tile-sized plane goes before the small caches */
  while (total > KEEP_BYTES) {
    int big = 0;
    for (int i = 1; i < WSISA__SCRATCH_N; i++)
      if (s->slot[i].size > s->slot[big].size) big = i;
    total -= s->slot[big].size;
    free(s->slot[big].p);
    s->slot[big] = (block){NULL, 0};
  }
}

void wsisa_cpu_scratch_release(void) {
  thread_scratch *s = mine(0);
  if (!s) return;
  pthread_setspecific(key, NULL);
  thread_free(s);
}
