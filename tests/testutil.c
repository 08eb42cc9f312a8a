/* Helpers shared by the test suites. */
#include "tests/testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tiffio.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "io/io.h"
#include "tests/synthslide.h"

void tu_path(char out[WSISA_PATH_MAX], const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out, WSISA_PATH_MAX, fmt, ap);
  va_end(ap);
  cr_assert(n >= 0 && n < WSISA_PATH_MAX, "a test's path does not fit (%d bytes): %s", n, fmt);
}

const char *tu_src(const char *relative) {
  static char bufs[8][WSISA_PATH_MAX];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", WSISA_SOURCE_DIR, relative);
  return b;
}

const char *tu_tmpdir(const char *tag) {
  static char bufs[4][WSISA_PATH_MAX];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, sizeof bufs[0], "%s/tests/tmp", WSISA_BINARY_DIR);
  mkdir(b, 0755);
  snprintf(b, sizeof bufs[0], "%s/tests/tmp/%s-XXXXXX", WSISA_BINARY_DIR, tag);
  if (!mkdtemp(b)) return NULL;
  return b;
}

char *tu_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      char *nb = realloc(buf, 2 * cap + 1);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

int tu_run(const char *args, char **out, char **err) {
  char cmd[12288];
  snprintf(cmd, sizeof cmd, "%s %s", WSISA_EXE, args);
  return tu_run_shell(cmd, out, err);
}

int tu_run_shell(const char *command, char **out, char **err) {
  const char *dir = tu_tmpdir("run");
  if (!dir) return -1;
  char cmd[16384], out_path[WSISA_PATH_MAX], err_path[WSISA_PATH_MAX];
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  snprintf(cmd, sizeof cmd, "%s >'%s' 2>'%s' </dev/null", command, out_path, err_path);
  int status = system(cmd);
  if (out) *out = tu_slurp(out_path, NULL);
  if (err) *err = tu_slurp(err_path, NULL);
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

size_t tu_image_diff(const wsisa_image *a, const wsisa_image *b) {
  if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
      a->type != b->type)
    return (size_t)-1;
  size_t px = wsisa_image_pixel_bytes(a), diff = 0;
  for (int y = 0; y < a->height; y++) {
    const unsigned char *ra = wsisa_image_row(a, y), *rb = wsisa_image_row(b, y);
    for (int x = 0; x < a->width; x++)
      if (memcmp(ra + (size_t)x * px, rb + (size_t)x * px, px)) diff++;
  }
  return diff;
}

int tu_starpu_start(void) {
  setenv("STARPU_OPENCL_ON_CPUS", "1", 1);
  wsisa_runtime_opts opts = {.ncpu = 1, .nopencl = 1};
  wsisa_err e = WSISA_ERR_INIT;
  int rc = wsisa_codelets_start(&opts, &e);
  if (rc) fprintf(stderr, "StarPU: %s\n", e.msg);
  return rc;
}

void tu_starpu_stop(void) { wsisa_runtime_shutdown(); }

int tu_run_op(uint32_t where, wsisa_image **imgs, int nimgs, tu_submit_fn submit, void *arg) {
  starpu_data_handle_t h[16];
  if (nimgs > 16) return -1;
  for (int i = 0; i < nimgs; i++)
    if (wsisa_image_register(imgs[i], &h[i], NULL)) return -1;
  wsisa_codelets_set_where(where);
  int rc = submit(h, arg);
  starpu_task_wait_for_all();
  wsisa_codelets_set_where(STARPU_CPU | STARPU_OPENCL);
  for (int i = 0; i < nimgs; i++) starpu_data_unregister(h[i]);
  return rc;
}

size_t tu_count_lines(const char *path) {
  char *text = tu_slurp(path, NULL);
  size_t n = 0;
  for (const char *p = text; p && *p; p++) n += *p == '\n';
  free(text);
  return n;
}

wsisa_image *tu_load(const char *relative) {
  wsisa_image *img = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  if (wsisa_image_read(tu_src(relative), &img, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return NULL;
  }
  return img;
}

const char *const tu_he_variety[TU_HE_VARIETY_N] = {
    "histolab-high-nuclei-score-level0.png",
    "histolab-low-nuclei-score-level0.png",
    "histolab-medium-nuclei-score-level0.png",
    "histolab-tcga-lung-rgb.png",
    "histolab-tissue-level0-4302-10273-4814-10785.png",
    "histolab-tissue-level0-7352-11762-7864-12274.png",
    "histolab-tissue-level2-1784-6289-5880-10386.png",
};

/* An 8-bit level from an optical density. */
static uint8_t level_of(double od) {
  const double v = 255.0 * pow(10.0, -od);
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lround(v));
}

void tu_od_scale(wsisa_image *img, double factor) {
  uint8_t to[256];
  for (int v = 0; v < 256; v++) to[v] = level_of(factor * log10(255.0 / (v ? v : 1)));
  for (int y = 0; y < img->height; y++) {
    uint8_t *p = wsisa_image_row(img, y);
    for (int x = 0; x < 3 * img->width; x++) p[x] = to[p[x]];
  }
}

