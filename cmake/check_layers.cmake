# The layer check: arrows point one way (docs/architecture.md).
#   cmake -DSOURCE_DIR=<tree> -P check_layers.cmake
# fails, listing every offending line, when a file includes a folder of its
# own layer or above (other than its own folder), when core/ includes
# anything of ours outside core/, or when a pure library (sa/, reuse/) uses
# more than core/core.h and the C library, or when io/ uses more than core/, or
# when a folder other than core/, codelets/, engine/ and bench/ includes
# starpu.h, or one other than io/ OpenSlide. Inside engine/, each room (a
# sub-folder with one header) includes only its own header and the headers
# of the rooms below it, in engine_rooms' order: no circle between rooms;
# it opens slides and images through io's wsisa_input alone.
# A room may keep its own declarations in <room>/<room>_internal.h, which
# only its own files include (and its test suite, tests/test_<room>*.c with
# the room's path joined by _).
cmake_minimum_required(VERSION 3.18)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers: give -DSOURCE_DIR=<the source tree>")
endif()

# Folder and layer, lowest first. Folders of one layer do not see each other.
set(layer_core 0)
set(layer_sa 1)
set(layer_reuse 1)
set(layer_io 2)
set(layer_codelets 2)
set(layer_engine 3)
set(layer_cli 4)
set(layer_bench 5)
set(folders core sa reuse io codelets engine cli bench)
set(pure sa reuse)
# Libraries on core/ alone: io/ reads and writes files, it knows no study.
set(core_only io)
# The libraries behind the layers stay in their rooms: StarPU is the runtime
# of core/ (its start and stop), codelets/, engine/ and the benchmarks, so
# neither the command line, io/ nor the pure libraries include starpu.h;
# OpenSlide is io/'s alone (its wsisa_input has the slide and image backends).
set(starpu_users core codelets engine bench)
set(openslide_users io)
# engine/'s rooms, lowest first: the workflow graph and the stain check; the
# executor, the unit queue and its MPI transport; the study (its file, design,
# tiles and analysis); the estimate and calibration; a study's run and plan.
set(engine_rooms workflow exec study estimate run)
# What a pure library may include from the system: the C library and libm
# (its benchmark programs sit in bench/).
set(pure_system assert.h ctype.h errno.h float.h inttypes.h limits.h math.h stdarg.h
    stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h)

