/* `wsisa segment SLIDE --all`: every tissue tile of a slide (or the tiles a
 * user lists, or those inside a level-0 region) segmented with one parameter
 * set, as a study's tiles are read (a halo around each, the slide's colour
 * statistics computed once, the nuclei whose centroid lies in the tile kept
 * whole), through the unit queue: many tiles in flight on every StarPU worker
 * and on MPI ranks (engine/exec). Each tile's nuclei are journaled as its
 * unit ends; the slide's outputs are assembled from the journal at the end,
 * tile by tile, so memory stays bounded whatever the slide's size: one GeoJSON
 * FeatureCollection with the nuclei numbered across the slide, one features
 * CSV, a per-tile summary, a density map and the label image as a tiled
 * pyramidal TIFF. They appear together, or not at all.
 *
 * The work folder (beside the first output, or --work): request.json (what
 * is segmented, and the colour statistics), journal.csv (one checked line per
 * tile, flushed and synced as the unit ends, as `wsisa run`'s journal), and
 * nuclei.bin (each tile's record, synced before its line: its nuclei as spans
 * over the pixels read and their feature rows, with a CRC-32 the line holds).
 * Interrupted anyhow, the same command goes on from the tiles journaled and
 * ends with the same outputs; the folder goes once they are written. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/run/run_internal.h"
#include "io/csv.h"
#include "io/svg.h"

#define JOURNAL_HEADER "tile,nuclei,tissue,offset,bytes,record_crc32,fields,crc32"
#define JOURNAL_FIELDS 8
#define RECORD_MAGIC 0x314e5357u /* "WSN1" */



/* ---- the tiles ------------------------------------------------------------------ */

/* --tiles LIST: grid indices and ranges ("3,5,7-9"), sorted, each once. */
static int parse_tile_list(const char *text, size_t ntiles, size_t **out, size_t *n,
                           wsisa_err *e) {
  uint8_t *want = calloc(ntiles ? ntiles : 1, 1);
  if (!want) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  const char *p = text;
  int rc = 0;
  while (!rc) {
    char *end;
    errno = 0;
    unsigned long long a = strtoull(p, &end, 10), b = a;
    if (end == p || *p == '-' || *p == '+' || errno) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "--tiles %s: give grid indices and ranges, e.g. 3,5,7-9 (wsisa tiles "
                       "--json lists each tile's index)",
                       text);
      break;
    }
    p = end;
    if (*p == '-') {
      const char *q = p + 1;
      errno = 0;
      b = strtoull(q, &end, 10);
      if (end == q || *q == '-' || *q == '+' || errno || b < a) {
        rc = wsisa_error(e, WSISA_EUSAGE, "--tiles %s: a range a-b needs whole numbers a <= b",
                         text);
        break;
      }
      p = end;
    }
    if (b >= ntiles) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "--tiles %s: tile %llu is not in the slide's grid (%zu tiles, 0..%zu)",
                       text, b, ntiles, ntiles - 1);
      break;
    }
    for (unsigned long long i = a; i <= b; i++) want[i] = 1;
    if (!*p) break;
    if (*p != ',') {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "--tiles %s: give grid indices and ranges, e.g. 3,5,7-9", text);
      break;
    }
    p++;
  }
  size_t count = 0;
  for (size_t i = 0; i < ntiles; i++) count += want[i];
  *out = rc ? NULL : malloc((count ? count : 1) * sizeof **out);
  if (!rc && !*out) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) {
    *n = 0;
    for (size_t i = 0; i < ntiles; i++)
      if (want[i]) (*out)[(*n)++] = i;
  }
  free(want);
  return rc;
}

/* The tiles to segment: --tiles as listed; else the tissue tiles, within
 * --region when given. */
