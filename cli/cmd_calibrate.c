/* `wsisa calibrate --study S.json`: fill this host's performance models with
 * the study's own tasks (engine/estimate/calibrate.c), so `wsisa plan --estimate` and
 * `wsisa run` can predict time and memory from measured data. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/estimate/estimate.h"
#include "engine/study/study.h"

static void usage(void) {
  printf("usage: wsisa calibrate --study S.json [--samples design.csv] [--force]\n"
         "  --study S.json        a segmentation study: its largest and smallest tile, and\n"
         "                        every kind of task of every level its design uses\n"
         "  --samples F           the design from a CSV (as wsisa plan reads it)\n"
         "  --select P,...        two_phase studies: the phase-2 design\n"
         "  --force               run a round even when every task is calibrated\n"
         "Runs rounds of the workflow on those tiles (per round and tile: the tile stage,\n"
         "the reference, and one segmentation per variant of the levels), with StarPU\n"
         "measuring every task, until each codelet task has StarPU's calibration minimum\n"
         "of samples (STARPU_CALIBRATE_MINIMUM, 10; the first sample is dropped: 11\n"
         "rounds) on every kind of worker; about 25 s for a 1024x1024 tile on 2 cores.\n"
         "Models go to STARPU_HOME (default ~/.cache/wsisa), per host.\n");
}

int wsisa_cmd_calibrate(int argc, char **argv, wsisa_err *e) {
  static const struct option longopts[] = {{"study", required_argument, 0, 's'},
                                           {"samples", required_argument, 0, 'S'},
                                           {"select", required_argument, 0, 'L'},
                                           {"force", no_argument, 0, 'f'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  const char *study_path = NULL;
  wsisa_calibrate_request r = {NULL, NULL, 0};
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (opt) {
      case 's': study_path = optarg; break;
      case 'S': r.samples_path = optarg; break;
      case 'L': r.select = optarg; break;
      case 'f': r.force = 1; break;
      case 'h': usage(); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (!study_path) return wsisa_error(e, WSISA_EUSAGE, "--study: required");
  if (r.samples_path && r.select)
    return wsisa_error(e, WSISA_EUSAGE, "--select: only for the study's own design, not with --samples");
  wsisa_study *study = NULL;
  wsisa_calibrate_report rep;
  int rc = wsisa_study_load(study_path, &study, e);
  if (!rc) rc = wsisa_calibrate_study(study, &r, &rep, e);
  if (!rc) wsisa_calibrate_print(&rep, stdout);
  wsisa_study_free(study);
  return rc;
}
