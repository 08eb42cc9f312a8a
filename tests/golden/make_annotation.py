#!/usr/bin/python3
"""Golden data of the reference annotations (io/annotation.c), made
independently with NumPy: every pixel centre tested against every edge, no
scanlines, no sorting.

Writes into tests/golden/annotation/:
  shapes.geojson   hand-made nuclei on a 200x150 level-0 slide: a rectangle, a
                   fractional triangle, a polygon with a hole, a MultiPolygon,
                   a self-intersecting bow-tie, a feature overlapping an
                   earlier one, a diamond whose edges run through pixel
                   centres, one too small to hold a pixel centre, horizontal
                   edges on centre rows, one on the slide's far corner, a
                   concave one with a repeated vertex
  labels.png       16-bit instance labels (ids 2, 7, 300, 65535; one id in two
                   pieces) placed at origin (10.5, 3), 1.5 level-0 pixels each
  labels32.tif     the same as unsigned 32-bit labels, ids past 65535
  mask.png         a binary mask (0/255) whose 8-connected components are the
                   nuclei (two touch only at a corner), 2 level-0 pixels each
  run.png          a hand-made "run" (16-bit labels) to match with shapes
  <case>.png       the expected reference of each case (16-bit, labels 1..n in
                   raster order of first pixels)
  cases.txt        one line per case:
                   name kind source width0 height0 origin_x origin_y downsample
                   level_downsample factor x y w h objects
  metrics.txt      the object-matching fields of run.png against the shapes
                   case "shapes_whole" (tests/golden/make_object_metrics.py's
                   independent computation), then object Dice, F1 and AJI
It also rasterises the sample's annotation (tests/data/
CMU-1-Small-Region.nuclei.geojson, made by make_sample_annotation.py) on its
two tiles of 256 at 0.499 um/pixel.

The rules (io/annotation.c): the centre of target pixel i of a tile at target
x is ((x + i) + 0.5) * step in level-0 pixels, step = level_downsample *
factor; a centre is in a polygon when an odd number of its rings' edges
(x1, y1)-(x2, y2) with (y1 > yc) != (y2 > yc) have
xc < x1 + (yc - y1) * (x2 - x1) / (y2 - y1); a feature is the union of its
polygons; the first feature in the file wins a pixel; a label image gives
pixel (floor((xc - ox) / d), floor((yc - oy) / d))."""
import json
import os
import sys

import numpy as np
import tifffile
from PIL import Image
from skimage import measure

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "annotation")
sys.path.insert(0, HERE)
from make_object_metrics import metrics, summary  # noqa: E402

W0, H0 = 200, 150


def ring(*pts):
    pts = [list(p) for p in pts]
    return pts + [pts[0]]


def polygon(*rings):
    return {"type": "Polygon", "coordinates": list(rings)}


SHAPES = [
    polygon(ring((10, 10), (30, 10), (30, 25), (10, 25))),
    polygon(ring((40.3, 5.7), (70.9, 12.2), (47.1, 33.8))),
    polygon(ring((80, 10), (120, 10), (120, 45), (80, 45)),
            ring((90, 20), (105.5, 20), (105.5, 35.5), (90, 35.5))),
    {"type": "MultiPolygon",
     "coordinates": [[ring((130, 10), (140, 10), (140, 20), (130, 20))],
                     [ring((150.5, 12.5), (160.5, 12.5), (155.5, 24.5))]]},
    polygon(ring((10, 50), (40, 80), (40, 50), (10, 80))),
    polygon(ring((25, 20), (45, 20), (45, 40), (25, 40))),
    polygon(ring((60.5, 50.5), (70.5, 60.5), (60.5, 70.5), (50.5, 60.5))),
    polygon(ring((100.1, 100.1), (100.4, 100.1), (100.4, 100.4))),
    polygon(ring((80.2, 60.5), (95.7, 60.5), (95.7, 75.5), (80.2, 75.5))),
    polygon(ring((185, 135), (200, 135), (200, 150), (185, 150))),
    polygon(ring((110, 60), (130, 60), (130, 60), (130, 90), (120, 70), (110, 90))),
]


