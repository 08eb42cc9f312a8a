/* reuse: decide what runs once. Stage instances are tuples of per-level task
 * keys; identical instances collapse, and the rest are merged into buckets whose
 * merged task trees share every common prefix of tasks (docs/architecture.md). */
#ifndef WSISA_REUSE_H
#define WSISA_REUSE_H

#include <stddef.h>
#include <stdint.h>

/* Errors are the project's codes (core/core.h): only the enum is used, so the
 * library still links against libc alone. */
#include "core/core.h"

/* "No node" in the index fields below. */
#define WSISA_REUSE_NO_NODE ((size_t)-1)

/* ---- task keys -------------------------------------------------------------
 * A task's identity is its level's own parameter values; the prefix rule (task
 * i is shared only if tasks 1..i match) is the trie's business, not the key's.
 * Keys compare exactly: equal keys mean the same task. */

/* Hash `count` doubles by their exact values (-0.0 equals 0.0, every NaN is one
 * value); count 0 gives the key of a level without parameters. */
uint64_t wsisa_reuse_key_hash(const double *values, size_t count);

/* Fill keys[i*k + l] for n instances from their parameter values
 * (values[i*nparams + p]); param_level[p] in 0..k-1 is the task level that
 * parameter p belongs to. Parameters hash in index order within a level.
 * Returns WSISA_EUSAGE if a level is out of range or k is 0. */
int wsisa_reuse_keys_from_values(const double *values, size_t n, size_t nparams,
                                 const size_t *param_level, size_t k, uint64_t *keys);

/* ---- merged task trees -----------------------------------------------------
 * A trie of tasks: node 0 is the root (no task, its children are level-1
 * tasks); a node at level l is one task whose parent is the task at level l-1
 * it consumes. Nodes are numbered in depth-first preorder, so iterating ids
 * 0..n_nodes-1 is a depth-first walk, a subtree is the id range [v, end) and
 * the stage instances under a node are one contiguous slice of `instances`. */
typedef struct wsisa_reuse_node {
  uint64_t key;          /* the task's key at its level; 0 for the root */
  size_t level;          /* 0 for the root, 1..k for tasks */
  size_t parent;         /* WSISA_REUSE_NO_NODE for the root */
  size_t first_child;    /* children: tree->children[first_child .. +n_children) */
  size_t n_children;
  size_t end;            /* the subtree of v is nodes [v, end) */
  size_t first_instance; /* instances below v: tree->instances[first_instance .. +n_instances) */
  size_t n_instances;    /* at a leaf (level k): the stage instances that end there */
} wsisa_reuse_node;

struct wsisa__reuse_index;

typedef struct wsisa_reuse_tree {
  size_t k;                  /* levels; leaves are at level k */
  size_t n_nodes;            /* including the root */
  wsisa_reuse_node *nodes;   /* preorder */
  size_t *children;          /* child ids, grouped by parent, in insertion order */
  size_t n_instances;
  size_t *instances;         /* stage-instance ids in leaf preorder */
  struct wsisa__reuse_index *index; /* private: child lookup by key */
} wsisa_reuse_tree;

/* Build the trie of `count` instances; instance ids[i] has keys
 * keys[ids[i]*k .. +k). Instances with equal keys share a leaf. ids NULL means
 * 0..count-1. O(k·count) with hashed child lookup. */
int wsisa_reuse_tree_build(const uint64_t *keys, size_t k, const size_t *ids,
                           size_t count, wsisa_reuse_tree **out);
void wsisa_reuse_tree_free(wsisa_reuse_tree *t);
/* Tasks to run: nodes without the root. */
size_t wsisa_reuse_tree_tasks(const wsisa_reuse_tree *t);
/* Sum of level_cost[level-1] over the tasks; level_cost NULL counts tasks. */
double wsisa_reuse_tree_cost(const wsisa_reuse_tree *t, const double *level_cost);
/* The child of `node` with task key `key`, or WSISA_REUSE_NO_NODE. */
size_t wsisa_reuse_tree_child(const wsisa_reuse_tree *t, size_t node, uint64_t key);
/* Estimated peak number of live intermediates when the tree runs with at most
 * `active_paths` root-to-leaf paths at once (seed 003 §III, Algorithm 1): tasks
 * take unit time, up to active_paths run per step, ready tasks come off a stack
 * (depth first), a task's output lives from its run until its last child has
 * run, and a leaf's output (the stage result) lives only while it runs.
 * active_paths 0 means unbounded (every ready task runs at once). */
size_t wsisa_reuse_tree_peak_live(const wsisa_reuse_tree *t, size_t active_paths);

/* ---- the design and stage-level reuse -------------------------------------- */

/* n stage instances over k levels. Stage-level reuse (seed 000 §4.1,
 * Algorithm 1, hashed find): instances with identical keys collapse into one
 * distinct instance, numbered by first appearance. `tree` is the full reuse
 * tree of the distinct instances (leaves list distinct ids): its task count is
 * the lower bound of any merging. All arrays are owned by the design. */
