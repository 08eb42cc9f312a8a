/* `wsisa run` against annotations: on the bundled sample with the GeoJSON of
 * tests/data (tests/golden/make_sample_annotation.py) and on a synthetic
 * image whose nuclei are known, every run's metrics equal a direct
 * computation from `wsisa segment` masks and the rasterised annotation; the
 * tiles left out are counted; best.json names the best run and `wsisa
 * segment --params @best.json` gives the very mask the run measured; a
 * changed annotation stops --resume and fails --check. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/cpu/cpu.h"
#include "io/csv.h"
#include "io/io.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"
#define SAMPLE_GEOJSON "tests/data/CMU-1-Small-Region.nuclei.geojson"

/* The counts and matching sums of one mask against one reference, as the
 * executor journals them: both, run, ref, nuclei, ref_nuclei, (then the
 * tile's tissue,) then the WSISA_MATCH_FIELDS sums. */
#define NSUMS (5 + WSISA_MATCH_FIELDS)

static void direct_sums(const char *mask_path, const wsisa_image *ref, size_t ref_n,
                        uint64_t sums[NSUMS]) {
  wsisa_image *mask = NULL, *run = NULL;
  cr_assert_eq(wsisa_image_read(mask_path, &mask, NULL), 0, "%s", mask_path);
  cr_assert_eq(mask->width, ref->width);
  cr_assert_eq(mask->height, ref->height);
  cr_assert_eq(wsisa_image_new(mask->width, mask->height, 1, WSISA_I32, &run, NULL), 0);
  cr_assert_eq(wsisa_cpu_label(mask, 4, run), 0);
  memset(sums, 0, NSUMS * sizeof *sums);
  for (int y = 0; y < mask->height; y++)
    for (int x = 0; x < mask->width; x++) {
      int a = ((const uint8_t *)wsisa_image_row(mask, y))[x] != 0;
      int b = ((const int32_t *)wsisa_image_row(ref, y))[x] > 0;
      int32_t l = ((const int32_t *)wsisa_image_row(run, y))[x];
      sums[0] += a && b;
      sums[1] += a;
      sums[2] += b;
      if ((uint64_t)l > sums[3]) sums[3] = (uint64_t)l;
    }
  sums[4] = ref_n;
  cr_assert_eq(wsisa_cpu_object_match(ref, run, sums + 5), 0);
  wsisa_image_free(mask);
  wsisa_image_free(run);
}

/* Slide-level metrics of summed counts, as metrics.csv has them. */
typedef struct metrics {
  double dice, jaccard, nuclei, object_dice, f1, precision, recall, aji;
} metrics;

static metrics metrics_of(const uint64_t s[NSUMS]) {
  metrics m;
  m.dice = s[1] + s[2] ? 2.0 * (double)s[0] / (double)(s[1] + s[2]) : 1.0;
  m.jaccard = s[1] + s[2] - s[0] ? (double)s[0] / (double)(s[1] + s[2] - s[0]) : 1.0;
  m.nuclei = (double)s[3];
  wsisa_object_metrics o;
  wsisa_object_metrics_of(s + 5, &o);
  m.object_dice = o.object_dice, m.f1 = o.f1, m.precision = o.precision, m.recall = o.recall;
  m.aji = o.aji;
  return m;
}

/* One row of a CSV as numbers by column name. */
static double cell(const wsisa_csv *c, size_t row, const char *column) {
  long col = wsisa_csv_column(c, column);
  cr_assert_geq(col, 0, "no column %s", column);
  double v;
  cr_assert_eq(wsisa_csv_number(c, row, (size_t)col, &v, NULL), 0);
  return v;
}

static void expect_close(double got, double want, const char *what, long run) {
  cr_expect(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)),
            "run %ld: %s is %.17g in outputs.csv, %.17g from the masks", run, what, got, want);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* The design: the defaults and two other runs (run ids as written). */
static const char design_csv[] =
    "run_id,G1,G2,min_size_pl,watershed_conn,T1\n"
    "10,80,45,30,8,5\n"
    "11,60,30,30,8,5\n"
    "12,70,40,20,4,4.5\n";
