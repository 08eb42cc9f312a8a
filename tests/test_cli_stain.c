/* The stain check through the command line: `wsisa run` and `wsisa segment`
 * refuse a fluorescence slide, another stain, grey and swapped images
 * (unless told), pass the H&E of other labs and a paler or darker sample,
 * and warn on tissue without nuclei. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "codelets/cpu/cpu.h"
#include "io/csv.h"
#include "io/io.h"
#include "sa/sa.h"
#include "tests/synthslide.h"
#include "tests/testutil.h"

#define SAMPLE "tests/data/CMU-1-Small-Region.svs"
/* engine/run/run.h's WSISA_MIN_NUCLEI_PER_MM2, which tests do not see */
#define WSISA_MIN_NUCLEI_PER_MM2_TEST 200.0

/* One line on stderr or none: `err` holds no second line. */
static int one_line(const char *err) {
  const char *nl = err ? strchr(err, '\n') : NULL;
  return !nl || nl[1] == '\0';
}

/* tests/data/tile_256.png (or `src`) saved or stained as `slip` into the
 * temporary folder as `name`; its path. */
static const char *slipped(const char *src, const char *name, tu_slip slip) {
  static char paths[4][WSISA_PATH_MAX];
  static int at;
  char *p = paths[at++ % 4];
  snprintf(p, sizeof paths[0], "%s/%s", tu_tmpdir("slides_slips"), name);
  wsisa_image *img = tu_load(src);
  cr_assert_not_null(img, "%s", src);
  tu_slip_apply(img, slip);
  cr_assert_eq(wsisa_image_write(p, img, NULL), 0);
  wsisa_image_free(img);
  return p;
}

/* `wsisa ARGS` with warnings shown (the suites run with WSISA_LOG=error):
 * its exit status, stderr in *err. */
static int run_warned(const char *args, char **err) {
  char cmd[16384], *out = NULL;
  snprintf(cmd, sizeof cmd, "env WSISA_LOG=warn %s %s", WSISA_EXE, args);
  int status = tu_run_shell(cmd, &out, err);
  free(out);
  return status;
}

/* `wsisa run --check DIR` passes. */
static void expect_check_whole(const char *dir) {
  char args[TU_LINE_MAX], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "run --check '%s'", dir);
  cr_expect_eq(tu_run(args, &out, &err), 0, "%s: %s", args, err);
  cr_expect(out && strstr(out, ": whole"), "%s", out);
  free(out);
  free(err);
}

/* run.json's warnings, joined by newlines (malloc'd), and how many. */
static char *run_warnings(const char *dir, size_t *n) {
  json_t *root = tu_json_file(dir, "run.json");
  json_t *w = json_object_get(root, "warnings");
  cr_assert(json_is_array(w));
  size_t len = 1;
  for (size_t i = 0; i < json_array_size(w); i++)
    len += strlen(json_string_value(json_array_get(w, i))) + 1;
  char *text = calloc(1, len);
  cr_assert_not_null(text);
  for (size_t i = 0; i < json_array_size(w); i++)
    strcat(strcat(text, json_string_value(json_array_get(w, i))), "\n");
  *n = json_array_size(w);
  json_decref(root);
  return text;
}

Test(cli_stain, fluorescence_slide_is_refused, .timeout = 120) {
  const char *fl = tu_slides_path("fluorescence.tiff", tu_synth_fluorescence);
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"]", fl);
  cr_expect_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 2);
  char want[TU_LINE_MAX];
  snprintf(want, sizeof want,
           "%s: dark field (fluorescence?): the segmentation needs bright-field H&E: the "
           "brightest pixels, on a dark background, are coloured",
           fl);
  cr_expect(err && strstr(err, want), "%s", err);
  cr_expect(err && strstr(err, "set inputs.stain_check to false to run it anyway"), "%s", err);
  cr_expect(one_line(err), "one line: %s", err);
  cr_log_info("%s", err);
  free(err);
  char journal[WSISA_PATH_MAX];
  tu_path(journal, "%s/journal.csv", dir);
  cr_expect_neq(access(journal, F_OK), 0, "no work started");
  /* overridden by the study, and said so in run.json, which --check takes */
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"], \"stain_check\": false", fl);
  cr_assert_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s", err);
  free(err);
  json_t *root = tu_json_file(dir, "run.json");
  json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
  cr_expect(json_is_false(json_object_get(json_object_get(in, "stain"), "checked")));
  json_decref(root);
  size_t n = 0;
  char *w = run_warnings(dir, &n);
  snprintf(want, sizeof want,
           "%s: the stain check is turned off (inputs.stain_check false): not checked to be "
           "bright-field H&E, which the segmentation needs",
           fl);
  cr_expect(strstr(w, want), "%s", w);
  free(w);
  expect_check_whole(dir);
  unlink(fl);
}

