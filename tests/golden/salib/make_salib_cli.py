#!/usr/bin/env python3
"""The files SALib's command line and its problem dicts leave, made the way
SALib 1.5.1 makes them, with Python's standard library and numpy (SALib itself
is not installed here), and the indices a test of `wsisa analyze` expects of
them:

  cli_params.txt         SALib's text parameter file (its Ishigami.txt):
                         `name lower upper` a line, space-delimited
  cli_sobol_X.txt        `salib sample saltelli -n 32 -p cli_params.txt -o ...`:
                         Saltelli's second-order layout (A, AB_1..AB_3,
                         BA_1..BA_3, B per base sample), written as SALib's
                         cli_action writes it: np.savetxt(fmt="%.8e",
                         delimiter=" "), no header
  cli_sobol_Y.txt        the model's outputs as SALib's examples save them:
                         np.savetxt(Y), two columns f and 2 f + x3 ("%.18e",
                         space-delimited, no header); SALib's -c 0 / -c 1
  cli_sobol_X_tab.txt    the same design, tab-delimited, header "x1<TAB>..."
  cli_sobol_Y_comma.txt  the same outputs, comma-delimited, header "# f,g"
                         (np.savetxt's default comments)
  cli_sobol_problem.json json.dump(problem) after saltelli.sample: the dict
                         read_param_file returns (groups and dists null) with
                         the "sample_scaled": true that scale_samples adds
  cli_sobol_problemspec.json  a ProblemSpec's keys after .sample() and
                         .set_results() of two columns: num_vars, groups =
                         names, sample_scaled, outputs ["Y1", "Y2"]
  cli_groups_params.txt  comma-delimited with a comment line, groups and NA:
                         x1, x2 in G1; x3 alone (NA); x4 in G2
  cli_morris_X.txt       `salib sample morris -n 8 -p cli_groups_params.txt
                         -l 4 -lo True -o ...`: Campolongo's grouped
                         trajectories (SALib's B* = J x* + Delta/2 ((2 B G P*
                         - J) D* + J), each parameter its own direction),
                         "%.8e", no header
  cli_morris_Y.txt       its outputs, one column
  cli_morris_problemspec.json  a ProblemSpec with groups after sampling
  cli_dists_params.txt   tab-delimited with dists, two bounds a line as the
                         file holds them: logunif [1, 100], SALib's older
                         triang [2, 0.25] (0 to 2, peak at 0.5), lognorm
                         [0, 0.5], unif
  cli_dists_X.txt        `salib sample saltelli -n 32 --max-order 1 -p
                         cli_dists_params.txt`: first-order layout, each
                         column through its dist's quantile (scipy's ppf
                         formulas: loguniform a (b/a)^q, triang, norm)
  cli_dists_Y.txt        its outputs, one column
  cli_expected.json      the indices, from the estimators' formulas

Every parameter file is read back here as SALib's read_param_file reads it
(csv.Sniffer on the first 1024 bytes, csv.DictReader with fields name,
lower_bound, upper_bound, group, dist; '#' names skipped; NA and no group:
the parameter's own name; groups == names -> None; all unif -> dists None),
and the result is checked against the problem meant.

Sobol': "wsisa" holds wsisa's convention (outputs centred on the mean of f(A)
and f(B)); "salib" SALib's (sobol.analyze: Y = (Y - mean) / std over every
output), S1 after Saltelli 2010, ST after Jansen, S2 after Saltelli 2002, V
the population variance of f(A) and f(B) together. Morris: the elementary
effect of parameter j at a step is dy / (+-Delta), signed by j's own move, as
SALib's _compute_elementary_effects; mu, mu*, sigma (ddof 1) per parameter;
a group's mu* the mean of its members' (= mean |dy| / Delta), its mu the mean
of its members' mu (SALib 1.4.8 and later; finite), its sigma NaN for 2 or
more members. Points come from numpy's default_rng, not Sobol' sequences: the
layout and the writing are SALib's, the points need not be.
Run: python3 make_salib_cli.py (writes next to itself)."""
import csv
import json
import math
import os
import statistics

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N01 = statistics.NormalDist()


def path(name):
    return os.path.join(HERE, name)


def write(name, text):
    with open(path(name), "w") as fh:
        fh.write(text)


def read_param_file(filename):
    """What SALib's read_param_file returns for a file (its reading rules)."""
    names, bounds, groups, dists = [], [], [], []
    with open(filename, "r") as fh:
        dialect = csv.Sniffer().sniff(fh.read(1024), delimiters=None)
        fh.seek(0)
        reader = csv.DictReader(fh, fieldnames=["name", "lower_bound", "upper_bound", "group",
                                                "dist"], dialect=dialect)
        for row in reader:
            if row["name"].strip().startswith("#"):
                continue
            names.append(row["name"])
            bounds.append([float(row["lower_bound"]), float(row["upper_bound"])])
            group = row["group"]
            groups.append(row["name"] if group is None or group == "NA" else group)
            dists.append("unif" if row["dist"] is None else row["dist"])
    if groups == names:
        groups = None
    elif len(set(groups)) == 1:
        raise ValueError("Only one group defined")
    if all(d == "unif" for d in dists):
        dists = None
    return {"names": names, "bounds": bounds, "num_vars": len(names), "groups": groups,
            "dists": dists}


