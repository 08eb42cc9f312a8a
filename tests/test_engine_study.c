/* Study files: the contract of docs/study-file.md parsed field by field, defaults,
 * pure SA studies, the resolved study round-tripping, and every kind of bad
 * field refused with the file and JSON path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study.h"
#include "tests/testutil.h"

/* The example of docs/study-file.md, verbatim. */
static const char *design_example =
    "{\n"
    "  \"inputs\":     { \"slides\": [\"tests/data/CMU-1-Small-Region.svs\"],\n"
    "                  \"tile_size\": 1024, \"tissue_only\": true },\n"
    "  \"parameters\": { \"G1\":              { \"range\": [5, 80], \"step\": 5 },\n"
    "                  \"T1\":              { \"range\": [2.5, 7.5] },\n"
    "                  \"fill_holes_conn\": { \"values\": [4, 8] },\n"
    "                  \"B\":               { \"fixed\": 220 } },\n"
    "  \"method\":     { \"name\": \"moat\", \"trajectories\": 10, \"levels\": 4 },\n"
    "  \"sampler\":    { \"name\": \"halton\", \"seed\": 1 },\n"
    "  \"metric\":     \"dice\",\n"
    "  \"reuse\":      { \"strategy\": \"trtma\", \"max_buckets\": 6, \"active_paths\": 2 },\n"
    "  \"execution\":  { \"memory_limit\": \"4G\" }\n"
    "}\n";

static const wsisa_sa_param *param(const wsisa_study *s, const char *name) {
  long at = wsisa_sa_space_find(s->space, name);
  cr_assert_geq(at, 0, "no parameter %s", name);
  return &s->space->params[at];
}

Test(engine_study, design_example) {
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse(design_example, "study.json", &s, &e), 0, "%s", e.msg);
  cr_expect(s->segmentation);
  cr_assert_eq(s->inputs.nslides, 1);
  cr_expect_str_eq(s->inputs.slides[0], "tests/data/CMU-1-Small-Region.svs");
  cr_expect_eq(s->inputs.stain_check, 1, "checked unless the study says not");
  cr_expect_eq(s->inputs.tile_size, 1024);
  cr_expect_eq(s->inputs.tissue_only, 1);
  cr_expect_float_eq(s->inputs.mpp, 0.5, 0, "the resolution the parameters are tuned for");
  cr_expect_eq(s->inputs.slide_mpp, 0, "the slides' own");
  cr_expect_eq(s->space->nparams, 15);
  cr_expect_eq(wsisa_sa_space_dims(s->space), 3, "G1, T1, fill_holes_conn vary");
  const wsisa_sa_param *g1 = param(s, "G1");
  cr_expect_eq(g1->kind, WSISA_SA_DISCRETE);
  cr_expect_eq(g1->lo, 5);
  cr_expect_eq(g1->hi, 80);
  cr_expect_eq(g1->step, 5);
  cr_expect_eq(g1->value, 80, "the segmentation default");
  cr_expect_eq(g1->level, 3);
  cr_expect_eq(param(s, "T1")->kind, WSISA_SA_CONTINUOUS);
  cr_expect_eq(param(s, "fill_holes_conn")->kind, WSISA_SA_CATEGORICAL);
  cr_expect_eq(param(s, "B")->kind, WSISA_SA_FIXED);
  cr_expect_eq(param(s, "B")->value, 220);
  cr_expect_eq(param(s, "G2")->kind, WSISA_SA_FIXED, "not named: keeps its default");
  cr_expect_eq(param(s, "G2")->value, 45);
  cr_expect_eq(s->sa.method, WSISA_SA_MOAT);
  cr_expect_eq(s->sa.trajectories, 10);
  cr_expect_eq(s->sa.levels, 4);
  cr_expect_eq(s->sa.sampler, WSISA_SA_HALTON);
  cr_expect_eq(s->sa.seed, 1);
  cr_assert_eq(s->nmetrics, 1);
  cr_expect_str_eq(s->metrics[0], "dice");
  cr_expect_eq(s->reuse.strategy, WSISA_REUSE_TRTMA);
  cr_expect_eq(s->reuse.max_buckets, 6);
  cr_expect_eq(s->reuse.active_paths, 2);
  cr_expect_eq(s->reuse.object_reuse, 1, "object reuse on unless the study says not");
  cr_expect_eq(s->execution.memory_limit, 4ull << 30);
  cr_expect_null(s->execution.scheduler);
  wsisa_study_free(s);
}

