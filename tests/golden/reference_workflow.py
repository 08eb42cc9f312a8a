#!/usr/bin/python3
"""An independent reference of the wsisa workflow (docs/workflow.md), written
with NumPy, SciPy, scikit-image and OpenCV only. It makes the golden masks the
end-to-end tests compare against; wsisa never runs it.

usage: reference_workflow.py TILE.png OUT.png [name=value ...] [--no-normalize]
"""
import sys

import cv2
import numpy as np
from scipy import ndimage as ndi
from skimage import measure, morphology

DEFAULTS = dict(B=220, G=220, R=220, T1=5.0, T2=4.0, G1=80, G2=45,
                min_size=11, max_size=1000, min_size_pl=30, min_size_seg=21,
                max_size_seg=1000, fill_holes_conn=4, recon_conn=8,
                watershed_conn=8)

M1 = np.array([-0.154, 0.035, 0.549, -45.718])
M2 = np.array([-0.057, -0.817, 1.170, -49.887])
RGB2LMS = np.array([[0.3811, 0.5783, 0.0402],
                    [0.1967, 0.7244, 0.0782],
                    [0.0241, 0.1288, 0.8444]])
LMS2LAB = np.diag([1 / np.sqrt(3), 1 / np.sqrt(6), 1 / np.sqrt(2)]) @ \
    np.array([[1, 1, 1], [1, 1, -2], [1, -1, 0]], dtype=float)
MEAN_T = np.array([-0.632356, -0.0516004, 0.0376543])
STD_T = np.array([0.26235, 0.0514831, 0.0114217])
LOG_FLOOR = 1e-6   # log10 of a zero LMS component is taken at this floor


def normalize(rgb):
    h, w, _ = rgb.shape
    x = np.concatenate([rgb.reshape(-1, 3).astype(float), np.ones((h * w, 1))], 1)
    fg = (x @ M1) < (x @ M2)
    lms = (rgb.reshape(-1, 3) / 255.0) @ RGB2LMS.T
    lab = np.log10(np.maximum(lms, LOG_FLOOR)) @ LMS2LAB.T
    if fg.sum() > 0:
        mean = lab[fg].mean(0)
        std = lab[fg].std(0)
        ok = std > 0
        t = lab[fg].copy()
        t[:, ok] = (t[:, ok] - mean[ok]) * STD_T[ok] / std[ok] + MEAN_T[ok]
        lab[fg] = t
    loglms = lab @ np.linalg.inv(LMS2LAB).T
    out = (10.0 ** loglms) @ np.linalg.inv(RGB2LMS).T * 255.0
    out = np.floor(np.clip(out, 0, 255) + 0.5).astype(np.uint8)
    res = rgb.reshape(-1, 3).copy()
    res[fg] = out[fg]
    return res.reshape(h, w, 3)


def footprint(conn):
    return ndi.generate_binary_structure(2, 1 if conn == 4 else 2)


def bin_recon(seed, mask, conn):
    lab, _ = ndi.label(mask, structure=footprint(conn))
    keep = np.unique(lab[seed & mask])
    return np.isin(lab, keep[keep > 0])


def fill_holes(mask, conn):
    # background reachable from the border with `conn` stays background
    bg = ~mask
    lab, _ = ndi.label(bg, structure=footprint(conn))
    border = np.unique(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    return ~np.isin(lab, border[border > 0])


def fill_object_holes(mask, conn):
    """fill_holes, each hole filled only when the mask's pixels 8-next to it
    form one (12 - conn)-connected object: objects are never joined."""
    objects, _ = ndi.label(mask, structure=footprint(12 - conn))
    holes, n = ndi.label(~mask, structure=footprint(conn))
    border = set(np.concatenate([holes[0], holes[-1], holes[:, 0], holes[:, -1]]).tolist())
    out = mask.copy()
    for h, where in enumerate(ndi.find_objects(holes), start=1):
        if h in border or where is None:
            continue
        # the hole's box grown by one pixel holds every pixel next to it
        box = tuple(slice(max(s.start - 1, 0), s.stop + 1) for s in where)
        hole = holes[box] == h
        around = ndi.binary_dilation(hole, structure=footprint(8)) & mask[box]
        if len(np.unique(objects[box][around])) == 1:
            out[box] |= hole
    return out


def separate_corners(regions, mask):
    """Regions of the mask touching at a corner: the later pixel in raster
    order leaves the mask, so that regions stay apart under 8-connectivity."""
    lab = np.where(mask, regions, 0)
    ul = np.zeros_like(lab)
    ul[1:, 1:] = lab[:-1, :-1]
    ur = np.zeros_like(lab)
    ur[1:, :-1] = lab[:-1, 1:]
    meets = ((ul > 0) & (ul != lab)) | ((ur > 0) & (ur != lab))
    return mask & ~((lab > 0) & meets)


def area_filter(mask, conn, lo, hi=None):
    lab, n = ndi.label(mask, structure=footprint(conn))
    areas = np.bincount(lab.ravel(), minlength=n + 1)
    ok = areas >= lo
    if hi is not None:
        ok &= areas < hi
    ok[0] = False
    return ok[lab]


def ellipse(size):
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))


