# The install (ctest `install`): `cmake --install BUILD_DIR --prefix PREFIX`,
# then the installed executables run from PREFIX and find what they need
# relative to themselves: `wsisa --version`, `wsisa tiles` on the installed
# sample, `wsisa run` without a study (its slide must be the installed one),
# and wsisa-bench naming the wsisa beside it.
cmake_minimum_required(VERSION 3.18)
foreach(v BUILD_DIR PREFIX)
  if(NOT ${v})
    message(FATAL_ERROR "install_check: -D${v}=... missing")
  endif()
endforeach()

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
  message(STATUS "${what}: ok")
endfunction()

file(REMOVE_RECURSE ${PREFIX})
file(MAKE_DIRECTORY ${PREFIX})
check("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
foreach(f bin/wsisa bin/wsisa-bench share/wsisa/CMU-1-Small-Region.svs share/wsisa/tile_1024.png
        share/wsisa/peers_skimage.py lib/libwsisa-clcount.so)
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
