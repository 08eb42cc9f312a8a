#!/usr/bin/python3
"""Make tests/data/CMU-1-Small-Region.nuclei.geojson: the nuclei of a region of
the sample slide as GeoJSON polygons in level-0 pixel coordinates (QuPath's
export format), the reference of the annotation tests and of the figures in
README.md.

How the annotation is made (not an expert's: a classical pipeline of its own,
independent of wsisa's segmentation, whose result was looked over by eye):
  1. the slide's level 0 read with Pillow (not OpenSlide);
  2. haematoxylin by colour deconvolution (scikit-image rgb2hed), smoothed
     (Gaussian, sigma 1);
  3. nuclei = H above the Otsu threshold of the region's tissue, holes
     filled, opened by a disk of radius 1, pieces under MIN_AREA pixels
     dropped;
  4. touching nuclei split by a watershed of the distance transform from its
     local maxima (at least MIN_DISTANCE pixels apart);
  5. each nucleus outlined by marching squares at level 0.5 on its own mask
     (skimage find_contours), vertices on the half-pixel lattice, so the
     outline passes between the nucleus's pixel centres and those around it,
     then simplified (Douglas-Peucker, tolerance 0.5 pixel) as a hand-drawn
     outline has fewer vertices;
  6. objects centred in DROP_BOX are left out: the dark band of keratinised
     epidermis at the region's lower right, which the threshold takes for
     nuclei (seen on the overlay).
The region is annotated exhaustively: every nucleus with a pixel in it is in
the file (an outline may reach past the region). Run from anywhere; writes
the file, an overlay PNG for a look (not committed), and prints the count."""
import json
import os
import sys

import numpy as np
from PIL import Image
from scipy import ndimage as ndi
from skimage import color, feature, filters, measure, morphology, segmentation

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
SLIDE = os.path.join(DATA, "CMU-1-Small-Region.svs")
OUT = os.path.join(DATA, "CMU-1-Small-Region.nuclei.geojson")
REGION = (1024, 768, 256, 512)  # x, y, width, height at level 0
MARGIN = 24                     # pixels read around it, so nuclei on its edge are whole
MIN_AREA = 30
MAX_AREA = 1500
MIN_DISTANCE = 7
THRESHOLD = filters.threshold_li  # Otsu (0.115 here) misses the paler nuclei
DROP_BOX = (1268, 1198, 1400, 1400)  # level-0 x0, y0, x1, y1: not nuclei


def nuclei(rgb):
    h = color.rgb2hed(rgb)[..., 0]
    h = filters.gaussian(h, sigma=1)
    tissue = rgb.mean(axis=2) < 220
    t = THRESHOLD(h[tissue])
    mask = (h > t) & tissue
    mask = ndi.binary_fill_holes(mask)
    mask = morphology.binary_opening(mask, morphology.disk(1))
    mask = morphology.remove_small_objects(mask, MIN_AREA)
    dist = ndi.distance_transform_edt(mask)
    lab0 = measure.label(mask, connectivity=2)
    peaks = feature.peak_local_max(dist, min_distance=MIN_DISTANCE, labels=lab0,
                                   exclude_border=False)
    markers = np.zeros(mask.shape, np.int32)
    markers[tuple(peaks.T)] = np.arange(1, len(peaks) + 1)
    lab = segmentation.watershed(-dist, markers, mask=mask)
    # pieces a split left too small, or too large to be one nucleus
    areas = np.bincount(lab.ravel())
    keep = (areas >= MIN_AREA) & (areas <= MAX_AREA)
    keep[0] = False
    lab = np.where(keep[lab], lab, 0)
    lab, _, _ = segmentation.relabel_sequential(lab)
    return lab


def outline(obj, x0, y0):
    """The outer contour of one object's mask, as a closed ring of level-0
    corner-lattice coordinates (pixel (i, j) spans [i, i+1) x [j, j+1))."""
    padded = np.pad(obj, 1)
    contours = measure.find_contours(padded.astype(float), 0.5)
    ring = measure.approximate_polygon(max(contours, key=len), tolerance=0.5)
    # find_contours gives (row, col) with pixel centres at integers; the pad
    # shifts by one; a centre is at corner coordinate + 0.5
    pts = [[round(x0 + c - 1 + 0.5, 3), round(y0 + r - 1 + 0.5, 3)] for r, c in ring]
    if pts[0] != pts[-1]:
        pts.append(pts[0])
    return pts


def main():
    Image.MAX_IMAGE_PIXELS = None
    slide = np.asarray(Image.open(SLIDE).convert("RGB"))
    x, y, w, h = REGION
    X0, Y0 = max(0, x - MARGIN), max(0, y - MARGIN)
    X1, Y1 = min(slide.shape[1], x + w + MARGIN), min(slide.shape[0], y + h + MARGIN)
    rgb = slide[Y0:Y1, X0:X1]
    lab = nuclei(rgb)
    features = []
    overlay = rgb.copy()
    for region in measure.regionprops(lab):
        cy, cx = region.centroid
        if DROP_BOX[0] <= X0 + cx < DROP_BOX[2] and DROP_BOX[1] <= Y0 + cy < DROP_BOX[3]:
            continue
        r0, c0, r1, c1 = region.bbox
        # a nucleus belongs to the region when one of its pixels does
        ys, xs = np.nonzero(lab[r0:r1, c0:c1] == region.label)
        gx, gy = xs + c0 + X0, ys + r0 + Y0
        if not np.any((gx >= x) & (gx < x + w) & (gy >= y) & (gy < y + h)):
            continue
        obj = lab[r0:r1, c0:c1] == region.label
        ring = outline(obj, X0 + c0, Y0 + r0)
        features.append({"type": "Feature",
                         "geometry": {"type": "Polygon", "coordinates": [ring]},
                         "properties": {"objectType": "annotation",
                                        "classification": {"name": "Nucleus"}}})
        edge = obj & ~ndi.binary_erosion(obj)
        overlay[r0:r1, c0:c1][edge] = (0, 255, 0)
    with open(OUT, "w") as f:
        json.dump({"type": "FeatureCollection", "features": features}, f, indent=None,
                  separators=(",", ":"))
        f.write("\n")
    Image.fromarray(overlay[y - Y0:y - Y0 + h, x - X0:x - X0 + w]).save(
        os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp", "annotation_overlay.png"))
    print("%d nuclei in level-0 region %s -> %s" % (len(features), REGION, OUT))


if __name__ == "__main__":
    main()
