/* A whole study (`wsisa run`): tiles, design, reuse plan, execution on StarPU
 * and MPI ranks through the unit queue, the journal, metrics, indices and
 * provenance. Each step is a function of its own; wsisa_runner_run strings
 * them together.
 *
 * The results folder: everything that can be refused is refused before it
 * exists; it is made complete enough to resume (study.json, samples.csv, the
 * journal's header) in a temporary folder beside it and renamed into place;
 * one process writes it at a time (a flock on DIR/lock, which holds the
 * writer's pid); `wsisa run --check DIR` verifies it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "codelets/codelets.h"
#include "engine/engine_private.h"
#include "io/csv.h"
#include "io/io.h"

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

static int add_input(wsisa__study_run *s, const char *path, int is_slide, const wsisa_scale *scale,
                     wsisa__run_input **out, wsisa_err *e) {
  wsisa__run_input *ni = realloc(s->inputs, (s->ninputs + 1) * sizeof *ni);
  if (!ni) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  s->inputs = ni;
  wsisa__run_input *in = &s->inputs[s->ninputs++];
  memset(in, 0, sizeof *in);
  in->path = path;
  in->is_slide = is_slide;
  in->scale = *scale;
  in->first_tile = s->ntiles;
  *out = in;
  return 0;
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
  if (!rc) rc = add_input(s, path, 1, &scale, &ri, e);
  if (!rc && in->stain_check) {
    ri->stain_checked = 1;
    if (!(rc = wsisa__stain_sample(slide, g, &ri->stain, e)))
      rc = wsisa__stain_verdict(&ri->stain, path, STUDY_STAIN_OVERRIDE, e);
  }
  wsisa_level l0;
  wsisa_annotation *annot = NULL;
  if (!rc && s->annotated && !(rc = wsisa_slide_level(slide, 0, &l0, e)))
    rc = input_annotation(s, ri, &scale, l0.width, l0.height, &annot, e);
  const double um2 = scale.target_mpp * scale.target_mpp;
  for (size_t t = 0; !rc && t < g->ntiles; t++) {
    const wsisa_tile *tl = &g->tiles[t];
    if (in->tissue_only && !tl->tissue) continue;
    wsisa_tile_ref ref = {.path = path, .is_slide = 1, .scale = scale, .x = tl->x, .y = tl->y,
                          .width = tl->width, .height = tl->height, .level0 = tl->level0};
    if (!tile_annotated(s, ri, annot, &ref)) continue;
    /* named by its level-0 rectangle, the slide's own coordinates */
    snprintf(name, sizeof name, "%s#%lld,%lld,%lld,%lld", path, (long long)tl->level0.x,
             (long long)tl->level0.y, (long long)tl->level0.width,
             (long long)tl->level0.height);
    ri->tissue_mm2 += (double)tl->width * tl->height * tl->tissue_fraction * um2 * 1e-6;
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
 * to the study's resolution; its whole area counts as tissue. */
