/* `make-synthetic-slides DIR`: the test suites' synthetic slides written to
 * DIR for a look by hand (wsisa tiles DIR/svs40.svs ...), and the sample with
 * its optical density scaled (sample-od0.5.tiff ...). */
#include <stdio.h>

#include "tests/synthslide.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make-synthetic-slides DIR\n");
    return 2;
  }
  char path[WSISA_PATH_MAX];
  int rc = 0;
  tu_path(path, "%s/svs40.svs", argv[1]);
  rc |= tu_synth_svs40(path, 1);
  tu_path(path, "%s/svs40-no-mpp.svs", argv[1]);
  rc |= tu_synth_svs40(path, 0);
  tu_path(path, "%s/svs40-large.svs", argv[1]);
  rc |= tu_synth_svs40_large(path);
  tu_path(path, "%s/generic-cm.tiff", argv[1]);
  rc |= tu_synth_generic_cm(path);
  tu_path(path, "%s/fluorescence.tiff", argv[1]);
  rc |= tu_synth_fluorescence(path);
  /* the sample's stain paler and darker (docs/guide.md, The stain check) */
  const double od[] = {0.25, 0.5, 2, 3};
  for (size_t i = 0; i < sizeof od / sizeof *od; i++) {
    tu_path(path, "%s/sample-od%g.tiff", argv[1], od[i]);
    rc |= tu_synth_sample_od(path, od[i]);
  }
  tu_path(path, "%s/mosaic-2x2.tiff", argv[1]);
  rc |= tu_synth_mosaic(path, 2, 2);
  return rc ? 1 : 0;
}
