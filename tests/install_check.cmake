# The install (ctest `install`): `cmake --install BUILD_DIR --prefix PREFIX`,
# then the installed executables run from PREFIX and find what they need
# relative to themselves: `wsisa --version`, `wsisa tiles` on the installed
# sample, `wsisa run` without a study (its slide must be the installed one),
# and wsisa-bench naming the wsisa beside it. Then the prefix moves to
# PREFIX-moved and the build's StarPU (STARPU_PREFIX, the cache
# scripts/starpu.sh built; empty: the system's) is hidden: `wsisa --version`
# must name the StarPU in the moved prefix, the loader must not look in the
# cache, and a small study there must give the build tree's metrics.
cmake_minimum_required(VERSION 3.18)
foreach(v BUILD_DIR PREFIX)
  if(NOT ${v})
    message(FATAL_ERROR "install_check: -D${v}=... missing")
  endif()
endforeach()

# set by check(): the last command's stdout and stderr
function(check what)
  cmake_parse_arguments(C "" "EXPECT;WORKDIR" "COMMAND" ${ARGN})
  if(NOT C_WORKDIR)
    set(C_WORKDIR ${PREFIX})
  endif()
  execute_process(COMMAND ${C_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err WORKING_DIRECTORY ${C_WORKDIR})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: exit ${rc}\n${out}\n${err}")
  endif()
  if(C_EXPECT AND NOT out MATCHES "${C_EXPECT}")
    message(FATAL_ERROR "${what}: output lacks '${C_EXPECT}':\n${out}")
  endif()
  set(check_out "${out}" PARENT_SCOPE)
  set(check_err "${err}" PARENT_SCOPE)
  message(STATUS "${what}: ok")
endfunction()

file(REMOVE_RECURSE ${PREFIX})
file(MAKE_DIRECTORY ${PREFIX})
check("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
foreach(f bin/wsisa bin/wsisa-bench share/wsisa/CMU-1-Small-Region.svs share/wsisa/tile_1024.png
        share/wsisa/peers_skimage.py lib/libwsisa-clcount.so share/wsisa/wsisa.sbatch)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "${PREFIX}/${f} was not installed")
  endif()
endforeach()

check("wsisa --version" COMMAND ${PREFIX}/bin/wsisa --version EXPECT "wsisa [0-9]+\\.[0-9]+")
check("wsisa tiles" COMMAND ${PREFIX}/bin/wsisa tiles ${PREFIX}/share/wsisa/CMU-1-Small-Region.svs
      EXPECT "tissue    6 of 9 tiles")
check("wsisa-bench --help" COMMAND ${PREFIX}/bin/wsisa-bench --help
      EXPECT "here ${PREFIX}/bin/wsisa\\)")

# The default study on one parameter set (a design of one run): quick, and its
# study.json says which slide it read.
set(run ${PREFIX}/run)
file(WRITE ${PREFIX}/one.csv "run_id,G1\n0,60\n")
check("wsisa run (default study)"
      COMMAND ${PREFIX}/bin/wsisa run -o ${run} --samples ${PREFIX}/one.csv)
file(READ ${run}/study.json study)
if(NOT study MATCHES "${PREFIX}/bin/\\.\\./share/wsisa/CMU-1-Small-Region.svs")
  message(FATAL_ERROR "the default study did not read the installed sample:\n${study}")
endif()
message(STATUS "the default study reads ${PREFIX}/share/wsisa's sample")

# wsisa-bench ops installed, run away from the source tree: the sample and
# both peers found from the installed files (a small tile, one repeat). Its
# CPU figures come from a StarPU session without an OpenCL worker, and StarPU
# 1.3 with PoCL then leaves about 1 KiB of the OpenCL platform's allocations
# at exit (a dlopened library's, not ours: `wsisa segment` with
# STARPU_NOPENCL=0 leaves the same), so an AddressSanitizer build checks this
# run without its leak report.
check("wsisa-bench ops (installed)"
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
              ${PREFIX}/bin/wsisa-bench ops --size 64 --repeats 1 --no-opencl -o ${PREFIX}/ops
      EXPECT "skimage")
if(EXISTS ${BUILD_DIR}/bin/wsisa-bench-opencv)
  file(READ ${PREFIX}/ops/ops.csv ops)
  if(NOT ops MATCHES ",opencv,")
    message(FATAL_ERROR "the installed wsisa-bench ops ran without its OpenCV peer:\n${ops}")
  endif()
  message(STATUS "wsisa-bench ops (installed): both peers")
endif()

# ---- the prefix moved, the build's StarPU out of reach ----------------------

set(moved ${PREFIX}-moved)
file(REMOVE_RECURSE ${moved})
file(RENAME ${PREFIX} ${moved})
if(STARPU_PREFIX)
  file(GLOB bundled ${moved}/lib/wsisa/libstarpu-*.so.*)
  if(NOT bundled)
    message(FATAL_ERROR "${moved}/lib/wsisa holds no libstarpu: the install depends on "
                        "${STARPU_PREFIX}")
  endif()
endif()
# As root, in a mount namespace of their own, the moved executables see an
# empty folder where the build's StarPU is; otherwise they run beside it and
# the loader's trace below shows they never look there.
set(hide "")
if(STARPU_PREFIX)
  set(empty ${moved}-empty)
  file(MAKE_DIRECTORY ${empty})
  execute_process(COMMAND unshare -m -- sh -c "mount --bind '${empty}' '${STARPU_PREFIX}'"
                  RESULT_VARIABLE hidden OUTPUT_QUIET ERROR_QUIET)
  if(hidden EQUAL 0)
    set(hide unshare -m -- sh -c "mount --bind '${empty}' '${STARPU_PREFIX}' && exec \"$@\"" sh)
    message(STATUS "relocated: ${STARPU_PREFIX} hidden (unshare -m, an empty folder over it)")
  else()
    message(STATUS "relocated: no mount namespace here (not root?): ${STARPU_PREFIX} stays in "
                   "sight, the loader's trace must not touch it")
  endif()
endif()

check("wsisa --version (moved)" COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=libs ${hide}
      ${moved}/bin/wsisa --version WORKDIR ${moved} EXPECT "StarPU 1\\.3\\.[0-9]+ \\(")
string(FIND "${check_out}" "(${moved}/bin/../lib/wsisa/libstarpu-" named)
if(named EQUAL -1)
  message(FATAL_ERROR "the moved wsisa did not load the StarPU in ${moved}/lib/wsisa:\n${check_out}")
endif()
if(STARPU_PREFIX)
  string(FIND "${check_err}" "${STARPU_PREFIX}/" touched)
  if(NOT touched EQUAL -1)
    message(FATAL_ERROR "the moved wsisa looks for libraries in ${STARPU_PREFIX}:\n${check_err}")
  endif()
  message(STATUS "the loader never looks in ${STARPU_PREFIX}")
endif()

# A small study (a MOAT of G1, 2 trajectories: 4 runs on the sample's tissue
# tiles) from the moved prefix and from the build tree: the same metrics.
file(WRITE ${moved}/two.json "{
  \"inputs\": { \"slides\": [\"${moved}/share/wsisa/CMU-1-Small-Region.svs\"], \"tile_size\": 1024 },
  \"parameters\": { \"G1\": {} },
  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },
  \"metric\": \"dice\"
}
")
check("wsisa run (moved)" COMMAND ${hide} ${moved}/bin/wsisa run --study ${moved}/two.json
      -o ${moved}/two WORKDIR ${moved})
check("wsisa run (build tree)" COMMAND ${BUILD_DIR}/bin/wsisa run --study ${moved}/two.json
      -o ${moved}/two-build WORKDIR ${moved})
file(READ ${moved}/two/metrics.csv there)
file(READ ${moved}/two-build/metrics.csv here)
if(NOT there STREQUAL here OR there STREQUAL "")
  message(FATAL_ERROR "the moved prefix's metrics differ from the build tree's:\n${there}\n"
                      "against\n${here}")
endif()
string(REGEX MATCHALL "\n" rows "${there}")
list(LENGTH rows nrows)
message(STATUS "the moved prefix's metrics are the build tree's (${nrows} lines)")
