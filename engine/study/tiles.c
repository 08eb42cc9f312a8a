/* A study's tiles: each slide's tile grid at the study's resolution (tissue
 * tiles only unless asked, or the tiles inputs.tiles chooses), its stain
 * checked on a few of them, and each image whole; with inputs.reference, each
 * input's annotation read and only the tiles it covers kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exec/exec.h"
#include "engine/study/study_internal.h"

/* What a study says to run an input the stain check refuses. */
#define STUDY_STAIN_OVERRIDE "set inputs.stain_check to false"

/* ---- tiles ----------------------------------------------------------------- */

static const char *const tiles_kind_names[] = {"all", "sample", "list", "regions", "geojson"};

const char *wsisa_study_tiles_kind_name(wsisa_study_tiles_kind kind) {
  return (unsigned)kind < sizeof tiles_kind_names / sizeof *tiles_kind_names
             ? tiles_kind_names[kind]
             : "?";
}

/* The study and the tiles being made of it. */
typedef struct tiling {
  wsisa_study *study;
  wsisa__tile_set *set;
} tiling;

static int add_tile(tiling *s, const wsisa_tile_ref *t, const char *name, wsisa_err *e) {
  wsisa_tile_ref *nt = realloc(s->set->tiles, (s->set->ntiles + 1) * sizeof *nt);
  if (nt) s->set->tiles = nt;
  char **nn = realloc(s->set->tile_names, (s->set->ntiles + 1) * sizeof *nn);
  if (nn) s->set->tile_names = nn;
  if (!nt || !nn || !(s->set->tile_names[s->set->ntiles] = strdup(name)))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->set->tiles[s->set->ntiles++] = *t;
  return 0;
}

/* Messages of the slide and grid code name the `wsisa tiles` flags; here the
 * settings come from the study, so its fields are named instead. */
static int study_field_error(const tiling *s, const wsisa_err *inner, wsisa_err *e) {
  static const char *const flag[][2] = {
      {"--tile-size ", "inputs.tile_size: "}, {"--overlap ", "inputs.overlap: "},
      {"--level ", "inputs.level: "}, {"--mpp ", "inputs.mpp: "}};
  for (size_t i = 0; i < sizeof flag / sizeof *flag; i++)
    if (strncmp(inner->msg, flag[i][0], strlen(flag[i][0])) == 0)
      return wsisa_error(e, inner->code, "%s: %s%s", s->study->path, flag[i][1],
                         inner->msg + strlen(flag[i][0]));
  return wsisa_error(e, inner->code, "%s", inner->msg);
}

static int add_input(tiling *s, const char *path, wsisa_input_kind kind, const wsisa_scale *scale,
                     wsisa__study_input **out, wsisa_err *e) {
  wsisa__study_input *ni = realloc(s->set->inputs, (s->set->ninputs + 1) * sizeof *ni);
  if (!ni) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->set->inputs = ni;
  wsisa__study_input *in = &s->set->inputs[s->set->ninputs++];
  memset(in, 0, sizeof *in);
  in->path = path;
  in->kind = kind;
  in->scale = *scale;
  in->first_tile = s->set->ntiles;
  *out = in;
  return 0;
}

/* The stain check's verdict on what input `ri` showed; its warning kept for
 * run.json. */
