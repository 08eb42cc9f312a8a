/* `wsisa segment`: one segmentation of an image file or a slide region with
 * the default or given parameters; writes the mask, optionally the labels, a
 * GeoJSON of the nucleus outlines and a CSV of per-nucleus features. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openslide/openslide.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/engine.h"
#include "io/csv.h"
#include "io/io.h"

#define WHOLE_SLIDE_MAX_PIXELS (64.0 * 1024 * 1024)

typedef struct segment_opts {
  const char *input, *out, *labels, *geojson, *features;
  const char *region, *tile;
  long level, tile_size;
  int normalize;
  double params[WSISA_SEG_NPARAMS];
} segment_opts;

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

/* The RGB input: an image file, or a region, tile or (small) whole level of a
 * slide; origin = its top-left pixel in the slide level (0, 0 for a file). */
static int load_input(const segment_opts *o, wsisa_image **rgb, int64_t origin[2],
                      wsisa_err *e) {
  *rgb = NULL;
  origin[0] = origin[1] = 0;
  int is_slide = o->region || o->tile;
  if (!is_slide) {
    const char *vendor = openslide_detect_vendor(o->input);
    is_slide = vendor && strcmp(vendor, "generic-tiff") != 0;
  }
  if (!is_slide) return wsisa_image_read_rgb(o->input, rgb, e);
  wsisa_slide *slide = NULL;
  int rc = wsisa_slide_open(o->input, &slide, e);
  if (rc) return rc;
  wsisa_level lv;
  if ((rc = wsisa_slide_level(slide, (int)o->level, &lv, e))) goto done;
  long r[4] = {0, 0, (long)lv.width, (long)lv.height};
  if (o->region) {
    if ((rc = parse_ints("--region", o->region, r, 4, e))) goto done;
  } else if (o->tile) {
    long ij[2];
    wsisa_grid *g = NULL;
    if ((rc = parse_ints("--tile", o->tile, ij, 2, e))) goto done;
    if (o->tile_size <= 0 || o->tile_size > 1L << 20) {
      rc = wsisa_error(e, WSISA_EUSAGE, "--tile-size %ld: tile size must be positive", o->tile_size);
      goto done;
    }
    if ((rc = wsisa_grid_make(slide, (int)o->level, (int)o->tile_size, 0, &g, e))) goto done;
    if (ij[0] < 0 || ij[1] < 0 || ij[0] >= g->cols || ij[1] >= g->rows) {
      rc = wsisa_error(e, WSISA_EUSAGE, "--tile %s: outside the %dx%d grid (columns 0..%d, rows 0..%d)",
                       o->tile, g->cols, g->rows, g->cols - 1, g->rows - 1);
    } else {
      const wsisa_tile *t = &g->tiles[ij[1] * g->cols + ij[0]];
      r[0] = (long)t->x, r[1] = (long)t->y, r[2] = t->width, r[3] = t->height;
    }
    wsisa_grid_free(g);
    if (rc) goto done;
  } else if ((double)lv.width * (double)lv.height > WHOLE_SLIDE_MAX_PIXELS) {
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: level %ld is %lldx%lld; choose a --region or --tile",
                     o->input, o->level, (long long)lv.width, (long long)lv.height);
    goto done;
  }
  if (r[2] <= 0 || r[3] <= 0 || r[2] > INT32_MAX || r[3] > INT32_MAX) {
    rc = wsisa_error(e, WSISA_EUSAGE, "--region %s: width and height must be positive", o->region);
    goto done;
  }
  rc = wsisa_slide_read_rgb(slide, (int)o->level, r[0], r[1], (int)r[2], (int)r[3], rgb, e);
  origin[0] = r[0], origin[1] = r[1];
done:
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

/* features.csv: one row per nucleus; positions in pixels of the slide level
 * (the region's origin added) or of the image file. */
static int write_features(const char *path, const double *rows, size_t n,
                          const int64_t origin[2], wsisa_err *e) {
  wsisa_stage stage = WSISA_STAGE_INIT;
  wsisa_csv_writer *w = NULL;
  const char *temp = wsisa_stage_add(&stage, path, e);
  if (!temp) return e && e->code ? e->code : WSISA_ENOMEM;
  int rc = wsisa_csv_create(temp, &w, e);
  if (!rc) {
    const int ncols = WSISA_NF_ROW(wsisa_workflow_channel_count());
    char name[64];
    for (int c = 0; c < ncols; c++) {
      wsisa_workflow_feature_column(c, name, sizeof name);
      wsisa_csv_text(w, name);
    }
    wsisa_csv_end_row(w);
    for (size_t i = 0; i < n; i++) {
      const double *row = rows + i * (size_t)ncols;
      for (int c = 0; c < ncols; c++) {
        double v = row[c];
        if (c == WSISA_NF_CENTROID_X || c == WSISA_NF_BBOX_X) v += (double)origin[0];
        if (c == WSISA_NF_CENTROID_Y || c == WSISA_NF_BBOX_Y) v += (double)origin[1];
        wsisa_csv_num(w, v);
      }
      wsisa_csv_end_row(w);
    }
    rc = wsisa_csv_close(w, e);
  }
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc) wsisa_stage_abort(&stage);
  return rc;
}