/* What `wsisa run` writes of the check on H&E: the measures, no warning. */
Test(cli_stain, another_stain_is_refused_and_he_images_pass, .timeout = 120) {
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  const char *dab = slipped("tests/data/tile_256.png", "dab.png", TU_SLIP_DAB);
  snprintf(inputs, sizeof inputs, "\"images\": [\"%s\", \"%s\"]", tu_src("tests/data/tile_256.png"), dab);
  cr_expect_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 2);
  char want[TU_LINE_MAX];
  snprintf(want, sizeof want,
           "%s: a brown chromogen (DAB, immunohistochemistry?): the segmentation needs "
           "bright-field H&E: ",
           dab);
  cr_expect(err && strstr(err, want), "the H&E image passes, the DAB one is named: %s", err);
  cr_log_info("%s", err);
  free(err);
  /* the H&E tiles of the repository pass */
  snprintf(inputs, sizeof inputs, "\"images\": [\"%s\", \"%s\", \"%s\"]", tu_src("tests/data/tile_256.png"),
          tu_src("tests/data/tile_256_b.png"), tu_src("tests/data/tile_1024.png"));
  cr_assert_eq(tu_slides_run("WSISA_LOG=warn", tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s",
               err);
  cr_expect(!err || !strstr(err, "stain"), "%s", err);
  free(err);
  json_t *root = tu_json_file(dir, "run.json");
  cr_expect_eq(json_array_size(json_object_get(root, "warnings")), 0);
  json_t *ins = json_object_get(root, "inputs");
  cr_assert_eq(json_array_size(ins), 3);
  for (size_t i = 0; i < 3; i++) {
    json_t *in = json_array_get(ins, i);
    json_t *st = json_object_get(in, "stain");
    cr_expect(json_is_true(json_object_get(st, "checked")));
    cr_expect_gt(tu_json_num(st, "brightest_grey"), 0.8, "%zu", i);
    cr_expect_lt(tu_json_num(st, "colourless_share"), 0.1, "%zu", i);
    cr_expect_lt(tu_json_num(st, "brown_share"), 0.1, "%zu", i);
    json_t *v = json_object_get(st, "vectors");
    cr_expect(json_is_true(json_object_get(v, "eosin_found")), "%zu", i);
    cr_expect_gt(tu_json_num(v, "swap"), 0.2, "%zu", i);
    cr_expect_str_eq(json_string_value(json_object_get(in, "mpp_source")), "none",
                     "an image without inputs.slide_mpp is taken as it is");
    cr_expect(json_is_null(json_object_get(in, "mpp")));
  }
  json_decref(root);
}

/* `wsisa segment` checks the stain as `wsisa run` does: the DAB image and a
 * fluorescence slide's region are refused before any output exists, naming
 * the input, what the segmentation needs and the flag that runs it anyway;
 * the flag does. */
Test(cli_stain, segment_refuses_another_stain_unless_told, .timeout = 120) {
  const char *dab = slipped("tests/data/tile_256.png", "dab_seg.png", TU_SLIP_DAB);
  const char *fl = tu_slides_path("fluorescence_seg.tiff", tu_synth_fluorescence);
  char out[WSISA_PATH_MAX], args[9000], want[TU_LINE_MAX], *err = NULL;
  tu_path(out, "%s/seg_stain.png", tu_tmpdir("slides_seg_stain"));
  const char *const inputs[] = {dab, fl};
  const char *const region[] = {"", " --region 0,0,512,512"};
  const char *const seen[] = {"a brown chromogen (DAB, immunohistochemistry?)",
                               "dark field (fluorescence?)"};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, "segment '%s'%s -o '%s'", inputs[i], region[i], out);
    cr_expect_eq(tu_run(args, NULL, &err), 2, "%s", args);
    snprintf(want, sizeof want, "%s: %s: the segmentation needs bright-field H&E", inputs[i],
             seen[i]);
    cr_expect(err && strstr(err, want), "%s", err);
    cr_expect(err && strstr(err, "give --no-stain-check to run it anyway"), "%s", err);
    cr_expect(one_line(err), "one line: %s", err);
    cr_expect_neq(access(out, F_OK), 0, "%s: no mask written", inputs[i]);
    cr_log_info("%s", err);
    free(err);
    err = NULL;
  }
  snprintf(args, sizeof args, "segment '%s' --no-stain-check -o '%s'", dab, out);
  cr_expect_eq(tu_run(args, NULL, &err), 0, "%s: %s", args, err);
  free(err);
  cr_expect_eq(access(out, F_OK), 0, "the mask is written with --no-stain-check");
  unlink(out);
  unlink(fl);
}

