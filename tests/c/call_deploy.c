/* call_deploy: a small C program that uses a Loupe export the way a deployment would — it
 * dlopens DIR/deploy.so, looks up the function declared in DIR/deploy.h, reads the params and
 * the input from .npy files and prints the output values, one per line.
 *
 * Built and run by BuildTest (ExportedLibraryWorksFromC) for the graph
 *   relu(conv2d(x, w) * (s * 2)), which exports fuse_conv2d_broadcast_mul_relu(x, w, scale, out)
 * with params w and __mul_scalar__0.
 *
 * usage: call_deploy DIR X.npy OUTPUT_ELEMENTS */
#include "deploy.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a little-endian float32 .npy file (version 1) with `count` elements, or exits. */
static float *read_npy(const char *path, size_t count) {
  FILE *f = fopen(path, "rb");
  unsigned char head[10];
  if (!f || fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "call_deploy: %s is not a .npy file\n", path);
    exit(1);
  }
  size_t header = head[8] | (size_t)head[9] << 8;
  float *data = malloc(count * sizeof(float));
  if (fseek(f, (long)(10 + header), SEEK_SET) != 0 ||
      fread(data, sizeof(float), count, f) != count) {
    fprintf(stderr, "call_deploy: %s holds fewer than %zu floats\n", path, count);
    exit(1);
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: call_deploy DIR X.npy OUTPUT_ELEMENTS\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/deploy.so", argv[1]);
  void *lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "call_deploy: %s\n", dlerror());
    return 1;
  }
  /* The header's declaration gives the function its type. */
  __typeof__(fuse_conv2d_broadcast_mul_relu) *fn =
      (__typeof__(fuse_conv2d_broadcast_mul_relu) *)dlsym(lib, "fuse_conv2d_broadcast_mul_relu");
  if (!fn) {
    fprintf(stderr, "call_deploy: %s\n", dlerror());
    return 1;
  }
  float *x = read_npy(argv[2], 1 * 3 * 8 * 8);
  snprintf(path, sizeof path, "%s/params/w.npy", argv[1]);
  float *w = read_npy(path, 4 * 3 * 3 * 3);
  snprintf(path, sizeof path, "%s/params/__mul_scalar__0.npy", argv[1]);
  float *scale = read_npy(path, 4);
  size_t n = (size_t)strtoul(argv[3], NULL, 10);
  float *out = calloc(n, sizeof(float));
  fn(x, w, scale, out);
  for (size_t i = 0; i < n; ++i)
    printf("%.9g\n", out[i]);
  free(x);
  free(w);
  free(scale);
  free(out);
  dlclose(lib);
  return 0;
}
