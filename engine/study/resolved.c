/* A study written back resolved (defaults filled in) as JSON, for a run's
 * provenance (study.json) and a resume, which reads it back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/exec/exec.h"
#include "engine/study/study.h"

/* Whole numbers print as integers, others as reals; *digits17 is raised when
 * a real needs 17 digits to read back (else 15 keep 0.1 from printing as
 * 0.10000000000000001). */
static json_t *number(double v, int *digits17) {
  if (v == floor(v) && fabs(v) < 9007199254740992.0) return json_integer((json_int_t)v);
  char buf[40];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) *digits17 = 1;
  return json_real(v);
}

static json_t *strings(char **list, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(list[i]));
  return a;
}

static json_t *param_json(const wsisa_sa_param *p, int *d17) {
  json_t *o = json_object();
  switch (p->kind) {
    case WSISA_SA_FIXED: json_object_set_new(o, "fixed", number(p->value, d17)); return o;
    case WSISA_SA_CATEGORICAL: {
      json_t *v = json_array();
      for (size_t i = 0; i < p->nvalues; i++) json_array_append_new(v, number(p->values[i], d17));
      json_object_set_new(o, "values", v);
      break;
    }
    default:
      if (p->dist != WSISA_SA_UNIF) {
        json_t *b = json_array();
        for (size_t i = 0; i < wsisa_sa_dist_nbounds(p->dist); i++)
          json_array_append_new(b, number(p->bounds[i], d17));
        json_object_set_new(o, "dist", json_string(wsisa_sa_dist_name(p->dist)));
        json_object_set_new(o, "bounds", b);
        break;
      }
      json_object_set_new(o, "range", json_pack("[o, o]", number(p->lo, d17), number(p->hi, d17)));
      if (p->kind == WSISA_SA_DISCRETE) json_object_set_new(o, "step", number(p->step, d17));
      if (p->kind == WSISA_SA_INTEGER) json_object_set_new(o, "integer", json_true());
      break;
  }
  json_object_set_new(o, "default", number(p->value, d17));
  return o;
}

