/* Kernel selection for CONV_2D and DEPTHWISE_CONV_2D (kernels: conv.cl for
 * the CPU set, conv_gpu.cl for the GPU set). */
#include <stdio.h>

#include "kernel_abi.h"
#include "selectors.h"

/* CPU set: register tiles of GEMM_TILE pixels x 16 (or 8) channels. */
static void cpu_conv2d(const Graph* g, const GNode* n, KernelVariant* v) {
  const int* ss = g->tensors[n->inputs[0]].shape;
  const int* ds = g->tensors[n->outputs[0]].shape;
  /* Output slices per work-item: one slice goes to conv2d_x4, where a
   * register-tiled block would be mostly padding; 5-8 channels to the
   * 8-channel kernels (_b8), the rest to 16-channel blocks. */
  int narrow = ds[GD_C] <= 4;
  int block = narrow ? 1 : ds[GD_C] <= 8 ? 2 : 4;
  if (narrow) {
    int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + 3) / 4, ds[GD_C]};
    *v = variant_1d("conv.cl", "conv2d_x4", phwc4_items(tiled));
    v->heavy = 1;
    v->weight_block = 1;
    v->form = CONV_ARGS_GEOMETRY;
    return;
  }
  /* A 1x1 stride-1 unpadded conv is a GEMM over the pixel plane. A
   * 3-channel source (the first layers) skips the zero fourth lane (_c3). */
  int gemm = n->p.conv.kh == 1 && n->p.conv.kw == 1 && n->p.conv.sx == 1 && n->p.conv.sy == 1 &&
             n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0;
  static const char* names[2][2][2] = {{{"conv2d_tiled", "conv2d_tiled_c3"}, {"conv2d_tiled_b8", "conv2d_tiled_b8_c3"}},
                                       {{"conv2d_1x1", "conv2d_1x1"}, {"conv2d_1x1_b8", "conv2d_1x1_b8"}}};
  size_t tiles = div_up((size_t)ds[GD_H] * ds[GD_W], GEMM_TILE);
  size_t blocks = div_up((size_t)(ds[GD_C] + 3) / 4, (size_t)block);
  *v = variant_1d("conv.cl", names[gemm][block == 2][ss[GD_C] == 3], tiles * blocks * (size_t)ds[GD_B]);
  v->heavy = 1;
  v->weight_block = block;
  v->form = gemm ? CONV_ARGS_NO_GEOMETRY : CONV_ARGS_GEOMETRY;
}

static void cpu_depthwise(const Graph* g, const GNode* n, KernelVariant* v) {
  const GTensor* wt = &g->tensors[n->p.conv.weights];
  int kh = wt->shape[1], kw = wt->shape[2];
  const int* ds = g->tensors[n->outputs[0]].shape;
  if (n->p.conv.multiplier != 1) {
    *v = variant_1d("conv.cl", "depthwise_conv2d_multiplier", phwc4_items(ds));
    v->heavy = 1;
    v->form = CONV_ARGS_GEOMETRY;
    return;
  }
  /* The filters and strides MediaPipe uses get their own kernels (1x1:
   * per-channel scales in hand_recrop), DW_TILE pixels per work-item. */
  static const char* names[3][2] = {{"depthwise_1x1_s1", NULL},
                                    {"depthwise_3x3_s1", "depthwise_3x3_s2"},
                                    {"depthwise_5x5_s1", "depthwise_5x5_s2"}};
  int square = kh == kw && (kh == 1 || kh == 3 || kh == 5);
  int stride = n->p.conv.sx == n->p.conv.sy && n->p.conv.sx <= 2 ? n->p.conv.sx : 0;
  const char* name = square && stride && n->p.conv.dx == 1 && n->p.conv.dy == 1 ? names[kh / 2][stride - 1] : NULL;
  if (name) {
    int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + DW_TILE - 1) / DW_TILE, ds[GD_C]};
    *v = variant_1d("conv.cl", name, phwc4_items(tiled));
    v->form = CONV_ARGS_PAD_ONLY;
  } else {
    int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + 3) / 4, ds[GD_C]};
    *v = variant_1d("conv.cl", "depthwise_conv2d_x4", phwc4_items(tiled));
    v->form = CONV_ARGS_GEOMETRY;
  }
  v->heavy = 1;
}

