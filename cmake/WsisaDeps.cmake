# Every external dependency, found through pkg-config and exposed as an imported target.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

function(wsisa_require name module)
  pkg_check_modules(${name} REQUIRED IMPORTED_TARGET ${module})
endfunction()

wsisa_require(STARPU   starpu-1.3)
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
