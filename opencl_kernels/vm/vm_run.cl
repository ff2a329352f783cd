/* The VM's kernel (tools/gen_vm.py appends it to the VM program, after
 * vm_call and grid_sync.cl): runs phases [first, last) of an op list, each
 * phase one dispatch of the partition, its virtual work-items spread over
 * the grid. Op list: two heads of phase offsets in words, [0, phases) in
 * dispatch order and [phases, 2 x phases) in a persistent launch's order
 * (vm.c, vm_schedule.c), which [first, last) index; an offset has
 * VM_NO_BARRIER set when its phase needs no grid barrier before it (it
 * touches nothing an earlier phase of its interval writes, and writes
 * nothing one touches). A phase is {opcode, work-items, first lane, the
 * arguments' words (gen_vm.py)}. In a persistent launch virtual work-item
 * v runs on global work-item (first lane + v) modulo the grid's: the
 * phases of one barrier interval start where the one before ended, so
 * short ones run side by side.
 *
 * A group op (its opcode has VM_GROUPED set: a GROUP_KERNEL's body,
 * common.cl) counts its work-items in groups of the body's size, which is
 * the launch's (vm.c): physical group k runs virtual groups k, k +
 * groups, ... of it (from the group of its first lane on), every
 * work-item of the group together, with vm_lmem as their __local memory
 * (an argument: the host sizes it for the program's group bodies).
 *
 * stepped (persistent 0): the host launches one phase at a time, so the
 * launches order the phases, as separate kernels would be ordered.
 * persistent: one launch runs every phase; a grid barrier (grid_sync.cl)
 * separates each phase from the next that depends on it. The host sizes the grid so that every
 * group is resident, zeroes sync before the launch, and reads sync[GS_ABORT]
 * after it: a group that waited past `limit` aborted the launch, which the
 * host then runs again stepped. */

/* Per-phase times (the host asks with `timing`, profiling a persistent
 * launch): global work-item 0 stamps each phase's start once it has passed
 * the barrier before it, and its end when every group has finished it (the
 * next barrier, or one more after the last phase); stamps[2p] and
 * stamps[2p + 1]. Timing puts a barrier before every phase, so that each
 * has a time of its own. The GPU's nanosecond timer on NVIDIA; with -DVM_TCLK (a
 * test hook) every phase lasts 1000 "ns", so the host's bookkeeping can be
 * checked where there is no timer. */
#if defined(GD_NVIDIA)
#define VM_STAMP(p) gs_clock()
#elif defined(VM_TCLK)
#define VM_STAMP(p) ((ulong)(p) * 1000ul)
#else
#define VM_STAMP(p) 0ul
#endif

__kernel void vm_run(VM_SPACES_PARAMS, __global const int* ops, int first, int last, int persistent,
                     volatile __global int* sync, ulong limit, __global ulong* stamps, int timing,
                     __local float4* vm_lmem) {
  __local volatile int ok;
  const int groups = (int)get_num_groups(0);
  const int stride = (int)get_global_size(0);
  const int stamper = timing && get_global_id(0) == 0;
  int passed = 0; /* grid barriers so far */
  for (int p = first; p < last; ++p) {
    const int at = ops[p];
    if (persistent && p > first && (!(at & VM_NO_BARRIER) || timing) && !gs_grid_sync(sync, ++passed, groups, limit, &ok))
      return;
    if (stamper) {
      const ulong t = VM_STAMP(p);
      if (p > first) stamps[2 * p - 1] = t;
      stamps[2 * p] = t;
    }
    __global const int* op = ops + (at & (VM_NO_BARRIER - 1));
    const int opcode = op[0], items = op[1];
    if (opcode & VM_GROUPED) {
      const int size = (int)get_local_size(0), l = (int)get_local_id(0);
      int g = (int)get_group_id(0) - (persistent ? op[2] / size % groups : 0);
      /* The barrier after each virtual group: its __local memory becomes
       * the next one's only once every work-item is done with it. (PoCL 3.1
       * also miscompiled the loop without it: a body reading global memory
       * after its own barriers wrote outside its stack.) */
      for (g += g < 0 ? groups : 0; g < items / size; g += groups) {
        vm_gcall(opcode ^ VM_GROUPED, g, items / size, l, vm_lmem, op + 3, VM_SPACES);
        barrier(CLK_LOCAL_MEM_FENCE);
      }
    } else {
      int v = (int)get_global_id(0) - (persistent ? op[2] % stride : 0);
      for (v += v < 0 ? stride : 0; v < items; v += stride) vm_call(opcode, v, op + 3, VM_SPACES);
    }
  }
  if (timing && persistent && gs_grid_sync(sync, passed + 1, groups, limit, &ok) && stamper)
    stamps[2 * last - 1] = VM_STAMP(last);
}
