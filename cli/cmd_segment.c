/* `wsisa segment`: one segmentation of an image file or a slide region with
 * the default or given parameters; writes the mask, optionally the labels, a
 * GeoJSON of the nucleus outlines and a CSV of per-nucleus features. With
 * --all (or --tiles), every tile of a whole slide (engine/run/slide.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/exec/exec.h"
#include "engine/run/run.h"
#include "io/csv.h"
#include "io/io.h"
#include "sa/sa.h"

typedef struct segment_opts {
  const char *out, *labels, *geojson, *features;
  const char *region, *tile;
  /* the whole slide */
  int all, force;
  const char *tiles, *summary, *density, *work;
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

/* An output of a known type (or a device, written in place) in a folder
 * that can be written. */
static int check_output_path(const char *flag, const char *path, const char *const *exts,
                             wsisa_err *e) {
  int rc = wsisa_output_type(flag, path, exts, e);
  if (rc) return rc;
  if (wsisa_output_in_place(path)) {
    /* a TIFF is written by seeking back: only into a regular file */
    static const char *const tiff[] = {".tif", ".tiff", NULL};
    if (strcmp(exts[0], ".tif") == 0 || wsisa_path_has_ext(path, tiff))
      return wsisa_error(e, WSISA_EUSAGE, "%s %s: a TIFF needs a regular file, not a device",
                         flag, path);
    return 0;
  }
  char dir[WSISA_PATH_MAX];
  if ((rc = wsisa_path_fmt_err(dir, e, "%s", path))) return rc;
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else strcpy(dir, ".");
  if (access(dir, W_OK) != 0)
    return wsisa_error(e, WSISA_EIO, "%s %s: cannot write in %s (%s)", flag, path, dir,
                       strerror(errno));
  return 0;
}

/* --halo: "auto" (-1) or whole target pixels, as inputs.halo takes them. */
static int parse_halo(const char *text, int *halo, wsisa_err *e) {
  if (strcmp(text, "auto") == 0) {
    *halo = -1;
    return 0;
  }
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end || errno || v < 0 || v > 1L << 16)
    return wsisa_error(e, WSISA_EUSAGE,
                       "--halo %s: give auto or a whole number of pixels (0 to %ld)", text,
                       1L << 16);
  *halo = (int)v;
  return 0;
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
    {.shared = WSISA_FLAG_TILE},
    {.shared = WSISA_FLAG_TILE_SIZE, .note = "the grid of --tile, --all and --tiles"},
    {.shared = WSISA_FLAG_TARGET_MPP,
     .note = "segmented at T; at another T the size parameters scale\n"
             "(areas by the square); a coarser slide is refused"},
    {.shared = WSISA_FLAG_MPP,
     .note = "for an image, its um/pixel, which makes it resampled to T\n"
             "(without --mpp it is taken as it is)"},
    {"params", 'p', .arg = "k=v,...",
     .help = "parameters (default: the workflow's defaults), e.g. G1=60,T1=4.5;\n"
             "--params @FILE: the same from a JSON object {\"G1\": 60, ...},\n"
             "or the \"parameters\" of one: --params @results/best.json\n"
             "reproduces a study's best run (later --params win)"},
    {"halo", 'H', .arg = "PX|auto",
     .help = "a slide's region or tile is read with PX target pixels around\n"
             "it (as far as the slide goes) and keeps the nuclei whose\n"
             "centroid lies in it, whole, as `wsisa run` reads its tiles\n"
             "(inputs.halo); auto (default): what the parameters can see\n"
             "(docs/workflow.md, Tiles); 0: the region alone"},
    {"normalization", 'Z', .arg = "slide|tile",
     .help = "colour statistics a slide's pixels are normalized with\n"
             "(inputs.normalization): slide (default), the slide's from its\n"
             "tissue, as `wsisa run`; tile, those of the pixels read"},
    {"no-normalize", 'N', .help = "segment the pixels as they are (default: normalize first)"},
    {"no-stain-check", 'S',
     .help = "segment what is not bright-field H&E too (by default dark\n"
             "field, greyscale, DAB-dominant IHC and no tissue are refused\n"
             "before any work, docs/guide.md, The stain check)"},
    {"all", 'A',
     .help = "the whole slide: every tissue tile of the --tile-size grid\n"
             "(within --region when given), many at once on every worker\n"
             "and MPI rank, the colour statistics computed once; the\n"
             "nuclei numbered across the slide (see below)"},
    {"tiles", 'I', .arg = "LIST",
     .help = "the whole-slide mode on these grid tiles: indices and ranges,\n"
             "e.g. 3,5,7-9 (wsisa tiles --json gives each tile's index)"},
    {"summary", 'Y', .arg = "FILE",
     .help = "with --all: per tile, its nuclei, tissue mm2 and nuclei per\n"
             "mm2 (.csv)"},
    {"density", 'D', .arg = "FILE",
     .help = "with --all: a map of nuclei per mm2 over the tile grid (.svg)"},
    {"work", 'W', .arg = "DIR",
     .help = "with --all: the folder tiles are journaled in until the\n"
             "outputs are written (default: the first output's name +\n"
             ".parts); the same command goes on from it after an\n"
             "interruption"},
    {.shared = WSISA_FLAG_FORCE, .note = "with --all, outputs that exist are replaced"},
    {.shared = WSISA_FLAG_OUTPUT, .arg = "MASK",
     .note = "the mask, .png or .tif/.tiff (0/255); with --all, the\n"
             "optional label image as a tiled pyramidal TIFF (.tif)"},
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
    {.shared = WSISA_FLAG_HELP},
    {0}};