Test(engine_study, segmentation_defaults) {
  wsisa_study *s = NULL;
  const char *text = "{\"inputs\": {\"images\": [\"a.png\", \"b.TIFF\"]}, \"method\": \"vbd\","
                     " \"parameters\": {\"G2\": {}, \"max_size\": {\"range\": [900, 1000]},"
                     " \"recon_conn\": 8}}";
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse(text, "s.json", &s, &e), 0, "%s", e.msg);
  cr_expect_eq(s->inputs.nimages, 2);
  cr_expect_eq(s->inputs.tile_size, 1024);
  cr_expect_eq(s->inputs.tissue_only, 1);
  const wsisa_sa_param *g2 = param(s, "G2");
  cr_expect_eq(g2->kind, WSISA_SA_DISCRETE, "{} varies over the built-in SA range");
  cr_expect_eq(g2->lo, 2);
  cr_expect_eq(g2->hi, 46, "Table 1's 2..40 widened to hold the default 45");
  cr_expect_eq(param(s, "max_size")->kind, WSISA_SA_INTEGER, "an integer-valued parameter");
  cr_expect_eq(param(s, "recon_conn")->kind, WSISA_SA_FIXED);
  cr_expect_eq(s->sa.sampler, WSISA_SA_SOBOL);
  cr_expect_eq(s->sa.samples, 1024);
  cr_expect_str_eq(s->metrics[0], "dice");
  cr_expect_eq(s->reuse.strategy, WSISA_REUSE_RTMA);
  cr_expect_eq(s->reuse.cost, WSISA_STUDY_COST_AUTO);
  wsisa_study_free(s);
  /* No parameters at all: the built-in space, every parameter varying. */
  cr_assert_eq(wsisa_study_parse("{\"inputs\": {\"slides\": [\"x.svs\"]}, \"method\": {\"name\": "
                                 "\"moat\"}}",
                                 "s.json", &s, &e),
               0, "%s", e.msg);
  cr_expect_eq(wsisa_sa_space_dims(s->space), 15);
  wsisa_study_free(s);
}

/* Every parameter fixed: one run of the fixed values, scored against the
 * annotations, whatever the method (there is nothing to vary). */
Test(engine_study, every_parameter_fixed_is_one_run) {
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse("{\"inputs\": {\"images\": [\"a.png\"]}, \"parameters\": "
                                 "{\"B\": 220}, \"method\": \"vbd\"}",
                                 "s.json", &s, &e),
               0, "%s", e.msg);
  cr_expect_eq(wsisa_sa_space_dims(s->space), 0);
  wsisa_sa_design *d = NULL;
  cr_assert_eq(wsisa_sa_design_make(s->space, &s->sa, &d, &e), 0, "%s", e.msg);
  cr_expect_eq(d->nrows, 1);
  cr_expect_eq(d->ndims, 0);
  cr_expect_eq(d->groups, 1);
  for (size_t c = 0; c < d->nparams; c++)
    cr_expect_eq(d->values[c], s->space->params[c].value, "%s", s->space->params[c].name);
  cr_expect_eq(d->values[param(s, "B") - s->space->params], 220, "B as given");
  wsisa_sa_design_free(d);
  wsisa_study_free(s);
}

Test(engine_study, pure_sa_study) {
  wsisa_study *s = NULL;
  const char *text =
      "{\"parameters\": {\"alpha\": {\"range\": [0, 2]}, \"n\": {\"range\": [1, 9], "
      "\"integer\": true}, \"h\": {\"range\": [0, 1], \"step\": 0.25, \"default\": 0.75},"
      " \"mode\": {\"values\": [3, 1, 2]}, \"c\": 7},"
      " \"method\": {\"name\": \"correlation\", \"samples\": 50},"
      " \"sampler\": {\"name\": \"lhs\", \"seed\": 12345678901}, \"metric\": [\"f\", \"g\"]}";
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse(text, "p.json", &s, &e), 0, "%s", e.msg);
  cr_expect_not(s->segmentation);
  cr_expect_eq(s->space->nparams, 5);
  cr_expect_str_eq(s->space->params[0].name, "alpha", "file order is kept");
  cr_expect_eq(param(s, "alpha")->value, 1, "default: the middle of the range");
  cr_expect_eq(param(s, "n")->kind, WSISA_SA_INTEGER);
  cr_expect_eq(param(s, "n")->value, 5);
  cr_expect_eq(param(s, "h")->value, 0.75);
  cr_expect_eq(param(s, "mode")->value, 3, "default: the first value");
  cr_expect_eq(param(s, "c")->kind, WSISA_SA_FIXED);
  cr_expect_eq(s->sa.seed, 12345678901ull);
  cr_expect_eq(s->nmetrics, 2);
  wsisa_study_free(s);
}

