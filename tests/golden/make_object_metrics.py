#!/usr/bin/python3
"""Object metrics of one label image against another, computed independently
with scikit-image, NumPy and SciPy; writes tests/golden/objects/object_metrics.txt,
one line per case: the reference mask, the run's mask (4-connected objects of
the workflow's golden masks), then the fields of codelets/cpu/published.h's
wsisa_match_field in order:
  DICE_REF DICE_RUN (GlaS object Dice sums, on the 2^-20 grid)
  AREA_REF AREA_RUN
  TP FP FN (one-to-one matches at IoU >= 0.5: a largest matching, by SciPy's
            linear_sum_assignment on the pairs at or above 0.5)
  AJI_INTER AJI_UNION AJI_UNUSED (Kumar et al. 2017: each reference object
            with its run object of largest IoU, the first on ties)
and, for reading, object Dice, F1 and AJI."""
import os
from fractions import Fraction

import numpy as np
from scipy.optimize import linear_sum_assignment
from skimage import io, measure

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [("workflow/tile_256_default.png", "workflow/tile_256_varied.png"),
         ("workflow/tile_256_varied.png", "workflow/tile_256_default.png"),
         ("workflow/tile_1024_default.png", "workflow/tile_1024_default.png")]


def labels(png):
    return measure.label(io.imread(os.path.join(HERE, png)) > 0, connectivity=1)


def metrics(G, S):
    ng, ns = G.max(), S.max()
    area_g = np.bincount(G.ravel(), minlength=ng + 1).astype(np.int64)
    area_s = np.bincount(S.ravel(), minlength=ns + 1).astype(np.int64)
    both = (G > 0) & (S > 0)
    # overlap[g, s], dense: the golden images hold a few hundred objects
    overlap = np.zeros((ng + 1, ns + 1), np.int64)
    np.add.at(overlap, (G[both], S[both]), 1)
    union = area_g[:, None] + area_s[None, :] - overlap

    def dice_side(areas_a, areas_b, ov):
        total = 0
        for a in range(1, len(areas_a)):
            if ov[a].max() == 0:
                continue
            b = int(np.argmax(ov[a]))  # the first, smallest label, on ties
            x = float(areas_a[a]) * float(2 * ov[a, b]) / float(areas_a[a] + areas_b[b])
            total += round(x * 2**20)
        return total

    dice_ref = dice_side(area_g, area_s, overlap)
    dice_run = dice_side(area_s, area_g, overlap.T)
    # F1: a largest one-to-one matching among pairs with IoU >= 0.5
    ok = np.zeros_like(overlap, bool)
    ok[1:, 1:] = 2 * overlap[1:, 1:] >= union[1:, 1:]
    ok &= overlap > 0
    rows, cols = linear_sum_assignment(ok[1:, 1:].astype(np.int64), maximize=True)
    tp = int(ok[1:, 1:][rows, cols].sum())
    fn, fp = ng - tp, ns - tp
    # AJI: best IoU partner, exactly (fractions), the smallest label on ties
    inter = uni = 0
    used = set()
    for g in range(1, ng + 1):
        partners = np.nonzero(overlap[g])[0]
        partners = partners[partners > 0]
        if len(partners) == 0:
            uni += int(area_g[g])
            continue
        best = max(partners, key=lambda s: (Fraction(int(overlap[g, s]), int(union[g, s])), -s))
        inter += int(overlap[g, best])
        uni += int(union[g, best])
        used.add(int(best))
    unused = int(sum(area_s[s] for s in range(1, ns + 1) if s not in used))
    return [dice_ref, dice_run, int(area_g[1:].sum()), int(area_s[1:].sum()), tp, fp, fn,
            inter, uni, unused]


def summary(v):
    """Object Dice, F1 and AJI of the fields (1 when both sides are empty)."""
    empty = v[2] == 0 and v[3] == 0
    dice = 1.0 if empty else 0.5 * ((v[0] / 2**20 / v[2] if v[2] else 0) +
                                    (v[1] / 2**20 / v[3] if v[3] else 0))
    f1 = 2 * v[4] / (2 * v[4] + v[5] + v[6]) if 2 * v[4] + v[5] + v[6] else 1.0
    aji = v[7] / (v[8] + v[9]) if v[8] + v[9] else 1.0
    return dice, f1, aji


if __name__ == "__main__":  # tests/golden/make_annotation.py imports metrics()
    with open(os.path.join(HERE, "objects/object_metrics.txt"), "w") as out:
        for ref, run in CASES:
            v = metrics(labels(ref), labels(run))
            dice, f1, aji = summary(v)
            line = " ".join([ref, run] + [str(x) for x in v])
            out.write(f"{line} {dice:.9f} {f1:.9f} {aji:.9f}\n")
            print(line, f"dice {dice:.4f} f1 {f1:.4f} aji {aji:.4f}")
