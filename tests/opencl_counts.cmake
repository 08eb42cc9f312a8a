# The sample's (0,0,2048,2048) region segmented on the OpenCL worker alone (PoCL
# here), counted by libwsisa-clcount: at most MAX_LAUNCHES kernels and
# MAX_READS reads back to the host, and a mask byte-identical to one CPU
# worker's. Run by ctest: cmake -DWSISA=... -DCLCOUNT=... -DSLIDE=... -DWORK=...
# -DMAX_LAUNCHES=... -DMAX_READS=... -P opencl_counts.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(region --region 0,0,2048,2048)
# StarPU measures the bus (64 blocking reads) the first time it meets an OpenCL
# device under a STARPU_HOME: once, before the counted run.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=0 STARPU_NOPENCL=1
          ${WSISA} segment ${SLIDE} ${region} -o ${WORK}/warm.png
  RESULT_VARIABLE rc_warm OUTPUT_QUIET ERROR_VARIABLE err_warm)
if(NOT rc_warm EQUAL 0)
  message(FATAL_ERROR "segment on the OpenCL worker failed (${rc_warm}): ${err_warm}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=0 STARPU_NOPENCL=1
          LD_PRELOAD=${CLCOUNT} WSISA_CLCOUNT=${WORK}/counts.csv
          ${WSISA} segment ${SLIDE} ${region} -o ${WORK}/opencl.png
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
file(STRINGS ${WORK}/counts.csv total REGEX "^total,")
if(NOT total MATCHES "^total,([0-9]+),([0-9]+),([0-9]+),")
  message(FATAL_ERROR "no total line in ${WORK}/counts.csv")
endif()
set(launches ${CMAKE_MATCH_1})
set(reads ${CMAKE_MATCH_2})
message(STATUS "OpenCL worker alone at 2048²: ${launches} kernel launches, ${reads} reads back to the host")
if(launches GREATER MAX_LAUNCHES OR reads GREATER MAX_READS)
  file(READ ${WORK}/counts.csv rows)
  message(FATAL_ERROR "over budget: ${launches} launches (at most ${MAX_LAUNCHES}), ${reads} reads (at most ${MAX_READS})\n${rows}")
endif()
