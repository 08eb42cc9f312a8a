#!/bin/sh
# Remake the whole-workflow golden masks with the independent Python reference.
set -e
cd "$(dirname "$0")"
R=./reference_workflow.py
OUT=workflow
mkdir -p $OUT
/usr/bin/python3 $R ../data/tile_256.png $OUT/tile_256_default.png
/usr/bin/python3 $R ../data/tile_1024.png $OUT/tile_1024_default.png
/usr/bin/python3 $R ../data/tile_256.png $OUT/tile_256_varied.png \
  G1=45 G2=20 T1=4 T2=3 recon_conn=4 fill_holes_conn=8 watershed_conn=4 min_size_pl=10 \
  min_size=6 min_size_seg=8
