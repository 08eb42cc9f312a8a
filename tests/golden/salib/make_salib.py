#!/usr/bin/env python3
"""Designs in the shapes SALib, numpy and pandas write, and the indices a
test of `wsisa analyze --problem` expects of them, computed here with numpy
and scipy from the formulas (not with wsisa, and not with SALib, which is not
installed):

  problem.json      SALib's problem: names, bounds
  sobol_X.csv       Saltelli's first-order layout (A, AB_1..AB_3, B per base
                    sample), numpy.savetxt(header=..., comments='') shape
  sobol_Y.csv       one column, no id: rows matched in order
  morris_X.csv      Morris trajectories at 4 levels (Delta = 2/3), pandas
                    to_csv with its unnamed index column
  morris_Y.csv      pandas to_csv with its index
  corr_X.csv        random rows, numpy.savetxt's "# " header, and a column
                    that is no parameter
  corr_Y.csv        run_id, then f and lin = 2 x1 + x2 (exact)
  expected.json     the indices

Sobol': wsisa's convention (sa/sa.h): outputs centred on the mean of f(A)
and f(B); V the population variance of f(A) and f(B);
S1 = mean(f(B) (f(AB_i) - f(A))) / V, ST = mean((f(A) - f(AB_i))^2) / (2 V).
Morris: elementary effect dy / (du) with u the unit coordinate, mu, mu* and
sigma (ddof 1), as SALib's morris.analyze. Correlation: numpy's corrcoef,
scipy's rankdata (average ties), PCC from least-squares residuals.
Run: python3 make_salib.py (writes next to itself)."""
import json
import os

import numpy as np
from scipy.stats import rankdata

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["x1", "x2", "x3"]
BOUNDS = np.array([[-np.pi, np.pi], [-1.0, 0.3], [-0.9, -0.3]])
K = 3


def f(x):
    return np.sin(x[:, 0]) + 7 * np.sin(x[:, 1]) ** 2 + 0.1 * x[:, 2] ** 4 * np.sin(x[:, 0])


def scale(u):
    return BOUNDS[:, 0] + u * (BOUNDS[:, 1] - BOUNDS[:, 0])


def write(name, text):
    with open(os.path.join(HERE, name), "w") as fh:
        fh.write(text)


def rows(x):
    return "".join(",".join(repr(float(v)) for v in r) + "\n" for r in x)


rng = np.random.default_rng(26)
out = {}
write("problem.json", json.dumps({"num_vars": K, "names": NAMES,
                                  "bounds": BOUNDS.tolist()}, indent=1) + "\n")

# ---- Sobol' -------------------------------------------------------------
N = 64
a, b = scale(rng.random((N, K))), scale(rng.random((N, K)))
x = []
for j in range(N):
    x.append(a[j])
    for i in range(K):
        ab = a[j].copy()
        ab[i] = b[j, i]
        x.append(ab)
    x.append(b[j])
x = np.array(x)
y = f(x)
write("sobol_X.csv", ",".join(NAMES) + "\n" + rows(x))
write("sobol_Y.csv", "f\n" + "".join(repr(float(v)) + "\n" for v in y))
g = y.reshape(N, K + 2)
c = np.mean(np.r_[g[:, 0], g[:, -1]])
g = g - c
fa, fb, fab = g[:, 0], g[:, -1], g[:, 1:-1]
v = np.var(np.r_[fa, fb])
out["sobol"] = {"S1": (np.mean(fb[:, None] * (fab - fa[:, None]), axis=0) / v).tolist(),
                "ST": (0.5 * np.mean((fa[:, None] - fab) ** 2, axis=0) / v).tolist()}

# ---- Morris ---------------------------------------------------------------
R, P = 8, 4
delta = P / (2 * (P - 1))
u, steps = [], []
for t in range(R):
    up = rng.random(K) < 0.5
    level = rng.integers(0, P // 2, K) + np.where(up, 0, P // 2)
    cur = level / (P - 1)
    u.append(cur.copy())
    for i in rng.permutation(K):
        cur[i] += delta if up[i] else -delta
        u.append(cur.copy())
u = np.array(u)
x = scale(u)
y = f(x)
write("morris_X.csv", "," + ",".join(NAMES) + "\n" +
      "".join(f"{r}," + ",".join(repr(float(v)) for v in x[r]) + "\n" for r in range(len(x))))
write("morris_Y.csv", ",f\n" + "".join(f"{r},{float(v)!r}\n" for r, v in enumerate(y)))
ee = [[] for _ in range(K)]
for t in range(R):
    for s in range(K):
        r = t * (K + 1) + s
        du = u[r + 1] - u[r]
        i = int(np.flatnonzero(du)[0])
        ee[i].append((y[r + 1] - y[r]) / du[i])
ee = np.array(ee)
out["morris"] = {"mu": ee.mean(axis=1).tolist(), "mu_star": np.abs(ee).mean(axis=1).tolist(),
                 "sigma": ee.std(axis=1, ddof=1).tolist()}

# ---- correlation -------------------------------------------------------------
n = 50
x = scale(rng.random((n, K)))
fy, lin = f(x), 2 * x[:, 0] + x[:, 1]
write("corr_X.csv", "# " + ",".join(NAMES) + ",label\n" +
      "".join(",".join(repr(float(v)) for v in x[r]) + f",{r % 3}\n" for r in range(n)))
write("corr_Y.csv", "run_id,f,lin\n" +
      "".join(f"{r},{float(fy[r])!r},{float(lin[r])!r}\n" for r in range(n)))


def partial(x, y):
    res = []
    for i in range(K):
        z = np.c_[np.ones(len(y)), np.delete(x, i, axis=1)]
        rx = x[:, i] - z @ np.linalg.lstsq(z, x[:, i], rcond=None)[0]
        ry = y - z @ np.linalg.lstsq(z, y, rcond=None)[0]
        res.append(float(np.corrcoef(rx, ry)[0, 1]))
    return res


rx = np.column_stack([rankdata(x[:, i]) for i in range(K)])
out["correlation"] = {
    "pearson": [float(np.corrcoef(x[:, i], fy)[0, 1]) for i in range(K)],
    "spearman": [float(np.corrcoef(rx[:, i], rankdata(fy))[0, 1]) for i in range(K)],
    "pcc": partial(x, fy), "prcc": partial(rx, rankdata(fy))}
write("expected.json", json.dumps(out, indent=1) + "\n")
