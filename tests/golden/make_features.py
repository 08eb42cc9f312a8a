#!/usr/bin/python3
"""Remake tests/golden/features/: the per-tile feature channels of
tests/data/tile_256.png computed with scikit-image and SciPy, independently of
wsisa. Every output is a float32 TIFF.

  hed_128.tiff    top-left 128x128 crop of skimage.color.separate_stains with the inverse of the H&E
                  matrix (skimage's rgb_from_hed H and E rows, residual = their
                  normalised cross product), times 6: skimage divides the
                  density by -ln(1e-6) = 6 ln 10 where wsisa takes log10, and
                  clips at 0 where wsisa does not (3 channels H, E, residual)
  sobel_g.tiff    hypot of scipy.ndimage.sobel along x and y, mode 'nearest',
                  of the green channel as float32 g / 255 (the 128x128 crop)
  h_128.tiff      channel 0 of hed_128.tiff, top-left 128x128 crop (filter input)
  log_<s>.tiff    sigma^2 * scipy.ndimage.gaussian_laplace(h_128, s), mode
                  'reflect', truncate 4 (radius int(4 s + 0.5)), s = 1, 2, 4
"""
import os

import numpy as np
import tifffile
from scipy import ndimage
from skimage import io
from skimage.color import separate_stains

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "features")
CROP = 128


def f32_tiff(name, img):
    img = img.astype(np.float32)
    extra = {"photometric": "rgb", "planarconfig": "contig"} if img.ndim == 3 else {
        "photometric": "minisblack"}
    tifffile.imwrite(os.path.join(OUT, name), img, **extra)


def main():
    os.makedirs(OUT, exist_ok=True)
    rgb = io.imread(os.path.join(HERE, "..", "data", "tile_256.png"))[..., :3]

    h_row = np.array([0.65, 0.70, 0.29])
    e_row = np.array([0.07, 0.99, 0.11])
    r_row = np.cross(h_row, e_row)
    r_row /= np.linalg.norm(r_row)
    stains = np.array([h_row, e_row, r_row])
    hed = separate_stains(rgb, np.linalg.inv(stains))[:CROP, :CROP] * 6.0
    f32_tiff("hed_128.tiff", hed)

    g = rgb[:CROP, :CROP, 1].astype(np.float32) / np.float32(255)
    gx = ndimage.sobel(g.astype(np.float64), axis=1, mode="nearest")
    gy = ndimage.sobel(g.astype(np.float64), axis=0, mode="nearest")
    f32_tiff("sobel_g.tiff", np.hypot(gx, gy))

    h = hed[..., 0].astype(np.float32)
    f32_tiff("h_128.tiff", h)
    for s in (1, 2, 4):
        resp = s * s * ndimage.gaussian_laplace(h.astype(np.float64), s, mode="reflect",
                                                truncate=4.0)
        f32_tiff("log_%d.tiff" % s, resp)


if __name__ == "__main__":
    main()
