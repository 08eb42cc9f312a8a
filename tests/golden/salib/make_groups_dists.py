#!/usr/bin/env python3
"""Grouped designs and designs under non-uniform distributions in the shapes
SALib writes, and the indices a test of `wsisa analyze --problem` expects of
them, computed here from the formulas with Python's standard library alone
(random, math, statistics.NormalDist: Wichura's AS241 quantile, independent
of wsisa's Acklam + Halley step), not with wsisa and not with SALib:

  groups_problem.json  names x1..x4, groups G1 = {x1, x2}, G2 = {x3}, G3 = {x4}
  gmorris_X.csv        grouped Morris trajectories (Campolongo et al. 2007): 8
                       trajectories of G + 1 = 4 rows on a 4-level grid
                       (Delta = 2/3); a step moves every parameter of one group
                       by Delta, each in its own direction
  gmorris_Y.csv        f of each row, one column, no id
  gsobol_X.csv         Saltelli's layout with one column block per group: per
                       base sample A, AB_G1, AB_G2, AB_G3, B (N (G + 2) rows)
  gsobol_Y.csv         f of each row
  dists_problem.json   y1 truncnorm [0, 2, 0.5, 1], y2 triang [1, 3, 0.25],
                       y3 unif [0, 1] (SALib's bounds under each dist)
  dmorris_X.csv        Morris trajectories whose grid levels are mapped by each
                       dist's quantile
  dmorris_Y.csv        f of each row
  quantiles.json       each dist's quantile at a few u, for sa's unit tests
  expected_groups_dists.json  the indices

Morris: a group's elementary effect is |dy| / Delta, its mu* the mean; mu and
sigma are left undefined for a group of 2 or more (as SALib); a parameter
alone in its group has dy / du, mu, mu*, sigma (n - 1). Under a non-uniform
dist the effect is dy / du with u the quantile (quantile space, as SALib),
and mu_param = dy / dvalue. Sobol': wsisa's convention (sa/sa.h), outputs
centred on the mean of f(A) and f(B), V their population variance,
S1 = mean(f(B) (f(AB_g) - f(A))) / V, ST = mean((f(A) - f(AB_g))^2) / (2 V).
Run: python3 make_groups_dists.py (writes next to itself)."""
import json
import math
import os
import random
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
N01 = statistics.NormalDist()


def write(name, text):
    with open(os.path.join(HERE, name), "w") as fh:
        fh.write(text)


def csv(header, rows):
    return ",".join(header) + "\n" + "".join(",".join(repr(float(v)) for v in r) + "\n"
                                           for r in rows)


def summary(ee):
    n = len(ee)
    return {"mu": sum(ee) / n, "mu_star": sum(abs(e) for e in ee) / n,
            "sigma": statistics.stdev(ee)}


# ---- quantiles ------------------------------------------------------------------
def q_unif(b, u):
    return b[0] + u * (b[1] - b[0])


def q_norm(b, u):
    return b[0] + b[1] * N01.inv_cdf(u)


def q_lognorm(b, u):
    return math.exp(b[0] + b[1] * N01.inv_cdf(u))


def q_truncnorm(b, u):
    lo, hi, m, s = b
    pa, pb = N01.cdf((lo - m) / s), N01.cdf((hi - m) / s)
    return m + s * N01.inv_cdf(pa + u * (pb - pa))


def q_triang(b, u):
    lo, hi, c = b
    w = hi - lo
    return lo + w * math.sqrt(u * c) if u < c else hi - w * math.sqrt((1 - u) * (1 - c))


Q = {"unif": q_unif, "norm": q_norm, "lognorm": q_lognorm, "truncnorm": q_truncnorm,
     "triang": q_triang}

out = {}
qs = []
for dist, b in [("norm", [1.5, 0.25]), ("lognorm", [0.2, 0.5]),
                ("truncnorm", [0.0, 2.0, 0.5, 1.0]), ("truncnorm", [2.0, 3.0, 0.0, 0.5]),
                ("triang", [1.0, 3.0, 0.25]), ("unif", [-1.0, 0.3])]:
    for u in [1e-9, 0.01, 0.2, 0.5, 0.75, 0.99]:
        if dist == "truncnorm" and b[0] > b[2]:
            # the upper tail, where 1 - Phi must not lose the digits: Q(z) = Phi(-z)
            lo, hi, m, s = b
            qa, qb = N01.cdf(-(lo - m) / s), N01.cdf(-(hi - m) / s)
            v = m - s * N01.inv_cdf(qa - u * (qa - qb))
        else:
            v = Q[dist](b, u)
        qs.append({"dist": dist, "bounds": b, "u": u, "value": v})
write("quantiles.json", json.dumps(qs, indent=1) + "\n")