static int image_tile(wsisa__study_run *s, const char *path, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  wsisa_image *img = NULL;
  wsisa_scale scale;
  wsisa__run_input *ri = NULL;
  int rc = wsisa_image_read_scaled(path, in->slide_mpp, in->mpp, &img, &scale, e);
  if (!rc) rc = add_input(s, path, 0, &scale, &ri, e);
  if (!rc && in->stain_check) {
    ri->stain_checked = 1;
    wsisa__stain_add(&ri->stain, img);
    rc = wsisa__stain_verdict(&ri->stain, path, STUDY_STAIN_OVERRIDE, e);
  }
  wsisa_annotation *annot = NULL;
  if (!rc && s->annotated)
    rc = input_annotation(s, ri, &scale, scale.level_width, scale.level_height, &annot, e);
  if (!rc) {
    double step = wsisa_scale_step(&scale);
    wsisa_tile_ref ref = {.path = path, .is_slide = 0, .scale = scale, .width = img->width,
                          .height = img->height,
                          .level0 = {0, 0, llround(img->width * step), llround(img->height * step)}};
    if (tile_annotated(s, ri, annot, &ref)) {
      ri->tissue_mm2 =
          (double)img->width * img->height * scale.target_mpp * scale.target_mpp * 1e-6;
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

void wsisa__study_tiles_free(wsisa__study_run *s) {
  for (size_t i = 0; i < s->ntiles; i++) free(s->tile_names[i]);
  free(s->tile_names);
  free(s->tiles);
  for (size_t i = 0; i < s->ninputs; i++) free(s->inputs[i].annot);
  free(s->inputs);
  s->tile_names = NULL;
  s->tiles = NULL;
  s->inputs = NULL;
  s->ntiles = s->ninputs = 0;
}

/* ---- design and plan --------------------------------------------------------- */

/* A design made elsewhere (wsisa sample, another SA tool): one row per run,
 * run_id first, segmentation parameters by their canonical names; the
 * parameters it does not name keep their defaults. */
static int design_from_csv(wsisa__study_run *s, const char *path, size_t max_runs,
                           wsisa_err *e) {
  wsisa_csv *c = NULL;
  int rc = wsisa_csv_read(path, &c, e);
  if (rc) return rc;
  if (max_runs && c->nrows > max_runs) {
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: %zu runs, more than %zu (--force goes on if the "
                     "machine can hold them)", path, c->nrows, max_runs);
    wsisa_csv_free(c);
    return rc;
  }
  long col_of[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) col_of[p] = wsisa_csv_column(c, wsisa_seg_param_name(p));
  for (size_t k = 1; k < c->ncols && !rc; k++)
    if (!wsisa_sa_seg_find(c->header[k]))
      rc = wsisa_error(e, WSISA_EUSAGE, "%s: column %s: not a segmentation parameter", path,
                       c->header[k]);
  if (!rc && c->nrows == 0) rc = wsisa_error(e, WSISA_EUSAGE, "%s: no runs", path);
  uint64_t *ids = rc ? NULL : malloc(c->nrows * sizeof *ids);
  if (!rc && !ids) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) rc = wsisa_csv_run_ids(c, ids, e);
  if (!rc) {
    s->nruns = c->nrows;
    s->run_ids = ids;
    ids = NULL;
    s->params = malloc(s->nruns * WSISA_SEG_NPARAMS * sizeof *s->params);
    if (!s->params) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  for (size_t r = 0; !rc && r < s->nruns; r++)
    for (int p = 0; !rc && p < WSISA_SEG_NPARAMS; p++) {
      double v = wsisa_seg_defaults()[p];
      if (col_of[p] >= 0 && !(rc = wsisa_csv_number(c, r, (size_t)col_of[p], &v, e)) &&
          (rc = wsisa_sa_seg_validate(wsisa_seg_param_name(p), v, NULL)))
        rc = wsisa_error(e, WSISA_EUSAGE, "%s:%zu: %s=%g is outside the valid range", path,
                         c->lines[r], wsisa_seg_param_name(p), v);
      s->params[r * WSISA_SEG_NPARAMS + p] = v;
    }
  free(ids);
  wsisa_csv_free(c);
  return rc;
}

static int make_design(wsisa__study_run *s, const char *samples, size_t max_runs,
                       wsisa_err *e) {
  if (samples) {
    s->from_csv = 1;
    return design_from_csv(s, samples, max_runs, e);
  }
  int rc = wsisa_study_design(s->study, NULL, &s->space, &s->sa, &s->design, e);
  if (rc) return rc;
  s->nruns = s->design->nrows;
  s->params = malloc(s->nruns * WSISA_SEG_NPARAMS * sizeof *s->params);
  if (!s->params) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) {
    long col = wsisa_sa_space_find(s->space, wsisa_seg_param_name(p));
    for (size_t r = 0; r < s->nruns; r++)
      s->params[r * WSISA_SEG_NPARAMS + p] =
          col < 0 ? wsisa_seg_defaults()[p]
                  : s->design->values[r * s->design->nparams + (size_t)col];
  }
  return 0;
}

static int make_plan(wsisa__study_run *s, wsisa_err *e) {
  double t0 = wsisa_now();
  int level[WSISA_SEG_NPARAMS];
  for (int p = 0; p < WSISA_SEG_NPARAMS; p++) level[p] = wsisa_seg_param_level(p);
  uint64_t *keys = malloc(s->nruns * WSISA_SEG_LEVELS * sizeof *keys);
  if (!keys) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  int rc = wsisa_plan_keys(s->params, s->nruns, WSISA_SEG_NPARAMS, level, keys);
  if (!rc) rc = wsisa_reuse_design_new(keys, s->nruns, WSISA_SEG_LEVELS, &s->plan);
  if (rc) {
    free(keys);
    return wsisa_error(e, rc, "cannot analyse the design for reuse");
  }
  if (s->study->reuse.strategy == WSISA_STUDY_REUSE_NONE) {
    rc = wsisa_plan_singletons(keys, s->nruns, &s->buckets);
    if (rc) rc = wsisa_error(e, rc, "out of memory");
  } else {
    wsisa_reuse_opts o;
    int by_cost = s->cost_source && strcmp(s->cost_source, "tasks") != 0;
    wsisa_plan_reuse_opts(s->study, s->workers, by_cost ? s->level_cost : NULL, &o);
    /* the knobs in force, for run.json */
    s->study->reuse.max_buckets = (int)o.max_buckets;
    s->study->reuse.max_bucket_size = (int)o.max_bucket_size;
    rc = wsisa_reuse_merge(s->plan, &o, &s->buckets);
    if (rc) rc = wsisa_error(e, rc, "reuse planning failed");
  }
  free(keys);
  s->tasks_no_reuse = (uint64_t)s->nruns * WSISA_SEG_LEVELS * s->ntiles;
  s->t_plan = wsisa_now() - t0;
  return rc;
}

/* With no study file: the bundled sample slide (installed beside the
 * executable, or in the source tree) and a small MOAT study. */
static const char default_study[] =
    "{ \"name\": \"default: MOAT screening of the 15 parameters on the bundled sample\",\n"
    "  \"inputs\": { \"slides\": [\"%s\"],\n"
    "              \"tile_size\": 1024, \"tissue_only\": true },\n"
    "  \"method\": { \"name\": \"moat\", \"trajectories\": 4, \"levels\": 4 },\n"
    "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 },\n"
    "  \"metric\": [\"dice\", \"jaccard\"] }\n";

/* ---- the results folder --------------------------------------------------------- */

/* What one run keeps per run besides its tiles' counts: the parameters, the
 * task keys and its share of the reuse plan (compact graph, trees, buckets;
 * as engine/plan.c measures for `wsisa plan`), and per (run, tile) its
 * counts. */
#define RUN_BYTES (WSISA_SEG_NPARAMS * 8 + WSISA_SEG_LEVELS * 8 + 2560)
#define RUN_TILE_BYTES (sizeof(wsisa_counts) + 1)

/* The pid a lock file holds, 0 if unreadable. */
static long lock_holder(int fd) {
  char buf[32] = "";
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return strtol(buf, NULL, 10);
}

/* flock DIR/lock for this process (exclusive: a writer; shared: --check, which
 * only waits for no writer) and, as a writer, put our pid in it. The lock goes
 * with the process, however it ends: a killed run leaves no stale lock. */
static int lock_folder(const char *dir, int exclusive, int *fd_out, wsisa_err *e) {
  char path[4200];
  snprintf(path, sizeof path, "%s/lock", dir);
  *fd_out = -1;
  int fd = open(path, (exclusive ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (!exclusive && errno == ENOENT) return 0;
    return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  }
  if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    int err = errno;
    long pid = lock_holder(fd);
    /* the holder writes its pid just after it locks: give it that moment;
     * until then the file may still hold the pid of the writer before it,
     * a process that is gone */
    for (int i = 0; i < 20 && (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) &&
                    err == EWOULDBLOCK;
         i++) {
      nanosleep(&(struct timespec){0, 10000000}, NULL);
      pid = lock_holder(fd);
    }
    close(fd);
    if (err == EWOULDBLOCK)
      return pid > 0 ? wsisa_error(e, WSISA_EUSAGE,
                                   "%s: in use by another wsisa run (pid %ld); one writer at a "
                                   "time",
                                   dir, pid)
                     : wsisa_error(e, WSISA_EUSAGE,
                                   "%s: in use by another wsisa run; one writer at a time", dir);
    return wsisa_error(e, WSISA_EIO, "%s: cannot lock: %s", path, strerror(err));
  }
  if (exclusive) {
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
      int err = errno;
      close(fd);
      return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(err));
    }
  }
  *fd_out = fd;
  return 0;
}

