#!/usr/bin/python3
"""Golden per-nucleus features for tests/test_codelets_nucleus.c, by scikit-image
regionprops and NumPy on the labels of tests/data/tile_256.png (made by
`wsisa segment tests/data/tile_256.png --labels`, committed as
nucleus/tile_256_labels.tif). Channels: red / 255 and green / 255 as float32.
Writes nucleus/tile_256_features.csv (columns as wsisa_nf_shape_names, then
c0_mean, c0_std, c0_median, c0_energy, c1_...)."""
import csv
import math
import os

import numpy as np
from skimage import io, measure

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
labels = io.imread(os.path.join(here, "nucleus", "tile_256_labels.tif")).astype(np.int32)
rgb = io.imread(os.path.join(root, "tests", "data", "tile_256.png"))[:, :, :3]
channels = [(rgb[:, :, c].astype(np.float32) / np.float32(255)) for c in (0, 1)]

shape = ["label", "centroid_x", "centroid_y", "bbox_x", "bbox_y", "bbox_w", "bbox_h", "area",
         "perimeter", "equivalent_diameter", "major_axis_length", "minor_axis_length",
         "eccentricity", "orientation", "convex_area", "solidity"]
header = shape + [f"c{c}_{s}" for c in range(2) for s in ("mean", "std", "median", "energy")]
with open(os.path.join(here, "nucleus", "tile_256_features.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(header)
    for p in measure.regionprops(labels):
        r0, c0, r1, c1 = p.bbox
        row = [p.label, p.centroid[1], p.centroid[0], c0, r0, c1 - c0, r1 - r0, p.area,
               p.perimeter, p.equivalent_diameter, p.major_axis_length, p.minor_axis_length,
               p.eccentricity, p.orientation, p.convex_area, p.solidity]
        for ch in channels:
            v = ch[labels == p.label].astype(np.float64)
            row += [v.mean(), v.std(), float(np.median(v)), float(np.mean(v * v))]
        w.writerow([repr(float(x)) if not isinstance(x, (int, np.integer)) else int(x)
                    for x in row])
