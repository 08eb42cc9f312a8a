/* Shared inside io/: libtiff's messages kept for wsisa's own error line. */
#ifndef WSISA_IO_PRIVATE_H
#define WSISA_IO_PRIVATE_H

#include "io/io.h"

/* Installs (once per process) libtiff error and warning handlers that keep
 * the calling thread's last error instead of printing it on stderr: libtiff
 * is read by wsisa and by OpenSlide alike, and the reason belongs in the one
 * line wsisa says. Clears this thread's kept message. */
void wsisa__tiff_messages_catch(void);
/* This thread's last libtiff error since wsisa__tiff_messages_catch, "" if
 * none: "ZIPDecode: Decoding error at scanline 768" with_module, else without
 * the module; *err (when given) gets errno as the error was raised, or 0. */
const char *wsisa__tiff_message(int with_module, int *err);

/* Pixels (x, y, width, height) of pyramid level `level` of an input, as
 * packed RGB u8: what a backend of wsisa_input reads (io/input.c). */
typedef int (*wsisa__level_reader)(void *ctx, int level, int64_t x, int64_t y, int width,
                                   int height, wsisa_image **out, wsisa_err *e);
/* The target-pixel rectangle of `s` read through `read`: the level region
 * under it, area-averaged by the factor (as it is when the factor is 1);
 * `name` is the input's, for messages. */
int wsisa__read_scaled(wsisa__level_reader read, void *ctx, const char *name,
                       const wsisa_scale *s, int64_t x, int64_t y, int width, int height,
                       wsisa_image **out, wsisa_err *e);

#endif