/* A folder this process made, with the files it put there. */
static void remove_folder(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  char path[4400];
  while (d && (ent = readdir(d))) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static int folder_empty(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  int empty = d != NULL;
  while (empty && (ent = readdir(d)))
    empty = strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0;
  if (d) closedir(d);
  return empty;
}

/* The folder -o names, checked before any work: new or empty, with a place
 * beside it for the temporary folder. */
static int check_new_folder(const char *dir, wsisa_err *e) {
  struct stat st;
  char path[4200];
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return wsisa_error(e, WSISA_EUSAGE, "-o %s: exists and is not a folder", dir);
    int fd;
    /* a writer inside: say who */
    snprintf(path, sizeof path, "%s/lock", dir);
    if (access(path, F_OK) == 0) {
      int rc = lock_folder(dir, 0, &fd, e);
      if (rc) return rc;
      if (fd >= 0) close(fd);
    }
    snprintf(path, sizeof path, "%s/study.json", dir);
    if (access(path, F_OK) == 0)
      return wsisa_error(e, WSISA_EUSAGE,
                         "-o %s: already holds a study's results (use --resume %s, or another -o)",
                         dir, dir);
    if (!folder_empty(dir))
      return wsisa_error(e, WSISA_EUSAGE, "-o %s: not empty (give a new or an empty folder)", dir);
  } else if (errno != ENOENT) {
    return wsisa_error(e, WSISA_EIO, "-o %s: %s", dir, strerror(errno));
  }
  snprintf(path, sizeof path, "%s", dir);
  char *slash = strrchr(path, '/');
  const char *parent = !slash ? "." : slash == path ? "/" : (*slash = '\0', path);
  if (access(parent, W_OK) != 0)
    return wsisa_error(e, WSISA_EIO, "-o %s: cannot create it in %s (%s)", dir, parent,
                       strerror(errno));
  return 0;
}

static int sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

/* Make the results folder complete enough to resume from the moment it
 * exists: locked, study.json, samples.csv (and design.csv), the journals'
 * headers, all synced in a temporary folder beside it, then renamed into
 * place. */
static int create_folder(wsisa__study_run *s, const char *out, wsisa_err *e) {
  char temp[4096], parent[4096];
  int len = snprintf(temp, sizeof temp, "%s.tmp-XXXXXX", out);
  if (len < 0 || (size_t)len >= sizeof temp)
    return wsisa_error(e, WSISA_EUSAGE, "-o %s: path too long", out);
  if (!mkdtemp(temp))
    return wsisa_error(e, WSISA_EIO, "-o %s: cannot create a folder beside it (%s)", out,
                       strerror(errno));
  /* mkdtemp makes it 0700; a results folder is as readable as mkdir makes it */
  mode_t mask = umask(0);
  umask(mask);
  chmod(temp, 0777 & ~mask);
  snprintf(s->dir, sizeof s->dir, "%s", temp);
  int rc = lock_folder(temp, 1, &s->lock_fd, e);
  if (!rc) rc = wsisa__results_study(s, e);
  if (!rc) rc = wsisa__results_samples(s, NULL, e);
  if (!rc) rc = wsisa__results_reference(s, NULL, e);
  if (!rc) rc = wsisa__journal_open(s, 1, e);
  if (!rc && s->features) {
    wsisa__run_features_move(s->features, temp);
    rc = wsisa__run_features_open(s->features, 1, e);
  }
  if (!rc && sync_dir(temp) != 0)
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", temp, strerror(errno));
  if (!rc && rename(temp, out) != 0) {
    int err = errno;
    if (err == EEXIST || err == ENOTEMPTY) {
      /* another command made it meanwhile: say which if it is a writer */
      int fd;
      rc = lock_folder(out, 0, &fd, e);
      if (fd >= 0) close(fd);
      if (!rc)
        rc = wsisa_error(e, WSISA_EUSAGE, "-o %s: made by another command meanwhile", out);
    } else {
      rc = wsisa_error(e, WSISA_EIO, "-o %s: %s", out, strerror(err));
    }
  }
  if (rc) {
    remove_folder(temp);
    snprintf(s->dir, sizeof s->dir, "%s", out);
    return rc;
  }
  snprintf(s->dir, sizeof s->dir, "%s", out);
  if (s->features) wsisa__run_features_move(s->features, out);
  s->created = 1;
  snprintf(parent, sizeof parent, "%s", out);
  char *slash = strrchr(parent, '/');
  sync_dir(!slash ? "." : slash == parent ? "/" : (*slash = '\0', parent));
  return 0;
}

