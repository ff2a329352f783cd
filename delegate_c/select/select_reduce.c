/* Kernel selection for the ops that reduce along one dimension:
 * FULLY_CONNECTED and BATCH_MATMUL (fully_connected.cl / fc_gpu.cl), the
 * reductions and SOFTMAX (reduce.cl / reduce_gpu.cl). The CPU set gives a
 * work-item a whole dot product or window; the GPU set, when the
 * reduction is long, gives it a work-group whose work-items split the
 * reduction and combine partials in a __local tree (the launch contracts
 * are in the .cl files' headers). Short reductions keep the one-work-item
 * kernels in both sets: their work-items already touch neighbouring
 * memory, and a group would idle.
 *
 * Occupancy (select_conv_gpu.c) has nothing to shrink here: these kernels make
 * one work-group per output item whatever WG is, so a launch of few outputs
 * (FC at batch 1) has few groups in any size; more would take a split
 * reduction (several groups per output and a second pass), new kernels. */
#include <stdio.h>

#include "select/selectors.h"

/* Reductions shorter than this many float4s stay one per work-item. */
#define WG_MIN_REDUCTION 32

/* The work-group size for a reduction of n float4s: 64, or 256 for long
 * ones (two programs at most per file); 0 when the device cannot. */
static size_t group_for(const SelectTarget* t, size_t n) {
  if (select_vm_group_bodies(t)) return n >= WG_MIN_REDUCTION ? VM_GROUP_SIZE : 0;
  if (t->pol.v[POL_KERNEL_SET] != GD_KSET_GPU || n < WG_MIN_REDUCTION) return 0;
  size_t wg = n >= 1024 ? 256 : 64;
  while (wg > t->caps->max_work_group) wg /= 2;
  return wg >= 16 ? wg : 0;
}

/* One work-group of wg work-items per output item. */
static void group_variant(const char* file, const char* kernel, size_t wg, size_t items, KernelVariant* v) {
  *v = variant_1d(file, kernel, items);
  v->global[0] = wg * items;
  v->local[0] = wg;
  snprintf(v->defines, sizeof(v->defines), "-DWG=%zu", wg);
  v->local_define[0] = "WG";
  v->global_in_groups = 1;
}

void select_fully_connected(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  size_t items = phwc4_items(g->tensors[n->outputs[0]].shape);
  size_t wg = group_for(t, (size_t)(g->tensors[n->inputs[0]].shape[GD_C] + 3) / 4);
  if (wg)
    group_variant("fc_gpu.cl", "fully_connected_gpu", wg, items, v);
  else
    *v = variant_1d("fully_connected.cl", "fully_connected", items);
}

/* fc_gpu.cl's fc_pair_gpu: one work-group of 64 (VM_GROUP_SIZE) per batch
 * item (the rows it makes are a few hundred channels at most; fuse_fc_pair.c). */
void select_fc_pair(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  (void)t;
  group_variant("fc_gpu.cl", "fc_pair_gpu", VM_GROUP_SIZE, (size_t)g->tensors[n->outputs[0]].shape[GD_B], v);
}

/* fc_gpu.cl's fc_heads_gpu: as fully_connected_gpu, one work-group per
 * output float4 of the heads laid end to end (fuse_fc_heads.c); a short
 * row still takes a group (16), since the heads share one launch. */
void select_fc_heads(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  size_t slices = 0;
  for (int h = 0; h < n->num_outputs; ++h) slices += (size_t)(g->tensors[n->outputs[h]].shape[GD_C] + 3) / 4;
  size_t wg = group_for(t, (size_t)(g->tensors[n->inputs[0]].shape[GD_C] + 3) / 4);
  group_variant("fc_gpu.cl", "fc_heads_gpu", wg ? wg : select_vm_group_bodies(t) ? VM_GROUP_SIZE : 16, slices, v);
}

void select_batch_matmul(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  const int* a = g->tensors[n->inputs[0]].shape;
  const int* d = g->tensors[n->outputs[0]].shape;
  int adj_x = n->p.matmul.adj_x, adj_y = n->p.matmul.adj_y;
  size_t depth = (size_t)(adj_x ? a[GD_W] : a[GD_C]);
  size_t wg = group_for(t, (depth + 3) / 4);
  if (wg) {
    group_variant("fc_gpu.cl", "batch_matmul_gpu", wg, phwc4_items(d), v);
    v->form = MATMUL_ARGS_GENERAL;
    return;
  }
  /* Every case but adj_x with adj_y makes 4 rows per work-item; its grid
   * is the output with the rows (W) divided by 4. */
  int rows4 = !(adj_x && adj_y);
  int grid[4] = {d[GD_B], d[GD_H], rows4 ? (d[GD_W] + 3) / 4 : d[GD_W], d[GD_C]};
  *v = variant_1d("fully_connected.cl", !rows4 ? "batch_matmul" : adj_x ? "batch_matmul_adjx" : "batch_matmul_rows4",
                  phwc4_items(grid));
  v->form = !rows4 ? MATMUL_ARGS_GENERAL : adj_x ? MATMUL_ARGS_ROWS4 : MATMUL_ARGS_ROWS4_ADJ_Y;
}