static int choose_tiles(wsisa__slide_run *s, wsisa_err *e) {
  const wsisa_slide_segment_request *r = s->r;
  const wsisa_grid *g = s->grid;
  size_t *idx = NULL, n = 0;
  int rc = 0;
  if (r->tiles) {
    rc = parse_tile_list(r->tiles, g->ntiles, &idx, &n, e);
  } else {
    if (!(idx = malloc((g->ntiles ? g->ntiles : 1) * sizeof *idx)))
      return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->ntiles; i++) {
      const wsisa_tile *t = &g->tiles[i];
      if (!t->tissue) continue;
      if (r->has_region &&
          !(t->level0.x < r->region[0] + r->region[2] && r->region[0] < t->level0.x + t->level0.width &&
            t->level0.y < r->region[1] + r->region[3] && r->region[1] < t->level0.y + t->level0.height))
        continue;
      idx[n++] = i;
    }
    if (!n)
      rc = r->has_region
               ? wsisa_error(e, WSISA_EUSAGE,
                             "--region %lld,%lld,%lld,%lld: no tissue tile of %s lies in it",
                             (long long)r->region[0], (long long)r->region[1],
                             (long long)r->region[2], (long long)r->region[3], r->slide)
               : wsisa_error(e, WSISA_EUSAGE, "%s: no tissue tile to segment (wsisa tiles shows "
                             "its tissue map; --tiles takes any)", r->slide);
  }
  if (rc) {
    free(idx);
    return rc;
  }
  s->n = n;
  s->tiles = calloc(n ? n : 1, sizeof *s->tiles);
  s->refs = calloc(n ? n : 1, sizeof *s->refs);
  s->chosen_at = malloc((g->ntiles ? g->ntiles : 1) * sizeof *s->chosen_at);
  if (!s->tiles || !s->refs || !s->chosen_at) {
    free(idx);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < g->ntiles; i++) s->chosen_at[i] = SIZE_MAX;
  for (size_t k = 0; k < n; k++) {
    const wsisa_tile *t = &g->tiles[idx[k]];
    s->tiles[k].index = idx[k];
    s->chosen_at[idx[k]] = k;
    s->refs[k] = (wsisa_tile_ref){.path = r->slide, .kind = WSISA_INPUT_SLIDE,
                                  .scale = g->scale, .x = t->x, .y = t->y, .width = t->width,
                                  .height = t->height, .level0 = t->level0};
  }
  free(idx);
  return 0;
}

/* ---- outputs -------------------------------------------------------------------- */

typedef struct output {
  const char *flag, *path;
  const char *const *exts;
} output;

static size_t outputs_of(const wsisa_slide_segment_request *r, output out[5]) {
  static const char *const geojson[] = {".geojson", ".json", NULL};
  static const char *const csv[] = {".csv", NULL};
  static const char *const svg[] = {".svg", NULL};
  static const char *const tiff[] = {".tif", ".tiff", NULL};
  const output all[5] = {{"--geojson", r->geojson, geojson},
                         {"--features", r->features, csv},
                         {"--summary", r->summary, csv},
                         {"--density", r->density, svg},
                         {"-o", r->labels, tiff}};
  size_t n = 0;
  for (int i = 0; i < 5; i++)
    if (all[i].path) out[n++] = all[i];
  return n;
}

/* Each output: its type, not the slide, not another output, and not a file
 * that exists unless --force. */
static int check_outputs(const wsisa_slide_segment_request *r, wsisa_err *e) {
  output out[5];
  size_t n = outputs_of(r, out);
  if (!n)
    return wsisa_error(e, WSISA_EUSAGE,
                       "--all: give at least one output (--geojson, --features, --summary, "
                       "--density, or -o LABELS.tif)");
  for (size_t i = 0; i < n; i++) {
    int rc = wsisa_output_type(out[i].flag, out[i].path, out[i].exts, e);
    if (!rc) rc = wsisa_output_check(out[i].flag, out[i].path, &r->slide, 1, e);
    if (rc) return rc;
    for (size_t j = 0; j < i; j++)
      if (strcmp(out[i].path, out[j].path) == 0 || wsisa_same_file(out[i].path, out[j].path))
        return wsisa_error(e, WSISA_EUSAGE, "%s %s: also given as %s", out[i].flag,
                           out[i].path, out[j].flag);
    struct stat st;
    if (!r->force && stat(out[i].path, &st) == 0 && S_ISREG(st.st_mode))
      return wsisa_error(e, WSISA_EUSAGE, "%s %s: exists (give --force to replace it)",
                         out[i].flag, out[i].path);
    char dir[WSISA_PATH_MAX];
    if ((rc = wsisa_path_fmt_err(dir, e, "%s", out[i].path))) return rc;
    char *slash = strrchr(dir, '/');
    const char *where = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
    if (access(where, W_OK) != 0)
      return wsisa_error(e, WSISA_EIO, "%s %s: cannot write in %s (%s)", out[i].flag,
                         out[i].path, where, strerror(errno));
  }
  return 0;
}

