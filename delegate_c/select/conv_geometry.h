/* The geometry of the GPU set's fused conv launches, which the passes that
 * make them (passes/fuse_dw_conv.c, passes/fuse_pw_dw.c) bound and the
 * selector (select_conv_gpu.c) sizes: pure functions of the shapes and the
 * kernels' tiles (kernel_abi.h). */
#ifndef TFLITE_GPU_CONV_GEOMETRY_H
#define TFLITE_GPU_CONV_GEOMETRY_H

#include "kernel_abi.h"

/* dw_1x1 (a depthwise read only by a 1x1, GOP_DW_CONV1X1). */
/* The fused kernel computes the depthwise where the 1x1 would load its
 * input tile: a work-group of LX x LY work-items computes the depthwise
 * values of its LX * CONVG_TP pixels, all input slices, once for its LY *
 * CONVG_BS output slices. A work-item so makes
 *   ceil(CONVG_KT * CONVG_TP / LY) * KH * KW * ceil(S_in / CONVG_KT)
 * loads more than the 1x1 alone, in series (dw_1x1_item_taps), whatever
 * LX is, and the launch as a whole recomputes each value ceil(S_out /
 * (LY * CONVG_BS)) times. Both shrink as LY grows, so the fused launch
 * takes as many rows as it has output blocks, up to DW_1X1_MAX_ROWS
 * (dw_1x1_rows; select_conv_gpu.c then narrows LX, never LY, to fill the
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

/* pw_dw (a 1x1 read only by a depthwise, GOP_PW_DEPTHWISE). */
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

#endif
