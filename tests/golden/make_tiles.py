#!/usr/bin/python3
"""Remake tests/data/tile_*.png: regions of the sample slide read independently
of wsisa (OpenSlide's Python binding), used as golden inputs by the tests."""
import os
import openslide

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
REGIONS = {  # name: (x, y, side) at level 0
    "tile_1024": (1024, 1024, 1024),
    "tile_256": (1050, 700, 256),
}

slide = openslide.OpenSlide(os.path.join(DATA, "CMU-1-Small-Region.svs"))
for name, (x, y, side) in REGIONS.items():
    slide.read_region((x, y), 0, (side, side)).convert("RGB").save(
        os.path.join(DATA, name + ".png"))
