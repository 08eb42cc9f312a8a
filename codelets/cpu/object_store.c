/* The object store of one tile (docs/architecture.md, object reuse): results of
 * level 6 and 7 per object group, under a key that holds everything they
 * depend on, so a result taken from it is the one computing would give. Its
 * bytes are bounded; when full, the least recently used entries go. Several
 * workers read and fill it at once: one mutex, held only to look up, copy
 * and link, never while anything is computed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"

typedef struct entry {
  struct entry *chain;      /* next in its hash bucket */
  struct entry *newer, *older; /* recency list */
  uint64_t hash;
  uint32_t key_len, value_len;
  unsigned char bytes[];    /* the key, then the value */
} entry;

struct wsisa_object_store {
  pthread_mutex_t lock;
  entry **table;
  size_t nbuckets, count;
  entry *newest, *oldest;
  uint64_t capacity, bytes;
  wsisa_object_tally tally;
};

/* What an entry costs: its bytes, its header and its bucket slot. */
static uint64_t entry_cost(uint32_t key_len, uint32_t value_len) {
  return sizeof(entry) + sizeof(entry *) + key_len + value_len;
}

/* 64-bit hash of a byte string, eight bytes at a time (the multiply-xorshift
 * mix of splitmix64 on each word). Only a bucket index: keys are compared in
 * full. */
uint64_t wsisa_object_hash(const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
  for (; len >= 8; p += 8, len -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  memcpy(&tail, p, len);
  h = (h ^ tail) * 0x94D049BB133111EBULL;
  return h ^ (h >> 29);
}

int wsisa_object_store_new(uint64_t capacity, wsisa_object_store **out) {
  *out = NULL;
  wsisa_object_store *s = calloc(1, sizeof *s);
  if (!s) return WSISA_ENOMEM;
  s->nbuckets = 1024;
  s->table = calloc(s->nbuckets, sizeof *s->table);
  if (!s->table) {
    free(s);
    return WSISA_ENOMEM;
  }
  pthread_mutex_init(&s->lock, NULL);
  s->capacity = capacity;
  *out = s;
  return 0;
}

void wsisa_object_store_free(wsisa_object_store *s) {
  if (!s) return;
  for (entry *e = s->newest, *next; e; e = next) {
    next = e->older;
    free(e);
  }
  free(s->table);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

static entry **slot_of(wsisa_object_store *s, uint64_t hash, const void *key, size_t key_len) {
  entry **at = &s->table[hash & (s->nbuckets - 1)];
  for (; *at; at = &(*at)->chain)
    if ((*at)->hash == hash && (*at)->key_len == key_len && !memcmp((*at)->bytes, key, key_len))
      return at;
  return at;
}

static void unlink_recency(wsisa_object_store *s, entry *e) {
  if (e->newer) e->newer->older = e->older;
  else s->newest = e->older;
  if (e->older) e->older->newer = e->newer;
  else s->oldest = e->newer;
  e->newer = e->older = NULL;
}

static void link_newest(wsisa_object_store *s, entry *e) {
  e->older = s->newest;
  e->newer = NULL;
  if (s->newest) s->newest->newer = e;
  s->newest = e;
  if (!s->oldest) s->oldest = e;
}

int wsisa_object_store_get(wsisa_object_store *s, const void *key, size_t key_len,
                           uint64_t hash, void *value, size_t cap, size_t *value_len) {
  pthread_mutex_lock(&s->lock);
  entry *e = *slot_of(s, hash, key, key_len);
  int hit = e && e->value_len <= cap;
  if (hit) {
    *value_len = e->value_len;
    memcpy(value, e->bytes + e->key_len, e->value_len);
    unlink_recency(s, e);
    link_newest(s, e);
  }
  pthread_mutex_unlock(&s->lock);
  return hit;
}

/* Twice the buckets when there are more entries than buckets. */
static void grow_table(wsisa_object_store *s) {
  size_t n = 2 * s->nbuckets;
  entry **t = calloc(n, sizeof *t);
  if (!t) return; /* longer chains, same results */
  for (size_t b = 0; b < s->nbuckets; b++)
    for (entry *e = s->table[b], *next; e; e = next) {
      next = e->chain;
      e->chain = t[e->hash & (n - 1)];
      t[e->hash & (n - 1)] = e;
    }
  free(s->table);
  s->table = t;
  s->nbuckets = n;
}

static void evict_oldest(wsisa_object_store *s) {
  entry *e = s->oldest;
  entry **at = &s->table[e->hash & (s->nbuckets - 1)];
  while (*at != e) at = &(*at)->chain;
  *at = e->chain;
  unlink_recency(s, e);
  s->bytes -= entry_cost(e->key_len, e->value_len);
  s->count--;
  s->tally.evictions++;
  free(e);
}

int wsisa_object_store_put(wsisa_object_store *s, const void *key, size_t key_len,
                           uint64_t hash, const void *value, size_t value_len) {
  if (key_len > UINT32_MAX || value_len > UINT32_MAX) return 0;
  const uint64_t cost = entry_cost((uint32_t)key_len, (uint32_t)value_len);
  if (cost > s->capacity) return 0; /* would not fit even alone: not kept */
  entry *e = malloc(sizeof *e + key_len + value_len);
  if (!e) return WSISA_ENOMEM;
  e->hash = hash;
  e->key_len = (uint32_t)key_len;
  e->value_len = (uint32_t)value_len;
  memcpy(e->bytes, key, key_len);
  memcpy(e->bytes + key_len, value, value_len);
  pthread_mutex_lock(&s->lock);
  entry **at = slot_of(s, hash, key, key_len);
  if (*at) {
    /* another worker stored the same group meanwhile: the same bytes */
    pthread_mutex_unlock(&s->lock);
    free(e);
    return 0;
  }
  while (s->bytes + cost > s->capacity) evict_oldest(s);
  /* the evictions may have emptied the slot's chain: look again */
  at = slot_of(s, hash, key, key_len);
  e->chain = NULL;
  *at = e;
  link_newest(s, e);
  s->bytes += cost;
  s->count++;
  if (s->bytes > s->tally.bytes_peak) s->tally.bytes_peak = s->bytes;
  if (s->count > s->nbuckets) grow_table(s);
  pthread_mutex_unlock(&s->lock);
  return 0;
}

void wsisa_object_store_each(wsisa_object_store *s, wsisa_object_visit visit, void *ctx) {
  pthread_mutex_lock(&s->lock);
  for (entry *e = s->newest; e; e = e->older) visit(e->bytes, e->key_len, e->hash, ctx);
  pthread_mutex_unlock(&s->lock);
}

int wsisa_object_store_has(wsisa_object_store *s, const void *key, size_t key_len, uint64_t hash) {
  pthread_mutex_lock(&s->lock);
  int held = *slot_of(s, hash, key, key_len) != NULL;
  pthread_mutex_unlock(&s->lock);
  return held;
}

void wsisa_object_store_count(wsisa_object_store *s, const wsisa_object_tally *add) {
  pthread_mutex_lock(&s->lock);
  for (int l = 0; l < 2; l++) {
    s->tally.seen[l] += add->seen[l];
    s->tally.reused[l] += add->reused[l];
    s->tally.area[l] += add->area[l];
    s->tally.area_reused[l] += add->area_reused[l];
  }
  pthread_mutex_unlock(&s->lock);
}

void wsisa_object_store_tally(wsisa_object_store *s, wsisa_object_tally *out) {
  pthread_mutex_lock(&s->lock);
  *out = s->tally;
  out->bytes = s->bytes;
  out->entries = s->count;
  pthread_mutex_unlock(&s->lock);
}
