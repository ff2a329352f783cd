/* A 1x1 CONV_2D whose output only a DEPTHWISE_CONV_2D reads becomes part
 * of that depthwise (kGOpPwDepthwise, depthwise_gpu.cl's pw_depthwise_gpu): the
 * expansion of an inverted-residual block computed where the depthwise
 * reads it, one launch instead of two, the wide expanded tensor never
 * written. It takes the blocks fuse_dw_conv.c leaves apart, whose
 * depthwise is too wide to recompute per 1x1 output (hand and pose
 * models: 1x1 192 -> 1,152, then 5x5), so a block is two launches
 * instead of three. GPU kernel set only (the pw_dw pass, fuse.c).
 *
 * No value is computed twice but at band edges: a work-group makes one
 * slice of the 1x1's output over a band of its rows (all of a 7x7 or
 * 14x14 tensor; PWDW_LOCAL float4s of __local memory), then the
 * depthwise's outputs of that slice and band from it. Neighbouring bands
 * share (KH - 1) * dilation source rows, which both compute. */
#ifndef TFLITE_GPU_FUSE_PW_DW_H
#define TFLITE_GPU_FUSE_PW_DW_H

#include "graph.h"
#include "kernel_abi.h"

/* The most 1x1 source loads one work-item makes in series (a band's values
 * over PWDW_WG work-items, times the source slices); larger pairs stay two
 * launches. The MediaPipe pairs take 48-112 (all of them well inside);
 * the bound keeps out only what a narrow band of a wide source would
 * make, unmeasured on a GPU. */
#define GD_PW_DW_MAX_ITEM_LOADS 1024

/* Source rows a band of `rows` output rows reads: (rows - 1) * sy + (kh -
 * 1) * dy + 1, at most the source's height. */
static inline long pw_dw_band_src_rows(int rows, int src_h, int sy, int kh, int dy) {
  long r = (long)(rows - 1) * sy + (long)(kh - 1) * dy + 1;
  return r < src_h ? r : src_h;
}

/* Output rows per band: the most whose source rows fit PWDW_LOCAL float4s
 * (fewer bands, fewer shared rows); 0 when not even one row does. */
static inline int pw_dw_band_rows(int out_h, int src_h, int src_w, int sy, int kh, int dy) {
  for (int r = out_h; r >= 1; --r)
    if (pw_dw_band_src_rows(r, src_h, sy, kh, dy) * src_w <= PWDW_LOCAL) return r;
  return 0;
}

/* Rewrites each pair in place: the depthwise becomes kGOpPwDepthwise, reads
 * the 1x1's source and holds its constants, activation and output
 * channels (conv.first_*); the 1x1 is marked in dead[]. The 1x1 has no
 * epilogue, the depthwise multiplier 1; same storage. A MEAN over H and W
 * that alone reads the depthwise, at batch 1 where one band holds the
 * whole tensor, goes too: the group averages its slice (conv.mean_of;
 * hand_landmark's last block, 7x7x1,152, then its heads). outputs: graph
 * tensors read back by the runtime, never fused away. Test hook:
 * TFLITE_GPU_PW_DW_MAX_LOADS=N stands for the bound. Returns the number of
 * nodes removed. */
int fuse_pw_dw(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