static const char *const forms[] = {"INPUT [--region | --tile] [--params] [options] -o",
                                    "SLIDE --all [--region | --tiles] [--params] [options] "
                                    "[--geojson] [--features] [--summary] [--density] [-o]",
                                    NULL};
const wsisa_cli_command wsisa_cli_segment = {"segment", wsisa_cmd_segment, forms,
                                             "one segmentation", flags};

static void usage(void) {
  wsisa_cli_usage(stdout, &wsisa_cli_segment);
  printf("Positions are in level-0 slide pixels (QuPath's convention) whatever level,\n"
         "factor or tile was read, on pixel corners (pixel i spans [i, i+1), its centre\n"
         "at i+0.5): GeoJSON outlines, feature centroids and bounding boxes, and a TIFF\n"
         "mask's or labels' ImageDescription (JSON: level0_origin, level0_per_pixel, mpp).\n"
         "For an image, in its own pixels. Areas: features' area in segmented pixels,\n"
         "area_level0_pixels and area_um2; GeoJSON's area_level0_pixels and area_um2.\n"
         "Printed: nuclei per mm2 of tissue and the median nucleus area in um2 at the\n"
         "pixel size read (a median outside %g-%g um2 warns that it looks wrong).\n"
         "A slide's region or tile is read and kept as `wsisa run` keeps its tiles:\n"
         "the mask and labels cover the region, the nuclei whose centroid lies in it;\n"
         "the count, the GeoJSON and the features take those nuclei whole (up to the\n"
         "halo past the region's edge). An image file (PNG, TIFF that is not a\n"
         "slide) has no neighbours: it is read whole, with its own statistics.\n"
         "\n"
         "The whole slide (--all, --tiles): each tile read and kept as above, its nuclei\n"
         "numbered across the slide (nucleus_id 1, 2, ... in tile order, then in each\n"
         "tile's order), the same in every output: the GeoJSON (a Feature's id is a UUID\n"
         "of the slide and that number, its properties nucleus_id and tile; every vertex\n"
         "on the slide), the features CSV (nucleus_id and tile first), the summary and\n"
         "the label image (-o: RGB = nucleus_id as 24 bits, 0 none; a tiled pyramid at\n"
         "the pixel size read whose pixel (i, j) is level-0 (i, j) x level0_per_pixel,\n"
         "OpenSlide and QuPath open it). Each tile is journaled in the work folder as it\n"
         "ends; the outputs appear together once every tile is done, and the folder\n"
         "goes. Interrupted (Ctrl-C, kill, a lost machine), the same command goes on\n"
         "from the tiles journaled and writes the same outputs. Under mpirun, ranks\n"
         "other than 0 segment the tiles rank 0 hands out.\n",
         WSISA_NUCLEUS_AREA_MIN_UM2, WSISA_NUCLEUS_AREA_MAX_UM2);
  usage_params();
}

/* --all, --tiles: the whole slide's nuclei (engine/run/slide.c). */
static int segment_all(const segment_opts *o, const wsisa_segment_request *q, wsisa_err *e) {
  if (o->tile)
    return wsisa_error(e, WSISA_EUSAGE, "--tile and %s: give one tile, or the tiles of the slide",
                       o->all ? "--all" : "--tiles");
  if (o->tiles && o->region)
    return wsisa_error(e, WSISA_EUSAGE, "--tiles and --region: give the tiles or a region");
  if (o->labels)
    return wsisa_error(e, WSISA_EUSAGE,
                       "--labels: with --all the label image is -o LABELS.tif (a pyramid)");
  wsisa_slide_segment_request r = {
      .slide = q->input, .tiles = o->tiles, .tile_size = q->tile_size, .mpp = q->mpp,
      .target_mpp = q->target_mpp, .halo = q->halo, .normalize = q->normalize,
      .tile_stats = q->tile_stats, .stain_check = q->stain_check, .geojson = o->geojson,
      .features = o->features, .summary = o->summary, .density = o->density, .labels = o->out,
      .work = o->work, .force = o->force};
  memcpy(r.params, q->params, sizeof r.params);
  if (o->region) {
    long v[4];
    int rc = parse_ints("--region", o->region, v, 4, e);
    if (rc) return rc;
    r.has_region = 1;
    for (int i = 0; i < 4; i++) r.region[i] = v[i];
  }
  return wsisa_slide_segment(&r, e);
}