/* tile_1024.png saved as grey in RGB (Rec. 601 luma in every channel, the
 * channels' mean, luma with +-3 levels of noise per channel): refused by
 * `segment` and by `run`, one line naming the input, what is wrong and the
 * way to run it anyway, which does. */
static const tu_slip greys[] = {TU_SLIP_GREY_LUMA, TU_SLIP_GREY_MEAN, TU_SLIP_GREY_NOISY};

Test(cli_stain, grey_images_are_refused_by_segment_and_run, .timeout = 300) {
  char out[WSISA_PATH_MAX], args[9000], want[TU_LINE_MAX], inputs[TU_LINE_MAX],
      dir[WSISA_PATH_MAX], *err = NULL;
  tu_path(out, "%s/grey_mask.png", tu_tmpdir("slides_grey_out"));
  for (size_t i = 0; i < sizeof greys / sizeof *greys; i++) {
    char name[32];
    snprintf(name, sizeof name, "grey%zu.png", i);
    const char *img = slipped("tests/data/tile_1024.png", name, greys[i]);
    snprintf(want, sizeof want,
             "%s: greyscale: the segmentation needs bright-field H&E in colour: R, G and B "
             "within 6 levels of each other in 100%% of tissue pixels",
             img);
    snprintf(args, sizeof args, "segment '%s' -o '%s'", img, out);
    cr_expect_eq(tu_run(args, NULL, &err), 2, "%s", args);
    cr_expect(err && strstr(err, want), "%s", err);
    cr_expect(err && strstr(err, "give --no-stain-check to run it anyway"), "%s", err);
    cr_expect(one_line(err), "one line: %s", err);
    cr_expect_neq(access(out, F_OK), 0, "%s: no mask written", name);
    free(err);
    err = NULL;
    snprintf(args, sizeof args, "segment '%s' --no-stain-check -o '%s'", img, out);
    cr_expect_eq(tu_run(args, NULL, &err), 0, "%s: %s", args, err);
    cr_expect_eq(access(out, F_OK), 0, "%s: the mask is written with --no-stain-check", name);
    unlink(out);
    free(err);
    err = NULL;
    snprintf(inputs, sizeof inputs, "\"images\": [\"%s\"]", img);
    cr_expect_eq(tu_slides_run(NULL, tu_slides_study(inputs), dir, sizeof dir, &err), 2, "%s", name);
    cr_expect(err && strstr(err, want), "%s", err);
    cr_expect(err && strstr(err, "set inputs.stain_check to false to run it anyway"), "%s", err);
    free(err);
    err = NULL;
  }
}

/* Red and blue swapped is a doubt, not a certainty: `segment` and `run` go
 * on, with one warning line on stderr naming the input, the measure and how
 * to skip the check, and run.json keeps it; --check takes the folder. */
