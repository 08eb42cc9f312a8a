/* Study files: the JSON contract of docs/study-file.md read with jansson, every field
 * validated with the file and JSON path in the message (written back
 * resolved: engine/study/resolved.c; its metrics: engine/study/metrics.c; its
 * design's size and limits: engine/study/limits.c). */
#include "engine/study/study.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "engine/exec/exec.h"
#include "engine/workflow/workflow.h"
#include "io/io.h"

static const char *const cost_names[] = {"tasks", "measured", "auto"};
#define COUNT(a) (sizeof(a) / sizeof *(a))

const char *wsisa_study_cost_name(wsisa_study_cost c) {
  return (unsigned)c < COUNT(cost_names) ? cost_names[c] : "?";
}

/* ---- validation helpers ------------------------------------------------------- */

typedef struct ctx {
  const char *file;
  wsisa_err *e;
} ctx;

/* "file: path: message" */
static int fail(ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(ctx *c, const char *path, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return wsisa_error(c->e, WSISA_EUSAGE, "%s: %s%s%s", c->file, path, path[0] ? ": " : "", msg);
}

/* A message from sa, which starts with the name of what it checked. */
static int fail_sa(ctx *c, const char *prefix, const wsisa_err *inner) {
  return wsisa_error(c->e, inner->code ? inner->code : WSISA_EUSAGE, "%s: %s%s", c->file, prefix,
                     inner->msg);
}

/* What a JSON value is, for "expected X, got Y". */
static void describe(const json_t *v, char *buf, size_t cap) {
  switch (json_typeof(v)) {
    case JSON_STRING: snprintf(buf, cap, "the string \"%.40s\"", json_string_value(v)); break;
    case JSON_INTEGER: snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: snprintf(buf, cap, "%g", json_real_value(v)); break;
    case JSON_TRUE: snprintf(buf, cap, "true"); break;
    case JSON_FALSE: snprintf(buf, cap, "false"); break;
    case JSON_NULL: snprintf(buf, cap, "null"); break;
    case JSON_ARRAY: snprintf(buf, cap, "an array"); break;
    case JSON_OBJECT: snprintf(buf, cap, "an object"); break;
  }
}

static int expected(ctx *c, const char *path, const char *what, const json_t *v) {
  char got[96];
  describe(v, got, sizeof got);
  return fail(c, path, "expected %s, got %s", what, got);
}

static int in_list(const char *key, const char *const *allowed) {
  for (; *allowed; allowed++)
    if (strcmp(key, *allowed) == 0) return 1;
  return 0;
}

/* Refuse keys outside `allowed` (NULL-terminated); `path` is the object's. */
static int check_keys(ctx *c, json_t *obj, const char *path, const char *const *allowed,
                      const char *owner) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    if (in_list(key, allowed)) continue;
    char full[256], list[256] = "";
    snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "." : "", key);
    for (const char *const *a = allowed; *a; a++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a == allowed ? "" : ", ",
               *a);
    return fail(c, full, "unknown key (%s takes %s)", owner, list);
  }
  return 0;
}

static int get_number(ctx *c, json_t *v, const char *path, double *out) {
  if (!json_is_number(v)) return expected(c, path, "a number", v);
  *out = json_number_value(v);
  if (!isfinite(*out)) return fail(c, path, "not a finite number");
  return 0;
}

static int get_whole(ctx *c, json_t *v, const char *path, double lo, double hi, double *out) {
  if (!json_is_number(v) || json_number_value(v) != floor(json_number_value(v)))
    return expected(c, path, "a whole number", v);
  double x = json_number_value(v);
  /* every digit of a whole number up to 17 of them; past that, as written
   * in short (1e+308, not its 309 digits) */
  if (x < lo || x > hi)
    return fail(c, path, fabs(x) < 1e17 ? "%.0f is outside %.0f..%.0f" : "%g is outside %.0f..%.0f",
                x, lo, hi);
  *out = x;
  return 0;
}

static int get_int(ctx *c, json_t *v, const char *path, int lo, int hi, int *out) {
  double x;
  int rc = get_whole(c, v, path, lo, hi, &x);
  if (!rc) *out = (int)x;
  return rc;
}

static int get_size(ctx *c, json_t *v, const char *path, size_t lo, size_t hi, size_t *out) {
  double x;
  int rc = get_whole(c, v, path, (double)lo, (double)hi, &x);
  if (!rc) *out = (size_t)x;
  return rc;
}

static int get_bool(ctx *c, json_t *v, const char *path, int *out) {
  if (!json_is_boolean(v)) return expected(c, path, "true or false", v);
  *out = json_is_true(v);
  return 0;
}

static int get_string(ctx *c, json_t *v, const char *path, const char **out) {
  if (!json_is_string(v)) return expected(c, path, "a string", v);
  if (!json_string_value(v)[0]) return fail(c, path, "empty string");
  *out = json_string_value(v);
  return 0;
}

/* Index of `name` in names[0..n-1], or a message listing them. */
static int get_choice(ctx *c, json_t *v, const char *path, const char *const *names, size_t n,
                      int *out) {
  const char *s;
  int rc = get_string(c, v, path, &s);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) {
      *out = (int)i;
      return 0;
    }
  char list[256] = "";
  for (size_t i = 0; i < n; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
  return fail(c, path, "'%s' is not one of %s", s, list);
}

static int dup_string(ctx *c, const char *s, char **out) {
  if (!(*out = strdup(s))) return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
  return 0;
}

/* A non-empty array of non-empty, distinct strings. */
static int get_strings(ctx *c, json_t *v, const char *path, char ***out, size_t *n) {
  if (!json_is_array(v) || json_array_size(v) == 0)
    return expected(c, path, "a non-empty array of strings", v);
  *n = json_array_size(v);
  if (!(*out = calloc(*n, sizeof **out))) return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < *n; i++) {
    char at[256];
    const char *s;
    snprintf(at, sizeof at, "%s[%zu]", path, i);
    int rc = get_string(c, json_array_get(v, i), at, &s);
    if (!rc) rc = dup_string(c, s, &(*out)[i]);
    if (rc) return rc;
    for (size_t j = 0; j < i; j++)
      if (strcmp((*out)[j], s) == 0) return fail(c, at, "'%s' is listed twice", s);
  }
  return 0;
}

