/* The `wsisa` program: a table of subcommands; main alone decides exit codes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "codelets/codelets.h"
#include "cli/cmds.h"
#include "core/core.h"
#include "engine/run/run.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsisa COMMAND [ARGS]\n"
          "Parameter sensitivity analysis of whole-slide nucleus segmentation on StarPU.\n\n"
          "commands:\n");
  /* each command's table (cli/cmds.h) gives its lines here and its own --help */
  for (size_t i = 0; wsisa_cli_commands[i]; i++) wsisa_cli_synopsis(f, wsisa_cli_commands[i]);
  fprintf(f,
          "\n  wsisa --help        this text; `wsisa COMMAND --help` (or `wsisa help COMMAND`)\n"
          "                      for one command\n"
          "  wsisa --version     versions of wsisa and StarPU, StarPU's library and limits\n"
          "  wsisa --list-ops    the fine-grain operations (StarPU codelets)\n\n"
          "environment:\n"
          "  STARPU_SCHED   scheduling policy when the study names none (validated: %s)\n"
          "  STARPU_NCPU, STARPU_NOPENCL, STARPU_OPENCL_ON_CPUS   worker set\n"
          "  STARPU_HOME    where performance models are kept\n"
          "  WSISA_LOG      error | warn | info | debug (default warn)\n",
          wsisa_sched_names());
}

int main(int argc, char **argv) {
  if (argc < 2) {
    /* one line, as every usage error; --help gives the whole text */
    fprintf(stderr, "usage: wsisa COMMAND [ARGS] (commands and their flags: wsisa --help)\n");
    return 2;
  }
  const char *name = argv[1];
  /* `wsisa help COMMAND` is `wsisa COMMAND --help` */
  static char help_flag[] = "--help";
  char *help_argv[] = {argv[0], argc > 2 ? argv[2] : NULL, help_flag, NULL};
  if (strcmp(name, "help") == 0 && argc > 2) {
    if (argc > 3) {
      fprintf(stderr, "wsisa help: %s: one command at most\n", argv[3]);
      return 2;
    }
    name = argv[2];
    argc = 3;
    argv = help_argv;
  }
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(name, "--version") == 0) {
    int major, minor, release;
    wsisa_runtime_version(&major, &minor, &release);
    printf("wsisa %s (StarPU %d.%d.%d)\n", WSISA_VERSION, major, minor, release);
    char starpu[WSISA_NOTE_MAX];
    wsisa_runtime_describe(starpu, sizeof starpu);
#ifdef WSISA_WITH_MPI
    printf("%s\nwsisa's MPI layer: built (mpirun -np R wsisa run)\n", starpu);
#else
    printf("%s\nwsisa's MPI layer: not built (Open MPI not found)\n", starpu);
#endif
    return 0;
  }
  if (strcmp(name, "--list-ops") == 0) {
    for (size_t i = 0; i < wsisa_n_ops; i++)
      printf("%-24s %-8s %s\n", wsisa_ops[i].name,
             wsisa_ops[i].cl_source ? "cpu+cl" : "cpu", wsisa_ops[i].model->symbol);
    return 0;
  }
  const wsisa_cli_command *cmd = wsisa_cli_find(name);
  if (cmd) {
    wsisa_err e = WSISA_ERR_INIT;
    int rc = cmd->run(argc - 1, argv + 1, &e);
    if (rc) {
      fprintf(stderr, "wsisa %s: %s\n", name, e.msg[0] ? e.msg : wsisa_strerror(rc));
      /* the shell's convention for a process a signal stopped: 128 + signal */
      if (rc == WSISA_EINTERRUPTED)
        return 128 + (wsisa_units_interrupted() ? wsisa_units_interrupted() : SIGINT);
      return wsisa_exit_code(rc);
    }
    /* what the command printed must have arrived (stdout may be a full disk) */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "wsisa %s: standard output: %s\n", name,
              errno ? strerror(errno) : "write error");
      return 1;
    }
    return 0;
  }
  fprintf(stderr, "wsisa: '%s' is not a command (see wsisa --help)\n", name);
  return 2;
}