static int stain_verdict(wsisa__study_input *ri, wsisa_err *e) {
  char warning[WSISA_NOTE_MAX];
  int rc = wsisa__stain_verdict(&ri->stain, ri->path, STUDY_STAIN_OVERRIDE, warning,
                                sizeof warning, e);
  if (!rc && warning[0] && !(ri->stain_warning = strdup(warning)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  return rc;
}

/* ---- annotations -------------------------------------------------------------- */

/* inputs.reference for input `ri`: its spec into ri->annot (which stays NULL
 * when the input has none), the file read and checked into *out (refused
 * before any work, naming it), its size and CRC-32 for reference.json. Level
 * 0 of the input is width0 x height0 pixels of `scale`'s MPP. */
static int input_annotation(tiling *s, wsisa__study_input *ri, const wsisa_scale *scale,
                            int64_t width0, int64_t height0, wsisa_annotation **out,
                            wsisa_err *e) {
  *out = NULL;
  const wsisa_study_inputs *in = &s->study->inputs;
  const wsisa_study_reference *r = NULL;
  for (size_t i = 0; i < in->nreferences && !r; i++)
    if (strcmp(in->references[i].input, ri->path) == 0) r = &in->references[i];
  if (!r) return 0;
  wsisa_annot_spec *sp = calloc(1, sizeof *sp);
  if (!sp) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ri->annot = sp;
  sp->kind = r->kind;
  sp->path = r->path;
  sp->input = ri->path;
  sp->width0 = width0;
  sp->height0 = height0;
  sp->origin_x = r->origin[0];
  sp->origin_y = r->origin[1];
  sp->downsample = r->downsample > 0 ? r->downsample : 1;
  if (r->mpp > 0) {
    /* um per label pixel over um per level-0 pixel */
    if (scale->mpp <= 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: inputs.reference[\"%s\"].mpp: the MPP of %s is unknown; give "
                         "downsample, or inputs.slide_mpp",
                         s->study->path, ri->path, ri->path);
    sp->downsample = r->mpp / scale->mpp;
  }
  sp->has_region = r->has_region;
  sp->region = (wsisa_rect){r->region[0], r->region[1], r->region[2], r->region[3]};
  /* the annotation first: its reader refuses at once what is not one (a
   * zero byte, a file past its bound) and gives way to a signal */
  int rc = wsisa_annotation_load(sp, out, e);
  if (rc) return wsisa_error_where(e, rc, r->path);
  FILE *f = fopen(r->path, "rb");
  if (!f) rc = wsisa_error(e, WSISA_EIO, "%s: %s", r->path, strerror(errno));
  char buf[65536];
  size_t got;
  uint32_t crc = 0;
  uint64_t bytes = 0;
  /* bounded and interruptible: an annotation that never ends (/dev/zero)
   * must not hold a run that was told to stop */
  int stop = !f;
  while (!stop && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    crc = wsisa__crc32_more(crc, buf, got);
    bytes += got;
    stop = wsisa_units_interrupted() || bytes > WSISA_TEXT_MAX_GEOJSON;
  }
  int err = f && ferror(f) ? errno : 0;
  if (f) fclose(f);
  char size[32];
  if (err) rc = wsisa_error(e, WSISA_EIO, "%s: %s", r->path, strerror(err));
  else if (!rc && wsisa_units_interrupted())
    rc = wsisa_error(e, WSISA_EINTERRUPTED, "%s: interrupted while reading it; nothing written",
                     r->path);
  else if (!rc && bytes > WSISA_TEXT_MAX_GEOJSON)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: larger than %s, the most an annotation may hold",
                     r->path, wsisa_bytes_text((double)WSISA_TEXT_MAX_GEOJSON, size, sizeof size));
  if (rc) {
    wsisa_annotation_free(*out);
    *out = NULL;
    return rc;
  }
  ri->annot_bytes = bytes;
  ri->annot_crc32 = crc;
  ri->annot_objects = wsisa_annotation_objects(*out);
  return 0;
}

/* Is the tile in the study? Without annotations, every tile is; with them,
 * those the input's annotation covers (the others are counted). */
static int tile_annotated(tiling *s, wsisa__study_input *ri, const wsisa_annotation *a,
                          wsisa_tile_ref *ref) {
  if (!s->set->annotated) return 1;
  ref->annot = ri->annot;
  if (a && wsisa_annotation_covers(a, &ref->scale, ref->x, ref->y, ref->width, ref->height))
    return 1;
  ri->tiles_left_out++;
  s->set->tiles_left_out++;
  return 0;
}

/* ---- inputs.tiles ---------------------------------------------------------------- */

/* The place of cell (x, y) along the Hilbert curve over an n x n grid (n a
 * power of two): cells near on the curve are near on the slide. */
static uint64_t hilbert(uint64_t n, uint64_t x, uint64_t y) {
  uint64_t d = 0;
  for (uint64_t s = n / 2; s > 0; s /= 2) {
    const uint64_t rx = (x & s) > 0, ry = (y & s) > 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) x = s - 1 - x, y = s - 1 - y;
      const uint64_t t = x;
      x = y, y = t;
    }
  }
  return d;
}