static char *resolved(const char *text) {
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse(text, "r.json", &s, &e), 0, "%s", e.msg);
  char *json = NULL;
  cr_assert_eq(wsisa_study_to_json(s, &json, NULL), 0);
  wsisa_study_free(s);
  return json;
}

Test(engine_study, resolved_study_round_trips) {
  const char *studies[] = {
      design_example,
      "{\"parameters\": {\"x\": {\"range\": [0.1, 0.7], \"step\": 0.1}, \"y\": {\"range\": "
      "[-3.141592653589793, 3.141592653589793]}}, \"method\": {\"name\": \"two_phase\", "
      "\"pool\": 20, \"second_order\": true, \"confidence\": 0.9}, \"execution\": "
      "{\"scheduler\": \"dmda\", \"memory_limit\": 1000}}",
      "{\"inputs\": {\"slides\": [\"x.svs\"], \"mpp\": 0.25, \"slide_mpp\": 0.2527, "
      "\"stain_check\": false}, \"method\": \"moat\", \"reuse\": {\"object_reuse\": false}}",
      "{\"inputs\": {\"images\": [\"x.png\"]}, \"method\": \"moat\", \"reuse\": "
      "{\"level_costs\": [0.022279113, 0.1, 0.3, 0, 2, 0.1234567890123456789, 1e-9]}}",
      "{\"inputs\": {\"slides\": [\"x.svs\", \"y.svs\", \"z.svs\"], \"reference\": {"
      "\"y.svs\": {\"labels\": \"y.tif\", \"origin\": [10, 20.5], \"mpp\": 1},"
      "\"x.svs\": {\"geojson\": \"x.geojson\", \"region\": [1, 2, 300, 400]},"
      "\"z.svs\": {\"mask\": \"z.png\", \"downsample\": 0.1}}}, \"method\": \"moat\"}",
      "{\"inputs\": {\"slides\": [\"x.svs\"], \"tiles\": {\"sample\": 12, \"seed\": 9}}, "
      "\"method\": \"moat\"}",
      "{\"inputs\": {\"slides\": [\"x.svs\"], \"tiles\": [7, 3, 11]}, \"method\": \"moat\"}",
      "{\"inputs\": {\"slides\": [\"x.svs\"], \"tiles\": {\"regions\": [[0, 5, 10, 20], [1, "
      "2, 3, 4]]}}, \"method\": \"moat\"}",
      "{\"inputs\": {\"slides\": [\"x.svs\"], \"tiles\": {\"regions\": \"m.geojson\", "
      "\"crc32\": \"00c0ffee\"}}, \"method\": \"moat\"}"};
  for (size_t i = 0; i < sizeof studies / sizeof *studies; i++) {
    char *once = resolved(studies[i]);
    char *twice = resolved(once);
    cr_expect_str_eq(twice, once, "parse(to_json(s)) is s");
    free(once);
    free(twice);
  }
  char *text = resolved(design_example);
  cr_expect(strstr(text, "\"G2\": {\n      \"fixed\": 45\n    }"), "%s", text);
  cr_expect(strstr(text, "\"memory_limit\": 4294967296"), "%s", text);
  cr_expect_null(strstr(text, "0.10000000000000001"));
  cr_expect(strstr(text, "\"mpp\": 0.5"), "%s", text);
  cr_expect_null(strstr(text, "slide_mpp"), "only when given");
  cr_expect(strstr(text, "\"stain_check\": true"), "%s", text);
  cr_expect(strstr(text, "\"object_reuse\": true"), "%s", text);
  free(text);
  text = resolved(studies[2]);
  cr_expect(strstr(text, "\"mpp\": 0.25") && strstr(text, "\"slide_mpp\": 0.2527"), "%s", text);
  cr_expect(strstr(text, "\"stain_check\": false"), "%s", text);
  cr_expect(strstr(text, "\"object_reuse\": false"), "%s", text);
  free(text);
  /* level costs round-trip to the bit: a resume plans the same buckets */
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  text = resolved(studies[3]);
  cr_assert_eq(wsisa_study_parse(text, "s.json", &s, &e), 0, "%s", e.msg);
  cr_expect_eq(s->reuse.nlevel_costs, 7);
  cr_expect(s->reuse.level_costs[5] == 0.1234567890123456789);
  cr_expect(s->reuse.level_costs[0] == 0.022279113);
  wsisa_study_free(s);
  free(text);
  /* references keep their order, and a label image its origin */
  text = resolved(studies[4]);
  const char *y = strstr(text, "\"y.svs\": {"), *x = strstr(text, "\"x.svs\": {");
  cr_expect(y && x && y < x, "%s", text);
  cr_expect(strstr(text, "\"region\": [\n") && strstr(text, "\"downsample\": 0.1"), "%s", text);
  cr_expect(strstr(text, "\"origin\": [\n          0,\n          0\n        ]"), "%s", text);
  free(text);
  /* inputs.tiles keeps its choice: the sample and its seed, the indices in
   * their order, the GeoJSON's CRC-32 */
  text = resolved(studies[5]);
  cr_assert_eq(wsisa_study_parse(text, "s.json", &s, &e), 0, "%s", e.msg);
  cr_expect_eq(s->inputs.tiles.kind, WSISA_TILES_SAMPLE);
  cr_expect_eq(s->inputs.tiles.sample, 12);
  cr_expect_eq(s->inputs.tiles.seed, 9);
  wsisa_study_free(s);
  free(text);
  text = resolved(studies[6]);
  cr_assert_eq(wsisa_study_parse(text, "s.json", &s, &e), 0, "%s", e.msg);
  cr_expect_eq(s->inputs.tiles.kind, WSISA_TILES_LIST);
  cr_expect(s->inputs.tiles.nvalues == 3 && s->inputs.tiles.values[1] == 3);
  wsisa_study_free(s);
  free(text);
  text = resolved(studies[8]);
  cr_assert_eq(wsisa_study_parse(text, "s.json", &s, &e), 0, "%s", e.msg);
  cr_expect_eq(s->inputs.tiles.kind, WSISA_TILES_GEOJSON);
  cr_expect(s->inputs.tiles.has_crc && s->inputs.tiles.crc32 == 0x00c0ffeeu);
  wsisa_study_free(s);
  free(text);
}