/* ---- the steps of a run ------------------------------------------------------ */

/* The request's settings over the study's. */
static void apply_request(wsisa__study_run *s, const wsisa_runner_request *r) {
  wsisa_study_reuse_opts *ro = &s->study->reuse;
  if (r->strategy >= 0) ro->strategy = (wsisa_study_reuse)r->strategy;
  if (r->max_buckets) ro->max_buckets = (int)r->max_buckets;
  if (r->max_bucket_size) ro->max_bucket_size = (int)r->max_bucket_size;
  if (r->active_paths) ro->active_paths = (int)r->active_paths;
  if (r->memory_limit) s->study->execution.memory_limit = r->memory_limit;
  if (r->object_reuse >= 0) ro->object_reuse = r->object_reuse;
  /* given costs: --level-costs, else the study's (a resumed run's: those it
   * planned with) */
  s->cost_source = "tasks";
  const double *given = r->level_cost ? r->level_cost
                        : ro->nlevel_costs && ro->cost != WSISA_STUDY_COST_TASKS ? ro->level_costs
                                                                                 : NULL;
  if (given) {
    memcpy(s->level_cost, given, sizeof s->level_cost);
    s->cost_source = "level_costs";
  }
}

/* The results folder a --resume or --check names, NULL for a new run. */
static const char *existing(const wsisa_runner_request *r) {
  return r->resume ? r->resume : r->check;
}

/* The study (from its file, the results folder, or the default), checked
 * before anything is written. */
static int load_study(wsisa__study_run *s, const wsisa_runner_request *r, char *study_path, size_t cap,
                      const char **sched, wsisa_err *e) {
  int rc;
  const char *dir = existing(r);
  if (dir) snprintf(study_path, cap, "%s/study.json", dir);
  else if (r->study) snprintf(study_path, cap, "%s", r->study);
  if (dir && access(study_path, R_OK) != 0)
    return wsisa_error(e, WSISA_EUSAGE, "%s %s: no study.json there: not a results folder",
                       r->resume ? "--resume" : "--check", dir);
  if (!dir && !r->study) {
    snprintf(study_path, cap, "(default study)");
    char sample[4096], quoted[8200], text[sizeof default_study + sizeof quoted];
    if (wsisa_data_file("CMU-1-Small-Region.svs", WSISA_DATA_DIR, sample, sizeof sample))
      return wsisa_error(e, WSISA_EUSAGE, "the bundled sample's path is too long");
    /* a JSON string: quotes and backslashes escaped */
    size_t q = 0;
    for (const char *c = sample; *c; c++) {
      if (*c == '"' || *c == '\\') quoted[q++] = '\\';
      quoted[q++] = *c;
    }
    quoted[q] = '\0';
    snprintf(text, sizeof text, default_study, quoted);
    rc = wsisa_study_parse(text, study_path, &s->study, e);
  } else {
    rc = wsisa_study_load(study_path, &s->study, e);
  }
  if (rc) return rc;
  if (!s->study->segmentation)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s: no inputs: a pure SA study (use wsisa sample and wsisa analyze)",
                       study_path);
  apply_request(s, r);
  if ((rc = wsisa__results_check_metrics(s, study_path, e))) return rc;
  *sched = s->study->execution.scheduler;
  wsisa_env env;
  wsisa_env_read(&env);
  if (*sched && !wsisa_sched_valid(*sched))
    return wsisa_error(e, WSISA_EUSAGE, "%s: execution.scheduler: %s: unknown (one of: %s)",
                       study_path, *sched, wsisa_sched_names());
  if (!*sched) *sched = env.sched;
  if (*sched && !wsisa_sched_valid(*sched))
    return wsisa_error(e, WSISA_EUSAGE, "STARPU_SCHED: scheduler %s: unknown (one of: %s)",
                       *sched, wsisa_sched_names());
  return 0;
}

/* Where the memory a run may use comes from, for messages. */
static const char *memory_source(const wsisa__study_run *s, const wsisa_runner_request *r) {
  if (r->memory_limit) return "--memory-limit";
  return s->study->execution.memory_limit ? "execution.memory_limit" : NULL;
}

/* Design and tiles, refused up front when they cannot fit: the design's size
 * is checked before it is made (a 10^7-sample study is refused at once), then
 * runs x tiles against the memory. */