def ppf(dist, b, u):
    """The quantile scale_samples applies (scipy's formulas)."""
    if dist == "unif":
        return u * (b[1] - b[0]) + b[0]
    if dist == "logunif":
        return b[0] * (b[1] / b[0]) ** u
    if dist == "triang":  # two-value form: start 0, end b[0], peak fraction b[1]
        c, scale = b[1], b[0]
        return np.where(u < c, np.sqrt(c * u), 1 - np.sqrt((1 - c) * (1 - u))) * scale
    if dist == "lognorm":
        return np.exp(np.array([N01.inv_cdf(v) for v in u]) * b[1] + b[0])
    raise ValueError(dist)


def scale(unit, problem):
    dists = problem["dists"] or ["unif"] * problem["num_vars"]
    return np.column_stack([ppf(dists[i], problem["bounds"][i], unit[:, i])
                            for i in range(problem["num_vars"])])


def saltelli(unit_a, unit_b, second_order):
    """SALib's saltelli layout per base sample: A, AB_1..AB_D, [BA_1..BA_D,] B."""
    rows = []
    d = unit_a.shape[1]
    for a, b in zip(unit_a, unit_b):
        rows.append(a.copy())
        for k in range(d):
            ab = a.copy()
            ab[k] = b[k]
            rows.append(ab)
        if second_order:
            for k in range(d):
                ba = b.copy()
                ba[k] = a[k]
                rows.append(ba)
        rows.append(b.copy())
    return np.array(rows)


def savetxt(name, x, **kw):
    np.savetxt(path(name), x, **kw)


def ishigami(x):
    return np.sin(x[:, 0]) + 7 * np.sin(x[:, 1]) ** 2 + 0.1 * x[:, 2] ** 4 * np.sin(x[:, 0])


def sobol_indices(y, d, second_order, centre):
    """S1, ST (and S2) of one output; centre: "wsisa" or "salib"."""
    step = 2 * d + 2 if second_order else d + 2
    g = y.reshape(-1, step)
    if centre == "salib":
        g = (g - y.mean()) / y.std()
    else:
        g = g - np.mean(np.r_[g[:, 0], g[:, -1]])
    fa, fb, fab = g[:, 0], g[:, -1], g[:, 1:d + 1]
    v = np.var(np.r_[fa, fb])
    s1 = np.mean(fb[:, None] * (fab - fa[:, None]), axis=0) / v
    st = 0.5 * np.mean((fa[:, None] - fab) ** 2, axis=0) / v
    out = {"S1": s1.tolist(), "ST": st.tolist()}
    if second_order:
        fba = g[:, d + 1:2 * d + 1]
        s2 = {}
        for j in range(d):
            for k in range(j + 1, d):
                vjk = np.mean(fba[:, j] * fab[:, k] - fa * fb) / v
                s2[f"{j},{k}"] = float(vjk - s1[j] - s1[k])
        out["S2"] = s2
    return out


rng = np.random.default_rng(48)
expected = {}

# ---- Sobol', SALib's README workflow ------------------------------------------------
write("cli_params.txt", "x1 -3.14159265359 3.14159265359\n"
                        "x2 -3.14159265359 3.14159265359\n"
                        "x3 -3.14159265359 3.14159265359\n")
problem = read_param_file(path("cli_params.txt"))
assert problem["names"] == ["x1", "x2", "x3"] and problem["groups"] is None
N = 32
unit = saltelli(rng.random((N, 3)), rng.random((N, 3)), True)
x = scale(unit, problem)
problem["sample_scaled"] = True  # what scale_samples adds
savetxt("cli_sobol_X.txt", x, fmt="%.8e", delimiter=" ")
x = np.loadtxt(path("cli_sobol_X.txt"))  # the model reads what was written
y = np.c_[ishigami(x), 2 * ishigami(x) + x[:, 2]]
savetxt("cli_sobol_Y.txt", y)
savetxt("cli_sobol_X_tab.txt", x, fmt="%.8e", delimiter="\t", header="x1\tx2\tx3", comments="")
savetxt("cli_sobol_Y_comma.txt", y, delimiter=",", header="f,g")
with open(path("cli_sobol_problem.json"), "w") as fh:
    json.dump(problem, fh)
spec = {"names": problem["names"], "bounds": problem["bounds"]}
spec["num_vars"] = 3
spec["groups"] = spec["names"]  # _define_problem_with_groups
spec["sample_scaled"] = True
spec["outputs"] = ["Y1", "Y2"]  # the results setter, two columns
with open(path("cli_sobol_problemspec.json"), "w") as fh:
    json.dump(spec, fh)
