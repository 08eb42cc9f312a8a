/* Exact Euclidean distance transform, the same integer algorithm as
 * codelets/cpu/edt.c (Meijster et al. 2000): one work-item per column for the
 * 1-D distances, one per row for the lower envelope; only the final square
 * root is float (built with correctly rounded sqrt), so the bits match. */

#define INF (1 << 30)
#define EDT_NONE 31622776.0f /* WSISA_EDT_NONE: no off pixel in the image */

__kernel void wsisa_edt_columns(__global const uchar *mask, uint mask_off,
                                uint mask_stride, __global int *g, int width,
                                int height) {
  int x = get_global_id(0);
  if (x >= width) return;
  int d = INF;
  for (int y = 0; y < height; y++) {
    d = mask[mask_off + y * mask_stride + x] ? (y ? d + 1 : INF) : 0;
    g[y * width + x] = d;
  }
  for (int y = height - 2; y >= 0; y--) {
    int below = g[(y + 1) * width + x] + 1;
    if (below < g[y * width + x]) g[y * width + x] = below;
  }
}

long parabola(long x, long u, long g) { return (x - u) * (x - u) + g * g; }

long floor_div(long a, long b) {
  long q = a / b;
  return q - (a % b != 0 && a < 0);
}

__kernel void wsisa_edt_rows(__global const int *g_all, __global int *s_all,
                             __global int *t_all, __global uchar *dist,
                             uint dist_off, uint dist_stride, int width, int height) {
  int y = get_global_id(0);
  if (y >= height) return;
  __global const int *g = g_all + y * width;
  __global int *s = s_all + y * width, *t = t_all + y * width;
  __global float *out = (__global float *)(dist + dist_off + y * dist_stride);
  int k = -1;
  for (int u = 0; u < width; u++) {
    if (g[u] >= INF) continue;
    while (k >= 0 && parabola(t[k], s[k], g[s[k]]) > parabola(t[k], u, g[u])) k--;
    if (k < 0) {
      k = 0;
      s[0] = u;
      t[0] = 0;
      continue;
    }
    long i = s[k];
    long num = (long)u * u - i * i + (long)g[u] * g[u] - (long)g[i] * g[i];
    long w = 1 + floor_div(num, 2 * (u - i));
    if (w < width) {
      k++;
      s[k] = u;
      t[k] = (int)w;
    }
  }
  if (k < 0) {
    for (int x = 0; x < width; x++) out[x] = EDT_NONE;
    return;
  }
  for (int x = width - 1; x >= 0; x--) {
    out[x] = sqrt((float)parabola(x, s[k], g[s[k]]));
    if (x == t[k]) k--;
  }
}
