/* uses: vm/vm_schedule.c */
/* The persistent launch's phase order (vm_schedule.c): levels, barriers
 * and the order on small synthetic op lists that cover each kind of
 * dependency: read after write, write after read, write after write,
 * ranges that touch or overlap, other spaces, a staging space as a whole,
 * and dispatch order with by_level 0. */
#include <string.h>

#include "check.h"
#include "vm/vm_schedule.h"

enum { MAX = 16 };

/* Phases given as up to 3 accesses each ({space, lo, hi, writes}; hi 0 ends the list). */
typedef struct Phase {
  Access acc[3];
} Phase;

static int run(const Phase* phases, int n, int by_level, int* order, unsigned char* starts, int* level) {
  Access acc[MAX * 3];
  int at[MAX + 1], m = 0;
  for (int k = 0; k < n; ++k) {
    at[k] = m;
    for (int i = 0; i < 3 && phases[k].acc[i].hi; ++i) acc[m++] = phases[k].acc[i];
  }
  at[n] = m;
  return vm_schedule(acc, at, 0, n, by_level, level, order, starts);
}

static int same(const int* got, const int* want, int n) { return memcmp(got, want, (size_t)n * sizeof(int)) == 0; }

int main(void) {
  int order[MAX], level[MAX];
  unsigned char starts[MAX];
  /* x -> a, x -> b (both read x: no conflict), a -> c, b -> out(b), c -> out(c):
   * levels {x} {a, b} {c, out b} {out c}. */
  const Phase heads[] = {
      {{{2, 0, (size_t)-1, 0}, {0, 0, 100, 1}}},  /* x: staging in, writes x */
      {{{0, 0, 100, 0}, {0, 100, 200, 1}}},       /* a */
      {{{0, 0, 100, 0}, {0, 200, 260, 1}}},       /* b */
      {{{0, 100, 200, 0}, {0, 300, 400, 1}}},     /* c */
      {{{0, 200, 260, 0}, {3, 0, (size_t)-1, 1}}}, /* b's output conversion */
      {{{0, 300, 400, 0}, {4, 0, (size_t)-1, 1}}}, /* c's output conversion */
  };
  int barriers = run(heads, 6, 1, order, starts, level);
  const int want_order[] = {0, 1, 2, 3, 4, 5}, want_level[] = {0, 1, 1, 2, 2, 3};
  CHECK(barriers == 3, "heads: %d barriers, want 3", barriers);
  CHECK(same(order, want_order, 6) && same(level, want_level, 6), "heads: order or levels");
  CHECK(!starts[0] && starts[1] && !starts[2] && starts[3] && !starts[4] && starts[5], "heads: level starts");
  CHECK(run(heads, 6, 0, order, starts, level) == 5, "dispatch order: a barrier before every phase");
  CHECK(same(order, want_order, 6) && starts[1] && starts[2] && starts[5], "dispatch order kept");

  /* A later independent phase moves up to its level: 0 writes A, 1 reads A,
   * 2 reads B only (level 0, runs beside phase 0), 3 writes what 1 reads
   * (write after read: after 1). */
  const Phase moved[] = {
      {{{0, 0, 64, 1}}},
      {{{0, 0, 64, 0}, {0, 64, 128, 1}}},
      {{{1, 0, 32, 0}, {0, 128, 192, 1}}},
      {{{0, 60, 70, 1}}}, /* overlaps A's and phase 1's ranges */
  };
  barriers = run(moved, 4, 1, order, starts, level);
  const int moved_order[] = {0, 2, 1, 3};
  CHECK(barriers == 2 && same(order, moved_order, 4), "moved: %d barriers, order %d %d %d %d", barriers, order[0],
        order[1], order[2], order[3]);
  CHECK(!starts[1] && starts[2] && starts[3], "moved: level starts");

  /* Ranges that only touch do not conflict; two writers of one staging
   * space do (it is one buffer); reads of one range never do. */
  const Phase edges[] = {
      {{{0, 0, 64, 1}}},
      {{{0, 64, 128, 1}}},              /* touches phase 0's range: independent */
      {{{5, 0, (size_t)-1, 1}}},
      {{{5, 0, (size_t)-1, 1}}},        /* the same staging space: after phase 2 */
      {{{1, 0, 16, 0}}}, {{{1, 0, 16, 0}}}, /* two readers */
  };
  barriers = run(edges, 6, 1, order, starts, level);
  const int edge_level[] = {0, 0, 0, 1, 0, 0};
  CHECK(barriers == 1 && same(level, edge_level, 6), "edges: %d barriers", barriers);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