Test(engine_study, example_studies_load) {
  const char *files[] = {"tests/studies/moat_segmentation.json",
                         "tests/studies/vbd_segmentation.json", "tests/studies/ishigami.json",
                         "tests/studies/two_phase_segmentation.json"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    wsisa_study *s = NULL;
    wsisa_err e = WSISA_ERR_INIT;
    cr_expect_eq(wsisa_study_load(tu_src(files[i]), &s, &e), 0, "%s: %s", files[i], e.msg);
    wsisa_study_free(s);
  }
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_study_load("/no/such/study.json", &s, &e), WSISA_EIO);
  cr_expect(strstr(e.msg, "/no/such/study.json: cannot open"), "%s", e.msg);
}

Test(engine_study, memory_sizes) {
  uint64_t b;
  cr_expect_eq(wsisa_study_parse_bytes("4G", &b), 0);
  cr_expect_eq(b, 4ull << 30);
  cr_expect_eq(wsisa_study_parse_bytes("512M", &b), 0);
  cr_expect_eq(b, 512ull << 20);
  cr_expect_eq(wsisa_study_parse_bytes("1.5g", &b), 0);
  cr_expect_eq(b, 3ull << 29);
  cr_expect_eq(wsisa_study_parse_bytes("64KiB", &b), 0);
  cr_expect_eq(b, 64ull << 10);
  cr_expect_eq(wsisa_study_parse_bytes("100", &b), 0);
  cr_expect_eq(b, 100);
  cr_expect_neq(wsisa_study_parse_bytes("4X", &b), 0);
  cr_expect_neq(wsisa_study_parse_bytes("-1G", &b), 0);
  cr_expect_neq(wsisa_study_parse_bytes("G", &b), 0);
  cr_expect_neq(wsisa_study_parse_bytes("4Gi", &b), 0);
}

#define SEG "\"inputs\": {\"slides\": [\"x.svs\"]}, "
#define MOAT "\"method\": \"moat\""