/* ---- sections ---------------------------------------------------------------- */

/* A resolution in um per pixel, in the range io accepts. */
static int get_mpp(ctx *c, json_t *v, const char *path, double *out) {
  double x = 0;
  int rc = get_number(c, v, path, &x);
  if (rc) return rc;
  if (x < WSISA_MPP_MIN || x > WSISA_MPP_MAX)
    return fail(c, path, "%g is outside %g..%g um/pixel", x, WSISA_MPP_MIN, WSISA_MPP_MAX);
  *out = x;
  return 0;
}

/* inputs.reference: per input (named as inputs.slides or inputs.images name
 * it), one annotation file and where it lies. Files are read by `wsisa run`,
 * which refuses a bad one before any work; here only the keys are checked. */
static int parse_reference(ctx *c, json_t *ref, wsisa_study_inputs *out) {
  static const char *const keys[] = {"geojson", "labels", "mask", "origin",
                                     "downsample", "mpp", "region", NULL};
  static const char *const kinds[] = {"geojson", "labels", "mask"};
  if (!json_is_object(ref) || json_object_size(ref) == 0)
    return expected(c, "inputs.reference",
                    "an object naming, per slide or image, its annotation", ref);
  out->references = calloc(json_object_size(ref), sizeof *out->references);
  if (!out->references) return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
  const char *input;
  json_t *v;
  json_object_foreach(ref, input, v) {
    char at[600], item[700];
    snprintf(at, sizeof at, "inputs.reference[\"%.500s\"]", input);
    int known = 0;
    for (size_t i = 0; i < out->nslides; i++) known |= strcmp(out->slides[i], input) == 0;
    for (size_t i = 0; i < out->nimages; i++) known |= strcmp(out->images[i], input) == 0;
    if (!known)
      return fail(c, at, "not one of inputs.%s (a reference names the input it annotates, as "
                  "written there)", out->nslides ? "slides" : "images");
    if (!json_is_object(v))
      return expected(c, at, "an object with geojson, labels or mask", v);
    int rc = check_keys(c, v, at, keys, "a reference");
    if (rc) return rc;
    wsisa_study_reference *r = &out->references[out->nreferences++];
    if ((rc = dup_string(c, input, &r->input))) return rc;
    int given = 0;
    for (int k = 0; k < 3; k++) {
      json_t *f = json_object_get(v, kinds[k]);
      if (!f) continue;
      const char *file;
      snprintf(item, sizeof item, "%s.%s", at, kinds[k]);
      if (given++) return fail(c, at, "give one of geojson, labels or mask");
      if ((rc = get_string(c, f, item, &file)) || (rc = dup_string(c, file, &r->path))) return rc;
      r->kind = (wsisa_annot_kind)(WSISA_ANNOT_GEOJSON + k);
    }
    if (!given) return fail(c, at, "give one of geojson, labels or mask");
    int image = r->kind != WSISA_ANNOT_GEOJSON;
    json_t *origin = json_object_get(v, "origin"), *ds = json_object_get(v, "downsample");
    json_t *mpp = json_object_get(v, "mpp"), *region = json_object_get(v, "region");
    static const char *const image_keys[] = {"origin", "downsample", "mpp"};
    json_t *const image_vals[] = {origin, ds, mpp};
    for (int k = 0; k < 3; k++)
      if (image_vals[k] && !image) {
        snprintf(item, sizeof item, "%s.%s", at, image_keys[k]);
        return fail(c, item, "only goes with labels or mask (a GeoJSON is in level-0 "
                    "coordinates)");
      }
    if (region && image) {
      snprintf(item, sizeof item, "%s.region", at);
      return fail(c, item, "only goes with geojson (a label image covers its own extent)");
    }
    if (origin) {
      snprintf(item, sizeof item, "%s.origin", at);
      if (!json_is_array(origin) || json_array_size(origin) != 2)
        return expected(c, item, "[x, y] in level-0 pixels", origin);
      for (int k = 0; k < 2; k++) {
        char el[720];
        snprintf(el, sizeof el, "%s[%d]", item, k);
        if ((rc = get_number(c, json_array_get(origin, k), el, &r->origin[k]))) return rc;
        if (r->origin[k] < 0) return fail(c, el, "%g is negative", r->origin[k]);
      }
    }
    if (ds && mpp) return fail(c, at, "give downsample or mpp, not both");
    if (ds) {
      snprintf(item, sizeof item, "%s.downsample", at);
      if ((rc = get_number(c, ds, item, &r->downsample))) return rc;
      if (r->downsample < 1.0 / 64 || r->downsample > 4096)
        return fail(c, item, "%g is outside 1/64..4096 level-0 pixels per pixel", r->downsample);
    }
    if (mpp) {
      snprintf(item, sizeof item, "%s.mpp", at);
      if ((rc = get_mpp(c, mpp, item, &r->mpp))) return rc;
    }
    if (region) {
      snprintf(item, sizeof item, "%s.region", at);
      if (!json_is_array(region) || json_array_size(region) != 4)
        return expected(c, item, "[x, y, width, height] in level-0 pixels", region);
      for (int k = 0; k < 4; k++) {
        char el[720];
        double x;
        snprintf(el, sizeof el, "%s[%d]", item, k);
        if ((rc = get_whole(c, json_array_get(region, k), el, k < 2 ? 0 : 1, 9007199254740992.0,
                            &x)))
          return rc;
        r->region[k] = (int64_t)x;
      }
      r->has_region = 1;
    }
  }
  return 0;
}

/* inputs.tiles: a sample, a list of grid indices, or regions (level-0
 * rectangles, or a GeoJSON file's polygons). Whether the indices and regions
 * lie on each slide is checked when its grid is laid out (engine/study/tiles.c). */