static int prepare(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  const char *dir = existing(r);
  char design_csv[4200];
  snprintf(design_csv, sizeof design_csv, "%s/design.csv", dir ? dir : ".");
  const char *samples = r->samples;
  if (dir && access(design_csv, R_OK) == 0) samples = design_csv;
  size_t max_runs = r->force ? 0 : WSISA_STUDY_MAX_RUNS, rows;
  uint64_t memory = s->study->execution.memory_limit;
  const char *source = memory_source(s, r);
  int rc = samples ? 0
                   : wsisa_study_check_size(s->study, NULL, max_runs, RUN_BYTES, memory, source,
                                            &rows, e);
  if (rc || (rc = make_design(s, samples, max_runs, e)) || (rc = wsisa__study_tiles(s, e))) return rc;
  double need = (double)s->nruns * (RUN_BYTES + (double)s->ntiles * RUN_TILE_BYTES);
  if (!memory) memory = wsisa_memory_available(), source = "the memory available";
  char need_text[32], have[32];
  if (memory && need > (double)memory)
    return wsisa_error(e, WSISA_EUSAGE, "%s: %zu runs x %zu tiles need about %s to run, more than %s (%s)",
                       samples ? samples : s->study->path, s->nruns, s->ntiles,
                       wsisa_bytes_text(need, need_text, sizeof need_text), source,
                       wsisa_bytes_text((double)memory, have, sizeof have));
  s->counts = calloc(s->nruns * s->ntiles, sizeof *s->counts);
  s->have = calloc(s->nruns * s->ntiles, 1);
  if (!s->counts || !s->have) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  return wsisa__run_features_new(s->study->metrics, s->study->nmetrics, s->nruns, s->ntiles,
                                 s->dir, &s->features, e);
}

/* --resume: the folder locked, what the journals hold read back (a torn last
 * line cut off), the journals open for appending. */
static int reopen(wsisa__study_run *s, wsisa_err *e) {
  char path[4200];
  int rc;
  /* the annotations the journal's counts were measured against */
  if ((rc = wsisa__results_reference_check(s, e))) return rc;
  /* a folder made before the temporary-folder step may lack its design */
  wsisa__run_path(s, "samples.csv", path, sizeof path);
  if (access(path, F_OK) != 0) {
    wsisa_log(WSISA_LOG_WARN, "run", "%s: missing; written again from the study", path);
    if ((rc = wsisa__results_samples(s, NULL, e))) return rc;
  }
  wsisa__run_path(s, "journal.csv", path, sizeof path);
  int fresh = access(path, F_OK) != 0;
  if (fresh) wsisa_log(WSISA_LOG_WARN, "run", "%s: missing; every unit runs", path);
  else if ((rc = wsisa__journal_read(s, 1, NULL, e))) return rc;
  if ((rc = wsisa__journal_open(s, fresh, e))) return rc;
  if (!s->features) return 0;
  wsisa__run_path(s, "feature_values.csv", path, sizeof path);
  fresh = access(path, F_OK) != 0;
  if (fresh) memset(s->have, 0, s->nruns * s->ntiles);
  else if ((rc = wsisa__run_features_read(s->features, s->have, 1, NULL, NULL, e))) return rc;
  return wsisa__run_features_open(s->features, fresh, e);
}

/* Units whose every run already has its counts (resume). */
static uint8_t *units_done(const wsisa__study_run *s) {
  size_t nb = s->buckets->n_buckets;
  uint8_t *done = calloc(s->ntiles * nb + 1, 1);
  for (size_t t = 0; done && t < s->ntiles; t++)
    for (size_t b = 0; b < nb; b++) {
      int all = 1;
      for (size_t i = s->buckets->start[b]; i < s->buckets->start[b + 1]; i++)
        all &= s->have[s->buckets->instances[i] * s->ntiles + t];
      done[t * nb + b] = (uint8_t)all;
    }
  return done;
}

/* StarPU (and the MPI workers) up and the reuse plan. */
static int start(wsisa__study_run *s, const char *sched, wsisa_err *e) {
  /* every task measured: the performance models learn from each run */
  wsisa_runtime_opts ropts = {.sched = sched, .ncpu = -1, .nopencl = -1, .calibrate = 1};
  int rc = wsisa_codelets_start(&ropts, e);
  if (rc) return rc;
  s->runtime = 1;
  /* StarPU catches SIGINT for itself (and hands it on): ours again */
  wsisa_units_catch_signals();
  wsisa_text_read_stop(wsisa_units_interrupted);
  rc = wsisa_dist_workers(wsisa_runtime_ncpu() + wsisa_runtime_nopencl(), &s->workers, e);
  /* the models' costs first: the plan may weigh buckets by them */
  if (!rc) rc = wsisa__run_forecast_costs(s, &s->est, e);
  return rc ? rc : make_plan(s, e);
}

/* RMSR's K from the memory limit, with what the process holds now (StarPU,
 * the libraries, design and plan) counted in: a limit below what one path
 * needs is refused with the smallest that works. */
