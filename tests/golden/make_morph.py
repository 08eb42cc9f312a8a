#!/usr/bin/python3
"""Remake tests/golden/morph/: the morphology operations computed independently
of wsisa (OpenCV 4.6, scikit-image, SciPy from Debian) on tests/data/tile_256.png.
u8 images are PNG, f32 images are TIFF; float inputs are a 128x128 crop to keep
the files small."""
import os

import cv2
import numpy as np
import scipy.ndimage as ndi
import tifffile
from skimage.morphology import local_minima, reconstruction

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "morph")
os.makedirs(OUT, exist_ok=True)
CROSS = ndi.generate_binary_structure(2, 1)  # conn 4
SQUARE = np.ones((3, 3), bool)               # conn 8
FOOT = {4: CROSS, 8: SQUARE}


def png(name, img):
    if img.dtype == bool:
        img = img.astype(np.uint8) * 255
    assert img.dtype == np.uint8
    cv2.imwrite(os.path.join(OUT, name + ".png"), img)


def tif(name, img):
    assert img.dtype == np.float32
    tifffile.imwrite(os.path.join(OUT, name + ".tif"), img, compression="zlib")


def ellipse(size):
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))


# OpenCV's elliptic elements 3..41, stacked top to bottom, left-aligned.
sizes = range(3, 42, 2)
stack = np.zeros((sum(sizes), max(sizes)), np.uint8)
y = 0
for s in sizes:
    stack[y:y + s, :s] = ellipse(s) * 255
    y += s
png("se_ellipse_3_41", stack)

rgb = cv2.cvtColor(cv2.imread(os.path.join(HERE, "..", "data", "tile_256.png")),
                   cv2.COLOR_BGR2RGB)
rc = (255 - rgb[:, :, 0]).astype(np.uint8)
png("rc", rc)

# Grey morphology with OpenCV's default border (outside pixels neutral).
OPS = {"erode": cv2.MORPH_ERODE, "dilate": cv2.MORPH_DILATE,
       "open": cv2.MORPH_OPEN, "close": cv2.MORPH_CLOSE}
for size in (3, 19):
    for name, op in OPS.items():
        png("%s_%d" % (name, size), cv2.morphologyEx(rc, op, ellipse(size)))
rc_open = cv2.morphologyEx(rc, cv2.MORPH_OPEN, ellipse(19))

# Grey reconstruction by dilation of rc_open under rc (docs/workflow.md level 2).
recon = {}
for conn in (4, 8):
    recon[conn] = reconstruction(rc_open, rc, method="dilation",
                                 footprint=FOOT[conn]).astype(np.uint8)
    png("recon_u8_%d" % conn, recon[conn])

# Candidates (level 3) and hysteresis masks (level 5) from the 8-conn result.
diff = cv2.subtract(rc, recon[8])
g1, g2 = diff > 80, diff > 45
png("bw_g1", g1)
png("bw_g2", g2)
for conn in (4, 8):
    # scipy floods the background with `structure`: the cross is conn 4.
    png("fill_holes_%d" % conn, ndi.binary_fill_holes(g1, structure=FOOT[conn]))
    png("bin_recon_%d" % conn,
        ndi.binary_propagation(g1 & g2, structure=FOOT[conn], mask=g2))


def fill_object_holes(mask, conn):
    """Holes (background conn-components off the border) filled only when the
    mask's pixels 8-next to them form one (12 - conn)-connected object."""
    objects, _ = ndi.label(mask, structure=FOOT[12 - conn])
    holes, n = ndi.label(~mask, structure=FOOT[conn])
    border = set(np.concatenate([holes[0], holes[-1], holes[:, 0], holes[:, -1]]).tolist())
    out = mask.copy()
    for h in range(1, n + 1):
        if h in border:
            continue
        hole = holes == h
        around = np.unique(objects[ndi.binary_dilation(hole, structure=SQUARE) & mask])
        if len(around) == 1:
            out |= hole
    return out


# Level 7's hole filling, on nuclei turned into rings around islands: the
# hysteresis mask's outline (2 pixels) and its core (eroded 4 times).
rings = (g2 & ~ndi.binary_erosion(g2, CROSS, iterations=2)) | \
    ndi.binary_erosion(g2, CROSS, iterations=4)
png("bw_rings", rings)
for conn in (4, 8):
    png("fill_object_holes_%d" % conn, fill_object_holes(rings, conn))

# Float operations on a 128x128 crop.
crop = (slice(64, 192), slice(64, 192))
smooth = ndi.gaussian_filter(rc[crop].astype(np.float32), 2.0).astype(np.float32)
tif("f32_mask", smooth)
tif("f32_marker", (smooth - np.float32(7.5)).astype(np.float32))
for conn in (4, 8):
    tif("recon_f32_%d" % conn,
        reconstruction(smooth - np.float32(7.5), smooth, method="dilation",
                       footprint=FOOT[conn]).astype(np.float32))

# -distance of the hysteresis mask with background -FLT_MAX, as level 6 feeds
# the h-minima transform (h = 1); then its regional minima.
fg = ndi.binary_fill_holes(g2[crop])
negdist = (-ndi.distance_transform_edt(fg)).astype(np.float32)
negdist[~fg] = -np.finfo(np.float32).max
tif("negdist", negdist)
for conn in (4, 8):
    marker = (negdist + np.float32(1.0)).astype(np.float32)
    hmin = reconstruction(marker, negdist, method="erosion",
                          footprint=FOOT[conn]).astype(np.float32)
    tif("hmin_%d" % conn, hmin)
    png("regional_min_%d" % conn,
        local_minima(hmin, connectivity=conn // 4, allow_borders=True))
    png("regional_min_smooth_%d" % conn,
        local_minima(smooth, connectivity=conn // 4, allow_borders=True))