y = np.loadtxt(path("cli_sobol_Y.txt"))
expected["sobol"] = {c: {"wsisa": sobol_indices(y[:, i], 3, True, "wsisa"),
                         "salib": sobol_indices(y[:, i], 3, True, "salib")}
                     for i, c in enumerate(["y0", "y1"])}

# ---- Morris with groups ---------------------------------------------------------------
write("cli_groups_params.txt", "# name,lower,upper,group\n"
                               "x1,-3.14159265359,3.14159265359,G1\n"
                               "x2,-3.14159265359,3.14159265359,G1\n"
                               "x3,-3.14159265359,3.14159265359,NA\n"
                               "x4,0,1,G2\n")
gproblem = read_param_file(path("cli_groups_params.txt"))
assert gproblem["groups"] == ["G1", "G1", "x3", "G2"], gproblem
R, P = 8, 4
delta = P / (2.0 * (P - 1))
group_names = list(dict.fromkeys(gproblem["groups"]))
G = np.array([[1 if g == h else 0 for h in group_names] for g in gproblem["groups"]])
ng, k = G.shape[1], G.shape[0]
B = np.tril(np.ones([ng + 1, ng], dtype=int), -1)
grid = np.linspace(0, 1 - delta, P // 2)
traj = []
for _ in range(R):
    p_star = np.eye(ng)[rng.permutation(ng)]
    d_star = np.diag(rng.choice([-1, 1], k))
    x_star = rng.choice(grid, k)
    element_c = 2.0 * B @ (G @ p_star).T
    traj.append(x_star + (delta / 2.0) * ((element_c - 1) @ d_star + 1))
unit = np.vstack(traj)
x = scale(unit, gproblem)
savetxt("cli_morris_X.txt", x, fmt="%.8e", delimiter=" ")
x = np.loadtxt(path("cli_morris_X.txt"))
y = ishigami(x) + 3 * x[:, 3]
savetxt("cli_morris_Y.txt", y)
y = np.loadtxt(path("cli_morris_Y.txt"))
gspec = {"names": gproblem["names"], "groups": gproblem["groups"], "bounds": gproblem["bounds"],
         "num_vars": 4, "sample_scaled": True, "outputs": ["Y"]}
with open(path("cli_morris_problemspec.json"), "w") as fh:
    json.dump(gspec, fh)
xt, yt = x.reshape(R, ng + 1, k), y.reshape(R, ng + 1)
ee = np.zeros((k, R))
for t in range(R):
    for s in range(ng):
        dx = xt[t, s + 1] - xt[t, s]
        for j in range(k):
            if dx[j] != 0:
                ee[j, t] = (yt[t, s + 1] - yt[t, s]) / (delta if dx[j] > 0 else -delta)
mu, mu_star, sigma = ee.mean(axis=1), np.abs(ee).mean(axis=1), ee.std(axis=1, ddof=1)
morris = {}
for gi, name in enumerate(group_names):
    members = np.flatnonzero(G[:, gi])
    morris[name] = {"mu_star": float(mu_star[members].mean()),
                    "mu": float(mu[members].mean()),
                    "sigma": float(sigma[members][0]) if len(members) == 1 else None,
                    "members": len(members)}
expected["morris"] = {"y0": morris, "delta": delta, "levels": P, "trajectories": R}

# ---- dists, two bounds a line ---------------------------------------------------------
write("cli_dists_params.txt", "a\t1\t100\tNA\tlogunif\n"
                              "b\t2\t0.25\tNA\ttriang\n"
                              "c\t0\t0.5\tNA\tlognorm\n"
                              "d\t0\t1\tNA\tunif\n")
dproblem = read_param_file(path("cli_dists_params.txt"))
assert dproblem["dists"] == ["logunif", "triang", "lognorm", "unif"], dproblem
unit = saltelli(rng.random((N, 4)), rng.random((N, 4)), False)
x = scale(unit, dproblem)
savetxt("cli_dists_X.txt", x, fmt="%.8e", delimiter=" ")
x = np.loadtxt(path("cli_dists_X.txt"))
y = np.log(x[:, 0]) + x[:, 1] ** 2 + x[:, 2] * x[:, 3]
savetxt("cli_dists_Y.txt", y)
y = np.loadtxt(path("cli_dists_Y.txt"))
expected["dists"] = {"y0": {"wsisa": sobol_indices(y, 4, False, "wsisa"),
                            "salib": sobol_indices(y, 4, False, "salib")}}
# the quantiles the test checks wsisa's against
expected["quantiles"] = {"logunif [1, 100]": {str(u): float(ppf("logunif", [1, 100], u))
                                              for u in (0.0, 0.25, 0.5, 0.9, 1.0)},
                         "triang [2, 0.25]": {str(u): float(ppf("triang", [2, 0.25], np.array(u)))
                                              for u in (0.0, 0.1, 0.25, 0.5, 1.0)}}

write("cli_expected.json", json.dumps(expected, indent=1, allow_nan=False) + "\n")