/* GPU set (conv_gpu.cl, whose header holds the launch contract): work-
 * groups of lx x ly work-items share input and weight tiles in __local
 * memory, each computing CONVG_TP pixels x CONVG_BS slices (the tiles are
 * kernel_abi.h's). */

/* __local bytes of a conv_gpu.cl work-group: KT x (input tile + weight tile) float4s. */
static size_t convg_local_bytes(size_t lx, size_t ly) {
  return 16 * CONVG_KT * (lx * CONVG_TP + 4 * ly * CONVG_BS);
}

/* Whether the device runs work-groups of lx x ly with `bytes` of __local memory. */
static int fits(const GpuDevice* dev, size_t lx, size_t ly, size_t bytes) {
  const GpuCaps* c = &dev->caps;
  return c->max_work_group >= lx * ly && c->max_item[0] >= lx && c->max_item[1] >= ly && c->local_mem >= bytes;
}

/* 0 when the device cannot run the GPU conv kernels (too small groups or
 * local memory): the CPU set's kernels run there instead. */
static int gpu_conv2d(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v) {
  const int* ds = g->tensors[n->outputs[0]].shape;
  int gemm = n->p.conv.kh == 1 && n->p.conv.kw == 1 && n->p.conv.sx == 1 && n->p.conv.sy == 1 &&
             n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0;
  size_t plane = (size_t)ds[GD_H] * ds[GD_W], so = (size_t)(ds[GD_C] + 3) / 4;
  size_t blocks = div_up(so, CONVG_BS);
  /* 16 x 4 by default; outputs of one or two blocks (<= 16 channels) would
   * leave half the rows of such a group idle, so they take 64 x 1. */
  size_t lx = blocks <= 2 ? 64 : CONVG_LX, ly = blocks <= 2 ? 1 : CONVG_LY;
  if (!fits(dev, lx, ly, convg_local_bytes(lx, ly))) return 0;
  *v = (KernelVariant){"conv_gpu.cl", gemm ? "conv2d_1x1_gpu" : "conv2d_gpu", "", 3,
                       {div_up(plane, CONVG_TP), blocks, (size_t)ds[GD_B]},
                       {lx, ly, 1}, 0, CONVG_BS, gemm ? CONV_ARGS_NO_GEOMETRY : CONV_ARGS_GEOMETRY, 0,
                       {"CONVG_LX", "CONVG_LY", NULL}, 0};
  if (ly == 1) snprintf(v->defines, sizeof(v->defines), "-DCONVG_LX=%zu -DCONVG_LY=%zu", lx, ly);
  v->total = plane * so * (size_t)ds[GD_B];
  return 1;
}

void select_conv2d(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v) {
  if (dev->kernel_set != GD_KSET_GPU || !gpu_conv2d(dev, g, n, v)) cpu_conv2d(g, n, v);
}

void select_depthwise(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v) {
  /* The multiplier kernel already runs one output float4 per work-item. */
  if (dev->kernel_set != GD_KSET_GPU || n->p.conv.multiplier != 1 || !fits(dev, DWG_LX, DWG_LY, 0)) {
    cpu_depthwise(g, n, v);
    return;
  }
  const int* ds = g->tensors[n->outputs[0]].shape;
  size_t so = (size_t)(ds[GD_C] + 3) / 4;
  *v = (KernelVariant){"conv_gpu.cl", "depthwise_gpu", "", 3,
                       {div_up((size_t)ds[GD_W], DWG_TX), (size_t)ds[GD_H], so * (size_t)ds[GD_B]},
                       {DWG_LX, DWG_LY, 1}, 0, 1, CONV_ARGS_GEOMETRY, 0, {"DWG_LX", "DWG_LY", NULL}, 0};
  v->total = phwc4_items(ds);
}
