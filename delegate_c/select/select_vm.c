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
 * float4); a CPU keeps its register tiles. A device that says it is both
 * (Oclgrind) counts as a GPU: its checks then cover the bodies GPUs run.
 * Test hook and A/B switch:
 * TFLITE_GPU_VM_FINE=1 or 0 on any device. */
int select_vm_fine(const GpuDevice* dev) {
  if (dev->execution != GD_EXEC_STEPPED && dev->execution != GD_EXEC_PERSISTENT) return 0;
  return env_flag("TFLITE_GPU_VM_FINE", dev->caps.is_gpu);
}

/* A long reduction (FULLY_CONNECTED, BATCH_MATMUL, the reductions,
 * SOFTMAX; fc_pair and fc_heads, fuse.c) on a GPU in the VM: the GPU set's
 * work-group bodies, whose groups split the reduction and combine their
 * partials in a __local tree (one phase, the order fixed), where the
 * fine bodies give a work-item the whole reduction or split it in two
 * phases with a grid barrier between (select_fc_split,
 * select_reduce_split). They are compiled for groups of VM_GROUP_SIZE.
 * A/B switch: TFLITE_GPU_VM_GROUP_BODIES=0. */
int select_vm_group_bodies(const GpuDevice* dev) {
  return select_vm_fine(dev) && select_vm_group() == VM_GROUP_SIZE && env_flag("TFLITE_GPU_VM_GROUP_BODIES", 1);
}

/* The VM on a GPU with TFLITE_GPU_VM_TILES=1: the GPU set's conv and
 * depthwise kernels as group bodies (conv_gpu.cl, depthwise_gpu.cl: work-
 * groups that share input and weight tiles in __local memory) instead of
 * the fine bodies, at their default groups (16 x 4 and 8 x 8: the VM's
 * 64). Fewer work-items, each reusing what its group loaded: whether that
 * beats spreading a conv over the grid is for a GPU run to say, so it is
 * an A/B switch, off by default. */
int select_vm_tiles(const GpuDevice* dev) {
  return select_vm_group_bodies(dev) && CONVG_LX * CONVG_LY == VM_GROUP_SIZE && DWG_LX * DWG_LY == VM_GROUP_SIZE &&
         env_flag("TFLITE_GPU_VM_TILES", 0);
}

size_t select_vm_group(void) {
  long group = env_long("TFLITE_GPU_VM_GROUP", VM_GROUP_SIZE);
  return group > 0 ? (size_t)group : VM_GROUP_SIZE;
}

/* Work-items of one VM grid on this device: a group of 64 per compute
 * unit (vm.c), TFLITE_GPU_COMPUTE_UNITS standing for the units as in
 * select_occupancy_target. */
size_t select_vm_lanes(const GpuDevice* dev) {
  long n = env_long("TFLITE_GPU_COMPUTE_UNITS", 0);
  size_t units = n > 0 ? (size_t)n : dev->caps.compute_units ? dev->caps.compute_units : 1;
  return units * VM_GROUP_SIZE;
}

/* VM_SPLIT_MIN_STEPS, or the A/B switch TFLITE_GPU_VM_SPLIT_MIN_STEPS=N
 * (the threshold is a guess until a GPU times the splits: a GPU run can
 * sweep it without a rebuild). */
int select_split_min_steps(void) {
  long n = env_long("TFLITE_GPU_VM_SPLIT_MIN_STEPS", VM_SPLIT_MIN_STEPS);
  return n > 0 && n < (1L << 20) ? (int)n : VM_SPLIT_MIN_STEPS;
}

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
 * 0: one pass; else the chunk, in steps. A/B switch:
 * TFLITE_GPU_VM_SPLIT_CONV=0 keeps one pass. */
int select_conv_split(const GpuDevice* dev, const Graph* g, const GNode* n) {
  const int* ss = g->tensors[n->inputs[0]].shape;
  const int* ds = g->tensors[n->outputs[0]].shape;
  int steps = n->p.conv.kh * n->p.conv.kw * ((ss[GD_C] + 3) / 4);
  size_t tiles = (size_t)ds[GD_B] * ds[GD_H] * ((ds[GD_W] + 3) / 4) * ((ds[GD_C] + 3) / 4);
  if (!select_vm_fine(dev) || steps < select_split_min_steps() || tiles * 8 > select_vm_lanes(dev) ||
      g->tensors[n->outputs[0]].bhwc_out || !env_flag("TFLITE_GPU_VM_SPLIT_CONV", 1))
    return 0;
  return select_split_chunk(steps);
}
