// Placement bounds explorer: a minimal page-mapped log-structured store (segments = erase
// blocks of 512 pages, greedy cleaning, one open segment per class) with a few placements, used
// to measure what an online placement can reach on the reference placement traces. It is a
// research yardstick beside nandlab, not part of the product (experiments/placement/bounds/
// README.md says what each figure shows). It reproduces nandlab's `none`, `dac` and `oracle`
// write amplification on the three reference traces within 1.5 %.
//
//   bounds TRACE.bin POLICY [RATEFILE]
//
// TRACE.bin: the trace's page numbers as little-endian u32 (tobin.py makes it from `.mqsim`).
// POLICY:
//   none      one class
//   dac       DAC: a host write promotes the page one class, a cleaner copy demotes it one
//   oracle    future knowledge: the class of the band holding the page's true distance to its
//             next write (nandlab's default geometric bands: 4^(i - (R-2)/2) logical passes)
//   rate      the band of the page's true mean write interval (RATEFILE: one f32 per page, in
//             writes), on host writes and cleaner copies alike
//   twoclass  class 1 for pages whose true mean interval is below THRESHOLD writes (env), else 0
// Environment: R (classes, default 6), BANDS (comma-separated band boundaries in logical passes,
// ascending; default geometric), SCALE (multiplies the interval before banding, default 1),
// THRESHOLD (twoclass), BLIND=1 (a page's first write goes to class 0 whatever the policy knows:
// the placement cannot know a page before it has seen it written).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEG 512
#define NONE 0xffffffffu
enum { NOSEP, DAC, ORACLE, RATE, TWOCLASS };

static uint32_t n_pages, n_segs, classes, reserve;
static uint32_t *map, *owner, *valid, *fill, *open_seg, *free_segs, n_free;
static uint8_t *closed, *cls;
static uint64_t user_writes, copies, now;
static uint32_t *next_write; // oracle: per page, the index of its current copy's next write
static float *interval;      // rate, twoclass: per page true mean write interval
static double bands[64], scale = 1.0, threshold;
static int n_bands, policy, blind;

static uint32_t band(double writes) {
  double passes = writes * scale / n_pages;
  int i = 0;
  while (i < n_bands && passes >= bands[i]) i++;
  return classes - 1 - i; // shortest distances: the top class
}

static uint32_t on_host(uint32_t p, int first) {
  if (first && blind) return 0;
  switch (policy) {
  case DAC: return first ? 0 : (cls[p] + 1 < classes ? cls[p] + 1 : classes - 1);
  case ORACLE: return next_write[p] == NONE ? 0 : band((double)(next_write[p] - now));
  case RATE: return band(interval[p]);
  case TWOCLASS: return interval[p] < threshold;
  default: return 0;
  }
}

static uint32_t on_copy(uint32_t p) {
  switch (policy) {
  case DAC: return cls[p] ? cls[p] - 1 : 0;
  case ORACLE: return next_write[p] == NONE ? 0 : band((double)(next_write[p] - now));
  case RATE: return band(interval[p]);
  case TWOCLASS: return interval[p] < threshold;
  default: return 0;
  }
}

static void place(uint32_t p, uint32_t c) {
  uint32_t s = open_seg[c];
  if (s == NONE || fill[s] == SEG) {
    if (s != NONE) closed[s] = 1;
    if (n_free == 0) { fprintf(stderr, "out of segments\n"); exit(1); }
    s = free_segs[--n_free];
    fill[s] = valid[s] = 0; closed[s] = 0; open_seg[c] = s;
  }
  uint32_t ppn = s * SEG + fill[s]++;
  owner[ppn] = p; map[p] = ppn; valid[s]++; cls[p] = (uint8_t)c;
}

static void drop(uint32_t p) {
  if (map[p] == NONE) return;
  valid[map[p] / SEG]--; owner[map[p]] = NONE; map[p] = NONE;
}

