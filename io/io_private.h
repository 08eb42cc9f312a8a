/* Shared inside io/: libtiff's messages kept for wsisa's own error line. */
#ifndef WSISA_IO_PRIVATE_H
#define WSISA_IO_PRIVATE_H

/* Installs (once per process) libtiff error and warning handlers that keep
 * the calling thread's last error instead of printing it on stderr: libtiff
 * is read by wsisa and by OpenSlide alike, and the reason belongs in the one
 * line wsisa says. Clears this thread's kept message. */
void wsisa__tiff_messages_catch(void);
/* This thread's last libtiff error since wsisa__tiff_messages_catch, "" if
 * none: "ZIPDecode: Decoding error at scanline 768" with_module, else without
 * the module; *err (when given) gets errno as the error was raised, or 0. */
const char *wsisa__tiff_message(int with_module, int *err);

#endif
