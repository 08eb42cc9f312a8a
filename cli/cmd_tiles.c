/* `wsisa tiles SLIDE`: the slide's properties, its tile grid at one level, and
 * how many tiles hold tissue. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "io/io.h"

static void print_text(wsisa_slide *slide, const wsisa_grid *g) {
  double mx, my;
  int no_mpp = wsisa_slide_mpp(slide, &mx, &my);
  printf("slide     %s\n", wsisa_slide_path(slide));
  printf("vendor    %s\n", wsisa_slide_vendor(slide));
  if (no_mpp)
    printf("mpp       unknown (the slide does not say; sizes are in pixels only)\n");
  else
    printf("mpp       %.4f x %.4f um/pixel at level 0\n", mx, my);
  double obj = wsisa_slide_objective(slide);
  if (obj > 0) printf("objective %gx\n", obj);
  printf("levels    %d\n", wsisa_slide_level_count(slide));
  for (int l = 0; l < wsisa_slide_level_count(slide); l++) {
    wsisa_level lv;
    if (wsisa_slide_level(slide, l, &lv, NULL)) continue;
    printf("  level %d  %lld x %lld  downsample %g\n", l, (long long)lv.width,
           (long long)lv.height, lv.downsample);
  }
  printf("grid      level %d, tile %d, overlap %d: %d x %d = %zu tiles\n", g->level,
         g->tile_size, g->overlap, g->cols, g->rows, g->ntiles);
  printf("tissue    %zu of %zu tiles (tissue covers >= %.0f%% of the tile)\n", g->ntissue,
         g->ntiles, 100.0 * g->tissue_threshold);
  for (int r = 0; r < g->rows; r++) {
    printf("  ");
    for (int c = 0; c < g->cols; c++) putchar(g->tiles[(size_t)r * g->cols + c].tissue ? '#' : '.');
    putchar('\n');
  }
}

static int print_json(wsisa_slide *slide, const wsisa_grid *g, wsisa_err *e) {
  double mx, my;
  int no_mpp = wsisa_slide_mpp(slide, &mx, &my);
  json_t *root = json_object(), *levels = json_array(), *tiles = json_array();
  json_object_set_new(root, "slide", json_string(wsisa_slide_path(slide)));
  json_object_set_new(root, "vendor", json_string(wsisa_slide_vendor(slide)));
  json_object_set_new(root, "mpp_x", no_mpp ? json_null() : json_real(mx));
  json_object_set_new(root, "mpp_y", no_mpp ? json_null() : json_real(my));
  double obj = wsisa_slide_objective(slide);
  json_object_set_new(root, "objective_power", obj > 0 ? json_real(obj) : json_null());
  for (int l = 0; l < wsisa_slide_level_count(slide); l++) {
    wsisa_level lv;
    if (wsisa_slide_level(slide, l, &lv, NULL)) continue;
    json_array_append_new(levels, json_pack("{s:i, s:I, s:I, s:f}", "level", l, "width",
                                            (json_int_t)lv.width, "height",
                                            (json_int_t)lv.height, "downsample",
                                            lv.downsample));
  }
  json_object_set_new(root, "levels", levels);
  for (size_t i = 0; i < g->ntiles; i++) {
    const wsisa_tile *t = &g->tiles[i];
    json_array_append_new(tiles, json_pack("{s:i, s:i, s:i, s:I, s:I, s:i, s:i, s:f, s:b}",
                                           "index", t->index, "col", t->col, "row", t->row,
                                           "x", (json_int_t)t->x, "y", (json_int_t)t->y,
                                           "width", t->width, "height", t->height,
                                           "tissue_fraction", t->tissue_fraction,
                                           "tissue", t->tissue));
  }
  json_object_set_new(root, "grid",
                      json_pack("{s:i, s:i, s:i, s:i, s:i, s:I, s:I, s:f, s:o}", "level",
                                g->level, "tile_size", g->tile_size, "overlap", g->overlap,
                                "cols", g->cols, "rows", g->rows, "tiles",
                                (json_int_t)g->ntiles, "tissue_tiles",
                                (json_int_t)g->ntissue, "tissue_threshold",
                                g->tissue_threshold, "tile_list", tiles));
  int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0 ? 0 : -1;
  json_decref(root);
  if (rc) return wsisa_error(e, WSISA_EIO, "cannot write JSON to standard output");
  putchar('\n');
  return 0;
}

int wsisa_cmd_tiles(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {
      {"level", required_argument, 0, 'l'}, {"tile", required_argument, 0, 't'},
      {"overlap", required_argument, 0, 'v'}, {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  long level = 0, tile = 1024, overlap = 0;
  int json = 0, opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
    switch (opt) {
      case 'l': if ((rc = wsisa_cli_long("--level", optarg, &level, e))) return rc; break;
      case 't': if ((rc = wsisa_cli_long("--tile", optarg, &tile, e))) return rc; break;
      case 'v': if ((rc = wsisa_cli_long("--overlap", optarg, &overlap, e))) return rc; break;
      case 'j': json = 1; break;
      case 'h':
        printf("usage: wsisa tiles SLIDE [--level L] [--tile N] [--overlap N] [--json]\n"
               "  --level L    pyramid level of the grid (default 0)\n"
               "  --tile N     tile side in pixels (default 1024)\n"
               "  --overlap N  pixels shared by neighbouring tiles (default 0)\n"
               "  --json       machine-readable output\n");
        return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind != argc - 1)
    return wsisa_error(e, WSISA_EUSAGE, optind >= argc ? "missing SLIDE argument"
                                                       : "expected one SLIDE, got more");
  wsisa_slide *slide = NULL;
  wsisa_grid *grid = NULL;
  if ((rc = wsisa_slide_open(argv[optind], &slide, e))) return rc;
  if (level > 1000 || tile > (1L << 30) || overlap > (1L << 30) || overlap < -(1L << 30))
    rc = wsisa_error(e, WSISA_EUSAGE, "value out of range");
  if (!rc) rc = wsisa_grid_make(slide, (int)level, (int)tile, (int)overlap, &grid, e);
  if (!rc) {
    if (json) rc = print_json(slide, grid, e);
    else print_text(slide, grid);
  }
  wsisa_grid_free(grid);
  wsisa_slide_close(slide);
  return rc;
}
