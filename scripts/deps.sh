#!/usr/bin/env bash
# Install the Debian packages wsisa needs that are missing, then build the
# StarPU wsisa links (scripts/starpu.sh: Debian's StarPU 1.3.10 source without
# its 4-CPU cap, once per machine). As root it runs apt-get; otherwise it
# prints the exact command and stops.
set -euo pipefail
here=$(dirname "$0")

# hwloc, OpenCL and Open MPI serve StarPU's build as well as wsisa's; Debian's
# libstarpu-dev is not needed.
pkgs=(
  build-essential cmake pkg-config
  libhwloc-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
  libopenslide-dev libfftw3-dev libpng-dev libtiff-dev libjpeg62-turbo-dev libjansson-dev
  libcriterion-dev
  libopenmpi-dev openmpi-bin
  dpkg-dev                   # apt-get source unpacks StarPU's source package with it
)
# Peers for the benchmark harness and the scripts that remake golden data.
if [ "${WSISA_PEERS:-1}" = 1 ]; then
  pkgs+=(libopencv-dev python3-opencv python3-skimage python3-scipy python3-numpy)
fi
# Slurm and MUNGE for the `slurm` test, which brings up a single-node Slurm on
# this machine to run the job script (CI sets WSISA_SLURM=1; without them the
# test is skipped, and `make demo` never needs them).
if [ "${WSISA_SLURM:-0}" = 1 ]; then
  pkgs+=(slurmctld slurmd slurm-client munge)
fi

missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing+=("$p") ;;
  esac
done

if [ ${#missing[@]} -eq 0 ]; then
  exec "$here/starpu.sh"
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "wsisa: missing Debian packages; run as root: apt-get update && $cmd" >&2
  exit 1
fi
echo "wsisa: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
exec "$here/starpu.sh"
