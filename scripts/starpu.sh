#!/usr/bin/env bash
# StarPU 1.3.10 without Debian's 4-CPU cap, built once per machine.
#
# Debian's libstarpu-1.3 is configured with --enable-maxcpus=auto, which on its
# build host gave STARPU_MAXCPUS 4: every process then starts at most 4 CPU
# workers whatever the machine. This script builds the same StarPU from
# Debian's own source package with --enable-maxcpus=256 into a cache outside
# the checkout, which CMake finds before the system's (cmake/WsisaDeps.cmake).
# It is also configured with --enable-blocking-drivers: StarPU 1.3's default
# keeps every idle worker polling its queue on a core (a CPU worker while the
# submitting thread opens a tile, every worker beyond the cores asked for,
# both workers while PoCL builds the OpenCL programs); with it an idle worker
# sleeps until a task is pushed to it. One patch, starpu-last-worker-sleeps.patch
# beside this script, lets the last awake worker of a context sleep too (StarPU
# keeps it spinning; a process of one worker, each rank of an mpirun, would
# hold its core whenever it has nothing to run).
#
#   scripts/starpu.sh            build the cache unless it is already complete
#   scripts/starpu.sh --prefix   print where the cache is (built or not)
#
# Where: $WSISA_CACHE_DIR, else /var/cache/wsisa as root, else
# ${XDG_CACHE_HOME:-~/.cache}/wsisa; the StarPU goes under
# starpu-1.3.10-maxcpus256-sleep/. The stamp file .wsisa-stamp is written last, so a
# half-built cache is never trusted: it is removed and built again, and so is
# one whose stamp names another version of the patch. A lock
# (flock on starpu-1.3.10-maxcpus256-sleep.lock) keeps two builds from colliding.
#
# The source is verified twice over: apt-get source checks every file it
# fetches against the checksums of the Sources index, itself signed through
# the archive's InRelease (Signed-By keyring); then the .dsc must have the
# SHA-256 pinned below, and dpkg-source -x --require-strong-checksums checks
# the tarballs against the .dsc's SHA-256 sums before unpacking. The patch
# must apply whole (patch --forward --batch) or nothing is built.
set -euo pipefail

src_package=starpu
src_version=1.3.10+dfsg-2
dsc_sha256=dfbcc64d917fb0c6241d5b2d1bbe763e315ebe6b1a3c8e8004bf73f74be36c15
maxcpus=256
name=starpu-1.3.10-maxcpus${maxcpus}-sleep
patch_file=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/starpu-last-worker-sleeps.patch
configure_flags=(
  --enable-maxcpus=$maxcpus
  --enable-blocking-drivers # idle workers sleep instead of polling a core
  --disable-cuda            # a CUDA toolkit in /usr/local/cuda breaks StarPU 1.3's CUDA driver
  --disable-build-examples --disable-build-tests --disable-build-doc
  --disable-fortran --disable-starpufft --disable-socl --disable-opengl-render
  --disable-starpurm --disable-mlr
  --disable-static          # only the shared libraries are linked: half the compile time
)
# OpenCL and MPI stay on (found by configure): wsisa's OpenCL kernels and its
# MPI layer (starpumpi-1.3) need them.

if [ -n "${WSISA_CACHE_DIR:-}" ]; then
  cache=$WSISA_CACHE_DIR
elif [ "$(id -u)" -eq 0 ]; then
  cache=/var/cache/wsisa
else
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/wsisa
fi
prefix=$cache/$name
stamp=$prefix/.wsisa-stamp

if [ "${1:-}" = --prefix ]; then
  echo "$prefix"
  exit 0
fi

# complete, and built with this very patch (an edited patch builds again)
patch_line="patch $(basename "$patch_file") sha256 $(sha256sum <"$patch_file" | cut -d' ' -f1)"
built() { [ -f "$stamp" ] && grep -qxF "$patch_line" "$stamp"; }
built && exit 0

mkdir -p "$cache"
exec 9>"$cache/$name.lock"
flock 9
built && exit 0   # another build finished while this one waited

