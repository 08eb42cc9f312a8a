/* A whole study (`wsisa run`): tiles, design, reuse plan, execution on StarPU
 * and MPI ranks through the unit queue, the journal, metrics, indices and
 * provenance. Each step is a function of its own; wsisa_runner_run strings
 * them together. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "engine/engine_private.h"
#include "io/csv.h"
#include "io/io.h"

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
  if (!(rc = wsisa_scale_choose_level(slide, in->slide_mpp, in->mpp, in->level, &scale, e)))
    rc = wsisa_grid_make_scaled(slide, &scale, in->tile_size, in->overlap, &g, e);
  if (!rc) rc = add_input(s, path, 1, &scale, &ri, e);
  if (!rc && in->stain_check) {
    ri->stain_checked = 1;
    if (!(rc = wsisa__stain_sample(slide, g, &ri->stain, e)))
      rc = wsisa__stain_verdict(&ri->stain, path, e);
  }
  const double um2 = scale.target_mpp * scale.target_mpp;
  for (size_t t = 0; !rc && t < g->ntiles; t++) {
    const wsisa_tile *tl = &g->tiles[t];
    if (in->tissue_only && !tl->tissue) continue;
    wsisa_tile_ref ref = {.path = path, .is_slide = 1, .scale = scale, .x = tl->x, .y = tl->y,
                          .width = tl->width, .height = tl->height, .level0 = tl->level0};
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
    rc = wsisa__stain_verdict(&ri->stain, path, e);
  }
  if (!rc) {
    double step = wsisa_scale_step(&scale);
    wsisa_tile_ref ref = {.path = path, .is_slide = 0, .scale = scale, .width = img->width,
                          .height = img->height,
                          .level0 = {0, 0, llround(img->width * step), llround(img->height * step)}};
    ri->tissue_mm2 = (double)img->width * img->height * scale.target_mpp * scale.target_mpp * 1e-6;
    ri->ntiles = 1;
    rc = add_tile(s, &ref, path, e);
  }
  wsisa_image_free(img);
  return rc;
}

static int collect_tiles(wsisa__study_run *s, wsisa_err *e) {
  const wsisa_study_inputs *in = &s->study->inputs;
  int rc = 0;
  for (size_t i = 0; i < in->nslides && !rc; i++) rc = slide_tiles(s, in->slides[i], e);
  for (size_t i = 0; i < in->nimages && !rc; i++) rc = image_tile(s, in->images[i], e);
  if (!rc && s->ntiles == 0)
    rc = wsisa_error(e, WSISA_EUSAGE, "%s: inputs: no tile to segment (no tissue found?)",
                     s->study->path);
  return rc;
}

int wsisa__study_tiles(wsisa__study_run *s, wsisa_err *e) { return collect_tiles(s, e); }

/* ---- design and plan --------------------------------------------------------- */

/* A design made elsewhere (wsisa sample, another SA tool): one row per run,
 * run_id first, segmentation parameters by their canonical names; the
 * parameters it does not name keep their defaults. */
