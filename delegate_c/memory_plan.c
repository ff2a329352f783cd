#include "memory_plan.h"

#include <stdlib.h>

/* Greedy by size: place the largest tensors first, each at the lowest
 * offset that does not overlap a placed tensor whose lifetime overlaps its
 * own. This usually lands within a few percent of the peak of live bytes. */

typedef struct Placed {
  size_t offset, size;
  int first, last;
} Placed;

static int by_size_desc(const void* a, const void* b, void* sizes) {
  const size_t* s = sizes;
  size_t x = s[*(const int*)a], y = s[*(const int*)b];
  return x < y ? 1 : x > y ? -1 : (*(const int*)a - *(const int*)b);
}

/* qsort_r is a GNU extension; a small insertion sort keeps this portable
 * (partitions hold at most a few thousand tensors). */
static void sort_indices(int* idx, int n, const size_t* sizes) {
  for (int i = 1; i < n; ++i) {
    int v = idx[i], j = i - 1;
    while (j >= 0 && by_size_desc(&idx[j], &v, (void*)sizes) > 0) {
      idx[j + 1] = idx[j];
      --j;
    }
    idx[j + 1] = v;
  }
}

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

int memory_plan(const MemoryRequest* req, int n, size_t alignment, size_t* offsets, size_t* arena_bytes,
                size_t* lower_bound) {
  int* order = malloc((size_t)(n ? n : 1) * sizeof(int));
  size_t* sizes = malloc((size_t)(n ? n : 1) * sizeof(size_t));
  Placed* placed = malloc((size_t)(n ? n : 1) * sizeof(Placed));
  if (!order || !sizes || !placed) {
    free(order);
    free(sizes);
    free(placed);
    return -1;
  }
  for (int i = 0; i < n; ++i) order[i] = i, sizes[i] = align_up(req[i].size, alignment);
  sort_indices(order, n, sizes);
  size_t total = 0;
  int num_placed = 0;
  for (int k = 0; k < n; ++k) {
    int i = order[k];
    size_t offset = 0;
    /* Move past every conflicting block until a gap fits; the placed list
     * is small enough for this quadratic scan. */
    for (int moved = 1; moved;) {
      moved = 0;
      for (int j = 0; j < num_placed; ++j) {
        const Placed* p = &placed[j];
        int live_together = !(p->last < req[i].first || req[i].last < p->first);
        int overlap = offset < p->offset + p->size && p->offset < offset + sizes[i];
        if (live_together && overlap) {
          offset = p->offset + p->size;
          moved = 1;
        }
      }
    }
    offsets[i] = offset;
    placed[num_placed++] = (Placed){offset, sizes[i], req[i].first, req[i].last};
    if (offset + sizes[i] > total) total = offset + sizes[i];
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
  *arena_bytes = total;
  *lower_bound = peak;
  free(order);
  free(sizes);
  free(placed);
  return 0;
}
