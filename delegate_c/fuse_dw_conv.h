/* A DEPTHWISE_CONV_2D whose output only a 1x1 CONV_2D reads becomes part
 * of that convolution (kGOpDwConv1x1, opencl_kernels/conv_gpu.cl's
 * dw_conv2d_1x1_gpu): one launch instead of two, and the intermediate
 * tensor is never written. MobileNet, BlazeFace and BlazePose blocks are
 * depthwise -> 1x1 pairs, a third of the MediaPipe models' launches. */
#ifndef TFLITE_GPU_FUSE_DW_CONV_H
#define TFLITE_GPU_FUSE_DW_CONV_H

#include "graph.h"

/* Rewrites each pair in place: the 1x1 node takes the depthwise's input
 * and parameters (graph.h, conv.pw_*), the depthwise is marked in dead[]
 * and reads nothing. outputs: graph tensors read back by the runtime,
 * never fused away. Returns the number of nodes removed. */
int fuse_dw_conv(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
