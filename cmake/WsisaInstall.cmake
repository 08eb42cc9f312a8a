# A prefix that travels: `cmake --install build --prefix P` (or `make install
# PREFIX=P`) copies the libraries of wsisa's own StarPU (scripts/starpu.sh's
# build, or WSISA_STARPU_PREFIX's) that the executables load into
# P/lib/wsisa, and gives the executables the run path $ORIGIN/../lib/wsisa
# first: the whole prefix can be moved, or copied to another node of the same
# OS, without the build machine's cache. The system's libraries (hwloc,
# OpenCL, Open MPI, OpenSlide, ...) stay the system's: the run path keeps the
# folders outside the loader's default ones that they were linked from (Open
# MPI's). A system StarPU (no private prefix) is left to the system too.
#
# Expects WsisaDeps.cmake's _wsisa_starpu (the private StarPU prefix, or
# empty) and the pkg-config results of the dependencies.

set(CMAKE_INSTALL_RPATH_USE_LINK_PATH FALSE)
set(_wsisa_rpath "$ORIGIN/../lib/wsisa")
set(_wsisa_starpu_lib "")
if(_wsisa_starpu)
  get_filename_component(_wsisa_starpu_lib "${_wsisa_starpu}/lib" REALPATH)
endif()
foreach(dep STARPU HWLOC OPENCL OPENSLIDE FFTW FFTWF PNG TIFF JPEG JANSSON MPI)
  foreach(dir IN LISTS ${dep}_LIBRARY_DIRS)
    get_filename_component(real "${dir}" REALPATH)
    if(real IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES OR dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES
       OR (_wsisa_starpu_lib AND real STREQUAL _wsisa_starpu_lib))
      continue()
    endif()
    list(APPEND _wsisa_rpath "${dir}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _wsisa_rpath)
set(CMAKE_INSTALL_RPATH "${_wsisa_rpath}")

# The libraries themselves, at install time: those of the executables' run-time
# dependencies (as the loader resolves them for the build tree's executables)
# that lie in the private StarPU prefix, each with its soname link, and
# StarPU's licence beside them.
function(wsisa_install_private_libs)
  if(NOT _wsisa_starpu_lib)
    return()
  endif()
  set(exes)
  foreach(t ${ARGN})
    list(APPEND exes "$<TARGET_FILE:${t}>")
  endforeach()
  install(CODE "
    file(GET_RUNTIME_DEPENDENCIES EXECUTABLES ${exes}
         RESOLVED_DEPENDENCIES_VAR deps UNRESOLVED_DEPENDENCIES_VAR missing)
    set(copied 0)
    foreach(lib IN LISTS deps)
      get_filename_component(real \"\${lib}\" REALPATH)
      string(FIND \"\${real}\" \"${_wsisa_starpu_lib}/\" at)
      if(at EQUAL 0)
        file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/wsisa\" TYPE SHARED_LIBRARY
             FOLLOW_SYMLINK_CHAIN FILES \"\${lib}\")
        math(EXPR copied \"\${copied} + 1\")
      endif()
    endforeach()
    if(copied EQUAL 0)
      message(FATAL_ERROR \"wsisa: the executables load no library of ${_wsisa_starpu_lib} \"
                          \"(unresolved: \${missing})\")
    endif()
  ")
  if(EXISTS "${_wsisa_starpu}/share/doc/starpu/COPYING.LGPL")
    install(FILES "${_wsisa_starpu}/share/doc/starpu/COPYING.LGPL" DESTINATION lib/wsisa
            RENAME STARPU-COPYING.LGPL)
  endif()
endfunction()
