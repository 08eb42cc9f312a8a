/* The one table of operations: it drives OpenCL program loading, `wsisa
 * --list-ops`, calibration and the tests. One row per operation. */
#include <string.h>

#include "codelets/codelets_private.h"

WSISA__OP_DECLARE(invert);
WSISA__OP_DECLARE(neg_dist);
WSISA__OP_DECLARE(count_labels);
WSISA__OP_DECLARE(object_match);
/* morph: mathematical morphology */
WSISA__OP_DECLARE(morph);
WSISA__OP_DECLARE(reconstruct);
WSISA__OP_DECLARE(bin_reconstruct);
WSISA__OP_DECLARE(fill_holes);
WSISA__OP_DECLARE(fill_object_holes);
WSISA__OP_DECLARE(hmin);
WSISA__OP_DECLARE(regional_min);
/* pixel group: normalization and per-pixel operations */
WSISA__OP_DECLARE(fisher_fg);
WSISA__OP_DECLARE(rgb2lab);
WSISA__OP_DECLARE(masked_stats);
WSISA__OP_DECLARE(color_transfer);
WSISA__OP_DECLARE(lab2rgb);
WSISA__OP_DECLARE(background);
WSISA__OP_DECLARE(ratio_mask);
WSISA__OP_DECLARE(threshold);
WSISA__OP_DECLARE(sub_sat);
WSISA__OP_DECLARE(mask_logic);
WSISA__OP_DECLARE(compare);
/* objects: labelling, size filters, distance transform, watershed */
WSISA__OP_DECLARE(label);
WSISA__OP_DECLARE(area_filter);
WSISA__OP_DECLARE(edt);
WSISA__OP_DECLARE(watershed);
/* features, nucleus half: the per-nucleus reduction */
WSISA__OP_DECLARE(nucleus_features);
/* features, pixel half: per-tile channels */
WSISA__OP_DECLARE(deconv);
WSISA__OP_DECLARE(sobel);
WSISA__OP_DECLARE(filter_bank);

#define ROW(op) {#op, &wsisa__##op##_codelet, wsisa_cl_##op, &wsisa__##op##_program, &wsisa__##op##_model}

const wsisa_op wsisa_ops[] = {
    ROW(invert),
    ROW(neg_dist),
    ROW(count_labels),
    ROW(object_match),
    /* morph: mathematical morphology */
    ROW(morph),
    ROW(reconstruct),
    ROW(bin_reconstruct),
    ROW(fill_holes),
    ROW(fill_object_holes),
    ROW(hmin),
    ROW(regional_min),
    /* pixel group: normalization and per-pixel operations */
    ROW(fisher_fg),
    ROW(rgb2lab),
    ROW(masked_stats),
    ROW(color_transfer),
    ROW(lab2rgb),
    ROW(background),
    ROW(ratio_mask),
    ROW(threshold),
    ROW(sub_sat),
    ROW(mask_logic),
    ROW(compare),
    /* objects */
    ROW(label),
    ROW(area_filter),
    ROW(edt),
    ROW(watershed),
    /* features, nucleus half */
    ROW(nucleus_features),
    /* features, pixel half: per-tile channels */
    ROW(deconv),
    ROW(sobel),
    ROW(filter_bank),
};
const size_t wsisa_n_ops = sizeof wsisa_ops / sizeof *wsisa_ops;

const wsisa_op *wsisa_op_find(const char *name) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (strcmp(wsisa_ops[i].name, name) == 0) return &wsisa_ops[i];
  return NULL;
}

const wsisa_op *wsisa_op_of(const struct starpu_codelet *codelet) {
  for (size_t i = 0; i < wsisa_n_ops; i++)
    if (wsisa_ops[i].codelet == codelet) return &wsisa_ops[i];
  return NULL;
}