typedef struct wsisa_reuse_design {
  size_t n, k;
  uint64_t *keys;           /* n*k, a copy of the input */
  size_t n_distinct;
  size_t *distinct_of;      /* n: instance -> distinct id */
  size_t *first;            /* n_distinct: first instance of each distinct id */
  size_t *member_start;     /* n_distinct+1 */
  size_t *members;          /* n: instances grouped by distinct id, ascending */
  uint64_t *distinct_keys;  /* n_distinct*k */
  wsisa_reuse_tree *tree;   /* full reuse tree over distinct ids */
} wsisa_reuse_design;

/* O(k·n). Returns WSISA_EUSAGE for n = 0 or k = 0, WSISA_ENOMEM. */
int wsisa_reuse_design_new(const uint64_t *keys, size_t n, size_t k,
                           wsisa_reuse_design **out);
void wsisa_reuse_design_free(wsisa_reuse_design *d);

/* ---- task-level merging ---------------------------------------------------- */

typedef enum wsisa_reuse_strategy {
  WSISA_REUSE_NONE = 0,  /* no reuse: every run alone, its own chain of tasks, even
                            when two runs are equal (the engine's; not merged here) */
  WSISA_REUSE_STAGE,     /* one bucket per distinct instance: stage-level only */
  WSISA_REUSE_NAIVE,     /* consecutive chunks of max_bucket_size (seed 000 §4.2.1) */
  WSISA_REUSE_SCA,       /* recursive Stoer-Wagner minimum cuts (§4.2.2, Algorithm 2) */
  WSISA_REUSE_RTMA,      /* reuse tree, exact buckets, move up (§4.2.3, Algorithm 3);
                            with level costs, buckets full by cost */
  WSISA_REUSE_TRTMA      /* Full-Merge, Fold-Merge, Balance (§4.2.4; seed 001 §3.3.4) */
} wsisa_reuse_strategy;

/* The one table of strategy names, indexed by strategy: "none", "stage",
 * "naive", "sca", "rtma", "trtma" (study files, --reuse, --help, wsisa plan,
 * the benchmarks). */
#define WSISA_REUSE_NSTRATEGIES 6
extern const char *const wsisa_reuse_strategy_names[WSISA_REUSE_NSTRATEGIES];
/* Name <-> strategy; WSISA_EUSAGE for a name not in the table. */
int wsisa_reuse_strategy_parse(const char *name, wsisa_reuse_strategy *out);
const char *wsisa_reuse_strategy_name(wsisa_reuse_strategy s);

/* Where TRTMA stops; the earlier phases exist to be inspected and compared. */
typedef enum wsisa_reuse_trtma_phase {
  WSISA_REUSE_BALANCE = 0, /* all three phases (the algorithm) */
  WSISA_REUSE_FOLD_MERGE,  /* Full-Merge then Fold-Merge */
  WSISA_REUSE_FULL_MERGE   /* Full-Merge only: may leave more than max_buckets */
} wsisa_reuse_trtma_phase;

typedef struct wsisa_reuse_opts {
  wsisa_reuse_strategy strategy;
  size_t max_bucket_size;      /* naive, sca, rtma: distinct instances per bucket, >= 1 */
  size_t max_buckets;          /* trtma: >= 1 */
  /* Bucket cost model: NULL counts distinct tasks (the papers); otherwise k
   * costs >= 0, one per level (measured times, perf models), and a bucket costs
   * the sum over its distinct tasks. SCA's degree of reuse, Fold-Merge's order
   * and Balance all use it, and RTMA fills buckets by cost (reuse/rtma.c). */
  const double *level_cost;
  wsisa_reuse_trtma_phase trtma_last_phase;
} wsisa_reuse_opts;

/* Buckets of stage instances (original ids; identical instances travel
 * together) and the merged task tree of each, whose leaves list those ids. */
typedef struct wsisa_reuse_buckets {
  size_t n_buckets;
  size_t k;
  size_t *start;               /* n_buckets+1 */
  size_t *instances;           /* n: bucket b is instances[start[b] .. start[b+1]) */
  wsisa_reuse_tree **trees;    /* n_buckets */
  size_t *tasks;               /* distinct tasks per bucket */
  double *cost;                /* per bucket, under the options' cost model */
} wsisa_reuse_buckets;

/* Returns WSISA_EUSAGE for a zero limit or a negative level cost. */
int wsisa_reuse_merge(const wsisa_reuse_design *d, const wsisa_reuse_opts *opts,
                      wsisa_reuse_buckets **out);
void wsisa_reuse_buckets_free(wsisa_reuse_buckets *b);
/* An empty bucket set (every array zeroed) for a caller that fills it in:
 * n_buckets buckets over n_instances instances, trees of k levels. */
int wsisa_reuse_buckets_new(size_t n_buckets, size_t n_instances, size_t k,
                            wsisa_reuse_buckets **out);

typedef struct wsisa_reuse_summary {
  size_t n_buckets;
  size_t tasks;            /* sum of distinct tasks over buckets */
  double cost;             /* sum of bucket costs */
  double max_cost;
  double mean_cost;
  double imbalance;        /* max_cost / mean_cost - 1 (0 is perfect balance) */
  size_t max_instances;    /* largest bucket, in distinct stage instances */
  size_t peak_live;        /* largest estimated peak over buckets (see peak_live) */
} wsisa_reuse_summary;

void wsisa_reuse_buckets_summarize(const wsisa_reuse_buckets *b, size_t active_paths,
                                   wsisa_reuse_summary *s);

#endif
