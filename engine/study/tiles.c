/* A study's tiles: each slide's tile grid at the study's resolution (tissue
 * tiles only unless asked), its stain checked on a few of them, and each image
 * whole; with inputs.reference, each input's annotation read and only the
 * tiles it covers kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/study/study.h"

/* What a study says to run an input the stain check refuses. */
#define STUDY_STAIN_OVERRIDE "set inputs.stain_check to false"

/* ---- tiles ----------------------------------------------------------------- */

static int add_tile(wsisa__study_run *s, const wsisa_tile_ref *t, const char *name, wsisa_err *e) {
  wsisa_tile_ref *nt = realloc(s->tiles, (s->ntiles + 1) * sizeof *nt);
  if (nt) s->tiles = nt;
  char **nn = realloc(s->tile_names, (s->ntiles + 1) * sizeof *nn);
  if (nn) s->tile_names = nn;
  if (!nt || !nn || !(s->tile_names[s->ntiles] = strdup(name)))
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->tiles[s->ntiles++] = *t;
  return 0;
}

/* Messages of the slide and grid code name the `wsisa tiles` flags; here the
 * settings come from the study, so its fields are named instead. */
static int study_field_error(const wsisa__study_run *s, const wsisa_err *inner, wsisa_err *e) {
  static const char *const flag[][2] = {
      {"--tile ", "inputs.tile_size: "}, {"--overlap ", "inputs.overlap: "},
      {"--level ", "inputs.level: "}, {"--mpp ", "inputs.mpp: "}};
  for (size_t i = 0; i < sizeof flag / sizeof *flag; i++)
    if (strncmp(inner->msg, flag[i][0], strlen(flag[i][0])) == 0)
      return wsisa_error(e, inner->code, "%s: %s%s", s->study->path, flag[i][1],
                         inner->msg + strlen(flag[i][0]));
  return wsisa_error(e, inner->code, "%s", inner->msg);
}

static int add_input(wsisa__study_run *s, const char *path, wsisa_input_kind kind, const wsisa_scale *scale,
                     wsisa__run_input **out, wsisa_err *e) {
  wsisa__run_input *ni = realloc(s->inputs, (s->ninputs + 1) * sizeof *ni);
  if (!ni) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->inputs = ni;
  wsisa__run_input *in = &s->inputs[s->ninputs++];
  memset(in, 0, sizeof *in);
  in->path = path;
  in->kind = kind;
  in->scale = *scale;
  in->first_tile = s->ntiles;
  *out = in;
  return 0;
}

/* The stain check's verdict on what input `ri` showed; its warning kept for
 * run.json. */
static int stain_verdict(wsisa__run_input *ri, wsisa_err *e) {
  char warning[4600];
  int rc = wsisa__stain_verdict(&ri->stain, ri->path, STUDY_STAIN_OVERRIDE, warning,
                                sizeof warning, e);
  if (!rc && warning[0] && !(ri->stain_warning = strdup(warning)))
    rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  return rc;
}

/* ---- annotations -------------------------------------------------------------- */

/* inputs.reference for input `ri`: its spec into ri->annot (which stays NULL
 * when the input has none), the file read and checked into *out (refused
 * before any work, naming it), its size and CRC-32 for reference.json. Level
 * 0 of the input is width0 x height0 pixels of `scale`'s MPP. */