void tu_slip_apply(wsisa_image *img, tu_slip slip) {
  if (slip == TU_SLIP_PALE || slip == TU_SLIP_DARK) {
    tu_od_scale(img, slip == TU_SLIP_PALE ? 0.5 : 2.0);
    return;
  }
  uint32_t seed = 11;
  wsisa_deconv_consts k;
  if (wsisa_cpu_deconv_setup(wsisa_stains_he, &k)) return; /* the constant rows are regular */
  const double dab[3] = {0.268, 0.570, 0.776}; /* Ruifrok-Johnston's DAB row */
  for (int y = 0; y < img->height; y++) {
    uint8_t *p = wsisa_image_row(img, y);
    for (int x = 0; x < img->width; x++, p += 3) {
      const uint8_t r = p[0], g = p[1], b = p[2];
      const long luma = lround(0.299 * r + 0.587 * g + 0.114 * b);
      if (slip == TU_SLIP_BGR) p[0] = b, p[2] = r;
      if (slip == TU_SLIP_GREY_MEAN) p[0] = p[1] = p[2] = (uint8_t)((r + g + b + 1) / 3);
      for (int c = 0; (slip == TU_SLIP_GREY_LUMA || slip == TU_SLIP_GREY_NOISY) && c < 3; c++) {
        seed = seed * 1664525u + 1013904223u;
        long v = luma + (slip == TU_SLIP_GREY_NOISY ? (long)((seed >> 16) % 7) - 3 : 0);
        p[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
      if (slip == TU_SLIP_FLUORESCENCE) {
        int signal = (255 - r - 80) * 5 / 2;
        signal = signal < 0 ? 0 : signal > 255 ? 255 : signal;
        p[0] = (uint8_t)(signal * 15 / 100);
        p[1] = (uint8_t)(signal * 40 / 100);
        p[2] = (uint8_t)signal;
      }
      if (slip == TU_SLIP_DAB) {
        double c[2];
        for (int j = 0; j < 2; j++)
          c[j] = k.od[r] * k.m[j] + k.od[g] * k.m[3 + j] + k.od[b] * k.m[6 + j];
        for (int ch = 0; ch < 3; ch++)
          p[ch] = level_of(c[0] * dab[ch] + 0.3 * c[1] * wsisa_stains_he[ch]);
      }
    }
  }
}

/* ---- sensitivity analysis end to end ------------------------------------------ */

#include "tests/testutil.h"

char *tu_run_ok(const char *fmt, ...) {
  char args[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  char *out = NULL, *err = NULL;
  int status = tu_run(args, &out, &err);
  cr_assert_eq(status, 0, "wsisa %s: exit %d: %s", args, status, err ? err : "");
  free(err);
  return out;
}

/* Evaluate f on every row of a samples file and write run_id,<name>. */
void tu_write_outputs(const char *samples, const char *outputs, const char *name,
                      double (*f)(const wsisa_csv *, size_t)) {
  wsisa_csv *c = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_csv_read(samples, &c, &e), 0, "%s", e.msg);
  FILE *out = fopen(outputs, "w");
  cr_assert_not_null(out);
  fprintf(out, "run_id,%s\n", name);
  for (size_t r = 0; r < c->nrows; r++) {
    double y = f(c, r);
    if (isnan(y))
      fprintf(out, "%s,\n", wsisa_csv_cell(c, r, 0));
    else
      fprintf(out, "%s,%.17g\n", wsisa_csv_cell(c, r, 0), y);
  }
  fclose(out);
  wsisa_csv_free(c);
}

double tu_csv_col(const wsisa_csv *c, size_t row, const char *name) {
  double v;
  long at = wsisa_csv_column(c, name);
  cr_assert_geq(at, 0, "no column %s", name);
  cr_assert_eq(wsisa_csv_number(c, row, (size_t)at, &v, NULL), 0);
  return v;
}

/* One statistic of indices.csv. */
double tu_index_of(const char *dir, const char *output, const char *param, const char *stat) {
  char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/indices.csv", dir);
  wsisa_csv *c = NULL;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_csv_read_table(path, "output", &c, &e), 0, "%s", e.msg);
  double v = NAN;
  for (size_t r = 0; r < c->nrows; r++)
    if (strcmp(wsisa_csv_cell(c, r, 0), output) == 0 && strcmp(wsisa_csv_cell(c, r, 1), param) == 0)
      v = tu_csv_col(c, r, stat);
  wsisa_csv_free(c);
  return v;
}

json_t *tu_indices_json(const char *dir) {
  char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/indices.json", dir);
  json_error_t err;
  json_t *j = json_load_file(path, 0, &err);
  cr_assert_not_null(j, "%s: %s", path, err.text);
  return j;
}

double tu_ishigami(const wsisa_csv *c, size_t r) {
  double x1 = tu_csv_col(c, r, "x1"), x2 = tu_csv_col(c, r, "x2"), x3 = tu_csv_col(c, r, "x3");
  return sin(x1) + 7 * sin(x2) * sin(x2) + 0.1 * pow(x3, 4) * sin(x1);
}

/* ---- a reuse plan with known costs (tests/test_engine_estimate*.c) ------------- */

void tu_fixture_make_runs(tu_fixture *f, wsisa_reuse_strategy s, int nruns) {
  memset(f, 0, sizeof *f);
  uint64_t keys[TU_FIXTURE_RUNS * WSISA_SEG_LEVELS];
  for (int r = 0; r < nruns; r++)
    for (int l = 0; l < WSISA_SEG_LEVELS; l++) keys[r * WSISA_SEG_LEVELS + l] = (uint64_t)(10 * r + l + 1);
  cr_assert_eq(wsisa_reuse_design_new(keys, (size_t)nruns, WSISA_SEG_LEVELS, &f->d), 0);
  wsisa_reuse_opts o = {.strategy = s, .max_bucket_size = 8, .max_buckets = 1};
  cr_assert_eq(wsisa_reuse_merge(f->d, &o, &f->b), 0);
  for (int r = 0; r < nruns; r++)
    memcpy(f->params + r * WSISA_SEG_NPARAMS, wsisa_seg_defaults(), WSISA_SEG_NPARAMS * sizeof(double));
  f->open = f->open_path = 10;
  f->stage = 3;
  f->measure = 2;
  f->background = 0.5;
  for (int l = 0; l < WSISA_SEG_LEVELS; l++) {
    f->level[l * 2] = l + 1;     /* variant 0 */
    f->level[l * 2 + 1] = 2 * (l + 1); /* variant 1 */
  }
}

void tu_fixture_make(tu_fixture *f, wsisa_reuse_strategy s) { tu_fixture_make_runs(f, s, 2); }

void tu_fixture_free(tu_fixture *f) {
  wsisa_reuse_buckets_free(f->b);
  wsisa_reuse_design_free(f->d);
}

/* ---- slides through the command line (tests/test_cli_slides.c, test_cli_stain.c) */

const char *tu_slides_path(const char *name, int (*make)(const char *)) {
  static char paths[4][WSISA_PATH_MAX];
  static int at;
  char *p = paths[at++ % 4];
  snprintf(p, sizeof paths[0], "%s/%s", tu_tmpdir("slides"), name);
  if (make) cr_assert_eq(make(p), 0, "cannot write %s", p);
  return p;
}

/* Eosin-pink tissue without a nucleus: stroma only, 1024 x 1024 at 0.5 um
 * (generic TIFF, 20000 pixels per centimetre). */
int tu_make_pink(const char *p) {
  wsisa_image *img = NULL;
  if (wsisa_image_new(1024, 1024, 3, WSISA_U8, &img, NULL)) return -1;
  uint32_t seed = 12345;
  for (int y = 0; y < img->height; y++) {
    uint8_t *q = wsisa_image_row(img, y);
    for (int x = 0; x < img->width; x++, q += 3) {
      seed = seed * 1664525u + 1013904223u;
      int n = (int)(seed >> 28) - 8; /* -8..7: texture */
      q[0] = (uint8_t)(220 + n), q[1] = (uint8_t)(150 + n), q[2] = (uint8_t)(190 + n);
    }
  }
  tu_slide_spec spec = {.kind = TU_SLIDE_GENERIC, .resolution_unit = RESUNIT_CENTIMETER,
                        .resolution = 20000, .levels = 2, .level_step = 2, .tile = 256};
  int rc = tu_slide_write(p, img, &spec);
  wsisa_image_free(img);
  return rc;
}

/* A study of `inputs` (the JSON object's members) with a MOAT method; runs
 * are given by a one-row design so that each test stays small. */
const char *tu_slides_study(const char *inputs) {
  static char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/study.json", tu_tmpdir("slides_study"));
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{ \"inputs\": { %s },\n"
          "  \"method\": { \"name\": \"moat\", \"trajectories\": 2 },\n"
          "  \"metric\": [\"dice\"] }\n",
          inputs);
  fclose(f);
  return path;
}

const char *tu_one_run_design(void) {
  static char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/one.csv", tu_tmpdir("slides_design"));
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("run_id,G1\n0,60\n", f);
  fclose(f);
  return path;
}

/* `wsisa run` of `study` on the one-run design into a fresh folder (its path
 * in dir); the exit status, stderr in *err (may be NULL). */
int tu_slides_run(const char *env, const char *study, char *dir, size_t cap, char **err) {
  snprintf(dir, cap, "%s/results", tu_tmpdir("slides_run"));
  char cmd[16384], *out = NULL;
  snprintf(cmd, sizeof cmd, "env STARPU_NCPU=2 %s %s run --study '%s' -o '%s' --samples '%s'",
           env ? env : "", WSISA_EXE, study, dir, tu_one_run_design());
  int status = tu_run_shell(cmd, &out, err);
  free(out);
  return status;
}

json_t *tu_json_file(const char *dir, const char *name) {
  char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  cr_assert_not_null(root, "%s: %s", path, je.text);
  return root;
}

double tu_json_num(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  cr_assert(json_is_number(v), "no number %s", key);
  return json_number_value(v);
}
