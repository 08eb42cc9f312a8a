/* The command tables (cli/cli.h) and what --help prints from them: every
 * command's --help exits 0 and shows each flag of its table, `wsisa help CMD`
 * prints the same page, a flag shared by several commands is declared once
 * (wsisa_cli_shared_flags) and reads the same on every page, and one name
 * means one thing: --tile is a tile's column,row, --tile-size a size. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tests/testutil.h"

/* The row's label as --help prints it: "--name" or "-o, --name". */
static void label(const wsisa_cli_flag *t, char *buf, size_t cap) {
  const wsisa_cli_flag *f = wsisa_cli_row(t);
  if (f->short_flag) snprintf(buf, cap, "-%c, --%s", f->key, f->name);
  else snprintf(buf, cap, "--%s", f->name);
}

static int shown(const wsisa_cli_flag *t) { return t->shared ? wsisa_cli_row(t)->help != NULL : t->help != NULL; }

static char *run_ok(const char *args) {
  char *out = NULL, *err = NULL;
  int status = tu_run(args, &out, &err);
  cr_assert_eq(status, 0, "wsisa %s: exit %d: %s", args, status, err ? err : "");
  free(err);
  return out;
}

Test(flags, every_help_page_shows_its_table) {
  size_t ncommands = 0;
  for (const wsisa_cli_command *const *c = wsisa_cli_commands; *c; c++, ncommands++) {
    const wsisa_cli_command *cmd = *c;
    char args[64];
    snprintf(args, sizeof args, "%s --help", cmd->name);
    char *page = run_ok(args);
    snprintf(args, sizeof args, "help %s", cmd->name);
    char *same = run_ok(args);
    cr_expect_str_eq(same, page, "`wsisa help %s` differs from `wsisa %s --help`", cmd->name,
                     cmd->name);
    cr_expect(strncmp(page, "usage: wsisa ", 13) == 0, "wsisa %s --help:\n%s", cmd->name, page);
    size_t nshown = 0;
    for (const wsisa_cli_flag *t = cmd->flags; !wsisa_cli_row_end(t); t++) {
      const wsisa_cli_flag *f = wsisa_cli_row(t);
      cr_assert(f->name, "wsisa %s: a row names shared key %d, not in the shared table",
                cmd->name, t->shared);
      if (!shown(t) || !f->key) continue;
      nshown++;
      char want[96], text[2048];
      label(t, want, sizeof want);
      cr_expect(strstr(page, want), "wsisa %s --help lacks %s:\n%s", cmd->name, want, page);
      /* the row's first line of help, as the table gives it */
      wsisa_cli_help(t, text, sizeof text);
      text[strcspn(text, "\n")] = '\0';
      cr_expect(strstr(page, text), "wsisa %s --help lacks \"%s\"", cmd->name, text);
    }
    cr_expect_gt(nshown, 0, "wsisa %s --help shows no flag", cmd->name);
    free(page);
    free(same);
  }
  cr_expect_geq(ncommands, 7);
}

/* A flag two commands take is a shared row, whose text every page prints. */
Test(flags, shared_flags_declared_once) {
  for (const wsisa_cli_command *const *c = wsisa_cli_commands; *c; c++) {
    for (const wsisa_cli_flag *t = (*c)->flags; !wsisa_cli_row_end(t); t++) {
      if (t->shared || !t->key) continue;
      /* a table's own row never takes a shared flag's name */
      for (const wsisa_cli_flag *s = wsisa_cli_shared_flags; s->name; s++)
        cr_expect(strcmp(s->name, t->name) || !t->help || !shown(t),
                  "wsisa %s declares --%s, a shared flag, itself", (*c)->name, t->name);
      if (!t->help) continue;
      /* nor a name another command's table declares too */
      for (const wsisa_cli_command *const *d = c + 1; *d; d++)
        for (const wsisa_cli_flag *u = (*d)->flags; !wsisa_cli_row_end(u); u++)
          cr_expect(u->shared || !u->name || !u->help || strcmp(u->name, t->name),
                    "--%s is declared by wsisa %s and wsisa %s: make it a shared flag",
                    t->name, (*c)->name, (*d)->name);
    }
  }
  /* the shared text is on every page of a command that takes the flag */
  for (const wsisa_cli_flag *s = wsisa_cli_shared_flags; s->name; s++) {
    if (!s->help) continue;
    char text[2048];
    const wsisa_cli_flag ref = {.shared = s->key};
    wsisa_cli_help(&ref, text, sizeof text);
    size_t users = 0;
    for (const wsisa_cli_command *const *c = wsisa_cli_commands; *c; c++)
      for (const wsisa_cli_flag *t = (*c)->flags; !wsisa_cli_row_end(t); t++) {
        if (t->shared != s->key) continue;
        users++;
        char args[64];
        snprintf(args, sizeof args, "%s --help", (*c)->name);
        char *page = run_ok(args);
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
          cr_expect(strstr(page, line), "wsisa %s --help: --%s lacks \"%s\"", (*c)->name,
                    s->name, line);
        wsisa_cli_help(&ref, text, sizeof text);
        free(page);
      }
    cr_expect_gt(users, 0, "shared --%s: no command takes it", s->name);
  }
}

/* One name, one meaning: --tile is where a tile is, --tile-size how large. */
Test(flags, tile_is_an_index_tile_size_a_size) {
  for (const wsisa_cli_command *const *c = wsisa_cli_commands; *c; c++)
    for (const wsisa_cli_flag *t = (*c)->flags; !wsisa_cli_row_end(t); t++) {
      const wsisa_cli_flag *f = wsisa_cli_row(t);
      if (!f->name || !shown(t)) continue;
      if (strcmp(f->name, "tile") == 0)
        cr_expect_eq(t->shared, WSISA_FLAG_TILE, "wsisa %s: its own --tile", (*c)->name);
      if (strcmp(f->name, "tile-size") == 0)
        cr_expect_eq(t->shared, WSISA_FLAG_TILE_SIZE, "wsisa %s: its own --tile-size",
                     (*c)->name);
    }
  /* tiles's old --tile N is refused with a line naming --tile-size */
  char *out = NULL, *err = NULL;
  char args[TU_LINE_MAX];
  snprintf(args, sizeof args, "tiles '%s' --tile 512", tu_src("tests/data/CMU-1-Small-Region.svs"));
  cr_expect_eq(tu_run(args, &out, &err), 2);
  cr_expect(err && strstr(err, "--tile-size"), "%s", err ? err : "");
  free(out);
  free(err);
  snprintf(args, sizeof args, "tiles '%s' --tile-size 512 --json",
           tu_src("tests/data/CMU-1-Small-Region.svs"));
  out = run_ok(args);
  cr_expect(strstr(out, "\"tile_size\": 512"), "%s", out);
  free(out);
}

Test(flags, help_alone_and_unknown) {
  char *a = run_ok("help"), *b = run_ok("--help");
  cr_expect_str_eq(a, b);
  free(a);
  free(b);
  char *out = NULL, *err = NULL;
  cr_expect_eq(tu_run("help no-such-command", &out, &err), 2);
  cr_expect(err && strstr(err, "no-such-command"), "%s", err ? err : "");
  free(out);
  free(err);
  cr_expect_eq(tu_run("help run tiles", &out, &err), 2);
  free(out);
  free(err);
}
