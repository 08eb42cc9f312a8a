/* `wsisa segment`: one segmentation of an image file or a slide region with
 * the default or given parameters; writes the mask, optionally the labels, a
 * GeoJSON of the nucleus outlines and a CSV of per-nucleus features. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <openslide/openslide.h>

#include "codelets/codelets.h"
#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/workflow/workflow.h"
#include "io/csv.h"
#include "io/io.h"
#include "sa/sa.h"

#define WHOLE_SLIDE_MAX_PIXELS (64.0 * 1024 * 1024)

typedef struct segment_opts {
  const char *input, *out, *labels, *geojson, *features;
  const char *region, *tile;
  long tile_size;
  double mpp, target_mpp; /* --mpp (0: the slide's own; an image as it is), --target-mpp */
  int normalize;
  int no_stain_check; /* --no-stain-check */
  double params[WSISA_SEG_NPARAMS];
} segment_opts;

/* Where the segmented pixels are: the scale they were read at and their
 * rectangle in target pixels; level-0 position = (x + px) * step. */
typedef struct placement {
  int is_slide;
  wsisa_scale scale;
  int64_t x, y;
  double step;  /* level-0 pixels per segmented pixel */
  int dark_background; /* a slide whose tissue detection found a dark background */
} placement;

static int parse_ints(const char *flag, const char *text, long *v, int n, wsisa_err *e) {
  const char *s = text;
  for (int i = 0; i < n; i++) {
    char *end;
    errno = 0;
    v[i] = strtol(s, &end, 10);
    if (end == s || errno || (i < n - 1 ? *end != ',' : *end != '\0'))
      return wsisa_error(e, WSISA_EUSAGE, "%s %s: expected %d comma-separated whole numbers",
                         flag, text, n);
    s = end + 1;
  }
  return 0;
}

static int check_output_path(const char *flag, const char *path, const char *const *exts,
                             wsisa_err *e) {
  size_t len = strlen(path);
  int ok = 0;
  for (const char *const *x = exts; *x; x++) {
    size_t xl = strlen(*x);
    ok |= len > xl && strcasecmp(path + len - xl, *x) == 0;
  }
  if (!ok) return wsisa_error(e, WSISA_EUSAGE, "%s %s: unsupported file type", flag, path);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else strcpy(dir, ".");
  if (access(dir, W_OK) != 0)
    return wsisa_error(e, WSISA_EIO, "%s %s: cannot write in %s (%s)", flag, path, dir,
                       strerror(errno));
  return 0;
}

/* Is INPUT a slide (read at the target resolution) rather than a plain image?
 * Vendor formats are; a generic TIFF is when it has a pyramid or says its
 * pixel size, else it is an image like a PNG. */
static int input_is_slide(const char *path) {
  const char *vendor = openslide_detect_vendor(path);
  if (!vendor) return 0;
  if (strcmp(vendor, "generic-tiff") != 0) return 1;
  wsisa_slide *slide = NULL;
  if (wsisa_slide_open(path, &slide, NULL)) return 0;
  double mx, my;
  int yes = wsisa_slide_level_count(slide) > 1 || wsisa_slide_mpp(slide, &mx, &my) != WSISA_MPP_NONE;
  wsisa_slide_close(slide);
  return yes;
}

/* The target-pixel rectangle of slide `o->input` to segment: --region (level-0
 * pixels, widened to whole target pixels), --tile (the grid at the target
 * resolution) or the whole slide when it is small enough. */