static int design_from_csv(wsisa__study_run *s, const char *path, wsisa_err *e) {
  wsisa_csv *c = NULL;
  int rc = wsisa_csv_read(path, &c, e);
  if (rc) return rc;
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

static int make_design(wsisa__study_run *s, const char *samples, wsisa_err *e) {
  if (samples) {
    s->from_csv = 1;
    return design_from_csv(s, samples, e);
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

/* ---- the steps of a run ------------------------------------------------------ */

static int prepare_dir(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  snprintf(s->dir, sizeof s->dir, "%s", r->resume ? r->resume : r->out);
  char path[4200];
  wsisa__run_path(s, "study.json", path, sizeof path);
  if (r->resume) return 0; /* its study.json was read already */
  if (access(path, F_OK) == 0)
    return wsisa_error(e, WSISA_EUSAGE,
                       "-o %s: already holds a study's results (use --resume %s, or another -o)",
                       s->dir, s->dir);
  if (mkdir(s->dir, 0755) != 0 && errno != EEXIST)
    return wsisa_error(e, WSISA_EIO, "-o %s: %s", s->dir, strerror(errno));
  if (access(s->dir, W_OK) != 0)
    return wsisa_error(e, WSISA_EIO, "-o %s: not writable (%s)", s->dir, strerror(errno));
  return 0;
}

/* The request's settings over the study's. */
static void apply_request(wsisa__study_run *s, const wsisa_runner_request *r) {
  wsisa_study_reuse_opts *ro = &s->study->reuse;
  if (r->strategy >= 0) ro->strategy = (wsisa_study_reuse)r->strategy;
  if (r->max_buckets) ro->max_buckets = (int)r->max_buckets;
  if (r->max_bucket_size) ro->max_bucket_size = (int)r->max_bucket_size;
  if (r->active_paths) ro->active_paths = (int)r->active_paths;
  if (r->memory_limit) s->study->execution.memory_limit = r->memory_limit;
  s->cost_source = "tasks";
  if (r->level_cost) {
    memcpy(s->level_cost, r->level_cost, sizeof s->level_cost);
    s->cost_source = "level_costs";
  }
}

/* The study (from its file, the results folder, or the default), checked
 * before anything is written. */
static int load_study(wsisa__study_run *s, const wsisa_runner_request *r, char *study_path, size_t cap,
                      const char **sched, wsisa_err *e) {
  int rc;
  if (r->resume) snprintf(study_path, cap, "%s/study.json", r->resume);
  else if (r->study) snprintf(study_path, cap, "%s", r->study);
  if (r->resume && access(study_path, R_OK) != 0)
    return wsisa_error(e, WSISA_EUSAGE, "--resume %s: no study.json there: not a results folder",
                       r->resume);
  if (!r->resume && !r->study) {
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
  if (!*sched) *sched = env.sched;
  if (*sched && !wsisa_sched_valid(*sched))
    return wsisa_error(e, WSISA_EUSAGE, "scheduler %s: unknown (one of: %s)", *sched,
                       wsisa_sched_names());
  return 0;
}

/* Folder, design, tiles, the study and design on disk, journal open (and
 * read back on resume). */
static int prepare(wsisa__study_run *s, const wsisa_runner_request *r, wsisa_err *e) {
  int rc = prepare_dir(s, r, e);
  if (rc) return rc;
  char design_csv[4200];
  wsisa__run_path(s, "design.csv", design_csv, sizeof design_csv);
  const char *samples = r->samples;
  if (r->resume && access(design_csv, R_OK) == 0) samples = design_csv;
  if ((rc = make_design(s, samples, e)) || (rc = collect_tiles(s, e))) return rc;
  s->counts = calloc(s->nruns * s->ntiles, sizeof *s->counts);
  s->have = calloc(s->nruns * s->ntiles, 1);
  if (!s->counts || !s->have) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  /* the study and its design are written first: --resume reads them back */
  if (!r->resume &&
      ((rc = wsisa__results_study(s, e)) || (rc = wsisa__results_samples(s, e))))
    return rc;
  if ((rc = wsisa__run_features_new(s->study->metrics, s->study->nmetrics, s->nruns, s->ntiles,
                                    s->dir, &s->features, e)))
    return rc;
  if (r->resume && (rc = wsisa__journal_read(s, e))) return rc;
  if (s->features && r->resume && (rc = wsisa__run_features_read(s->features, s->have, e)))
    return rc;
  if ((rc = wsisa__journal_open(s, !r->resume, e))) return rc;
  if (s->features && (rc = wsisa__run_features_open(s->features, !r->resume, e))) return rc;
  return 0;
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

/* StarPU (and the MPI workers) up, the reuse plan, every unit not done. */
static int execute(wsisa__study_run *s, const char *sched, wsisa_err *e) {
  /* every task measured: the performance models learn from each run */
  wsisa_runtime_opts ropts = {.sched = sched, .ncpu = -1, .nopencl = -1, .calibrate = 1};
  int rc = wsisa_codelets_start(&ropts, e);
  if (rc) return rc;
  wsisa_estimate *est = NULL;
  rc = wsisa_dist_workers(wsisa_runtime_ncpu() + wsisa_runtime_nopencl(), &s->workers, e);
  if (!rc) rc = wsisa__run_forecast_costs(s, &est, e);
  if (!rc) rc = make_plan(s, e);
  uint8_t *done = rc ? NULL : units_done(s);
  if (!rc && !done) rc = wsisa_error(e, WSISA_ENOMEM, "out of memory");
  if (!rc) {
    s->units_total = s->ntiles * s->buckets->n_buckets;
    for (size_t u = 0; u < s->units_total; u++) s->units_run += !done[u];
  }
  if (!rc) {
    /* every rank derives its own K from what was asked (engine/dist.c) */
    size_t k_asked = s->study->reuse.active_paths > 0 ? (size_t)s->study->reuse.active_paths : 0;
    uint64_t limit_asked = s->study->execution.memory_limit;
    wsisa_exec_opts eo = {
        .active_paths = wsisa_exec_active_paths(k_asked, s->machine.memory_available,
                                                &s->study->execution.memory_limit, s->tiles,
                                                s->ntiles),
        .normalize = 1,
        .share_tile_stage = s->study->reuse.strategy != WSISA_STUDY_REUSE_NONE,
        .object_match = s->object_match,
        .features = s->features != NULL};
    s->study->reuse.active_paths = (int)eo.active_paths;
    wsisa__run_forecast_predict(s, est, &eo, done);
    double t0 = wsisa_now();
    rc = wsisa_units_run(s->tiles, s->ntiles, s->params, s->buckets, done, &eo, k_asked,
                        limit_asked, wsisa__journal_unit, s, &s->stats, e);
    s->t_exec = wsisa_now() - t0;
  }
  free(done);
  wsisa_estimate_free(est);
  if (!rc) rc = wsisa__results_provenance(s, e);
  wsisa_runtime_shutdown();
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

/* Metrics from the counts, indices (unless the design came from a CSV), and
 * the summary on stdout. */
static int finish(wsisa__study_run *s, const char *samples, wsisa_err *e) {
  /* identical runs share a leaf: every run has its counts for every tile */
  for (size_t i = 0; i < s->nruns * s->ntiles; i++)
    if (!s->have[i])
      return wsisa_error(e, WSISA_EINTERNAL, "run %zu has no result for tile %zu", i / s->ntiles,
                         i % s->ntiles);
  int rc = wsisa__results_metrics(s, e);
  if (rc) return rc;
  if (s->from_csv)
    printf("design from %s: no indices computed here (the study's method may not match it); "
           "run `wsisa analyze` on %s/samples.csv and %s/outputs.csv with a matching study\n",
           samples, s->dir, s->dir);
  else if ((rc = analyze(s, e)))
    return rc;
  if (!s->from_csv) wsisa__results_print_top(s);
  printf("results in %s: metrics.csv%s, run.json\n", s->dir,
         s->from_csv ? ", outputs.csv" : ", indices.csv, indices.json, *.svg");
  printf("%zu runs x %zu tiles, %llu tasks executed (no reuse: %llu), %.1f s\n", s->nruns,
         s->ntiles, (unsigned long long)s->stats.tasks, (unsigned long long)s->tasks_no_reuse,
         wsisa_now() - s->t_start);
  return 0;
}

static void run_free(wsisa__study_run *s) {
  if (s->journal) fclose(s->journal);
  for (size_t i = 0; i < s->ntiles; i++) free(s->tile_names[i]);
  free(s->tile_names);
  free(s->tiles);
  free(s->inputs);
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
}

int wsisa_runner_run(const wsisa_runner_request *r, wsisa_err *e) {
  wsisa__study_run s;
  memset(&s, 0, sizeof s);
  s.t_start = wsisa_now();
  /* under mpirun, ranks other than 0 only execute what the manager hands out */
  int rc = wsisa_dist_start(r->unit_timeout > 0 ? r->unit_timeout : 600.0, e);
  if (!rc && wsisa_dist_rank() > 0) {
    rc = wsisa_dist_worker(e);
  } else if (!rc) {
    wsisa_machine_read(&s.machine);
    char study_path[4200], design_csv[4200];
    const char *sched = NULL;
    if (!(rc = load_study(&s, r, study_path, sizeof study_path, &sched, e)) &&
        !(rc = prepare(&s, r, e)) && !(rc = execute(&s, sched, e))) {
      wsisa__run_path(&s, "design.csv", design_csv, sizeof design_csv);
      rc = finish(&s, r->resume && s.from_csv ? design_csv : r->samples, e);
    }
  }
  run_free(&s);
  wsisa_dist_end();
  return rc;
}