/* Each bad study and the message it must produce. */
static const struct {
  const char *json, *want;
} bad[] = {
    {"{\"method\": \"moat\",", "s.json:1:18: string or '}' expected"},
    {"[1]", "s.json: expected a JSON object, got an array"},
    {"{" SEG MOAT ", \"foo\": 1}", "s.json: foo: unknown key (a study takes name, description"},
    {"{" SEG MOAT ", \"metric\": \"dice\", \"metric\": \"dice\"}", "duplicate object key"},
    {"{" SEG "\"parameters\": {\"G1\": {\"range\": [80, 5], \"step\": 5}}, " MOAT "}",
     "s.json: parameters.G1.range: lower bound 80 is above upper bound 5"},
    {"{" SEG "\"parameters\": {\"G1\": {\"range\": [5, 300], \"step\": 5}}, " MOAT "}",
     "s.json: parameters.G1.range: G1=300: outside the valid range 0..255"},
    {"{" SEG "\"parameters\": {\"minS\": {}}, " MOAT "}",
     "s.json: parameters.minS: not a segmentation parameter; did you mean min_size?"},
    {"{" SEG "\"parameters\": {\"G1\": {\"range\": [5, 80], \"step\": 2.5}}, " MOAT "}",
     "s.json: parameters.G1.step: G1 takes whole numbers"},
    {"{" SEG "\"parameters\": {\"G1\": {\"range\": [5, 80], \"integer\": false}}, " MOAT "}",
     "s.json: parameters.G1.integer: G1 takes whole numbers only"},
    {"{" SEG "\"parameters\": {\"fill_holes_conn\": {\"values\": [4, 6]}}, " MOAT "}",
     "s.json: parameters.fill_holes_conn.values[1]: fill_holes_conn=6: a connectivity is 4 or 8"},
    {"{" SEG "\"parameters\": {\"recon_conn\": {\"range\": [4, 8]}}, " MOAT "}",
     "parameters.recon_conn.range: recon_conn is a connectivity: use \"values\": [4, 8]"},
    {"{" SEG "\"parameters\": {\"G1\": {\"range\": [5, 80], \"fixed\": 5}}, " MOAT "}",
     "s.json: parameters.G1: give one of range, values or fixed"},
    {"{" SEG "\"parameters\": {\"G1\": {\"rnage\": [5, 80]}}, " MOAT "}",
     "s.json: parameters.G1.rnage: unknown key (a parameter takes range, step, integer, values, "
     "fixed, default, dist, bounds)"},
    {"{" SEG "\"parameters\": {\"G1\": \"5..80\"}, " MOAT "}",
     "s.json: parameters.G1: expected an object with range, values or fixed (or a number), got "
     "the string \"5..80\""},
    {"{\"parameters\": {\"x\": 1}, " MOAT "}",
     "s.json: parameters: every parameter is fixed; nothing to analyse"},
    {"{\"parameters\": {\"x\": {}}, " MOAT "}", "s.json: parameters.x: give range, values or fixed"},
    {"{\"parameters\": {\"x\": {\"fixed\": 1, \"step\": 1}}, " MOAT "}",
     "s.json: parameters.x.step: only goes with range"},
    {"{\"parameters\": {\"x\": {\"range\": [0, 1], \"step\": 0.3}}, " MOAT "}",
     "s.json: parameters.x.step: the range 0..1 is not a whole number of steps of 0.3"},
    {"{\"parameters\": {\"m\": {\"values\": [1, \"b\"]}}, " MOAT "}",
     "s.json: parameters.m.values[1]: expected a number (values are numeric), got the string \"b\""},
    {"{\"parameters\": {\"m\": {\"values\": [1]}}, " MOAT "}",
     "s.json: parameters.m.values: a categorical parameter needs 2 to 64 values, not 1"},
    {"{\"parameters\": {\"m\": {\"range\": [1, 1]}}, " MOAT "}",
     "s.json: parameters.m.range: 1..1 is a single value; make the parameter fixed"},
    {"{" MOAT "}", "s.json: parameters: required in a study without inputs"},
    {"{\"parameters\": {}, " MOAT "}", "s.json: parameters: a study without inputs needs at least one"},
    {"{" SEG "\"sampler\": \"halton\"}", "s.json: method: required"},
    {"{" SEG "\"method\": \"sobol\"}",
     "s.json: method: 'sobol' is not one of moat, vbd, correlation, two_phase"},
    {"{" SEG "\"method\": {\"trajectories\": 5}}", "s.json: method: needs a name"},
    {"{" SEG "\"method\": {\"name\": \"moat\", \"trajectoires\": 5}}",
     "s.json: method.trajectoires: unknown key (method moat takes name, trajectories, levels, pool)"},
    {"{" SEG "\"method\": {\"name\": \"moat\", \"bootstrap\": 5}}",
     "s.json: method.bootstrap: unknown key (method moat takes"},
    {"{" SEG "\"method\": {\"name\": \"moat\", \"trajectories\": \"ten\"}}",
     "s.json: method.trajectories: expected a whole number, got the string \"ten\""},
    {"{" SEG "\"method\": {\"name\": \"moat\", \"trajectories\": 1}}",
     "s.json: method.trajectories: 1 is too few; sigma needs at least 2"},
    {"{" SEG "\"method\": {\"name\": \"moat\", \"levels\": 5}}",
     "s.json: method.levels: 5 is not an even number"},
    {"{" SEG "\"method\": {\"name\": \"moat\", \"pool\": 4}}",
     "s.json: method.pool: 4 trajectories cannot yield the 10 to keep"},
    {"{" SEG "\"method\": {\"name\": \"vbd\", \"confidence\": 95}}",
     "s.json: method.confidence: 95 is not between 0 and 1"},
    {"{" SEG "\"method\": {\"name\": \"vbd\", \"second_order\": 1}}",
     "s.json: method.second_order: expected true or false, got 1"},
    {"{\"parameters\": {\"x\": {\"range\": [0, 1]}}, \"method\": {\"name\": \"vbd\", "
     "\"second_order\": true}}",
     "s.json: method.second_order: needs at least 2 varying parameters"},
    {"{" SEG "\"method\": {\"name\": \"correlation\", \"samples\": 16}}",
     "s.json: method.samples: 16 runs are too few for partial correlations of 15 parameters"},
    {"{" SEG "\"method\": {\"name\": \"two_phase\", \"keep\": 0}}",
     "s.json: method.keep: the second phase needs at least 1 parameter"},
    {"{" SEG MOAT ", \"sampler\": \"sobel\"}",
     "s.json: sampler: 'sobel' is not one of mc, lhs, halton, hammersley, sobol"},
    {"{" SEG MOAT ", \"sampler\": {\"name\": \"lhs\", \"seed\": -1}}",
     "s.json: sampler.seed: -1 is outside 0..9007199254740992"},
    {"{" SEG MOAT ", \"sampler\": {\"name\": \"lhs\", \"sed\": 1}}",
     "s.json: sampler.sed: unknown key (sampler takes name, seed)"},
    {"{" SEG MOAT ", \"metric\": \"dise\"}",
     "s.json: metric: 'dise' is not one of dice, jaccard, nucleus_count, mean_area, object_dice"},
    {"{" SEG MOAT ", \"metric\": [\"dice\", \"dice\"]}", "s.json: metric[1]: 'dice' is listed twice"},
    {"{" SEG MOAT ", \"metric\": []}", "s.json: metric: expected a non-empty array of strings"},
    {"{" SEG MOAT ", \"reuse\": {\"strategy\": \"fast\"}}",
     "s.json: reuse.strategy: 'fast' is not one of none, stage, naive, sca, rtma, trtma"},
    {"{" SEG MOAT ", \"reuse\": {\"max_buckets\": 0}}",
     "s.json: reuse.max_buckets: 0 is outside 1..1000000"},
    {"{" SEG MOAT ", \"reuse\": {\"cost_model\": \"time\"}}",
     "s.json: reuse.cost_model: 'time' is not one of tasks, measured, auto"},
    {"{" SEG MOAT ", \"reuse\": {\"buckets\": 3}}", "s.json: reuse.buckets: unknown key"},
    {"{" SEG MOAT ", \"reuse\": {\"object_reuse\": 1}}",
     "s.json: reuse.object_reuse: expected true or false, got 1"},
    {"{" SEG MOAT ", \"reuse\": {\"level_costs\": [1, 2]}}",
     "s.json: reuse.level_costs: expected an array of 7 numbers, one per task level"},
    {"{" SEG MOAT ", \"reuse\": {\"level_costs\": [1, 2, 3, 4, 5, -6, 7]}}",
     "s.json: reuse.level_costs[5]: a cost is not negative"},
    {"{" SEG MOAT ", \"execution\": {\"memory_limit\": \"4X\"}}",
     "s.json: execution.memory_limit: '4X' is not a size"},
    {"{" SEG MOAT ", \"execution\": {\"memory_limit\": -5}}",
     "s.json: execution.memory_limit: expected a size like \"4G\", got -5"},
    {"{" SEG MOAT ", \"execution\": {\"scheduler\": \"\"}}", "s.json: execution.scheduler: empty string"},
    {"{" SEG MOAT ", \"execution\": {\"workers\": 2}}", "s.json: execution.workers: unknown key"},
    {"{\"inputs\": {}, " MOAT "}", "s.json: inputs: needs slides (whole-slide images) or images"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"images\": [\"b.png\"]}, " MOAT "}",
     "s.json: inputs: give slides or images, not both"},
    {"{\"inputs\": {\"slides\": []}, " MOAT "}",
     "s.json: inputs.slides: expected a non-empty array of strings, got an array"},
    {"{\"inputs\": {\"slides\": [\"a.svs\", 3]}, " MOAT "}",
     "s.json: inputs.slides[1]: expected a string, got 3"},
    {"{\"inputs\": {\"images\": [\"a.jpg\"]}, " MOAT "}",
     "s.json: inputs.images[0]: 'a.jpg' is not a .png, .tif or .tiff file"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"overlap\": 1024}, " MOAT "}",
     "s.json: inputs.overlap: 1024 must be smaller than tile_size 1024"},
    {"{\"inputs\": {\"images\": [\"a.png\"], \"level\": 0}, " MOAT "}",
     "s.json: inputs.level: applies to slides (pyramids); images have one level"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"level\": -1}, " MOAT "}",
     "s.json: inputs.level: -1 is outside 0..64"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"stain_check\": 0}, " MOAT "}",
     "s.json: inputs.stain_check: expected true or false, got 0"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"tissue_only\": \"yes\"}, " MOAT "}",
     "s.json: inputs.tissue_only: expected true or false, got the string \"yes\""},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"halo\": \"wide\"}, " MOAT "}",
     "s.json: inputs.halo: 'wide': give \"auto\" or a whole number of pixels"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"halo\": -8}, " MOAT "}",
     "s.json: inputs.halo: -8 is outside 0..65536"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"normalization\": \"none\"}, " MOAT "}",
     "s.json: inputs.normalization: expected \"slide\" or \"tile\", got the string \"none\""},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"tile\": 512}, " MOAT "}",
     "s.json: inputs.tile: unknown key (inputs takes slides, images, level, tile_size, "
     "overlap, mpp, slide_mpp, tissue_only, stain_check, reference, halo, normalization, "
     "tiles)"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": {\"b.svs\": {\"geojson\": \"b.json\"}}}, "
     MOAT "}",
     "s.json: inputs.reference[\"b.svs\"]: not one of inputs.slides"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": {\"a.svs\": {\"geojson\": \"a.json\", "
     "\"mask\": \"a.png\"}}}, " MOAT "}",
     "s.json: inputs.reference[\"a.svs\"]: give one of geojson, labels or mask"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": {\"a.svs\": {\"origin\": [0, 0]}}}, "
     MOAT "}",
     "s.json: inputs.reference[\"a.svs\"]: give one of geojson, labels or mask"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": {\"a.svs\": {\"geojson\": \"a.json\", "
     "\"origin\": [0, 0]}}}, " MOAT "}",
     "s.json: inputs.reference[\"a.svs\"].origin: only goes with labels or mask"},
    {"{\"inputs\": {\"images\": [\"a.png\"], \"reference\": {\"a.png\": {\"labels\": \"l.png\", "
     "\"region\": [0, 0, 5, 5]}}}, " MOAT "}",
     "s.json: inputs.reference[\"a.png\"].region: only goes with geojson"},
    {"{\"inputs\": {\"images\": [\"a.png\"], \"reference\": {\"a.png\": {\"labels\": \"l.png\", "
     "\"mpp\": 0.5, \"downsample\": 2}}}, " MOAT "}",
     "s.json: inputs.reference[\"a.png\"]: give downsample or mpp, not both"},
    {"{\"inputs\": {\"images\": [\"a.png\"], \"reference\": {\"a.png\": {\"mask\": \"m.png\", "
     "\"origin\": [-1, 0]}}}, " MOAT "}",
     "s.json: inputs.reference[\"a.png\"].origin[0]: -1 is negative"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": {\"a.svs\": {\"geojson\": \"a.json\", "
     "\"region\": [0, 0, 0, 5]}}}, " MOAT "}",
     "s.json: inputs.reference[\"a.svs\"].region[2]: 0 is outside 1..9007199254740992"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": {\"a.svs\": {\"qupath\": \"a.json\"}}}, "
     MOAT "}",
     "s.json: inputs.reference[\"a.svs\"].qupath: unknown key (a reference takes geojson, labels, "
     "mask, origin, downsample, mpp, region)"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"reference\": []}, " MOAT "}",
     "s.json: inputs.reference: expected an object naming, per slide or image, its annotation"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"mpp\": 0}, " MOAT "}",
     "s.json: inputs.mpp: 0 is outside 0.01..100 um/pixel"},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"slide_mpp\": \"0.25\"}, " MOAT "}",
     "s.json: inputs.slide_mpp: expected a number, got the string \"0.25\""},
    {"{\"inputs\": {\"slides\": [\"a.svs\"], \"slide_mpp\": -0.25}, " MOAT "}",
     "s.json: inputs.slide_mpp: -0.25 is outside 0.01..100 um/pixel"},
};