int wsisa_cmd_segment(int argc, char **argv, wsisa_err *e) {
  segment_opts o = {0};
  wsisa_segment_request q;
  wsisa_segment_request_init(&q, NULL);
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_segment)) != -1) {
    switch (opt) {
      case 'r': o.region = optarg; break;
      case WSISA_FLAG_TILE: o.tile = optarg; break;
      case 'l':
        return wsisa_error(e, WSISA_EUSAGE,
                           "--level: no longer taken: the level is chosen from --target-mpp "
                           "(default %g um/pixel) and the slide's MPP (or --mpp)",
                           WSISA_TARGET_MPP);
      case WSISA_FLAG_TILE_SIZE:
        if ((rc = wsisa_cli_long("--tile-size", optarg, &q.tile_size, e))) return rc;
        break;
      case WSISA_FLAG_MPP: if ((rc = wsisa_cli_mpp("--mpp", optarg, &q.mpp, e))) return rc; break;
      case WSISA_FLAG_TARGET_MPP:
        if ((rc = wsisa_cli_mpp("--target-mpp", optarg, &q.target_mpp, e))) return rc;
        break;
      case 'p': if ((rc = wsisa_seg_params_parse(optarg, q.params, e))) return rc; break;
      case 'n': q.normalize = 1; break;
      case 'N': q.normalize = 0; break;
      case 'H': if ((rc = parse_halo(optarg, &q.halo, e))) return rc; break;
      case 'Z':
        if (strcmp(optarg, "slide") == 0) q.tile_stats = 0;
        else if (strcmp(optarg, "tile") == 0) q.tile_stats = 1;
        else
          return wsisa_error(e, WSISA_EUSAGE, "--normalization %s: give slide or tile", optarg);
        break;
      case WSISA_FLAG_OUTPUT: o.out = optarg; break;
      case 'L': o.labels = optarg; break;
      case 'g': o.geojson = optarg; break;
      case 'F': o.features = optarg; break;
      case 'S': q.stain_check = 0; break;
      case 'A': o.all = 1; break;
      case 'I': o.tiles = optarg; break;
      case 'Y': o.summary = optarg; break;
      case 'D': o.density = optarg; break;
      case 'W': o.work = optarg; break;
      case WSISA_FLAG_FORCE: o.force = 1; break;
      case WSISA_FLAG_HELP: usage(); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind >= argc) return wsisa_error(e, WSISA_EUSAGE, "missing INPUT argument");
  if (optind < argc - 1) return wsisa_error(e, WSISA_EUSAGE, "expected one INPUT, got more");
  q.input = argv[optind];
  if (o.all || o.tiles) return segment_all(&o, &q, e);
  if (o.summary || o.density || o.work || o.force)
    return wsisa_error(e, WSISA_EUSAGE, "%s: applies to the whole slide (--all or --tiles)",
                       o.summary ? "--summary" : o.density ? "--density" : o.work ? "--work"
                                                                                  : "--force");
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
    if (outs[i] && (rc = wsisa_output_check(flags[i], outs[i], &q.input, 1, e))) return rc;
    for (int j = 0; j < i && outs[i]; j++)
      if (outs[j] && (strcmp(outs[i], outs[j]) == 0 || wsisa_same_file(outs[i], outs[j])))
        return wsisa_error(e, WSISA_EUSAGE, "%s %s: also given as %s", flags[i], outs[i],
                           flags[j]);
  }
  if (o.region) {
    long r[4];
    if ((rc = parse_ints("--region", o.region, r, 4, e))) return rc;
    q.has_region = 1;
    for (int i = 0; i < 4; i++) q.region[i] = r[i];
  }
  if (o.tile) {
    if ((rc = parse_ints("--tile", o.tile, q.tile, 2, e))) return rc;
    q.has_tile = 1;
  }
  q.features = o.features != NULL;

  wsisa_segment_result res;
  if ((rc = wsisa_segment_run(&q, &res, e))) return rc;
  const wsisa_segment_outputs to = {o.out, o.labels, o.geojson, o.features};
  if (!(rc = wsisa_segment_write(&res, &to, e))) {
    /* the mask written: the region's pixels */
    const int w = res.tile.width, h = res.tile.height;
    printf("%s: %dx%d, %llu nucleus pixels (%.2f%%)", o.out, w, h,
           (unsigned long long)res.mask_pixels, 100.0 * (double)res.mask_pixels / ((double)w * h));
    printf(", %ld nuclei\n", res.nuclei);
    const double tissue_mm2 = (double)res.tissue_pixels * res.pixel_mpp * res.pixel_mpp * 1e-6;
    printf("%.0f nuclei per mm2 of tissue (%.4g mm2 at %.4g um/pixel), median area %.3g um2\n",
           res.nuclei_per_mm2, tissue_mm2, res.pixel_mpp, res.median_area_um2);
    if (res.warning[0]) fprintf(stderr, "wsisa segment: warning: %s\n", res.warning);
    char where[256];
    wsisa_segment_describe(&res, where, sizeof where);
    if (where[0]) printf("%s\n", where);
  }
  wsisa_segment_result_free(&res);
  return rc;
}