static int slide_rect(const segment_opts *o, wsisa_slide *slide, const wsisa_scale *sc,
                      int64_t r[4], wsisa_err *e) {
  int rc;
  r[0] = r[1] = 0, r[2] = sc->width, r[3] = sc->height;
  if (o->region) {
    long q[4];
    wsisa_level l0;
    if ((rc = parse_ints("--region", o->region, q, 4, e)) ||
        (rc = wsisa_slide_level(slide, 0, &l0, e)))
      return rc;
    if (q[2] <= 0 || q[3] <= 0)
      return wsisa_error(e, WSISA_EUSAGE, "--region %s: width and height must be positive",
                         o->region);
    if (q[0] < 0 || q[1] < 0 || q[0] + q[2] > l0.width || q[1] + q[3] > l0.height)
      return wsisa_error(e, WSISA_EUSAGE,
                         "--region %s: outside level 0 of %s (%lldx%lld; regions are in "
                         "level-0 pixels)",
                         o->region, o->input, (long long)l0.width, (long long)l0.height);
    const double step = wsisa_scale_step(sc);
    int64_t x0 = (int64_t)floor((double)q[0] / step), y0 = (int64_t)floor((double)q[1] / step);
    int64_t x1 = (int64_t)ceil((double)(q[0] + q[2]) / step);
    int64_t y1 = (int64_t)ceil((double)(q[1] + q[3]) / step);
    if (x1 > sc->width) x1 = sc->width;
    if (y1 > sc->height) y1 = sc->height;
    if (x1 <= x0 || y1 <= y0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "--region %s: less than one pixel at %g um/pixel (one pixel is %g "
                         "level-0 pixels)",
                         o->region, sc->target_mpp, step);
    r[0] = x0, r[1] = y0, r[2] = x1 - x0, r[3] = y1 - y0;
  } else if (o->tile) {
    long ij[2];
    wsisa_grid *g = NULL;
    if ((rc = parse_ints("--tile", o->tile, ij, 2, e))) return rc;
    if (o->tile_size <= 0 || o->tile_size > 1L << 20)
      return wsisa_error(e, WSISA_EUSAGE, "--tile-size %ld: tile size must be positive",
                         o->tile_size);
    if ((rc = wsisa_grid_make_scaled(slide, sc, (int)o->tile_size, 0, &g, e))) return rc;
    if (ij[0] < 0 || ij[1] < 0 || ij[0] >= g->cols || ij[1] >= g->rows) {
      rc = wsisa_error(e, WSISA_EUSAGE,
                       "--tile %s: outside the %dx%d grid (columns 0..%d, rows 0..%d)", o->tile,
                       g->cols, g->rows, g->cols - 1, g->rows - 1);
    } else {
      const wsisa_tile *t = &g->tiles[ij[1] * g->cols + ij[0]];
      r[0] = t->x, r[1] = t->y, r[2] = t->width, r[3] = t->height;
    }
    wsisa_grid_free(g);
    if (rc) return rc;
  } else if ((double)sc->width * (double)sc->height > WHOLE_SLIDE_MAX_PIXELS) {
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: %lldx%lld pixels at %g um/pixel; choose a --region or --tile",
                       o->input, (long long)sc->width, (long long)sc->height, sc->target_mpp);
  }
  if (r[2] > INT32_MAX || r[3] > INT32_MAX)
    return wsisa_error(e, WSISA_EUSAGE, "%s: region too large to read at once", o->input);
  return 0;
}

/* The RGB input at the target resolution: an image file (resampled when --mpp
 * gives its pixel size), or a region, tile or (small) whole slide read at the
 * level and factor its MPP calls for; *at says where its pixels are. */
static int load_input(const segment_opts *o, wsisa_image **rgb, placement *at, wsisa_err *e) {
  *rgb = NULL;
  memset(at, 0, sizeof *at);
  at->is_slide = o->region || o->tile || input_is_slide(o->input);
  if (!at->is_slide) {
    int rc = wsisa_image_read_scaled(o->input, o->mpp, o->target_mpp, rgb, &at->scale, e);
    at->step = wsisa_scale_step(&at->scale);
    return rc;
  }
  wsisa_slide *slide = NULL;
  int64_t r[4] = {0, 0, 0, 0};
  wsisa_err open_err = WSISA_ERR_INIT;
  int rc = wsisa_slide_open(o->input, &slide, &open_err);
  /* an image file (which OpenSlide does not read) given --region or --tile */
  const char *kind = rc == WSISA_EFORMAT ? wsisa_image_file_kind(o->input) : NULL;
  if (kind && strcmp(kind, "TIFF") != 0)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s %s: %s applies to slides; %s is an image file (segment it whole, "
                       "or crop it first)",
                       o->region ? "--region" : "--tile", o->region ? o->region : o->tile,
                       o->region ? "--region" : "--tile", o->input);
  if (rc) return wsisa_error(e, rc, "%s", open_err.msg);
  /* the background, as run's stain check sees it: a coarse tissue mask */
  wsisa_image *tissue = NULL;
  double tissue_downsample;
  if (wsisa_tissue_mask(slide, 512, &tissue, &tissue_downsample, &at->dark_background, NULL) == 0)
    wsisa_image_free(tissue);
  if (!(rc = wsisa_scale_choose(slide, o->mpp, o->target_mpp, &at->scale, e)) &&
      !(rc = slide_rect(o, slide, &at->scale, r, e)))
    rc = wsisa_slide_read_scaled(slide, &at->scale, r[0], r[1], (int)r[2], (int)r[3], rgb, e);
  at->x = r[0], at->y = r[1];
  at->step = wsisa_scale_step(&at->scale);
  wsisa_slide_close(slide);
  return rc;
}