static int parse_tiles(ctx *c, json_t *v, wsisa_study_tiles *t) {
  static const char *const sample_keys[] = {"sample", "seed", NULL};
  static const char *const region_keys[] = {"regions", "crc32", NULL};
  static const char *const what =
      "{\"sample\": N, \"seed\": s}, a list of tile indices, or {\"regions\": [[x, y, w, "
      "h], ...] or \"FILE.geojson\"}";
  int rc;
  char at[96];
  if (json_is_array(v)) {
    t->kind = WSISA_TILES_LIST;
    t->nvalues = json_array_size(v);
    if (!t->nvalues) return expected(c, "inputs.tiles", what, v);
    if (!(t->values = calloc(t->nvalues, sizeof *t->values)))
      return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->nvalues; i++) {
      double x;
      snprintf(at, sizeof at, "inputs.tiles[%zu]", i);
      if ((rc = get_whole(c, json_array_get(v, i), at, 0, 9007199254740992.0, &x))) return rc;
      t->values[i] = (int64_t)x;
      for (size_t j = 0; j < i; j++)
        if (t->values[j] == t->values[i])
          return fail(c, at, "tile %" PRId64 " is listed twice (inputs.tiles[%zu])",
                      t->values[i], j);
    }
    return 0;
  }
  if (!json_is_object(v)) return expected(c, "inputs.tiles", what, v);
  json_t *sample = json_object_get(v, "sample"), *regions = json_object_get(v, "regions");
  if (!sample == !regions) return expected(c, "inputs.tiles", what, v);
  if (sample) {
    if ((rc = check_keys(c, v, "inputs.tiles", sample_keys, "a sample of tiles"))) return rc;
    double x;
    t->kind = WSISA_TILES_SAMPLE;
    if ((rc = get_whole(c, sample, "inputs.tiles.sample", 1, 1e9, &x))) return rc;
    t->sample = (size_t)x;
    t->seed = 1;
    json_t *seed = json_object_get(v, "seed");
    if (seed && (rc = get_whole(c, seed, "inputs.tiles.seed", 0, 9007199254740992.0, &x)))
      return rc;
    if (seed) t->seed = (uint64_t)x;
    return 0;
  }
  if ((rc = check_keys(c, v, "inputs.tiles", region_keys, "regions of tiles"))) return rc;
  json_t *crc = json_object_get(v, "crc32");
  if (json_is_string(regions)) {
    const char *file;
    t->kind = WSISA_TILES_GEOJSON;
    if ((rc = get_string(c, regions, "inputs.tiles.regions", &file)) ||
        (rc = dup_string(c, file, &t->geojson)))
      return rc;
    if (crc) {
      const char *hex = json_is_string(crc) ? json_string_value(crc) : "";
      char *end;
      unsigned long h = strtoul(hex, &end, 16);
      if (strlen(hex) != 8 || *end || h > 0xffffffffUL)
        return expected(c, "inputs.tiles.crc32", "8 hex digits (the file's CRC-32)", crc);
      t->has_crc = 1;
      t->crc32 = (uint32_t)h;
    }
    return 0;
  }
  if (crc) return fail(c, "inputs.tiles.crc32", "only goes with a GeoJSON file's regions");
  t->kind = WSISA_TILES_RECTS;
  t->nvalues = json_is_array(regions) ? 4 * json_array_size(regions) : 0;
  if (!t->nvalues)
    return expected(c, "inputs.tiles.regions",
                    "a non-empty list of [x, y, width, height] in level-0 pixels, or a GeoJSON "
                    "file",
                    regions);
  if (!(t->values = calloc(t->nvalues, sizeof *t->values)))
    return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->nvalues / 4; i++) {
    json_t *r = json_array_get(regions, i);
    snprintf(at, sizeof at, "inputs.tiles.regions[%zu]", i);
    if (!json_is_array(r) || json_array_size(r) != 4)
      return expected(c, at, "[x, y, width, height] in level-0 pixels", r);
    for (int k = 0; k < 4; k++) {
      char el[128];
      double x;
      snprintf(el, sizeof el, "%s[%d]", at, k);
      if ((rc = get_whole(c, json_array_get(r, k), el, k < 2 ? 0 : 1, 9007199254740992.0, &x)))
        return rc;
      t->values[4 * i + k] = (int64_t)x;
    }
  }
  return 0;
}

