/* The results folder: made complete enough to resume (study.json,
 * samples.csv, the journal's header) in a temporary folder beside it and
 * renamed into place; one process writes it at a time (a flock on DIR/lock,
 * which holds the writer's pid). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/run/run_internal.h"

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
int wsisa__run_folder_lock(const char *dir, int exclusive, int *fd_out, wsisa_err *e) {
  char path[WSISA_PATH_MAX];
  *fd_out = -1;
  int rc = wsisa_path_fmt_err(path, e, "%s/lock", dir);
  if (rc) return rc;
  /* non-blocking: a lock that is a FIFO must not hold the open */
  int fd = open(path, (exclusive ? O_RDWR | O_CREAT : O_RDONLY) | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (!exclusive && errno == ENOENT) return 0;
    return wsisa_error(e, WSISA_EIO, "%s: %s", path, strerror(errno));
  }
  rc = wsisa_file_check(path, e);
  if (rc) {
    close(fd);
    return rc;
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
void wsisa__run_folder_remove(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  char path[WSISA_PATH_MAX];
  while (d && (ent = readdir(d))) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    if (wsisa_path_fmt(path, "%s/%s", dir, ent->d_name) == 0) unlink(path);
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
int wsisa__run_folder_check_new(const char *dir, wsisa_err *e) {
  struct stat st;
  char path[WSISA_PATH_MAX];
  /* the longest name a run puts in it must fit */
  int rc = wsisa_path_fmt_err(path, e, "%s/feature_values.csv", dir);
  if (rc) return rc;
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return wsisa_error(e, WSISA_EUSAGE, "-o %s: exists and is not a folder", dir);
    int fd;
    /* a writer inside: say who */
    if ((rc = wsisa_path_fmt_err(path, e, "%s/lock", dir))) return rc;
    if (access(path, F_OK) == 0) {
      rc = wsisa__run_folder_lock(dir, 0, &fd, e);
      if (rc) return rc;
      if (fd >= 0) close(fd);
    }
    if ((rc = wsisa_path_fmt_err(path, e, "%s/study.json", dir))) return rc;
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
int wsisa__run_folder_create(wsisa__study_run *s, const char *out, wsisa_err *e) {
  char temp[WSISA_PATH_MAX], parent[WSISA_PATH_MAX];
  int rc = wsisa_path_fmt_err(temp, e, "%s.tmp-XXXXXX", out);
  if (rc) return rc;
  if (!mkdtemp(temp))
    return wsisa_error(e, WSISA_EIO, "-o %s: cannot create a folder beside it (%s)", out,
                       strerror(errno));
  /* mkdtemp makes it 0700; a results folder is as readable as mkdir makes it */
  mode_t mask = umask(0);
  umask(mask);
  chmod(temp, 0777 & ~mask);
  snprintf(s->dir, sizeof s->dir, "%s", temp);
  rc = wsisa__run_folder_lock(temp, 1, &s->lock_fd, e);
  if (!rc) rc = wsisa__results_study(s, e);
  if (!rc) rc = wsisa__results_samples(s, NULL, e);
  if (!rc) rc = wsisa__results_reference(s, NULL, e);
  if (!rc) rc = wsisa__journal_open(s, 1, e);
  if (!rc && s->features) {
    rc = wsisa__run_features_move(s->features, temp, e);
    if (!rc) rc = wsisa__run_features_open(s->features, 1, e);
  }
  if (!rc && sync_dir(temp) != 0)
    rc = wsisa_error(e, WSISA_EIO, "%s: %s", temp, strerror(errno));
  if (!rc && rename(temp, out) != 0) {
    int err = errno;
    if (err == EEXIST || err == ENOTEMPTY) {
      /* another command made it meanwhile: say which if it is a writer */
      int fd;
      rc = wsisa__run_folder_lock(out, 0, &fd, e);
      if (fd >= 0) close(fd);
      if (!rc)
        rc = wsisa_error(e, WSISA_EUSAGE, "-o %s: made by another command meanwhile", out);
    } else {
      rc = wsisa_error(e, WSISA_EIO, "-o %s: %s", out, strerror(err));
    }
  }
  if (rc) {
    wsisa__run_folder_remove(temp);
    snprintf(s->dir, sizeof s->dir, "%s", out);
    return rc;
  }
  snprintf(s->dir, sizeof s->dir, "%s", out);
  /* fits: wsisa__run_folder_check_new checked it */
  if (s->features) wsisa__run_features_move(s->features, out, NULL);
  s->created = 1;
  snprintf(parent, sizeof parent, "%s", out);
  char *slash = strrchr(parent, '/');
  sync_dir(!slash ? "." : slash == parent ? "/" : (*slash = '\0', parent));
  return 0;
}