/* ---- what is segmented, and its folder ------------------------------------------ */

/* What a journal's tiles hold: the slide (its size and time), how it is
 * read, the tiles, the parameters and what is measured. A work folder of
 * another identity is never mixed in. */
static json_t *identity_of(const wsisa__slide_run *s) {
  const wsisa_slide_segment_request *r = s->r;
  struct stat st;
  memset(&st, 0, sizeof st);
  stat(r->slide, &st);
  const wsisa_scale *sc = &s->grid->scale;
  json_t *tiles = json_array(), *params = json_object();
  for (size_t k = 0; k < s->n; k++) json_array_append_new(tiles, json_integer((json_int_t)s->tiles[k].index));
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++)
    json_object_set_new(params, wsisa_seg_param_name(p), json_real(s->params[p]));
  return json_pack("{s:i, s:s, s:I, s:I, s:f, s:f, s:i, s:f, s:i, s:i, s:s, s:b, s:o, s:o}",
                   "format", 1, "slide", r->slide, "slide_bytes", (json_int_t)st.st_size,
                   "slide_mtime", (json_int_t)st.st_mtime, "mpp", sc->mpp, "target_mpp",
                   sc->target_mpp, "level", sc->level, "factor", sc->factor, "tile_size",
                   s->grid->tile_size, "halo", s->halo, "normalization",
                   !r->normalize ? "none" : r->tile_stats ? "tile" : "slide", "features",
                   r->features != NULL, "tiles", tiles, "parameters", params);
}

static int sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

static int open_store(wsisa__slide_run *s, int fresh, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc = wsisa__slide_work_path(s, "nuclei.bin", path, e);
  if (rc) return rc;
  s->store_fd = open(path, O_RDWR | O_CLOEXEC | (fresh ? O_CREAT | O_TRUNC : 0), 0644);
  if (s->store_fd < 0) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(s->store_fd, &st) != 0) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  s->store_end = (uint64_t)st.st_size;
  if ((rc = wsisa__slide_work_path(s, "journal.csv", path, e))) return rc;
  return wsisa__lines_open(path, fresh, JOURNAL_HEADER, &s->journal, e);
}

/* A new work folder, whole from the moment it exists: request.json and the
 * journal's header in a temporary folder beside it, renamed into place. */
