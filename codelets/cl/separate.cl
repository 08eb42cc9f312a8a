/* Level 6 object by object (codelets/separate.c) has no kernel of its own:
 * on the OpenCL worker it runs the kernels of edt, neg_dist, hmin,
 * regional_min, label and watershed on the whole tile. */
