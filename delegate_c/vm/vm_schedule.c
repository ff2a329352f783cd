/* See vm_schedule.h. A barrier-free interval lets a detector's heads, the
 * partial passes of several split reductions and independent branches run
 * side by side (vm.c gives each phase of a level its own lanes). */
#include "vm/vm_schedule.h"

static int conflicts(const Access* x, const Access* y) {
  return x->space == y->space && x->lo < y->hi && y->lo < x->hi && (x->writes || y->writes);
}

static int depends(const Access* acc, const int* acc_at, int k, int q) {
  for (int i = acc_at[k]; i < acc_at[k + 1]; ++i)
    for (int j = acc_at[q]; j < acc_at[q + 1]; ++j)
      if (conflicts(&acc[i], &acc[j])) return 1;
  return 0;
}

int vm_schedule(const Access* acc, const int* acc_at, int a, int b, int by_level, int* level, int* order,
                unsigned char* starts) {
  int levels = 0;
  for (int k = a; k < b; ++k) {
    level[k] = by_level ? 0 : k - a;
    for (int q = a; by_level && q < k; ++q)
      if (level[q] + 1 > level[k] && depends(acc, acc_at, k, q)) level[k] = level[q] + 1;
    if (level[k] + 1 > levels) levels = level[k] + 1;
  }
  int n = a;
  for (int l = 0; l < levels; ++l)
    for (int k = a; k < b; ++k)
      if (level[k] == l) {
        starts[n] = n > a && l != level[order[n - 1]];
        order[n++] = k;
      }
  return levels ? levels - 1 : 0;
}