static int parse_inputs(ctx *c, json_t *in, wsisa_study_inputs *out) {
  static const char *const keys[] = {"slides",      "images",    "level",       "tile_size",
                                     "overlap",     "mpp",       "slide_mpp",   "tissue_only",
                                     "stain_check", "reference", "halo",  "normalization",
                                     "tiles",       NULL};
  if (!json_is_object(in)) return expected(c, "inputs", "an object", in);
  int rc = check_keys(c, in, "inputs", keys, "inputs");
  if (rc) return rc;
  json_t *slides = json_object_get(in, "slides"), *images = json_object_get(in, "images");
  if (slides && images)
    return fail(c, "inputs", "give slides or images, not both (one study, one kind of input)");
  if (!slides && !images)
    return fail(c, "inputs", "needs slides (whole-slide images) or images (PNG/TIFF tiles)");
  if (slides && (rc = get_strings(c, slides, "inputs.slides", &out->slides, &out->nslides)))
    return rc;
  if (images) {
    if ((rc = get_strings(c, images, "inputs.images", &out->images, &out->nimages))) return rc;
    for (size_t i = 0; i < out->nimages; i++) {
      const char *s = out->images[i];
      if (!wsisa_path_has_ext(s, (const char *const[]){".png", ".tif", ".tiff", NULL})) {
        char at[64];
        snprintf(at, sizeof at, "inputs.images[%zu]", i);
        return fail(c, at, "'%s' is not a .png, .tif or .tiff file", s);
      }
    }
  }
  json_t *v;
  if ((v = json_object_get(in, "tile_size")) &&
      (rc = get_int(c, v, "inputs.tile_size", 16, 1 << 16, &out->tile_size)))
    return rc;
  if ((v = json_object_get(in, "overlap")) &&
      (rc = get_int(c, v, "inputs.overlap", 0, 1 << 16, &out->overlap)))
    return rc;
  if (out->overlap >= out->tile_size)
    return fail(c, "inputs.overlap", "%d must be smaller than tile_size %d", out->overlap,
                out->tile_size);
  if ((v = json_object_get(in, "tissue_only")) &&
      (rc = get_bool(c, v, "inputs.tissue_only", &out->tissue_only)))
    return rc;
  if ((v = json_object_get(in, "mpp")) && (rc = get_mpp(c, v, "inputs.mpp", &out->mpp)))
    return rc;
  if ((v = json_object_get(in, "slide_mpp")) &&
      (rc = get_mpp(c, v, "inputs.slide_mpp", &out->slide_mpp)))
    return rc;
  /* by default the level follows from the target resolution; a level given
   * is read and resampled to the target (so "level": 0 reads the full
   * resolution whatever the scanner) */
  if ((v = json_object_get(in, "level")) &&
      (rc = get_int(c, v, "inputs.level", 0, 64, &out->level)))
    return rc;
  if (out->level >= 0 && images)
    return fail(c, "inputs.level", "applies to slides (pyramids); images have one level");
  if ((v = json_object_get(in, "stain_check")) &&
      (rc = get_bool(c, v, "inputs.stain_check", &out->stain_check)))
    return rc;
  if ((v = json_object_get(in, "reference")) && (rc = parse_reference(c, v, out))) return rc;
  if ((v = json_object_get(in, "halo"))) {
    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) out->halo = -1;
    else if (json_is_string(v))
      return fail(c, "inputs.halo", "'%s': give \"auto\" or a whole number of pixels",
                  json_string_value(v));
    else if ((rc = get_int(c, v, "inputs.halo", 0, 1 << 16, &out->halo)))
      return rc;
  }
  if ((v = json_object_get(in, "normalization"))) {
    const char *n = json_is_string(v) ? json_string_value(v) : NULL;
    if (!n || (strcmp(n, "slide") != 0 && strcmp(n, "tile") != 0))
      return expected(c, "inputs.normalization", "\"slide\" or \"tile\"", v);
    out->tile_stats = strcmp(n, "tile") == 0;
  }
  if ((v = json_object_get(in, "tiles"))) {
    if (images)
      return fail(c, "inputs.tiles", "applies to slides (their tile grids); an image is one tile");
    if ((rc = parse_tiles(c, v, &out->tiles))) return rc;
  }
  return 0;
}

/* A segmentation parameter's value must suit the segmentation itself. */
static int check_domain(ctx *c, const char *path, const char *name, double v) {
  wsisa_err inner = WSISA_ERR_INIT;
  if (wsisa_sa_seg_validate(name, v, &inner)) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s: ", path);
    return fail_sa(c, prefix, &inner);
  }
  return 0;
}

/* {"dist": "norm", "bounds": [mean, sd]}: a continuous parameter of a
 * distribution, its bounds as SALib reads them (sa.h). */
static int parse_dist(ctx *c, const char *path, const char *name, json_t *spec,
                      const wsisa_sa_seg_param *sp, wsisa_sa_param *p) {
  char at[200];
  json_t *dist = json_object_get(spec, "dist"), *bounds = json_object_get(spec, "bounds");
  const char *other[] = {"range", "step", "integer", "values", "fixed"};
  for (size_t i = 0; i < sizeof other / sizeof *other; i++)
    if (json_object_get(spec, other[i])) {
      snprintf(at, sizeof at, "%s.%s", path, other[i]);
      return fail(c, at, "does not go with dist and bounds (a dist's bounds give its range)");
    }
  snprintf(at, sizeof at, "%s.dist", path);
  if (!dist) return fail(c, at, "required with bounds (%s)", wsisa_sa_dist_names());
  const char *dname;
  int rc = get_string(c, dist, at, &dname), d;
  if (rc) return rc;
  if ((d = wsisa_sa_dist_from_name(dname)) < 0)
    return fail(c, at, "'%s' is not a distribution (%s)", dname, wsisa_sa_dist_names());
  snprintf(at, sizeof at, "%s.bounds", path);
  if (!bounds) return fail(c, at, "required with dist");
  size_t nb = json_is_array(bounds) ? json_array_size(bounds) : 0;
  if (nb < 2 || nb > 4) return expected(c, at, "an array of 2 to 4 numbers", bounds);
  double b[4];
  for (size_t i = 0; i < nb; i++) {
    char item[256];
    snprintf(item, sizeof item, "%s[%zu]", at, i);
    if ((rc = get_number(c, json_array_get(bounds, i), item, &b[i]))) return rc;
  }
  if (sp && sp->integer_valued)
    return fail(c, at, "%s takes whole numbers only; a dist applies to a continuous parameter",
                name);
  if (sp && sp->kind == WSISA_SA_CATEGORICAL)
    return fail(c, at, "%s is a connectivity: use \"values\": [4, 8]", name);
  p->kind = WSISA_SA_CONTINUOUS;
  wsisa_err inner = WSISA_ERR_INIT;
  if (wsisa_sa_param_set_dist(p, (wsisa_sa_dist)d, b, nb, &inner))
    return fail_sa(c, "parameters.", &inner);
  /* what the segmentation accepts must hold the whole support */
  if (sp && ((rc = check_domain(c, at, name, p->lo)) || (rc = check_domain(c, at, name, p->hi))))
    return rc;
  json_t *def = json_object_get(spec, "default");
  if (def) {
    snprintf(at, sizeof at, "%s.default", path);
    if ((rc = get_number(c, def, at, &p->value))) return rc;
    if (sp && (rc = check_domain(c, at, name, p->value))) return rc;
  } else if (!sp) {
    p->value = wsisa_sa_param_midpoint(p);
  }
  return 0;
}

