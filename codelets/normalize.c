/* The normalization chain of a tile (docs/workflow.md Normalization; nscale's
 * Normalization::normalization): fisher_fg -> rgb2lab -> masked_stats ->
 * color_transfer -> lab2rgb, intermediates living only on StarPU's side;
 * with statistics given (a slide's), masked_stats is left out. */
#include "codelets/codelets_private.h"
#include "codelets/cpu/cpu.h"

int wsisa_normalize_submit(starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out,
                           int width, int height) {
  return wsisa_normalize_submit_stats(rgb_in, rgb_out, width, height, NULL);
}

int wsisa_normalize_submit_stats(starpu_data_handle_t rgb_in, starpu_data_handle_t rgb_out,
                                 int width, int height, starpu_data_handle_t given) {
  if (wsisa__check_matrices(2, (starpu_data_handle_t[]){rgb_in, rgb_out},
                            (size_t[]){3, 3}) ||
      starpu_matrix_get_nx(rgb_in) != (uint32_t)width ||
      starpu_matrix_get_ny(rgb_in) != (uint32_t)height ||
      (given && wsisa__check_vector(given, WSISA_STATS_N, sizeof(double))))
    return WSISA_EINTERNAL;
  starpu_data_handle_t fg = NULL, lab = NULL, stats = NULL, lab_t = NULL;
  int rc = wsisa_image_register_tmp(width, height, 1, WSISA_U8, &fg, NULL);
  if (!rc) rc = wsisa_image_register_tmp(width, height, 3, WSISA_F32, &lab, NULL);
  if (!rc) rc = wsisa_image_register_tmp(width, height, 3, WSISA_F32, &lab_t, NULL);
  if (rc) goto done;
  if (!given) starpu_vector_data_register(&stats, -1, 0, WSISA_STATS_N, sizeof(double));
  if ((rc = wsisa_submit_fisher_fg(rgb_in, fg)) || (rc = wsisa_submit_rgb2lab(rgb_in, lab)) ||
      (!given && (rc = wsisa_submit_masked_stats(lab, fg, stats))) ||
      (rc = wsisa_submit_color_transfer(lab, fg, given ? given : stats, lab_t)))
    goto done;
  /* lab and stats have had their last consumer: free them as soon as it ran. */
  starpu_data_unregister_submit(lab);
  if (stats) starpu_data_unregister_submit(stats);
  lab = stats = NULL;
  rc = wsisa_submit_lab2rgb(lab_t, fg, rgb_in, rgb_out);
done:;
  starpu_data_handle_t left[] = {fg, lab, stats, lab_t};
  for (size_t i = 0; i < sizeof left / sizeof *left; i++)
    if (left[i]) starpu_data_unregister_submit(left[i]);
  return rc;
}