static int plan_memory(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_exec_opts *eo,
                       wsisa_err *e) {
  size_t k_asked = s->study->reuse.active_paths > 0 ? (size_t)s->study->reuse.active_paths : 0;
  uint64_t asked = s->study->execution.memory_limit, minimum = 0;
  const char *source = memory_source(s, r);
  s->baseline_rss = wsisa_rss_now();
  eo->active_paths =
      wsisa_exec_active_paths(k_asked, wsisa_memory_available(), s->baseline_rss,
                              &s->study->execution.memory_limit, s->tiles, s->ntiles, eo, &minimum);
  /* The limit named is 2 % (at least 2 MiB) over this run's smallest: what
   * the process holds before the first unit differs by a MiB or so from run
   * to run (the workers' start-up, the allocator), and the limit named must
   * still hold when the run is repeated with it. */
  if (!eo->active_paths && asked)
    return wsisa_error(e, WSISA_EUSAGE,
                       "%s%s%s %.0fM: below what one path of this study needs here (%.0f MiB "
                       "held before the first unit, then the tile, the running tasks and one "
                       "path); give at least %.0fM",
                       r->memory_limit ? "" : s->study->path, r->memory_limit ? "" : ": ",
                       source, (double)asked / 1048576.0, (double)s->baseline_rss / 1048576.0,
                       ceil(((double)minimum + fmax(0.02 * (double)minimum, 2.0 * 1048576.0)) /
                            1048576.0));
  if (!eo->active_paths) {
    wsisa_log(WSISA_LOG_WARN, "run",
              "%.0f MiB available is below one active path (%.0f MiB); running with K = 1",
              (double)s->study->execution.memory_limit / 1048576.0,
              (double)minimum / 1048576.0);
    eo->active_paths = 1;
  }
  wsisa_log(WSISA_LOG_INFO, "run", "K = %zu active paths; %.0f MiB held before the units, limit %.0f MiB",
            eo->active_paths, (double)s->baseline_rss / 1048576.0,
            (double)s->study->execution.memory_limit / 1048576.0);
  s->study->reuse.active_paths = (int)eo->active_paths;
  if (eo->object_reuse)
    eo->object_store_bytes = s->object_store_bytes = wsisa_exec_object_store_bytes(
        s->study->execution.memory_limit, s->baseline_rss);
  return 0;
}

/* The one line a SIGINT or SIGTERM ends with. */
static int interrupted(const wsisa__study_run *s, int have_folder, size_t before, size_t total,
                       wsisa_err *e) {
  if (!have_folder)
    return wsisa_error(e, WSISA_EINTERRUPTED, "interrupted before any unit ran; nothing written");
  if (!total)
    return wsisa_error(e, WSISA_EINTERRUPTED,
                       "interrupted before any unit ran; continue with `wsisa run --resume %s`",
                       s->dir);
  return wsisa_error(e, WSISA_EINTERRUPTED,
                     "interrupted after %zu of %zu units; continue with `wsisa run --resume %s`",
                     before + s->units_journaled, total, s->dir);
}

/* Every unit not done, each journaled as it ends; the folder is made (a new
 * run) once nothing is left to refuse. */
static int execute(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  uint8_t *done = units_done(s);
  if (!done) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  size_t total = s->ntiles * s->buckets->n_buckets, before = 0;
  for (size_t u = 0; u < total; u++) before += done[u];
  /* every MPI rank derives its own K from what was asked (engine/dist.c) */
  size_t k_asked = s->study->reuse.active_paths > 0 ? (size_t)s->study->reuse.active_paths : 0;
  uint64_t limit_asked = s->study->execution.memory_limit;
  wsisa_exec_opts eo = {.normalize = 1,
                        .share_tile_stage = s->study->reuse.strategy != WSISA_STUDY_REUSE_NONE,
                        .object_match = s->object_match,
                        .features = s->features != NULL,
                        .object_reuse = s->study->reuse.object_reuse};
  int rc = plan_memory(s, r, &eo, e);
  int have_folder = r->resume != NULL;
  if (!rc && !have_folder && !wsisa_units_interrupted()) {
    rc = create_folder(s, s->out, e);
    have_folder = !rc;
  }
  if (!rc && wsisa_units_interrupted()) rc = WSISA_EINTERRUPTED;
  if (!rc) {
    s->units_total = total;
    s->units_run = total - before;
    wsisa__run_forecast_predict(s, s->est, &eo, done);
    double t0 = wsisa_now();
    rc = wsisa_units_run(s->tiles, s->ntiles, s->params, s->buckets, done, &eo, k_asked,
                         limit_asked, wsisa__journal_unit, s, &s->stats, e);
    s->t_exec = wsisa_now() - t0;
  }
  if (rc == WSISA_EINTERRUPTED) rc = interrupted(s, have_folder, before, total, e);
  free(done);
  if (!rc) rc = wsisa__results_provenance(s, e);
  return rc;
}

static int analyze(wsisa__study_run *s, wsisa_err *e) {
  char study[4200], samples[4200], outputs[4200];
  wsisa__run_path(s, "study.json", study, sizeof study);
  wsisa__run_path(s, "samples.csv", samples, sizeof samples);
  wsisa__run_path(s, "outputs.csv", outputs, sizeof outputs);
  /* a run without nuclei has no mean area: VBD drops its base samples and
   * says how many, rather than failing the study at its last step */
  wsisa_analysis_request a = {study, samples, outputs, s->dir, NULL, 1};
  int rc = wsisa_analysis_run(&a, e);
  if (!rc) printf("wrote %s/indices.csv, %s/indices.json and plots\n", s->dir, s->dir);
  return rc;
}

/* With annotations: the best run, as best.json names it, and how to see it. */
static void print_best(const wsisa__study_run *s) {
  char path[4200];
  wsisa__run_path(s, "best.json", path, sizeof path);
  json_t *b = json_load_file(path, 0, NULL);
  if (!b) {
    printf("no best run: no metric of the study says which way is better (dice, jaccard, "
           "object_*, aji, wasserstein:<feature> do)\n");
    return;
  }
  printf("best run against the annotations by %s: run %" JSON_INTEGER_FORMAT " (%.6g); "
         "%s holds its parameters: wsisa segment INPUT --params @%s reproduces it\n",
         json_string_value(json_object_get(b, "chosen_by")),
         json_integer_value(json_object_get(b, "run_id")),
         json_number_value(json_object_get(b, "value")), path, path);
  json_decref(b);
}