/* "groups": {"G": ["a", "b"], ...}: parameters that move as one (MOAT, VBD). */
static int parse_groups(ctx *c, json_t *groups, wsisa_sa_space *space) {
  if (!json_is_object(groups)) return expected(c, "groups", "an object of group: [parameters]", groups);
  const char *g;
  json_t *list;
  json_object_foreach(groups, g, list) {
    char at[256];
    snprintf(at, sizeof at, "groups.%s", g);
    if (!json_is_array(list) || json_array_size(list) == 0)
      return expected(c, at, "a non-empty array of parameter names", list);
    for (size_t i = 0; i < json_array_size(list); i++) {
      char item[300];
      snprintf(item, sizeof item, "%s[%zu]", at, i);
      const char *name;
      int rc = get_string(c, json_array_get(list, i), item, &name);
      if (rc) return rc;
      wsisa_err inner = WSISA_ERR_INIT;
      if (wsisa_sa_space_group(space, g, name, &inner)) return fail_sa(c, "groups: ", &inner);
    }
  }
  wsisa_err inner = WSISA_ERR_INIT;
  if (wsisa_sa_space_check_groups(space, &inner)) return fail_sa(c, "groups: ", &inner);
  return 0;
}

static int parse_param(ctx *c, const char *name, json_t *spec, int segmentation,
                       wsisa_sa_param *p) {
  static const char *const keys[] = {"range", "step",    "integer", "values", "fixed",
                                     "default", "dist", "bounds", NULL};
  char path[128], at[200];
  snprintf(path, sizeof path, "parameters.%s", name);
  memset(p, 0, sizeof *p);
  if (strlen(name) >= WSISA_SA_NAME_MAX)
    return fail(c, path, "names are at most %d bytes", WSISA_SA_NAME_MAX - 1);
  snprintf(p->name, sizeof p->name, "%s", name);
  const wsisa_sa_seg_param *sp = NULL;
  if (segmentation) {
    wsisa_err inner = WSISA_ERR_INIT;
    if (wsisa_sa_seg_lookup(name, &sp, &inner)) return fail_sa(c, "parameters.", &inner);
    wsisa_sa_seg_to_param(sp, p);
  }
  if (json_is_number(spec)) { /* "B": 220 is short for {"fixed": 220} */
    p->kind = WSISA_SA_FIXED;
    int rc = get_number(c, spec, path, &p->value);
    return rc ? rc : sp ? check_domain(c, path, name, p->value) : 0;
  }
  if (!json_is_object(spec))
    return expected(c, path, "an object with range, values or fixed (or a number)", spec);
  int rc = check_keys(c, spec, path, keys, "a parameter");
  if (rc) return rc;
  json_t *range = json_object_get(spec, "range"), *values = json_object_get(spec, "values");
  json_t *fixed = json_object_get(spec, "fixed"), *step = json_object_get(spec, "step");
  json_t *integer = json_object_get(spec, "integer"), *def = json_object_get(spec, "default");
  json_t *dist = json_object_get(spec, "dist"), *bounds = json_object_get(spec, "bounds");
  if (dist || bounds) return parse_dist(c, path, name, spec, sp, p);
  if (!!range + !!values + !!fixed > 1)
    return fail(c, path, "give one of range, values or fixed");
  if (!range && !values && !fixed && !sp)
    return fail(c, path, "give range, values or fixed");
  if (!range && (step || integer)) {
    snprintf(at, sizeof at, "%s.%s", path, step ? "step" : "integer");
    return fail(c, at, "only goes with range");
  }
  if (fixed && def) {
    snprintf(at, sizeof at, "%s.default", path);
    return fail(c, at, "a fixed parameter has only its fixed value");
  }
  if (fixed) {
    p->kind = WSISA_SA_FIXED;
    snprintf(at, sizeof at, "%s.fixed", path);
    rc = get_number(c, fixed, at, &p->value);
    return rc ? rc : sp ? check_domain(c, at, name, p->value) : 0;
  }
  if (values) {
    snprintf(at, sizeof at, "%s.values", path);
    if (!json_is_array(values)) return expected(c, at, "an array of numbers", values);
    if (json_array_size(values) > WSISA_SA_MAX_VALUES)
      return fail(c, at, "at most %d values", WSISA_SA_MAX_VALUES);
    p->kind = WSISA_SA_CATEGORICAL;
    p->nvalues = json_array_size(values);
    for (size_t i = 0; i < p->nvalues; i++) {
      char item[256];
      snprintf(item, sizeof item, "%s[%zu]", at, i);
      json_t *x = json_array_get(values, i);
      if (!json_is_number(x)) return expected(c, item, "a number (values are numeric)", x);
      if ((rc = get_number(c, x, item, &p->values[i]))) return rc;
      if (sp && (rc = check_domain(c, item, name, p->values[i]))) return rc;
    }
    if (!sp && p->nvalues) p->value = p->values[0];
  }
  if (range) {
    snprintf(at, sizeof at, "%s.range", path);
    if (!json_is_array(range) || json_array_size(range) != 2)
      return expected(c, at, "[lower, upper]", range);
    char item[256];
    snprintf(item, sizeof item, "%s[0]", at);
    if ((rc = get_number(c, json_array_get(range, 0), item, &p->lo))) return rc;
    snprintf(item, sizeof item, "%s[1]", at);
    if ((rc = get_number(c, json_array_get(range, 1), item, &p->hi))) return rc;
    if (sp && p->lo <= p->hi &&
        ((rc = check_domain(c, at, name, p->lo)) || (rc = check_domain(c, at, name, p->hi))))
      return rc;
    if (sp && sp->kind == WSISA_SA_CATEGORICAL)
      return fail(c, at, "%s is a connectivity: use \"values\": [4, 8]", name);
    int whole = sp ? sp->integer_valued : 0;
    snprintf(item, sizeof item, "%s.integer", path);
    if (integer && (rc = get_bool(c, integer, item, &whole))) return rc;
    if (sp && sp->integer_valued && !whole)
      return fail(c, item, "%s takes whole numbers only", name);
    p->step = 0;
    p->kind = whole ? WSISA_SA_INTEGER : WSISA_SA_CONTINUOUS;
    if (step) {
      snprintf(item, sizeof item, "%s.step", path);
      if ((rc = get_number(c, step, item, &p->step))) return rc;
      if (whole && (p->step != floor(p->step) || p->lo != floor(p->lo)))
        return fail(c, item, "%s takes whole numbers; a range from %g by %g does not", name,
                    p->lo, p->step);
      p->kind = WSISA_SA_DISCRETE;
    }
  }
  if (def) {
    snprintf(at, sizeof at, "%s.default", path);
    if ((rc = get_number(c, def, at, &p->value))) return rc;
    if (sp && (rc = check_domain(c, at, name, p->value))) return rc;
  } else if (!sp && p->kind != WSISA_SA_CATEGORICAL && p->lo < p->hi) {
    p->value = wsisa_sa_param_midpoint(p);
  }
  return 0;
}