static const char *const design_params[] = {
    "{\"G1\": 80, \"G2\": 45, \"min_size_pl\": 30, \"watershed_conn\": 8, \"T1\": 5}",
    "{\"G1\": 60, \"G2\": 30, \"min_size_pl\": 30, \"watershed_conn\": 8, \"T1\": 5}",
    "{\"G1\": 70, \"G2\": 40, \"min_size_pl\": 20, \"watershed_conn\": 4, \"T1\": 4.5}"};
#define NRUNS 3

/* The study's outputs against the masks `wsisa segment` writes for each run
 * on each annotated tile (level-0 rectangles x, y, w, h at step 1, or the
 * whole image), each matched with the rasterised annotation. */
typedef struct tile {
  long long x, y;
  int w, h;
} tile;

static void expect_outputs_match_masks(const char *dir, const char *input, const char *seg_flags,
                                       const wsisa_annotation *a, const wsisa_scale *sc,
                                       const tile *tiles, size_t ntiles, int region) {
  char path[WSISA_PATH_MAX], args[TU_LINE_MAX];
  tu_path(path, "%s/outputs.csv", dir);
  wsisa_csv *out = NULL;
  cr_assert_eq(wsisa_csv_read(path, &out, NULL), 0);
  cr_assert_eq(out->nrows, NRUNS);
  const char *tmp = tu_tmpdir("annot-masks");
  for (size_t r = 0; r < NRUNS; r++) {
    char params[WSISA_PATH_MAX];
    tu_path(params, "%s/params%zu.json", tmp, r);
    write_text(params, design_params[r]);
    uint64_t total[NSUMS] = {0};
    for (size_t t = 0; t < ntiles; t++) {
      char mask[WSISA_PATH_MAX], where[128] = "";
      tu_path(mask, "%s/mask%zu_%zu.png", tmp, r, t);
      if (region)
        snprintf(where, sizeof where, "--region %lld,%lld,%d,%d", tiles[t].x, tiles[t].y,
                 tiles[t].w, tiles[t].h);
      snprintf(args, sizeof args, "segment '%s' %s %s --params @'%s' -o '%s'", input, where,
               seg_flags, params, mask);
      char *err = NULL;
      cr_assert_eq(tu_run(args, NULL, &err), 0, "%s: %s", args, err ? err : "");
      free(err);
      wsisa_image *ref = NULL;
      size_t n = 0;
      wsisa_err e = WSISA_ERR_INIT;
      cr_assert_eq(wsisa_annotation_rasterize(a, sc, region ? tiles[t].x : 0,
                                              region ? tiles[t].y : 0, tiles[t].w, tiles[t].h,
                                              &ref, &n, &e),
                   0, "%s", e.msg);
      uint64_t s[NSUMS];
      direct_sums(mask, ref, n, s);
      for (int k = 0; k < NSUMS; k++) total[k] += s[k];
      wsisa_image_free(ref);
    }
    metrics m = metrics_of(total);
    long id = (long)cell(out, r, "run_id");
    expect_close(cell(out, r, "dice"), m.dice, "dice", id);
    expect_close(cell(out, r, "jaccard"), m.jaccard, "jaccard", id);
    expect_close(cell(out, r, "object_dice"), m.object_dice, "object_dice", id);
    expect_close(cell(out, r, "object_f1"), m.f1, "object_f1", id);
    expect_close(cell(out, r, "object_precision"), m.precision, "object_precision", id);
    expect_close(cell(out, r, "object_recall"), m.recall, "object_recall", id);
    expect_close(cell(out, r, "aji"), m.aji, "aji", id);
    cr_log_info("run %ld: dice %.4f, object F1 %.4f (P %.4f, R %.4f), AJI %.4f, object Dice "
                "%.4f; %llu reference nuclei, %llu found\n",
                id, m.dice, m.f1, m.precision, m.recall, m.aji, m.object_dice,
                (unsigned long long)total[4], (unsigned long long)total[3]);
  }
  wsisa_csv_free(out);
}

static const char metrics_list[] =
    "[\"object_f1\", \"dice\", \"jaccard\", \"object_dice\", \"object_precision\", "
    "\"object_recall\", \"aji\"]";