static int create_work(wsisa__slide_run *s, wsisa_err *e) {
  char temp[WSISA_PATH_MAX], path[WSISA_PATH_MAX];
  int rc = wsisa_path_fmt_err(temp, e, "%s.tmp-XXXXXX", s->work);
  if (rc) return rc;
  if (!mkdtemp(temp))
    return wsisa_error(e, WSISA_EIO, "%s: cannot create a folder beside it (%s)", s->work,
                       strerror(errno));
  mode_t mask = umask(0);
  umask(mask);
  chmod(temp, 0777 & ~mask);
  json_t *stats = json_array();
  for (int i = 0; i < WSISA_STATS_N; i++) json_array_append_new(stats, json_real(s->stats[i]));
  json_t *req = json_pack("{s:O, s:b, s:o}", "identity", s->identity, "has_stats",
                          s->has_stats, "stats", stats);
  char *text = json_dumps(req, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
  json_decref(req);
  rc = wsisa_path_fmt_err(path, e, "%s/request.json", temp);
  if (!rc)
    rc = text ? wsisa_output_write(path, text, strlen(text), e)
              : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  free(text);
  char final[WSISA_PATH_MAX];
  snprintf(final, sizeof final, "%s", s->work);
  snprintf(s->work, sizeof s->work, "%s", temp);
  if (!rc) rc = wsisa__run_folder_lock(temp, 1, &s->lock_fd, e);
  if (!rc) rc = open_store(s, 1, e);
  if (!rc && sync_dir(temp) != 0) rc = wsisa_error(e, WSISA_EIO, "%s: %s", temp, strerror(errno));
  if (!rc && rename(temp, final) != 0)
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", final, strerror(errno));
  snprintf(s->work, sizeof s->work, "%s", final);
  if (rc) {
    if (s->journal) fclose(s->journal);
    if (s->store_fd >= 0) close(s->store_fd);
    s->journal = NULL, s->store_fd = -1;
    wsisa__run_folder_remove(temp);
    return rc;
  }
  s->created = 1;
  return 0;
}

/* A record read back whole: its CRC-32 the journal's, its head the line's. */
static int record_whole(const wsisa__slide_run *s, const wsisa__slide_tile *t) {
  if (t->bytes < WSISA__SLIDE_RECORD_HEAD || t->offset + t->bytes > s->store_end || t->bytes > (1ULL << 34))
    return 0;
  char *buf = malloc(t->bytes);
  if (!buf) return 0;
  int ok = pread(s->store_fd, buf, t->bytes, (off_t)t->offset) == (ssize_t)t->bytes &&
           wsisa__crc32(buf, t->bytes) == t->crc;
  if (ok) {
    uint32_t head[2];
    uint64_t v[6];
    memcpy(head, buf, sizeof head);
    memcpy(v, buf + sizeof head, sizeof v);
    ok = head[0] == RECORD_MAGIC && head[1] == 1 && v[0] == t->index && v[1] == t->nuclei &&
         v[2] == t->tissue;
  }
  free(buf);
  return ok;
}

typedef struct journal_reader {
  wsisa__slide_run *s;
  const char *path;
} journal_reader;

static int journal_take(void *ctx, char **f, size_t n, size_t lineno, wsisa_err *e) {
  journal_reader *jr = ctx;
  wsisa__slide_run *s = jr->s;
  unsigned long long v[6];
  for (size_t i = 0; i < 6 && i < n; i++) {
    char *end;
    errno = 0;
    v[i] = strtoull(f[i], &end, i == 5 ? 16 : 10);
    if (!f[i][0] || *end || errno || f[i][0] == '-')
      return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: field %zu '%s' is not a count", jr->path,
                         lineno, i + 1, f[i]);
  }
  const size_t at = v[0] < s->grid->ntiles ? s->chosen_at[v[0]] : SIZE_MAX;
  if (at == SIZE_MAX)
    return wsisa_error(e, WSISA_EFORMAT, "%s:%zu: tile %llu is not one this segmentation "
                       "chose (a damaged journal)", jr->path, lineno, v[0]);
  wsisa__slide_tile t = s->tiles[at];
  t.nuclei = v[1], t.tissue = v[2], t.offset = v[3], t.bytes = v[4], t.crc = (uint32_t)v[5];
  /* a line whose record is not whole proves nothing: the tile runs again */
  if (!record_whole(s, &t)) {
    wsisa_log(WSISA_LOG_WARN, "segment", "%s:%zu: tile %llu's record is not whole; it runs again",
              jr->path, lineno, v[0]);
    return 0;
  }
  t.have = 1;
  s->tiles[at] = t;
  return 0;
}

/* An existing work folder: ours (its identity), locked, its journal read
 * (a torn last line cut off) and every record proved. */
