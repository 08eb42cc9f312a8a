/* `wsisa segment SLIDE --all` on a small mosaic of the sample (9 tiles of
 * 512): one GeoJSON whose nuclei have unique ids and every vertex on the
 * slide, a features CSV, a summary and a label pyramid that OpenSlide reads
 * back, all telling the same nuclei; the same nuclei as a study's reference
 * run of those tiles, tile by tile, and the GeoJSON taken back as a study's
 * reference gives Dice, F1 and AJI of 1 (the round trip); outputs are never
 * replaced without --force; a SIGKILL mid-way and the same command again give
 * the same bytes, and so do CPU and OpenCL workers. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/csv.h"
#include "io/io.h"
#include "tests/synthslide.h"
#include "tests/testutil.h"

#define MOSAIC_SIDE (2 * TU_MOSAIC_SIDE)
#define OUTPUTS "n.geojson", "f.csv", "s.csv", "d.svg", "l.tif"
static const char *const outputs[] = {OUTPUTS};
#define NOUTPUTS (sizeof outputs / sizeof *outputs)

static const char *mosaic(void) {
  static char path[WSISA_PATH_MAX];
  if (!path[0]) {
    tu_path(path, "%s/mosaic.tiff", tu_tmpdir("wholeslide_mosaic"));
    cr_assert_eq(tu_synth_mosaic(path, 2, 2), 0, "cannot write %s", path);
  }
  return path;
}

/* `env ENV wsisa segment MOSAIC --all ... ` with every output into dir. */
static int segment_all(const char *dir, const char *env, const char *extra, char **err) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && env %s '%s' segment '%s' --all --tile-size 512 --geojson n.geojson "
           "--features f.csv --summary s.csv --density d.svg -o l.tif %s",
           dir, env ? env : "", WSISA_EXE, mosaic(), extra ? extra : "");
  return tu_run_shell(cmd, NULL, err);
}

static char *read_in(const char *dir, const char *name, size_t *len) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/%s", dir, name);
  return tu_slurp(path, len);
}

/* Every output of `a` byte for byte in `b`. */
static void expect_same_outputs(const char *a, const char *b) {
  for (size_t i = 0; i < NOUTPUTS; i++) {
    size_t la = 0, lb = 0;
    char *x = read_in(a, outputs[i], &la), *y = read_in(b, outputs[i], &lb);
    cr_expect(x && y && la == lb && memcmp(x, y, la) == 0, "%s differs (%zu and %zu bytes)",
              outputs[i], la, lb);
    free(x);
    free(y);
  }
}

/* The summary's nuclei column, per tile. */
static size_t summary_nuclei(const char *dir, uint64_t *nuclei, size_t cap) {
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/s.csv", dir);
  wsisa_csv *c = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_csv_read_table(path, "tile", &c, &e), 0, "%s", e.msg);
  long col = wsisa_csv_column(c, "nuclei");
  cr_assert_geq(col, 0);
  for (size_t r = 0; r < c->nrows && r < cap; r++)
    nuclei[r] = strtoull(wsisa_csv_cell(c, r, (size_t)col), NULL, 10);
  size_t n = c->nrows;
  wsisa_csv_free(c);
  return n;
}

/* A study of the mosaic's tiles with the default parameters (one run:
 * every parameter fixed), `inputs_more` added to its inputs, run into
 * dir/name; its folder into results. */
static void run_study(const char *dir, const char *name, const char *inputs_more, char *results,
                      size_t cap) {
  char study[WSISA_PATH_MAX], cmd[16384], *err = NULL;
  tu_path(study, "%s/%s.json", dir, name);
  FILE *f = fopen(study, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 512%s },\n"
          "  \"parameters\": { \"G1\": { \"fixed\": 80 } },\n"
          "  \"method\": { \"name\": \"moat\" }, \"metric\": [\"dice\", \"object_f1\", \"aji\"] }\n",
          mosaic(), inputs_more);
  fclose(f);
  snprintf(results, cap, "%.4200s/%s", dir, name);
  snprintf(cmd, sizeof cmd, "'%s' run --study '%s' -o '%s'", WSISA_EXE, study, results);
  cr_assert_eq(tu_run_shell(cmd, NULL, &err), 0, "%s", err ? err : "");
  free(err);
}