/* Run `study` with the design above into a fresh folder (returned). */
static const char *run_design(const char *study, const char *env) {
  static char dir[WSISA_PATH_MAX];
  const char *tmp = tu_tmpdir("annot-run");
  char design[WSISA_PATH_MAX], cmd[16384];
  tu_path(design, "%s/design.csv", tmp);
  write_text(design, design_csv);
  tu_path(dir, "%s/results", tmp);
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s %s run --study '%s' --samples '%s' -o '%s'",
           env, WSISA_EXE, study, design, dir);
  char *err = NULL, *out = NULL;
  cr_assert_eq(tu_run_shell(cmd, &out, &err), 0, "%s: %s", cmd, err ? err : "");
  cr_expect(out && strstr(out, "best run against the annotations by object_f1"), "%s", out);
  /* run 10 is the 15 defaults: their score beside the best one's */
  char path[WSISA_PATH_MAX], want[128];
  tu_path(path, "%s/outputs.csv", dir);
  wsisa_csv *csv = NULL;
  cr_assert_eq(wsisa_csv_read(path, &csv, NULL), 0);
  cr_assert_eq((long)cell(csv, 0, "run_id"), 10);
  snprintf(want, sizeof want, "; the defaults, run 10: %.6g)", cell(csv, 0, "object_f1"));
  wsisa_csv_free(csv);
  cr_expect(out && strstr(out, want), "lacks \"%s\": %s", want, out);
  free(err);
  free(out);
  return dir;
}

/* The sample's annotated region with `parameters` (a JSON object) and the
 * MOAT design, `extra` after its metrics: the study's path (in a folder of
 * `tag`). */
static const char *region_study(const char *tag, const char *parameters, const char *extra) {
  static char path[WSISA_PATH_MAX];
  tu_path(path, "%s/study.json", tu_tmpdir(tag));
  char text[8192];
  snprintf(text, sizeof text,
           "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 256, \"halo\": 0,\n"
           "    \"normalization\": \"tile\",\n"
           "    \"reference\": { \"%s\": { \"geojson\": \"%s\",\n"
           "                               \"region\": [1024, 768, 256, 512] } } },\n"
           "  \"parameters\": %s,\n"
           "  \"method\": { \"name\": \"moat\", \"trajectories\": 2 },\n"
           "  \"metric\": %s %s }\n",
           tu_src(SAMPLE), tu_src(SAMPLE), tu_src(SAMPLE_GEOJSON), parameters, metrics_list,
           extra);
  write_text(path, text);
  return path;
}

static const char *sample_study(const char *extra) {
  return region_study("annot-study",
                      "{ \"G1\": {}, \"G2\": {}, \"min_size_pl\": {}, \"T1\": {},\n"
                      "                    \"watershed_conn\": {} }",
                      extra);
}

static wsisa_annotation *sample_annotation(void) {
  wsisa_annot_spec sp = {.kind = WSISA_ANNOT_GEOJSON, .path = tu_src(SAMPLE_GEOJSON),
                         .input = "sample", .width0 = 2220, .height0 = 2967, .has_region = 1,
                         .region = {1024, 768, 256, 512}};
  wsisa_annotation *a = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_annotation_load(&sp, &a, &e), 0, "%s", e.msg);
  return a;
}

static json_t *load_json(const char *dir, const char *name) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/%s", dir, name);
  json_t *j = json_load_file(path, 0, NULL);
  cr_assert_not_null(j, "cannot read %s", path);
  return j;
}

Test(annotation_run, sample_metrics_equal_the_masks_against_the_geojson, .timeout = 600) {
  const char *dir = run_design(sample_study(""), "");
  wsisa_annotation *a = sample_annotation();
  wsisa_scale one;
  memset(&one, 0, sizeof one);
  one.level_downsample = one.factor = 1; /* the sample is read as it is */
  const tile tiles[] = {{1024, 768, 256, 256}, {1024, 1024, 256, 256}};
  /* read as the study reads them: alone, with their own statistics */
  expect_outputs_match_masks(dir, tu_src(SAMPLE), "--halo 0 --normalization tile", a, &one, tiles,
                             2, 1);
  wsisa_annotation_free(a);
  /* run.json and reference.json count the tiles */
  json_t *run = load_json(dir, "run.json");
  json_t *ref = json_object_get(run, "reference");
  cr_expect_str_eq(json_string_value(json_object_get(ref, "kind")), "annotation");
  cr_expect_eq(json_integer_value(json_object_get(ref, "tiles_annotated")), 2);
  /* the sample's tissue tiles at 256, but for the two in the region */
  json_t *in = json_array_get(json_object_get(run, "inputs"), 0);
  cr_expect_eq(json_integer_value(json_object_get(ref, "tiles_left_out")),
               json_integer_value(json_object_get(in, "tiles_left_out")));
  cr_expect_gt(json_integer_value(json_object_get(ref, "tiles_left_out")), 20);
  json_t *first = json_array_get(json_object_get(ref, "inputs"), 0);
  cr_expect_eq(json_integer_value(json_object_get(first, "nuclei")), 249);
  json_decref(run);
  /* --check: whole, best.json and reference.json included */
  char args[9000], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "run --check '%s'", dir);
  cr_expect_eq(tu_run(args, &out, &err), 0, "%s", err ? err : "");
  cr_expect(out && strstr(out, "reference.json") && strstr(out, "best.json"), "%s", out);
  free(out);
  free(err);
}

