# The sample's (0,0,2048,2048) region segmented on the OpenCL worker alone (PoCL
# here), counted by libwsisa-clcount: at most MAX_LAUNCHES kernels and
# MAX_READS reads back to the host, and a mask byte-identical to one CPU
# worker's. The bytes crossing the bus (StarPU's transfers and the codelets'
# own) are bounded by what must cross: to the device the tile's RGB (3 bytes a
# pixel), back to the host the mask and the nucleus labels the command
# measures (1 + 4 bytes a pixel), each with SLACK_BYTES for counts and
# constants. An intermediate of the tile leaving the device (1 to 12 bytes a
# pixel) breaks the bound. The region is read alone with its own colour
# statistics (--halo 0 --normalization tile): the tile's graph and nothing
# else. By default `segment` of a slide also reads a halo around the region
# and samples the slide's statistics over its tissue blocks, each block sent
# to the device once: more pixels in, the same graph. Run by ctest: cmake -DWSISA=... -DCLCOUNT=...
# -DSLIDE=... -DWORK=... -DMAX_LAUNCHES=... -DMAX_READS=... -DSLACK_BYTES=...
# -DTILE=... -P opencl_counts.cmake
# Every OpenCL buffer, kernel and program made is released by the process's
# end, there and in a small study run on the OpenCL worker alone (levels 6-7
# with the object store): the library counts those alive at exit. This is the
# check of wsisa's OpenCL objects that the sanitizer build leaves out
# (tests/lsan.supp).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(region --region 0,0,2048,2048 --halo 0 --normalization tile)
# StarPU measures the bus (64 blocking reads) the first time it meets an OpenCL
# device under a STARPU_HOME: once, before the counted run.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=0 STARPU_NOPENCL=1
          ${WSISA} segment ${SLIDE} ${region} -o ${WORK}/warm.png
  RESULT_VARIABLE rc_warm OUTPUT_QUIET ERROR_VARIABLE err_warm)
if(NOT rc_warm EQUAL 0)
  message(FATAL_ERROR "segment on the OpenCL worker failed (${rc_warm}): ${err_warm}")
endif()
# Counted with each launch timed (WSISA_CLCOUNT_TIME=1: two more columns), and
# through `timeout`, which loads the library too and must leave the table of
# the process measured in place.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=0 STARPU_NOPENCL=1
          LD_PRELOAD=${CLCOUNT} WSISA_CLCOUNT=${WORK}/counts.csv WSISA_CLCOUNT_TIME=1
          timeout 900 ${WSISA} segment ${SLIDE} ${region} -o ${WORK}/opencl.png
  RESULT_VARIABLE rc_ocl OUTPUT_QUIET ERROR_VARIABLE err_ocl)
if(NOT rc_ocl EQUAL 0)
  message(FATAL_ERROR "segment on the OpenCL worker failed (${rc_ocl}): ${err_ocl}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env STARPU_NCPU=1 STARPU_NOPENCL=0
          ${WSISA} segment ${SLIDE} ${region} -o ${WORK}/cpu.png
  RESULT_VARIABLE rc_cpu OUTPUT_QUIET ERROR_VARIABLE err_cpu)
if(NOT rc_cpu EQUAL 0)
  message(FATAL_ERROR "segment on one CPU worker failed (${rc_cpu}): ${err_cpu}")
endif()
file(SHA256 ${WORK}/opencl.png h_ocl)
file(SHA256 ${WORK}/cpu.png h_cpu)
if(NOT h_ocl STREQUAL h_cpu)
  message(FATAL_ERROR "the OpenCL worker's mask differs from the CPU worker's")
endif()
file(STRINGS ${WORK}/counts.csv header REGEX "^kernel,")
if(NOT header STREQUAL "kernel,launches,reads,blocking_reads,read_bytes,writes,write_bytes,kernel_ms,max_ms")
  message(FATAL_ERROR "${WORK}/counts.csv: not the timed table's header: ${header}")
