/* `wsisa run --study S.json -o DIR`, `wsisa run --resume DIR`: flags into a
 * request for the study runner (engine/run/runner.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "engine/run/run.h"
#include "engine/study/study.h"

typedef struct run_opts {
  const char *study_path, *out, *resume, *samples, *check;
  int force;
  long max_buckets, max_bucket_size, active_paths, unit_timeout;
  const char *reuse, *object_reuse, *placement;
  uint64_t memory_limit;
  double level_cost[WSISA_SEG_LEVELS];
  int have_costs;
} run_opts;

static const wsisa_cli_flag flags[] = {
    {.shared = WSISA_FLAG_STUDY,
     .note = "without it, a MOAT study of the 15 parameters on the\n"
             "bundled sample slide"},
    {.shared = WSISA_FLAG_OUTPUT, .arg = "DIR",
     .note = "the results folder, new or empty; it appears (renamed from\n"
             "DIR.tmp-XXXXXX) only once the study is accepted, and\n"
             "holds what --resume needs from then on"},
    {"resume", 'R', .arg = "DIR",
     .help = "go on with an interrupted run; finished units are not redone"},
    {"check", 'C', .arg = "DIR",
     .help = "verify a results folder: every journal line whole, its runs\n"
             "and tiles in the study, no repeat that disagrees, every\n"
             "(run, tile) there, samples.csv, metrics.csv and outputs.csv\n"
             "as the study and the journal give them; exit 0 only when\n"
             "the folder is whole"},
    {.shared = WSISA_FLAG_SAMPLES, .note = "instead of the sampler"},
    {"reuse", 'u', .arg = "S",
     .help = "%s (overrides the study)",
     .words = wsisa_reuse_strategy_names, .nwords = WSISA_REUSE_NSTRATEGIES},
    {"max-buckets", 'b', .arg = "N", .help = "TRTMA MaxBuckets (default 3 x workers)"},
    {"max-bucket-size", 'z', .arg = "N", .help = "RTMA, naive, SCA bucket size"},
    {.shared = WSISA_FLAG_ACTIVE_PATHS},
    {.shared = WSISA_FLAG_MEMORY_LIMIT,
     .note = "a limit below one path is refused with the smallest that works"},
    {.shared = WSISA_FLAG_LEVEL_COSTS},
    {.shared = WSISA_FLAG_FORCE,
     .note = "a design of more than %.0f runs (it must still fit in the\n"
             "memory available)",
     .n = {WSISA_STUDY_MAX_RUNS}},
    {"object-reuse", 'O', .arg = "on|off",
     .help = "levels 6-7 nucleus cluster by cluster, those seen before on\n"
             "the tile taken from a store (default on; the same results)"},
    {"placement", 'P', .arg = "unit|task",
     .help = "with CPU and OpenCL workers: unit gives each unit (tile x\n"
             "bucket) to one kind of worker, the one where it would end\n"
             "first, and runs all its tasks there, so its images stay\n"
             "where they were made; task lets StarPU's scheduler place\n"
             "each task (default unit, the study's execution.placement;\n"
             "the same results)"},
    {"unit-timeout", 't', .arg = "S",
     .help = "under mpirun: seconds a worker may hold a unit before its\n"
             "units go to other ranks (default 600; WSISA_UNIT_TIMEOUT); a\n"
             "worker whose heartbeat stops loses them after 10 s"},
    {.shared = WSISA_FLAG_HELP},
    {0}};
static const char *const forms[] = {"[--study] -o [options]", "--resume [options]", "--check",
                                    NULL};
const wsisa_cli_command wsisa_cli_run = {"run", wsisa_cmd_run, forms,
                                         "the whole study: execute, compare, analyze", flags};

static void usage(void) {
  wsisa_cli_usage(stdout, &wsisa_cli_run);
  printf("results: study.json samples.csv metrics.csv outputs.csv indices.csv indices.json\n"
         "         *.svg run.json journal.csv (feature_values.csv) lock; with annotations\n"
         "         (inputs.reference) reference.json and best.json, the best run, which\n"
         "         wsisa segment INPUT --params @DIR/best.json reproduces\n"
         "Every task's time goes into StarPU's performance models (STARPU_HOME; not with\n"
         "STARPU_CALIBRATE=0); with calibrated models the run starts with an estimate\n"
         "(WSISA_LOG=info shows it) and run.json holds it against the actual figures.\n"
         "One process writes a results folder at a time: another run or --resume on it is\n"
         "refused, naming the writer's pid (DIR/lock). SIGINT or SIGTERM (Ctrl-C, kill)\n"
         "stop it between units: the units running end and are journaled, then it exits\n"
         "with 130 or 143 and says how to go on (--resume). A second signal ends it at\n"
         "once; the journal stays whole up to its last line, which --resume cuts off if\n"
         "torn.\n");
}

int wsisa_cmd_run(int argc, char **argv, wsisa_err *e) {
  run_opts o = {0};
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_run)) != -1) {
    long *target = NULL;
    const char *flag = NULL;
    switch (opt) {
      case WSISA_FLAG_STUDY: o.study_path = optarg; break;
      case WSISA_FLAG_OUTPUT: o.out = optarg; break;
      case 'R': o.resume = optarg; break;
      case WSISA_FLAG_SAMPLES: o.samples = optarg; break;
      case 'C': o.check = optarg; break;
      case WSISA_FLAG_FORCE: o.force = 1; break;
      case 'u': o.reuse = optarg; break;
      case WSISA_FLAG_MEMORY_LIMIT:
        if ((rc = wsisa_cli_bytes("--memory-limit", optarg, &o.memory_limit, e))) return rc;
        break;
      case 'O': o.object_reuse = optarg; break;
      case 'P': o.placement = optarg; break;
      case 'b': target = &o.max_buckets, flag = "--max-buckets"; break;
      case 'z': target = &o.max_bucket_size, flag = "--max-bucket-size"; break;
      case WSISA_FLAG_ACTIVE_PATHS: target = &o.active_paths, flag = "--active-paths"; break;
      case 't': target = &o.unit_timeout, flag = "--unit-timeout"; break;
      case WSISA_FLAG_LEVEL_COSTS:
        if ((rc = wsisa_cli_level_costs(optarg, o.level_cost, e))) return rc;
        o.have_costs = 1;
        break;
      case WSISA_FLAG_HELP: usage(); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
    if (target) {
      if ((rc = wsisa_cli_long(flag, optarg, target, e))) return rc;
      if (*target < 1 || *target > 1000000)
        return wsisa_error(e, WSISA_EUSAGE, "%s %ld: must be in 1..1000000", flag, *target);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (o.check && (o.study_path || o.out || o.samples || o.resume || o.reuse || o.memory_limit ||
                  o.max_buckets || o.max_bucket_size || o.active_paths || o.force ||
                  o.object_reuse || o.placement))
    return wsisa_error(e, WSISA_EUSAGE, "--check DIR takes no other option");
  if (o.check) {
    wsisa_runner_request c = {.check = o.check, .strategy = -1, .object_reuse = -1,
                              .placement = -1};
    return wsisa_runner_run(&c, e);
  }
  if (o.resume && (o.study_path || o.out || o.samples))
    return wsisa_error(e, WSISA_EUSAGE, "--resume DIR takes neither --study, -o nor --samples");
  if (!o.resume && !o.out) return wsisa_error(e, WSISA_EUSAGE, "missing -o DIR (the results folder)");

  wsisa_runner_request r = {.study = o.study_path, .out = o.out, .resume = o.resume,
                             .samples = o.samples, .strategy = -1,
                             .max_buckets = o.max_buckets, .max_bucket_size = o.max_bucket_size,
                             .active_paths = o.active_paths,
                             .unit_timeout = (double)o.unit_timeout, .force = o.force,
                             .level_cost = o.have_costs ? o.level_cost : NULL,
                             .object_reuse = -1, .placement = -1};
  if (o.placement) {
    wsisa_placement placement;
    if (wsisa_placement_parse(o.placement, &placement))
      return wsisa_error(e, WSISA_EUSAGE, "--placement %s: expected unit or task", o.placement);
    r.placement = (int)placement;
  }
  if (o.object_reuse) {
    if (strcmp(o.object_reuse, "on") == 0) r.object_reuse = 1;
    else if (strcmp(o.object_reuse, "off") == 0) r.object_reuse = 0;
    else
      return wsisa_error(e, WSISA_EUSAGE, "--object-reuse %s: expected on or off",
                         o.object_reuse);
  }
  if (o.reuse) {
    wsisa_reuse_strategy strategy;
    if (wsisa_reuse_strategy_parse(o.reuse, &strategy)) {
      char names[128];
      wsisa_cli_join(wsisa_reuse_strategy_names, WSISA_REUSE_NSTRATEGIES, ", ", names,
                     sizeof names);
      return wsisa_error(e, WSISA_EUSAGE, "--reuse %s: unknown strategy (%s)", o.reuse, names);
    }
    r.strategy = (int)strategy;
  }
  r.memory_limit = o.memory_limit;
  return wsisa_runner_run(&r, e);
}