int wsisa_study_to_json(const wsisa_study *s, char **out, wsisa_err *e) {
  *out = NULL;
  int d17 = 0;
  json_t *root = json_object();
  if (s->name) json_object_set_new(root, "name", json_string(s->name));
  if (s->description) json_object_set_new(root, "description", json_string(s->description));
  if (s->segmentation) {
    const wsisa_study_inputs *in = &s->inputs;
    json_t *o = json_object();
    if (in->nslides) json_object_set_new(o, "slides", strings(in->slides, in->nslides));
    if (in->nimages) json_object_set_new(o, "images", strings(in->images, in->nimages));
    if (in->level >= 0) json_object_set_new(o, "level", json_integer(in->level));
    json_object_set_new(o, "tile_size", json_integer(in->tile_size));
    json_object_set_new(o, "overlap", json_integer(in->overlap));
    json_object_set_new(o, "tissue_only", json_boolean(in->tissue_only));
    json_object_set_new(o, "mpp", json_real(in->mpp));
    if (in->slide_mpp > 0) json_object_set_new(o, "slide_mpp", json_real(in->slide_mpp));
    json_object_set_new(o, "stain_check", json_boolean(in->stain_check));
    json_object_set_new(o, "halo", in->halo < 0 ? json_string("auto") : json_integer(in->halo));
    json_object_set_new(o, "normalization", json_string(in->tile_stats ? "tile" : "slide"));
    if (in->nreferences) {
      json_t *refs = json_object();
      for (size_t i = 0; i < in->nreferences; i++) {
        const wsisa_study_reference *r = &in->references[i];
        json_t *one = json_object();
        json_object_set_new(one, wsisa_annot_kind_name(r->kind), json_string(r->path));
        if (r->kind != WSISA_ANNOT_GEOJSON)
          json_object_set_new(one, "origin", json_pack("[o, o]", number(r->origin[0], &d17),
                                                       number(r->origin[1], &d17)));
        if (r->downsample > 0) json_object_set_new(one, "downsample", number(r->downsample, &d17));
        if (r->mpp > 0) json_object_set_new(one, "mpp", number(r->mpp, &d17));
        if (r->has_region)
          json_object_set_new(one, "region",
                              json_pack("[I, I, I, I]", (json_int_t)r->region[0],
                                        (json_int_t)r->region[1], (json_int_t)r->region[2],
                                        (json_int_t)r->region[3]));
        json_object_set_new(refs, r->input, one);
      }
      json_object_set_new(o, "reference", refs);
    }
    const wsisa_study_tiles *t = &in->tiles;
    json_t *tiles = NULL;
    if (t->kind == WSISA_TILES_SAMPLE) {
      tiles = json_pack("{s:I, s:I}", "sample", (json_int_t)t->sample, "seed",
                        (json_int_t)t->seed);
    } else if (t->kind == WSISA_TILES_LIST) {
      tiles = json_array();
      for (size_t i = 0; i < t->nvalues; i++)
        json_array_append_new(tiles, json_integer((json_int_t)t->values[i]));
    } else if (t->kind == WSISA_TILES_RECTS) {
      json_t *rects = json_array();
      for (size_t i = 0; i < t->nvalues / 4; i++)
        json_array_append_new(rects, json_pack("[I, I, I, I]", (json_int_t)t->values[4 * i],
                                               (json_int_t)t->values[4 * i + 1],
                                               (json_int_t)t->values[4 * i + 2],
                                               (json_int_t)t->values[4 * i + 3]));
      tiles = json_pack("{s:o}", "regions", rects);
    } else if (t->kind == WSISA_TILES_GEOJSON) {
      tiles = json_pack("{s:s}", "regions", t->geojson);
      if (t->has_crc) {
        char hex[16];
        snprintf(hex, sizeof hex, "%08x", (unsigned)t->crc32);
        json_object_set_new(tiles, "crc32", json_string(hex));
      }
    }
    if (tiles) json_object_set_new(o, "tiles", tiles);
    json_object_set_new(root, "inputs", o);
  }
  json_t *params = json_object();
  for (size_t i = 0; i < s->space->nparams; i++)
    json_object_set_new(params, s->space->params[i].name, param_json(&s->space->params[i], &d17));
  json_object_set_new(root, "parameters", params);
  json_t *groups = json_object();
  for (size_t i = 0; i < s->space->nparams; i++) {
    const wsisa_sa_param *p = &s->space->params[i];
    if (!p->group[0]) continue;
    json_t *members = json_object_get(groups, p->group);
    if (!members) json_object_set_new(groups, p->group, members = json_array());
    json_array_append_new(members, json_string(p->name));
  }
  if (json_object_size(groups)) json_object_set(root, "groups", groups);
  json_decref(groups);
  const wsisa_sa_opts *o = &s->sa;
  json_t *m = json_object();
  json_object_set_new(m, "name", json_string(wsisa_sa_method_name(o->method)));
  int moat = o->method == WSISA_SA_MOAT || o->method == WSISA_SA_TWO_PHASE;
  int vbd = o->method == WSISA_SA_VBD || o->method == WSISA_SA_TWO_PHASE;
  if (moat) {
    json_object_set_new(m, "trajectories", json_integer((json_int_t)o->trajectories));
    json_object_set_new(m, "levels", json_integer(o->levels));
    if (o->pool) json_object_set_new(m, "pool", json_integer((json_int_t)o->pool));
  }
  if (o->method == WSISA_SA_TWO_PHASE) json_object_set_new(m, "keep", json_integer((json_int_t)o->keep));
  if (vbd || o->method == WSISA_SA_CORRELATION)
    json_object_set_new(m, "samples", json_integer((json_int_t)o->samples));
  if (vbd) {
    json_object_set_new(m, "bootstrap", json_integer((json_int_t)o->bootstrap));
    json_object_set_new(m, "confidence", number(o->confidence, &d17));
    json_object_set_new(m, "second_order", json_boolean(o->second_order));
  }
  json_object_set_new(root, "method", m);
  json_object_set_new(root, "sampler",
                      json_pack("{s:s, s:I}", "name", wsisa_sa_sampler_name(o->sampler), "seed",
                                (json_int_t)o->seed));
  if (s->nmetrics) json_object_set_new(root, "metric", strings(s->metrics, s->nmetrics));
  json_t *r = json_object();
  json_object_set_new(r, "strategy", json_string(wsisa_reuse_strategy_name(s->reuse.strategy)));
  if (s->reuse.max_buckets) json_object_set_new(r, "max_buckets", json_integer(s->reuse.max_buckets));
  if (s->reuse.max_bucket_size)
    json_object_set_new(r, "max_bucket_size", json_integer(s->reuse.max_bucket_size));
  if (s->reuse.active_paths) json_object_set_new(r, "active_paths", json_integer(s->reuse.active_paths));
  json_object_set_new(r, "cost_model", json_string(wsisa_study_cost_name(s->reuse.cost)));
  json_object_set_new(r, "object_reuse", json_boolean(s->reuse.object_reuse));
  if (s->reuse.nlevel_costs) {
    json_t *lc = json_array();
    for (size_t l = 0; l < s->reuse.nlevel_costs; l++)
      json_array_append_new(lc, number(s->reuse.level_costs[l], &d17));
    json_object_set_new(r, "level_costs", lc);
  }
  json_object_set_new(root, "reuse", r);
  json_t *x = json_object();
  if (s->execution.memory_limit)
    json_object_set_new(x, "memory_limit", json_integer((json_int_t)s->execution.memory_limit));
  if (s->execution.scheduler) json_object_set_new(x, "scheduler", json_string(s->execution.scheduler));
  json_object_set_new(x, "placement", json_string(wsisa_placement_names[s->execution.placement]));
  json_object_set_new(root, "execution", x);
  *out = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(d17 ? 17 : 15));
  json_decref(root);
  if (!*out) return wsisa_error(e, WSISA_ENOMEM, "out of memory writing the study as JSON");
  return 0;
}
