/* Small helpers shared by the subcommands: each command's option table, from
 * which its flag parsing, its --help and `wsisa --help` all come, and flag
 * value parsing. */
#ifndef WSISA_CLI_H
#define WSISA_CLI_H

#include <stdio.h>

#include "core/core.h"
#include "engine/workflow/workflow.h" /* WSISA_SEG_LEVELS */

/* The flags that mean one thing in every command taking them: their rows are
 * declared once, in wsisa_cli_shared_flags (cli.c), and a command's table
 * names them by key ({.shared = WSISA_FLAG_STUDY}). A key is what
 * wsisa_cli_next returns for the flag; -o and -h keep their letters. */
enum {
  WSISA_FLAG_OUTPUT = 'o',
  WSISA_FLAG_HELP = 'h',
  WSISA_FLAG_STUDY = 256,
  WSISA_FLAG_SAMPLES,
  WSISA_FLAG_SELECT,
  WSISA_FLAG_JSON,
  WSISA_FLAG_FORCE,
  WSISA_FLAG_MPP,
  WSISA_FLAG_TARGET_MPP,
  WSISA_FLAG_TILE_SIZE,
  WSISA_FLAG_TILE,
  WSISA_FLAG_ACTIVE_PATHS,
  WSISA_FLAG_LEVEL_COSTS,
  WSISA_FLAG_MEMORY_LIMIT,
};

/* One row of a command's option table: the flag getopt_long accepts and its
 * line in --help, declared once so the two cannot disagree. */
typedef struct wsisa_cli_flag {
  const char *name; /* "tile" for --tile; an operand's name ("INPUT") when key is 0 */
  int key;          /* what wsisa_cli_next returns for it; 0: an operand, shown, not parsed */
  const char *arg;  /* placeholder of its value ("N", "S.json"); NULL: it takes none */
  const char *help; /* printf format of its --help text, '\n' between lines, which
                       are continued under the first; NULL: accepted, not shown
                       (--help itself, an old flag refused with a message) */
  int short_flag;   /* 1: -KEY is accepted too and shown ("-o, --output DIR") */
  double n[2];      /* the numbers help's conversions print */
  const char *const *words; /* when set, help's one conversion is a %s: these
                               nwords words joined by " | " (a table's names) */
  int nwords;
  /* A command's row naming a shared flag: its key (WSISA_FLAG_*); the row
     is then the shared one, with this row's arg when set (-o DIR, -o MASK)
     and this row's note, a printf format of more lines of help printed after
     the shared text (with this row's n and words). */
  int shared;
  const char *note;
} wsisa_cli_flag;

/* The shared flags' rows, ended by a row whose name is NULL. */
extern const wsisa_cli_flag wsisa_cli_shared_flags[];
/* The row a table's row stands for: the shared one it names, or itself. */
const wsisa_cli_flag *wsisa_cli_row(const wsisa_cli_flag *f);
/* Is `f` past its table's last row? */
int wsisa_cli_row_end(const wsisa_cli_flag *f);

/* A command: its name, its table and its usage lines. */
typedef struct wsisa_cli_command {
  const char *name;
  int (*run)(int argc, char **argv, wsisa_err *e);
  /* Usage lines after "wsisa NAME", NULL-ended. A flag named in them (--tile,
   * -o) is written with its placeholder from the table. */
  const char *const *forms;
  const char *summary; /* for `wsisa --help`, '\n' between lines */
  const wsisa_cli_flag *flags; /* ends with a row whose name is NULL */
} wsisa_cli_command;

/* Every command of `wsisa`, in the order `wsisa --help` lists them, NULL-ended
 * (cli.c). */
extern const wsisa_cli_command *const wsisa_cli_commands[];
/* The command named `name`, NULL if none. */
const wsisa_cli_command *wsisa_cli_find(const char *name);

/* getopt_long over the command's table: its return value, optarg and optind
 * as getopt_long gives them (a ':' optstring: ':' for a missing value, '?'
 * for an unknown flag, as wsisa_cli_bad_option expects). */
int wsisa_cli_next(int argc, char **argv, const wsisa_cli_command *cmd);
/* The n words joined by sep into buf (cut at cap). */
void wsisa_cli_join(const char *const *words, int n, const char *sep, char *buf, size_t cap);
/* A table row's --help text: the shared row's, then the row's note. */
void wsisa_cli_help(const wsisa_cli_flag *f, char *buf, size_t cap);
/* "usage: wsisa NAME FORM" for each form, then every shown row of the table. */
void wsisa_cli_usage(FILE *f, const wsisa_cli_command *cmd);
/* The command's lines in `wsisa --help`: its forms, then its summary. */
void wsisa_cli_synopsis(FILE *f, const wsisa_cli_command *cmd);

/* Parse a whole decimal integer for `flag`; refuses trailing text. */
int wsisa_cli_long(const char *flag, const char *text, long *out, wsisa_err *e);
/* Parse a size in bytes for `flag` (512M, 4G), more than 0. */
int wsisa_cli_bytes(const char *flag, const char *text, uint64_t *out, wsisa_err *e);
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
