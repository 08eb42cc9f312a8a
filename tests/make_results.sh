#!/bin/sh
# A small finished results folder for the CLI cases (tests/cases/*/setup):
#   tests/make_results.sh WSISA SOURCE_DIR DIR
# runs a MOAT study of 8 runs on tests/data/tile_256.png into DIR.
set -e
cat > "$3.json" <<STUDY
{ "inputs": { "images": ["$2/tests/data/tile_256.png"] },
  "parameters": { "G1": {}, "G2": {}, "recon_conn": {} },
  "method": { "name": "moat", "trajectories": 2, "levels": 4 },
  "sampler": { "name": "halton", "seed": 1 },
  "metric": ["dice", "nucleus_count"] }
STUDY
STARPU_NCPU=1 "$1" run --study "$3.json" -o "$3" > /dev/null