Test(wholeslide, one_geojson_the_study_reference_nuclei_and_a_pyramid_openslide_reads,
     .timeout = 300) {
  char dir[WSISA_PATH_MAX], *err = NULL;
  tu_path(dir, "%s", tu_tmpdir("wholeslide_outputs"));
  cr_assert_eq(segment_all(dir, NULL, NULL, &err), 0, "%s", err ? err : "");
  free(err);

  /* the GeoJSON: a FeatureCollection, ids unique, numbered 1..N, on the slide */
  char path[WSISA_PATH_MAX];
  tu_path(path, "%s/n.geojson", dir);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s: %s", path, je.text);
  cr_expect_str_eq(json_string_value(json_object_get(root, "type")), "FeatureCollection");
  json_t *features = json_object_get(root, "features");
  const size_t n = json_array_size(features);
  cr_assert_gt(n, 500, "%zu nuclei", n);
  size_t off = 0, bad_id = 0, dup = 0;
  char (*ids)[48] = calloc(n, sizeof *ids);
  cr_assert_not_null(ids);
  for (size_t i = 0; i < n; i++) {
    json_t *f = json_array_get(features, i);
    const char *id = json_string_value(json_object_get(f, "id"));
    snprintf(ids[i], sizeof ids[i], "%s", id ? id : "");
    bad_id += json_integer_value(json_object_get(json_object_get(f, "properties"),
                                                 "nucleus_id")) != (json_int_t)(i + 1);
    json_t *ring = json_array_get(json_object_get(json_object_get(f, "geometry"), "coordinates"), 0);
    for (size_t k = 0; k < json_array_size(ring); k++) {
      const double x = json_number_value(json_array_get(json_array_get(ring, k), 0));
      const double y = json_number_value(json_array_get(json_array_get(ring, k), 1));
      off += x < 0 || y < 0 || x > MOSAIC_SIDE || y > MOSAIC_SIDE;
    }
  }
  qsort(ids, n, sizeof *ids, (int (*)(const void *, const void *))strcmp);
  for (size_t i = 1; i < n; i++) dup += strcmp(ids[i], ids[i - 1]) == 0 || !ids[i][0];
  free(ids);
  json_decref(root);
  cr_expect_eq(off, 0, "%zu vertices off the slide", off);
  cr_expect_eq(dup, 0, "%zu ids repeated or missing", dup);
  cr_expect_eq(bad_id, 0, "%zu nuclei out of their order", bad_id);

  /* the features CSV and the summary tell the same nuclei */
  cr_expect_eq(tu_count_lines(strcat(strcpy(path, dir), "/f.csv")), n + 1);
  uint64_t per_tile[16] = {0}, sum = 0;
  const size_t tiles = summary_nuclei(dir, per_tile, 16);
  cr_assert_eq(tiles, 9, "9 tiles of 512 on the 1200 x 1200 mosaic, all tissue");
  for (size_t t = 0; t < tiles; t++) sum += per_tile[t];
  cr_expect_eq(sum, n);

  /* the label pyramid through OpenSlide: every nucleus once, level 1 the
   * nearest of level 0 */
  tu_path(path, "%s/l.tif", dir);
  wsisa_slide *slide = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_slide_open(path, &slide, &e), 0, "%s", e.msg);
  cr_expect_geq(wsisa_slide_level_count(slide), 2);
  wsisa_image *l0 = NULL, *l1 = NULL;
  cr_assert_eq(wsisa_slide_read_rgb(slide, 0, 0, 0, MOSAIC_SIDE, MOSAIC_SIDE, &l0, &e), 0, "%s",
               e.msg);
  cr_assert_eq(wsisa_slide_read_rgb(slide, 1, 0, 0, MOSAIC_SIDE / 2, MOSAIC_SIDE / 2, &l1, &e), 0,
               "%s", e.msg);
  uint8_t *seen = calloc(n + 1, 1);
  size_t beyond = 0, nearest = 0;
  for (int y = 0; y < MOSAIC_SIDE; y++) {
    const uint8_t *p = wsisa_image_row(l0, y);
    for (int x = 0; x < MOSAIC_SIDE; x++, p += 3) {
      const size_t id = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
      if (id > n) beyond++;
      else seen[id] = 1;
      if (x % 2 == 0 && y % 2 == 0)
        nearest += memcmp(p, (const uint8_t *)wsisa_image_row(l1, y / 2) + (size_t)(x / 2) * 3,
                          3) != 0;
    }
  }
  size_t missing = 0;
  for (size_t i = 1; i <= n; i++) missing += !seen[i];
  cr_expect_eq(beyond, 0, "%zu pixels name no nucleus", beyond);
  cr_expect_eq(missing, 0, "%zu nuclei not in the label image", missing);
  cr_expect_eq(nearest, 0, "%zu level-1 pixels are not level 0's", nearest);
  free(seen);
  wsisa_image_free(l0);
  wsisa_image_free(l1);
  wsisa_slide_close(slide);
  tu_path(path, "%s/d.svg", dir);
  char *svg = tu_slurp(path, NULL);
  cr_expect(svg && strstr(svg, "tile 4 (1, 1)"), "the density map names its tiles");
  free(svg);

  /* a study's reference run of the same tiles: the same nuclei, tile by tile */
  char results[WSISA_PATH_MAX], reference[8800];
  run_study(dir, "study", "", results, sizeof results);
  tu_path(path, "%s/journal.csv", results);
  wsisa_csv *j = NULL;
  cr_assert_eq(wsisa_csv_read_table(path, "tile", &j, &e), 0, "%s", e.msg);
  const long ref = wsisa_csv_column(j, "ref_nuclei");
  cr_assert_eq(j->nrows, 9);
  for (size_t r = 0; r < j->nrows; r++) {
    const size_t t = strtoul(wsisa_csv_cell(j, r, 0), NULL, 10);
    cr_expect_eq(strtoull(wsisa_csv_cell(j, r, (size_t)ref), NULL, 10), per_tile[t],
                 "tile %zu: the study's reference and segment --all differ", t);
  }
  wsisa_csv_free(j);

  /* the round trip: the GeoJSON as the study's reference, the same parameters */
  snprintf(reference, sizeof reference,
           ", \"reference\": { \"%s\": { \"geojson\": \"%.4000s/n.geojson\" } }", mosaic(),
           dir);
  run_study(dir, "roundtrip", reference, results, sizeof results);
  tu_path(path, "%s/metrics.csv", results);
  wsisa_csv *m = NULL;
  cr_assert_eq(wsisa_csv_read(path, &m, &e), 0, "%s", e.msg);
  static const char *const ones[] = {"dice", "object_f1", "aji"};
  for (size_t i = 0; i < 3; i++) {
    double v = 0;
    long col = wsisa_csv_column(m, ones[i]);
    cr_assert_geq(col, 0, "%s", ones[i]);
    cr_expect_eq(wsisa_csv_number(m, 0, (size_t)col, &v, &e), 0);
    cr_expect_eq(v, 1.0, "%s against its own GeoJSON: %.17g", ones[i], v);
  }
  wsisa_csv_free(m);
}

