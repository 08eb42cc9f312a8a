/* The image type: allocation, views and copies. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

size_t wsisa_dtype_size(wsisa_dtype type) {
  switch (type) {
    case WSISA_U8: return 1;
    case WSISA_U16: return 2;
    case WSISA_I32: return 4;
    case WSISA_F32: return 4;
  }
  return 0;
}

const char *wsisa_dtype_name(wsisa_dtype type) {
  switch (type) {
    case WSISA_U8: return "u8";
    case WSISA_U16: return "u16";
    case WSISA_I32: return "i32";
    case WSISA_F32: return "f32";
  }
  return "?";
}

size_t wsisa_image_pixel_bytes(const wsisa_image *img) {
  return (size_t)img->channels * wsisa_dtype_size(img->type);
}

int wsisa_image_new(int width, int height, int channels, wsisa_dtype type,
                    wsisa_image **out, wsisa_err *e) {
  *out = NULL;
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4 ||
      wsisa_dtype_size(type) == 0)
    return wsisa_error(e, WSISA_EINTERNAL, "invalid image shape %dx%dx%d", width,
                       height, channels);
  wsisa_image *img = calloc(1, sizeof *img);
  size_t stride = (size_t)width * (size_t)channels * wsisa_dtype_size(type);
  void *data = img ? calloc((size_t)height, stride) : NULL;
  if (!data) {
    free(img);
    return wsisa_error(e, WSISA_ENOMEM, "out of memory for a %dx%d image", width,
                       height);
  }
  *img = wsisa_image_view(data, width, height, channels, type, stride);
  img->owns_data = 1;
  *out = img;
  return 0;
}

wsisa_image wsisa_image_view(void *data, int width, int height, int channels,
                             wsisa_dtype type, size_t stride) {
  wsisa_image v = {width, height, channels, type, stride, data, 0};
  return v;
}

int wsisa_image_clone(const wsisa_image *src, wsisa_image **out, wsisa_err *e) {
  int rc = wsisa_image_new(src->width, src->height, src->channels, src->type, out, e);
  if (rc) return rc;
  size_t row = (size_t)src->width * wsisa_image_pixel_bytes(src);
  for (int y = 0; y < src->height; y++)
    memcpy(wsisa_image_row(*out, y), wsisa_image_row(src, y), row);
  return 0;
}

void wsisa_image_free(wsisa_image *img) {
  if (!img) return;
  if (img->owns_data) free(img->data);
  free(img);
}
