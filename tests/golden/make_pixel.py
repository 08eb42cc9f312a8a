#!/usr/bin/python3
"""Remake tests/golden/pixel/: the normalization chain and the per-pixel
operations of docs/workflow.md computed on tests/data/tile_256.png with NumPy
(float64 throughout) and OpenCV, independently of wsisa.

Outputs (masks are u8 0/255 PNG, f32 images are TIFF):
  fisher_fg.png        Fisher foreground M1.x < M2.x, x = (R, G, B, 1)
  lab_128.tiff         Reinhard l-alpha-beta of the top-left 128x128 crop
  stats.txt            count, mean[3], std[3] of l-alpha-beta over fisher_fg
  transfer_128.tiff    colour-transferred l-alpha-beta, top-left 128x128
  normalized.png       the whole normalization (RGB)
  background_*.png     b > B & g > G & r > R
  ratio_*.png          c_num / (c_den + eps) > T, eps = float32 epsilon
  threshold_g150.png   green > 150
  sub_sat_g_r.png      max(green - red, 0)
  logic_{and,or,andnot}.png   background_220 op ratio_rb_1
  compare.txt          |A&B| |A| |B| for A = background_220, B = ratio_rb_1
"""
import os
import sys

import cv2
import numpy as np
import tifffile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pixel")
sys.path.insert(0, HERE)
import reference_workflow  # noqa: E402  (constants, and a cross-check of the chain)

# The constants of docs/workflow.md, as the workflow reference spells them.
M1, M2 = reference_workflow.M1, reference_workflow.M2
RGB2LMS, LMS2LAB = reference_workflow.RGB2LMS, reference_workflow.LMS2LAB
MEAN_T, STD_T = reference_workflow.MEAN_T, reference_workflow.STD_T
LMS_FLOOR = reference_workflow.LOG_FLOOR
EPS = float(np.finfo(np.float32).eps)
CROP = 128


def mask_png(name, mask):
    cv2.imwrite(os.path.join(OUT, name), mask.astype(np.uint8) * 255)


def f32_tiff(name, img):
    tifffile.imwrite(os.path.join(OUT, name), img.astype(np.float32),
                     photometric="rgb", planarconfig="contig")


def main():
    os.makedirs(OUT, exist_ok=True)
    rgb = cv2.cvtColor(cv2.imread(os.path.join(HERE, "..", "data", "tile_256.png")),
                       cv2.COLOR_BGR2RGB)
    h, w, _ = rgb.shape
    x = rgb.reshape(-1, 3).astype(float)
    r, g, b = (rgb[..., i].astype(float) for i in range(3))

    # Normalization, step by step.
    xa = np.concatenate([x, np.ones((h * w, 1))], 1)
    fg = ((xa @ M1) < (xa @ M2)).reshape(h, w)
    mask_png("fisher_fg.png", fg)
    lab = (np.log10(np.maximum((x / 255.0) @ RGB2LMS.T, LMS_FLOOR)) @ LMS2LAB.T
           ).reshape(h, w, 3)
    f32_tiff("lab_128.tiff", lab[:CROP, :CROP])
    sel = lab[fg]
    count, mean, std = len(sel), sel.mean(0), sel.std(0)
    with open(os.path.join(OUT, "stats.txt"), "w") as f:
        f.write(" ".join(repr(float(v)) for v in [count, *mean, *std]) + "\n")
    transfer = lab.copy()
    transfer[fg] = (sel - mean) * STD_T / std + MEAN_T
    f32_tiff("transfer_128.tiff", transfer[:CROP, :CROP])
    back = (10.0 ** (transfer.reshape(-1, 3) @ np.linalg.inv(LMS2LAB).T)) @ \
        np.linalg.inv(RGB2LMS).T * 255.0
    back = np.floor(np.clip(back, 0, 255) + 0.5).astype(np.uint8).reshape(h, w, 3)
    normalized = np.where(fg[..., None], back, rgb)
    cv2.imwrite(os.path.join(OUT, "normalized.png"), normalized[..., ::-1])
    ref = reference_workflow.normalize(rgb)
    print("normalized.png: %d pixels differ from reference_workflow.normalize"
          % int((ref != normalized).any(2).sum()))

    # Per-pixel segmentation operations.
    bg = (b > 220) & (g > 220) & (r > 220)
    mask_png("background_220.png", bg)
    mask_png("background_210_220_230.png", (b > 210) & (g > 220) & (r > 230))
    rb1 = r / (b + EPS) > 1.0
    mask_png("ratio_rg_5.png", r / (g + EPS) > 5.0)
    mask_png("ratio_rg_4.png", r / (g + EPS) > 4.0)
    mask_png("ratio_rb_1.png", rb1)
    mask_png("ratio_bg_2.png", b / (g + EPS) > 2.0)
    mask_png("threshold_g150.png", rgb[..., 1] > 150)
    cv2.imwrite(os.path.join(OUT, "sub_sat_g_r.png"), cv2.subtract(rgb[..., 1], rgb[..., 0]))
    mask_png("logic_and.png", bg & rb1)
    mask_png("logic_or.png", bg | rb1)
    mask_png("logic_andnot.png", bg & ~rb1)
    with open(os.path.join(OUT, "compare.txt"), "w") as f:
        f.write("%d %d %d\n" % ((bg & rb1).sum(), bg.sum(), rb1.sum()))
    print("fg %.4f, background %.4f, r/b>1 %.4f" % (fg.mean(), bg.mean(), rb1.mean()))


if __name__ == "__main__":
    main()
