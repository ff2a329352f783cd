/* The VM's choices on this device (execution=stepped|persistent): which
 * bodies its phases run (fine, tiles, group bodies), its group size and
 * lanes, and where a phase's reduction splits over the grid. */
#include <stdlib.h>

#include "kernel_abi.h"
#include "util/env_hooks.h"
#include "config/options.h"
#include "select/selectors.h"

/* The VM's bodies on a GPU (issue 36 item 5): a VM phase spreads its
 * work-items over one group per compute unit, so a conv of register tiles
 * (GEMM_TILE pixels x 16 channels a work-item: 129 work-items for a 1x1 at
 * 16x16x48) keeps 2 of an H200's 132 units busy, each with a long serial
 * loop. On a GPU the VM takes the CPU set's fine-grained bodies instead
 * (conv2d_x4: 4 pixels x 4 channels; depthwise_conv2d_multiplier: one
 * float4); a CPU keeps its register tiles (policy_rules.c). */
int select_vm_fine(const SelectTarget* t) { return policy_vm(&t->pol) && t->pol.v[POL_VM_FINE]; }

/* A long reduction (FULLY_CONNECTED, BATCH_MATMUL, the reductions,
 * SOFTMAX; fc_pair and fc_heads, fuse.c) on a GPU in the VM: the GPU set's
 * work-group bodies, whose groups split the reduction and combine their
 * partials in a __local tree (one phase, the order fixed), where the
 * fine bodies give a work-item the whole reduction or split it in two
 * phases with a grid barrier between (select_fc_split,
 * select_reduce_split). They are compiled for groups of VM_GROUP_SIZE. */
int select_vm_group_bodies(const SelectTarget* t) { return select_vm_fine(t) && t->pol.v[POL_VM_GROUP_BODIES]; }

/* The GPU set's conv and depthwise kernels as group bodies (conv_gpu.cl,
 * depthwise_gpu.cl: work-groups that share input and weight tiles in
 * __local memory) instead of the fine bodies, at their default groups (16
 * x 4 and 8 x 8: the VM's 64). Fewer work-items, each reusing what its
 * group loaded: whether that beats spreading a conv over the grid is the
 * device's to say (a candidate of the tuner), off by rule. */
int select_vm_tiles(const SelectTarget* t) {
  return select_vm_group_bodies(t) && CONVG_LX * CONVG_LY == VM_GROUP_SIZE && DWG_LX * DWG_LY == VM_GROUP_SIZE &&
         t->pol.v[POL_VM_TILES];
}

/* Work-items of one VM grid on this device: a group of 64 per compute
 * unit (vm.c), TFLITE_GPU_COMPUTE_UNITS (a test hook) standing for the
 * units as in select_occupancy_target. */
size_t select_vm_lanes(const SelectTarget* t) {
  long n = env_long("TFLITE_GPU_COMPUTE_UNITS", 0);
  size_t units = n > 0 ? (size_t)n : t->caps->compute_units ? t->caps->compute_units : 1;
  return units * VM_GROUP_SIZE;
}

int select_split_min_steps(const SelectTarget* t) { return (int)t->pol.v[POL_VM_SPLIT_MIN_STEPS]; }

/* The chunk of a reduction of `steps` split in two phases: about
 * sqrt(steps), 8 at least, so that both phases' loops are about as short. */
int select_split_chunk(int steps) {
  int chunk = 8;
  while (chunk * chunk < steps) ++chunk;
  return chunk;
}

/* conv2d_x4 over its reduction (KH x KW x input slices) in two phases
 * (split_k.cl's conv2d_x4_split and _sum): in the VM on a GPU, for fewer tiles
 * than an eighth of the grid's work-items and select_split_min_steps() steps or more (pose_
 * landmark_full's 2x2 heads on a 1x1 output: 1-49 tiles of 288 steps).
 * 0: one pass (also with policy vm_split_conv=0); else the chunk, in steps. */
int select_conv_split(const SelectTarget* t, const Graph* g, const GNode* n) {
  const int* ss = g->tensors[n->inputs[0]].shape;
  const int* ds = g->tensors[n->outputs[0]].shape;
  int steps = n->p.conv.kh * n->p.conv.kw * ((ss[GD_C] + 3) / 4);
  size_t tiles = (size_t)ds[GD_B] * ds[GD_H] * ((ds[GD_W] + 3) / 4) * ((ds[GD_C] + 3) / 4);
  if (!select_vm_fine(t) || steps < select_split_min_steps(t) || tiles * 8 > select_vm_lanes(t) ||
      g->tensors[n->outputs[0]].bhwc_out || !t->pol.v[POL_VM_SPLIT_CONV])
    return 0;
  return select_split_chunk(steps);
}
