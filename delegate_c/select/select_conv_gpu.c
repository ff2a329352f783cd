/* The GPU set's convolutions (conv_gpu.cl, depthwise_gpu.cl): their
 * work-groups and the occupancy rule that shrinks them to fill the
 * device's compute units, and what the device can run at all. */
#include <stdlib.h>

#include "select/conv_geometry.h"
#include "kernel_abi.h"
#include "util/env_hooks.h"
#include "config/options.h"
#include "select/selectors.h"

/* GPU set (conv_gpu.cl, whose header holds the launch contract): work-
 * groups of lx x ly work-items share input and weight tiles in __local
 * memory, each computing CONVG_TP pixels x CONVG_BS slices (the tiles are
 * kernel_abi.h's). */

/* __local bytes of a conv_gpu.cl work-group: KT x (input tile + weight tile) float4s. */
static size_t convg_local_bytes(size_t lx, size_t ly) {
  return 16 * CONVG_KT * (lx * CONVG_TP + 4 * ly * CONVG_BS);
}

/* Whether the device runs work-groups of lx x ly with `bytes` of __local memory. */
static int fits(const SelectTarget* t, size_t lx, size_t ly, size_t bytes) {
  const GpuCaps* c = t->caps;
  return c->max_work_group >= lx * ly && c->max_item[0] >= lx && c->max_item[1] >= ly && c->local_mem >= bytes;
}

/* Occupancy (docs/how-it-works.md, "Occupancy"): a GPU-set launch with
 * fewer work-groups than OCC_GROUPS_PER_UNIT per compute unit leaves units
 * idle, so its groups shrink (powers of two, each side at most the
 * default's, never below OCC_MIN_GROUP work-items) until it has that many
 * or the tensor allows no more. The same work-items then spread over more
 * units; a unit of such a launch holds at most two groups, so its lanes
 * are mostly idle in any group size. Each work-item's own work (the K
 * loop, the taps) stays as long: only new kernels (split-K, smaller
 * register tiles) would shorten that. */
#define OCC_GROUPS_PER_UNIT 2
/* A whole SIMD group on Mali (Valhall) and Intel (SIMD16), half an NVIDIA
 * or AMD warp: smaller groups would leave most of a SIMD unit idle. */
#define OCC_MIN_GROUP 16

size_t select_occupancy_target(const SelectTarget* t) {
  /* Test hook: TFLITE_GPU_COMPUTE_UNITS=N stands for the device's count,
   * on any device (the op sweep runs the smaller groups on PoCL). */
  long n = env_long("TFLITE_GPU_COMPUTE_UNITS", 0);
  if (n > 0) return (size_t)n * OCC_GROUPS_PER_UNIT;
  /* A CPU's units are its cores, each running whole groups over its SIMD
   * lanes: nothing to fill, and PoCL compiles each new group size. */
  if (t->caps->is_cpu) return 0;
  return (size_t)t->caps->compute_units * OCC_GROUPS_PER_UNIT;
}

/* Work-groups of an lx x ly group over nx x ny x nz work-items. */
static size_t launch_groups(size_t nx, size_t ny, size_t nz, size_t lx, size_t ly) {
  return div_up(nx, lx) * div_up(ny, ly) * nz;
}

/* The group of a launch of nx x ny x nz work-items whose default group is
 * (*lx, *ly): unchanged when it makes the occupancy target's groups (or
 * the rule is off); else, among the power-of-two groups of at most (*lx,
 * *ly) and OCC_MIN_GROUP work-items or more that the device runs, one that
 * reaches the target with the largest group, else the one with the most
 * groups; ties go to the least padding, then the least __local memory
 * (conv: its tiles, local_bytes), then the widest x (coalescing). */
static void occupancy_group(const SelectTarget* t, size_t nx, size_t ny, size_t nz,
                            size_t (*local_bytes)(size_t, size_t), size_t* lx, size_t* ly) {
  size_t target = select_occupancy_target(t);
  size_t lx0 = *lx, ly0 = *ly, base = launch_groups(nx, ny, nz, lx0, ly0);
  if (!target || base >= target) return;
  size_t bx = lx0, by = ly0, bg = base, bpad = 0, bbytes = 0;
  int found = 0;
  for (size_t x = lx0; x >= 1; x /= 2)
    for (size_t y = ly0; y >= 1; y /= 2) {
      size_t bytes = local_bytes ? local_bytes(x, y) : 0;
      if (x * y < OCC_MIN_GROUP || !fits(t, x, y, bytes)) continue;
      size_t g = launch_groups(nx, ny, nz, x, y);
      size_t pad = div_up(nx, x) * x * div_up(ny, y) * y - nx * ny;
      int better;
      if (!found) {
        better = 1;
      } else if ((g >= target) != (bg >= target)) {
        better = g >= target;
      } else if (g >= target && x * y != bx * by) {
        better = x * y > bx * by;
      } else if (g < target && g != bg) {
        better = g > bg;
      } else if (pad != bpad) {
        better = pad < bpad;
      } else {
        better = bytes < bbytes; /* equal: the earlier, wider x stays */
      }
      if (better) {
        found = 1;
        bx = x, by = y, bg = g, bpad = pad, bbytes = bytes;
      }
    }
  /* A group that adds no work-group would only add a program. */
  if (found && bg > base) *lx = bx, *ly = by;
}

