/* `wsisa tiles SLIDE`: the slide's properties and MPP, the level and factor
 * that read it at the target resolution, its tile grid at that resolution
 * with each tile's rectangle in level-0 pixels, and which tiles hold tissue.
 * `wsisa tiles --study S.json`: the tiles the study runs (inputs.tiles). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/study/study.h"
#include "io/io.h"

static void print_text(wsisa_slide *slide, const wsisa_grid *g) {
  const wsisa_scale *s = &g->scale;
  printf("slide     %s\n", wsisa_slide_path(slide));
  printf("vendor    %s\n", wsisa_slide_vendor(slide));
  printf("mpp       %.4f x %.4f um/pixel at level 0, from %s\n", s->mpp_x, s->mpp_y,
         wsisa_mpp_source_text(s->source));
  double obj = wsisa_slide_objective(slide);
  if (obj > 0) printf("objective %gx\n", obj);
  printf("levels    %d\n", wsisa_slide_level_count(slide));
  for (int l = 0; l < wsisa_slide_level_count(slide); l++) {
    wsisa_level lv;
    if (wsisa_slide_level(slide, l, &lv, NULL)) continue;
    printf("  level %d  %lld x %lld  downsample %g  %.4f um/pixel\n", l, (long long)lv.width,
           (long long)lv.height, lv.downsample, s->mpp * lv.downsample);
  }
  if (s->factor_q == WSISA_SCALE_ONE)
    printf("target    %g um/pixel: level %d (%.4f um/pixel) as it is, within %.0f%% (factor 1)\n",
           s->target_mpp, s->level, s->level_mpp, 100 * WSISA_MPP_TOLERANCE);
  else
    printf("target    %g um/pixel: level %d (%.4f um/pixel) area-averaged by factor %.6g\n",
           s->target_mpp, s->level, s->level_mpp, s->factor);
  printf("grid      %lld x %lld target pixels, tile %d, overlap %d: %d x %d = %zu tiles; "
         "1 target pixel = %.6g level-0 pixels\n",
         (long long)g->width, (long long)g->height, g->tile_size, g->overlap, g->cols, g->rows,
         g->ntiles, wsisa_scale_step(s));
  printf("tissue    %zu of %zu tiles (tissue covers >= %.0f%% of the tile%s)\n", g->ntissue,
         g->ntiles, 100.0 * g->tissue_threshold,
         g->dark_background ? "; dark background: lit pixels are tissue" : "");
  for (int r = 0; r < g->rows; r++) {
    printf("  ");
    for (int c = 0; c < g->cols; c++) putchar(g->tiles[(size_t)r * g->cols + c].tissue ? '#' : '.');
    putchar('\n');
  }
  printf("tiles     col,row  target x,y,w,h  level-0 x,y,w,h  tissue\n");
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *t = &g->tiles[i];
    printf("  %d,%d  %lld,%lld,%d,%d  %lld,%lld,%lld,%lld  %.3f%s\n", t->col, t->row,
           (long long)t->x, (long long)t->y, t->width, t->height, (long long)t->level0.x,
           (long long)t->level0.y, (long long)t->level0.width, (long long)t->level0.height,
           t->tissue_fraction, t->tissue ? " #" : "");
  }
}

static int print_json(wsisa_slide *slide, const wsisa_grid *g, wsisa_err *e) {
  const wsisa_scale *s = &g->scale;
  json_t *root = json_object(), *levels = json_array(), *tiles = json_array();
  json_object_set_new(root, "slide", json_string(wsisa_slide_path(slide)));
  json_object_set_new(root, "vendor", json_string(wsisa_slide_vendor(slide)));
  json_object_set_new(root, "mpp_x", json_real(s->mpp_x));
  json_object_set_new(root, "mpp_y", json_real(s->mpp_y));
  json_object_set_new(root, "mpp_source", json_string(wsisa_mpp_source_name(s->source)));
  double obj = wsisa_slide_objective(slide);
  json_object_set_new(root, "objective_power", obj > 0 ? json_real(obj) : json_null());
  for (int l = 0; l < wsisa_slide_level_count(slide); l++) {
    wsisa_level lv;
    if (wsisa_slide_level(slide, l, &lv, NULL)) continue;
    json_array_append_new(levels, json_pack("{s:i, s:I, s:I, s:f, s:f}", "level", l, "width",
                                            (json_int_t)lv.width, "height",
                                            (json_int_t)lv.height, "downsample",
                                            lv.downsample, "mpp", s->mpp * lv.downsample));
  }
  json_object_set_new(root, "levels", levels);
  json_object_set_new(root, "scale",
                      json_pack("{s:f, s:i, s:f, s:f, s:b, s:f}", "target_mpp", s->target_mpp,
                                "level", s->level, "level_mpp", s->level_mpp, "factor",
                                s->factor, "resampled", s->factor_q != WSISA_SCALE_ONE,
                                "level0_per_pixel", wsisa_scale_step(s)));
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *t = &g->tiles[i];
    json_array_append_new(
        tiles, json_pack("{s:i, s:i, s:i, s:I, s:I, s:i, s:i, s:{s:I, s:I, s:I, s:I}, s:f, s:b}",
                         "index", t->index, "col", t->col, "row", t->row, "x", (json_int_t)t->x,
                         "y", (json_int_t)t->y, "width", t->width, "height", t->height,
                         "level0", "x", (json_int_t)t->level0.x, "y", (json_int_t)t->level0.y,
                         "width", (json_int_t)t->level0.width, "height",
                         (json_int_t)t->level0.height, "tissue_fraction", t->tissue_fraction,
                         "tissue", t->tissue));
  }
  json_object_set_new(root, "grid",
                      json_pack("{s:i, s:I, s:I, s:i, s:i, s:i, s:i, s:I, s:I, s:f, s:b, s:o}",
                                "level", g->level, "width", (json_int_t)g->width, "height",
                                (json_int_t)g->height, "tile_size", g->tile_size, "overlap",
                                g->overlap, "cols", g->cols, "rows", g->rows, "tiles",
                                (json_int_t)g->ntiles, "tissue_tiles", (json_int_t)g->ntissue,
                                "tissue_threshold", g->tissue_threshold, "dark_background",
                                g->dark_background, "tile_list", tiles));
  int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0 ? 0 : -1;
  json_decref(root);
  if (rc)
    return wsisa_error(e, WSISA_EIO, "standard output: %s", errno ? strerror(errno) : "write error");
  putchar('\n');
  return 0;
}

static const wsisa_cli_flag flags[] = {
    {.shared = WSISA_FLAG_TILE_SIZE},
    {"overlap", 'v', .arg = "N", .help = "target pixels shared by neighbouring tiles (default 0)"},
    {.shared = WSISA_FLAG_MPP},
    {.shared = WSISA_FLAG_TARGET_MPP, .note = "the grid is laid out at T"},
    {.shared = WSISA_FLAG_STUDY,
     .note = "instead of SLIDE: the tiles the study runs (its slides' grids\n"
             "with inputs.tiles and inputs.reference applied)"},
    {.shared = WSISA_FLAG_JSON},
    {.shared = WSISA_FLAG_HELP},
    /* accepted, not shown: --tile is a tile's place in every command; the
       side it once gave here is refused with a message naming --tile-size */
    {.name = "tile", .key = 't', .arg = "N"},
    {0}};
