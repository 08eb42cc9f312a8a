#!/usr/bin/python3
"""scikit-image / SciPy / NumPy peers for `wsisa-bench ops`: the same operations
on the same inputs, one thread. Prints "key median_ms min_ms max_ms" per
operation; the keys are those of the rows in bench/ops.c.
usage: peers_skimage.py DIR REPEATS

Which call matches which of our operations, and why:
- reconstruction_8conn: morphology.reconstruction(min(marker, mask), mask,
  method='dilation', 3x3 footprint) is our grey reconstruction by dilation;
  reconstruction_4conn the same with the cross.
- hminima_8conn: our h-minima *transform* (the relief with every minimum
  shallower than h filled) is the reconstruction by erosion of relief + h over
  relief: morphology.reconstruction(relief + 1, relief, method='erosion').
  morphology.h_minima is something else: the mask of the minima of that.
- regional_min_8conn: morphology.local_minima(connectivity=2,
  allow_borders=True) flags the plateaus with no strictly lower neighbour, our
  definition. (scipy.ndimage.minimum_filter == image flags single pixels,
  not plateaus.)
- distance_transform_edt: scipy.ndimage.distance_transform_edt, the exact
  Euclidean distance to the nearest zero pixel, as ours.
- fill_holes_4conn: scipy.ndimage.binary_fill_holes with its cross element.
- rgb2lab / lab2rgb: neither library has Reinhard's lαβ (their Lab is
  CIELAB), so the peer is the same formulas in NumPy, array-wide."""
import sys
import time

import numpy as np
import tifffile
from PIL import Image
from scipy import ndimage as ndi
from skimage import morphology

# codelets/cpu/reinhard.c
RGB2LMS = np.array([[0.3811, 0.5783, 0.0402], [0.1967, 0.7244, 0.0782],
                    [0.0241, 0.1288, 0.8444]])
S3, S6, S2 = 1 / np.sqrt(3.0), 1 / np.sqrt(6.0), 1 / np.sqrt(2.0)
LMS2LAB = np.array([[S3, S3, S3], [S6, S6, -2 * S6], [S2, -S2, 0.0]])
LAB2LMS = LMS2LAB.T
LMS2RGB = np.linalg.inv(RGB2LMS)
MEAN_T = np.array([-0.632356, -0.0516004, 0.0376543])
STD_T = np.array([0.26235, 0.0514831, 0.0114217])


def timeit(name, repeats, fn):
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    print(f"{name} {ms[len(ms) // 2]:.3f} {ms[0]:.3f} {ms[-1]:.3f}", flush=True)


def mix(m, a):
    """m · a per pixel, summed left to right as the C kernels do."""
    return [m[i, 0] * a[..., 0] + m[i, 1] * a[..., 1] + m[i, 2] * a[..., 2] for i in range(3)]


def rgb2lab(rgb):
    unit = rgb.astype(np.float64) / 255.0
    lg = np.stack([np.log10(np.maximum(c, 1e-6)) for c in mix(RGB2LMS, unit)], axis=-1)
    return np.stack(mix(LMS2LAB, lg), axis=-1).astype(np.float32)


def lab2rgb(lab, fg, rgb):
    sel = lab[fg].astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        lms = np.stack([np.power(10.0, c) for c in mix(LAB2LMS, sel)], axis=-1)
    lms[~np.isfinite(lms)] = 0.0
    c = np.clip(np.nan_to_num(np.stack(mix(LMS2RGB, lms), axis=-1) * 255.0), 0.0, 255.0)
    f = np.floor(c)
    out = rgb.copy()
    out[fg] = (f + (c - f >= 0.5)).astype(np.uint8)
    return out


def main():
    d, repeats = sys.argv[1], max(1, int(sys.argv[2]))
    raw = np.asarray(Image.open(f"{d}/tile.png").convert("RGB"))
    rc = np.asarray(Image.open(f"{d}/rc.png"))
    rc_open = np.asarray(Image.open(f"{d}/rc_open.png"))
    cand = np.asarray(Image.open(f"{d}/candidates.png")) > 0
    big = np.asarray(Image.open(f"{d}/big.png")) > 0
    relief = tifffile.imread(f"{d}/relief.tiff")
    hmin = tifffile.imread(f"{d}/hmin.tiff")
    fp8 = np.ones((3, 3), bool)
    fp4 = ndi.generate_binary_structure(2, 1)

    # the normalization's other steps, untimed: Fisher foreground, statistics,
    # colour transfer (codelets/cpu/fisher_fg.c, masked_stats.c, color_transfer.c)
    x = raw.astype(np.int64)
    fg = (x[..., 0] * 97 - x[..., 1] * 852 + x[..., 2] * 621 - 4169) > 0
    lab = rgb2lab(raw)
    sel = lab[fg].astype(np.float64)
    lab_t = lab.copy()
    if len(sel):
        lab_t[fg] = ((sel - sel.mean(0)) * STD_T / sel.std(0) + MEAN_T).astype(np.float32)

    timeit("rgb2lab", repeats, lambda: rgb2lab(raw))
    timeit("lab2rgb", repeats, lambda: lab2rgb(lab_t, fg, raw))
    timeit("reconstruction_8conn", repeats,
           lambda: morphology.reconstruction(np.minimum(rc_open, rc), rc, method="dilation",
                                             footprint=fp8))
    timeit("reconstruction_4conn", repeats,
           lambda: morphology.reconstruction(np.minimum(rc_open, rc), rc, method="dilation",
                                             footprint=fp4))
    timeit("fill_holes_4conn", repeats, lambda: ndi.binary_fill_holes(cand))
    timeit("distance_transform_edt", repeats, lambda: ndi.distance_transform_edt(big))
    timeit("hminima_8conn", repeats,
           lambda: morphology.reconstruction(relief + np.float32(1), relief, method="erosion",
                                             footprint=fp8))
    timeit("regional_min_8conn", repeats,
           lambda: morphology.local_minima(hmin, connectivity=2, allow_borders=True))


if __name__ == "__main__":
    main()
