/* The estimate of a plan (docs/architecture.md, "The estimate"), in steps:
 * the worker set; each piece's seconds on it; the simulation, the CPU task
 * times scaled by the busy factor (again at the workers it kept busy when
 * that moves the factor); the work by evidence; the memory and the figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/estimate_internal.h"

/* A second simulation only when the workers the first kept busy move the
 * busy factor by more than this share: under it, the makespan moves by less
 * than the factor's own spread between calibrations, and a simulation is
 * most of `plan --estimate`'s time. */
#define BUSY_AGAIN 0.01

/* Seconds of task i of step st on shape s for a pool of workers[a] per arch:
 * each kind of task is spread over the pool at its pooled rate (the
 * throughput of W workers of mixed speed), so W workers of the pool run it
 * in W / sum(w_a / t_a). */
static double pooled(const wsisa_estimate *est, size_t s, size_t st, size_t i, const int *workers,
                     int total) {
  double rate = 0;
  uint32_t where = est->prof[s].step[st].t[i].where;
  for (size_t a = 0; a < est->narch; a++) {
    double c = est->cost[wsisa__est_at(est, s, st, i, a)];
    uint32_t kind = est->arch[a].is_cpu ? STARPU_CPU : STARPU_OPENCL;
    if (workers[a] > 0 && c > 0 && (where & kind)) rate += workers[a] / c;
  }
  if (rate > 0) return total / rate;
  /* none of the pool runs it: a CPU worker does, beside it */
  size_t a = wsisa__est_cpu_arch(est);
  return est->arch[a].is_cpu ? est->cost[wsisa__est_at(est, s, st, i, a)] : 0;
}

/* Work and critical path of step st on shape s, in submission order: a task
 * waits for the last writer of each datum it reads. */
typedef struct writer {
  const void *handle;
  double finish;
} writer;

static void step_cost(const wsisa_estimate *est, size_t s, size_t st, const int *workers,
                      int total, double *work, double *path) {
  const wsisa__recording *r = &est->prof[s].step[st];
  writer *wr = malloc((r->n ? r->n * WSISA__REC_MAXBUF : 1) * sizeof *wr);
  size_t nw = 0;
  *work = *path = 0;
  for (size_t i = 0; i < r->n; i++) {
    double c = pooled(est, s, st, i, workers, total), start = 0;
    *work += c;
    if (!wr) continue;
    const wsisa__rec_task *t = &r->t[i];
    for (int b = 0; b < t->nbuf; b++)
      if (t->mode[b] & 1)
        for (size_t j = nw; j-- > 0;)
          if (wr[j].handle == t->handle[b]) {
            if (wr[j].finish > start) start = wr[j].finish;
            break;
          }
    double finish = start + c;
    for (int b = 0; b < t->nbuf; b++)
      if (t->mode[b] & 2) wr[nw++] = (writer){t->handle[b], finish};
    if (finish > *path) *path = finish;
  }
  if (!wr) *path = *work;
  free(wr);
}

/* What the estimate of a plan works with. The pieces' seconds lie in one
 * block: first those the CPU workers' busy factor scales (a tile's opening
 * and reference on the whole set, then one CPU worker's stage, measure,
 * background count and levels), then one OpenCL worker's, then the reads. */
typedef struct plan_state {
  int *workers;             /* per kind of worker (arch) */
  int total, nocl, ncpu;    /* workers per rank: all, OpenCL, CPU */
  size_t ocl_arch;          /* the OpenCL workers' model: the first OpenCL kind */
  int sharing;              /* ranks sharing a machine */
  double *block, *read;
  size_t nscaled;           /* the block's first nscaled values: the CPU workers' */
  wsisa__sim_costs cpu, ocl;
  wsisa__sim_job job;
  wsisa__objects_pricer pricer;
  double *by_op;            /* the work per (codelet, evidence) */
} plan_state;