set(problems "")
foreach(dir ${folders})
  if(NOT IS_DIRECTORY ${SOURCE_DIR}/${dir})
    continue()
  endif()
  file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}
       ${SOURCE_DIR}/${dir}/*.c ${SOURCE_DIR}/${dir}/*.h ${SOURCE_DIR}/${dir}/*.cpp)
  foreach(f ${files})
    file(STRINGS ${SOURCE_DIR}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line ${lines})
      if(line MATCHES "<starpu[a-z_]*\\.h>" AND NOT dir IN_LIST starpu_users)
        string(APPEND problems "\n  ${f}: includes StarPU: only core/, codelets/, engine/ and bench/ may")
      elseif(line MATCHES "<openslide/" AND NOT dir IN_LIST openslide_users)
        string(APPEND problems "\n  ${f}: includes OpenSlide: only io/ may")
      endif()
      if(line MATCHES "#[ \t]*include[ \t]*\"([a-z_]+)/([^\"]+)\"")
        set(to ${CMAKE_MATCH_1})
        set(header "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}")
        if(to STREQUAL "engine" AND dir STREQUAL "engine")
          # a room may include its own header and those of the rooms below
          string(REGEX REPLACE "^engine/([a-z_]+)/.*$" "\\1" from_room ${f})
          string(REGEX REPLACE "^engine/([a-z_]+)/.*$" "\\1" to_room ${header})
          list(FIND engine_rooms "${from_room}" from_index)
          list(FIND engine_rooms "${to_room}" to_index)
          if(from_index LESS 0)
            string(APPEND problems "\n  ${f}: engine/'s sources sit in its rooms (${engine_rooms})")
          elseif(to_index LESS 0)
            string(APPEND problems "\n  ${f}: includes ${header}: not a room of engine/ (${engine_rooms})")
          elseif(to_index GREATER from_index)
            string(APPEND problems "\n  ${f}: includes ${header}: engine/${from_room}/ may not use engine/${to_room}/, a room above it")
          elseif(header STREQUAL "engine/${to_room}/${to_room}_internal.h")
            # its own room's: checked with every internal header below
          elseif(NOT header STREQUAL "engine/${to_room}/${to_room}.h")
            string(APPEND problems "\n  ${f}: includes ${header}: a room has one header, engine/${to_room}/${to_room}.h")
          endif()
          continue()
        endif()
        if(to STREQUAL dir OR NOT DEFINED layer_${to})
          continue()
        endif()
        if(NOT layer_${to} LESS layer_${dir})
          string(APPEND problems "\n  ${f}: includes ${header}: ${dir}/ (layer ${layer_${dir}}) may not use ${to}/ (layer ${layer_${to}})")
        elseif(dir IN_LIST core_only AND NOT to STREQUAL "core")
          string(APPEND problems "\n  ${f}: includes ${header}: ${dir}/ uses core/ alone")
        elseif(dir IN_LIST pure AND NOT header STREQUAL "core/core.h")
          string(APPEND problems "\n  ${f}: includes ${header}: ${dir}/ is pure and uses only core/core.h")
        endif()
      elseif(dir IN_LIST pure AND line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        if(NOT CMAKE_MATCH_1 IN_LIST pure_system)
          string(APPEND problems "\n  ${f}: includes <${CMAKE_MATCH_1}>: ${dir}/ is pure (the C library and libm only)")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

# engine/ holds its rooms, and each room one header, named after it.
if(IS_DIRECTORY ${SOURCE_DIR}/engine)
  file(GLOB loose RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/engine/*.c ${SOURCE_DIR}/engine/*.h)
  foreach(f ${loose})
    string(APPEND problems "\n  ${f}: engine/'s sources sit in its rooms (${engine_rooms})")
  endforeach()
  foreach(room ${engine_rooms})
    file(GLOB headers RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/engine/${room}/*.h)
    list(REMOVE_ITEM headers engine/${room}/${room}.h engine/${room}/${room}_internal.h)
    foreach(h ${headers})
      string(APPEND problems "\n  ${h}: engine/${room}/ has one header, ${room}.h (and its own ${room}_internal.h)")
    endforeach()
  endforeach()
  # ... and opens slides and images through io's one input type alone
  file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/engine/*.c)
  foreach(f ${sources})
    file(STRINGS ${SOURCE_DIR}/${f} opens
         REGEX "wsisa_(slide_open|image_read_rgb|image_read_scaled)[ \t]*\\(")
    if(opens)
      string(APPEND problems "\n  ${f}: opens a slide or an image itself: engine/ opens its inputs with wsisa_input_open")
    endif()
  endforeach()
endif()
# A room's internal header, <dir>/<name>_internal.h with <name> its folder's
# name, is its own: included from <dir>/ and from its suite alone.
set(product "")
foreach(dir ${folders})
  file(GLOB_RECURSE found RELATIVE ${SOURCE_DIR}
       ${SOURCE_DIR}/${dir}/*.c ${SOURCE_DIR}/${dir}/*.h ${SOURCE_DIR}/${dir}/*.cpp)
  list(APPEND product ${found})
endforeach()
file(GLOB_RECURSE suites RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/tests/*.c ${SOURCE_DIR}/tests/*.h)
foreach(f ${product} ${suites})
  file(STRINGS ${SOURCE_DIR}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]*_internal\\.h\"")
  foreach(line ${lines})
    string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" header "${line}")
    get_filename_component(room ${header} DIRECTORY)
    get_filename_component(name ${header} NAME)
    get_filename_component(last "${room}" NAME)
    if(NOT name STREQUAL "${last}_internal.h")
      continue()
    endif()
    string(REPLACE "/" "_" suite "${room}")
    if(NOT f MATCHES "^${room}/" AND NOT f MATCHES "^tests/test_${suite}(_[a-z0-9_]+)?\\.c$")
      string(APPEND problems "\n  ${f}: includes ${header}: ${room}/'s own, for its files and tests/test_${suite}*.c alone")
    endif()
  endforeach()
endforeach()

# codelets/: codelets.h is its one public header. Outside codelets/, no file
# includes its kernels' header or anything else of codelets/cpu/ (what the
# rest of the program may use of them, codelets.h publishes); inside,
# codelets/ocl/ (the OpenCL plumbing) includes nothing of codelets/ outside
# itself, so the plumbing knows no operation.
foreach(f ${product})
  file(STRINGS ${SOURCE_DIR}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"codelets/")
  foreach(line ${lines})
    string(REGEX REPLACE ".*\"(codelets/[^\"]+)\".*" "\\1" header "${line}")
    if(NOT f MATCHES "^codelets/" AND header MATCHES "^codelets/cpu/")
      string(APPEND problems "\n  ${f}: includes ${header}: outside codelets/, include codelets/codelets.h")
    elseif(f MATCHES "^codelets/ocl/" AND NOT header MATCHES "^codelets/ocl/")
      string(APPEND problems "\n  ${f}: includes ${header}: codelets/ocl/ uses nothing of codelets/ above it")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "layer check failed:${problems}")
endif()
message(STATUS "layer check: every include points down")