/* i's base-2 radical inverse (van der Corput): 0, 1/2, 1/4, 3/4, ... every
 * prefix of it spread evenly over [0, 1). */
static double radical_inverse(uint64_t i) {
  double v = 0, f = 0.5;
  for (; i; i >>= 1, f *= 0.5)
    if (i & 1) v += f;
  return v;
}

typedef struct hilbert_tile {
  uint64_t key;
  size_t index;
} hilbert_tile;

static int by_key(const void *a, const void *b) {
  const hilbert_tile *x = a, *y = b;
  return (x->key > y->key) - (x->key < y->key);
}

/* {"sample": N, "seed": s}: N of the candidates, spread over the tissue map
 * and reproducible. The candidates are ordered along a Hilbert curve over
 * the grid and picked at the places of the van der Corput sequence shifted
 * by a random offset the seed gives (a taken place gives way to the next
 * along the curve): any prefix of the sequence is spread, so a sample of N
 * is the first N of one of N' > N with the same seed, and tiles are only
 * ever added as N grows. */
static int sample_tiles(const wsisa_grid *g, const uint8_t *candidate, size_t want,
                        uint64_t seed, uint8_t *take, wsisa_err *e) {
  uint64_t n = 1;
  while (n < (uint64_t)g->cols || n < (uint64_t)g->rows) n *= 2;
  hilbert_tile *order = malloc((g->ntiles ? g->ntiles : 1) * sizeof *order);
  uint8_t *used = calloc(g->ntiles ? g->ntiles : 1, 1);
  if (!order || !used) {
    free(order);
    free(used);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  size_t m = 0;
  for (size_t i = 0; i < g->ntiles; i++)
    if (candidate[i])
      order[m++] = (hilbert_tile){hilbert(n, (uint64_t)g->tiles[i].col,
                                          (uint64_t)g->tiles[i].row), i};
  qsort(order, m, sizeof *order, by_key);
  const double offset = (double)(wsisa_mix64(seed) >> 11) * 0x1.0p-53;
  for (size_t k = 0; k < want && k < m; k++) {
    double u = radical_inverse(k) + offset;
    u -= floor(u);
    size_t at = (size_t)(u * (double)m);
    if (at >= m) at = m - 1;
    while (used[at]) at = (at + 1) % m;
    used[at] = 1;
    take[order[at].index] = 1;
  }
  free(order);
  free(used);
  return 0;
}

/* Which of the grid's tiles inputs.tiles takes (without it: every tile, the
 * tissue ones with tissue_only) into take[]; a choice that names a tile or
 * region off the slide is refused, naming the field. */
static int choose_tiles(tiling *s, const char *path,
                        const wsisa_grid *g, int64_t width0, int64_t height0, uint8_t *take,
                        wsisa_err *e) {
  wsisa_study_inputs *in = &s->study->inputs;
  wsisa_study_tiles *t = &in->tiles;
  uint8_t *candidate = malloc(g->ntiles ? g->ntiles : 1);
  if (!candidate) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < g->ntiles; i++) candidate[i] = !in->tissue_only || g->tiles[i].tissue;
  memset(take, 0, g->ntiles);
  int rc = 0;
  switch (t->kind) {
    case WSISA_TILES_ALL: memcpy(take, candidate, g->ntiles); break;
    case WSISA_TILES_SAMPLE:
      rc = sample_tiles(g, candidate, t->sample, t->seed, take, e);
      break;
    case WSISA_TILES_LIST:
      /* exactly these, tissue or not: someone chose them */
      for (size_t k = 0; k < t->nvalues && !rc; k++) {
        if ((uint64_t)t->values[k] >= g->ntiles)
          rc = wsisa_error(e, WSISA_EUSAGE,
                           "%s: inputs.tiles[%zu]: tile %lld is not in the grid of %s (%zu "
                           "tiles of %d, 0..%zu; wsisa tiles --json lists them)",
                           s->study->path, k, (long long)t->values[k], path, g->ntiles,
                           g->tile_size, g->ntiles - 1);
        else
          take[t->values[k]] = 1;
      }
      break;
    case WSISA_TILES_RECTS:
      for (size_t k = 0; k < t->nvalues / 4 && !rc; k++) {
        const int64_t *r = t->values + 4 * k;
        if (r[0] + r[2] > width0 || r[1] + r[3] > height0) {
          rc = wsisa_error(e, WSISA_EUSAGE,
                           "%s: inputs.tiles.regions[%zu]: %lld,%lld,%lld,%lld is outside level "
                           "0 of %s (%lldx%lld; regions are in level-0 pixels)",
                           s->study->path, k, (long long)r[0], (long long)r[1], (long long)r[2],
                           (long long)r[3], path, (long long)width0, (long long)height0);
          break;
        }
        for (size_t i = 0; i < g->ntiles; i++) {
          const wsisa_rect *l = &g->tiles[i].level0;
          if (candidate[i] && l->x < r[0] + r[2] && r[0] < l->x + l->width &&
              l->y < r[1] + r[3] && r[1] < l->y + l->height)
            take[i] = 1;
        }
      }
      break;
    case WSISA_TILES_GEOJSON: {
      /* the polygons, read and checked as an annotation's; the file held to
       * the CRC-32 a resolved study recorded (a resume takes the same tiles) */
      wsisa_annot_spec sp = {.kind = WSISA_ANNOT_GEOJSON, .path = t->geojson, .input = path,
                             .width0 = width0, .height0 = height0, .downsample = 1};
      wsisa_annotation *a = NULL;
      size_t len = 0;
      char *text = NULL;
      rc = wsisa_error_where(
          e, wsisa_text_read(t->geojson, WSISA_TEXT_MAX_GEOJSON, "a GeoJSON file", &text, &len, e),
          t->geojson);
      const uint32_t crc = text ? wsisa__crc32(text, len) : 0;
      free(text);
      if (!rc && t->has_crc && crc != t->crc32)
        rc = wsisa_error(e, WSISA_EUSAGE,
                         "%s: inputs.tiles.regions: %s changed since the study was resolved "
                         "(CRC-32 %08x, recorded %08x): its tiles would differ",
                         s->study->path, t->geojson, (unsigned)crc, (unsigned)t->crc32);
      if (!rc) rc = wsisa_annotation_load(&sp, &a, e);
      for (size_t i = 0; !rc && i < g->ntiles; i++) {
        const wsisa_tile *tl = &g->tiles[i];
        take[i] = candidate[i] &&
                  wsisa_annotation_covers(a, &g->scale, tl->x, tl->y, tl->width, tl->height);
      }
      wsisa_annotation_free(a);
      if (!rc) t->has_crc = 1, t->crc32 = crc;
      break;
    }
  }
  free(candidate);
  size_t n = 0;
  for (size_t i = 0; i < g->ntiles && !rc; i++) n += take[i];
  if (!rc && !n)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs.tiles: no tile of %s chosen (%s%s)",
                     s->study->path, path, wsisa_study_tiles_kind_name(t->kind),
                     in->tissue_only ? "; tissue tiles only" : "");
  return rc;
}