/* Step 1: the workers per kind on a rank. */
static int worker_set(const wsisa_estimate *est, const wsisa_estimate_plan *plan, plan_state *ps,
                      wsisa_err *e) {
  ps->workers = calloc(est->narch ? est->narch : 1, sizeof *ps->workers);
  if (!ps->workers) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  ps->ocl_arch = est->narch;
  for (size_t a = 0; a < est->narch; a++)
    if (!est->arch[a].is_cpu && ps->ocl_arch == est->narch) ps->ocl_arch = a;
  for (size_t a = 0; a < est->narch; a++) {
    if (est->arch[a].is_cpu)
      ps->workers[a] = plan->cpu_workers >= 0 ? plan->cpu_workers : est->arch[a].workers;
    else if (plan->opencl_workers >= 0)
      ps->workers[a] = a == ps->ocl_arch ? plan->opencl_workers : 0;
    else
      ps->workers[a] = est->arch[a].workers;
    if (!est->arch[a].is_cpu) ps->nocl += ps->workers[a];
    ps->total += ps->workers[a];
  }
  size_t cpu = wsisa__est_cpu_arch(est);
  ps->ncpu = est->arch[cpu].is_cpu ? ps->workers[cpu] : 0;
  if (plan->cpu_workers > 0 && !est->arch[cpu].is_cpu)
    return wsisa_error(e, WSISA_EUSAGE,
                       "estimate: no CPU worker started here to measure CPU workers by");
  if (plan->opencl_workers > 0 && ps->ocl_arch == est->narch)
    return wsisa_error(e, WSISA_EUSAGE,
                       "estimate: no OpenCL worker started here to measure OpenCL workers by "
                       "(with PoCL, STARPU_OPENCL_ON_CPUS=1; calibrate with the same)");
  if (ps->total < 1 || plan->ranks < 1)
    return wsisa_error(e, WSISA_EUSAGE, "estimate: want at least one rank and one worker");
  return 0;
}

/* Step 2: each piece's seconds, into the simulation's costs. */
static int piece_costs(const wsisa_estimate *est, plan_state *ps, wsisa_err *e) {
  const size_t ns = est->nshapes, nv = est->nvariants, nlev = ns * WSISA_SEG_LEVELS * nv;
  ps->nscaled = 7 * ns + nlev;
  ps->block = calloc(ps->nscaled + 3 * ns + nlev + ns, sizeof *ps->block);
  int *one_worker = calloc(est->narch ? est->narch : 1, sizeof *one_worker);
  if (!ps->block || !one_worker) {
    free(one_worker);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  }
  double *b = ps->block, *ocl = b + ps->nscaled, path;
  double *open = b, *open_path = b + ns, *ref = b + 2 * ns, *ref_path = b + 3 * ns;
  ps->read = ocl + 3 * ns + nlev;
  /* opening a tile: its stage, then its reference, each on the whole set;
   * before them, its read on the submitting thread */
  for (size_t s = 0; s < ns; s++) {
    step_cost(est, s, WSISA__ST_STAGE, ps->workers, ps->total, &open[s], &open_path[s]);
    step_cost(est, s, WSISA__ST_REFERENCE, ps->workers, ps->total, &ref[s], &ref_path[s]);
    ps->read[s] = wsisa__reads_seconds(&est->models.reads, est->shape[s][0], est->shape[s][1]);
  }
  /* every other piece on one worker of each kind: CPU, OpenCL (its codelets
   * without an OpenCL kernel on a CPU worker) */
  for (int k = 0; k < (ps->nocl ? 2 : 1); k++) {
    double *stage = k ? ocl : b + 4 * ns, *measure = stage + ns, *background = stage + 2 * ns,
           *level = stage + 3 * ns;
    memset(one_worker, 0, est->narch * sizeof *one_worker);
    one_worker[k ? ps->ocl_arch : wsisa__est_cpu_arch(est)] = 1;
    for (size_t s = 0; s < ns; s++) {
      step_cost(est, s, WSISA__ST_STAGE, one_worker, 1, &stage[s], &path);
      step_cost(est, s, WSISA__ST_MEASURE, one_worker, 1, &measure[s], &path);
      step_cost(est, s, WSISA__ST_BACKGROUND, one_worker, 1, &background[s], &path);
      for (int l = 0; l < WSISA_SEG_LEVELS; l++)
        for (size_t v = 0; v < est->lv[l].n; v++)
          step_cost(est, s, est->level_base[l] + v, one_worker, 1,
                    &level[(s * WSISA_SEG_LEVELS + (size_t)l) * nv + v], &path);
    }
  }
  free(one_worker);
  ps->ocl = (wsisa__sim_costs){ns,      nv,          open,           open_path,
                               ocl,     ocl + ns,    ocl + 2 * ns,   ocl + 3 * ns,
                               est->run_variant, NULL, est->run_scale, NULL, NULL, NULL};
  ps->cpu = (wsisa__sim_costs){ns,         nv,          open,          open_path,
                               b + 4 * ns, b + 5 * ns,  b + 6 * ns,    b + 7 * ns,
                               est->run_variant, ps->nocl ? &ps->ocl : NULL, est->run_scale,
                               ref,        ref_path,    ps->read};
  return 0;
}

