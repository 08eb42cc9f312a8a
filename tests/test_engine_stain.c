/* The stain check on a tile's pixels: the bundled H&E tile passes, and a
 * pale greyscale image saved as RGB, which its density, cone and residual
 * measures all let through, is refused as colourless. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/workflow/workflow.h"
#include "tests/testutil.h"

static wsisa_image *tile(void) {
  wsisa_image *img = tu_load("tests/data/tile_256.png");
  cr_assert_not_null(img);
  cr_assert_eq(img->channels, 3);
  return img;
}

static void show(const char *what, const wsisa_image *img) {
  wsisa__stain st = {0};
  wsisa__stain_add(&st, img);
  cr_log_info("%s: mean OD %.3f, outside %.3f, residual %.3f, colourless %.3f\n", what,
              wsisa__stain_mean_od(&st), wsisa__stain_outside(&st), wsisa__stain_residual(&st),
              (double)st.grey / (double)st.tissue);
}

Test(stain, he_tile_passes) {
  wsisa_image *img = tile();
  wsisa_err e = WSISA_ERR_INIT;
  show("H&E", img);
  cr_expect_eq(wsisa_stain_check_image(img, 0, "tile_256.png", "--no-stain-check", &e), 0, "%s",
               e.msg);
  wsisa_image_free(img);
}

/* the tile's green channel as grey, at half its optical density */
Test(stain, grey_saved_as_rgb_is_refused) {
  wsisa_image *img = tile();
  for (int y = 0; y < img->height; y++) {
    uint8_t *p = wsisa_image_row(img, y);
    for (int x = 0; x < img->width; x++, p += 3)
      p[0] = p[1] = p[2] = (uint8_t)(255 - (255 - p[1]) / 2);
  }
  show("grey", img);
  wsisa_err e = WSISA_ERR_INIT;
  cr_expect_eq(wsisa_stain_check_image(img, 0, "grey.png", "--no-stain-check", &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "grey.png: not a bright-field H&E slide") != NULL, "%s", e.msg);
  cr_expect(strstr(e.msg, "greyscale image saved as RGB") != NULL, "%s", e.msg);
  wsisa_image_free(img);
}