/* The group of a fused depthwise + 1x1 launch (fuse_dw_conv.h): LY rows
 * as dw_1x1_rows gives (halved while the device cannot run them), since
 * each row fewer makes every work-item compute more depthwise values;
 * then, below the occupancy target, a narrower LX (down to
 * DW_1X1_MIN_LX, and OCC_MIN_GROUP work-items) for more groups, which
 * leaves a work-item's depthwise loads as they are. */
#define DW_1X1_MIN_LX 4 /* narrower, each work-item would load 32 / LX weight float4s per K step */
static void dw_1x1_group(const SelectTarget* t, size_t tiles, size_t blocks, size_t batch, size_t* lx, size_t* ly) {
  size_t x = CONVG_LX, y = (size_t)dw_1x1_rows((long)blocks);
  while (y > 1 && !fits(t, x, y, convg_local_bytes(x, y))) y /= 2;
  if (!fits(t, x, y, convg_local_bytes(x, y))) return; /* the default group stays */
  size_t target = select_occupancy_target(t);
  while (target && launch_groups(tiles, blocks, batch, x, y) < target && x / 2 >= DW_1X1_MIN_LX &&
         (x / 2) * y >= OCC_MIN_GROUP &&
         launch_groups(tiles, blocks, batch, x / 2, y) > launch_groups(tiles, blocks, batch, x, y))
    x /= 2;
  *lx = x;
  *ly = y;
}

/* 0 when the device cannot run the GPU conv kernels (too small groups or
 * local memory): the CPU set's kernels run there instead. A fused
 * depthwise + 1x1 node runs over its 1x1's grid through dw_conv2d_1x1_gpu,
 * in groups of its own (dw_1x1_group). vm: a VM body (select_vm_tiles),
 * always the default group; 0 for outputs of one or two blocks, which
 * would leave rows of it idle (the fine bodies run those). */
int select_gpu_conv2d(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v, int vm) {
  const int* ds = g->tensors[n->outputs[0]].shape;
  int fused = n->op == GOP_DW_CONV1X1;
  int gemm = fused || (n->p.conv.kh == 1 && n->p.conv.kw == 1 && n->p.conv.sx == 1 && n->p.conv.sy == 1 &&
                       n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0);
  size_t plane = (size_t)ds[GD_H] * ds[GD_W], so = (size_t)(ds[GD_C] + 3) / 4;
  size_t blocks = div_up(so, CONVG_BS);
  /* 16 x 4 by default; outputs of one or two blocks (<= 16 channels) would
   * leave half the rows of such a group idle, so they take 64 x 1. */
  size_t lx = blocks <= 2 && !vm ? 64 : CONVG_LX, ly = blocks <= 2 && !vm ? 1 : CONVG_LY;
  if ((vm && blocks <= 2) || !fits(t, lx, ly, convg_local_bytes(lx, ly))) return 0;
  size_t tiles = div_up(plane, CONVG_TP);
  if (fused && !vm)
    dw_1x1_group(t, tiles, blocks, (size_t)ds[GD_B], &lx, &ly);
  else if (!vm) /* the VM keeps its group */
    occupancy_group(t, tiles, blocks, (size_t)ds[GD_B], convg_local_bytes, &lx, &ly);
  /* A source kept BHWC (input_direct.c) or scaled per channel
   * or upsampled (fuse_conv_source.c, 1x1s only) has its own kernel. */
  int bhwc = !fused && g->tensors[n->inputs[0]].bhwc, scaled = !fused && n->p.conv.scale_input;
  int scaled_add = scaled && n->p.conv.add_input;
  int up2 = !fused && n->p.conv.src_via;
  const char* name = fused    ? "dw_conv2d_1x1_gpu"
                     : bhwc   ? "conv2d_bhwc_gpu"
                     : scaled_add ? "conv2d_1x1_scaled_add_gpu"
                     : scaled ? "conv2d_1x1_scaled_gpu"
                     : up2    ? "conv2d_1x1_up2_gpu"
                     : gemm   ? "conv2d_1x1_gpu"
                              : "conv2d_gpu";
  if (bhwc) gemm = 0;
  *v = (KernelVariant){"conv_gpu.cl", name, "", 3,
                       {tiles, blocks, (size_t)ds[GD_B]},
                       {lx, ly, 1}, 0, CONVG_BS,
                       fused    ? CONV_ARGS_DW_1X1
                       : scaled_add ? CONV_ARGS_SCALED_ADD
                       : scaled ? CONV_ARGS_SCALED
                       : up2    ? CONV_ARGS_UP2
                       : gemm   ? CONV_ARGS_NO_GEOMETRY
                                : CONV_ARGS_GEOMETRY,
                       0,
                       {"CONVG_LX", "CONVG_LY", NULL}, 0};
  /* Groups other than kernel_abi.h's default go in the defines (as
   * variant_fit_group writes them, so the programs are shared). */
  if (lx != CONVG_LX || ly != CONVG_LY) variant_fit_group(v, lx * ly);
  v->total = plane * so * (size_t)ds[GD_B];
  return 1;
}