static const char *const forms[] = {"SLIDE [--tile-size] [--overlap] [--mpp] [--target-mpp] [--json]",
                                    "--study [--json]", NULL};
const wsisa_cli_command wsisa_cli_tiles = {"tiles", wsisa_cmd_tiles, forms,
                                           "slide levels, tile grid, tissue tiles", flags};

/* The tiles a study runs, one line each (or JSON). */
static int study_tiles(const char *path, int json, wsisa_err *e) {
  wsisa_study *study = NULL;
  wsisa_study_tile *list = NULL;
  size_t n = 0;
  int rc = wsisa_study_load(path, &study, e);
  if (!rc && !study->segmentation)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: a study without inputs has no tiles", path);
  if (!rc) rc = wsisa_study_tiles_list(study, &list, &n, e);
  if (rc) {
    wsisa_study_free(study);
    return rc;
  }
  const wsisa_study_tiles *t = &study->inputs.tiles;
  char how[128];
  if (t->kind == WSISA_TILES_SAMPLE)
    snprintf(how, sizeof how, "a sample of %zu per slide (seed %llu)", t->sample,
             (unsigned long long)t->seed);
  else if (t->kind == WSISA_TILES_ALL)
    snprintf(how, sizeof how, "%s", study->inputs.tissue_only ? "every tissue tile" : "every tile");
  else
    snprintf(how, sizeof how, "%s", wsisa_study_tiles_kind_name(t->kind));
  if (json) {
    json_t *root = json_pack("{s:s, s:s, s:i, s:I}", "study", path, "chosen_by",
                             wsisa_study_tiles_kind_name(t->kind), "tile_size",
                             study->inputs.tile_size, "tiles", (json_int_t)n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
      const wsisa_study_tile *k = &list[i];
      json_array_append_new(
          arr, json_pack("{s:s, s:I, s:i, s:i, s:{s:I, s:I, s:I, s:I}}", "input", k->input,
                         "index", (json_int_t)k->index, "col", k->col, "row", k->row, "level0",
                         "x", (json_int_t)k->level0.x, "y", (json_int_t)k->level0.y, "width",
                         (json_int_t)k->level0.width, "height", (json_int_t)k->level0.height));
    }
    json_object_set_new(root, "tile_list", arr);
    rc = json_dumpf(root, stdout, JSON_INDENT(2)) == 0
             ? 0
             : wsisa_error(e, WSISA_EIO, "standard output: %s", errno ? strerror(errno) : "write error");
    json_decref(root);
    if (!rc) putchar('\n');
  } else {
    printf("study     %s\n", path);
    printf("chosen    %s: %zu tiles of %d\n", how, n, study->inputs.tile_size);
    printf("tiles     input  index  col,row  level-0 x,y,w,h\n");
    for (size_t i = 0; i < n; i++) {
      const wsisa_study_tile *k = &list[i];
      printf("  %s  %ld  %d,%d  %lld,%lld,%lld,%lld\n", k->input, k->index, k->col, k->row,
             (long long)k->level0.x, (long long)k->level0.y, (long long)k->level0.width,
             (long long)k->level0.height);
    }
  }
  free(list);
  wsisa_study_free(study);
  return rc;
}

