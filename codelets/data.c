/* Images as StarPU matrix handles: one element per pixel. */
#include "codelets/codelets_private.h"

static uint32_t where_mask = STARPU_CPU | STARPU_OPENCL;

void wsisa_codelets_set_where(uint32_t where) { where_mask = where; }
uint32_t wsisa_codelets_where(void) { return where_mask; }

int wsisa_image_register(wsisa_image *img, starpu_data_handle_t *handle, wsisa_err *e) {
  size_t px = wsisa_image_pixel_bytes(img);
  if (img->stride % px)
    return wsisa_error(e, WSISA_EINTERNAL, "image stride is not a whole pixel count");
  starpu_matrix_data_register(handle, STARPU_MAIN_RAM, (uintptr_t)img->data,
                              (uint32_t)(img->stride / px), (uint32_t)img->width,
                              (uint32_t)img->height, px);
  return 0;
}

int wsisa_image_register_tmp(int width, int height, int channels, wsisa_dtype type,
                             starpu_data_handle_t *handle, wsisa_err *e) {
  size_t px = (size_t)channels * wsisa_dtype_size(type);
  if (width <= 0 || height <= 0 || px == 0)
    return wsisa_error(e, WSISA_EINTERNAL, "invalid intermediate %dx%dx%d", width,
                       height, channels);
  starpu_matrix_data_register(handle, -1, 0, (uint32_t)width, (uint32_t)width,
                              (uint32_t)height, px);
  return 0;
}

wsisa_image wsisa_image_from_buffer(void *buffer, wsisa_dtype type) {
  size_t elem = STARPU_MATRIX_GET_ELEMSIZE(buffer);
  int channels = (int)(elem / wsisa_dtype_size(type));
  return wsisa_image_view((void *)STARPU_MATRIX_GET_PTR(buffer),
                          (int)STARPU_MATRIX_GET_NX(buffer),
                          (int)STARPU_MATRIX_GET_NY(buffer), channels, type,
                          STARPU_MATRIX_GET_LD(buffer) * elem);
}
