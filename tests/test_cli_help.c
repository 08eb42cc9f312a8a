/* Every flag a --help shows is one its command accepts: `wsisa --help` and
 * each `wsisa COMMAND --help` are read for flags (--name, -o), each flag is
 * credited to the command it is shown for (the page's own, or the one a
 * "wsisa OTHER" earlier on the line names), and each is passed to that
 * command before --help: a flag it knows ends in its usage (exit 0) or in a
 * complaint about the value "1" that names the flag, never in "unknown flag". */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

#define MAX_COMMANDS 16
#define MAX_SHOWN 256

typedef struct shown {
  char command[32]; /* "" for wsisa's own options (--version) */
  char flag[48];
} shown;

typedef struct pages {
  char commands[MAX_COMMANDS][32];
  size_t ncommands;
  shown flags[MAX_SHOWN];
  size_t nflags;
} pages;

static int name_char(char c) { return isalnum((unsigned char)c) || c == '-' || c == '_'; }

static int is_command(const pages *p, const char *name) {
  for (size_t i = 0; i < p->ncommands; i++)
    if (strcmp(p->commands[i], name) == 0) return 1;
  return 0;
}

static void add_flag(pages *p, const char *command, const char *flag, size_t len) {
  shown s;
  snprintf(s.command, sizeof s.command, "%s", command);
  snprintf(s.flag, sizeof s.flag, "%.*s", (int)len, flag);
  for (size_t i = 0; i < p->nflags; i++)
    if (strcmp(p->flags[i].command, s.command) == 0 && strcmp(p->flags[i].flag, s.flag) == 0)
      return;
  cr_assert_lt(p->nflags, MAX_SHOWN);
  p->flags[p->nflags++] = s;
}

/* The flags on one page of help, credited to `page` unless a line names
 * another command first ("wsisa segment INPUT --params ..."). */
static void read_page(pages *p, const char *page, const char *text) {
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    char command[32];
    snprintf(command, sizeof command, "%s", page);
    for (const char *c = line; c < end; c++) {
      if (strncmp(c, "wsisa ", 6) == 0 && (c == line || !name_char(c[-1]))) {
        const char *w = c + 6;
        size_t n = 0;
        while (w + n < end && name_char(w[n])) n++;
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)n, w);
        if (is_command(p, word)) snprintf(command, sizeof command, "%s", word);
        else if (word[0] == '-') command[0] = '\0'; /* wsisa --version */
        continue;
      }
      if (*c != '-' || (c > line && !strchr(" [|(`,", c[-1]))) continue;
      size_t n = 1;
      while (c + n < end && name_char(c[n])) n++;
      int long_flag = c[1] == '-' && n > 2 && isalpha((unsigned char)c[2]);
      int short_flag = n == 2 && isalpha((unsigned char)c[1]);
      if (long_flag || short_flag) add_flag(p, command, c, n);
      c += n - 1;
    }
    line = *end ? end + 1 : end;
  }
}

/* The commands `wsisa --help` lists: its lines "  wsisa NAME ...". */
static void read_commands(pages *p, const char *text) {
  for (const char *line = text; *line; line += strcspn(line, "\n") + (strchr(line, '\n') != NULL)) {
    if (strncmp(line, "  wsisa ", 8) != 0 || !isalpha((unsigned char)line[8])) continue;
    size_t n = 0;
    while (name_char(line[8 + n])) n++;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)n, line + 8);
    if (!is_command(p, name)) {
      cr_assert_lt(p->ncommands, MAX_COMMANDS);
      snprintf(p->commands[p->ncommands++], sizeof p->commands[0], "%s", name);
    }
  }
}

/* Does `command` take `flag`? Its message otherwise. */
static int accepted(const char *command, const char *flag, char **why) {
  char args[256];
  char *out = NULL, *err = NULL;
  if (command[0]) snprintf(args, sizeof args, "%s %s 1 --help", command, flag);
  else snprintf(args, sizeof args, "%s", flag);
  int status = tu_run(args, &out, &err);
  int ok = status == 0 ||
           (command[0] && status == 2 && err && strstr(err, flag) && !strstr(err, "unknown flag"));
  *why = err;
  free(out);
  return ok;
}

static void read_all(pages *p) {
  char *out = NULL, *err = NULL;
  cr_assert_eq(tu_run("--help", &out, &err), 0, "%s", err);
  read_commands(p, out);
  cr_assert_geq(p->ncommands, 7, "commands read from wsisa --help:\n%s", out);
  read_page(p, "", out);
  free(out);
  free(err);
  for (size_t i = 0; i < p->ncommands; i++) {
    char args[64];
    snprintf(args, sizeof args, "%s --help", p->commands[i]);
    cr_assert_eq(tu_run(args, &out, &err), 0, "wsisa %s: %s", args, err);
    read_page(p, p->commands[i], out);
    free(out);
    free(err);
  }
}

Test(help, every_flag_shown_is_accepted) {
  static pages p;
  read_all(&p);
  /* every command's page shows flags, and the probe tells an unknown one */
  cr_assert_geq(p.nflags, 60, "only %zu flags read", p.nflags);
  for (size_t i = 0; i < p.ncommands; i++) {
    char *why = NULL;
    cr_expect_not(accepted(p.commands[i], "--no-such-flag", &why),
                  "wsisa %s takes --no-such-flag", p.commands[i]);
    cr_expect(why && strstr(why, "unknown flag"), "wsisa %s --no-such-flag: %s", p.commands[i],
              why ? why : "");
    free(why);
  }
  for (size_t i = 0; i < p.nflags; i++) {
    char *why = NULL;
    cr_expect(accepted(p.flags[i].command, p.flags[i].flag, &why),
              "`wsisa %s%s--help` shows %s, which wsisa %s refuses: %s", p.flags[i].command,
              p.flags[i].command[0] ? " " : "", p.flags[i].flag, p.flags[i].command,
              why ? why : "");
    free(why);
  }
}

/* The top-level help comes from the commands' tables: what `wsisa tiles`
 * refuses, --level, is not offered for it. */
Test(help, top_level_offers_what_the_commands_take) {
  static pages p;
  char *out = NULL, *err = NULL;
  cr_assert_eq(tu_run("--help", &out, &err), 0, "%s", err);
  read_commands(&p, out);
  read_page(&p, "", out);
  for (size_t i = 0; i < p.nflags; i++)
    cr_expect(strcmp(p.flags[i].command, "tiles") || strcmp(p.flags[i].flag, "--level"),
              "wsisa --help offers tiles --level:\n%s", out);
  /* each command's line in wsisa --help is its own usage line */
  for (size_t i = 0; i < p.ncommands; i++) {
    char args[64], *page = NULL, *page_err = NULL;
    snprintf(args, sizeof args, "%s --help", p.commands[i]);
    cr_assert_eq(tu_run(args, &page, &page_err), 0, "%s", page_err);
    const char *usage = strstr(page, "usage: wsisa ");
    cr_assert(usage, "wsisa %s: no usage line:\n%s", args, page);
    usage += strlen("usage: wsisa ");
    const char *form = usage + strlen(p.commands[i]);
    size_t len = strcspn(form, "\n");
    char line[512];
    snprintf(line, sizeof line, "  wsisa %-9s%.*s\n", p.commands[i], (int)len, form);
    cr_expect(strstr(out, line), "wsisa --help lacks \"%s\":\n%s", line, out);
    free(page);
    free(page_err);
  }
  free(out);
  free(err);
}
