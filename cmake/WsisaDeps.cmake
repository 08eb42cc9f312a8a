# Every external dependency, found through pkg-config and exposed as an imported target.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

function(wsisa_require name module)
  pkg_check_modules(${name} REQUIRED IMPORTED_TARGET ${module})
endfunction()

# StarPU: the one scripts/starpu.sh built for this machine (Debian's 1.3.10
# with --enable-maxcpus=256; `make` builds it through scripts/deps.sh) comes
# before the system's, whose STARPU_MAXCPUS is 4. Headers and library come
# from the same prefix (STARPU_MAXCPUS sizes StarPU's structures), and the
# executables find the library through their run path. WSISA_STARPU_PREFIX
# names another StarPU prefix; empty: the cache, if its build is complete.
set(WSISA_STARPU_PREFIX "" CACHE PATH "StarPU prefix (empty: the one scripts/starpu.sh built)")
if(WSISA_STARPU_PREFIX)
  set(_wsisa_starpu ${WSISA_STARPU_PREFIX})
else()
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/starpu.sh --prefix
                  OUTPUT_VARIABLE _wsisa_starpu OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS ${_wsisa_starpu}/.wsisa-stamp)
    message(WARNING "No StarPU built by scripts/starpu.sh in ${_wsisa_starpu}: using the "
                    "system's, whose STARPU_MAXCPUS caps each process's CPU workers "
                    "(run scripts/deps.sh, or `make`, to build it)")
    set(_wsisa_starpu "")
  endif()
endif()
if(_wsisa_starpu)
  list(PREPEND CMAKE_PREFIX_PATH ${_wsisa_starpu})
endif()
# Another StarPU than at the last configure: find its modules again.
if(NOT "${_wsisa_starpu}" STREQUAL "${WSISA__STARPU_USED}")
  get_cmake_property(_wsisa_cached CACHE_VARIABLES)
  foreach(v IN LISTS _wsisa_cached)
    if(v MATCHES "^(__pkg_config_checked_|pkgcfg_lib_)STARPU(MPI)?_?")
      unset(${v} CACHE)
    endif()
  endforeach()
  set(WSISA__STARPU_USED "${_wsisa_starpu}" CACHE INTERNAL "StarPU prefix of the last configure")
endif()
wsisa_require(STARPU   starpu-1.3)
find_file(WSISA_STARPU_CONFIG_H starpu_config.h PATHS ${STARPU_INCLUDE_DIRS} NO_DEFAULT_PATH
          NO_CACHE)
file(STRINGS ${WSISA_STARPU_CONFIG_H} _wsisa_maxcpus REGEX "define STARPU_MAXCPUS ")
string(REGEX REPLACE ".*STARPU_MAXCPUS ([0-9]+).*" "\\1" _wsisa_maxcpus "${_wsisa_maxcpus}")
message(STATUS "StarPU ${STARPU_VERSION}: ${pkgcfg_lib_STARPU_starpu-1.3} "
               "(STARPU_MAXCPUS ${_wsisa_maxcpus})")
wsisa_require(HWLOC    hwloc)
wsisa_require(OPENCL   OpenCL)     # StarPU lists it as private: link it ourselves
wsisa_require(OPENSLIDE openslide)
wsisa_require(FFTW     fftw3)
wsisa_require(FFTWF    fftw3f)     # single precision: the filter bank
wsisa_require(PNG      libpng)
wsisa_require(TIFF     libtiff-4)
wsisa_require(JPEG     libjpeg)
wsisa_require(JANSSON  jansson)
pkg_check_modules(CRITERION IMPORTED_TARGET criterion)

find_library(WSISA_LIBM m)

pkg_check_modules(STARPUMPI IMPORTED_TARGET starpumpi-1.3)
pkg_check_modules(MPI IMPORTED_TARGET ompi-c)
if(MPI_FOUND)
  option(WSISA_WITH_MPI "Build the Open MPI manager/worker layer" ON)
else()
  option(WSISA_WITH_MPI "Build the Open MPI manager/worker layer" OFF)
endif()

# Optional peers for the benchmark harness only; wsisa itself never links them.
pkg_check_modules(OPENCV IMPORTED_TARGET opencv4)