static int input_annotation(wsisa__study_run *s, wsisa__run_input *ri, const wsisa_scale *scale,
                            int64_t width0, int64_t height0, wsisa_annotation **out,
                            wsisa_err *e) {
  *out = NULL;
  const wsisa_study_inputs *in = &s->study->inputs;
  const wsisa_study_reference *r = NULL;
  for (size_t i = 0; i < in->nreferences && !r; i++)
    if (strcmp(in->references[i].input, ri->path) == 0) r = &in->references[i];
  if (!r) return 0;
  wsisa_annot_spec *sp = calloc(1, sizeof *sp);
  if (!sp) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ri->annot = sp;
  sp->kind = r->kind;
  sp->path = r->path;
  sp->input = ri->path;
  sp->width0 = width0;
  sp->height0 = height0;
  sp->origin_x = r->origin[0];
  sp->origin_y = r->origin[1];
  sp->downsample = r->downsample > 0 ? r->downsample : 1;
  if (r->mpp > 0) {
    /* um per label pixel over um per level-0 pixel */
    if (scale->mpp <= 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "%s: inputs.reference[\"%s\"].mpp: the MPP of %s is unknown; give "
                         "downsample, or inputs.slide_mpp",
                         s->study->path, ri->path, ri->path);
    sp->downsample = r->mpp / scale->mpp;
  }
  sp->has_region = r->has_region;
  sp->region = (wsisa_rect){r->region[0], r->region[1], r->region[2], r->region[3]};
  /* the annotation first: its reader refuses at once what is not one (a
   * zero byte, a file past its bound) and gives way to a signal */
  int rc = wsisa_annotation_load(sp, out, e);
  if (rc) return rc;
  FILE *f = fopen(r->path, "rb");
  if (!f) rc = wsisa_error(e, WSISA_EIO, "%s: %s", r->path, strerror(errno));
  char buf[65536];
  size_t got;
  uint32_t crc = 0;
  uint64_t bytes = 0;
  /* bounded and interruptible: an annotation that never ends (/dev/zero)
   * must not hold a run that was told to stop */
  int stop = !f;
  while (!stop && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    crc = wsisa__crc32_more(crc, buf, got);
    bytes += got;
    stop = wsisa_units_interrupted() || bytes > WSISA_TEXT_MAX_GEOJSON;
  }
  int err = f && ferror(f) ? errno : 0;
  if (f) fclose(f);
  char size[32];
  if (err) rc = wsisa_error(e, WSISA_EIO, "%s: %s", r->path, strerror(err));
  else if (!rc && wsisa_units_interrupted())
    rc = wsisa_error(e, WSISA_EINTERRUPTED, "%s: interrupted while reading it; nothing written",
                     r->path);
  else if (!rc && bytes > WSISA_TEXT_MAX_GEOJSON)
    rc = wsisa_error(e, WSISA_EFORMAT, "%s: larger than %s, the most an annotation may hold",
                     r->path, wsisa_bytes_text((double)WSISA_TEXT_MAX_GEOJSON, size, sizeof size));
  if (rc) {
    wsisa_annotation_free(*out);
    *out = NULL;
    return rc;
  }
  ri->annot_bytes = bytes;
  ri->annot_crc32 = crc;
  ri->annot_objects = wsisa_annotation_objects(*out);
  return 0;
}

/* Is the tile in the study? Without annotations, every tile is; with them,
 * those the input's annotation covers (the others are counted). */
static int tile_annotated(wsisa__study_run *s, wsisa__run_input *ri, const wsisa_annotation *a,
                          wsisa_tile_ref *ref) {
  if (!s->annotated) return 1;
  ref->annot = ri->annot;
  if (a && wsisa_annotation_covers(a, &ref->scale, ref->x, ref->y, ref->width, ref->height))
    return 1;
  ri->tiles_left_out++;
  s->tiles_left_out++;
  return 0;
}

/* Tiles of one slide at the study's resolution, its stain checked first. */
static int slide_tiles(wsisa__study_run *s, const char *path, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  wsisa_slide *slide = NULL;
  wsisa_grid *g = NULL;
  wsisa__run_input *ri = NULL;
  wsisa_scale scale;
  char name[4400];
  int rc = wsisa_slide_open(path, &slide, e);
  if (rc) return rc;
  wsisa_err inner = WSISA_ERR_INIT;
  int nlevels = wsisa_slide_level_count(slide);
  if (in->level >= nlevels)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs.level: %d is not a level of %s (levels 0..%d)",
                     s->study->path, in->level, path, nlevels - 1);
  else if (!(rc = wsisa_scale_choose_level(slide, in->slide_mpp, in->mpp, in->level, &scale, e)) &&
      wsisa_grid_make_scaled(slide, &scale, in->tile_size, in->overlap, &g, &inner))
    rc = study_field_error(s, &inner, e);
  if (!rc) rc = add_input(s, path, WSISA_INPUT_SLIDE, &scale, &ri, e);
  if (!rc && in->stain_check) {
    ri->stain_checked = 1;
    if (!(rc = wsisa__stain_sample(slide, g, &ri->stain, e))) rc = stain_verdict(ri, e);
  }
  wsisa_level l0;
  wsisa_annotation *annot = NULL;
  if (!rc && s->annotated && !(rc = wsisa_slide_level(slide, 0, &l0, e)))
    rc = input_annotation(s, ri, &scale, l0.width, l0.height, &annot, e);
  for (size_t t = 0; !rc && t < g->ntiles; t++) {
    const wsisa_tile *tl = &g->tiles[t];
    if (in->tissue_only && !tl->tissue) continue;
    wsisa_tile_ref ref = {.path = path, .kind = WSISA_INPUT_SLIDE, .scale = scale, .x = tl->x, .y = tl->y,
                          .width = tl->width, .height = tl->height, .level0 = tl->level0};
    if (!tile_annotated(s, ri, annot, &ref)) continue;
    /* named by its level-0 rectangle, the slide's own coordinates */
    snprintf(name, sizeof name, "%s#%lld,%lld,%lld,%lld", path, (long long)tl->level0.x,
             (long long)tl->level0.y, (long long)tl->level0.width,
             (long long)tl->level0.height);
    ri->ntiles++;
    rc = add_tile(s, &ref, name, e);
  }
  if (!rc)
    wsisa_log(WSISA_LOG_INFO, "run", "%s: %g um/pixel (%s), level %d, factor %g: %zu tiles", path,
              scale.mpp, wsisa_mpp_source_name(scale.source), scale.level, scale.factor,
              ri->ntiles);
  wsisa_annotation_free(annot);
  wsisa_grid_free(g);
  wsisa_slide_close(slide);
  return rc;
}