# ---- grouped Morris ----------------------------------------------------------------
def morris(rng, groups, r, levels=4):
    """Unit rows of r trajectories, each parameter its own direction, groups in
    a random order; and (step rows a, b, group, du) for every step."""
    k, gnames = len(groups), list(dict.fromkeys(groups))
    jump = levels // 2
    rows, steps = [], []
    for t in range(r):
        base = [rng.randrange(levels - jump) for _ in range(k)]
        d = [rng.choice([-1, 1]) for _ in range(k)]
        lev = [base[i] + (jump if d[i] < 0 else 0) for i in range(k)]
        order = gnames[:]
        rng.shuffle(order)
        rows.append([l / (levels - 1) for l in lev])
        for g in order:
            for i in range(k):
                if groups[i] == g:
                    lev[i] += d[i] * jump
            rows.append([l / (levels - 1) for l in lev])
            a = len(rows) - 2
            i0 = groups.index(g)
            steps.append((a, a + 1, g, rows[a + 1][i0] - rows[a][i0]))
    return rows, steps


def f_group(x):
    return x[0] * x[1] + 3 * math.sin(x[2]) + x[3] ** 2


NAMES = ["x1", "x2", "x3", "x4"]
GROUPS = ["G1", "G1", "G2", "G3"]
BOUNDS = [[0.0, 1.0], [-1.0, 1.0], [0.0, 2.0], [-2.0, -1.0]]
write("groups_problem.json", json.dumps({"num_vars": 4, "names": NAMES, "bounds": BOUNDS,
                                         "groups": GROUPS}, indent=1) + "\n")
rng = random.Random(26)
unit, steps = morris(rng, GROUPS, 8)
x = [[q_unif(BOUNDS[i], u[i]) for i in range(4)] for u in unit]
y = [f_group(r) for r in x]
write("gmorris_X.csv", csv(NAMES, x))
write("gmorris_Y.csv", csv(["f"], [[v] for v in y]))
res = {}
for g in ["G1", "G2", "G3"]:
    ee = [(y[b] - y[a]) / du for a, b, gg, du in steps if gg == g]
    if GROUPS.count(g) > 1:
        res[g] = {"mu_star": sum(abs(e) for e in ee) / len(ee)}
    else:
        res[g] = summary(ee)
out["gmorris"] = res

# ---- grouped Sobol' ------------------------------------------------------------------
N = 64
gnames = ["G1", "G2", "G3"]
rows = []
for j in range(N):
    a = [rng.random() for _ in range(4)]
    b = [rng.random() for _ in range(4)]
    rows.append(a)
    for g in gnames:
        rows.append([b[i] if GROUPS[i] == g else a[i] for i in range(4)])
    rows.append(b)
x = [[q_unif(BOUNDS[i], u[i]) for i in range(4)] for u in rows]
y = [f_group(r) for r in x]
write("gsobol_X.csv", csv(NAMES, x))
write("gsobol_Y.csv", csv(["f"], [[v] for v in y]))
G = len(gnames)
size = G + 2
fa = [y[j * size] for j in range(N)]
fb = [y[j * size + size - 1] for j in range(N)]
centre = (sum(fa) + sum(fb)) / (2 * N)
fa = [v - centre for v in fa]
fb = [v - centre for v in fb]
allv = fa + fb
mean = sum(allv) / (2 * N)
V = sum(v * v for v in allv) / (2 * N) - mean * mean
res = {}
for gi, g in enumerate(gnames):
    fab = [y[j * size + 1 + gi] - centre for j in range(N)]
    s1 = sum(fb[j] * (fab[j] - fa[j]) for j in range(N)) / N / V
    st = sum((fa[j] - fab[j]) ** 2 for j in range(N)) / (2 * N) / V
    res[g] = {"S1": s1, "ST": st}
out["gsobol"] = res

# ---- Morris under non-uniform dists -------------------------------------------------------
DNAMES = ["y1", "y2", "y3"]
DISTS = ["truncnorm", "triang", "unif"]
DBOUNDS = [[0.0, 2.0, 0.5, 1.0], [1.0, 3.0, 0.25], [0.0, 1.0]]
write("dists_problem.json", json.dumps({"num_vars": 3, "names": DNAMES, "bounds": DBOUNDS,
                                        "dists": DISTS}, indent=1) + "\n")


def f_dist(v):
    return v[0] ** 2 + 2 * v[1] + math.exp(v[2]) * v[0]


unit, steps = morris(rng, DNAMES, 10)
x = [[Q[DISTS[i]](DBOUNDS[i], u[i]) for i in range(3)] for u in unit]
y = [f_dist(r) for r in x]
write("dmorris_X.csv", csv(DNAMES, x))
write("dmorris_Y.csv", csv(["f"], [[v] for v in y]))
res = {}
for i, name in enumerate(DNAMES):
    ee = [(y[b] - y[a]) / du for a, b, g, du in steps if g == name]
    eep = [(y[b] - y[a]) / (x[b][i] - x[a][i]) for a, b, g, du in steps if g == name]
    res[name] = summary(ee)
    res[name]["mu_param"] = sum(eep) / len(eep)
out["dmorris"] = res
write("expected_groups_dists.json", json.dumps(out, indent=1) + "\n")