/* Metrics from the counts, indices (unless the design came from a CSV), and
 * the summary on stdout. */
static int finish(wsisa__study_run *s, const char *samples, wsisa_err *e) {
  /* identical runs share a leaf: every run has its counts for every tile */
  for (size_t i = 0; i < s->nruns * s->ntiles; i++)
    if (!s->have[i])
      return wsisa_error(e, WSISA_EINTERNAL, "run %zu has no result for tile %zu", i / s->ntiles,
                         i % s->ntiles);
  int rc = wsisa__results_metrics(s, NULL, e);
  if (rc) return rc;
  if (s->from_csv)
    printf("design from %s: no indices computed here (the study's method may not match it); "
           "run `wsisa analyze` on %s/samples.csv and %s/outputs.csv with a matching study\n",
           samples, s->dir, s->dir);
  else if ((rc = analyze(s, e)))
    return rc;
  if (!s->from_csv) wsisa__results_print_top(s);
  if (s->annotated) print_best(s);
  printf("results in %s: metrics.csv%s%s, run.json\n", s->dir,
         s->from_csv ? ", outputs.csv" : ", indices.csv, indices.json, *.svg",
         s->annotated ? ", best.json" : "");
  printf("%zu runs x %zu tiles, %llu tasks executed (no reuse: %llu), %.1f s\n", s->nruns,
         s->ntiles, (unsigned long long)s->stats.tasks, (unsigned long long)s->tasks_no_reuse,
         wsisa_now() - s->t_start);
  return 0;
}

/* A new run or a resumed one, from the checks to the indices. */
static int run(wsisa__study_run *s, const wsisa_runner_request *r, const char *sched,
               wsisa_err *e) {
  /* one writer per folder: a second --resume is refused before any work */
  int rc = r->resume ? lock_folder(s->dir, 1, &s->lock_fd, e) : check_new_folder(s->out, e);
  if (!rc) rc = prepare(s, r, e);
  if (!rc && r->resume) rc = reopen(s, e);
  if (!rc && wsisa_units_interrupted())
    rc = interrupted(s, r->resume != NULL, 0, 0, e);
  if (!rc) rc = start(s, sched, e);
  if (!rc) rc = execute(s, r, e);
  if (s->runtime) {
    wsisa_runtime_shutdown();
    s->runtime = 0;
  }
  char design_csv[4200];
  wsisa__run_path(s, "design.csv", design_csv, sizeof design_csv);
  if (!rc) rc = finish(s, r->resume && s->from_csv ? design_csv : r->samples, e);
  if (!rc || rc == WSISA_EINTERRUPTED) return rc;
  if (s->created && !s->units_journaled) {
    /* nothing done yet: leave nothing behind */
    remove_folder(s->dir);
  } else if (e && s->units_journaled) {
    size_t n = strlen(e->msg);
    snprintf(e->msg + n, sizeof e->msg - n,
             "; the finished units are kept: `wsisa run --resume %s` goes on from them", s->dir);
  }
  return rc;
}

/* ---- wsisa run --check ---------------------------------------------------------- */

typedef struct findings {
  char text[16][600];
  size_t n;
} findings;

static void found(findings *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void found(findings *f, const char *fmt, ...) {
  if (f->n < sizeof f->text / sizeof *f->text) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text[f->n], sizeof f->text[0], fmt, ap);
    va_end(ap);
  }
  f->n++;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n + 65536 > cap) {
      char *g = realloc(buf, cap = 2 * cap + 65536);
      if (!g) break;
      buf = g;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  if (buf) *len = n;
  return buf;
}

/* `name` in the folder against the one made again from the journal. */
static void compare(findings *f, const wsisa__study_run *s, const char *made_dir, const char *name,
                    const char *what) {
  char path[4400], made[4400];
  snprintf(path, sizeof path, "%s/%s", s->dir, name);
  snprintf(made, sizeof made, "%s/%s", made_dir, name);
  size_t la = 0, lb = 0;
  char *a = slurp(path, &la), *b = slurp(made, &lb);
  if (!a) {
    found(f, "%s: %s", path, strerror(errno));
  } else if (b && (la != lb || memcmp(a, b, la) != 0)) {
    size_t line = 1, i = 0;
    while (i < la && i < lb && a[i] == b[i]) line += a[i++] == '\n';
    found(f, "%s:%zu: not what %s gives", path, line, what);
  }
  free(a);
  free(b);
}