/* A slide's grid tiles that the study chooses and its annotation covers, each
 * named by its level-0 rectangle, the slide's own coordinates. */
static int grid_tiles(tiling *s, wsisa__study_input *ri, const wsisa_grid *g,
                      const wsisa_annotation *annot, int64_t width0, int64_t height0,
                      wsisa_err *e) {
  uint8_t *take = malloc(g->ntiles ? g->ntiles : 1);
  int rc = take ? choose_tiles(s, ri->path, g, width0, height0, take, e)
                : wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc && !(ri->grid_index = malloc((g->ntiles ? g->ntiles : 1) * sizeof *ri->grid_index)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  char name[WSISA_NOTE_MAX]; /* a tile's: the slide's path and its rectangle */
  for (size_t t = 0; !rc && t < g->ntiles; t++) {
    const wsisa_tile *tl = &g->tiles[t];
    if (!take[t]) continue;
    wsisa_tile_ref ref = {.path = ri->path, .kind = WSISA_INPUT_SLIDE, .scale = ri->scale,
                          .x = tl->x, .y = tl->y, .width = tl->width, .height = tl->height,
                          .level0 = tl->level0};
    if (!tile_annotated(s, ri, annot, &ref)) continue;
    snprintf(name, sizeof name, "%s#%lld,%lld,%lld,%lld", ri->path, (long long)tl->level0.x,
             (long long)tl->level0.y, (long long)tl->level0.width,
             (long long)tl->level0.height);
    ri->grid_index[ri->ntiles++] = t;
    rc = add_tile(s, &ref, name, e);
  }
  free(take);
  return rc;
}

/* One input's tiles at the study's resolution, its stain checked first: a
 * slide's grid tiles, or an image file whole (taken as it is or, with
 * inputs.slide_mpp, resampled), one tile named by its path. inputs.level
 * applies to slides. */
static int input_tiles(tiling *s, const char *path, wsisa_input_kind kind, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  const int slide = kind == WSISA_INPUT_SLIDE;
  wsisa_input *input = NULL;
  wsisa_grid *g = NULL;
  wsisa__study_input *ri = NULL;
  wsisa_annotation *annot = NULL;
  wsisa_scale scale;
  int rc = wsisa_input_open(path, kind, &input, e);
  if (rc) return wsisa_error_where(e, rc, path);
  int64_t width0, height0; /* before an image's pixels are taken for its stain */
  wsisa_input_level0(input, &width0, &height0);
  wsisa_err inner = WSISA_ERR_INIT;
  const int nlevels = wsisa_input_level_count(input);
  if (slide && in->level >= nlevels)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs.level: %d is not a level of %s (levels 0..%d)",
                     s->study->path, in->level, path, nlevels - 1);
  else if (!(rc = wsisa_input_scale(input, in->slide_mpp, in->mpp, slide ? in->level : -1, &scale,
                                    e)) &&
           slide && wsisa_input_grid(input, &scale, in->tile_size, in->overlap, &g, &inner))
    rc = study_field_error(s, &inner, e);
  if (!rc) rc = add_input(s, path, kind, &scale, &ri, e);
  if (!rc && in->stain_check) {
    wsisa_image *whole = NULL;
    ri->stain_checked = 1;
    if (slide) rc = wsisa__stain_sample(input, g, &ri->stain, e);
    else if (!(rc = wsisa_input_take_scaled(input, &scale, 0, 0, (int)scale.width,
                                            (int)scale.height, &whole, e)))
      wsisa__stain_add(&ri->stain, whole);
    wsisa_image_free(whole);
    if (!rc) rc = stain_verdict(ri, e);
  }
  if (!rc && s->set->annotated)
    rc = input_annotation(s, ri, &scale, width0, height0, &annot, e);
  if (!rc && slide) {
    rc = grid_tiles(s, ri, g, annot, width0, height0, e);
  } else if (!rc) {
    const double step = wsisa_scale_step(&scale);
    wsisa_tile_ref ref = {.path = path, .kind = WSISA_INPUT_IMAGE, .scale = scale,
                          .width = (int)scale.width, .height = (int)scale.height,
                          .level0 = {0, 0, llround((double)scale.width * step),
                                     llround((double)scale.height * step)}};
    if (tile_annotated(s, ri, annot, &ref)) {
      ri->ntiles = 1;
      rc = add_tile(s, &ref, path, e);
    }
  }
  if (!rc && slide)
    wsisa_log(WSISA_LOG_INFO, "run", "%s: %g um/pixel (%s), level %d, factor %g: %zu tiles", path,
              scale.mpp, wsisa_mpp_source_name(scale.source), scale.level, scale.factor,
              ri->ntiles);
  wsisa_annotation_free(annot);
  wsisa_grid_free(g);
  wsisa_input_close(input);
  return rc;
}

