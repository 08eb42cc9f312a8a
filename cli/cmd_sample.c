/* `wsisa sample --study S.json -o samples.csv`: a study's design as CSV, one
 * row per run: run_id, then every parameter of the study. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "io/csv.h"
#include "engine/study/study.h"
#include "sa/sa.h"

static int write_design(wsisa_stage *stage, const char *path, const wsisa_sa_space *space,
                        const wsisa_sa_design *d, wsisa_err *e) {
  wsisa_csv_writer *w;
  int rc = wsisa_csv_create_staged(stage, path, &w, e);
  if (rc) return rc;
  wsisa_csv_text(w, "run_id");
  for (size_t c = 0; c < space->nparams; c++) wsisa_csv_text(w, space->params[c].name);
  wsisa_csv_end_row(w);
  for (size_t r = 0; r < d->nrows; r++) {
    wsisa_csv_uint(w, r);
    for (size_t c = 0; c < d->nparams; c++) wsisa_csv_num(w, d->values[r * d->nparams + c]);
    wsisa_csv_end_row(w);
  }
  return wsisa_csv_close(w, e);
}

static void describe(const char *out, const wsisa_study *study, const wsisa_sa_opts *o,
                     const wsisa_sa_space *space, const wsisa_sa_design *d, int phase2) {
  size_t k = d->ndims;
  printf("%s: %zu runs, %zu parameters (%zu varying, %zu fixed), sampler %s, seed %llu\n", out,
         d->nrows, space->nparams, k, space->nparams - k, wsisa_sa_sampler_name(o->sampler),
         (unsigned long long)o->seed);
  if (k == 0)
    printf("every parameter is fixed: the one run of their values, nothing to analyse\n");
  else if (d->method == WSISA_SA_MOAT)
    printf("moat: %zu trajectories of %zu runs on a %u-level grid%s\n", d->groups, d->group_size,
           o->levels, o->pool ? " (Campolongo selection)" : "");
  else if (d->method == WSISA_SA_VBD)
    printf("vbd: %zu base samples x %zu runs (A, %sB)\n", d->groups, d->group_size,
           d->second_order ? "AB_i, BA_i, " : "AB_i, ");
  else
    printf("correlation: %zu runs\n", d->nrows);
  if (k && d->nfactors < k)
    printf("groups: the %zu varying parameters move as %zu factors (a group's parameters "
           "together)\n",
           k, d->nfactors);
  if (d->nduplicates)
    printf("note: %zu runs repeat the parameter values of an earlier run; they stay in the "
           "design, whose structure the analysis needs\n",
           d->nduplicates);
  if (study->sa.method == WSISA_SA_TWO_PHASE && !phase2)
    printf("two_phase: this is phase 1 (MOAT screening); `wsisa analyze` names the parameters "
           "for phase 2 (wsisa sample --select ...)\n");
}

static const wsisa_cli_flag flags[] = {
    {.shared = WSISA_FLAG_STUDY, .note = "(its parameters, method, sampler and seed)"},
    {.shared = WSISA_FLAG_OUTPUT, .arg = "samples.csv",
     .note = "the design as CSV: run_id, then one column per parameter"},
    {.shared = WSISA_FLAG_SELECT},
    {.shared = WSISA_FLAG_FORCE,
     .note = "a design of more than %.0f runs (it must still fit in the\n"
             "memory available)",
     .n = {WSISA_STUDY_MAX_SAMPLE_ROWS}},
    {.shared = WSISA_FLAG_HELP},
    {0}};
static const char *const forms[] = {"--study -o [--select] [--force]", NULL};
const wsisa_cli_command wsisa_cli_sample = {"sample", wsisa_cmd_sample, forms,
                                            "the SA design, one row per run", flags};

int wsisa_cmd_sample(int argc, char **argv, wsisa_err *e) {
  const char *study_path = NULL, *out = NULL, *select = NULL;
  int opt, rc, force = 0;
  opterr = 0;
  optind = 1;
  while ((opt = wsisa_cli_next(argc, argv, &wsisa_cli_sample)) != -1) {
    switch (opt) {
      case WSISA_FLAG_STUDY: study_path = optarg; break;
      case WSISA_FLAG_OUTPUT: out = optarg; break;
      case WSISA_FLAG_SELECT: select = optarg; break;
      case WSISA_FLAG_FORCE: force = 1; break;
      case WSISA_FLAG_HELP: wsisa_cli_usage(stdout, &wsisa_cli_sample); return 0;
      default: return wsisa_cli_bad_option(opt, argv, e);
    }
  }
  if (optind < argc) return wsisa_error(e, WSISA_EUSAGE, "%s: unexpected argument", argv[optind]);
  if (!study_path) return wsisa_error(e, WSISA_EUSAGE, "--study: required");
  if (!out) return wsisa_error(e, WSISA_EUSAGE, "-o: required (the samples CSV to write)");
  wsisa_study *study = NULL;
  wsisa_sa_space *space = NULL;
  wsisa_sa_design *design = NULL;
  wsisa_sa_opts opts;
  wsisa_stage stage = WSISA_STAGE_INIT;
  size_t rows;
  rc = wsisa_study_load(study_path, &study, e);
  if (!rc) rc = wsisa_output_check("-o", out, &study_path, 1, e);
  /* a design too large is refused before it is made */
  if (!rc)
    rc = wsisa_study_check_size(study, select, force ? 0 : WSISA_STUDY_MAX_SAMPLE_ROWS, 0, 0, NULL,
                                &rows, e);
  if (!rc) rc = wsisa_study_design(study, select, &space, &opts, &design, e);
  if (!rc) rc = write_design(&stage, out, space, design, e);
  if (!rc) rc = wsisa_stage_commit(&stage, e);
  if (rc)
    wsisa_stage_abort(&stage);
  else
    describe(out, study, &opts, space, design, select != NULL);
  wsisa_sa_design_free(design);
  wsisa_sa_space_free(space);
  wsisa_study_free(study);
  return rc;
}