/* best.json: the best run by the first metric (object F1, higher is
 * better), its parameters, and `segment --params @best.json` measures on
 * each tile exactly what the journal holds for that run. */
Test(annotation_run, best_json_reproduced_by_segment, .timeout = 600) {
  const char *dir = run_design(sample_study(""), "");
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/outputs.csv", dir);
  wsisa_csv *out = NULL;
  cr_assert_eq(wsisa_csv_read(path, &out, NULL), 0);
  size_t best = 0;
  for (size_t r = 1; r < out->nrows; r++)
    if (cell(out, r, "object_f1") > cell(out, best, "object_f1")) best = r;
  json_t *b = load_json(dir, "best.json");
  cr_expect_eq(json_integer_value(json_object_get(b, "run_id")), (long)cell(out, best, "run_id"));
  cr_expect_str_eq(json_string_value(json_object_get(b, "chosen_by")), "object_f1");
  cr_expect_str_eq(json_string_value(json_object_get(b, "better")), "higher");
  cr_expect_eq(json_object_size(json_object_get(b, "parameters")), 15);
  cr_expect_float_eq(json_number_value(json_object_get(json_object_get(b, "metrics"), "aji")),
                     cell(out, best, "aji"), 1e-15);
  json_decref(b);
  wsisa_csv_free(out);
  /* the journal's line for that run on each tile */
  tu_path(path, "%s/journal.csv", dir);
  char *journal = tu_slurp(path, NULL);
  cr_assert_not_null(journal);
  wsisa_annotation *a = sample_annotation();
  wsisa_scale one;
  memset(&one, 0, sizeof one);
  one.level_downsample = one.factor = 1;
  const long long ys[2] = {768, 1024};
  for (int t = 0; t < 2; t++) {
    char mask[WSISA_PATH_MAX], args[9000];
    tu_path(mask, "%s/best%d.png", tu_tmpdir("annot-best"), t);
    snprintf(args, sizeof args,
             "segment '%s' --region 1024,%lld,256,256 --halo 0 --normalization tile "
             "--params @'%s/best.json' -o '%s'",
             tu_src(SAMPLE), ys[t], dir, mask);
    cr_assert_eq(tu_run(args, NULL, NULL), 0, "%s", args);
    wsisa_image *ref = NULL;
    size_t n;
    cr_assert_eq(wsisa_annotation_rasterize(a, &one, 1024, ys[t], 256, 256, &ref, &n, NULL), 0);
    uint64_t s[NSUMS];
    direct_sums(mask, ref, n, s);
    wsisa_image_free(ref);
    /* the counts, the tile's tissue (ref_tissue, not measured here), the sums */
    char want[512], sums[512];
    int len = snprintf(want, sizeof want, "\n%d,%zu", t, best);
    for (int k = 0; k < 5; k++)
      len += snprintf(want + len, sizeof want - (size_t)len, ",%llu", (unsigned long long)s[k]);
    len = 0;
    for (int k = 5; k < NSUMS; k++)
      len += snprintf(sums + len, sizeof sums - (size_t)len, ",%llu", (unsigned long long)s[k]);
    const char *line = strstr(journal, want);
    cr_expect(line, "tile %d: journal lacks%s", t, want);
    const char *after = line ? strchr(line + strlen(want) + 1, ',') : NULL;
    cr_expect(after && strncmp(after, sums, strlen(sums)) == 0, "tile %d: journal lacks%s",
              t, sums);
  }
  wsisa_annotation_free(a);
  free(journal);
}