int wsisa__study_tiles(wsisa_study *study, wsisa__tile_set *set, wsisa_err *e) {
  memset(set, 0, sizeof *set);
  tiling t = {study, set}, *s = &t;
  const wsisa_study_inputs *in = &s->study->inputs;
  int rc = 0;
  s->set->annotated = in->nreferences > 0;
  for (size_t i = 0; i < in->nslides && !rc; i++)
    rc = input_tiles(s, in->slides[i], WSISA_INPUT_SLIDE, e);
  for (size_t i = 0; i < in->nimages && !rc; i++)
    rc = input_tiles(s, in->images[i], WSISA_INPUT_IMAGE, e);
  /* a label image or mask covers a tile only whole: one smaller than its
   * input is the likelier slip than GeoJSON coordinates at another level */
  int images_only = 1;
  for (size_t i = 0; i < in->nreferences; i++)
    images_only &= in->references[i].kind != WSISA_ANNOT_GEOJSON;
  if (!rc && s->set->ntiles == 0 && s->set->annotated && images_only)
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: inputs.reference: no tile is annotated (%zu tiles, none covered "
                     "whole by a label image or mask: is each the size of its input, at its "
                     "downsample?)",
                     s->study->path, s->set->tiles_left_out);
  else if (!rc && s->set->ntiles == 0 && s->set->annotated)
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: inputs.reference: no tile is annotated (%zu tiles, none covered by "
                     "an annotation: are its coordinates level-0 pixels of the slide?)",
                     s->study->path, s->set->tiles_left_out);
  else if (!rc && s->set->ntiles == 0)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs: no tile to segment (no tissue found?)",
                     s->study->path);
  if (!rc && s->set->annotated)
    wsisa_log(WSISA_LOG_INFO, "run", "annotations cover %zu tiles; %zu left out", s->set->ntiles,
              s->set->tiles_left_out);
  return rc;
}