endif()
file(STRINGS ${WORK}/counts.csv total REGEX "^total,")
if(NOT total MATCHES
   "^total,([0-9]+),([0-9]+),([0-9]+),([0-9]+),([0-9]+),([0-9]+),([0-9]+\\.[0-9]+),([0-9]+\\.[0-9]+)$")
  message(FATAL_ERROR "no total line in ${WORK}/counts.csv: ${total}")
endif()
if(CMAKE_MATCH_7 EQUAL 0 OR CMAKE_MATCH_8 GREATER CMAKE_MATCH_7)
  message(FATAL_ERROR "kernel time ${CMAKE_MATCH_7} ms (longest ${CMAKE_MATCH_8}): not a measure")
endif()
set(launches ${CMAKE_MATCH_1})
set(reads ${CMAKE_MATCH_2})
set(read_bytes ${CMAKE_MATCH_4})
set(write_bytes ${CMAKE_MATCH_6})
file(STRINGS ${WORK}/counts.csv live REGEX "^live,")
if(NOT live STREQUAL "live,buffers=0,kernels=0,programs=0")
  message(FATAL_ERROR "segment: OpenCL objects alive at exit: ${live}")
endif()
# the pixels segmented: the mask PNG's width and height (its IHDR, bytes 16-23)
file(READ ${WORK}/opencl.png ihdr OFFSET 16 LIMIT 8 HEX)
string(SUBSTRING ${ihdr} 0 8 width_hex)
string(SUBSTRING ${ihdr} 8 8 height_hex)
math(EXPR pixels "0x${width_hex} * 0x${height_hex}")
math(EXPR max_to_device "3 * ${pixels} + ${SLACK_BYTES}")
math(EXPR max_to_host "5 * ${pixels} + ${SLACK_BYTES}")
message(STATUS "OpenCL worker alone at 2048²: ${launches} kernel launches, ${reads} reads back to "
               "the host; ${write_bytes} bytes to the device (at most ${max_to_device}), "
               "${read_bytes} back to the host (at most ${max_to_host}), ${pixels} pixels")
if(launches GREATER MAX_LAUNCHES OR reads GREATER MAX_READS OR
   write_bytes GREATER max_to_device OR read_bytes GREATER max_to_host)
  file(READ ${WORK}/counts.csv rows)
  message(FATAL_ERROR "over budget: ${launches} launches (at most ${MAX_LAUNCHES}), ${reads} reads (at most ${MAX_READS}), ${write_bytes} bytes to the device (at most ${max_to_device}), ${read_bytes} bytes back to the host (at most ${max_to_host})\n${rows}")
endif()

# A study on the OpenCL worker alone: every object released at exit too.
file(WRITE ${WORK}/study.json
     "{ \"inputs\": { \"images\": [\"${TILE}\"] },\n"
     "  \"parameters\": { \"G1\": {}, \"min_size\": {} },\n"
     "  \"method\": { \"name\": \"moat\", \"trajectories\": 2, \"levels\": 4 },\n"
     "  \"sampler\": { \"name\": \"halton\", \"seed\": 1 }, \"metric\": \"dice\" }\n")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=0 STARPU_NOPENCL=1
          LD_PRELOAD=${CLCOUNT} WSISA_CLCOUNT=${WORK}/run_counts.csv
          timeout 900 ${WSISA} run --study ${WORK}/study.json -o ${WORK}/run
  RESULT_VARIABLE rc_run OUTPUT_QUIET ERROR_VARIABLE err_run)
if(NOT rc_run EQUAL 0)
  message(FATAL_ERROR "run on the OpenCL worker failed (${rc_run}): ${err_run}")
endif()
file(STRINGS ${WORK}/run_counts.csv run_total REGEX "^total,")
file(STRINGS ${WORK}/run_counts.csv run_live REGEX "^live,")
if(NOT run_total MATCHES "^total,([1-9][0-9]*),")
  message(FATAL_ERROR "run: no kernel launched on the OpenCL worker: ${run_total}")
endif()
if(NOT run_live STREQUAL "live,buffers=0,kernels=0,programs=0")
  message(FATAL_ERROR "run: OpenCL objects alive at exit: ${run_live}")
endif()