static void clean(void) {
  while (n_free < reserve) {
    uint32_t victim = NONE, least = SEG + 1;
    for (uint32_t s = 0; s < n_segs; s++)
      if (closed[s] && valid[s] < least) { least = valid[s]; victim = s; }
    if (victim == NONE) { fprintf(stderr, "no closed segment\n"); exit(1); }
    for (uint32_t i = 0; i < SEG; i++) {
      uint32_t p = owner[victim * SEG + i];
      if (p == NONE) continue;
      drop(p); place(p, on_copy(p)); copies++;
    }
    closed[victim] = 0; free_segs[n_free++] = victim;
  }
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: bounds TRACE.bin POLICY [RATEFILE]\n"); return 2; }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  fseek(f, 0, SEEK_END); uint64_t m = (uint64_t)ftell(f) / 4; fseek(f, 0, SEEK_SET);
  uint32_t *trace = malloc(m * 4);
  if (fread(trace, 4, m, f) != m) { fprintf(stderr, "short read\n"); return 2; }
  fclose(f);
  for (uint64_t i = 0; i < m; i++) if (trace[i] + 1 > n_pages) n_pages = trace[i] + 1;
  const char *names[] = {"none", "dac", "oracle", "rate", "twoclass"};
  policy = -1;
  for (int i = 0; i < 5; i++) if (!strcmp(argv[2], names[i])) policy = i;
  if (policy < 0) { fprintf(stderr, "unknown policy %s\n", argv[2]); return 2; }
  classes = policy == NOSEP ? 1 : policy == TWOCLASS ? 2 : 6;
  if (getenv("R")) classes = (uint32_t)atoi(getenv("R"));
  if (getenv("SCALE")) scale = atof(getenv("SCALE"));
  if (getenv("THRESHOLD")) threshold = atof(getenv("THRESHOLD"));
  blind = getenv("BLIND") && atoi(getenv("BLIND"));
  if (getenv("BANDS")) {
    char *s = getenv("BANDS");
    while (*s && n_bands < 63) { bands[n_bands++] = strtod(s, &s); if (*s == ',') s++; else break; }
  } else {
    for (uint32_t i = 0; i + 1 < classes; i++) bands[n_bands++] = pow(4.0, (double)i - (classes - 2) / 2.0);
  }
  if (policy == RATE || policy == TWOCLASS) {
    if (argc < 4) { fprintf(stderr, "%s needs a RATEFILE\n", argv[2]); return 2; }
    interval = malloc((size_t)n_pages * 4);
    FILE *r = fopen(argv[3], "rb");
    if (!r || fread(interval, 4, n_pages, r) != n_pages) { fprintf(stderr, "bad RATEFILE\n"); return 2; }
    fclose(r);
  }
  // Capacity as nandlab's matched geometry: utilization 0.85 plus the cleaning reserve.
  reserve = classes + 1;
  n_segs = (uint32_t)ceil(n_pages / (0.85 * SEG)) + reserve;
  map = malloc((size_t)n_pages * 4); memset(map, 0xff, (size_t)n_pages * 4);
  owner = malloc((size_t)n_segs * SEG * 4); memset(owner, 0xff, (size_t)n_segs * SEG * 4);
  valid = calloc(n_segs, 4); fill = calloc(n_segs, 4); closed = calloc(n_segs, 1);
  cls = calloc(n_pages, 1); free_segs = malloc((size_t)n_segs * 4);
  open_seg = malloc(64 * 4); memset(open_seg, 0xff, 64 * 4);
  for (uint32_t s = 0; s < n_segs; s++) free_segs[n_free++] = n_segs - 1 - s;
  uint32_t *later = NULL;
  if (policy == ORACLE) {
    later = malloc(m * 4); next_write = malloc((size_t)n_pages * 4);
    memset(next_write, 0xff, (size_t)n_pages * 4);
    uint32_t *seen = malloc((size_t)n_pages * 4); memset(seen, 0xff, (size_t)n_pages * 4);
    for (uint64_t i = m; i-- > 0;) { later[i] = seen[trace[i]]; seen[trace[i]] = (uint32_t)i; }
    free(seen);
  }
  uint8_t *written = calloc(n_pages, 1);
  for (now = 0; now < m; now++) {
    uint32_t p = trace[now];
    if (policy == ORACLE) next_write[p] = later[now];
    uint32_t c = on_host(p, !written[p]);
    written[p] = 1;
    drop(p);
    clean();
    place(p, c);
    user_writes++;
  }
  printf("%s WA %.4f (segments %u, classes %u)\n", argv[2], (double)(user_writes + copies) / user_writes, n_segs, classes);
  return 0;
}