/* The CPU workers' pieces x `by`. */
static void scale_cpu(plan_state *ps, double by) {
  for (size_t i = 0; i < ps->nscaled; i++) ps->block[i] *= by;
}

/* Step 3: the simulation, the CPU task times x the busy factor with every CPU
 * worker of a machine busy, again at the workers it kept busy when they move
 * the factor by more than BUSY_AGAIN (docs/architecture.md, "Busy workers");
 * with object reuse, levels 6-7 priced by their tiles' stores. */
static int simulate(const wsisa_estimate *est, const wsisa_estimate_plan *plan, plan_state *ps,
                    wsisa_estimate_figures *out, wsisa_err *e) {
  const wsisa__busy_model *busy = &est->models.busy;
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ps->sharing = local && atoi(local) > 0 ? atoi(local) : plan->ranks > 0 ? plan->ranks : 1;
  if (ps->sharing > plan->ranks) ps->sharing = plan->ranks;
  out->busy_workers = ps->ncpu * ps->sharing;
  out->busy_factor = wsisa__busy_ratio(busy, out->busy_workers);
  scale_cpu(ps, out->busy_factor);
  ps->job = (wsisa__sim_job){est->ntiles,    est->tile_shape,        plan->buckets,
                             est->params,    plan->share_tile_stage, plan->active_paths,
                             plan->done,     plan->ranks,            ps->total,
                             NULL,           ps->nocl,               plan->placement};
  out->object_share = -1;
  if (plan->object_reuse && est->models.objects.loaded) {
    if (wsisa__objects_pricer_init(&ps->pricer, &est->models.objects, plan->buckets, est->params,
                                   est->run_scale ? est->run_time : NULL))
      return wsisa_error(e, WSISA_ENOMEM, "out of memory");
    ps->job.objects = &ps->pricer;
  }
  int rc = wsisa__sim_run(&ps->cpu, &ps->job, &out->sim, e);
  if (!rc && busy->loaded && ps->ncpu > 0 && out->sim.makespan > 0) {
    /* the CPU workers that simulation kept busy on a machine, on average; a
     * StarPU that keeps the last awake worker of each rank polling when idle
     * keeps at least one a rank busy */
    double now = out->sim.work_cpu / out->sim.makespan * ps->sharing / plan->ranks;
    const int floor_busy = wsisa_runtime_last_worker_sleeps() ? 1 : ps->sharing;
    now = fmin(fmax(now, (double)floor_busy), (double)(ps->ncpu * ps->sharing));
    double again = wsisa__busy_ratio(busy, now);
    if (fabs(again / out->busy_factor - 1) > BUSY_AGAIN) {
      scale_cpu(ps, again / out->busy_factor);
      out->busy_factor = again;
      out->busy_workers = now;
      wsisa_sim_result_free(&out->sim);
      memset(&out->sim, 0, sizeof out->sim);
      rc = wsisa__sim_run(&ps->cpu, &ps->job, &out->sim, e);
    }
  }
  if (!rc && ps->job.objects)
    out->object_share = out->sim.objects_reusable > 0
                            ? 1 - out->sim.objects_computed / out->sim.objects_reusable
                            : 0;
  return rc;
}