# deb-src for bookworm main: apt-get source needs it.
sources=$(apt-cache showsrc "$src_package" 2>/dev/null || true)
if ! grep -qx "Version: $src_version" <<<"$sources"; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "wsisa: StarPU's source package needs apt's deb-src for bookworm main; as root run:" >&2
    echo "  printf 'Types: deb-src\\nURIs: http://deb.debian.org/debian\\nSuites: bookworm\\nComponents: main\\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\\n' > /etc/apt/sources.list.d/wsisa-deb-src.sources && apt-get update" >&2
    exit 1
  fi
  echo "wsisa: enabling deb-src for bookworm main (/etc/apt/sources.list.d/wsisa-deb-src.sources)" >&2
  cat >/etc/apt/sources.list.d/wsisa-deb-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -q >/dev/null
fi

echo "wsisa: building StarPU $src_version with --enable-maxcpus=$maxcpus --enable-blocking-drivers and $(basename "$patch_file") into $prefix (once per machine, a few minutes)" >&2
start=$(date +%s)
rm -rf "$prefix"
work=$(mktemp -d "$cache/$name.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
# apt-get source refuses files whose checksums differ from the signed index.
# As root the download runs unsandboxed (the folder is root's); the .dsc's own
# OpenPGP signature needs debian-keyring to check, so dpkg-source only warns
# about it: the pinned SHA-256 stands in. Their chatter goes to fetch.log.
apt-get source -q --download-only "$src_package=$src_version" >"$work/fetch.log" 2>&1 ||
  { cat "$work/fetch.log" >&2; echo "wsisa: apt-get source $src_package=$src_version failed" >&2; exit 1; }
dsc=${src_package}_${src_version}.dsc
echo "$dsc_sha256  $dsc" | sha256sum --check --quiet - ||
  { echo "wsisa: $dsc does not have the expected SHA-256 $dsc_sha256" >&2; exit 1; }
dpkg-source --require-strong-checksums -x "$dsc" src >>"$work/fetch.log" 2>&1 ||
  { cat "$work/fetch.log" >&2; echo "wsisa: dpkg-source -x $dsc failed" >&2; exit 1; }
patch -d src -p1 --forward --batch <"$patch_file" >>"$work/fetch.log" 2>&1 ||
  { cat "$work/fetch.log" >&2; echo "wsisa: $patch_file does not apply to StarPU $src_version" >&2; exit 1; }
cd src
jobs=$(nproc)
./configure --prefix="$prefix" "${configure_flags[@]}" >"$work/configure.log" 2>&1 ||
  { tail -30 "$work/configure.log" >&2; echo "wsisa: StarPU's configure failed" >&2; exit 1; }
grep -q '^#define STARPU_USE_MPI 1' include/starpu_config.h ||
  { echo "wsisa: StarPU's configure found no MPI (libopenmpi-dev)" >&2; exit 1; }
grep -q '^#define STARPU_USE_OPENCL 1' include/starpu_config.h ||
  { echo "wsisa: StarPU's configure found no OpenCL (ocl-icd-opencl-dev)" >&2; exit 1; }
! grep -q '^#define STARPU_NON_BLOCKING_DRIVERS' include/starpu_config.h ||
  { echo "wsisa: StarPU's configure kept its polling drivers despite --enable-blocking-drivers" >&2; exit 1; }
grep -q '^#define WSISA_STARPU_LAST_WORKER_SLEEPS 1' include/starpu_config.h ||
  { echo "wsisa: StarPU's starpu_config.h lacks the mark of $(basename "$patch_file")" >&2; exit 1; }
make -j"$jobs" >"$work/make.log" 2>&1 ||
  { tail -30 "$work/make.log" >&2; echo "wsisa: building StarPU failed" >&2; exit 1; }
stage=$work/stage
make install DESTDIR="$stage" >"$work/install.log" 2>&1 ||
  { tail -30 "$work/install.log" >&2; echo "wsisa: installing StarPU failed" >&2; exit 1; }
mv "$stage$prefix" "$prefix"
seconds=$(( $(date +%s) - start ))
# Written last: its presence says the cache is complete.
printf 'source %s %s\ndsc-sha256 %s\n%s\nconfigure %s\nbuilt %s on %s cores in %s s\n' \
  "$src_package" "$src_version" "$dsc_sha256" "$patch_line" "${configure_flags[*]}" \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$jobs" "$seconds" >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
echo "wsisa: StarPU built in ${seconds} s: $prefix" >&2
