#include "util/memory_plan.h"

#include <stdlib.h>
#include <string.h>

/* Offline packing of tensor lifetimes into one arena (the problem TFLite's
 * own arena planner and upstream's GPU delegate solve greedily). Several
 * greedy orders are tried and the smallest arena kept: largest first
 * usually wins, but on BlazeFace-style graphs (a shortcut kept alive across
 * a block) ordering by lifetime or by first use packs tighter. Each tensor
 * goes into the lowest gap (or the tightest gap) between the placed tensors
 * whose lifetimes overlap its own. */

typedef struct Block {
  size_t offset, size;
} Block;

enum { ORDER_SIZE, ORDER_LIFETIME, ORDER_FIRST_USE, NUM_ORDERS };
enum { FIT_LOWEST, FIT_TIGHTEST, NUM_FITS };

typedef struct Ctx {
  const MemoryRequest* req;
  const size_t* sizes;
  int order_kind;
} Ctx;

/* Sort key comparison: negative when tensor a goes before tensor b. Ties
 * fall back to size, then index, so every order is deterministic. */
static int before(const Ctx* c, int a, int b) {
  const MemoryRequest* r = c->req;
  long long ka = 0, kb = 0;
  if (c->order_kind == ORDER_LIFETIME) {
    ka = -(long long)(r[a].last - r[a].first);
    kb = -(long long)(r[b].last - r[b].first);
  } else if (c->order_kind == ORDER_FIRST_USE) {
    ka = r[a].first;
    kb = r[b].first;
  }
  if (ka != kb) return ka < kb ? -1 : 1;
  if (c->sizes[a] != c->sizes[b]) return c->sizes[a] > c->sizes[b] ? -1 : 1;
  return a - b;
}

/* qsort_r is a GNU extension; an insertion sort keeps this portable
 * (partitions hold at most a few thousand tensors). */
static void sort_order(int* idx, int n, const Ctx* c) {
  for (int i = 1; i < n; ++i) {
    int v = idx[i], j = i - 1;
    while (j >= 0 && before(c, idx[j], v) > 0) {
      idx[j + 1] = idx[j];
      --j;
    }
    idx[j + 1] = v;
  }
}

static void sort_blocks(Block* b, int n) {
  for (int i = 1; i < n; ++i) {
    Block v = b[i];
    int j = i - 1;
    while (j >= 0 && b[j].offset > v.offset) {
      b[j + 1] = b[j];
      --j;
    }
    b[j + 1] = v;
  }
}

/* Places every tensor in `order`; returns the arena size. conflicts is
 * scratch for n blocks. */
static size_t place(const MemoryRequest* req, const size_t* sizes, const int* order, int n, int fit,
                    size_t* offsets, char* placed, Block* conflicts) {
  size_t total = 0;
  memset(placed, 0, (size_t)n);
  for (int k = 0; k < n; ++k) {
    int i = order[k], nc = 0;
    for (int j = 0; j < n; ++j)
      if (placed[j] && !(req[j].last < req[i].first || req[i].last < req[j].first))
        conflicts[nc++] = (Block){offsets[j], sizes[j]};
    sort_blocks(conflicts, nc);
    /* Walk the gaps between conflicting blocks, in offset order. */
    size_t cursor = 0, best = 0, best_gap = 0;
    int found = 0;
    for (int c = 0; c < nc; ++c) {
      size_t end = conflicts[c].offset;
      if (end > cursor && end - cursor >= sizes[i] && (!found || end - cursor < best_gap)) {
        best = cursor, best_gap = end - cursor, found = 1;
        if (fit == FIT_LOWEST) break;
      }
      if (conflicts[c].offset + conflicts[c].size > cursor) cursor = conflicts[c].offset + conflicts[c].size;
    }
    if (!found) best = cursor; /* above every conflicting block */
    offsets[i] = best;
    placed[i] = 1;
    if (best + sizes[i] > total) total = best + sizes[i];
  }
  return total;
}

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

int memory_plan(const MemoryRequest* req, int n, size_t alignment, size_t* offsets, size_t* arena_bytes,
                size_t* lower_bound) {
  size_t m = (size_t)(n ? n : 1);
  int* order = malloc(m * sizeof(int));
  size_t* sizes = malloc(m * sizeof(size_t));
  size_t* trial = malloc(m * sizeof(size_t));
  char* placed = malloc(m);
  Block* conflicts = malloc(m * sizeof(Block));
  if (!order || !sizes || !trial || !placed || !conflicts) {
    free(order);
    free(sizes);
    free(trial);
    free(placed);
    free(conflicts);
    return -1;
  }
  for (int i = 0; i < n; ++i) sizes[i] = align_up(req[i].size, alignment);
  size_t best = (size_t)-1;
  for (int o = 0; o < NUM_ORDERS; ++o) {
    Ctx c = {req, sizes, o};
    for (int i = 0; i < n; ++i) order[i] = i;
    sort_order(order, n, &c);
    for (int f = 0; f < NUM_FITS; ++f) {
      size_t total = place(req, sizes, order, n, f, trial, placed, conflicts);
      if (total < best) {
        best = total;
        memcpy(offsets, trial, (size_t)n * sizeof(size_t));
      }
    }
  }
  /* The lower bound: the most bytes alive at any one step. */
  size_t peak = 0;
  for (int i = 0; i < n; ++i) {
    size_t live = 0;
    int t = req[i].first;
    for (int j = 0; j < n; ++j)
      if (req[j].first <= t && t <= req[j].last) live += req[j].size;
    if (live > peak) peak = live;
  }
  *arena_bytes = n ? best : 0;
  *lower_bound = peak;
  free(order);
  free(sizes);
  free(trial);
  free(placed);
  free(conflicts);
  return 0;
}
