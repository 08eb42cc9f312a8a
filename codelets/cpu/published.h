/* The part of the CPU kernels' declarations that codelets/codelets.h
 * publishes: what callers of the codelets read or hold (the statistics and
 * feature-row layouts, the object store, the match fields and their metrics,
 * the stain constants) and the few host functions on them. No StarPU here:
 * the kernels (codelets/cpu/cpu.h) include it too. Outside codelets/, include
 * codelets/codelets.h, never this file. */
#ifndef WSISA_CODELETS_CPU_PUBLISHED_H
#define WSISA_CODELETS_CPU_PUBLISHED_H

#include <stddef.h>
#include <stdint.h>

/* ---- per-thread scratch ------------------------------------------------------ */
/* Free the calling thread's scratch now (a worker's goes at its exit anyway). */
void wsisa_cpu_scratch_release(void);

/* ---- pixel group ------------------------------------------------------------- */
/* Layout of the statistics vector: count, mean[3], std[3] (population). */
enum { WSISA_STATS_COUNT = 0, WSISA_STATS_MEAN = 1, WSISA_STATS_STD = 4, WSISA_STATS_N = 7 };

/* ---- object reuse ------------------------------------------------------------ */
/* The object store of one tile (codelets/cpu/object_store.c): results of
 * levels 6 and 7 per object group under keys holding everything they depend
 * on; at most `capacity` bytes, least recently used entries evicted first.
 * Thread-safe. */
typedef struct wsisa_object_store wsisa_object_store;
/* What a store, or one call of wsisa_cpu_separate / wsisa_cpu_final_size,
 * saw; [0] is level 6 (clusters), [1] level 7 (groups). */
typedef struct wsisa_object_tally {
  uint64_t seen[2];           /* units looked at */
  uint64_t reused[2];         /* units whose result came from the store */
  uint64_t area[2], area_reused[2]; /* the same in pixels of their crops */
  uint64_t evictions;         /* entries evicted to make room */
  uint64_t bytes, bytes_peak; /* held now, at most */
  uint64_t entries;           /* held now */
} wsisa_object_tally;
int wsisa_object_store_new(uint64_t capacity, wsisa_object_store **out);
void wsisa_object_store_free(wsisa_object_store *s);
uint64_t wsisa_object_hash(const void *data, size_t len);
/* 1 when key is held with a value of at most cap bytes, copied into value,
 * its length in *value_len; 0 otherwise. */
int wsisa_object_store_get(wsisa_object_store *s, const void *key, size_t key_len,
                           uint64_t hash, void *value, size_t cap, size_t *value_len);
/* Keep a copy of (key, value), evicting the least recently used entries as
 * needed; an entry larger than the capacity is not kept. WSISA_ENOMEM when no
 * memory is left (nothing kept). */
int wsisa_object_store_put(wsisa_object_store *s, const void *key, size_t key_len,
                           uint64_t hash, const void *value, size_t value_len);
/* Each key held, newest first, to visit (the store locked meanwhile: visit
 * must not call on it). */
typedef void (*wsisa_object_visit)(const void *key, size_t key_len, uint64_t hash, void *ctx);
void wsisa_object_store_each(wsisa_object_store *s, wsisa_object_visit visit, void *ctx);
/* 1 when key is held (its recency unchanged), else 0. */
int wsisa_object_store_has(wsisa_object_store *s, const void *key, size_t key_len, uint64_t hash);
/* The pixels of the units of levels 6 and 7 ([0], [1]) that `of` holds, in
 * `area`, and of those `in` does not hold, in `missing` (codelets/cpu/separate.c:
 * a unit's level and crop from its key; a store lacks none of its own). */
void wsisa_object_store_missing(wsisa_object_store *of, wsisa_object_store *in, uint64_t area[2],
                                uint64_t missing[2]);
/* Add a call's seen and reused (units and their pixels) to the store's tally. */
void wsisa_object_store_count(wsisa_object_store *s, const wsisa_object_tally *add);
/* The tally so far, with the bytes and entries held now. */
void wsisa_object_store_tally(wsisa_object_store *s, wsisa_object_tally *out);

/* ---- nucleus features -------------------------------------------------------- */
/* Columns of one nucleus's row (doubles), then WSISA_NF_STATS per channel.
 * Coordinates are in pixels of the label image, x = column, y = row, a pixel's
 * centre at its integer coordinates (scikit-image's regionprops convention). */