static int parse_parameters(ctx *c, json_t *params, int segmentation, wsisa_sa_space *space) {
  wsisa_err inner = WSISA_ERR_INIT;
  if (segmentation) {
    /* Unnamed parameters keep their defaults: start from all 15 fixed. */
    for (size_t i = 0; i < WSISA_SA_NSEG; i++) {
      wsisa_sa_param p;
      wsisa_sa_seg_to_param(&wsisa_sa_seg_params[i], &p);
      if (params) p.kind = WSISA_SA_FIXED;
      if (wsisa_sa_space_add(space, &p, &inner)) return fail_sa(c, "parameters.", &inner);
    }
    if (!params) return 0; /* the built-in space: all 15 over their SA ranges */
  }
  if (!json_is_object(params)) return expected(c, "parameters", "an object", params);
  if (!segmentation && json_object_size(params) == 0)
    return fail(c, "parameters", "a study without inputs needs at least one parameter");
  const char *name;
  json_t *spec;
  json_object_foreach(params, name, spec) {
    wsisa_sa_param p;
    int rc = parse_param(c, name, spec, segmentation, &p);
    if (rc) return rc;
    if (wsisa_sa_param_check(&p, &inner)) return fail_sa(c, "parameters.", &inner);
    if (segmentation)
      space->params[wsisa_sa_space_find(space, name)] = p;
    else if (wsisa_sa_space_add(space, &p, &inner))
      return fail_sa(c, "parameters.", &inner);
  }
  return 0;
}

static int parse_method(ctx *c, json_t *m, json_t *sampler, wsisa_sa_opts *o) {
  static const char *const moat[] = {"name", "trajectories", "levels", "pool", NULL};
  static const char *const vbd[] = {"name", "samples", "bootstrap", "confidence", "second_order",
                                    NULL};
  static const char *const corr[] = {"name", "samples", NULL};
  static const char *const two[] = {"name",      "trajectories", "levels",     "pool", "keep",
                                    "samples",   "bootstrap",    "confidence", "second_order",
                                    NULL};
  static const char *const *const knobs[] = {moat, vbd, corr, two};
  static const char *const methods[] = {"moat", "vbd", "correlation", "two_phase"};
  int rc, method;
  json_t *name = json_is_object(m) ? json_object_get(m, "name") : m;
  if (!json_is_object(m) && !json_is_string(m))
    return expected(c, "method", "an object with a name, or a method name", m);
  if (!name) return fail(c, "method", "needs a name (moat, vbd, correlation or two_phase)");
  if ((rc = get_choice(c, name, json_is_object(m) ? "method.name" : "method", methods, 4, &method)))
    return rc;
  wsisa_sa_opts_default(o, (wsisa_sa_method)method);
  if (json_is_object(m)) {
    char owner[64];
    snprintf(owner, sizeof owner, "method %s", methods[method]);
    if ((rc = check_keys(c, m, "method", knobs[method], owner))) return rc;
    json_t *v;
    double levels;
    if ((v = json_object_get(m, "trajectories")) &&
        (rc = get_size(c, v, "method.trajectories", 0, 1u << 30, &o->trajectories)))
      return rc;
    if ((v = json_object_get(m, "levels"))) {
      if ((rc = get_whole(c, v, "method.levels", 0, 1e6, &levels))) return rc;
      o->levels = (unsigned)levels;
    }
    if ((v = json_object_get(m, "pool")) && (rc = get_size(c, v, "method.pool", 0, 1u << 20, &o->pool)))
      return rc;
    if ((v = json_object_get(m, "samples")) &&
        (rc = get_size(c, v, "method.samples", 0, 1u << 31, &o->samples)))
      return rc;
    if ((v = json_object_get(m, "bootstrap")) &&
        (rc = get_size(c, v, "method.bootstrap", 0, 1u << 31, &o->bootstrap)))
      return rc;
    if ((v = json_object_get(m, "confidence")) &&
        (rc = get_number(c, v, "method.confidence", &o->confidence)))
      return rc;
    if ((v = json_object_get(m, "second_order")) &&
        (rc = get_bool(c, v, "method.second_order", &o->second_order)))
      return rc;
    if ((v = json_object_get(m, "keep")) && (rc = get_size(c, v, "method.keep", 0, 1u << 20, &o->keep)))
      return rc;
  }
  if (!sampler) return 0;
  static const char *const sampler_keys[] = {"name", "seed", NULL};
  const char *samplers[WSISA_SA_NSAMPLERS];
  for (int i = 0; i < WSISA_SA_NSAMPLERS; i++) samplers[i] = wsisa_sa_sampler_name(i);
  int s;
  if (json_is_string(sampler)) {
    if ((rc = get_choice(c, sampler, "sampler", samplers, WSISA_SA_NSAMPLERS, &s))) return rc;
    o->sampler = (wsisa_sa_sampler)s;
    return 0;
  }
  if (!json_is_object(sampler))
    return expected(c, "sampler", "an object with a name, or a sampler name", sampler);
  if ((rc = check_keys(c, sampler, "sampler", sampler_keys, "sampler"))) return rc;
  json_t *v = json_object_get(sampler, "name");
  if (v) {
    if ((rc = get_choice(c, v, "sampler.name", samplers, WSISA_SA_NSAMPLERS, &s))) return rc;
    o->sampler = (wsisa_sa_sampler)s;
  }
  if ((v = json_object_get(sampler, "seed"))) {
    double seed;
    if ((rc = get_whole(c, v, "sampler.seed", 0, 9007199254740992.0, &seed))) return rc;
    o->seed = (uint64_t)seed;
  }
  return 0;
}

