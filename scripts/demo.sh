#!/usr/bin/env bash
# `make demo`: the main job on the bundled sample slide.
set -euo pipefail
build=${1:-build}
slide=tests/data/CMU-1-Small-Region.svs
"$build/core/wsisa" --version
"$build/core/wsisa" tiles "$slide"