/* `wsisa run --study S -o DIR` into a fresh folder of `tag` (returned); its
 * stdout in *out. */
static const char *run_study_into(const char *tag, const char *study, char **out) {
  static char dir[WSISA_PATH_MAX];
  tu_path(dir, "%s/results", tu_tmpdir(tag));
  char cmd[16384], *err = NULL;
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s run --study '%s' -o '%s'", WSISA_EXE, study,
           dir);
  cr_assert_eq(tu_run_shell(cmd, out, &err), 0, "%s: %s", cmd, err ? err : "");
  free(err);
  return dir;
}

/* A MOAT design without the 15 defaults (T1's levels are 2.5, 4.17, 5.83 and
 * 7.5; its default is 5): the defaults are run beside it and best.json
 * scores them as a study of the defaults alone does, while samples.csv,
 * outputs.csv and metrics.csv hold the design's runs only, and --check
 * finds the folder whole. */
Test(annotation_run, defaults_scored_beside_a_design_without_them, .timeout = 600) {
  char *out = NULL, path[WSISA_PATH_MAX];
  const char *dir = run_study_into("annot-defaults", sample_study(""), &out);
  char design_dir[WSISA_PATH_MAX];
  tu_path(design_dir, "%s", dir);
  json_t *b = load_json(design_dir, "best.json");
  cr_expect_eq(json_integer_value(json_object_get(b, "runs")), 12, "2 trajectories of 6 runs");
  json_t *d = json_object_get(b, "defaults");
  cr_assert(json_is_object(d), "best.json has no defaults");
  cr_expect(json_is_null(json_object_get(d, "run_id")), "the defaults are not in the design");
  const char *files[] = {"samples.csv", "outputs.csv", "metrics.csv"};
  for (int f = 0; f < 3; f++) {
    tu_path(path, "%s/%s", design_dir, files[f]);
    wsisa_csv *csv = NULL;
    cr_assert_eq(wsisa_csv_read(path, &csv, NULL), 0, "%s", path);
    cr_expect_eq(csv->nrows, 12, "%s: the design's runs only", files[f]);
    wsisa_csv_free(csv);
  }
  char want[160];
  snprintf(want, sizeof want, "; the defaults, run beside the design: %.6g)",
           json_number_value(json_object_get(d, "value")));
  cr_expect(out && strstr(out, want), "lacks \"%s\": %s", want, out);
  cr_expect(out && strstr(out, "12 runs (and the defaults) x 2 tiles"), "%s", out);
  free(out);
  json_t *run = load_json(design_dir, "run.json");
  cr_expect(json_is_true(json_object_get(run, "defaults_run_added")));
  cr_expect_eq(json_integer_value(json_object_get(run, "runs")), 12);
  json_decref(run);
  /* the study of the defaults alone: one run, the same scores */
  out = NULL;
  const char *alone = run_study_into(
      "annot-defaults-alone", region_study("annot-defaults-alone-study", "{ \"B\": 220 }", ""),
      &out);
  tu_path(path, "%s/outputs.csv", alone);
  wsisa_csv *one = NULL;
  cr_assert_eq(wsisa_csv_read(path, &one, NULL), 0, "%s", path);
  cr_assert_eq(one->nrows, 1);
  json_t *dm = json_object_get(d, "metrics");
  const char *names[] = {"dice", "object_f1", "aji"};
  for (int i = 0; i < 3; i++)
    cr_expect_float_eq(json_number_value(json_object_get(dm, names[i])), cell(one, 0, names[i]),
                       1e-12, "%s", names[i]);
  wsisa_csv_free(one);
  cr_expect(out && strstr(out, "; the defaults, run 0: "), "%s", out);
  free(out);
  json_t *ba = load_json(alone, "best.json");
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(ba, "defaults"), "run_id")), 0);
  json_decref(ba);
  json_decref(b);
  /* --check: whole, the defaults' run included */
  char args[9000], *err = NULL;
  snprintf(args, sizeof args, "run --check '%s'", design_dir);
  out = NULL;
  cr_expect_eq(tu_run(args, &out, &err), 0, "%s", err ? err : "");
  cr_expect(out && strstr(out, ": whole"), "%s", out);
  free(out);
  free(err);
}