def canonical(lab):
    """Labels > 0 renumbered 1..n in raster order of their first pixel."""
    out = np.zeros(lab.shape, np.int64)
    flat, new = lab.ravel(), {}
    for i, v in enumerate(flat):
        if v > 0:
            new.setdefault(int(v), len(new) + 1)
    for v, n in new.items():
        out[lab == v] = n
    return out, len(new)


def centres(x, w, step):
    return (np.arange(x, x + w, dtype=np.float64) + 0.5) * step


def polygons_of(geometry):
    if geometry["type"] == "Polygon":
        return [geometry["coordinates"]]
    return geometry["coordinates"]


def raster_geojson(features, x, y, w, h, step):
    X, Y = np.meshgrid(centres(x, w, step), centres(y, h, step))
    lab = np.zeros((h, w), np.int64)
    for k, f in enumerate(features, start=1):
        covered = np.zeros((h, w), bool)
        for poly in polygons_of(f["geometry"]):
            odd = np.zeros((h, w), bool)
            for r in poly:
                for (x1, y1), (x2, y2) in zip(r[:-1], r[1:]):
                    x1, y1, x2, y2 = float(x1), float(y1), float(x2), float(y2)
                    cross = (y1 > Y) != (y2 > Y)
                    if not cross.any():
                        continue
                    with np.errstate(divide="ignore", invalid="ignore"):
                        xi = x1 + (Y - y1) * (x2 - x1) / (y2 - y1)
                    odd ^= cross & (X < xi)
            covered |= odd
        lab[(lab == 0) & covered] = k
    return canonical(lab)


def raster_labels(img, ox, oy, d, x, y, w, h, step):
    cols = np.floor((centres(x, w, step) - ox) / d).astype(np.int64)
    rows = np.floor((centres(y, h, step) - oy) / d).astype(np.int64)
    assert cols.min() >= 0 and rows.min() >= 0
    assert cols.max() < img.shape[1] and rows.max() < img.shape[0]
    return canonical(img[rows][:, cols])


def save16(path, lab):
    assert lab.max() < 65536
    Image.fromarray(lab.astype(np.uint16)).save(path)