Test(engine_study, bad_fields_name_file_and_path) {
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    wsisa_study *s = NULL;
    wsisa_err e = WSISA_ERR_INIT;
    int rc = wsisa_study_parse(bad[i].json, "s.json", &s, &e);
    cr_expect_eq(rc, WSISA_EUSAGE, "case %zu (%s): rc %d", i, bad[i].json, rc);
    cr_expect(strstr(e.msg, bad[i].want), "case %zu: '%s' lacks '%s'", i, e.msg, bad[i].want);
    cr_expect_null(s);
  }
}

Test(engine_study, two_phase_designs) {
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_load(tu_src("tests/studies/two_phase_segmentation.json"), &s, &e), 0,
               "%s", e.msg);
  wsisa_sa_space *space = NULL;
  wsisa_sa_design *d = NULL;
  wsisa_sa_opts o;
  cr_assert_eq(wsisa_study_design(s, NULL, &space, &o, &d, &e), 0, "%s", e.msg);
  cr_expect_eq(d->method, WSISA_SA_MOAT, "phase 1 screens");
  cr_expect_eq(d->nrows, 20 * 16);
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(space);
  cr_assert_eq(wsisa_study_design(s, "G2,G1,T1", &space, &o, &d, &e), 0, "%s", e.msg);
  cr_expect_eq(d->method, WSISA_SA_VBD, "phase 2 decomposes variance");
  cr_expect_eq(d->ndims, 3);
  cr_expect_eq(d->nrows, 256 * 5);
  cr_expect_eq(space->params[wsisa_sa_space_find(space, "G2")].kind, WSISA_SA_DISCRETE);
  cr_expect_eq(space->params[wsisa_sa_space_find(space, "min_size")].value, 11);
  for (size_t r = 0; r < d->nrows; r++)
    cr_assert_eq(d->values[r * 15 + 7], 11, "min_size stays at its default");
  wsisa_sa_design_free(d);
  wsisa_sa_space_free(space);
  cr_expect_eq(wsisa_study_design(s, "G2,,T1", &space, &o, &d, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "--select G2,,T1: an empty name"), "%s", e.msg);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_study_design(s, "G2,G7", &space, &o, &d, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "--select G2,G7: G7: not a parameter of the study"), "%s", e.msg);
  cr_expect_null(d);
  wsisa_study_free(s);
  cr_assert_eq(wsisa_study_load(tu_src("tests/studies/ishigami.json"), &s, NULL), 0);
  wsisa_err_clear(&e);
  cr_expect_eq(wsisa_study_design(s, "x1", &space, &o, &d, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "a selection is the second phase of a two_phase study"), "%s", e.msg);
  wsisa_study_free(s);
}