int wsisa_study_tiles_list(wsisa_study *study, wsisa_study_tile **out, size_t *n, wsisa_err *e) {
  *out = NULL;
  *n = 0;
  wsisa__tile_set set;
  int rc = wsisa__study_tiles(study, &set, e);
  wsisa_study_tile *list = rc ? NULL : calloc(set.ntiles ? set.ntiles : 1, sizeof *list);
  if (!rc && !list) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  const int stride = study->inputs.tile_size - study->inputs.overlap;
  for (size_t i = 0; !rc && i < set.ninputs; i++) {
    const wsisa__study_input *ri = &set.inputs[i];
    for (size_t k = 0; k < ri->ntiles; k++) {
      const wsisa_tile_ref *t = &set.tiles[ri->first_tile + k];
      const int slide = ri->kind == WSISA_INPUT_SLIDE;
      list[ri->first_tile + k] =
          (wsisa_study_tile){.input = ri->path,
                             .index = slide ? (long)ri->grid_index[k] : -1,
                             .col = slide ? (int)(t->x / stride) : 0,
                             .row = slide ? (int)(t->y / stride) : 0,
                             .level0 = t->level0};
    }
  }
  if (!rc) {
    *out = list;
    *n = set.ntiles;
  }
  wsisa__study_tiles_free(&set);
  return rc;
}

int wsisa__study_halo_for(const wsisa_study *study, const double *params, size_t nruns) {
  if (study->inputs.halo >= 0) return study->inputs.halo;
  return wsisa_workflow_halo_at(params, nruns, study->inputs.mpp);
}

void wsisa__study_tiles_free(wsisa__tile_set *s) {
  for (size_t i = 0; i < s->ntiles; i++) free(s->tile_names[i]);
  free(s->tile_names);
  free(s->tiles);
  for (size_t i = 0; i < s->ninputs; i++) {
    free(s->inputs[i].annot);
    free(s->inputs[i].stain_warning);
    free(s->inputs[i].grid_index);
  }
  free(s->inputs);
  s->tile_names = NULL;
  s->tiles = NULL;
  s->inputs = NULL;
  s->ntiles = s->ninputs = 0;
}