def segment(rgb, p):
    r = rgb[..., 0].astype(np.float64)
    g = rgb[..., 1].astype(np.float64)
    b = rgb[..., 2].astype(np.float64)
    eps = np.finfo(np.float32).eps
    # level 1: background and red blood cells
    bg = (b > p["B"]) & (g > p["G"]) & (r > p["R"])
    if bg.sum() >= 0.9 * bg.size:
        return np.zeros(bg.shape, bool)
    rg = r / (g + eps)
    rbc = bin_recon(rg > p["T1"], rg > p["T2"], 8) & (r / (b + eps) > 1.0)
    # level 2: reconstruction
    rc = (255 - rgb[..., 0]).astype(np.uint8)
    rc_open = cv2.morphologyEx(rc, cv2.MORPH_OPEN, ellipse(19))
    rc_recon = morphology.reconstruction(np.minimum(rc_open, rc), rc, method="dilation",
                                         footprint=footprint(p["recon_conn"])).astype(np.uint8)
    # level 3: candidates
    diff = cv2.subtract(rc, rc_recon)
    bw1 = fill_holes(diff > p["G1"], p["fill_holes_conn"])
    # level 4: candidate size
    bw1 = area_filter(bw1, 8, p["min_size"], p["max_size"])
    if not bw1.any():
        return bw1
    # level 5: hysteresis
    bw2 = bin_recon(bw1, diff > p["G2"], 8) & ~rbc
    bw2 = fill_holes(bw2, 4)
    bw2 = cv2.morphologyEx(bw2.astype(np.uint8) * 255, cv2.MORPH_OPEN, ellipse(3)) > 0
    # level 6: separation
    big = area_filter(bw2, 8, p["min_size_pl"])
    big = cv2.dilate(big.astype(np.uint8) * 255, ellipse(3)) > 0
    dist = cv2.distanceTransform(big.astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    nd = -dist
    nd[~big] = -np.finfo(np.float32).max
    hmin = morphology.reconstruction(nd + 1.0, nd, method="erosion", footprint=footprint(8))
    minima = morphology.local_minima(hmin, connectivity=2, allow_borders=True)
    markers = measure.label(minima, connectivity=1 if p["watershed_conn"] == 4 else 2)
    nuclei = rgb.copy()
    nuclei[~big] = 0
    # cv::watershed marks the image's outermost pixels as lines; pad by one
    # pixel so that artefact falls outside the tile
    bgr = cv2.copyMakeBorder(np.ascontiguousarray(nuclei[..., ::-1]), 1, 1, 1, 1,
                             cv2.BORDER_CONSTANT, value=0)
    mk = cv2.copyMakeBorder(markers.astype(np.int32), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    ws = cv2.watershed(bgr, mk)[1:-1, 1:-1]
    # cv::watershed's lines let regions touch at corners; the workflow asks for
    # regions apart under 8-connectivity too
    sep = separate_corners(ws, big & (ws > 0))
    # level 7: final size, holes filled object by object
    final = area_filter(sep, 4, p["min_size_seg"], p["max_size_seg"])
    return fill_object_holes(final, p["fill_holes_conn"])


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    normalize_first = "--no-normalize" not in argv
    src, dst = args[0], args[1]
    p = dict(DEFAULTS)
    for kv in args[2:]:
        k, v = kv.split("=")
        p[k] = type(DEFAULTS[k])(float(v)) if isinstance(DEFAULTS[k], int) else float(v)
    rgb = cv2.cvtColor(cv2.imread(src, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    if normalize_first:
        rgb = normalize(rgb)
    mask = segment(rgb, p)
    cv2.imwrite(dst, mask.astype(np.uint8) * 255)
    print(f"{dst}: {int(mask.sum())} nucleus pixels")


if __name__ == "__main__":
    main(sys.argv)