enum {
  WSISA_NF_LABEL, WSISA_NF_CENTROID_X, WSISA_NF_CENTROID_Y, WSISA_NF_BBOX_X,
  WSISA_NF_BBOX_Y, WSISA_NF_BBOX_W, WSISA_NF_BBOX_H, WSISA_NF_AREA, WSISA_NF_PERIMETER,
  WSISA_NF_EQUIV_DIAMETER, WSISA_NF_MAJOR_AXIS, WSISA_NF_MINOR_AXIS,
  WSISA_NF_ECCENTRICITY, WSISA_NF_ORIENTATION, WSISA_NF_CONVEX_AREA, WSISA_NF_SOLIDITY,
  WSISA_NF_SHAPE
};
/* Per channel: mean, population std, median (mean of the two middle values
 * for an even count), energy (mean of squares). */
enum { WSISA_NF_MEAN, WSISA_NF_STD, WSISA_NF_MEDIAN, WSISA_NF_ENERGY, WSISA_NF_STATS };
#define WSISA_NF_MAX_CHANNELS 16
#define WSISA_NF_ROW(nchannels) (WSISA_NF_SHAPE + WSISA_NF_STATS * (nchannels))
/* Column names: shape columns, then the statistic suffixes. */
extern const char *const wsisa_nf_shape_names[WSISA_NF_SHAPE];
extern const char *const wsisa_nf_stat_names[WSISA_NF_STATS];

/* ---- study metrics ----------------------------------------------------------- */
/* study metrics: object matching of run labels against reference labels
 * (both canonical i32; definitions: codelets/cpu/object_match.c). Its output
 * is one uint64 per field, integer sums over a tile that add up over tiles,
 * in any order, to the slide's; the same on every worker. */
typedef enum wsisa_match_field {
  WSISA_MATCH_DICE_REF,   /* Σ_G |G| · Dice(G, S*(G)), on the 1/WSISA_OBJECT_MATCH_ONE grid */
  WSISA_MATCH_DICE_RUN,   /* Σ_S |S| · Dice(G*(S), S), likewise */
  WSISA_MATCH_AREA_REF,   /* Σ_G |G|: the reference's object pixels */
  WSISA_MATCH_AREA_RUN,   /* Σ_S |S|: the run's */
  WSISA_MATCH_TP,         /* pairs matched one to one at IoU >= 0.5 */
  WSISA_MATCH_FP,         /* run objects in no match */
  WSISA_MATCH_FN,         /* reference objects in no match */
  WSISA_MATCH_AJI_INTER,  /* Σ_G |G ∩ S+(G)|, S+ the run object of largest IoU */
  WSISA_MATCH_AJI_UNION,  /* Σ_G |G ∪ S+(G)|, |G| when G overlaps nothing */
  WSISA_MATCH_AJI_UNUSED, /* Σ |S| over the run objects no G took as S+ */
  WSISA_MATCH_FIELDS
} wsisa_match_field;
#define WSISA_OBJECT_MATCH_ONE 1048576.0 /* 2^20 */
/* The metrics of summed fields (a tile's or a slide's). With nothing on
 * either side every metric is 1; with objects on one side only, 0. */
typedef struct wsisa_object_metrics {
  double object_dice; /* ½ (DICE_REF / AREA_REF + DICE_RUN / AREA_RUN) */
  double precision;   /* TP / (TP + FP) */
  double recall;      /* TP / (TP + FN) */
  double f1;          /* 2 TP / (2 TP + FP + FN) */
  double aji;         /* AJI_INTER / (AJI_UNION + AJI_UNUSED) */
} wsisa_object_metrics;
void wsisa_object_metrics_of(const uint64_t sums[WSISA_MATCH_FIELDS], wsisa_object_metrics *m);

/* ---- colour deconvolution ---------------------------------------------------- */
/* What both deconvolution kernels read: the optical density of each u8 level
 * (log10(255 / v), 6 for v = 0: skimage's 1e-6 floor) and the inverse of the
 * stain matrix, row-major, so concentration j = Σ_c od[v_c]·m[3c + j]. */
typedef struct wsisa_deconv_consts {
  float od[256];
  float m[9];
} wsisa_deconv_consts;
/* From stain rows H, E, residual (RGB optical densities of a unit amount):
 * WSISA_EUSAGE for a non-finite entry or a (nearly) singular matrix. */
int wsisa_cpu_deconv_setup(const float stains[9], wsisa_deconv_consts *k);

#endif
