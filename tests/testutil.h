/* Helpers shared by the test suites: paths, running the CLI, image comparison. */
#ifndef WSISA_TESTUTIL_H
#define WSISA_TESTUTIL_H

#include <stddef.h>

#include "core/core.h"

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
/* Number of pixels whose bytes differ between two images of the same shape;
 * (size_t)-1 when the shapes differ. */
size_t tu_image_diff(const wsisa_image *a, const wsisa_image *b);
/* Start StarPU with one CPU worker and, when PoCL offers it, one OpenCL worker. */
int tu_starpu_start(void);
void tu_starpu_stop(void);

#endif
