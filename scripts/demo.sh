#!/usr/bin/env bash
# `make demo`: the default study (MOAT over the 15 parameters) on the bundled
# sample slide. Its results folder is the demo's own and is made anew.
set -euo pipefail
build=${1:-build}
out=results/demo
"$build/bin/wsisa" --version
"$build/bin/wsisa" tiles tests/data/CMU-1-Small-Region.svs
rm -rf "$out"
mkdir -p results
"$build/bin/wsisa" run -o "$out"