Test(cli_stain, swapped_images_are_warned_by_segment_and_run, .timeout = 300) {
  const char *img = slipped("tests/data/tile_1024.png", "bgr.png", TU_SLIP_BGR);
  char out[WSISA_PATH_MAX], args[9000], want[TU_LINE_MAX], inputs[TU_LINE_MAX],
      dir[WSISA_PATH_MAX], *err = NULL;
  tu_path(out, "%s/bgr_mask.png", tu_tmpdir("slides_bgr_out"));
  snprintf(want, sizeof want,
           "%s: red and blue may be swapped (BGR saved as RGB?): the slide's stain vectors "
           "turn round",
           img);
  snprintf(args, sizeof args, "segment '%s' -o '%s'", img, out);
  cr_expect_eq(run_warned(args, &err), 0, "%s: %s", args, err);
  cr_expect(err && strstr(err, want), "%s", err);
  cr_expect(err && strstr(err, "going on (give --no-stain-check to skip the check)"), "%s", err);
  cr_expect(one_line(err), "one line: %s", err);
  cr_expect_eq(access(out, F_OK), 0, "the mask is written");
  cr_log_info("%s", err);
  free(err);
  err = NULL;
  snprintf(inputs, sizeof inputs, "\"images\": [\"%s\"]", img);
  cr_assert_eq(tu_slides_run("WSISA_LOG=warn", tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s",
               err);
  cr_expect(err && strstr(err, want), "%s", err);
  free(err);
  size_t n = 0;
  char *w = run_warnings(dir, &n);
  cr_expect(strstr(w, want) && strstr(w, "(set inputs.stain_check to false to skip the check)"),
            "%s", w);
  free(w);
  expect_check_whole(dir);
}

/* H&E of other labs (tests/data/he-variety) through `segment`: each passes
 * without a word, paler and darker too; red and blue swapped is warned where
 * eosin tells; grey, dark field and DAB are refused; and scikit-image's
 * immunohistochemistry image is refused. */
Test(cli_stain, variety_set_through_segment, .timeout = 300) {
  static const struct {
    tu_slip slip;
    const char *name;
    int refused;
    const char *seen;
  } as[] = {
      {TU_SLIP_NONE, "he", 0, NULL},
      {TU_SLIP_PALE, "pale", 0, NULL},
      {TU_SLIP_DARK, "dark", 0, NULL},
      {TU_SLIP_BGR, "bgr", 0, "red and blue may be swapped (BGR saved as RGB?)"},
      {TU_SLIP_GREY_LUMA, "grey", 1, "greyscale: the segmentation needs bright-field H&E"},
      {TU_SLIP_FLUORESCENCE, "fluorescence", 1, "dark field (fluorescence?): the segmentation"},
      {TU_SLIP_DAB, "dab", 1, "a brown chromogen (DAB, immunohistochemistry?): the segmentation"},
  };
  char src[512], out[WSISA_PATH_MAX], args[9000], want[TU_LINE_MAX], *err = NULL;
  tu_path(out, "%s/variety_mask.png", tu_tmpdir("slides_variety_out"));
  for (size_t i = 0; i < TU_HE_VARIETY_N; i++)
    for (size_t k = 0; k < sizeof as / sizeof *as; k++) {
      snprintf(src, sizeof src, "tests/data/he-variety/%s", tu_he_variety[i]);
      char name[600];
      snprintf(name, sizeof name, "%s-%s", as[k].name, tu_he_variety[i]);
      const char *img = slipped(src, name, as[k].slip);
      snprintf(args, sizeof args, "segment '%s' --mpp 0.5 -o '%s'", img, out);
      const int rc = run_warned(args, &err);
      cr_expect_eq(rc, as[k].refused ? 2 : 0, "%s: %s", name, err);
      if (as[k].seen && as[k].slip != TU_SLIP_BGR) {
        snprintf(want, sizeof want, "%s: %s", img, as[k].seen);
        cr_expect(err && strstr(err, want), "%s: %s", name, err);
      } else if (as[k].slip == TU_SLIP_BGR && i != 1) {
        /* adipose tissue with a few nuclei: too little eosin to tell */
        cr_expect(err && strstr(err, as[k].seen), "%s: %s", name, err);
      } else if (!as[k].seen) {
        cr_expect(!err || !strstr(err, "stain"), "%s: %s", name, err);
      }
      cr_expect(as[k].refused || access(out, F_OK) == 0, "%s: no mask", name);
      unlink(out);
      free(err);
      err = NULL;
    }
  const char *ihc = tu_src("tests/data/he-variety/skimage-ihc.png");
  snprintf(args, sizeof args, "segment '%s' -o '%s'", ihc, out);
  cr_expect_eq(tu_run(args, NULL, &err), 2);
  snprintf(want, sizeof want,
           "%s: a brown chromogen (DAB, immunohistochemistry?): the segmentation needs "
           "bright-field H&E",
           ihc);
  cr_expect(err && strstr(err, want), "%s", err);
  free(err);
}

/* Slides of any stain strength: the whole sample, its optical density halved
 * and doubled, passes the check without a word and segments with the
 * defaults, judged against its annotation (docs/guide.md gives the figures:
 * object F1 0.77 as it is, 0.79 halved, 0.76 doubled). */
Test(cli_stain, pale_and_dark_sample_segment_with_the_defaults, .timeout = 300) {
  static const struct {
    double od;
    const char *name;
  } strengths[] = {{0.5, "sample-od0.5.tiff"}, {2, "sample-od2.tiff"}};
  for (size_t i = 0; i < sizeof strengths / sizeof *strengths; i++) {
    char slide[WSISA_PATH_MAX], study[WSISA_PATH_MAX], text[16384], dir[WSISA_PATH_MAX],
        args[TU_LINE_MAX], *err = NULL;
    tu_path(slide, "%s/%s", tu_tmpdir("slides_strength"), strengths[i].name);
    cr_assert_eq(tu_synth_sample_od(slide, strengths[i].od), 0);
    tu_path(study, "%s/study.json", tu_tmpdir("slides_strength_study"));
    snprintf(text, sizeof text,
             "{ \"inputs\": { \"slides\": [\"%s\"], \"tile_size\": 256,\n"
             "    \"reference\": { \"%s\": { \"geojson\": \"%s\",\n"
             "      \"region\": [1024, 768, 256, 512] } } },\n"
             "  \"method\": \"moat\", \"parameters\": { \"B\": 220 },\n"
             "  \"metric\": [\"object_f1\"] }\n",
             slide, slide, tu_src("tests/data/CMU-1-Small-Region.nuclei.geojson"));
    FILE *f = fopen(study, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    tu_path(dir, "%s/results", tu_tmpdir("slides_strength_run"));
    snprintf(args, sizeof args, "run --study '%s' -o '%s'", study, dir);
    cr_assert_eq(run_warned(args, &err), 0, "%s: %s", strengths[i].name, err);
    cr_expect(!err || !strstr(err, "stain"), "%s: %s", strengths[i].name, err);
    free(err);
    size_t n = 0;
    char *w = run_warnings(dir, &n);
    cr_expect_eq(n, 0, "%s: %s", strengths[i].name, w);
    free(w);
    json_t *root = tu_json_file(dir, "run.json");
    json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
    cr_expect(json_is_true(json_object_get(json_object_get(in, "stain"), "checked")));
    json_decref(root);
    /* every parameter at its default: one run, scored in best.json */
    root = tu_json_file(dir, "best.json");
    json_t *d = json_object_get(json_object_get(json_object_get(root, "defaults"), "metrics"),
                                "object_f1");
    cr_assert(json_is_number(d), "%s: no defaults' object_f1", strengths[i].name);
    cr_log_info("%s: object F1 of the defaults %.3f\n", strengths[i].name, json_number_value(d));
    cr_expect_gt(json_number_value(d), 0.65, "%s: object F1 %g", strengths[i].name,
                 json_number_value(d));
    json_decref(root);
    unlink(slide);
  }
}

Test(cli_stain, tissue_without_nuclei_is_a_warning, .timeout = 120) {
  const char *pink = tu_slides_path("pink.tiff", tu_make_pink);
  char inputs[TU_LINE_MAX], dir[WSISA_PATH_MAX], *err = NULL;
  snprintf(inputs, sizeof inputs, "\"slides\": [\"%s\"]", pink);
  cr_assert_eq(tu_slides_run("WSISA_LOG=warn", tu_slides_study(inputs), dir, sizeof dir, &err), 0, "%s",
               err);
  char want[TU_LINE_MAX];
  snprintf(want, sizeof want, "%s: the reference segmentation found ", pink);
  cr_expect(err && strstr(err, want), "stderr: %s", err);
  free(err);
  json_t *root = tu_json_file(dir, "run.json");
  /* stroma this faint is also pale to the stain check */
  json_t *w = json_object_get(root, "warnings");
  cr_assert_eq(json_array_size(w), 2);
  cr_expect(strstr(json_string_value(json_array_get(w, 0)), ": pale stain: "), "%s",
            json_string_value(json_array_get(w, 0)));
  cr_expect(strstr(json_string_value(json_array_get(w, 1)), want), "%s",
            json_string_value(json_array_get(w, 1)));
  json_t *in = json_array_get(json_object_get(root, "inputs"), 0);
  cr_expect_str_eq(json_string_value(json_object_get(in, "mpp_source")), "tiff-centimeter");
  cr_expect_float_eq(tu_json_num(in, "factor"), 1.0, 0);
  cr_expect_gt(tu_json_num(in, "tissue_mm2"), 0.2, "the whole 0.26 mm2 is tissue");
  cr_expect_lt(tu_json_num(in, "reference_nuclei"), 10, "texture, no nucleus");
  cr_expect_lt(tu_json_num(in, "reference_nuclei_per_mm2"), WSISA_MIN_NUCLEI_PER_MM2_TEST);
  json_decref(root);
  unlink(pink);
}
