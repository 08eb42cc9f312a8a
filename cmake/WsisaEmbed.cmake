# wsisa_embed_cl(<target-var> <name> <file.cl>): turn an OpenCL source into a C string
# at build time, so a missing .cl file can never abort the program at run time.
function(wsisa_embed_cl out_var name cl_file)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/cl_${name}.c)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${cl_file} -DOUT=${out} -DNAME=${name}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_cl.cmake
    DEPENDS ${cl_file} ${CMAKE_SOURCE_DIR}/cmake/embed_cl.cmake
    COMMENT "Embedding OpenCL source ${name}")
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()