/* A synthetic image whose nuclei are known: 81 dark ellipses on a pink
 * ground, some touching, their labels the truth. Read at 0.25 um/pixel, so
 * the study averages it 2 x 2 and the truth (at the image's pixels) is
 * resampled by nearest label. */
static void synthetic(const char *rgb_path, const char *truth_path) {
  const int side = 512;
  wsisa_image *rgb = NULL, *truth = NULL;
  cr_assert_eq(wsisa_image_new(side, side, 3, WSISA_U8, &rgb, NULL), 0);
  cr_assert_eq(wsisa_image_new(side, side, 1, WSISA_U16, &truth, NULL), 0);
  uint32_t state = 7;
#define NOISE(a) ((state = state * 1664525u + 1013904223u), ((double)(state >> 8) / 16777216.0 - 0.5) * (a))
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++) {
      uint8_t *p = (uint8_t *)wsisa_image_row(rgb, y) + 3 * x;
      p[0] = (uint8_t)(232 + NOISE(16)), p[1] = (uint8_t)(170 + NOISE(16));
      p[2] = (uint8_t)(205 + NOISE(16));
    }
  int k = 0;
  for (int cy = 34; cy < side - 28; cy += 56)
    for (int cx = 34; cx < side - 28; cx += 56) {
      k++;
      double a = 13 + NOISE(4), b = 11 + NOISE(3), t = 1.5 + NOISE(3);
      /* every fifth nucleus leans on its right neighbour */
      double ox = cx + (k % 5 == 0 ? 24 : NOISE(10)), oy = cy + NOISE(10);
      for (int y = (int)(oy - 16); y <= (int)(oy + 16); y++)
        for (int x = (int)(ox - 16); x <= (int)(ox + 16); x++) {
          double dx = x + 0.5 - ox, dy = y + 0.5 - oy;
          double u = (dx * cos(t) + dy * sin(t)) / a, v = (-dx * sin(t) + dy * cos(t)) / b;
          uint16_t *l = (uint16_t *)wsisa_image_row(truth, y) + x;
          if (u * u + v * v > 1 || *l) continue;
          *l = (uint16_t)k;
          uint8_t *p = (uint8_t *)wsisa_image_row(rgb, y) + 3 * x;
          p[0] = (uint8_t)(80 + NOISE(16)), p[1] = (uint8_t)(50 + NOISE(16));
          p[2] = (uint8_t)(130 + NOISE(16));
        }
    }
#undef NOISE
  cr_assert_eq(wsisa_image_write(rgb_path, rgb, NULL), 0);
  cr_assert_eq(wsisa_image_write(truth_path, truth, NULL), 0);
  wsisa_image_free(rgb);
  wsisa_image_free(truth);
}

Test(annotation_run, synthetic_nuclei_known_from_a_label_image, .timeout = 600) {
  const char *tmp = tu_tmpdir("annot-synth");
  char rgb[WSISA_PATH_MAX], truth[WSISA_PATH_MAX], study[WSISA_PATH_MAX], text[16384];
  tu_path(rgb, "%s/synthetic.png", tmp);
  tu_path(truth, "%s/truth.png", tmp);
  tu_path(study, "%s/study.json", tmp);
  synthetic(rgb, truth);
  snprintf(text, sizeof text,
           "{ \"inputs\": { \"images\": [\"%s\"], \"slide_mpp\": 0.25, \"stain_check\": false,\n"
           "    \"reference\": { \"%s\": { \"labels\": \"%s\" } } },\n"
           "  \"parameters\": { \"G1\": {}, \"G2\": {}, \"min_size_pl\": {}, \"T1\": {},\n"
           "                    \"watershed_conn\": {} },\n"
           "  \"method\": \"moat\", \"metric\": %s }\n",
           rgb, rgb, truth, metrics_list);
  write_text(study, text);
  const char *dir = run_design(study, "");
  wsisa_annot_spec sp = {.kind = WSISA_ANNOT_LABELS, .path = truth, .input = rgb,
                         .width0 = 512, .height0 = 512, .downsample = 1};
  wsisa_annotation *a = NULL;
  cr_assert_eq(wsisa_annotation_load(&sp, &a, NULL), 0);
  cr_expect_eq(wsisa_annotation_objects(a), 81);
  wsisa_scale half;
  memset(&half, 0, sizeof half);
  half.level_downsample = 1, half.factor = 2;
  const tile whole[] = {{0, 0, 256, 256}};
  expect_outputs_match_masks(dir, rgb, "--mpp 0.25", a, &half, whole, 1, 0);
  wsisa_annotation_free(a);
  /* the default parameters find the known nuclei */
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/outputs.csv", dir);
  wsisa_csv *out = NULL;
  cr_assert_eq(wsisa_csv_read(path, &out, NULL), 0);
  cr_expect_gt(cell(out, 0, "object_f1"), 0.8, "F1 of the defaults %g", cell(out, 0, "object_f1"));
  cr_expect_gt(cell(out, 0, "dice"), 0.8, "Dice of the defaults %g", cell(out, 0, "dice"));
  wsisa_csv_free(out);
}

