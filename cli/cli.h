/* Small helpers shared by the subcommands' flag parsing. */
#ifndef WSISA_CLI_H
#define WSISA_CLI_H

#include "core/core.h"
#include "engine/workflow/workflow.h" /* WSISA_SEG_LEVELS */

/* Parse a whole decimal integer for `flag`; refuses trailing text. */
int wsisa_cli_long(const char *flag, const char *text, long *out, wsisa_err *e);
/* Parse a finite number for `flag`. */
int wsisa_cli_double(const char *flag, const char *text, double *out, wsisa_err *e);
/* A resolution in um/pixel: a number within WSISA_MPP_MIN..WSISA_MPP_MAX. */
int wsisa_cli_mpp(const char *flag, const char *text, double *out, wsisa_err *e);
/* Parse a positive duration for `flag`: seconds, or a number with s, m, h
 * or d ("90m", "8h", "1.5d"). */
int wsisa_cli_duration(const char *flag, const char *text, double *seconds, wsisa_err *e);
/* Parse --level-costs: the 7 non-negative costs per task of each level,
 * comma-separated. */
int wsisa_cli_level_costs(const char *text, double cost[WSISA_SEG_LEVELS], wsisa_err *e);
/* The error for the option getopt_long (optstring starting with ':') just
 * rejected: `opt` is its return value, ':' for a missing value. */
int wsisa_cli_bad_option(int opt, char **argv, wsisa_err *e);

#endif