/* The float4s a reduce node's output float4 reduces. */
static size_t reduce_window(const Graph* g, const GNode* n) {
  const int* s = g->tensors[n->inputs[0]].shape;
  const int* r = n->p.reduce.axes;
  return (r[GD_B] ? (size_t)s[GD_B] : 1) * (r[GD_H] ? (size_t)s[GD_H] : 1) * (r[GD_W] ? (size_t)s[GD_W] : 1) *
         (r[GD_C] ? (size_t)(s[GD_C] + 3) / 4 : 1);
}

void select_reduce(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  size_t window = reduce_window(g, n);
  size_t items = phwc4_items(g->tensors[n->outputs[0]].shape);
  size_t wg = group_for(t, window);
  if (wg)
    group_variant("reduce_gpu.cl", "reduce_gpu", wg, items, v);
  else
    *v = variant_1d("reduce.cl", "reduce", items);
}

/* The CPU set's reduce gives one work-item a whole window, serially: in the
 * VM on a GPU, selfie_segmentation's ten global average pools (up to
 * 128x128, 4 work-items) are why persistent ran 2.8x slower there than the
 * GPU set's kernels. Two passes, each a row's loop long: H x slices
 * work-items over W, then slices over H. Policy vm_split_reduce=0 keeps one
 * pass. */
int select_reduce_split(const SelectTarget* t, const Graph* g, const GNode* n) {
  const int* r = n->p.reduce.axes;
  const int* s = g->tensors[n->inputs[0]].shape;
  return select_vm_fine(t) && !select_vm_group_bodies(t) && !r[GD_B] && r[GD_H] && r[GD_W] && !r[GD_C] && s[GD_H] > 1 &&
         s[GD_H] * s[GD_W] >= 64 && t->pol.v[POL_VM_SPLIT_REDUCE];
}

/* reduce_gpu gives a work-group an output float4's whole window: on a GPU
 * in the VM, selfie_segmentation's global pools of 64x64 and 128x128
 * (16 channels: 4 output float4s) kept 4 groups of the grid's 132 busy,
 * each work-item 64-256 loads long, while the other groups idled. Split
 * over chunks of the window, about one group per compute unit in all, each
 * chunk at least 4 float4s a work-item and at most 64 chunks (so that
 * reduce_gpu_sum's work-items take one partial each). Policy
 * vm_split_reduce=0 keeps one phase. */
#define REDUCE_SPLIT_MIN_PER_ITEM 16
int select_reduce_chunks(const SelectTarget* t, const Graph* g, const GNode* n, int* chunk, KernelVariant* part,
                         KernelVariant* sum) {
  size_t window = reduce_window(g, n);
  size_t outs = phwc4_items(g->tensors[n->outputs[0]].shape);
  size_t groups = select_vm_lanes(t) / VM_GROUP_SIZE;
  if (!select_vm_group_bodies(t) || !t->pol.v[POL_VM_SPLIT_REDUCE] ||
      window < REDUCE_SPLIT_MIN_PER_ITEM * VM_GROUP_SIZE || outs * 4 > groups)
    return 0;
  size_t chunks = groups / outs, most = window / (4 * VM_GROUP_SIZE);
  if (chunks > most) chunks = most;
  if (chunks > VM_GROUP_SIZE) chunks = VM_GROUP_SIZE;
  if (chunks < 2) return 0;
  size_t len = (window + chunks - 1) / chunks;
  chunks = (window + len - 1) / len; /* no chunk left empty */
  *chunk = (int)len;
  group_variant("reduce_gpu.cl", "reduce_gpu_part", VM_GROUP_SIZE, chunks * outs, part);
  group_variant("reduce_gpu.cl", "reduce_gpu_sum", VM_GROUP_SIZE, outs, sum);
  return (int)chunks;
}

/* FULLY_CONNECTED in two phases over K (split_k.cl's
 * fully_connected_split and _sum): in the VM on a GPU, for fewer output
 * float4s than an eighth of the grid's work-items (select_vm_lanes) and an input
 * of vm_split_min_steps slices (by rule 128: 512 channels) or more. hand_landmark_full's four heads
 * (1,152 inputs, 1-63 outputs) ran 1-16 work-items, each 288 slices long.
 * Chunks as select_split_chunk. 0: one pass; else the chunk, in slices.
 * Policy vm_split_fc=0 keeps one pass. */
int select_fc_split(const SelectTarget* t, const Graph* g, const GNode* n) {
  int slices = (g->tensors[n->inputs[0]].shape[GD_C] + 3) / 4;
  size_t outs = phwc4_items(g->tensors[n->outputs[0]].shape);
  if (!select_vm_fine(t) || select_vm_group_bodies(t) || slices < select_split_min_steps(t) || outs * 8 > select_vm_lanes(t) || !t->pol.v[POL_VM_SPLIT_FC])
    return 0;
  return select_split_chunk(slices);
}

void select_softmax(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v) {
  const int* s = g->tensors[n->inputs[0]].shape;
  size_t pixels = (size_t)s[GD_B] * (size_t)s[GD_H] * (size_t)s[GD_W];
  size_t wg = group_for(t, (size_t)(s[GD_C] + 3) / 4);
  if (wg)
    group_variant("reduce_gpu.cl", "softmax_gpu", wg, pixels, v);
  else
    *v = variant_1d("reduce.cl", "softmax", pixels);
}