int wsisa_cmd_tiles(int argc, char **argv, wsisa_err *e) {
  long tile = 1024, overlap = 0;
  double slide_mpp = 0, target_mpp = WSISA_TARGET_MPP;
  int json = 0, opt, rc;
  const char *study = NULL;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_tiles)) != -1) {
    switch (opt) {
      case WSISA_FLAG_TILE_SIZE:
        if ((rc = wsisa_cli_long("--tile-size", optarg, &tile, e))) return rc;
        break;
      case 't':
        return wsisa_error(e, WSISA_EUSAGE,
                           "--tile %s: --tile is a tile's column,row; the tile side is --tile-size",
                           optarg);
      case 'v': if ((rc = wsisa_cli_long("--overlap", optarg, &overlap, e))) return rc; break;
      case WSISA_FLAG_MPP:
        if ((rc = wsisa_cli_mpp("--mpp", optarg, &slide_mpp, e))) return rc;
        break;
      case WSISA_FLAG_TARGET_MPP:
        if ((rc = wsisa_cli_mpp("--target-mpp", optarg, &target_mpp, e))) return rc;
        break;
      case WSISA_FLAG_JSON: json = 1; break;
      case WSISA_FLAG_STUDY: study = optarg; break;
      case WSISA_FLAG_HELP:
        wsisa_cli_usage(stdout, &wsisa_cli_tiles);
        printf("Tile rectangles are given in target pixels and in level-0 slide pixels.\n");
        return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (study && optind < argc)
    return wsisa_error(e, WSISA_EUSAGE, "--study %s and %s: give a study or a slide", study,
                       argv[optind]);
  if (study) return study_tiles(study, json, e);
  if (optind != argc - 1)
    return wsisa_error(e, WSISA_EUSAGE, optind >= argc ? "missing SLIDE argument"
                                                       : "expected one SLIDE, got more");
  wsisa_slide *slide = NULL;
  wsisa_grid *grid = NULL;
  wsisa_scale scale;
  if ((rc = wsisa_slide_open(argv[optind], &slide, e))) return rc;
  if (tile <= 0 || tile > WSISA_TILE_SIZE_MAX)
    rc = wsisa_error(e, WSISA_EUSAGE, "--tile-size %ld: must be from 1 to %d target pixels", tile,
                     WSISA_TILE_SIZE_MAX);
  else if (overlap < 0 || overlap >= tile)
    rc = wsisa_error(e, WSISA_EUSAGE, "--overlap %ld: must be in 0..%ld (below the tile size)",
                     overlap, tile - 1);
  if (!rc) rc = wsisa_scale_choose(slide, slide_mpp, target_mpp, &scale, e);
  if (!rc) rc = wsisa_grid_make_scaled(slide, &scale, (int)tile, (int)overlap, &grid, e);
  if (!rc) {
    if (json) rc = print_json(slide, grid, e);
    else print_text(slide, grid);
  }
  wsisa_grid_free(grid);
  wsisa_slide_close(slide);
  return rc;
}
