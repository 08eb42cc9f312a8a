/* The subcommands of the `wsisa` program; main.c holds their table. Each
 * parses its own flags, returns 0 or a WSISA_E* code with the message in `e`,
 * and declares itself, its flags and its usage lines in a wsisa_cli_command
 * (cli/cli.h), from which its --help and `wsisa --help` are printed. */
#ifndef WSISA_CMDS_H
#define WSISA_CMDS_H

#include "cli/cli.h"
#include "core/core.h"

extern const wsisa_cli_command wsisa_cli_tiles, wsisa_cli_segment, wsisa_cli_sample,
    wsisa_cli_analyze, wsisa_cli_plan, wsisa_cli_calibrate, wsisa_cli_run;

int wsisa_cmd_tiles(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_segment(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_sample(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_analyze(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_plan(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_calibrate(int argc, char **argv, wsisa_err *e);

int wsisa_cmd_run(int argc, char **argv, wsisa_err *e);

#endif
