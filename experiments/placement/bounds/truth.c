// Per-page true mean write interval (in writes, f32 per page) of placement_traces' `hotcold`
// and `zipf` traces: reproduces that generator's seeded page permutation (the same splitmix64
// stream and shuffle, which come first in it) and its access probabilities.
//   truth KIND N SEED PARAM > FILE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static uint64_t state;
static uint64_t next64(void) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
int main(int argc, char **argv) {
  if (argc != 5) { fprintf(stderr, "usage: truth hotcold|zipf N SEED PARAM\n"); return 2; }
  uint64_t n = strtoull(argv[2], 0, 10); state = strtoull(argv[3], 0, 10);
  double param = atof(argv[4]);
  uint32_t *perm = malloc(n * 4);
  for (uint64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
  for (uint64_t i = n - 1; i > 0; i--) { uint64_t j = next64() % (i + 1); uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  float *iv = malloc(n * 4);
  if (!strcmp(argv[1], "hotcold")) {
    uint64_t hot = (uint64_t)llround((1.0 - param) * n);
    for (uint64_t r = 0; r < n; r++)
      iv[perm[r]] = (float)(r < hot ? hot / param : (n - hot) / (1.0 - param));
  } else if (!strcmp(argv[1], "zipf")) {
    double acc = 0;
    for (uint64_t r = 0; r < n; r++) acc += 1.0 / pow((double)(r + 1), param);
    for (uint64_t r = 0; r < n; r++) iv[perm[r]] = (float)(acc * pow((double)(r + 1), param));
  } else { fprintf(stderr, "unknown kind\n"); return 2; }
  fwrite(iv, 4, n, stdout);
  return 0;
}
