/* A DEPTHWISE_CONV_2D whose output only a 1x1 CONV_2D reads becomes part
 * of that convolution (kGOpDwConv1x1, opencl_kernels/conv_gpu.cl's
 * dw_conv2d_1x1_gpu, or conv.cl's conv2d_x4_dw for the VM on a GPU): one
 * launch (or phase) instead of two, and the intermediate
 * tensor is never written. MobileNet, BlazeFace and BlazePose blocks are
 * depthwise -> 1x1 pairs, a third of the MediaPipe models' launches. */
#ifndef TFLITE_GPU_FUSE_DW_CONV_H
#define TFLITE_GPU_FUSE_DW_CONV_H

#include "graph.h"
#include "kernel_abi.h"

/* The fused kernel computes the depthwise where the 1x1 would load its
 * input tile: a work-group of LX x LY work-items computes the depthwise
 * values of its LX * CONVG_TP pixels, all input slices, once for its LY *
 * CONVG_BS output slices. A work-item so makes
 *   ceil(CONVG_KT * CONVG_TP / LY) * KH * KW * ceil(S_in / CONVG_KT)
 * loads more than the 1x1 alone, in series (dw_1x1_item_taps), whatever
 * LX is, and the launch as a whole recomputes each value ceil(S_out /
 * (LY * CONVG_BS)) times. Both shrink as LY grows, so the fused launch
 * takes as many rows as it has output blocks, up to DW_1X1_MAX_ROWS
 * (dw_1x1_rows; select_conv.c then narrows LX, never LY, to fill the
 * device).
 *
 * On an H100 (2026-11-26, docs/benchmarks/gpu-h100-2026-11-26.md, run 2)
 * the fused launches ran with the occupancy rule's groups, down to 16 x 1
 * (16 loads per K step per work-item): the models whose pairs all stayed
 * within 576 such taps per work-item got faster (iris_landmark 3.68 ->
 * 3.26 ms, face_detection_short_range 2.01 -> 1.57), and every model with
 * pairs of thousands slower, by about 80-115 ns per load of their pairs'
 * sum (hand_landmark_full, pairs up to 16,800, 4.38 -> 14.97 ms). Pairs
 * above the bound stay two launches. */
#define GD_DW_1X1_MAX_ITEM_TAPS 576
#define DW_1X1_MAX_ROWS 16

/* The rows (LY) of a fused launch with `blocks` output blocks of CONVG_BS
 * slices: the least power of two that covers them, at most
 * DW_1X1_MAX_ROWS (past it a work-item has one load per K step already). */
static inline int dw_1x1_rows(long blocks) {
  int rows = 1;
  while (rows < blocks && rows < DW_1X1_MAX_ROWS) rows *= 2;
  return rows;
}

/* Serial depthwise loads per work-item of the fused launch (above). */
static inline long dw_1x1_item_taps(int kh, int kw, int src_channels, int dst_channels) {
  long rows = dw_1x1_rows(((dst_channels + 3) / 4 + CONVG_BS - 1) / CONVG_BS);
  long loads = (CONVG_KT * CONVG_TP + rows - 1) / rows; /* tile values per work-item per K step */
  long steps = ((src_channels + 3) / 4 + CONVG_KT - 1) / CONVG_KT;
  return loads * kh * kw * steps;
}

/* The VM's form on a GPU (conv.cl conv2d_x4_dw, no __local memory): a
 * work-item computes the depthwise values of its 4 pixels, every input
 * slice, for its one output slice: 4 * KH * KW * S_in loads in series,
 * held to the same bound (not yet timed on a GPU). */
static inline long dw_x4_item_taps(int kh, int kw, int src_channels) {
  return 4L * kh * kw * ((src_channels + 3) / 4);
}

/* Rewrites each pair within the bound in place: the 1x1 node takes the
 * depthwise's input and parameters (graph.h, conv.pw_*), the depthwise is
 * marked in dead[] and reads nothing. outputs: graph tensors read back by
 * the runtime, never fused away. x4: the pair runs as conv2d_x4_dw (the
 * VM's fine bodies), whose taps the bound holds. Test hook:
 * TFLITE_GPU_DW_1X1_MAX_TAPS=N stands for the bound. Returns the number of
 * nodes removed. */
int fuse_dw_conv(Graph* g, const int* outputs, int num_outputs, char* dead, int x4);

#endif