/* Outputs that exist are refused, named, and left as they are, unless
 * --force; a failing command leaves no work folder of its own. */
Test(wholeslide, outputs_that_exist_need_force, .timeout = 300) {
  char dir[WSISA_PATH_MAX], path[WSISA_PATH_MAX], *err = NULL;
  tu_path(dir, "%s", tu_tmpdir("wholeslide_force"));
  tu_path(path, "%s/n.geojson", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("mine", f);
  fclose(f);
  cr_expect_eq(segment_all(dir, NULL, NULL, &err), 2);
  cr_expect(err && strstr(err, "--geojson n.geojson: exists (give --force to replace it)"),
            "%s", err ? err : "");
  free(err);
  char *kept = tu_slurp(path, NULL);
  cr_expect(kept && strcmp(kept, "mine") == 0, "the user's file was touched");
  free(kept);
  tu_path(path, "%s/n.geojson.parts", dir);
  struct stat st;
  cr_expect_neq(stat(path, &st), 0, "a work folder was left behind");
  cr_expect_eq(segment_all(dir, NULL, "--force", &err), 0, "%s", err ? err : "");
  free(err);
  tu_path(path, "%s/n.geojson", dir);
  kept = tu_slurp(path, NULL);
  cr_expect(kept && strncmp(kept, "{\"type\":\"FeatureCollection\"", 27) == 0);
  free(kept);
}

/* Killed (SIGKILL) once a tile is journaled, a torn line then appended to
 * the journal as a kill mid-write leaves it: the same command goes on from
 * the tiles journaled and writes the bytes of an uninterrupted run; the work
 * folder goes with it. */
Test(wholeslide, a_sigkill_then_the_same_command_gives_the_same_outputs, .timeout = 300) {
  /* tu_tmpdir's buffers are reused: the folders are copied */
  char whole[WSISA_PATH_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  tu_path(whole, "%s", tu_tmpdir("wholeslide_whole"));
  tu_path(dir, "%s", tu_tmpdir("wholeslide_killed"));
  cr_assert_eq(segment_all(whole, NULL, NULL, &err), 0, "%s", err ? err : "");
  free(err);
  char journal[WSISA_PATH_MAX], cmd[16384];
  tu_path(journal, "%s/n.geojson.parts/journal.csv", dir);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && exec env STARPU_NCPU=1 '%s' segment '%s' --all --tile-size 512 "
             "--geojson n.geojson --features f.csv --summary s.csv --density d.svg -o l.tif",
             dir, WSISA_EXE, mosaic());
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  size_t at_kill = 0;
  for (int i = 0; i < 60000 && !at_kill; i++) {
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    if (waitpid(pid, NULL, WNOHANG) == pid) break;
    if (tu_count_lines(journal) >= 2) {
      kill(pid, SIGKILL);
      at_kill = tu_count_lines(journal) - 1;
    }
  }
  waitpid(pid, NULL, 0);
  cr_assert_gt(at_kill, 0, "the command ended before a tile was journaled");
  cr_assert_lt(at_kill, 9, "the command ended before it was killed");
  for (size_t i = 0; i < NOUTPUTS; i++) {
    char *o = read_in(dir, outputs[i], NULL);
    cr_expect_null(o, "%s written before every tile was done", outputs[i]);
    free(o);
  }
  FILE *f = fopen(journal, "a");
  cr_assert_not_null(f);
  fputs("5,101,2", f);
  fclose(f);
  cr_assert_eq(segment_all(dir, NULL, NULL, &err), 0, "%s", err ? err : "");
  cr_expect(err && strstr(err, "going on from"), "%s", err ? err : "");
  free(err);
  expect_same_outputs(whole, dir);
  char parts[WSISA_PATH_MAX];
  tu_path(parts, "%s/n.geojson.parts", dir);
  struct stat st;
  cr_expect_neq(stat(parts, &st), 0, "the work folder stayed");
}

/* A CPU worker and an OpenCL one (PoCL's device on the CPU, when there is
 * one) give the bytes of CPU workers alone: tiles go to either kind. */
Test(wholeslide, cpu_and_opencl_workers_give_the_same_outputs, .timeout = 300) {
  char cpu[WSISA_PATH_MAX], both[WSISA_PATH_MAX], *err = NULL;
  tu_path(cpu, "%s", tu_tmpdir("wholeslide_cpu"));
  tu_path(both, "%s", tu_tmpdir("wholeslide_opencl"));
  cr_assert_eq(segment_all(cpu, "STARPU_NCPU=2 STARPU_NOPENCL=0", NULL, &err), 0, "%s",
               err ? err : "");
  free(err);
  cr_assert_eq(segment_all(both, "STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=1 STARPU_NOPENCL=1", NULL,
                           &err),
               0, "%s", err ? err : "");
  free(err);
  expect_same_outputs(cpu, both);
}
