/* Channel invert: rc = 255 - r, the reconstruction's input (docs/workflow.md, level 2). */
#include "codelets/cpu/cpu.h"

int wsisa_cpu_invert(const wsisa_image *in, int channel, wsisa_image *out) {
  if (in->type != WSISA_U8 || out->type != WSISA_U8 || out->channels != 1 ||
      channel < 0 || channel >= in->channels || in->width != out->width ||
      in->height != out->height)
    return WSISA_EINTERNAL;
  const int c = in->channels;
  for (int y = 0; y < in->height; y++) {
    const uint8_t *src = wsisa_image_row(in, y);
    uint8_t *dst = wsisa_image_row(out, y);
    for (int x = 0; x < in->width; x++) dst[x] = (uint8_t)(255 - src[x * c + channel]);
  }
  return 0;
}