static int reopen_work(wsisa__slide_run *s, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  int rc = 0;
  if ((rc = wsisa__slide_work_path(s, "request.json", path, e))) return rc;
  json_error_t je;
  json_t *req = wsisa_file_check(path, NULL) == 0 ? json_load_file(path, 0, &je) : NULL;
  json_t *id = json_object_get(req, "identity"), *stats = json_object_get(req, "stats");
  if (!req || !json_is_object(id) || !json_is_array(stats) ||
      json_array_size(stats) != WSISA_STATS_N) {
    json_decref(req);
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: exists and is not the work folder of a `wsisa segment --all` "
                       "(remove it, or give another --work)",
                       s->work);
  }
  if (!json_equal(id, s->identity)) {
    json_decref(req);
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: holds the tiles of another segmentation (another slide, tiles, "
                       "parameters or reading); remove it to start over, or give another --work",
                       s->work);
  }
  /* ours: one writer at a time from here */
  if ((rc = wsisa__run_folder_lock(s->work, 1, &s->lock_fd, e))) {
    json_decref(req);
    return rc;
  }
  s->has_stats = json_is_true(json_object_get(req, "has_stats"));
  for (int i = 0; i < WSISA_STATS_N; i++)
    s->stats[i] = json_number_value(json_array_get(stats, (size_t)i));
  json_decref(req);
  if ((rc = open_store(s, 0, e))) return rc;
  if ((rc = wsisa__slide_work_path(s, "journal.csv", path, e))) return rc;
  journal_reader jr = {s, path};
  size_t lines = 0, torn = 0;
  fclose(s->journal);
  s->journal = NULL;
  rc = wsisa__lines_read(path, JOURNAL_HEADER, NULL, JOURNAL_FIELDS, 1, journal_take, &jr, &lines,
                         &torn, e);
  if (!rc) {
    s->journal = fopen(path, "a");
    if (!s->journal) rc = wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  }
  for (size_t k = 0; k < s->n; k++) s->done_before += s->tiles[k].have;
  return rc;
}

/* ---- the units ----------------------------------------------------------------- */

/* A finished tile: its record appended and synced, then its journal line. */
static int on_tile(void *ctx, size_t tile, size_t bucket, const size_t *runs,
                   const wsisa_counts *counts, size_t n, wsisa_err *e) {
  (void)bucket, (void)runs;
  wsisa__slide_run *s = ctx;
  if (n != 1 || tile >= s->n)
    return wsisa_error(e, WSISA_EINTERNAL, "tile %zu came back with %zu runs", tile, n);
  const wsisa_counts *c = &counts[0];
  wsisa__slide_tile *t = &s->tiles[tile];
  const uint64_t nrows = c->features ? c->nuclei : 0;
  const uint64_t ncols = c->features ? (uint64_t)c->feature_cols : 0;
  if (s->r->features && c->nuclei && !c->features)
    return wsisa_error(e, WSISA_EINTERNAL, "tile %zu came back without its features", t->index);
  const size_t span_bytes = c->nspans * WSISA_SPAN_FIELDS * sizeof(uint32_t);
  const size_t row_bytes = nrows * ncols * sizeof(double);
  const size_t bytes = WSISA__SLIDE_RECORD_HEAD + span_bytes + row_bytes;
  char *buf = malloc(bytes);
  if (!buf) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  const uint32_t head[2] = {RECORD_MAGIC, 1};
  const uint64_t v[6] = {t->index, c->nuclei, c->tissue, c->nspans, nrows, ncols};
  memcpy(buf, head, sizeof head);
  memcpy(buf + sizeof head, v, sizeof v);
  if (span_bytes) memcpy(buf + WSISA__SLIDE_RECORD_HEAD, c->spans, span_bytes);
  if (row_bytes) memcpy(buf + WSISA__SLIDE_RECORD_HEAD + span_bytes, c->features, row_bytes);
  const uint32_t crc = wsisa__crc32(buf, bytes);
  char path[WSISA_PATH_MAX]; /* for messages: opened from it, so it fits */
  wsisa__slide_work_path(s, "nuclei.bin", path, NULL);
  ssize_t wrote = pwrite(s->store_fd, buf, bytes, (off_t)s->store_end);
  free(buf);
  if (wrote != (ssize_t)bytes || fsync(s->store_fd) != 0)
    return wsisa_error(e, WSISA_EIO, "%s: %s", path, wrote < 0 || wrote == (ssize_t)bytes
                                                         ? strerror(errno)
                                                         : "short write");
  t->offset = s->store_end, t->bytes = bytes, t->crc = crc;
  t->nuclei = c->nuclei, t->tissue = c->tissue;
  s->store_end += bytes;
  char line[256];
  int len = snprintf(line, sizeof line, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                     ",%08x", t->index, t->nuclei, t->tissue, t->offset, t->bytes, crc);
  errno = 0;
  wsisa__line_put(s->journal, line, (size_t)len);
  int err = 0;
  if (fflush(s->journal) != 0 || ferror(s->journal)) err = errno ? errno : EIO;
  if (!err && fsync(fileno(s->journal)) != 0) err = errno;
  wsisa__slide_work_path(s, "journal.csv", path, NULL);
  if (err) return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(err));
  t->have = 1;
  s->journaled++;
  return 0;
}