/* The annotation the journal was measured against must stay: once it
 * changes, --resume refuses and --check reports it. */
Test(annotation_run, changed_annotation_stops_resume_and_check, .timeout = 600) {
  const char *tmp = tu_tmpdir("annot-changed");
  char geojson[WSISA_PATH_MAX], cmd[9000];
  tu_path(geojson, "%s/nuclei.geojson", tmp);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tu_src(SAMPLE_GEOJSON), geojson);
  cr_assert_eq(system(cmd), 0);
  char study[WSISA_PATH_MAX], text[8192];
  tu_path(study, "%s/study.json", tmp);
  snprintf(text, sizeof text,
           "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 256, \"halo\": 0,\n"
           "    \"normalization\": \"tile\",\n"
           "    \"reference\": { \"%s\": { \"geojson\": \"%s\" } } },\n"
           "  \"parameters\": { \"G1\": {}, \"G2\": {} },\n"
           "  \"method\": { \"name\": \"moat\", \"trajectories\": 2 }, \"metric\": \"aji\" }\n",
           tu_src(SAMPLE), tu_src(SAMPLE), geojson);
  write_text(study, text);
  char dir[WSISA_PATH_MAX], args[TU_LINE_MAX], *err = NULL;
  tu_path(dir, "%s/r", tmp);
  snprintf(args, sizeof args, "run --study '%s' -o '%s'", study, dir);
  cr_assert_eq(tu_run(args, NULL, &err), 0, "%s", err ? err : "");
  free(err);
  /* without a region: the tiles a polygon reaches (the outlines spill
   * over the region's edges into neighbouring tiles) */
  json_t *ref = load_json(dir, "reference.json");
  json_int_t annotated = json_integer_value(json_object_get(ref, "tiles_annotated"));
  cr_expect_geq(annotated, 2);
  json_decref(ref);
  /* unchanged, a resume of the finished run is accepted and changes nothing */
  char metrics[WSISA_PATH_MAX];
  tu_path(metrics, "%s/metrics.csv", dir);
  char *before = tu_slurp(metrics, NULL);
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  err = NULL;
  cr_expect_eq(tu_run(args, NULL, &err), 0, "%s", err ? err : "");
  free(err);
  char *after = tu_slurp(metrics, NULL);
  cr_expect(before && after && strcmp(before, after) == 0, "metrics.csv changed on resume");
  free(before);
  free(after);
  /* one nucleus less */
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); "
           "d['features'].pop(); json.dump(d, open(p, 'w'))\" '%s'",
           geojson);
  cr_assert_eq(system(cmd), 0);
  snprintf(args, sizeof args, "run --resume '%s'", dir);
  err = NULL;
  cr_expect_eq(tu_run(args, NULL, &err), 2);
  cr_expect(err && strstr(err, "reference.json: the annotations are not those the run began with"),
            "%s", err ? err : "");
  free(err);
  snprintf(args, sizeof args, "run --check '%s'", dir);
  err = NULL;
  cr_expect_eq(tu_run(args, NULL, &err), 1);
  cr_expect(err && strstr(err, "reference.json:") && strstr(err, "not what reading the annotations again gives"),
            "%s", err ? err : "");
  free(err);
}
