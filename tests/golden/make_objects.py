#!/usr/bin/python3
"""Remake tests/golden/objects/: independent references for the objects group
(labelling, area filter, distance transform, watershed) on tests/data/tile_256.png,
from scikit-image, SciPy and OpenCV (Debian's /usr/bin/python3)."""
import os

import cv2
import numpy as np
import tifffile
from skimage import measure, morphology

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "objects")
THRESHOLD = 150  # nuclei: 255 - red above this


def raster_ids(labels):
    """Renumber 1..n in raster order of each component's first pixel."""
    ids, first = np.unique(labels.ravel(), return_index=True)
    keep = ids > 0
    order = ids[keep][np.argsort(first[keep])]
    lut = np.zeros(labels.max() + 1, np.int32)
    lut[order] = np.arange(1, len(order) + 1, dtype=np.int32)
    return lut[labels]


def area_filter(mask, conn, lo, hi):
    labels = measure.label(mask > 0, connectivity=1 if conn == 4 else 2)
    area = np.bincount(labels.ravel())
    keep = (area >= lo) & ((area < hi) if hi > 0 else True)
    keep[0] = False
    return (keep[labels] * 255).astype(np.uint8)


def save_tif(name, array):
    tifffile.imwrite(os.path.join(OUT, name), array, compression="zlib")


def main():
    os.makedirs(OUT, exist_ok=True)
    rgb = cv2.cvtColor(cv2.imread(os.path.join(HERE, "..", "data", "tile_256.png")),
                       cv2.COLOR_BGR2RGB)
    mask = ((255 - rgb[..., 0].astype(np.int32)) > THRESHOLD).astype(np.uint8) * 255
    cv2.imwrite(os.path.join(OUT, "mask.png"), mask)

    for conn in (4, 8):
        labels = measure.label(mask > 0, connectivity=1 if conn == 4 else 2)
        save_tif("labels_%d.tif" % conn, raster_ids(labels).astype(np.int32))
    for conn, lo, hi in ((8, 11, 1000), (4, 21, 1000), (8, 30, 0)):
        cv2.imwrite(os.path.join(OUT, "area_%d_%d_%d.png" % (conn, lo, hi)),
                    area_filter(mask, conn, lo, hi))

    dist = cv2.distanceTransform(mask, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    save_tif("edt.tif", dist.astype(np.float32))

    # Markers as the workflow makes them: regional maxima of the distance
    # (h = 1) labelled 8-connected, and the whole background one more marker.
    peaks = morphology.h_maxima(dist, 1) > 0
    markers = measure.label(peaks, connectivity=2).astype(np.int32)
    markers[mask == 0] = markers.max() + 1
    save_tif("markers.tif", markers)
    # cv2.watershed frames the image with lines: pad by one pixel so the frame
    # falls outside the tile, then crop.
    masked = rgb * (mask[..., None] > 0)
    padded = cv2.copyMakeBorder(masked, 1, 1, 1, 1, cv2.BORDER_REPLICATE)
    flooded = cv2.copyMakeBorder(markers, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    cv2.watershed(padded, flooded)
    flooded = flooded[1:-1, 1:-1]
    save_tif("watershed_labels.tif", flooded.astype(np.int32))
    cv2.imwrite(os.path.join(OUT, "watershed_mask.png"),
                ((mask > 0) & (flooded != -1)).astype(np.uint8) * 255)


if __name__ == "__main__":
    main()
