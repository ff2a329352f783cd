/* uses: util/memory_plan.c */
/* Standalone test for delegate_c/util/memory_plan.c: on seeded random lifetimes
 * and sizes, and on hand-made cases, tensors alive at the same step never
 * share bytes, offsets are aligned, the arena holds every tensor, and it is
 * at least the lower bound (and exactly it where the answer is known).
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined -I delegate_c \
 *       tests/c/test_memory_plan.c delegate_c/util/memory_plan.c && ./a.out
 */
#include <stdio.h>
#include <stdlib.h>

#include "util/memory_plan.h"
#include "check.h"


static unsigned g_seed = 12345;
static unsigned next_rand(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (g_seed >> 8) & 0xffffff;
}

/* Plans req[n] and checks the invariants; returns the arena size. */
static size_t plan_and_check(const MemoryRequest* req, int n, size_t align, const char* what) {
  size_t* off = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
  size_t arena = 0, bound = 0;
  CHECK(memory_plan(req, n, align, off, &arena, &bound) == 0, "%s: plan failed", what);
  for (int i = 0; i < n; ++i) {
    size_t si = (req[i].size + align - 1) / align * align;
    CHECK(off[i] % align == 0, "%s: tensor %d at %zu, not a multiple of %zu", what, i, off[i], align);
    CHECK(off[i] + si <= arena, "%s: tensor %d [%zu, %zu) outside the arena of %zu", what, i, off[i], off[i] + si,
          arena);
    for (int j = 0; j < i; ++j) {
      int together = !(req[j].last < req[i].first || req[i].last < req[j].first);
      int overlap = off[i] < off[j] + req[j].size && off[j] < off[i] + req[i].size;
      CHECK(!(together && overlap), "%s: tensors %d and %d live together and overlap", what, i, j);
    }
  }
  CHECK(arena >= bound, "%s: arena %zu below the lower bound %zu", what, arena, bound);
  free(off);
  return arena;
}

int main(void) {
  /* A chain: each tensor lives from its writer to its one reader; two
   * buffers of the largest size suffice. */
  MemoryRequest chain[6];
  for (int i = 0; i < 6; ++i) chain[i] = (MemoryRequest){(size_t)(100 + 10 * i), i - 1, i};
  size_t a = plan_and_check(chain, 6, 4, "chain");
  CHECK(a == 140 + 152, "chain: arena %zu, want 292 (the two largest neighbours, aligned)", a);

  /* A shortcut alive across a block (BlazeFace): largest-first alone
   * leaves a gap the other orders close. */
  MemoryRequest shortcut[] = {{400, -1, 4}, {300, 0, 1}, {300, 1, 2}, {300, 2, 3}, {100, 3, 4}, {500, 4, 5}};
  size_t bound_sc = 0, arena_sc = 0, off_sc[6];
  memory_plan(shortcut, 6, 1, off_sc, &arena_sc, &bound_sc);
  plan_and_check(shortcut, 6, 1, "shortcut");
  CHECK(arena_sc == bound_sc, "shortcut: arena %zu, lower bound %zu", arena_sc, bound_sc);

  /* Nothing to plan. */
  plan_and_check(NULL, 0, 64, "empty");

  /* Random graphs: lifetimes within 200 steps, sizes from 1 byte to 1 MiB. */
  for (int round = 0; round < 200; ++round) {
    int n = 1 + (int)(next_rand() % 120);
    MemoryRequest* req = malloc(sizeof(MemoryRequest) * (size_t)n);
    for (int i = 0; i < n; ++i) {
      int first = (int)(next_rand() % 200) - 1;
      int len = (int)(next_rand() % (round % 3 == 0 ? 100 : 8));
      req[i] = (MemoryRequest){1 + next_rand() % (1u << 20), first, first + 1 + len};
    }
    char what[32];
    snprintf(what, sizeof(what), "random %d", round);
    plan_and_check(req, n, round % 2 ? 256 : 4, what);
    free(req);
  }

  if (g_failures) {
    fprintf(stderr, "%d failure(s)\n", g_failures);
    return 1;
  }
  printf("memory_plan: all checks passed\n");
  return 0;
}
