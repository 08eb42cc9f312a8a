/* StarPU's buffers in main memory kept for reuse. StarPU 1.3 (built without
 * its allocation cache) frees an intermediate's buffer when the handle is
 * unregistered and allocates the next one afresh: a large block comes from
 * mmap and goes back with munmap, so every 4 KiB of every intermediate costs
 * a page fault and a cleared page on its first write (a third of the CPU
 * time of `wsisa segment` on a 4096² tile went to the kernel). One tile's
 * intermediates come in a few sizes (a plane of u8, of f32, RGB), so a freed
 * block is kept, up to a bound (the oldest go first), and handed to the next
 * allocation of exactly its size; a new block's pages are made present in
 * one call rather than one fault each. StarPU's buffers promise no contents:
 * a kernel writes its outputs whole (the identity tests compare every
 * output). */
#define _GNU_SOURCE /* madvise, malloc_usable_size */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <starpu.h>

#include "core/core_private.h"

/* Blocks below this size go straight back to the C library. */
#define KEPT_MIN_BYTES ((size_t)1 << 20)
#define KEPT_MAX 64
/* StarPU aligns to what its OpenCL devices ask (a few hundred bytes at
 * most); a page covers them all. */
#define BUFFER_ALIGN 4096

typedef struct kept_block {
  void *p;
  size_t size;
} kept_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* oldest first */
static kept_block kept[KEPT_MAX];
static int nkept;
static size_t kept_bytes, kept_limit;

static void forget(int i) {
  kept_bytes -= kept[i].size;
  memmove(kept + i, kept + i + 1, (size_t)(nkept - i - 1) * sizeof *kept);
  nkept--;
}

static int buffer_alloc(unsigned node, void **out, size_t size, int flags) {
  (void)node, (void)flags;
  if (size >= KEPT_MIN_BYTES) {
    pthread_mutex_lock(&lock);
    /* the block freed last first: its pages are the likeliest in cache */
    for (int i = nkept - 1; i >= 0; i--) {
      if (kept[i].size != size) continue;
      *out = kept[i].p;
      forget(i);
      pthread_mutex_unlock(&lock);
      return 0;
    }
    pthread_mutex_unlock(&lock);
  }
  void *p = NULL;
  if (posix_memalign(&p, BUFFER_ALIGN, size ? size : 1)) return -ENOMEM;
#ifdef MADV_POPULATE_WRITE
  /* whole pages inside the block; a kernel without it refuses, harmlessly */
  if (size >= KEPT_MIN_BYTES) madvise(p, size / BUFFER_ALIGN * BUFFER_ALIGN, MADV_POPULATE_WRITE);
#endif
  *out = p;
  return 0;
}

static int buffer_free(unsigned node, void *p, size_t size, int flags) {
  (void)node, (void)flags;
  if (!p) return 0;
  void *drop[KEPT_MAX];
  int ndrop = 0;
  /* kept under the size StarPU names, which the block must hold */
  if (size >= KEPT_MIN_BYTES && malloc_usable_size(p) >= size) {
    pthread_mutex_lock(&lock);
    if (size <= kept_limit) {
      while (nkept && (nkept == KEPT_MAX || kept_bytes + size > kept_limit)) {
        drop[ndrop++] = kept[0].p;
        forget(0);
      }
      kept[nkept++] = (kept_block){p, size};
      kept_bytes += size;
      p = NULL;
    }
    pthread_mutex_unlock(&lock);
  }
  for (int i = 0; i < ndrop; i++) free(drop[i]);
  free(p);
  return 0;
}

void wsisa__buffers_keep(size_t limit) {
  pthread_mutex_lock(&lock);
  kept_limit = limit;
  pthread_mutex_unlock(&lock);
  starpu_malloc_set_hooks(buffer_alloc, buffer_free);
}

void wsisa__buffers_release(void) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nkept; i++) free(kept[i].p);
  nkept = 0;
  kept_bytes = kept_limit = 0;
  pthread_mutex_unlock(&lock);
}

/* The C library's allocator, told once per process to keep what the
 * process frees. By default glibc hands a block of 128 KiB and more back to
 * the kernel when it is freed (munmap), raises that bound as it sees larger
 * blocks freed, and trims its heaps' free tops of over twice the bound: a
 * run's intermediates, freed and allocated again all through it, are
 * written to fresh pages again and again (a page fault and a cleared page
 * for every 4 KiB). With blocks up to 32 MiB (glibc's largest bound) taken
 * from the heaps and the heaps never trimmed, a freed block is reused; the
 * process's peak memory is the same, as a kept block is one it held before.
 * A user's own setting (GLIBC_TUNABLES's glibc.malloc.*, MALLOC_*_) wins,
 * and WSISA_MALLOC=libc leaves the allocator as it is. */
#define KEEP_MMAP_THRESHOLD (32 << 20)
#define KEEP_TRIM_THRESHOLD INT_MAX

static char allocator_how[160];

void wsisa__malloc_keep(int keep, const char *user) {
  pthread_mutex_lock(&lock);
  if (!allocator_how[0]) {
    if (!keep)
      snprintf(allocator_how, sizeof allocator_how, "the C library's defaults (WSISA_MALLOC=libc)");
    else if (user)
      snprintf(allocator_how, sizeof allocator_how, "the C library's, as %s sets it", user);
    else if (mallopt(M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD) && mallopt(M_TRIM_THRESHOLD, KEEP_TRIM_THRESHOLD))
      snprintf(allocator_how, sizeof allocator_how,
               "freed memory kept for reuse (blocks up to %d MiB from the heaps, never trimmed)",
               KEEP_MMAP_THRESHOLD >> 20);
    else
      /* an allocator other than glibc's (a sanitizer's) declines mallopt */
      snprintf(allocator_how, sizeof allocator_how, "the allocator's own (it refused the setting)");
  }
  pthread_mutex_unlock(&lock);
}

/* Set before StarPU starts its threads, read after. */
const char *wsisa_runtime_allocator(void) { return allocator_how; }
