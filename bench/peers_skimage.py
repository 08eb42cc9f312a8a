#!/usr/bin/python3
"""scikit-image / SciPy peers for `wsisa-bench ops`: the same operations on the
same inputs. Prints "name median_ms min_ms max_ms" per operation.
usage: peers_skimage.py DIR REPEATS"""
import sys
import time

import numpy as np
from PIL import Image
from scipy import ndimage as ndi
from skimage import morphology


def timeit(name, repeats, fn):
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    print(f"{name} {ms[len(ms) // 2]:.3f} {ms[0]:.3f} {ms[-1]:.3f}", flush=True)


def main():
    d, repeats = sys.argv[1], max(1, int(sys.argv[2]))
    rc = np.asarray(Image.open(f"{d}/rc.png"))
    rc_open = np.asarray(Image.open(f"{d}/rc_open.png"))
    cand = np.asarray(Image.open(f"{d}/candidates.png")) > 0
    fp8 = np.ones((3, 3), bool)
    timeit("reconstruction_8conn", repeats,
           lambda: morphology.reconstruction(np.minimum(rc_open, rc), rc, method="dilation",
                                             footprint=fp8))
    timeit("fill_holes_4conn", repeats, lambda: ndi.binary_fill_holes(cand))


if __name__ == "__main__":
    main()