/* The GPU set, with both of select_gpu_conv2d's default groups fitting, so that a
 * CONV_2D never falls back to the CPU set's kernels: what the fusion passes
 * that only the GPU set's kernels implement need (fuse.c). */
int select_gpu_convs_always(const SelectTarget* t) {
  return t->pol.v[POL_KERNEL_SET] == GD_KSET_GPU && fits(t, 64, 1, convg_local_bytes(64, 1)) &&
         fits(t, CONVG_LX, CONVG_LY, convg_local_bytes(CONVG_LX, CONVG_LY));
}

/* pw_depthwise_gpu's __local band (its group shrinks where it must). */
int select_pw_depthwise_fits(const SelectTarget* t) { return fits(t, 16, 1, 16 * (PWDW_LOCAL + PWDW_WG)); }

/* pw_depthwise_gpu (depthwise_gpu.cl has the launch contract): a group of
 * PWDW_WG per band of output rows, slice and batch item; the bands as
 * fuse_pw_dw.c checked they fit. No occupancy shrinking: more bands
 * would compute their shared source rows more often, and the wide
 * depthwise these pairs have already make hundreds of groups from their
 * slices (1,152 channels: 288). */
void select_pw_depthwise(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  (void)t;
  const int* s = g->tensors[n->inputs[0]].shape;
  const int* d = g->tensors[n->p.conv.mean_of >= 0 ? n->p.conv.mean_of : n->outputs[0]].shape;
  int rows = pw_dw_band_rows(d[GD_H], s[GD_H], s[GD_W], n->p.conv.sy, n->p.conv.kh, n->p.conv.dy);
  size_t bands = div_up((size_t)d[GD_H], (size_t)(rows > 0 ? rows : 1));
  size_t so = (size_t)(d[GD_C] + 3) / 4;
  *v = (KernelVariant){"depthwise_gpu.cl", "pw_depthwise_gpu", "", 2,
                       {PWDW_WG * bands, so * (size_t)d[GD_B], 1},
                       {PWDW_WG, 1, 1}, 0, 1, CONV_ARGS_PW_DW, 0, {"PWDW_WG", NULL, NULL}, 1};
  v->total = phwc4_items(d);
}

/* The GPU set's depthwise (depthwise_gpu.cl): 0 where the device cannot
 * run its group or the multiplier is not 1 (the CPU set's kernels run
 * then). vm: a VM body, which keeps the default group. */
int select_gpu_depthwise(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v, int vm) {
  if (n->p.conv.multiplier != 1 || !fits(t, DWG_LX, DWG_LY, 0)) return 0;
  const int* ds = g->tensors[n->outputs[0]].shape;
  size_t so = (size_t)(ds[GD_C] + 3) / 4;
  size_t nx = div_up((size_t)ds[GD_W], DWG_TX), ny = (size_t)ds[GD_H], lx = DWG_LX, ly = DWG_LY;
  if (!vm) occupancy_group(t, nx, ny, so * (size_t)ds[GD_B], NULL, &lx, &ly); /* the VM: its group */
  *v = (KernelVariant){"depthwise_gpu.cl", "depthwise_gpu", "", 3,
                       {nx, ny, so * (size_t)ds[GD_B]},
                       {lx, ly, 1}, 0, 1, CONV_ARGS_GEOMETRY, 0, {"DWG_LX", "DWG_LY", NULL}, 0};
  if (lx != DWG_LX || ly != DWG_LY) variant_fit_group(v, lx * ly);
  v->total = phwc4_items(ds);
  return 1;
}
