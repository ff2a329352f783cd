/* A barrier across all the work-groups of one launch, for a persistent
 * kernel (issue 36): one launch runs many phases, and a phase may read what
 * any work-group wrote in the phase before. OpenCL C 1.2 promises no
 * forward progress between work-groups, so the barrier is only sound when
 * every group of the grid is resident at once (the host sizes the grid so,
 * starting from one group per compute unit) and its spin is bounded: a
 * group that waits too long raises the abort flag, every group leaves, and
 * the host reruns the work another way. Nothing here can hang.
 *
 * State, one int array in global memory (GS_* in kernel_abi.h), zeroed by
 * the host before every launch (a launch cut short leaves it mid-phase):
 *   sync[GS_COUNT]  arrivals so far; monotonic within a launch, so barrier
 *                   k (from 1) is passed when it reaches k * groups: no
 *                   reset between phases, no generation race;
 *   sync[GS_ABORT]  nonzero once a group gave up; every waiter leaves.
 *
 * Memory: a group's writes must be visible to every other group after the
 * barrier, through the other compute units' caches. mem_fence() orders
 * only within a work-group's view on NVIDIA, so -DGD_NVIDIA=1 (the host
 * sets it for NVIDIA's driver) uses PTX `membar.gl` (on sm_70 and later,
 * fence.sc.gpu) on both sides of the arrival, and the GPU's nanosecond
 * %globaltimer bounds the spin; elsewhere mem_fence and an iteration bound.
 * tools/cl_grid_barrier.py times the barrier and runs a message-passing
 * test that reads lines another group cached before they were rewritten. */

#ifdef GD_NVIDIA
#define GS_DEVICE_FENCE() __asm__ __volatile__("membar.gl;" ::: "memory")
GD_INLINE ulong gs_clock(void) {
  ulong t;
  __asm__ __volatile__("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#else
#define GS_DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

/* The bound of one wait: nanoseconds of the GPU's timer with GD_NVIDIA,
 * spin iterations elsewhere. */
typedef struct {
  ulong start;
  ulong limit;
} gs_bound;

GD_INLINE gs_bound gs_bound_begin(ulong limit) {
  gs_bound b;
#ifdef GD_NVIDIA
  b.start = gs_clock();
#else
  b.start = 0;
#endif
  b.limit = limit;
  return b;
}

/* Nonzero once the wait has used its bound (called once per spin). */
GD_INLINE int gs_bound_spent(gs_bound* b) {
#ifdef GD_NVIDIA
  return gs_clock() - b->start > b->limit;
#else
  return ++b->start > b->limit;
#endif
}

/* Barrier k of this launch (k from 1) over `groups` work-groups; every
 * work-item of every group calls it. Returns 1 when all groups arrived, 0
 * when this launch is aborted (a wait ran past `limit`, here or in another
 * group). `ok` is one __local int of the calling kernel's. */
GD_INLINE int gs_grid_sync(volatile __global int* sync, int k, int groups, ulong limit, volatile __local int* ok) {
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) {
    int passed = sync[GS_ABORT] == 0; /* an aborted launch: every group leaves at its next barrier */
    GS_DEVICE_FENCE(); /* this group's writes reach the device before its arrival does */
    atomic_inc(&sync[GS_COUNT]);
    gs_bound b = gs_bound_begin(limit);
    while (passed && sync[GS_COUNT] < k * groups) {
      if (sync[GS_ABORT] != 0) {
        passed = 0;
        break;
      }
      if (gs_bound_spent(&b)) {
        atomic_xchg(&sync[GS_ABORT], 1);
        passed = 0;
        break;
      }
    }
    GS_DEVICE_FENCE(); /* nothing read below was fetched before the others arrived */
    *ok = passed;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  return *ok;
}

/* The barrier alone: `phases` barriers, nothing between them. The host
 * times it against `phases` empty launches (tools/cl_grid_barrier.py; not
 * in the VM program, whose self-test runs gs_litmus alone). */
#ifndef GD_VM_PROGRAM
__kernel void gs_empty_phases(volatile __global int* sync, int phases, ulong limit) {
  __local volatile int ok;
  const int groups = (int)get_num_groups(0);
  for (int k = 1; k <= phases; ++k)
    if (!gs_grid_sync(sync, k, groups, limit, &ok)) return;
}
#endif

/* Message passing across groups through lines cached before: `words`
 * ints per group. In phase p every group writes its block with values of
 * p, passes the barrier, then reads the block of group (g + 1 + p % 3) %
 * groups (so every third phase it reads again a block it read before, that
 * its owner has since rewritten) and counts each value that is not that phase's in
 * errors[0]; a second barrier keeps the next phase's writes after every
 * read. errors[1] counts the values checked. */
__kernel void gs_litmus(volatile __global int* sync, __global int* data, volatile __global int* errors, int phases,
                        int words, ulong limit) {
  __local volatile int ok;
  const int groups = (int)get_num_groups(0), g = (int)get_group_id(0);
  const int lid = (int)get_local_id(0), lsize = (int)get_local_size(0);
  int bad = 0, seen = 0;
  for (int p = 0; p < phases; ++p) {
    for (int i = lid; i < words; i += lsize) data[g * words + i] = p * 1000003 + g * words + i;
#ifndef GS_LITMUS_READ_EARLY
    if (!gs_grid_sync(sync, 2 * p + 1, groups, limit, &ok)) break;
#endif
    const int src = (g + 1 + p % 3) % groups;
    for (int i = lid; i < words; i += lsize) {
      bad += data[src * words + i] != p * 1000003 + src * words + i;
      ++seen;
    }
#ifdef GS_LITMUS_READ_EARLY /* tests only: reads before the barrier, so the test must see stale values */
    if (!gs_grid_sync(sync, 2 * p + 1, groups, limit, &ok)) break;
#endif
    if (!gs_grid_sync(sync, 2 * p + 2, groups, limit, &ok)) break;
  }
  if (bad) atomic_add(&errors[0], bad);
  atomic_add(&errors[1], seen);
}
