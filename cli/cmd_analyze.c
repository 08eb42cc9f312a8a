/* `wsisa analyze --study S.json --samples samples.csv --outputs y.csv [-o DIR]`,
 * or `--problem P.json --method M` instead of --study for a design made
 * elsewhere (SALib's problem as JSON or its text parameter file): sensitivity
 * indices of every output column, or of those --column picks
 * (engine/study/analysis.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/study/study.h"

static const wsisa_cli_flag flags[] = {
    {.shared = WSISA_FLAG_STUDY, .note = "the one the samples came from"},
    {"problem", 'P', .arg = "P.json",
     .help = "instead of a study: SALib's problem, a JSON dict (names,\n"
             "bounds, optional groups and dists, and the keys SALib adds)\n"
             "or its parameter file (name lower upper [group [dist]] a line)"},
    {"method", 'm', .arg = "M", .help = "with --problem: morris, sobol or correlation"},
    {.shared = WSISA_FLAG_SAMPLES,
     .note = "whose rows suit the study's method: MOAT trajectories (one\n"
             "parameter moving per step), VBD in Saltelli's layout\n"
             "(A, AB_1..AB_k, [BA_1..BA_k,] B per base sample), any\n"
             "rows for correlation; the one `wsisa sample` wrote is\n"
             "checked row by row against the study"},
    {"outputs", 'y', .arg = "y.csv",
     .help = "run_id (or no id column), then one or more output\n"
             "columns, one row per run in the design's order; an empty\n"
             "cell or nan is a missing output; without a header the\n"
             "columns are y0, y1, ... The study's metric columns are\n"
             "analysed (a pure SA study without metric: every column)"},
    {"column", 'c', .arg = "K", .short_flag = 1,
     .help = "analyse output column K only (0-based after any id\n"
             "column, as SALib's -c); repeat for several"},
    {.shared = WSISA_FLAG_OUTPUT, .arg = "DIR",
     .note = "the folder indices.csv, indices.json and the SVG plots go\n"
             "in (default .)"},
    {.shared = WSISA_FLAG_SELECT},
    {"drop-missing", 'd',
     .help = "VBD: drop base samples with a missing output instead of refusing"},
    {.shared = WSISA_FLAG_HELP},
    /* accepted, not shown: -o's name before it was --output everywhere */
    {.name = "output-dir", .key = WSISA_FLAG_OUTPUT, .arg = "DIR"},
    {0}};
static const char *const forms[] = {"--study --samples --outputs [-c]... [-o]",
                                    "--problem --method --samples --outputs [-c]... [-o]", NULL};
const wsisa_cli_command wsisa_cli_analyze = {"analyze", wsisa_cmd_analyze, forms,
                                             "sensitivity indices", flags};

int wsisa_cmd_analyze(int argc, char **argv, wsisa_err *e) {
  wsisa_analysis_request a = {.dir = "."};
  size_t columns[64];
  long k;
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_analyze)) != -1) {
    switch (opt) {
      case WSISA_FLAG_STUDY: a.study_path = optarg; break;
      case WSISA_FLAG_SAMPLES: a.samples_path = optarg; break;
      case 'y': a.outputs_path = optarg; break;
      case WSISA_FLAG_OUTPUT: a.dir = optarg; break;
      case WSISA_FLAG_SELECT: a.select = optarg; break;
      case 'd': a.drop_missing = 1; break;
      case 'P': a.problem_path = optarg; break;
      case 'm': a.method = optarg; break;
      case 'c':
        if ((rc = wsisa_cli_long("--column", optarg, &k, e))) return rc;
        if (k < 0) return wsisa_error(e, WSISA_EUSAGE, "--column %ld: a column number from 0", k);
        if (a.ncolumns == sizeof columns / sizeof *columns)
          return wsisa_error(e, WSISA_EUSAGE, "--column: at most %zu", a.ncolumns);
        columns[a.ncolumns++] = (size_t)k;
        a.columns = columns;
        break;
      case WSISA_FLAG_HELP: wsisa_cli_usage(stdout, &wsisa_cli_analyze); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (a.study_path && a.problem_path)
    return wsisa_error(e, WSISA_EUSAGE, "--study and --problem: give one or the other");
  if (!a.study_path && !a.problem_path)
    return wsisa_error(e, WSISA_EUSAGE, "--study or --problem: one is required");
  if (!a.problem_path != !a.method)
    return wsisa_error(e, WSISA_EUSAGE, "--method goes with --problem (a study names its method)");
  if (a.problem_path && a.select)
    return wsisa_error(e, WSISA_EUSAGE, "--select goes with a two_phase --study");
  if (!a.samples_path) return wsisa_error(e, WSISA_EUSAGE, "--samples: required");
  if (!a.outputs_path) return wsisa_error(e, WSISA_EUSAGE, "--outputs: required");
  rc = wsisa_analysis_run(&a, e);
  if (!rc) printf("wrote %s/indices.csv, %s/indices.json and plots\n", a.dir, a.dir);
  return rc;
}
