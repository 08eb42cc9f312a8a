/* The `wsisa` program: a table of subcommands; main alone decides exit codes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <starpu.h>

#include "codelets/codelets.h"
#include "cli/cmds.h"
#include "core/core.h"
#include "engine/engine.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv, wsisa_err *e);
  const char *usage;
} command;

static const command commands[] = {
    {"tiles", wsisa_cmd_tiles,
     "SLIDE [--level L] [--tile N] [--overlap N] [--json]   slide levels, tile grid, tissue tiles"},
    {"segment", wsisa_cmd_segment,
     "INPUT [--region x,y,w,h | --tile i,j] [--params k=v,...] -o MASK   one segmentation"},
    {"sample", wsisa_cmd_sample,
     "--study S.json -o samples.csv [--select P,...]   the SA design, one row per run"},
    {"analyze", wsisa_cmd_analyze,
     "--study S.json --samples samples.csv --outputs y.csv [-o DIR]   sensitivity indices"},
    {"plan", wsisa_cmd_plan,
     "--study S.json [--estimate [--ranks N] [--deadline T]] [--json]   reuse analysis;\n"
     "                  predicted time, CPU-hours and memory; no execution"},
    {"calibrate", wsisa_cmd_calibrate,
     "--study S.json   fill this host's performance models with the study's own tasks"},
    {"run", wsisa_cmd_run,
     "--study S.json -o DIR | --resume DIR   the whole study: execute, compare, analyze"},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsisa COMMAND [ARGS]\n"
          "Parameter sensitivity analysis of whole-slide nucleus segmentation on StarPU.\n\n"
          "commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  wsisa %-9s %s\n", commands[i].name, commands[i].usage);
  fprintf(f,
          "\n  wsisa --help        this text; `wsisa COMMAND --help` for one command\n"
          "  wsisa --version     versions of wsisa and StarPU, StarPU's library and limits\n"
          "  wsisa --list-ops    the fine-grain operations (StarPU codelets)\n\n"
          "environment:\n"
          "  STARPU_SCHED   scheduling policy (validated: %s)\n"
          "  STARPU_NCPU, STARPU_NOPENCL, STARPU_OPENCL_ON_CPUS   worker set\n"
          "  STARPU_HOME    where performance models are kept\n"
          "  WSISA_LOG      error | warn | info | debug (default warn)\n",
          wsisa_sched_names());
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(name, "--version") == 0) {
    int major, minor, release;
    starpu_get_version(&major, &minor, &release);
    printf("wsisa %s (StarPU %d.%d.%d)\n", WSISA_VERSION, major, minor, release);
    char starpu[4600];
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
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(name, commands[i].name) != 0) continue;
    wsisa_err e = WSISA_ERR_INIT;
    int rc = commands[i].run(argc - 1, argv + 1, &e);
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
