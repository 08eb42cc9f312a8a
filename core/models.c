/* The StarPU performance models wsisa lets StarPU read, checked first: StarPU
 * 1.3 asserts (and the process aborts) on a model file it cannot parse, so
 * each one is parsed by StarPU in a child process, and one that kills the
 * child is set aside (renamed, never deleted) before StarPU starts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core_private.h"

/* StarPU 1.3's _STARPU_PERFMODEL_VERSION: the folder its models are kept in
 * under sampling/codelets/. */
#define MODEL_VERSION "45"
/* A model file that takes longer than this to parse (a FIFO, say) is damaged. */
#define PARSE_SECONDS 10

/* Does StarPU parse `path` without dying? */
static int parses(const char *path) {
  pid_t pid = fork();
  if (pid < 0) return 1; /* cannot tell: let StarPU read it, as before */
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO), dup2(null, STDOUT_FILENO);
    signal(SIGALRM, SIG_DFL);
    alarm(PARSE_SECONDS);
    struct starpu_perfmodel m;
    memset(&m, 0, sizeof m);
    if (starpu_perfmodel_load_file(path, &m) == 0) starpu_perfmodel_unload_model(&m);
    _exit(0);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Each folder from STARPU_HOME down to the models must be a folder, or not
 * exist yet (StarPU makes it): StarPU aborts on a file in the way. */
static int check_folders(const char *home, const char *models, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  snprintf(path, sizeof path, "%s", models);
  for (char *p = path + strlen(home);; p = strchr(p + 1, '/')) {
    char keep = p ? *p : '\0';
    if (p) *p = '\0';
    struct stat st;
    int r = stat(path, &st), err = errno;
    if ((r == 0 && !S_ISDIR(st.st_mode)) || (r != 0 && err == ENOTDIR))
      return wsisa_error(e, WSISA_EIO,
                         "STARPU_HOME=%s: %s is not a folder; StarPU keeps its performance "
                         "models there (name a folder in STARPU_HOME, or move the file)",
                         home, path);
    if (r != 0 || !p) break; /* missing: StarPU makes it */
    *p = keep;
  }
  return 0;
}

int wsisa__runtime_models_check(wsisa_err *e) {
  /* once, before StarPU ever ran: a child forked after starpu_shutdown can
   * block on a lock a finished StarPU thread held, and its files were
   * written by this process's StarPU anyway */
  static int checked;
  if (checked) return 0;
  checked = 1;
  const char *home = getenv("STARPU_HOME"), *dir_env = getenv("STARPU_PERF_MODEL_DIR");
  char models[WSISA_PATH_MAX];
  int rc;
  if (dir_env && *dir_env)
    rc = wsisa_path_fmt_err(models, e, "%s/codelets/" MODEL_VERSION, dir_env);
  else if (home && *home)
    rc = wsisa_path_fmt_err(models, e, "%s/.starpu/sampling/codelets/" MODEL_VERSION, home);
  else return 0;
  if (!rc) rc = check_folders(dir_env && *dir_env ? dir_env : home, models, e);
  DIR *d = rc ? NULL : opendir(models);
  if (!d) return rc;
  struct dirent *ent;
  while (!rc && (ent = readdir(d))) {
    /* wsisa's models only (symbol.host); those set aside are not read again */
    if (strncmp(ent->d_name, "wsisa_", 6) != 0 || strstr(ent->d_name, ".damaged-")) continue;
    char path[WSISA_PATH_MAX], aside[WSISA_PATH_MAX], stamp[32];
    if ((rc = wsisa_path_fmt_err(path, e, "%s/%s", models, ent->d_name))) break;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && parses(path)) continue;
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
    if ((rc = wsisa_path_fmt_err(aside, e, "%s.damaged-%s", path, stamp))) break;
    /* never over one set aside before in the same second */
    for (int k = 2; !rc && access(aside, F_OK) == 0 && k < 1000; k++)
      rc = wsisa_path_fmt_err(aside, e, "%s.damaged-%s-%d", path, stamp, k);
    if (rc) break;
    if (rename(path, aside) != 0)
      rc = wsisa_error(e, WSISA_EIO,
                       "%s: a damaged performance model that cannot be set aside (%s); move or "
                       "remove it, or run with another STARPU_HOME",
                       path, strerror(errno));
    else
      wsisa_log(WSISA_LOG_WARN, "models",
                "%s: a damaged performance model, set aside as %s; going on without it "
                "(wsisa calibrate measures it again)",
                path, aside);
  }
  closedir(d);
  return rc;
}
