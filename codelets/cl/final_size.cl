/* Level 7 object by object (codelets/separate.c) has no kernel of its own:
 * on the OpenCL worker it runs the kernels of area_filter and
 * fill_object_holes on the whole tile, and carries its masks across the bus
 * with level 6's (codelets/cl/separate.cl). */
