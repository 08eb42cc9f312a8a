/* `wsisa analyze --study S.json --samples samples.csv --outputs y.csv [-o DIR]`,
 * or `--problem P.json --method M` instead of --study for a design made
 * elsewhere: sensitivity indices of every output column (engine/study/analysis.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/study/study.h"

static const wsisa_cli_flag flags[] = {
    {"study", 's', .arg = "S.json", .help = "the study the samples came from"},
    {"problem", 'P', .arg = "P.json",
     .help = "instead of a study: SALib's problem (names, bounds, optional groups and dists)"},
    {"method", 'm', .arg = "M", .help = "with --problem: morris, sobol or correlation"},
    {"samples", 'S', .arg = "samples.csv",
     .help = "the design, run_id first or no id column (rows 0, 1, ...;\n"
             "other columns are ignored with a warning): the one\n"
             "`wsisa sample` wrote (checked row by\n"
             "row against the study), or one made elsewhere whose rows\n"
             "suit the study's method: MOAT trajectories (one\n"
             "parameter moving per step), VBD in Saltelli's layout\n"
             "(A, AB_1..AB_k, [BA_1..BA_k,] B per base sample), any\n"
             "rows for correlation"},
    {"outputs", 'y', .arg = "y.csv",
     .help = "run_id (or no id column), then one or more output\n"
             "columns, one row per run\n"
             "in the design's order; an empty cell is a missing output.\n"
             "The study's metric columns are analysed (a pure SA study\n"
             "without metric: every column)"},
    {"output-dir", 'o', .arg = "DIR", .short_flag = 1,
     .help = "where indices.csv, indices.json and the SVG plots go (default .)"},
    {"select", 'p', .arg = "P,...", .help = "two_phase studies: analyse the phase-2 (VBD) design"},
    {"drop-missing", 'd',
     .help = "VBD: drop base samples with a missing output instead of refusing"},
    {.name = "help", .key = 'h', .short_flag = 1},
    {0}};
static const char *const forms[] = {"--study --samples --outputs [-o]",
                                    "--problem --method --samples --outputs [-o]", NULL};
const wsisa_cli_command wsisa_cli_analyze = {"analyze", wsisa_cmd_analyze, forms,
                                             "sensitivity indices", flags};

int wsisa_cmd_analyze(int argc, char **argv, wsisa_err *e) {
  wsisa_analysis_request a = {.dir = "."};
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_analyze)) != -1) {
    switch (opt) {
      case 's': a.study_path = optarg; break;
      case 'S': a.samples_path = optarg; break;
      case 'y': a.outputs_path = optarg; break;
      case 'o': a.dir = optarg; break;
      case 'p': a.select = optarg; break;
      case 'd': a.drop_missing = 1; break;
      case 'P': a.problem_path = optarg; break;
      case 'm': a.method = optarg; break;
      case 'h': wsisa_cli_usage(stdout, &wsisa_cli_analyze); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (!a.study_path == !a.problem_path)
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