static int parse_metric(ctx *c, json_t *m, int segmentation, wsisa_study *s) {
  int rc;
  if (json_is_string(m)) {
    const char *name;
    if ((rc = get_string(c, m, "metric", &name))) return rc;
    if (!(s->metrics = calloc(1, sizeof *s->metrics)))
      return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
    s->nmetrics = 1;
    if ((rc = dup_string(c, name, &s->metrics[0]))) return rc;
  } else if ((rc = get_strings(c, m, "metric", &s->metrics, &s->nmetrics))) {
    return rc;
  }
  if (!segmentation) return 0;
  for (size_t i = 0; i < s->nmetrics; i++) {
    int known = wsisa_study_metric_find(s->metrics[i]) >= 0;
    /* a feature's distribution distance; `wsisa run` checks the feature name */
    known |= strncmp(s->metrics[i], WSISA_STUDY_WASSERSTEIN, strlen(WSISA_STUDY_WASSERSTEIN)) == 0 &&
             s->metrics[i][strlen(WSISA_STUDY_WASSERSTEIN)];
    if (!known) {
      char at[32];
      if (json_is_string(m))
        snprintf(at, sizeof at, "metric");
      else
        snprintf(at, sizeof at, "metric[%zu]", i);
      char names[512];
      wsisa_study_metric_list(names, sizeof names);
      return fail(c, at, "'%s' is not one of %s", s->metrics[i], names);
    }
  }
  return 0;
}

static int parse_reuse(ctx *c, json_t *r, wsisa_study_reuse_opts *o) {
  static const char *const keys[] = {"strategy",     "max_buckets", "max_bucket_size",
                                     "active_paths", "cost_model",  "level_costs",
                                     "object_reuse", NULL};
  if (!json_is_object(r)) return expected(c, "reuse", "an object", r);
  int rc = check_keys(c, r, "reuse", keys, "reuse");
  json_t *v;
  int choice;
  if (rc) return rc;
  if ((v = json_object_get(r, "strategy"))) {
    if ((rc = get_choice(c, v, "reuse.strategy", wsisa_reuse_strategy_names, WSISA_REUSE_NSTRATEGIES, &choice)))
      return rc;
    o->strategy = (wsisa_reuse_strategy)choice;
  }
  if ((v = json_object_get(r, "max_buckets")) &&
      (rc = get_int(c, v, "reuse.max_buckets", 1, 1000000, &o->max_buckets)))
    return rc;
  if ((v = json_object_get(r, "max_bucket_size")) &&
      (rc = get_int(c, v, "reuse.max_bucket_size", 1, 1000000, &o->max_bucket_size)))
    return rc;
  if ((v = json_object_get(r, "active_paths")) &&
      (rc = get_int(c, v, "reuse.active_paths", 1, 1000000, &o->active_paths)))
    return rc;
  if ((v = json_object_get(r, "cost_model"))) {
    if ((rc = get_choice(c, v, "reuse.cost_model", cost_names, COUNT(cost_names), &choice)))
      return rc;
    o->cost = (wsisa_study_cost)choice;
  }
  if ((v = json_object_get(r, "level_costs"))) {
    if (!json_is_array(v) || json_array_size(v) != WSISA_STUDY_LEVELS)
      return expected(c, "reuse.level_costs", "an array of 7 numbers, one per task level", v);
    for (size_t l = 0; l < WSISA_STUDY_LEVELS; l++) {
      char path[48];
      snprintf(path, sizeof path, "reuse.level_costs[%zu]", l);
      if ((rc = get_number(c, json_array_get(v, l), path, &o->level_costs[l]))) return rc;
      if (!(o->level_costs[l] >= 0)) return fail(c, path, "a cost is not negative");
    }
    o->nlevel_costs = WSISA_STUDY_LEVELS;
  }
  if ((v = json_object_get(r, "object_reuse")) &&
      (rc = get_bool(c, v, "reuse.object_reuse", &o->object_reuse)))
    return rc;
  return 0;
}

static int parse_execution(ctx *c, json_t *x, wsisa_study_execution *o) {
  static const char *const keys[] = {"memory_limit", "scheduler", "placement", NULL};
  if (!json_is_object(x)) return expected(c, "execution", "an object", x);
  int rc = check_keys(c, x, "execution", keys, "execution");
  json_t *v;
  if (rc) return rc;
  if ((v = json_object_get(x, "memory_limit"))) {
    if (json_is_integer(v) && json_integer_value(v) > 0) {
      o->memory_limit = (uint64_t)json_integer_value(v);
    } else {
      const char *s;
      if (!json_is_string(v)) return expected(c, "execution.memory_limit", "a size like \"4G\"", v);
      if ((rc = get_string(c, v, "execution.memory_limit", &s))) return rc;
      if (wsisa_study_parse_bytes(s, &o->memory_limit))
        return fail(c, "execution.memory_limit",
                    "'%s' is not a size (a positive number of bytes, or with K, M, G or T)", s);
    }
  }
  const char *sched;
  if ((v = json_object_get(x, "scheduler"))) {
    if ((rc = get_string(c, v, "execution.scheduler", &sched))) return rc;
    if ((rc = dup_string(c, sched, &o->scheduler))) return rc;
  }
  int choice;
  if ((v = json_object_get(x, "placement"))) {
    if ((rc = get_choice(c, v, "execution.placement", wsisa_placement_names, WSISA_PLACEMENTS,
                         &choice)))
      return rc;
    o->placement = choice;
  }
  return 0;
}

/* ---- the study ------------------------------------------------------------------ */

