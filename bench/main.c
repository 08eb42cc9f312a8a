/* wsisa-bench: a table of experiments; each writes CSV, an SVG plot and a
 * short text summary. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

typedef struct experiment {
  const char *name;
  int (*run)(int argc, char **argv, wsisa_err *e);
  const char *what;
} experiment;

static const experiment experiments[] = {
    {"ops", bench_ops,
     "per-operation times on a 4096x4096 tile: CPU kernel (1 core), OpenCL worker (with its "
     "kernel launches and reads back to the host), OpenCV and scikit-image/SciPy/NumPy peers; "
     "normalize+segment in process and as the wsisa segment process (see ops --help)"},
    {"kernels", bench_kernels,
     "the CPU kernels of a study's levels on tile_1024.png as codelets, on one CPU worker "
     "alone and on N at once, a copy each (--copies N, default 2): ms and the slowdown "
     "together, their share of the memory bandwidth (see kernels --help)"},
    {"reuse", bench_reuse,
     "MOAT designs of 2, 4, 8 trajectories x reuse none, stage, naive, rtma, trtma (sca on "
     "the smallest), object reuse off and on: makespan, tasks, reuse %, objects reused, "
     "speedup over none"},
    {"memory", bench_memory,
     "RTMA bucket size K against bucket 28 + RMSR --active-paths K, K = 1, 2, 4: peak RSS, "
     "makespan; the C library's allocator as it comes against freed memory kept (the "
     "default): makespan, peak RSS, page faults"},
    {"sched", bench_sched,
     "eager, lws, dmda, dmdas, modular-heft, pats on N CPUs, N + 1 CPUs and N CPUs + 1 "
     "OpenCL worker (a GPU, else PoCL; --cpus N, default 1) with unit and task placement: "
     "makespan, hybrid speedups, units per kind, MB across the bus"},
    {"scale", bench_scale,
     "1, 2, 4, ... CPU workers up to the cores (--workers LIST); under mpirun 2, 4, ... "
     "ranks x those workers: makespan, efficiency over 1 worker, oversubscribed rows marked "
     "(see scale --help)"},
    {"algo", bench_algo, "reuse analysis time (wsisa plan) against n and MaxBuckets"},
    {"predict", bench_predict,
     "calibrate on one study, then predicted (run.json estimate) against measured makespan "
     "and peak RSS for studies that differ: runs, method/sampler, tile size, strategy, "
     "1..N CPU workers up to the cores, ranks, CPU + OpenCL workers where an OpenCL device "
     "is; object reuse on and off; the repeats in rounds, each calibrating afresh and then "
     "running every configuration once, an error being the median over the rounds of each "
     "round's own; beside each run a small reference study times the machine's pace, and each "
     "error is given as measured and with the run's slow or fast spell taken out (paced)"},
    {"balance", bench_balance,
     "RTMA (bucket size 10) against TRTMA (3 x workers buckets) as workers grow: measured "
     "at 1-2 workers and 1-4 ranks, predicted to 256; TRTMA balanced by task count against "
     "by measured cost"},
    {"ranks", bench_ranks,
     "tile affinity across MPI ranks: a MOAT of G1 and G2 on the sample's 6 tissue tiles by "
     "one process of 2 CPU workers, 2 and 4 ranks of one with WSISA_TILE_AFFINITY off and "
     "on, in rounds: makespan, tile stages, units moved, objects reused (see ranks --help)"},
    {"analyze", bench_analyze,
     "wsisa analyze on designs made elsewhere (a SALib problem, 8 parameters): correlation and "
     "MOAT at 10^4, 10^5 and 10^6 rows (--quick: up to 10^5): wall and CPU seconds"},
    {"wholeslide", bench_wholeslide,
     "wsisa segment SLIDE --all on the sample and on mosaics of it (4x3, 8x6 copies: 70 and "
     "278 tissue tiles; --quick: 2x1) at 1, 2, ... CPU workers (--workers LIST): tiles per "
     "second, seconds per tile against the smallest slide's, peak memory, against one "
     "`segment --tile` process per tile"},
    {"tilesample", bench_tilesample,
     "how many tiles a study needs: a 32-run MOAT on inputs.tiles samples of 8, 16 and 32 of "
     "the 4x3 mosaic's 70 tissue tiles and on all 70 (--quick: 1, 2, 4 and the sample's 6): "
     "mu* per parameter, its ranks' agreement and largest change against 32 and against all"},
    {"all", bench_all, "every experiment in turn (ops with --no-opencl)"},
};
#define NEXPERIMENTS (sizeof experiments / sizeof *experiments)

static void usage(FILE *f) {
  fprintf(f, "usage: wsisa-bench EXPERIMENT [--quick] [--repeats N] [--no-opencl] [-o DIR]\n"
             "       wsisa-bench ops [--size N] ...\n\nexperiments:\n");
  for (size_t i = 0; i < NEXPERIMENTS; i++)
    fprintf(f, "  %-8s %s\n", experiments[i].name, experiments[i].what);
  fprintf(f,
          "\nEvery figure is the median of --repeats runs (min and max shown); ratios are\n"
          "measured in the same run. CSV columns of `ops`: op, ours_cpu_ms, ours_cpu_min,\n"
          "ours_cpu_max, ours_opencl_ms, peer, peer_ms, peer_min, peer_max, peer_over_ours,\n"
          "opencl_launches, opencl_reads (OpenCL kernel launches and blocking reads back\n"
          "to the host in one run, -1 when not counted), opencl_bytes_to_device,\n"
          "opencl_bytes_to_host (what that run sent to the device and brought back,\n"
          "StarPU's transfers included; -1 when not counted); its last rows:\n"
          "normalize_and_segment (in process, CPU worker; ours_opencl_ms and the counts:\n"
          "OpenCL worker) and segment_process (the wsisa segment command, one CPU worker,\n"
          "as a subprocess).\n"
          "--no-opencl skips the OpenCL worker (on PoCL some iterative kernels take\n"
          "minutes at 4096x4096). `ops --quick` takes about 3 minutes on 2 cores.\n"
          "\n"
          "The other experiments run the wsisa executable beside this one (here %s)\n"
          "on MOAT (Halton) studies they write to DIR/studies/ (the sample slide's tissue\n"
          "tiles at 1024; with --quick tile_1024.png, both installed in\n"
          "PREFIX/share/wsisa or in the source tree's tests/data), read each run's\n"
          "run.json and time the subprocess.\n"
          "Default: 3 repeats; --quick: 1 repeat and the smallest sizes. -o DIR (default\n"
          "bench-results/EXPERIMENT) receives EXPERIMENT.csv and EXPERIMENT.svg.\n"
          "makespan = run.json seconds.execute; wall = around the subprocess; every\n"
          "X_s / X_ms column is a median followed by X_min and X_max.\n"
          "  reuse.csv:  trajectories, runs, strategy, object_reuse (off | on),\n"
          "              makespan_s, makespan_min, makespan_max, wall_s, wall_min,\n"
          "              wall_max, tasks_executed, tasks_no_reuse, reuse_pct (100 x (1 -\n"
          "              executed/no_reuse)), objects_seen, objects_reused (run.json\n"
          "              objects: units of levels 6-7), buckets, speedup_over_none (over\n"
          "              none with object reuse off)\n"
          "  memory.csv: config (rtma_bucket_k | rtma28_rmsr), k, max_bucket_size,\n"
          "              active_paths (empty: default), peak_rss_mib, rss_min, rss_max,\n"
          "              makespan_s, makespan_min, makespan_max, buckets,\n"
          "              peak_active_paths, tasks_executed\n"
          "  allocator.csv (memory): allocator (libc: WSISA_MALLOC=libc | keep: the\n"
          "              default), makespan_s, makespan_min, makespan_max, peak_rss_mib,\n"
          "              rss_min, rss_max, minor_faults, faults_min, faults_max (run.json\n"
          "              page_faults.minor), makespan_over_keep\n"
          "  sched.csv:  policy, setting (cpu: N CPU workers | cpu_plus_one: N + 1 |\n"
          "              hybrid: N CPU + 1 OpenCL worker, a GPU when one is found, else\n"
          "              PoCL; no hybrid rows without an OpenCL device or with\n"
          "              --no-opencl, the table says why), placement (hybrid: unit,\n"
          "              every policy; task, every policy, dmda and dmdas only with\n"
          "              --quick), cpu_workers, opencl_workers,\n"
          "              makespan_s, makespan_min, makespan_max, wall_s, wall_min,\n"
          "              wall_max, hybrid_over_cpu, hybrid_over_cpu_plus_one (their\n"
          "              makespan / the hybrid makespan, same policy; hybrid rows only),\n"
          "              units_cpu, units_opencl (unit placement), to_device_mb,\n"
          "              from_device_mb (hybrid: StarPU's bus profiling, 10^6 bytes)\n"
          "              (2 trajectories on tile_1024.png, with or without --quick;\n"
          "              --cpus N, default 1)\n",
          bench_wsisa_exe());
  fputs("  scale.csv:  ranks (0: one process, no mpirun), workers_per_rank,\n"
        "              cpu_workers (over all ranks), started_per_rank, makespan_s,\n"
        "              makespan_min, makespan_max, wall_s, wall_min, wall_max, speedup,\n"
        "              efficiency (T1 / (p x Tp), T1: 1 worker), oversubscribed (more\n"
        "              workers than cores), cpu_s, cpu_min, cpu_max (CPU seconds of\n"
        "              the whole command); the rank series needs Open MPI's mpirun\n"
        "  algo.csv:   trajectories, runs, max_buckets, strategy, analysis_ms,\n"
        "              analysis_min, analysis_max, buckets, reuse_pct\n"
        "  predict.csv: config, varies, object_reuse, predicted_s (median over the\n"
        "              rounds, each with its own calibration), measured_s,\n"
        "              measured_min, measured_max, makespan_error_pct (each round's\n"
        "              prediction against its run, median over the rounds),\n"
        "              predicted_rss_mib, measured_rss_mib, rss_error_pct, uncalibrated_pct,\n"
        "              interpolated_pct, calibrated_sizes (under 1% interpolated),\n"
        "              pace (the reference study's seconds on either side of the\n"
        "              run over their median over every run; median over the rounds),\n"
        "              paced_measured_s (the median of measured / pace), paced_error_pct\n"
        "              (with a STARPU_HOME of its own, calibrated first; --quick on\n"
        "              tests/data images, else on the sample slide)\n"
        "  balance.csv: config, ranks, workers, total_workers, source (measured |\n"
        "              predicted), rtma_s, trtma_s, rtma_predicted_s, trtma_predicted_s,\n"
        "              rtma_buckets, trtma_buckets, trtma_speedup (MOAT on one tile:\n"
        "              2 trajectories with --quick, else 8)\n"
        "  ranks.csv:  config, ranks, workers_per_rank, affinity (0 | 1), makespan_s,\n"
        "              makespan_min, makespan_max, over_one_process, cpu_s, cpu_min,\n"
        "              cpu_max, tile_stages,\n"
        "              units_moved, tile_stages_moved, objects_seen, objects_reused,\n"
        "              moved_seen, moved_reused, same_metrics (see ranks --help)\n"

        "`all` writes DIR/EXPERIMENT/ for each; in `all --quick` ops runs one repeat at\n"
        "2048x2048.\n",
        f);
  fprintf(f, "  analyze.csv: method (correlation | morris), rows, wall_s, wall_min, wall_max,\n"
             "              cpu_s, cpu_min, cpu_max (the analyze process's user + system)\n");
  fputs("  wholeslide.csv: slide (sample, mosaic_KXxKY: the sample mirrored into KX x KY\n"
        "              copies, a pyramidal JPEG TIFF at its 0.499 um/pixel, made once in\n"
        "              DIR/slides), width, height, tiles (tissue tiles at 1024), workers,\n"
        "              nuclei, wall_s, wall_min, wall_max (segment --all --geojson --features\n"
        "              --summary), tiles_per_s, s_per_tile, peak_rss_mib, rss_min, rss_max\n"
        "              (the process's), s_per_tile_over_smallest (the first slide's, same\n"
        "              workers), cpu_s, cpu_min, cpu_max (the process's user + system),\n"
        "              cpu_s_per_tile, cpu_per_tile_over_smallest, loop_tiles,\n"
        "              loop_s_per_tile (one segment --tile process per\n"
        "              tissue tile, at most 12 (--quick: 3), on the most workers),\n"
        "              loop_over_all (its seconds per tile over --all's)\n"
        "  tilesample.csv: parameter, mu_star_quarter, mu_star_half, mu_star_chosen,\n"
        "              mu_star_all (dice), then the rows spearman_vs_chosen,\n"
        "              max_change_vs_chosen, spearman_vs_all, max_change_vs_all (over the\n"
        "              reference's largest mu*) and wall_s\n",
        f);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < NEXPERIMENTS; i++) {
    if (strcmp(argv[1], experiments[i].name) != 0) continue;
    wsisa_err e = WSISA_ERR_INIT;
    int rc = experiments[i].run(argc - 1, argv + 1, &e);
    if (rc) fprintf(stderr, "wsisa-bench %s: %s\n", argv[1], e.msg[0] ? e.msg : wsisa_strerror(rc));
    return wsisa_exit_code(rc);
  }
  fprintf(stderr, "wsisa-bench: '%s' is not an experiment (see wsisa-bench --help)\n", argv[1]);
  return 2;
}
