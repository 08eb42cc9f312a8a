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

static const wsisa_cli_flag flags[] = {
    {.shared = WSISA_FLAG_STUDY,
     .note = "a segmentation study: its largest and smallest tile, and\n"
             "every kind of task of every level its design uses"},
    {.shared = WSISA_FLAG_SAMPLES, .note = "instead of the study's own"},
    {.shared = WSISA_FLAG_SELECT},
    {.shared = WSISA_FLAG_FORCE, .note = "a round when every task is calibrated"},
    {.shared = WSISA_FLAG_HELP},
    {0}};
static const char *const forms[] = {"--study [--samples | --select] [--force]", NULL};
const wsisa_cli_command wsisa_cli_calibrate = {
    "calibrate", wsisa_cmd_calibrate, forms,
    "fill this host's performance models with the study's own tasks", flags};

static void usage(void) {
  wsisa_cli_usage(stdout, &wsisa_cli_calibrate);
  printf("Runs rounds of the workflow on those tiles, read as `wsisa run` reads them (the\n"
         "study's halo, the slide's colour statistics; per round and tile: the tile stage,\n"
         "the reference, and one segmentation per variant of the levels), with StarPU\n"
         "measuring every task, until each codelet task has StarPU's calibration minimum\n"
         "of samples (STARPU_CALIBRATE_MINIMUM, 10; the first sample is dropped: 11\n"
         "rounds) on every kind of worker. It then times each level, on the largest tile\n"
         "with one CPU worker, at those segmentations, along each parameter's range from\n"
         "the defaults, and over the grid of the two parameters whose interplay the\n"
         "product of those one-at-a-time curves misses the most (screened two by two at\n"
         "the segmentation it misses the most), which the estimate prices each run's\n"
         "level tasks at its parameter values by\n"
         "(STARPU_HOME/.starpu/sampling/wsisa_level_costs.json). With object reuse (the\n"
         "study's reuse.object_reuse, on by default) it also measures, on that tile,\n"
         "levels 6-7 with an empty and a full object store, at the defaults and at\n"
         "those segmentations, and the share each parameter's change leaves to\n"
         "compute (the design's one-parameter pairs), which the estimate prices\n"
         "object reuse by (STARPU_HOME/.starpu/sampling/wsisa_object_reuse.json).\n"
         "It times reading each of its tiles as a run reads them, on the thread that\n"
         "submits the tasks (STARPU_HOME/.starpu/sampling/wsisa_tile_reads.json),\n"
         "and the first write of each page of fresh memory, which a run pays for its\n"
         "working set (STARPU_HOME/.starpu/sampling/wsisa_fresh_memory.json).\n"
         "Last, those segmentations on one CPU worker and on k, k = 1, 2, 4, ... up\n"
         "to the cores, and how many workers they and the rounds kept busy on\n"
         "average: how much slower a task is with the workers busy\n"
         "(STARPU_HOME/.starpu/sampling/wsisa_busy_workers.json).\n"
         "About 40 s in all for a 1024x1024 tile on 2 cores.\n"
         "Models go to STARPU_HOME (default ~/.cache/wsisa), per host.\n");
}

int wsisa_cmd_calibrate(int argc, char **argv, wsisa_err *e) {
  const char *study_path = NULL;
  wsisa_calibrate_request r = {NULL, NULL, 0};
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_calibrate)) != -1) {
    switch (opt) {
      case WSISA_FLAG_STUDY: study_path = optarg; break;
      case WSISA_FLAG_SAMPLES: r.samples_path = optarg; break;
      case WSISA_FLAG_SELECT: r.select = optarg; break;
      case WSISA_FLAG_FORCE: r.force = 1; break;
      case WSISA_FLAG_HELP: usage(); return 0;
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