static int run_units(wsisa__slide_run *s, wsisa_err *e) {
  uint8_t *done = malloc(s->n ? s->n : 1);
  if (!done) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  size_t todo = 0;
  for (size_t k = 0; k < s->n; k++) {
    done[k] = (uint8_t)s->tiles[k].have;
    todo += !done[k];
    s->refs[k].has_stats = s->has_stats;
    memcpy(s->refs[k].stats, s->stats, sizeof s->stats);
  }
  uint64_t key[WSISA_SEG_LEVELS];
  int level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = wsisa_seg_param_level(p);
  wsisa_reuse_buckets *buckets = NULL;
  int rc = wsisa_workflow_keys(s->params, 1, WSISA_SEG_NPARAMS, level, key);
  if (!rc) rc = wsisa_plan_singletons(key, 1, &buckets);
  if (rc) {
    free(done);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  /* one run: nothing to share between runs, so no object store */
  /* a unit per tile: as many tiles open as units in flight, so every worker
   * has a tile of its own */
  wsisa_exec_opts eo = {.normalize = s->r->normalize, .share_tile_stage = 1,
                        .features = s->r->features != NULL, .halo = s->halo,
                        .placement = WSISA_PLACEMENT_UNIT, .nuclei_out = 1,
                        .open_tiles = -1};
  uint64_t limit = 0;
  eo.active_paths = wsisa_exec_active_paths(0, wsisa_memory_available(), wsisa_rss_now(), &limit,
                                            s->refs, s->n, &eo, NULL);
  if (!eo.active_paths) eo.active_paths = 1;
  if (s->done_before)
    fprintf(stderr, "wsisa segment: going on from %zu of %zu tiles journaled in %s\n",
            s->done_before, s->n, s->work);
  wsisa_exec_stats st;
  memset(&st, 0, sizeof st);
  if (todo)
    rc = wsisa_units_run(s->refs, s->n, s->params, buckets, done, &eo, 0, 0, on_tile, s, &st, e);
  if (!rc && st.placed_by_unit)
    wsisa_log(WSISA_LOG_INFO, "segment", "tiles on CPU workers %llu, on OpenCL workers %llu",
              (unsigned long long)st.units_on[WSISA_KIND_CPU],
              (unsigned long long)st.units_on[WSISA_KIND_OPENCL]);
  wsisa_reuse_buckets_free(buckets);
  free(done);
  if (rc == WSISA_EINTERRUPTED)
    rc = wsisa_error(e, WSISA_EINTERRUPTED,
                     "interrupted after %zu of %zu tiles; the same command goes on from them "
                     "(journaled in %s)",
                     s->done_before + s->journaled, s->n, s->work);
  return rc;
}

/* ---- the whole command ------------------------------------------------------------ */

/* The slide, its reading, the tiles, the stain and the outputs: everything
 * that can be refused, before any work. */
static int prepare(wsisa__slide_run *s, wsisa_err *e) {
  const wsisa_slide_segment_request *r = s->r;
  wsisa_input *slide = NULL;
  wsisa_scale scale;
  int rc = check_outputs(r, e);
  if (!rc) rc = wsisa_input_open(r->slide, WSISA_INPUT_SLIDE, &slide, e);
  if (rc) return rc;
  if (r->tile_size < 16 || r->tile_size > (1L << 16))
    rc = wsisa_error(e, WSISA_EUSAGE, "--tile-size %ld: give 16..%ld target pixels", r->tile_size,
                     1L << 16);
  wsisa_input_level0(slide, &s->width0, &s->height0);
  if (!rc) rc = wsisa_input_scale(slide, r->mpp, r->target_mpp, -1, &scale, e);
  if (!rc) rc = wsisa_input_grid(slide, &scale, (int)r->tile_size, 0, &s->grid, e);
  if (!rc && r->has_region &&
      (r->region[2] <= 0 || r->region[3] <= 0 || r->region[0] < 0 || r->region[1] < 0 ||
       r->region[0] > s->width0 - r->region[2] || r->region[1] > s->height0 - r->region[3]))
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "--region %lld,%lld,%lld,%lld: outside level 0 of %s (%lldx%lld; regions "
                     "are in level-0 pixels)",
                     (long long)r->region[0], (long long)r->region[1], (long long)r->region[2],
                     (long long)r->region[3], r->slide, (long long)s->width0,
                     (long long)s->height0);
  if (!rc) rc = choose_tiles(s, e);
  /* the parameters are tuned for bright-field H&E: refused before any work */
  if (!rc && r->stain_check) {
    wsisa__stain *st = calloc(1, sizeof *st);
    char warning[WSISA_NOTE_MAX]; /* what the check doubts: logged by the verdict */
    if (!st) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    else if (!(rc = wsisa__stain_sample(slide, s->grid, st, e)))
      rc = wsisa__stain_verdict(st, r->slide, "give --no-stain-check", warning, sizeof warning, e);
    free(st);
  }
  wsisa_input_close(slide);
  if (rc) return rc;
  s->step = wsisa_scale_step(&s->grid->scale);
  s->pixel_mpp = wsisa_scale_pixel_mpp(&s->grid->scale);
  memcpy(s->params, r->params, sizeof s->params);
  s->halo = r->halo >= 0 ? r->halo
                         : wsisa_workflow_halo_at(s->params, 1, s->grid->scale.target_mpp);
  s->feature_cols = WSISA_NF_ROW(wsisa_workflow_channel_count());
  /* the nuclei's ids in QuPath's UUID form carry the slide's name and size */
  struct stat st;
  const char *slash = strrchr(r->slide, '/');
  const char *base = slash ? slash + 1 : r->slide;
  s->salt = wsisa__crc32(base, strlen(base)) ^
            (stat(r->slide, &st) == 0 ? (uint32_t)(st.st_size * 2654435761u) : 0u);
  if (!(s->identity = identity_of(s))) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  /* the work folder: --work, or beside the first output */
  output out[5];
  outputs_of(r, out);
  if (r->work) snprintf(s->work, sizeof s->work, "%s", r->work);
  else snprintf(s->work, sizeof s->work, "%s.parts", out[0].path);
  size_t len = strlen(s->work);
  while (len > 1 && s->work[len - 1] == '/') s->work[--len] = '\0';
  return 0;
}

