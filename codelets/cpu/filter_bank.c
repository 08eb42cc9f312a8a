/* Filter bank: scale-normalised Laplacian of Gaussian σ²·∇²G at several σ,
 * convolved in the frequency domain with FFTW (single precision). The kernel
 * is scipy.ndimage.gaussian_laplace's sampled one; the transfer function is
 * the exact DFT of those samples, so the product equals the direct
 * convolution (codelets/cl/filter_bank.cl) up to rounding. */
#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codelets/cpu/cpu.h"

int wsisa_cpu_log_radius(float sigma) { return (int)(4.0 * sigma + 0.5); }

void wsisa_cpu_log_taps(float sigma, float *g, float *g2) {
  const int r = wsisa_cpu_log_radius(sigma);
  const double s2 = (double)sigma * sigma;
  double sum = 0;
  for (int x = -r; x <= r; x++) sum += exp(-0.5 * x * x / s2);
  for (int x = -r; x <= r; x++) {
    const double phi = exp(-0.5 * x * x / s2) / sum;
    g[x + r] = (float)phi;
    /* σ² · d²/dx² of the normalised samples, as scipy's order-2 kernel */
    g2[x + r] = (float)((x * x / s2 - 1.0) * phi);
  }
}

int wsisa_cpu_reflect(int i, int n) {
  const int period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

/* ---- plans: one pair per padded size, made once, shared by every thread ---- */

typedef struct fft_plans {
  int nx, ny;
  fftwf_plan forward, backward;
  struct fft_plans *next;
} fft_plans;

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static fft_plans *plans_cache;
static unsigned long plans_made;
static int wisdom_loaded;

unsigned long wsisa__cpu_filter_bank_plans_made(void) {
  pthread_mutex_lock(&planner_lock);
  unsigned long n = plans_made;
  pthread_mutex_unlock(&planner_lock);
  return n;
}

/* $STARPU_HOME/wsisa/fftw-wisdom-<host>, beside StarPU's own calibrations;
 * 0 when there is no home to keep it in. */
static int wisdom_path(char path[WSISA_PATH_MAX], int make_dir) {
  wsisa_env env;
  wsisa_env_read(&env);
  const char *home = env.starpu_home && *env.starpu_home ? env.starpu_home : env.home;
  char host[256];
  if (!home || !*home || gethostname(host, sizeof host) != 0) return 0;
  host[sizeof host - 1] = '\0';
  if (wsisa_path_fmt(path, "%s/wsisa", home)) return 0;
  if (make_dir && mkdir(path, 0777) != 0 && errno != EEXIST) return 0;
  return wsisa_path_fmt(path, "%s/wsisa/fftw-wisdom-%s", home, host) == 0;
}

/* Wisdom only saves planning time: failing to read or write it is logged and
 * otherwise ignored. Called with planner_lock held. */
static void wisdom_load(void) {
  char path[WSISA_PATH_MAX];
  wisdom_loaded = 1;
  if (wisdom_path(path, 0) && access(path, R_OK) == 0 && !fftwf_import_wisdom_from_filename(path))
    wsisa_log(WSISA_LOG_INFO, "fftw", "%s: not FFTW wisdom, ignored", path);
}

static void wisdom_save(void) {
  char path[WSISA_PATH_MAX], tmp[WSISA_PATH_MAX];
  if (!wisdom_path(path, 1)) {
    wsisa_log(WSISA_LOG_INFO, "fftw", "no folder for FFTW wisdom: not saved");
    return;
  }
  if (wsisa_path_fmt(tmp, "%s.%ld.tmp", path, (long)getpid())) {
    wsisa_log(WSISA_LOG_INFO, "fftw", "%s: path too long for FFTW wisdom's temporary file", path);
    return;
  }
  if (!fftwf_export_wisdom_to_filename(tmp) || rename(tmp, path) != 0) {
    wsisa_log(WSISA_LOG_INFO, "fftw", "%s: cannot write FFTW wisdom", path);
    remove(tmp);
  }
}

/* The r2c / c2r pair for an ny × nx real array; planning may overwrite the
 * arrays, so callers fill them afterwards. NULL if FFTW cannot plan. */
static fft_plans *plans_get(int nx, int ny, float *real, fftwf_complex *spectrum,
                            fftwf_complex *scratch) {
  pthread_mutex_lock(&planner_lock);
  fft_plans *p = plans_cache;
  while (p && (p->nx != nx || p->ny != ny)) p = p->next;
  if (!p && (p = calloc(1, sizeof *p))) {
    if (!wisdom_loaded) wisdom_load();
    /* measure, but never for long: the first tile of a run stays quick */
    fftwf_set_timelimit(1.0);
    p->nx = nx;
    p->ny = ny;
    p->forward = fftwf_plan_dft_r2c_2d(ny, nx, real, spectrum, FFTW_MEASURE);
    p->backward = fftwf_plan_dft_c2r_2d(ny, nx, scratch, real, FFTW_MEASURE);
    if (p->forward && p->backward) {
      plans_made += 2;
      p->next = plans_cache;
      plans_cache = p;
      wisdom_save();
    } else {
      if (p->forward) fftwf_destroy_plan(p->forward);
      if (p->backward) fftwf_destroy_plan(p->backward);
      free(p);
      p = NULL;
    }
  }
  pthread_mutex_unlock(&planner_lock);
  return p;
}

/* The least 2^a 3^b 5^c 7^d >= n: sizes FFTW transforms fastest. */
static int fft_size(int n) {
  for (;; n++) {
    int m = n;
    for (int f = 2; f <= 7; f++)
      while (m % f == 0) m /= f;
    if (m == 1) return n;
  }
}

static const double two_pi = 6.283185307179586476925286766559;

/* DFT of taps t[-r..r] (even) on n points: real, Σ t(x) cos(2π u x / n); the
 * angle's argument is reduced exactly (u x mod n) before scaling. */
static void even_dft(const float *t, int r, int n, int nu, double *out) {
  for (int u = 0; u < nu; u++) {
    double sum = t[r];
    for (int x = 1; x <= r; x++)
      sum += 2.0 * t[r + x] * cos(two_pi * (double)((long)u * x % n) / n);
    out[u] = sum;
  }
}

int wsisa_cpu_filter_bank(const wsisa_image *in, const float *sigmas, int nscales,
                          wsisa_image *const *out) {
  if (in->type != WSISA_F32 || in->channels != 1 || nscales < 1 ||
      nscales > WSISA_FILTER_BANK_MAX_SCALES)
    return WSISA_EINTERNAL;
  int pad = 0;
  for (int s = 0; s < nscales; s++) {
    if (!(sigmas[s] > 0 && sigmas[s] <= WSISA_FILTER_BANK_MAX_SIGMA) ||
        !wsisa__image_is(out[s], in, 1, WSISA_F32))
      return WSISA_EINTERNAL;
    int r = wsisa_cpu_log_radius(sigmas[s]);
    if (r > pad) pad = r;
  }
  const int w = in->width, h = in->height;
  /* reflected borders of the widest kernel's radius: the circular
   * convolution then never wraps into the part that is kept */
  const int nx = fft_size(w + 2 * pad), ny = fft_size(h + 2 * pad), nu = nx / 2 + 1;
  const size_t nspec = (size_t)ny * nu;
  int rc = WSISA_ENOMEM;
  float *real = fftwf_malloc(sizeof(float) * nx * ny);
  fftwf_complex *spectrum = fftwf_malloc(sizeof(fftwf_complex) * nspec);
  fftwf_complex *scratch = fftwf_malloc(sizeof(fftwf_complex) * nspec);
  double *tx = malloc(sizeof(double) * 2 * (size_t)(nu + ny));
  float *taps = malloc(sizeof(float) * 2 * (size_t)(2 * pad + 1));
  int *column = malloc(sizeof(int) * (size_t)nx);
  if (!real || !spectrum || !scratch || !tx || !taps || !column) goto done;
  fft_plans *plans = plans_get(nx, ny, real, spectrum, scratch);
  if (!plans) goto done;

  for (int x = 0; x < nx; x++) column[x] = wsisa_cpu_reflect(x - pad, w);
  for (int y = 0; y < ny; y++) {
    const float *src = wsisa_image_row(in, wsisa_cpu_reflect(y - pad, h));
    float *dst = real + (size_t)y * nx;
    for (int x = 0; x < nx; x++) dst[x] = src[column[x]];
  }
  fftwf_execute_dft_r2c(plans->forward, real, spectrum);

  double *gx = tx, *g2x = tx + nu, *gy = tx + 2 * nu, *g2y = gy + ny;
  const double norm = 1.0 / ((double)nx * ny); /* FFTW's transforms are unscaled */
  for (int s = 0; s < nscales; s++) {
    const int r = wsisa_cpu_log_radius(sigmas[s]);
    float *g = taps, *g2 = taps + 2 * r + 1;
    wsisa_cpu_log_taps(sigmas[s], g, g2);
    even_dft(g, r, nx, nu, gx);
    even_dft(g2, r, nx, nu, g2x);
    even_dft(g, r, ny, ny, gy);
    even_dft(g2, r, ny, ny, g2y);
    /* kernel g2(x) g(y) + g(x) g2(y): a real, separable-sum transfer function */
    for (int v = 0; v < ny; v++) {
      fftwf_complex *a = spectrum + (size_t)v * nu;
      fftwf_complex *b = scratch + (size_t)v * nu;
      for (int u = 0; u < nu; u++) {
        const float t = (float)((g2x[u] * gy[v] + gx[u] * g2y[v]) * norm);
        b[u][0] = a[u][0] * t;
        b[u][1] = a[u][1] * t;
      }
    }
    fftwf_execute_dft_c2r(plans->backward, scratch, real);
    for (int y = 0; y < h; y++)
      memcpy(wsisa_image_row(out[s], y), real + (size_t)(y + pad) * nx + pad,
             sizeof(float) * w);
  }
  rc = 0;
done:
  fftwf_free(real);
  fftwf_free(spectrum);
  fftwf_free(scratch);
  free(tx);
  free(taps);
  free(column);
  return rc;
}