/* The work of each evidence class and codelet in `count` runs of a step. */
static void account(const wsisa_estimate *est, const plan_state *ps, size_t s, size_t st,
                    double count, double *by_class) {
  if (count <= 0) return;
  const wsisa__recording *r = &est->prof[s].step[st];
  for (size_t i = 0; i < r->n; i++) {
    double c = pooled(est, s, st, i, ps->workers, ps->total) * count;
    unsigned char worst = 0;
    for (size_t a = 0; a < est->narch; a++)
      if (ps->workers[a] > 0 && est->cls[wsisa__est_at(est, s, st, i, a)] > worst)
        worst = est->cls[wsisa__est_at(est, s, st, i, a)];
    by_class[worst] += c;
    ps->by_op[(size_t)r->t[i].op * WSISA_EST_NCLASSES + worst] += c;
  }
}

/* Step 4: the work by evidence, every piece the simulation ran task by
 * task, and the uncalibrated codelets, largest share first; the work at the
 * models' times into *work. */
static int evidence(const wsisa_estimate *est, plan_state *ps, wsisa_estimate_figures *out,
                    double *work, wsisa_err *e) {
  ps->by_op = calloc(wsisa_n_ops * WSISA_EST_NCLASSES, sizeof *ps->by_op);
  if (!ps->by_op) return wsisa_error(e, WSISA_ENOMEM, "out of memory");
  double by_class[WSISA_EST_NCLASSES] = {0};
  const wsisa_sim_result *sr = &out->sim;
  for (size_t s = 0; s < est->nshapes; s++) {
    account(est, ps, s, WSISA__ST_STAGE, (double)(sr->shape_opens[s] + sr->shape_stages[s]),
            by_class);
    account(est, ps, s, WSISA__ST_REFERENCE, (double)sr->shape_opens[s], by_class);
    account(est, ps, s, WSISA__ST_MEASURE, (double)sr->shape_leaves[s], by_class);
    account(est, ps, s, WSISA__ST_BACKGROUND, (double)sr->shape_backgrounds[s], by_class);
    for (int l = 0; l < WSISA_SEG_LEVELS; l++)
      for (size_t v = 0; v < est->lv[l].n; v++)
        account(est, ps, s, est->level_base[l] + v,
                sr->level_units[(s * WSISA_SEG_LEVELS + (size_t)l) * est->nvariants + v],
                by_class);
  }
  *work = 0;
  for (int k = 0; k < WSISA_EST_NCLASSES; k++) *work += by_class[k];
  for (int k = 0; k < WSISA_EST_NCLASSES; k++)
    out->class_share[k] = *work > 0 ? by_class[k] / *work : 0;
  for (size_t op = 0; op < wsisa_n_ops; op++)
    for (int k = WSISA_EST_FEW; k < WSISA_EST_NCLASSES; k++) {
      double share = *work > 0 ? ps->by_op[op * WSISA_EST_NCLASSES + (size_t)k] / *work : 0;
      if (!(share > 0)) continue;
      size_t at = out->nlisted;
      while (at > 0 && out->listed[at - 1].share < share) at--;
      if (at >= WSISA_EST_MAX_LISTED) continue;
      size_t n = out->nlisted < WSISA_EST_MAX_LISTED ? out->nlisted : WSISA_EST_MAX_LISTED - 1;
      memmove(&out->listed[at + 1], &out->listed[at], (n - at) * sizeof out->listed[0]);
      out->listed[at].op = wsisa_ops[op].name;
      out->listed[at].cls = (wsisa_est_class)k;
      out->listed[at].share = share;
      if (out->nlisted < WSISA_EST_MAX_LISTED) out->nlisted++;
    }
  return 0;
}