void wsisa_study_free(wsisa_study *s) {
  if (!s) return;
  for (size_t i = 0; i < s->inputs.nslides; i++) free(s->inputs.slides[i]);
  for (size_t i = 0; i < s->inputs.nimages; i++) free(s->inputs.images[i]);
  for (size_t i = 0; i < s->nmetrics; i++) free(s->metrics[i]);
  for (size_t i = 0; i < s->inputs.nreferences; i++) {
    free(s->inputs.references[i].input);
    free(s->inputs.references[i].path);
  }
  free(s->inputs.references);
  free(s->inputs.tiles.values);
  free(s->inputs.tiles.geojson);
  free(s->inputs.slides);
  free(s->inputs.images);
  free(s->metrics);
  free(s->path);
  free(s->name);
  free(s->description);
  free(s->execution.scheduler);
  wsisa_sa_space_free(s->space);
  free(s);
}

static int parse_root(ctx *c, json_t *root, wsisa_study *s) {
  static const char *const keys[] = {"name",    "description", "inputs", "parameters",
                                     "groups",  "method",      "sampler", "metric",
                                     "reuse",   "execution",   NULL};
  if (!json_is_object(root)) return expected(c, "", "a JSON object", root);
  int rc = check_keys(c, root, "", keys, "a study");
  if (rc) return rc;
  json_t *v;
  const char *text;
  if ((v = json_object_get(root, "name")) &&
      ((rc = get_string(c, v, "name", &text)) || (rc = dup_string(c, text, &s->name))))
    return rc;
  if ((v = json_object_get(root, "description")) &&
      ((rc = get_string(c, v, "description", &text)) || (rc = dup_string(c, text, &s->description))))
    return rc;
  json_t *inputs = json_object_get(root, "inputs");
  s->segmentation = inputs != NULL;
  if (inputs && (rc = parse_inputs(c, inputs, &s->inputs))) return rc;
  json_t *params = json_object_get(root, "parameters");
  if (!params && !s->segmentation)
    return fail(c, "parameters", "required in a study without inputs (a pure SA study)");
  if ((rc = parse_parameters(c, params, s->segmentation, s->space))) return rc;
  if ((v = json_object_get(root, "groups")) && (rc = parse_groups(c, v, s->space))) return rc;
  json_t *method = json_object_get(root, "method");
  if (!method) return fail(c, "method", "required (moat, vbd, correlation or two_phase)");
  if ((rc = parse_method(c, method, json_object_get(root, "sampler"), &s->sa))) return rc;
  /* A segmentation study with every parameter fixed is one run, scored against
   * the annotations; a pure SA study of fixed values has nothing to compute. */
  if (!s->segmentation && wsisa_sa_space_dims(s->space) == 0)
    return fail(c, "parameters", "every parameter is fixed; nothing to analyse");
  wsisa_err inner = WSISA_ERR_INIT;
  if (wsisa_sa_opts_check(&s->sa, wsisa_sa_space_dims(s->space), &inner))
    return fail_sa(c, strncmp(inner.msg, "parameters", 10) == 0 ? "" : "method.", &inner);
  if ((v = json_object_get(root, "metric"))) {
    if ((rc = parse_metric(c, v, s->segmentation, s))) return rc;
  } else if (s->segmentation) {
    s->metrics = calloc(1, sizeof *s->metrics);
    if (!s->metrics) return wsisa_error(c->e, WSISA_ENOMEM, "out of memory");
    s->nmetrics = 1;
    if ((rc = dup_string(c, "dice", &s->metrics[0]))) return rc;
  }
  if ((v = json_object_get(root, "reuse")) && (rc = parse_reuse(c, v, &s->reuse))) return rc;
  if ((v = json_object_get(root, "execution")) && (rc = parse_execution(c, v, &s->execution)))
    return rc;
  return 0;
}

static int parse_json(json_t *root, const char *name, wsisa_study **out, wsisa_err *e) {
  wsisa_study *s = calloc(1, sizeof *s);
  ctx c = {name, e};
  int rc = 0;
  if (!s || !(s->path = strdup(name)) || !(s->space = wsisa_sa_space_new()))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) {
    s->inputs.tile_size = 1024;
    s->inputs.level = -1;
    s->inputs.tissue_only = 1;
    s->inputs.mpp = WSISA_TARGET_MPP;
    s->inputs.stain_check = 1;
    s->inputs.halo = -1;
    /* the fastest measured on 2 to 8 workers (wsisa-bench reuse; README
     * Performance): RTMA; TRTMA pays off when workers outnumber buckets */
    s->reuse.strategy = WSISA_REUSE_RTMA;
    /* measured level costs when the performance models have them */
    s->reuse.cost = WSISA_STUDY_COST_AUTO;
    s->reuse.object_reuse = 1;
    rc = parse_root(&c, root, s);
  }
  if (rc) {
    wsisa_study_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int wsisa_study_parse(const char *text, const char *name, wsisa_study **out, wsisa_err *e) {
  *out = NULL;
  json_error_t err;
  json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
  if (!root)
    return wsisa_error(e, WSISA_EUSAGE, "%s:%d:%d: %s", name, err.line, err.column, err.text);
  int rc = parse_json(root, name, out, e);
  json_decref(root);
  return rc;
}

int wsisa_study_load(const char *path, wsisa_study **out, wsisa_err *e) {
  *out = NULL;
  json_error_t err;
  char *text;
  size_t len;
  wsisa_err read_err = WSISA_ERR_INIT;
  int rc = wsisa_text_read(path, WSISA_TEXT_MAX_STUDY, "a study file", &text, &len, &read_err);
  if (rc == WSISA_EIO && access(path, F_OK) != 0)
    return wsisa_error(e, rc, "%s: cannot open the study file", path);
  if (rc) return wsisa_error(e, rc, "%s", read_err.msg);
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
  free(text);
  if (!root)
    return wsisa_error(e, WSISA_EUSAGE, "%s:%d:%d: %s", path, err.line, err.column, err.text);
  rc = parse_json(root, path, out, e);
  json_decref(root);
  return rc;
}
