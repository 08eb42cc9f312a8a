/* The subcommands of the `wsisa` program; main.c holds their table. Each
 * parses its own flags, returns 0 or a WSISA_E* code with the message in `e`. */
#ifndef WSISA_CMDS_H
#define WSISA_CMDS_H

#include "core/core.h"

int wsisa_cmd_tiles(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_segment(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_sample(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_analyze(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_plan(int argc, char **argv, wsisa_err *e);
int wsisa_cmd_calibrate(int argc, char **argv, wsisa_err *e);

int wsisa_cmd_run(int argc, char **argv, wsisa_err *e);

#endif