/* An image file is one tile, taken as it is or, with inputs.slide_mpp, resampled
 * to the study's resolution. */
static int image_tile(wsisa__study_run *s, const char *path, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  wsisa_image *img = NULL;
  wsisa_scale scale;
  wsisa__run_input *ri = NULL;
  int rc = wsisa_image_read_scaled(path, in->slide_mpp, in->mpp, &img, &scale, e);
  if (!rc) rc = add_input(s, path, WSISA_INPUT_IMAGE, &scale, &ri, e);
  if (!rc && in->stain_check) {
    ri->stain_checked = 1;
    wsisa__stain_add(&ri->stain, img);
    rc = stain_verdict(ri, e);
  }
  wsisa_annotation *annot = NULL;
  if (!rc && s->annotated)
    rc = input_annotation(s, ri, &scale, scale.level_width, scale.level_height, &annot, e);
  if (!rc) {
    double step = wsisa_scale_step(&scale);
    wsisa_tile_ref ref = {.path = path, .kind = WSISA_INPUT_IMAGE, .scale = scale, .width = img->width,
                          .height = img->height,
                          .level0 = {0, 0, llround(img->width * step), llround(img->height * step)}};
    if (tile_annotated(s, ri, annot, &ref)) {
      ri->ntiles = 1;
      rc = add_tile(s, &ref, path, e);
    }
  }
  wsisa_annotation_free(annot);
  wsisa_image_free(img);
  return rc;
}

int wsisa__study_tiles(wsisa__study_run *s, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  int rc = 0;
  s->annotated = in->nreferences > 0;
  for (size_t i = 0; i < in->nslides && !rc; i++) rc = slide_tiles(s, in->slides[i], e);
  for (size_t i = 0; i < in->nimages && !rc; i++) rc = image_tile(s, in->images[i], e);
  /* a label image or mask covers a tile only whole: one smaller than its
   * input is the likelier slip than GeoJSON coordinates at another level */
  int images_only = 1;
  for (size_t i = 0; i < in->nreferences; i++)
    images_only &= in->references[i].kind != WSISA_ANNOT_GEOJSON;
  if (!rc && s->ntiles == 0 && s->annotated && images_only)
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: inputs.reference: no tile is annotated (%zu tiles, none covered "
                     "whole by a label image or mask: is each the size of its input, at its "
                     "downsample?)",
                     s->study->path, s->tiles_left_out);
  else if (!rc && s->ntiles == 0 && s->annotated)
    rc = wsisa_error(e, WSISA_EUSAGE,
                     "%s: inputs.reference: no tile is annotated (%zu tiles, none covered by "
                     "an annotation: are its coordinates level-0 pixels of the slide?)",
                     s->study->path, s->tiles_left_out);
  else if (!rc && s->ntiles == 0)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs: no tile to segment (no tissue found?)",
                     s->study->path);
  if (!rc && s->annotated)
    wsisa_log(WSISA_LOG_INFO, "run", "annotations cover %zu tiles; %zu left out", s->ntiles,
              s->tiles_left_out);
  return rc;
}

int wsisa__study_halo_for(const wsisa_study *study, const double *params, size_t nruns) {
  if (study->inputs.halo >= 0) return study->inputs.halo;
  return wsisa_workflow_halo_at(params, nruns, study->inputs.mpp);
}

int wsisa__study_halo(const wsisa__study_run *s) {
  return wsisa__study_halo_for(s->study, s->params, s->nruns);
}

void wsisa__study_tiles_free(wsisa__study_run *s) {
  for (size_t i = 0; i < s->ntiles; i++) free(s->tile_names[i]);
  free(s->tile_names);
  free(s->tiles);
  for (size_t i = 0; i < s->ninputs; i++) {
    free(s->inputs[i].annot);
    free(s->inputs[i].stain_warning);
  }
  free(s->inputs);
  s->tile_names = NULL;
  s->tiles = NULL;
  s->inputs = NULL;
  s->ntiles = s->ninputs = 0;
}