def main():
    os.makedirs(OUT, exist_ok=True)
    features = [{"type": "Feature", "geometry": g, "properties": {"objectType": "annotation"}}
                for g in SHAPES]
    with open(os.path.join(OUT, "shapes.geojson"), "w") as f:
        json.dump({"type": "FeatureCollection", "features": features}, f, indent=1)
        f.write("\n")
    labels = np.zeros((40, 60), np.uint16)
    labels[2:12, 3:20] = 7
    labels[15:30, 25:40] = 300
    labels[5:9, 45:58] = 65535
    labels[32:38, 5:15] = 65535  # the same nucleus id in a second piece
    yy, xx = np.mgrid[0:40, 0:60]
    labels[(yy - 25) ** 2 + (xx - 10) ** 2 <= 36] = 2
    save16(os.path.join(OUT, "labels.png"), labels)
    labels32 = labels.astype(np.uint32)
    labels32[labels == 65535] = 100000
    labels32[labels == 300] = 3000000000 // 1000  # 3e6
    tifffile.imwrite(os.path.join(OUT, "labels32.tif"), labels32)
    mask = np.zeros((20, 30), np.uint8)
    mask[2:6, 2:6] = 255
    mask[6:9, 6:10] = 255  # touches the first only at a corner: one nucleus
    mask[12:18, 3:8] = 255
    mask[10:16, 15:27] = 255
    mask[12:14, 18:22] = 0  # a hole stays a hole
    Image.fromarray(mask).save(os.path.join(OUT, "mask.png"))
    mask_labels = measure.label(mask > 0, connectivity=2)

    cases = []  # name kind source ox oy d level_downsample factor x y w h

    def geo(name, ld, factor, x, y, w, h):
        lab, n = raster_geojson(features, x, y, w, h, ld * factor)
        cases.append((name, "geojson", "shapes.geojson", W0, H0, 0, 0, 1, ld, factor, x, y, w,
                      h, n, lab))

    geo("shapes_whole", 1, 1, 0, 0, 200, 150)
    geo("shapes_tile", 1, 1, 35, 15, 64, 48)
    geo("shapes_factor2", 1, 2, 0, 0, 100, 75)
    geo("shapes_step2_5", 2, 1.25, 4, 3, 30, 20)
    for name, ld, factor, x, y, w, h in [("labels_step1", 1, 1, 12, 4, 80, 55),
                                         ("labels_step2", 1, 2, 6, 2, 40, 28)]:
        lab, n = raster_labels(labels, 10.5, 3, 1.5, x, y, w, h, ld * factor)
        cases.append((name, "labels", "labels.png", W0, H0, 10.5, 3, 1.5, ld, factor, x, y, w,
                      h, n, lab))
    lab, n = raster_labels(labels32, 10.5, 3, 1.5, 12, 4, 80, 55, 1)
    cases.append(("labels32_step1", "labels", "labels32.tif", W0, H0, 10.5, 3, 1.5, 1, 1, 12, 4,
                  80, 55, n, lab))
    lab, n = raster_labels(mask_labels, 0, 0, 2, 0, 0, 60, 40, 1)
    cases.append(("mask_step1", "mask", "mask.png", W0, H0, 0, 0, 2, 1, 1, 0, 0, 60, 40, n,
                  lab))
    # the sample's annotation on its two tiles (0.499 um/pixel: read as it is)
    with open(os.path.join(HERE, "..", "data", "CMU-1-Small-Region.nuclei.geojson")) as f:
        sample = json.load(f)["features"]
    for name, y in [("sample_1024_768", 768), ("sample_1024_1024", 1024)]:
        lab, n = raster_geojson(sample, 1024, y, 256, 256, 1.0)
        cases.append((name, "geojson", "../../data/CMU-1-Small-Region.nuclei.geojson", 2220,
                      2967, 0, 0, 1, 1, 1, 1024, y, 256, 256, n, lab))

    with open(os.path.join(OUT, "cases.txt"), "w") as out:
        for c in cases:
            save16(os.path.join(OUT, c[0] + ".png"), c[-1])
            out.write(" ".join(str(v) for v in c[:-1]) + "\n")
            print(c[0], "objects", c[-2])

    # a "run" to match with the whole-slide shapes: some objects close to the
    # reference's, some split, shifted or missing, and some extra
    run = np.zeros((150, 200), np.int64)
    run[10:25, 11:31] = 1          # the rectangle, shifted by one
    run[20:40, 80:100] = 2         # half of the holed polygon ...
    run[20:40, 100:120] = 3        # ... and its other half
    run[10:20, 130:140] = 4        # the MultiPolygon's square
    run[52:70, 52:70] = 5          # over the diamond
    run[100:120, 20:40] = 6        # nothing there
    run[135:150, 185:200] = 7      # the far corner
    run[60:76, 81:96] = 8          # the horizontal-edged one
    run, _ = canonical(run)
    save16(os.path.join(OUT, "run.png"), run)
    ref = cases[0][-1]
    v = metrics(ref, run)
    dice, f1, aji = summary(v)
    with open(os.path.join(OUT, "metrics.txt"), "w") as out:
        out.write("shapes_whole run.png " + " ".join(str(x) for x in v) +
                  f" {dice:.9f} {f1:.9f} {aji:.9f}\n")
    print("run vs shapes:", v, f"dice {dice:.4f} f1 {f1:.4f} aji {aji:.4f}")


if __name__ == "__main__":
    main()