static int check(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  int rc = lock_folder(s->dir, 0, &s->lock_fd, e);
  /* the inputs were those of a finished run: a refusal of them now (a
   * reference changed since) is a changed input, not a usage error */
  if (!rc && (rc = prepare(s, r, e)) == WSISA_EUSAGE) rc = e->code = WSISA_EFORMAT;
  if (rc) return rc;
  findings f;
  memset(&f, 0, sizeof f);
  wsisa__journal_summary js;
  wsisa_err inner = WSISA_ERR_INIT;
  int journal_ok = !wsisa__journal_read(s, 0, &js, &inner);
  if (!journal_ok) found(&f, "%s", inner.msg);
  else if (js.torn)
    found(&f, "%s/journal.csv:%zu: last line torn (a resume cuts it off and runs its unit again)",
          s->dir, js.torn);
  size_t flines = 0, ftorn = 0;
  if (journal_ok && s->features) {
    wsisa_err_clear(&inner);
    if (wsisa__run_features_read(s->features, s->have, 0, &flines, &ftorn, &inner))
      found(&f, "%s", inner.msg), journal_ok = 0;
    else if (ftorn)
      found(&f, "%s/feature_values.csv:%zu: last line torn (a resume cuts it off)", s->dir, ftorn);
  }
  size_t total = s->nruns * s->ntiles, have = 0;
  for (size_t i = 0; i < total; i++) have += s->have[i];
  if (journal_ok && have < total)
    found(&f, "%s: %zu of %zu (run, tile) results in the journal; `wsisa run --resume %s` "
          "finishes the study", s->dir, have, total, s->dir);
  /* the files the journal gives, made again beside and compared byte for byte */
  char made[] = "/tmp/wsisa-check-XXXXXX", path_best[4400];
  if (!mkdtemp(made)) return wsisa_error(e, WSISA_EIO, "/tmp: %s", strerror(errno));
  if (!wsisa__results_samples(s, made, &inner)) {
    compare(&f, s, made, "samples.csv", "the study's design");
    if (s->from_csv) compare(&f, s, made, "design.csv", "the study's design");
  }
  if (s->annotated && !wsisa__results_reference(s, made, &inner))
    compare(&f, s, made, "reference.json", "reading the annotations again");
  if (journal_ok && have == total && !wsisa__results_metrics(s, made, &inner)) {
    compare(&f, s, made, "metrics.csv", "the journal");
    compare(&f, s, made, "outputs.csv", "the journal");
    snprintf(path_best, sizeof path_best, "%s/best.json", made);
    if (access(path_best, F_OK) == 0) compare(&f, s, made, "best.json", "the journal");
    char path[4400];
    const char *expected[] = {"run.json", s->from_csv ? NULL : "indices.csv"};
    for (size_t i = 0; i < 2; i++) {
      if (!expected[i]) continue;
      snprintf(path, sizeof path, "%s/%s", s->dir, expected[i]);
      if (access(path, R_OK) != 0) found(&f, "%s: %s", path, strerror(errno));
    }
  }
  remove_folder(made);
  if (f.n == 1) return wsisa_error(e, WSISA_EFORMAT, "%s", f.text[0]);
  if (f.n) {
    for (size_t i = 0; i < f.n && i < sizeof f.text / sizeof *f.text; i++)
      fprintf(stderr, "  %s\n", f.text[i]);
    return wsisa_error(e, WSISA_EFORMAT, "%s: not whole: %zu problems (listed above)", s->dir, f.n);
  }
  printf("%s: whole\n", s->dir);
  printf("  journal.csv: %zu whole lines (%zu repeated), %zu of %zu (run, tile) results (%zu runs "
         "x %zu tiles)\n", js.lines, js.repeats, have, total, s->nruns, s->ntiles);
  if (s->features) printf("  feature_values.csv: %zu whole lines\n", flines);
  printf("  samples.csv%s: the study's design\n", s->from_csv ? ", design.csv" : "");
  if (s->annotated) printf("  reference.json: the annotations as they are\n");
  printf("  metrics.csv, outputs.csv%s: what the journal gives\n",
         s->annotated ? ", best.json" : "");
  printf("  run.json%s: present\n", s->from_csv ? "" : ", indices.csv");
  return 0;
}

/* ---- a run's life ------------------------------------------------------------- */

static void run_free(wsisa__study_run *s) {
  if (s->runtime) wsisa_runtime_shutdown();
  if (s->journal) fclose(s->journal);
  wsisa__study_tiles_free(s);
  wsisa_estimate_free(s->est);
  free(s->params);
  free(s->run_ids);
  free(s->counts);
  free(s->have);
  wsisa__run_features_free(s->features);
  if (s->buckets) wsisa_reuse_buckets_free(s->buckets);
  if (s->plan) wsisa_reuse_design_free(s->plan);
  if (s->design) wsisa_sa_design_free(s->design);
  if (s->space) wsisa_sa_space_free(s->space);
  if (s->study) wsisa_study_free(s->study);
  /* the lock goes last: the folder is complete when the next writer comes */
  if (s->lock_fd >= 0) close(s->lock_fd);
}

int wsisa_runner_run(const wsisa_runner_request *r, wsisa_err *e) {
  wsisa__study_run s;
  memset(&s, 0, sizeof s);
  s.lock_fd = -1;
  s.t_start = wsisa_now();
  /* from here SIGINT and SIGTERM stop the run between units (engine/units.c);
   * a worker rank waits for the manager to tell it to stop */
  wsisa_units_catch_signals();
  wsisa_text_read_stop(wsisa_units_interrupted);
  /* under mpirun, ranks other than 0 only execute what the manager hands out */
  int rc = wsisa_dist_start(r->unit_timeout > 0 ? r->unit_timeout : 600.0, e);
  if (!rc && wsisa_dist_rank() > 0) {
    rc = wsisa_dist_worker(e);
  } else if (!rc) {
    wsisa_machine_read(&s.machine);
    char study_path[4200];
    const char *sched = NULL;
    snprintf(s.dir, sizeof s.dir, "%s", existing(r) ? existing(r) : r->out);
    /* "results/" names the folder results: its temporary one goes beside it */
    size_t n = strlen(s.dir);
    while (n > 1 && s.dir[n - 1] == '/') s.dir[--n] = '\0';
    snprintf(s.out, sizeof s.out, "%s", s.dir);
    rc = load_study(&s, r, study_path, sizeof study_path, &sched, e);
    if (!rc) rc = r->check ? check(&s, r, e) : run(&s, r, sched, e);
  }
  run_free(&s);
  wsisa_dist_end();
  return rc;
}