static void usage(void) {
  printf("usage: wsisa segment INPUT [--region x,y,w,h | --tile i,j] [options] -o MASK\n"
         "  INPUT               a PNG/TIFF image or a slide OpenSlide reads\n"
         "  --region x,y,w,h    slide region in pixels of --level\n"
         "  --tile i,j          slide tile (column, row) of the --tile-size grid\n"
         "  --level L           slide level (default 0)\n"
         "  --tile-size N       grid tile side for --tile (default 1024)\n"
         "  --params k=v,...    parameters (default: the workflow's defaults), e.g. G1=60,T1=4.5\n"
         "  --no-normalize      segment the pixels as they are (default: normalize first)\n"
         "  -o MASK             output mask, .png or .tif/.tiff (0/255)\n"
         "  --labels FILE       also write the nucleus labels (i32 .tif/.tiff)\n"
         "  --geojson FILE      also write the nucleus outlines as GeoJSON\n"
         "  --features FILE     also write per-nucleus features (.csv): shape, and\n"
         "                      statistics of haematoxylin, eosin, the gradient and\n"
         "                      filter-bank responses of haematoxylin\n");
}

int wsisa_cmd_segment(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {
      {"region", required_argument, 0, 'r'}, {"tile", required_argument, 0, 't'},
      {"level", required_argument, 0, 'l'},  {"tile-size", required_argument, 0, 's'},
      {"params", required_argument, 0, 'p'}, {"normalize", no_argument, 0, 'n'},
      {"no-normalize", no_argument, 0, 'N'}, {"output", required_argument, 0, 'o'},
      {"labels", required_argument, 0, 'L'}, {"geojson", required_argument, 0, 'g'},
      {"features", required_argument, 0, 'F'},
      {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  segment_opts o = {0};
  o.tile_size = 1024;
  o.normalize = 1;
  memcpy(o.params, wsisa_seg_defaults(), sizeof o.params);
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (opt) {
      case 'r': o.region = optarg; break;
      case 't': o.tile = optarg; break;
      case 'l': if ((rc = wsisa_cli_long("--level", optarg, &o.level, e))) return rc; break;
      case 's': if ((rc = wsisa_cli_long("--tile-size", optarg, &o.tile_size, e))) return rc; break;
      case 'p': if ((rc = wsisa_seg_params_parse(optarg, o.params, e))) return rc; break;
      case 'n': o.normalize = 1; break;
      case 'N': o.normalize = 0; break;
      case 'o': o.out = optarg; break;
      case 'L': o.labels = optarg; break;
      case 'g': o.geojson = optarg; break;
      case 'F': o.features = optarg; break;
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

  wsisa_image *rgb = NULL, *mask = NULL, *labels = NULL;
  double *features = NULL;
  size_t nfeatures = 0;
  int64_t origin[2];
  if ((rc = load_input(&o, &rgb, origin, e))) return rc;
  if ((rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_U8, &mask, e))) goto done;
  if ((o.labels || o.geojson) &&
      (rc = wsisa_image_new(rgb->width, rgb->height, 1, WSISA_I32, &labels, e)))
    goto done;
  if ((rc = wsisa_codelets_start(NULL, e))) goto done;
  rc = run_segmentation(&o, rgb, mask, labels, o.features ? &features : NULL, &nfeatures, e);
  wsisa_runtime_shutdown();
  if (rc) goto done;
  if ((rc = wsisa_image_write(o.out, mask, e))) goto done;
  if (o.labels && (rc = wsisa_image_write(o.labels, labels, e))) goto done;
  if (o.geojson && (rc = wsisa_geojson_write(o.geojson, labels, e))) goto done;
  if (o.features && (rc = write_features(o.features, features, nfeatures, origin, e))) goto done;
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
  }
done:
  wsisa_image_free(rgb);
  wsisa_image_free(mask);
  wsisa_image_free(labels);
  free(features);
  return rc;
}
