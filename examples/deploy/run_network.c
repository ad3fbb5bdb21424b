/* run_network: runs a network Loupe exported (`:export DIR`) from C — the whole deploy graph
 * through deploy.so's entry points, on the same thread pool as Loupe's REPL.
 *
 *   cc -O2 -I DIR examples/deploy/run_network.c DIR/deploy.so -Wl,-rpath,DIR -o run_network
 *   ./run_network [-t THREADS] [-n RUNS] [-s SIZES] [-i NAME=FILE.bin …] [-o OUT.bin]
 *
 * Each input comes from a raw file of its bytes (row-major, its dtype, as deploy.h lists the
 * inputs); inputs not given are filled with a ramp of small values. A dynamic build's export
 * holds a variant per size built: -s "batch=4, seq=64" runs that one (else variant 0); a generic
 * build's runs any sizes -s gives (and needs them). It runs the network once, then RUNS more times
 * and prints the median and the fastest time, and writes output 0's bytes to OUT.bin (or prints its
 * first values as float32 when that is its dtype). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include "deploy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Reads exactly `bytes` bytes of `path`, or exits saying why. */
static void *read_exactly(const char *path, size_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "run_network: cannot open %s\n", path);
    exit(1);
  }
  void *data = malloc(bytes ? bytes : 1);
  size_t got = fread(data, 1, bytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra) {
    fprintf(stderr, "run_network: %s does not hold %zu bytes\n", path, bytes);
    exit(1);
  }
  return data;
}

int main(int argc, char **argv) {
  int threads = 0, runs = 10;
  const char *out_path = NULL, *sizes = NULL;
  const char *given[LOUPE_NUM_INPUTS > 0 ? LOUPE_NUM_INPUTS : 1] = {0};
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "-t") == 0 && a + 1 < argc) {
      threads = atoi(argv[++a]);
    } else if (strcmp(argv[a], "-n") == 0 && a + 1 < argc) {
      runs = atoi(argv[++a]);
    } else if (strcmp(argv[a], "-s") == 0 && a + 1 < argc) {
      sizes = argv[++a];
    } else if (strcmp(argv[a], "-o") == 0 && a + 1 < argc) {
      out_path = argv[++a];
    } else if (strcmp(argv[a], "-i") == 0 && a + 1 < argc) {
      const char *word = argv[++a], *eq = strchr(word, '=');
      int found = 0;
      for (int i = 0; eq && i < LOUPE_NUM_INPUTS; ++i)
        if (strlen(loupe_inputs[i].name) == (size_t)(eq - word) &&
            strncmp(loupe_inputs[i].name, word, (size_t)(eq - word)) == 0) {
          given[i] = eq + 1;
          found = 1;
        }
      if (!found) {
        fprintf(stderr, "run_network: no input named in '%s'\n", word);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: run_network [-t THREADS] [-n RUNS] [-s SIZES] "
                      "[-i NAME=FILE.bin ...] [-o OUT.bin]\n");
      return 2;
    }
  }
  if (runs < 1)
    runs = 1;
  if (sizes && loupe_variant_index(sizes) < 0) {
    fprintf(stderr, "run_network: no variant was built for '%s'; built:", sizes);
    for (int v = 0; loupe_variant_sizes(v); ++v)
      fprintf(stderr, "%s %s", v ? ";" : "", loupe_variant_sizes(v));
    fprintf(stderr, "\n");
    return 2;
  }
  if (!sizes && strchr(loupe_variant_sizes(0), '?')) {
    fprintf(stderr,
            "run_network: the network takes any sizes and needs them: -s '%s' with each "
            "? a size\n",
            loupe_variant_sizes(0));
    return 2;
  }
  loupe_graph *g = sizes ? loupe_create_sizes(threads, sizes) : loupe_create(threads);
  if (!g) {
    fprintf(stderr, "run_network: cannot make the network at those sizes (out of memory, its "
                    "storage past 2^48 bytes, or a size past what it allows)\n");
    return 1;
  }
  for (int i = 0; i < LOUPE_NUM_INPUTS; ++i) {
    /* The variant's own shapes: a size of a dynamic build changes the inputs' bytes. */
    const loupe_tensor_info *in = loupe_input_info(g, i);
    size_t bytes = (size_t)in->bytes;
    void *data;
    if (given[i]) {
      data = read_exactly(given[i], bytes);
    } else {
      data = calloc(bytes ? bytes : 1, 1);
      if (strcmp(in->dtype, "float32") == 0)
        for (size_t k = 0; k < bytes / 4; ++k)
          ((float *)data)[k] = (float)(k % 17) / 17.0f - 0.5f;
    }
    if (loupe_set_input(g, in->name, data, bytes) != 0) {
      fprintf(stderr, "run_network: input %s refused\n", in->name);
      return 1;
    }
    free(data);
  }
  loupe_run(g); /* warm-up: first touches of memory and code */
  double *ms = malloc(sizeof(double) * (size_t)runs);
  for (int r = 0; r < runs; ++r) {
    double t0 = now_ms();
    loupe_run(g);
    ms[r] = now_ms() - t0;
  }
  qsort(ms, (size_t)runs, sizeof(double), compare_doubles);
  printf("%d threads, %d runs: median %.4f ms, fastest %.4f ms\n", loupe_set_num_threads(0), runs,
         ms[runs / 2], ms[0]);
  const loupe_tensor_info *out_info = loupe_output_info(g, 0);
  size_t bytes = (size_t)out_info->bytes;
  void *out = malloc(bytes ? bytes : 1);
  loupe_get_output(g, 0, out, bytes);
  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f || fwrite(out, 1, bytes, f) != bytes) {
      fprintf(stderr, "run_network: cannot write %s\n", out_path);
      return 1;
    }
    fclose(f);
  } else if (strcmp(out_info->dtype, "float32") == 0) {
    printf("output %s:", out_info->name);
    for (size_t k = 0; k < bytes / 4 && k < 6; ++k)
      printf(" %.6g", ((float *)out)[k]);
    printf("\n");
  }
  free(out);
  free(ms);
  loupe_destroy(g);
  return 0;
}