/* The design's size computed from the knobs counts a group once, as the
 * design made: G + 1 runs a trajectory, G + 2 a base sample (phase 2 too). */
Test(engine_study, design_size_counts_groups_once) {
  const char *text =
      "{\"parameters\": {\"a\": {\"range\": [0, 1]}, \"b\": {\"range\": [0, 1]}, \"c\": "
      "{\"range\": [0, 1]}, \"d\": {\"dist\": \"truncnorm\", \"bounds\": [0, 1, 0.5, 1]}}, "
      "\"groups\": {\"G\": [\"a\", \"c\"]}, \"method\": {\"name\": \"two_phase\", "
      "\"trajectories\": 5, \"samples\": 8}}";
  wsisa_study *s = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_study_parse(text, "g.json", &s, &e), 0, "%s", e.msg);
  const char *selects[] = {NULL, "a,b,c", "d,b"};
  size_t want[] = {5 * 4, 8 * 4, 8 * 4};
  for (int i = 0; i < 3; i++) {
    size_t rows = 0;
    double bytes = 0;
    cr_assert_eq(wsisa_study_design_size(s, selects[i], &rows, &bytes), 0);
    wsisa_sa_space *space = NULL;
    wsisa_sa_opts opts;
    wsisa_sa_design *d = NULL;
    cr_assert_eq(wsisa_study_design(s, selects[i], &space, &opts, &d, &e), 0, "%s", e.msg);
    cr_expect_eq(rows, want[i], "select %s", selects[i] ? selects[i] : "none");
    cr_expect_eq(d->nrows, want[i], "select %s", selects[i] ? selects[i] : "none");
    wsisa_sa_design_free(d);
    wsisa_sa_space_free(space);
  }
  char *json = NULL;
  cr_assert_eq(wsisa_study_to_json(s, &json, NULL), 0);
  cr_expect(strstr(json, "\"groups\"") && strstr(json, "\"truncnorm\""), "%s", json);
  wsisa_study *again = NULL;
  cr_expect_eq(wsisa_study_parse(json, "study.json", &again, &e), 0, "resolved study reads back: %s",
               e.msg);
  free(json);
  wsisa_study_free(again);
  wsisa_study_free(s);
}