/* The segmentation, and the nucleus features when `features` is given: *features
 * (malloc'd) holds *nuclei rows of WSISA_NF_ROW(wsisa_workflow_channel_count()). */
static int run_segmentation(const segment_opts *o, wsisa_image *rgb, wsisa_image *mask,
                            wsisa_image *labels, double **features, size_t *nuclei,
                            wsisa_err *e) {
  starpu_data_handle_t hrgb = NULL, hmask = NULL, hlabels = NULL;
  wsisa_tile_data tile;
  int rc = wsisa_image_register(rgb, &hrgb, e);
  if (!rc) rc = wsisa_image_register(mask, &hmask, e);
  if (!rc && labels) rc = wsisa_image_register(labels, &hlabels, e);
  if (!rc) rc = wsisa_workflow_tile_submit(hrgb, rgb->width, rgb->height, o->normalize, &tile, e);
  if (!rc) {
    rc = wsisa_workflow_segment_submit(&tile, o->params, hmask, e);
    if (!rc && features) rc = wsisa_workflow_channels_submit(&tile, 0, e);
    if (!rc && features) rc = wsisa_workflow_features_compute(&tile, hmask, features, nuclei, e);
    wsisa_workflow_tile_release(&tile, o->normalize);
  }
  if (!rc && hlabels && wsisa_submit_label(hmask, hlabels, 4))
    rc = wsisa_error(e, WSISA_ERUNTIME, "cannot submit the labelling");
  starpu_task_wait_for_all();
  if (hlabels) starpu_data_unregister(hlabels);
  if (hmask) starpu_data_unregister(hmask);
  if (hrgb) starpu_data_unregister(hrgb);
  return rc;
}

/* features.csv: one row per nucleus; centroid and bounding box in level-0
 * pixels of the slide (pixels of the image file as read), QuPath's
 * convention, whatever level, factor or tile was read; the other columns in
 * segmented pixels. A centroid is a pixel index (pixel i spans [i, i + 1)),
 * mapped through the pixel centres: level-0 c0 = (x + c + 0.5) * step - 0.5. */
static int write_features(wsisa_stage *stage, const char *path, const double *rows, size_t n,
                          const placement *at, wsisa_err *e) {
  wsisa_csv_writer *w = NULL;
  int rc = wsisa_csv_create_staged(stage, path, &w, e);
  if (!rc) {
    const int ncols = WSISA_NF_ROW(wsisa_workflow_channel_count());
    char name[64];
    for (int c = 0; c < ncols; c++) {
      wsisa_workflow_feature_column(c, name, sizeof name);
      wsisa_csv_text(w, name);
    }
    wsisa_csv_end_row(w);
    const double step = at->step, ox = (double)at->x, oy = (double)at->y;
    for (size_t i = 0; i < n; i++) {
      const double *row = rows + i * (size_t)ncols;
      for (int c = 0; c < ncols; c++) {
        double v = row[c];
        if (c == WSISA_NF_CENTROID_X) v = (ox + v + 0.5) * step - 0.5;
        if (c == WSISA_NF_CENTROID_Y) v = (oy + v + 0.5) * step - 0.5;
        if (c == WSISA_NF_BBOX_X) v = (ox + v) * step;
        if (c == WSISA_NF_BBOX_Y) v = (oy + v) * step;
        if (c == WSISA_NF_BBOX_W || c == WSISA_NF_BBOX_H) v *= step;
        wsisa_csv_num(w, v);
      }
      wsisa_csv_end_row(w);
    }
    rc = wsisa_csv_close(w, e);
  }
  return rc;
}