/* Step 5: memory, the first writes and the figures (docs/architecture.md,
 * "Memory, deadline" and "Fresh memory"). */
static void figures(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                    const plan_state *ps, double work, wsisa_estimate_figures *out) {
  const wsisa_sim_result *sr = &out->sim;
  out->ranks = plan->ranks;
  out->workers = ps->total;
  out->active_paths = plan->active_paths;
  out->baseline_rss = est->baseline_rss;
  size_t k_paths = plan->active_paths ? plan->active_paths : sr->peak_paths;
  if (sr->peak_paths && k_paths > sr->peak_paths) k_paths = sr->peak_paths;
  wsisa_exec_opts eo = {.share_tile_stage = plan->share_tile_stage,
                        .object_match = est->object_match,
                        .features = est->features};
  double peak = 0;
  for (int q = 0; q < plan->ranks; q++)
    for (size_t s = 0; s < est->nshapes; s++)
      if (sr->rank_shapes[(size_t)q * est->nshapes + s])
        peak = fmax(peak, wsisa_exec_bytes(k_paths, sr->peak_outputs, (size_t)ps->total,
                                           (double)est->shape[s][0] * est->shape[s][1], &eo));
  out->peak_rss = est->baseline_rss + (uint64_t)peak;
  out->fresh_seconds =
      wsisa__fresh_seconds(&est->models.fresh, out->peak_rss, est->baseline_rss) / ps->total;
  out->sim.makespan += out->fresh_seconds;
  /* the work as slow as the simulation ran it; the efficiency over one
   * worker alone (T1 / (p x Tp)): a task slower with the others busy, and
   * the first writes, count against it */
  out->sim.work = work * out->busy_factor;
  double capacity = out->sim.makespan * plan->ranks * ps->total;
  double alone = wsisa__busy_ratio(&est->models.busy, 1);
  out->busy_slowdown = alone > 0 ? out->busy_factor / alone : 1;
  out->efficiency = capacity > 0 ? work * alone / capacity : 1.0;
  out->sim.efficiency = capacity > 0 ? out->sim.work / capacity : 1.0;
  out->cpu_hours = capacity / 3600.0;
}

int wsisa_estimate_compute(const wsisa_estimate *est, const wsisa_estimate_plan *plan,
                           wsisa_estimate_figures *out, wsisa_err *e) {
  memset(out, 0, sizeof *out);
  plan_state ps;
  memset(&ps, 0, sizeof ps);
  double work = 0;
  wsisa__probes_describe(&est->models, out);
  if (!plan->object_reuse) out->object_source[0] = 0;
  int rc = worker_set(est, plan, &ps, e);
  if (!rc) rc = piece_costs(est, &ps, e);
  if (!rc) rc = simulate(est, plan, &ps, out, e);
  if (!rc) rc = evidence(est, &ps, out, &work, e);
  if (!rc) figures(est, plan, &ps, work, out);
  wsisa__objects_pricer_free(&ps.pricer);
  free(ps.workers);
  free(ps.block);
  free(ps.by_op);
  return rc;
}

void wsisa_estimate_figures_free(wsisa_estimate_figures *f) { wsisa_sim_result_free(&f->sim); }

double wsisa_estimate_uncalibrated_share(const wsisa_estimate_figures *f) {
  return f->class_share[WSISA_EST_FEW] + f->class_share[WSISA_EST_GUESSED];
}