/* Remove the work folder once the outputs are in place: only what this
 * command puts there. */
static void remove_work(wsisa__slide_run *s) {
  static const char *const names[] = {"journal.csv", "nuclei.bin", "request.json", "lock"};
  char path[WSISA_PATH_MAX];
  if (s->journal) fclose(s->journal);
  if (s->store_fd >= 0) close(s->store_fd);
  s->journal = NULL, s->store_fd = -1;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    if (wsisa__slide_work_path(s, names[i], path, NULL) == 0) unlink(path);
  }
  if (rmdir(s->work) != 0)
    wsisa_log(WSISA_LOG_WARN, "segment", "%s: not removed (%s)", s->work, strerror(errno));
}

static int segment_slide(wsisa__slide_run *s, wsisa_err *e) {
  const wsisa_slide_segment_request *r = s->r;
  struct stat st;
  int rc = prepare(s, e);
  const int exists = !rc && stat(s->work, &st) == 0;
  if (!rc && exists && !S_ISDIR(st.st_mode))
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: exists and is not a folder (give another --work)",
                     s->work);
  if (!rc && exists) rc = reopen_work(s, e);
  if (!rc && wsisa_units_interrupted())
    rc = wsisa_error(e, WSISA_EINTERRUPTED, "interrupted before any tile ran");
  const wsisa_runtime_opts ro = {.ncpu = -1, .nopencl = -1, .calibrate = 1};
  if (!rc && !(rc = wsisa_codelets_start(&ro, e))) {
    s->runtime = 1;
    /* StarPU catches SIGINT for itself (and hands it on): ours again */
    wsisa_units_catch_signals();
    int workers = 0;
    rc = wsisa_dist_workers(wsisa_runtime_ncpu() + wsisa_runtime_nopencl(), &workers, e);
    /* the slide's colour statistics, once (kept in the work folder) */
    if (!rc && !exists && r->normalize && !r->tile_stats) {
      double t0 = wsisa_now();
      if (!(rc = wsisa_slide_stats(r->slide, &s->grid->scale, s->stats, e)))
        s->has_stats = s->stats[WSISA_STATS_COUNT] > 0;
      wsisa_log(WSISA_LOG_INFO, "segment", "%s: colour statistics in %.1f s", r->slide,
                wsisa_now() - t0);
    }
    if (!rc && !exists) rc = create_work(s, e);
    if (!rc) rc = run_units(s, e);
    wsisa_runtime_shutdown();
    s->runtime = 0;
  }
  wsisa__slide_totals tot;
  if (!rc) rc = wsisa__slide_assemble(s, &tot, e);
  if (rc) {
    /* nothing done yet in a folder this command made: leave nothing behind */
    if (s->created && !s->journaled && rc != WSISA_EINTERRUPTED) {
      remove_work(s);
    } else if ((s->journaled || s->done_before) && rc != WSISA_EINTERRUPTED && e) {
      size_t len = strlen(e->msg);
      snprintf(e->msg + len, sizeof e->msg - len,
               "; the finished tiles are kept in %s: the same command goes on from them",
               s->work);
    }
    return rc;
  }
  remove_work(s);
  const double mm2 = wsisa__slide_tissue_mm2(s, tot.tissue);
  printf("%s: %zu tiles, %" PRIu64 " nuclei, %.4g mm2 of tissue (%.0f nuclei per mm2) at %.4g "
         "um/pixel; halo %d pixels, %s\n",
         r->slide, s->n, tot.nuclei, mm2, mm2 > 0 ? (double)tot.nuclei / mm2 : 0.0,
         s->pixel_mpp, s->halo,
         !r->normalize ? "not normalized"
         : s->has_stats ? "normalized with the slide's colour statistics"
                        : "normalized with each tile's colour statistics");
  output out[5];
  size_t n = outputs_of(r, out);
  printf("wrote");
  for (size_t i = 0; i < n; i++) printf("%s %s", i ? "," : "", out[i].path);
  printf("\n");
  return 0;
}

int wsisa_slide_segment(const wsisa_slide_segment_request *r, wsisa_err *e) {
  wsisa__slide_run s;
  memset(&s, 0, sizeof s);
  s.r = r;
  s.lock_fd = s.store_fd = -1;
  /* SIGINT and SIGTERM stop it between tiles (engine/exec/units.c) */
  wsisa_units_catch_signals();
  wsisa_text_read_stop(wsisa_units_interrupted);
  /* under mpirun, ranks other than 0 only segment the tiles rank 0 hands out */
  int rc = wsisa_dist_start(r->unit_timeout > 0 ? r->unit_timeout : 600.0, e);
  if (!rc && wsisa_dist_rank() > 0) rc = wsisa_dist_worker(e);
  else if (!rc) rc = segment_slide(&s, e);
  if (s.runtime) wsisa_runtime_shutdown();
  if (s.journal) fclose(s.journal);
  if (s.store_fd >= 0) close(s.store_fd);
  if (s.lock_fd >= 0) close(s.lock_fd);
  json_decref(s.identity);
  wsisa_grid_free(s.grid);
  free(s.tiles);
  free(s.refs);
  free(s.chosen_at);
  wsisa_dist_end();
  return rc;
}