/* The ImageDescription of the mask and labels TIFFs: where their pixels are
 * on the slide, so a viewer can put them back (level-0 x = level0_origin[0] +
 * x * level0_per_pixel, on pixel corners). */
static char *placement_json(const segment_opts *o, const placement *at) {
  const wsisa_scale *sc = &at->scale;
  json_t *j = json_pack("{s:s, s:s, s:s, s:[f, f], s:f, s:i, s:f, s:s}", "software",
                        "wsisa " WSISA_VERSION, "content", "nucleus segmentation", "source",
                        o->input, "level0_origin", (double)at->x * at->step,
                        (double)at->y * at->step, "level0_per_pixel", at->step, "level",
                        sc->level, "factor", sc->factor, "mpp_source",
                        wsisa_mpp_source_name(sc->source));
  if (!j) return NULL;
  json_object_set_new(j, "mpp", sc->source == WSISA_MPP_NONE ? json_null() : json_real(sc->target_mpp));
  json_object_set_new(j, "slide_mpp", sc->source == WSISA_MPP_NONE ? json_null() : json_real(sc->mpp));
  char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
  json_decref(j);
  return text;
}

/* A number as a person writes it: 220, 5, 2.5. */
static void num(char *buf, size_t cap, double v) { snprintf(buf, cap, "%g", v); }

/* The 15 parameters from sa/'s table: default, the range a study varies them
 * over by default, and what the segmentation accepts. */
static void usage_params(void) {
  printf("\nParameters (--params name=value,...; docs/workflow.md says what each does):\n"
         "  %-16s %-6s %-8s %-22s %s\n", "name", "paper", "default", "study range",
         "accepted");
  for (size_t i = 0; i < WSISA_SA_NSEG; i++) {
    const wsisa_sa_seg_param *p = &wsisa_sa_seg_params[i];
    char def[24], lo[24], hi[24], st[24], range[128], valid[128];
    num(def, sizeof def, p->def);
    num(lo, sizeof lo, p->lo);
    num(hi, sizeof hi, p->hi);
    num(st, sizeof st, p->step);
    if (p->kind == WSISA_SA_CATEGORICAL) {
      snprintf(range, sizeof range, "{%s, %s}", lo, hi);
      snprintf(valid, sizeof valid, "%g or %g", p->valid_lo, p->valid_hi);
    } else {
      if (p->kind == WSISA_SA_DISCRETE) snprintf(range, sizeof range, "%s..%s step %s", lo, hi, st);
      else snprintf(range, sizeof range, "%s..%s", lo, hi);
      if (p->valid_hi >= INT_MAX) snprintf(valid, sizeof valid, ">= %g", p->valid_lo);
      else snprintf(valid, sizeof valid, "%g..%g", p->valid_lo, p->valid_hi);
      if (p->integer_valued) snprintf(valid + strlen(valid), sizeof valid - strlen(valid), ", whole");
    }
    printf("  %-16s %-6s %-8s %-22s %s\n", p->name, p->abbrev, def, range, valid);
  }
}

static const wsisa_cli_flag flags[] = {
    {"INPUT", 0, .help = "a slide OpenSlide reads, or a PNG/TIFF image"},
    {"region", 'r', .arg = "x,y,w,h", .help = "slide region in level-0 pixels"},
    {"tile", 't', .arg = "i,j", .help = "slide tile (column, row) of the --tile-size grid"},
    {"tile-size", 's', .arg = "N",
     .help = "grid tile side for --tile, in target pixels (default 1024)"},
    {"target-mpp", 'T', .arg = "T",
     .help = "resolution segmented at, the parameters' (default %g um/pixel):\n"
             "a slide is read at the coarsest level not coarser than T and\n"
             "area-averaged to T unless within %.0f%%",
     .n = {WSISA_TARGET_MPP, 100 * WSISA_MPP_TOLERANCE}},
    {"mpp", 'm', .arg = "M",
     .help = "the slide's um/pixel at level 0, overriding what it says (or\n"
             "giving what it does not); for an image, its um/pixel, which\n"
             "makes it resampled to T (without --mpp it is taken as it is)"},
    {"params", 'p', .arg = "k=v,...",
     .help = "parameters (default: the workflow's defaults), e.g. G1=60,T1=4.5;\n"
             "--params @FILE: the same from a JSON object {\"G1\": 60, ...},\n"
             "or the \"parameters\" of one: --params @results/best.json\n"
             "reproduces a study's best run (later --params win)"},
    {"no-normalize", 'N', .help = "segment the pixels as they are (default: normalize first)"},
    {"no-stain-check", 'S',
     .help = "segment what is not bright-field H&E too (by default such\n"
             "input, e.g. fluorescence or DAB, is refused before any work)"},
    {"output", 'o', .arg = "MASK", .short_flag = 1,
     .help = "output mask, .png or .tif/.tiff (0/255)"},
    {"labels", 'L', .arg = "FILE", .help = "also write the nucleus labels (i32 .tif/.tiff)"},
    {"geojson", 'g', .arg = "FILE", .help = "also write the nucleus outlines as GeoJSON"},
    {"features", 'F', .arg = "FILE",
     .help = "also write per-nucleus features (.csv): shape, and\n"
             "statistics of haematoxylin, eosin, the gradient and\n"
             "filter-bank responses of haematoxylin"},
    /* accepted, not shown: normalizing is the default; --level is refused
       with a message saying what took its place */
    {.name = "normalize", .key = 'n'},
    {.name = "level", .key = 'l', .arg = "L"},
    {.name = "help", .key = 'h', .short_flag = 1},
    {0}};
