/* Kernel selection for CONV_2D and DEPTHWISE_CONV_2D: the CPU set's
 * register tiles (conv.cl, depthwise.cl) here, the GPU set's groups in
 * select_conv_gpu.c, the VM's bodies in select_vm.c. */
#include <stdlib.h>

#include "kernel_abi.h"
#include "config/options.h"
#include "select/selectors.h"

/* CPU set: register tiles of GEMM_TILE pixels x 16 (or 8) channels. */
static void cpu_conv2d(const Graph* g, const GNode* n, KernelVariant* v, int fine) {
  const int* ss = g->tensors[n->inputs[0]].shape;
  const int* ds = g->tensors[n->outputs[0]].shape;
  /* Output slices per work-item: one slice goes to conv2d_x4, where a
   * register-tiled block would be mostly padding; 5-8 channels to the
   * 8-channel kernels (_b8), the rest to 16-channel blocks; every conv to
   * conv2d_x4 for the VM on a GPU (select_vm_fine). */
  int narrow = fine || ds[GD_C] <= 4;
  int block = narrow ? 1 : ds[GD_C] <= 8 ? 2 : 4;
  /* A 1x1 that reads its source through a per-channel scale or a 2x
   * upsampling (fuse_conv_source.c): the conv2d_x4 form where conv2d_x4
   * would run, else 16-channel blocks. */
  int source = n->p.conv.scale_input ? (n->p.conv.add_input ? 2 : 1) : n->p.conv.src_via ? 3 : 0;
  if (n->p.conv.prelu_input) {
    /* Any geometry, through a PRELU (fuse_prelu_source.c: the VM's fine bodies only). */
    int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + 3) / 4, ds[GD_C]};
    *v = variant_1d("conv.cl", "conv2d_x4_prelu", phwc4_items(tiled));
    v->heavy = 1;
    v->weight_block = 1;
    v->form = CONV_ARGS_PRELU;
    return;
  }
  if (source) {
    int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + 3) / 4, ds[GD_C]};
    size_t gemm_items = div_up((size_t)ds[GD_H] * ds[GD_W], GEMM_TILE) * div_up((size_t)(ds[GD_C] + 3) / 4, 4) *
                        (size_t)ds[GD_B];
    static const char* names[2][3] = {{"conv2d_1x1_scaled", "conv2d_1x1_scaled_add", "conv2d_1x1_up2"},
                                      {"conv2d_x4_scaled", "conv2d_x4_scaled_add", "conv2d_x4_up2"}};
    static const int forms[3] = {CONV_ARGS_SCALED, CONV_ARGS_SCALED_ADD, CONV_ARGS_UP2};
    *v = variant_1d("conv.cl", names[narrow][source - 1], narrow ? phwc4_items(tiled) : gemm_items);
    v->heavy = 1;
    v->weight_block = narrow ? 1 : 4;
    v->form = forms[source - 1];
    return;
  }
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

static void cpu_depthwise(const Graph* g, const GNode* n, KernelVariant* v, int fine) {
  const GTensor* wt = &g->tensors[n->p.conv.weights];
  int kh = wt->shape[1], kw = wt->shape[2];
  const int* ds = g->tensors[n->outputs[0]].shape;
  if (fine || n->p.conv.multiplier != 1) {
    *v = variant_1d("depthwise.cl", "depthwise_conv2d_multiplier", phwc4_items(ds));
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
    *v = variant_1d("depthwise.cl", name, phwc4_items(tiled));
    v->form = CONV_ARGS_PAD_ONLY;
  } else {
    int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + 3) / 4, ds[GD_C]};
    *v = variant_1d("depthwise.cl", "depthwise_conv2d_x4", phwc4_items(tiled));
    v->form = CONV_ARGS_GEOMETRY;
  }
  v->heavy = 1;
}

void select_conv2d(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  /* The VM's tiles: not through a PRELU (no such tiled kernel), nor where
   * a conv of few tiles splits its reduction (select_conv_split). */
  if (select_vm_tiles(t) && !n->p.conv.prelu_input && !select_conv_split(t, g, n) && select_gpu_conv2d(t, g, n, v, 1))
    return;
  if (t->pol.v[POL_KERNEL_SET] != GD_KSET_GPU || !select_gpu_conv2d(t, g, n, v, 0)) cpu_conv2d(g, n, v, select_vm_fine(t));
}

/* The GPU set: dw_conv2d_1x1_gpu; the VM on a GPU (the dw_1x1 pass runs
 * there too, fuse.c): conv.cl's conv2d_x4_dw, over conv2d_x4's work-items. */
void select_dw_conv1x1(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  if (select_vm_tiles(t) && select_gpu_conv2d(t, g, n, v, 1)) return;
  if (t->pol.v[POL_KERNEL_SET] == GD_KSET_GPU && !select_vm_fine(t) && select_gpu_conv2d(t, g, n, v, 0)) return;
  const int* ds = g->tensors[n->outputs[0]].shape;
  int tiled[4] = {ds[GD_B], ds[GD_H], (ds[GD_W] + 3) / 4, ds[GD_C]};
  *v = variant_1d("conv.cl", "conv2d_x4_dw", phwc4_items(tiled));
  v->heavy = 1;
  v->weight_block = 1;
  v->form = CONV_ARGS_DW_1X1;
}

void select_depthwise(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  /* The multiplier kernel already runs one output float4 per work-item. */
  int vm = select_vm_tiles(t);
  if ((t->pol.v[POL_KERNEL_SET] == GD_KSET_GPU || vm) && select_gpu_depthwise(t, g, n, v, vm)) return;
  cpu_depthwise(g, n, v, select_vm_fine(t));
}
