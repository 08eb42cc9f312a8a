/* Helpers shared by the test suites: paths, running the CLI, image comparison. */
#ifndef WSISA_TESTUTIL_H
#define WSISA_TESTUTIL_H

#include <stddef.h>

#include <jansson.h>
#include <starpu.h>

#include "core/core.h"
#include "engine/workflow/workflow.h"
#include "io/csv.h"
#include "reuse/reuse.h"

/* A command line, an environment setting or an expected message of a test
 * that names a path or two: the paths and the words around them. */
#define TU_LINE_MAX (2 * WSISA_PATH_MAX + 512)
/* wsisa_path_fmt, asserted to fit: a test's paths are never cut. */
void tu_path(char out[WSISA_PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Absolute path of a file under the source tree (static buffer rotation). */
const char *tu_src(const char *relative);
/* A fresh temporary directory under the build tree. */
const char *tu_tmpdir(const char *tag);
/* Run the wsisa executable with `args` (a shell-quoted string); capture stdout
 * and stderr into malloc'd strings (may be NULL to discard). Returns the exit
 * status, or -1 if it did not exit normally. */
int tu_run(const char *args, char **out, char **err);
/* The same for a whole shell command line. */
int tu_run_shell(const char *command, char **out, char **err);
/* Read a whole file into a malloc'd string; NULL if unreadable. */
char *tu_slurp(const char *path, size_t *len);
/* Newlines in a file; 0 if unreadable. */
size_t tu_count_lines(const char *path);
/* Number of pixels whose bytes differ between two images of the same shape;
 * (size_t)-1 when the shapes differ. */
size_t tu_image_diff(const wsisa_image *a, const wsisa_image *b);
/* Run one codelet graph on images: every image in `imgs` is registered (inputs
 * and outputs alike; outputs are allocated by the caller), `submit` inserts the
 * tasks using the handles in the same order, the tasks run where `where` allows
 * (STARPU_CPU or STARPU_OPENCL), and every image holds its result on return.
 * Returns what `submit` returned. */
typedef int (*tu_submit_fn)(starpu_data_handle_t *handles, void *arg);
int tu_run_op(uint32_t where, wsisa_image **imgs, int nimgs, tu_submit_fn submit, void *arg);
/* Read an image of the source tree; NULL (with the reason on stderr) when
 * it cannot be read. */
wsisa_image *tu_load(const char *relative);
/* An RGB H&E image saved wrong, as users have: red and blue swapped (BGR
 * written as RGB), or grey in every channel (Rec. 601 luma, the channels'
 * mean, or luma with -3..3 levels of noise per channel, as a greyscale scan
 * keeps); or stained otherwise: paler or darker (its optical density halved
 * or doubled), dark field (nuclei lit blue on black, as with a DNA stain:
 * the red channel's darkness past the stroma's is the signal), or
 * immunohistochemistry (its haematoxylin turned into DAB's brown, its eosin
 * into a faint haematoxylin counterstain, 30 % of it: a DAB-dominant
 * chromogen). */
typedef enum tu_slip {
  TU_SLIP_NONE,
  TU_SLIP_BGR,
  TU_SLIP_GREY_LUMA,
  TU_SLIP_GREY_MEAN,
  TU_SLIP_GREY_NOISY,
  TU_SLIP_PALE,
  TU_SLIP_DARK,
  TU_SLIP_FLUORESCENCE,
  TU_SLIP_DAB
} tu_slip;
void tu_slip_apply(wsisa_image *img, tu_slip slip);
/* Every pixel's optical density (log10(255 / level), 0 read as 1) times
 * `factor`: the stain paler (below 1) or darker. */
void tu_od_scale(wsisa_image *img, double factor);
/* The H&E images of other labs in tests/data/he-variety/ (its README). */
#define TU_HE_VARIETY_N 7
extern const char *const tu_he_variety[TU_HE_VARIETY_N];
/* Criterion fixture of the suites that run codelets: StarPU per test. */
#define TU_STARPU_FIXTURE .init = (void (*)(void))tu_starpu_start, .fini = tu_starpu_stop
/* Start StarPU with one CPU worker and, when PoCL offers it, one OpenCL worker. */
int tu_starpu_start(void);
void tu_starpu_stop(void);

/* ---- sensitivity analysis end to end (tests/test_cli_sa*.c) ------------------ */

/* `wsisa <args>`, asserted to exit 0; its stdout (free() it). */
char *tu_run_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Evaluate f on every row of a samples file and write run_id,<name>. */
void tu_write_outputs(const char *samples, const char *outputs, const char *name,
                      double (*f)(const wsisa_csv *, size_t));
/* Row `row`'s number in column `name` (asserted present). */
double tu_csv_col(const wsisa_csv *c, size_t row, const char *name);
/* One statistic of DIR/indices.csv. */
double tu_index_of(const char *dir, const char *output, const char *param, const char *stat);
/* DIR/indices.json, asserted to load. */
json_t *tu_indices_json(const char *dir);
/* The Ishigami function of a row's x1, x2, x3 (a = 7, b = 0.1). */
double tu_ishigami(const wsisa_csv *c, size_t r);

/* ---- a reuse plan with known costs (tests/test_engine_estimate*.c) ------------- */

/* Two runs (or up to four) that differ from level 1 on, each its own bucket
 * under `stage`: a unit per run and tile, seven tasks each; level l costs l
 * seconds, a measure 2, opening a tile 10, a new (B, G, R) 0.5, the tile
 * stage alone 3. */
#define TU_FIXTURE_RUNS 4
typedef struct tu_fixture {
  wsisa_reuse_design *d;
  wsisa_reuse_buckets *b;
  double params[TU_FIXTURE_RUNS * WSISA_SEG_NPARAMS];
  double open, open_path, stage, measure, background, level[WSISA_SEG_LEVELS * 2];
  int variant[TU_FIXTURE_RUNS * WSISA_SEG_LEVELS];
  size_t shape[4];
} tu_fixture;
void tu_fixture_make_runs(tu_fixture *f, wsisa_reuse_strategy s, int nruns);
/* Two runs. */
void tu_fixture_make(tu_fixture *f, wsisa_reuse_strategy s);
void tu_fixture_free(tu_fixture *f);

/* ---- slides through the command line (tests/test_cli_slides.c, test_cli_stain.c) */

/* A file `name` in the suite's folder, written by make (NULL: just the path). */
const char *tu_slides_path(const char *name, int (*make)(const char *));
/* Eosin-pink tissue without a nucleus: stroma only, 1024 x 1024 at 0.5 um
 * (generic TIFF, 20000 pixels per centimetre). */
int tu_make_pink(const char *p);
/* A study of `inputs` (the JSON object's members) with a MOAT method; runs
 * are given by a one-row design so that each test stays small. */
const char *tu_slides_study(const char *inputs);
/* That one-row design. */
const char *tu_one_run_design(void);
/* `wsisa run` of `study` on the one-run design into a fresh folder (its path
 * in dir); the exit status, stderr in *err (may be NULL). */
int tu_slides_run(const char *env, const char *study, char *dir, size_t cap, char **err);
/* DIR/name as JSON, asserted to load. */
json_t *tu_json_file(const char *dir, const char *name);
/* A member's number, asserted present. */
double tu_json_num(json_t *o, const char *key);

#endif
