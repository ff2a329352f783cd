/* A DEPTHWISE_CONV_2D whose output only a 1x1 CONV_2D reads becomes part
 * of that convolution (kGOpDwConv1x1, opencl_kernels/conv_gpu.cl's
 * dw_conv2d_1x1_gpu): one launch instead of two, and the intermediate
 * tensor is never written. MobileNet, BlazeFace and BlazePose blocks are
 * depthwise -> 1x1 pairs, a third of the MediaPipe models' launches. */
#ifndef TFLITE_GPU_FUSE_DW_CONV_H
#define TFLITE_GPU_FUSE_DW_CONV_H

#include "graph.h"

/* The fused kernel recomputes the depthwise inside the 1x1's K loop: each
 * work-item makes KH * KW * S_in more loads (S_in = input slices), in
 * series, against one launch saved. On an H100 (2026-11-26,
 * docs/benchmarks/gpu-h100-2026-11-26.md) the models whose pairs all had
 * KH * KW * S_in <= 288 got faster (face_detection_short_range 2.01 ->
 * 1.57 ms, iris_landmark 3.68 -> 3.26) and every model with larger pairs
 * slower (hand_landmark_full, up to 5 x 5 x 288 = 7,200: 4.38 -> 14.97
 * ms). Pairs above this stay two launches. */
#define GD_DW_1X1_MAX_TAP_SLICES 288

/* Rewrites each pair within GD_DW_1X1_MAX_TAP_SLICES in place: the 1x1 node takes the depthwise's input
 * and parameters (graph.h, conv.pw_*), the depthwise is marked in dead[]
 * and reads nothing. outputs: graph tensors read back by the runtime,
 * never fused away. Returns the number of nodes removed. */
int fuse_dw_conv(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