static const char *const forms[] = {"INPUT [--region | --tile] [--params] [options] -o", NULL};
const wsisa_cli_command wsisa_cli_segment = {"segment", wsisa_cmd_segment, forms,
                                             "one segmentation", flags};

static void usage(void) {
  wsisa_cli_usage(stdout, &wsisa_cli_segment);
  printf("Positions are in level-0 slide pixels (QuPath's convention) whatever level,\n"
         "factor or tile was read: GeoJSON outlines, feature centroids and bounding boxes,\n"
         "and a TIFF mask's or labels' ImageDescription (JSON: level0_origin,\n"
         "level0_per_pixel, mpp). For an image, in its own pixels.\n");
  usage_params();
}

int wsisa_cmd_segment(int argc, char **argv, wsisa_err *e) {
  segment_opts o = {0};
  o.tile_size = 1024;
  o.normalize = 1;
  o.target_mpp = WSISA_TARGET_MPP;
  memcpy(o.params, wsisa_seg_defaults(), sizeof o.params);
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_segment)) != -1) {
    switch (opt) {
      case 'r': o.region = optarg; break;
      case 't': o.tile = optarg; break;
      case 'l':
        return wsisa_error(e, WSISA_EUSAGE,
                           "--level: no longer taken: the level is chosen from --target-mpp "
                           "(default %g um/pixel) and the slide's MPP (or --mpp)",
                           WSISA_TARGET_MPP);
      case 's': if ((rc = wsisa_cli_long("--tile-size", optarg, &o.tile_size, e))) return rc; break;
      case 'm': if ((rc = wsisa_cli_mpp("--mpp", optarg, &o.mpp, e))) return rc; break;
      case 'T': if ((rc = wsisa_cli_mpp("--target-mpp", optarg, &o.target_mpp, e))) return rc; break;
      case 'p': if ((rc = wsisa_seg_params_parse(optarg, o.params, e))) return rc; break;
      case 'n': o.normalize = 1; break;
      case 'N': o.normalize = 0; break;
      case 'o': o.out = optarg; break;
      case 'L': o.labels = optarg; break;
      case 'g': o.geojson = optarg; break;
      case 'F': o.features = optarg; break;
      case 'S': o.no_stain_check = 1; break;
      case 'h': usage(); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind >= argc) return wsisa_error(e, WSISA_EUSAGE, "missing INPUT argument");
  if (optind < argc - 1) return wsisa_error(e, WSISA_EUSAGE, "expected one INPUT, got more");
  o.input = argv[optind];
  if (!o.out) return wsisa_error(e, WSISA_EUSAGE, "missing -o MASK (the output mask file)");
  if (o.region && o.tile)
    return wsisa_error(e, WSISA_EUSAGE, "--region and --tile: give one or the other");
  static const char *const mask_exts[] = {".png", ".tif", ".tiff", NULL};
  static const char *const tiff_exts[] = {".tif", ".tiff", NULL};
  static const char *const json_exts[] = {".geojson", ".json", NULL};
  static const char *const csv_exts[] = {".csv", NULL};
  if ((rc = check_output_path("-o", o.out, mask_exts, e))) return rc;
  if (o.labels && (rc = check_output_path("--labels", o.labels, tiff_exts, e))) return rc;
  if (o.geojson && (rc = check_output_path("--geojson", o.geojson, json_exts, e))) return rc;
  if (o.features && (rc = check_output_path("--features", o.features, csv_exts, e))) return rc;
  /* an output that is the input (or another output) would destroy it */
  const char *const flags[] = {"-o", "--labels", "--geojson", "--features"};
  const char *const outs[] = {o.out, o.labels, o.geojson, o.features};
  for (int i = 0; i < 4; i++) {
    if (outs[i] && (rc = wsisa_output_check(flags[i], outs[i], &o.input, 1, e))) return rc;
    for (int j = 0; j < i && outs[i]; j++)
      if (outs[j] && (strcmp(outs[i], outs[j]) == 0 || wsisa_same_file(outs[i], outs[j])))
        return wsisa_error(e, WSISA_EUSAGE, "%s %s: also given as %s", flags[i], outs[i],
                           flags[j]);
  }

  wsisa_image *rgb = NULL, *mask = NULL, *labels = NULL;
  double *features = NULL;
  size_t nfeatures = 0;
  char *meta = NULL;
  placement at;
  if ((rc = load_input(&o, &rgb, &at, e))) return rc;
  /* the parameters are tuned for bright-field H&E: refused before any work,
   * as `wsisa run` refuses it */
  if (!o.no_stain_check &&
      (rc = wsisa_stain_check_image(rgb, at.dark_background, o.input, "give --no-stain-check",
                                    e)))
    goto done;
  if ((rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_U8, &mask, e))) goto done;
  if ((o.labels || o.geojson) &&
      (rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_I32, &labels, e)))
    goto done;
  if (!(meta = placement_json(&o, &at))) {
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = wsisa_codelets_start(NULL, e))) goto done;
  rc = run_segmentation(&o, rgb, mask, labels, o.features ? &features : NULL, &nfeatures, e);
  wsisa_runtime_shutdown();
  if (rc) goto done;
  /* a pixel size only when known: an image taken as it is has none */
  const double mpp = at.scale.source == WSISA_MPP_NONE ? 0 : at.scale.target_mpp;
  /* every output appears together, or none does */
  wsisa_stage stage = WSISA_STAGE_INIT;
  rc = wsisa_image_write_staged(&stage, o.out, mask, meta, mpp, e);
  if (!rc && o.labels) rc = wsisa_image_write_staged(&stage, o.labels, labels, meta, mpp, e);
  if (!rc && o.geojson)
    rc = wsisa_geojson_write_staged(&stage, o.geojson, labels, (double)at.x * at.step,
                                    (double)at.y * at.step, at.step, e);
  if (!rc && o.features) rc = write_features(&stage, o.features, features, nfeatures, &at, e);
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc) {
    wsisa_stage_abort(&stage);
    goto done;
  }
  {
    size_t on = 0;
    int32_t nuclei = 0;
    for (int y = 0; y < mask->height; y++) {
      const uint8_t *m = wsisa_image_row(mask, y);
      for (int x = 0; x < mask->width; x++) on += m[x] != 0;
      if (labels) {
        const int32_t *l = wsisa_image_row(labels, y);
        for (int x = 0; x < labels->width; x++) nuclei = l[x] > nuclei ? l[x] : nuclei;
      }
    }
    printf("%s: %dx%d, %zu nucleus pixels (%.2f%%)", o.out, mask->width, mask->height, on,
           100.0 * (double)on / ((double)mask->width * mask->height));
    if (labels) printf(", %d nuclei", nuclei);
    else if (o.features) printf(", %zu nuclei", nfeatures);
    printf("\n");
    if (at.is_slide)
      printf("read at %g um/pixel: level %d, factor %g; level-0 rectangle %.0f,%.0f,%.0f,%.0f\n",
             at.scale.target_mpp, at.scale.level, at.scale.factor, (double)at.x * at.step,
             (double)at.y * at.step, mask->width * at.step, mask->height * at.step);
  }
done:
  wsisa_image_free(rgb);
  wsisa_image_free(mask);
  wsisa_image_free(labels);
  free(features);
  free(meta);
  return rc;
}
