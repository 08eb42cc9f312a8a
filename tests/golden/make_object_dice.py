#!/usr/bin/python3
"""Object Dice (GlaS challenge definition) of the varied tile_256 mask against
the default one, computed independently with scikit-image and NumPy; writes
tests/golden/objects/object_dice.txt: obj_ref obj_run object_dice, the first
two on the 2^-20 grid of codelets/cpu/object_match.c."""
import os
import numpy as np
from skimage import io, measure

here = os.path.dirname(os.path.abspath(__file__))
ref = io.imread(os.path.join(here, "workflow/tile_256_default.png")) > 0
run = io.imread(os.path.join(here, "workflow/tile_256_varied.png")) > 0
G = measure.label(ref, connectivity=1)
S = measure.label(run, connectivity=1)


def side(A, B):
    """sum over objects a of A: |a| * Dice(a, b*) with b* the object of B
    overlapping a most (ties: smallest label), as exact grid terms and floats."""
    grid, real = 0, 0.0
    for a in range(1, A.max() + 1):
        inside = A == a
        area = int(inside.sum())
        partners, overlap = np.unique(B[inside & (B > 0)], return_counts=True)
        if len(partners) == 0:
            continue
        best = partners[np.argmax(overlap)]  # argmax keeps the first (smallest) on ties
        o = int(overlap.max())
        other = int((B == best).sum())
        x = float(area) * float(2 * o) / float(area + other)
        grid += round(x * 2**20)
        real += area * 2 * o / (area + other)
    return grid, real


g_grid, g_real = side(G, S)
s_grid, s_real = side(S, G)
dice = 0.5 * (g_real / ref.sum() + s_real / run.sum())
with open(os.path.join(here, "objects/object_dice.txt"), "w") as f:
    f.write(f"{g_grid} {s_grid} {dice:.12f}\n")
print(g_grid, s_grid, dice, G.max(), S.max())
